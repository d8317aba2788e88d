//===- Interpreter.cpp - Reference interpreter for tg ----------------------===//
//
// Part of Loom. Dispatch from tg ops to the domain-generic kernels.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Interpreter.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Kernels.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <chrono>
#include <optional>

using namespace mlir;
using namespace loom;
using namespace loom::interp;

int64_t interp::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    auto m = llvm::checkedMul(n, d);
    if (!m)
      return -1;
    n = *m;
  }
  return n;
}

namespace {

std::vector<int64_t> shapeOf(Type type) {
  auto shaped = cast<ShapedType>(type);
  return std::vector<int64_t>(shaped.getShape().begin(),
                              shaped.getShape().end());
}

std::optional<ElemKind> elemKindOf(Type type) {
  Type e = getElementTypeOrSelf(type);
  if (e.isF64())
    return ElemKind::F64;
  if (e.isF32())
    return ElemKind::F32;
  if (e.isF16())
    return ElemKind::F16;
  if (e.isBF16())
    return ElemKind::BF16;
  if (e.isSignlessInteger(64))
    return ElemKind::I64;
  if (e.isSignlessInteger(32))
    return ElemKind::I32;
  if (e.isSignlessInteger(1))
    return ElemKind::I1;
  return std::nullopt;
}

/// Normalises an axis already checked by the verifier.
int64_t axisOf(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }


interp::Activation toKernel(tg::Activation a) {
  switch (a) {
  case tg::Activation::None:
    return interp::Activation::None;
  case tg::Activation::Relu:
    return interp::Activation::Relu;
  case tg::Activation::Sigmoid:
    return interp::Activation::Sigmoid;
  case tg::Activation::Tanh:
    return interp::Activation::Tanh;
  }
  llvm_unreachable("unknown activation");
}

template <size_t N> std::array<int64_t, N> arr(ArrayRef<int64_t> v) {
  std::array<int64_t, N> out{};
  for (size_t i = 0; i < N && i < v.size(); ++i)
    out[i] = v[i];
  return out;
}

} // namespace

template <class D> struct Interpreter<D>::Impl {
  using TensorPtr = std::shared_ptr<const Tensor<D>>;

  ModuleOp module;
  InterpreterOptions options;
  std::optional<safetensors::File> weights;
  bool weightsFailed = false;
  llvm::StringMap<TensorPtr> weightCache;
  llvm::StringMap<OpProfile> profile;
  unsigned depth = 0;

  Impl(ModuleOp module, InterpreterOptions options)
      : module(module), options(std::move(options)) {}

  FailureOr<TensorPtr> loadWeight(tg::WeightOp op) {
    auto it = weightCache.find(op.getName());
    if (it != weightCache.end())
      return it->second;
    if (!weights) {
      if (weightsFailed)
        return failure();
      auto file = tg::openWeights(module, options.weightsFile);
      if (failed(file)) {
        weightsFailed = true;
        return op.emitError("cannot evaluate: the weights file is unusable");
      }
      weights.emplace(std::move(*file));
    }
    if (failed(tg::checkWeight(op, *weights)))
      return failure();
    auto values = weights->readAsDouble(op.getName());
    if (!values)
      return op.emitOpError() << llvm::toString(values.takeError());
    auto t = std::make_shared<const Tensor<D>>(
        Tensor<D>::fromDoubles(shapeOf(op.getType()), *values));
    weightCache[op.getName()] = t;
    return t;
  }

  FailureOr<TensorPtr> constant(tg::ConstantOp op) {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return op.emitOpError("holds a ")
             << op.getValue() << "; the interpreter reads dense constants only";
    std::vector<double> values;
    values.reserve(dense.getNumElements());
    Type e = dense.getElementType();
    if (isa<FloatType>(e)) {
      for (const APFloat &v : dense.getValues<APFloat>())
        values.push_back(v.convertToDouble());
    } else if (e.isInteger(1)) {
      for (bool v : dense.getValues<bool>())
        values.push_back(v ? 1.0 : 0.0);
    } else {
      for (const APInt &v : dense.getValues<APInt>())
        values.push_back(double(v.getSExtValue()));
    }
    return std::make_shared<const Tensor<D>>(
        Tensor<D>::fromDoubles(shapeOf(op.getType()), values));
  }

  /// Evaluates one op given its operand values; returns its results.
  FailureOr<std::vector<Tensor<D>>> eval(Operation *op,
                                         ArrayRef<const Tensor<D> *> in) {
    using R = FailureOr<std::vector<Tensor<D>>>;
    auto one = [](Tensor<D> t) -> R {
      std::vector<Tensor<D>> v;
      v.push_back(std::move(t));
      return v;
    };
    auto un = [&](UnaryKind k, UnaryParams p = {}) {
      return one(unary<D>(k, *in[0], p));
    };
    auto bin = [&](BinaryKind k) { return one(binary<D>(k, *in[0], *in[1])); };
    return llvm::TypeSwitch<Operation *, R>(op)
        .Case([&](tg::AddOp) { return bin(BinaryKind::Add); })
        .Case([&](tg::SubOp) { return bin(BinaryKind::Sub); })
        .Case([&](tg::MulOp) { return bin(BinaryKind::Mul); })
        .Case([&](tg::DivOp) { return bin(BinaryKind::Div); })
        .Case([&](tg::MaxOp) { return bin(BinaryKind::Max); })
        .Case([&](tg::MinOp) { return bin(BinaryKind::Min); })
        .Case([&](tg::PowOp) { return bin(BinaryKind::Pow); })
        .Case([&](tg::ReluOp) { return un(UnaryKind::Relu); })
        .Case([&](tg::SigmoidOp) { return un(UnaryKind::Sigmoid); })
        .Case([&](tg::TanhOp) { return un(UnaryKind::Tanh); })
        .Case([&](tg::ExpOp) { return un(UnaryKind::Exp); })
        .Case([&](tg::LogOp) { return un(UnaryKind::Log); })
        .Case([&](tg::SqrtOp) { return un(UnaryKind::Sqrt); })
        .Case([&](tg::RsqrtOp) { return un(UnaryKind::Rsqrt); })
        .Case([&](tg::NegOp) { return un(UnaryKind::Neg); })
        .Case([&](tg::ErfOp) { return un(UnaryKind::Erf); })
        .Case([&](tg::HardSwishOp) { return un(UnaryKind::HardSwish); })
        .Case([&](tg::GeluOp g) {
          return un(g.getTanhApproximation() ? UnaryKind::GeluTanh
                                             : UnaryKind::Gelu);
        })
        .Case([&](tg::ClipOp c) {
          return un(UnaryKind::Clip, {c.getMin().convertToDouble(),
                                      c.getMax().convertToDouble()});
        })
        .Case([&](tg::HardSigmoidOp h) {
          return un(UnaryKind::HardSigmoid, {h.getAlpha().convertToDouble(),
                                             h.getBeta().convertToDouble()});
        })
        .Case([&](tg::CastOp c) -> R {
          auto kind = elemKindOf(c.getType());
          if (!kind)
            return c.emitOpError("casts to an element type the interpreter "
                                 "does not know");
          return one(cast<D>(*in[0], *kind));
        })
        .Case([&](tg::MatmulOp) { return one(matmul<D>(*in[0], *in[1])); })
        .Case([&](tg::Conv2dOp c) {
          Conv2dParams p;
          p.strides = arr<2>(c.getStrides());
          p.pads = arr<4>(c.getPads());
          p.dilations = arr<2>(c.getDilations());
          p.groups = c.getGroups();
          p.activation = toKernel(c.getActivation());
          return one(conv2d<D>(*in[0], *in[1], c.getBias() ? in[2] : nullptr,
                               p));
        })
        .Case([&](tg::MaxPool2dOp m) {
          Pool2dParams p;
          p.kernel = arr<2>(m.getKernelSize());
          p.strides = arr<2>(m.getStrides());
          p.pads = arr<4>(m.getPads());
          return one(maxPool2d<D>(*in[0], p));
        })
        .Case([&](tg::AvgPool2dOp a) {
          Pool2dParams p;
          p.kernel = arr<2>(a.getKernelSize());
          p.strides = arr<2>(a.getStrides());
          p.pads = arr<4>(a.getPads());
          p.countIncludePad = a.getCountIncludePad();
          return one(avgPool2d<D>(*in[0], p));
        })
        .Case([&](tg::GlobalAvgPoolOp) { return one(globalAvgPool<D>(*in[0])); })
        .Case([&](tg::TransposeOp t) {
          return one(transpose<D>(*in[0], t.getPerm()));
        })
        .Case([&](tg::ReshapeOp r) {
          return one(reshape<D>(*in[0], shapeOf(r.getType())));
        })
        .Case([&](tg::BroadcastToOp b) {
          return one(broadcastTo<D>(*in[0], shapeOf(b.getType())));
        })
        .Case([&](tg::ConcatOp c) {
          return one(concat<D>(in, axisOf(c.getAxis(), in[0]->rank())));
        })
        .Case([&](tg::SplitOp s) -> R {
          return split<D>(*in[0], axisOf(s.getAxis(), in[0]->rank()),
                          s.getSizes());
        })
        .Case([&](tg::SliceOp s) {
          std::vector<int64_t> strides(in[0]->rank(), 1);
          if (auto st = s.getStrides())
            strides.assign(st->begin(), st->end());
          return one(slice<D>(*in[0], s.getStarts(), s.getLimits(), strides));
        })
        .Case([&](tg::PadOp p) {
          return one(pad<D>(*in[0], p.getLow(), p.getHigh(),
                            p.getValue().convertToDouble()));
        })
        .Case([&](tg::EnlargeOp e) {
          return one(
              enlarge<D>(*in[0], e.getKernelSize()[0], e.getKernelSize()[1]));
        })
        .Case([&](tg::GatherOp g) -> R {
          auto r = gather<D>(*in[0], *in[1], axisOf(g.getAxis(), in[0]->rank()));
          if (!r)
            return g.emitOpError() << llvm::toString(r.takeError());
          return one(std::move(*r));
        })
        .Case([&](tg::ResizeOp r) {
          ResizeParams p;
          p.sizes.assign(r.getSizes().begin(), r.getSizes().end());
          if (auto scales = r.getScales())
            p.scales.assign(scales->begin(), scales->end());
          p.mode = llvm::StringSwitch<ResizeMode>(r.getMode())
                       .Case("linear", ResizeMode::Linear)
                       .Case("cubic", ResizeMode::Cubic)
                       .Default(ResizeMode::Nearest);
          p.coordinateMode =
              llvm::StringSwitch<ResizeCoordinateMode>(
                  r.getCoordinateTransformationMode())
                  .Case("pytorch_half_pixel",
                        ResizeCoordinateMode::PytorchHalfPixel)
                  .Case("align_corners", ResizeCoordinateMode::AlignCorners)
                  .Case("asymmetric", ResizeCoordinateMode::Asymmetric)
                  .Case("tf_half_pixel_for_nn",
                        ResizeCoordinateMode::TfHalfPixelForNN)
                  .Default(ResizeCoordinateMode::HalfPixel);
          p.nearestMode =
              llvm::StringSwitch<ResizeNearestMode>(r.getNearestMode())
                  .Case("round_prefer_ceil", ResizeNearestMode::RoundPreferCeil)
                  .Case("floor", ResizeNearestMode::Floor)
                  .Case("ceil", ResizeNearestMode::Ceil)
                  .Default(ResizeNearestMode::RoundPreferFloor);
          p.cubicCoeffA = r.getCubicCoeffA().convertToDouble();
          p.excludeOutside = r.getExcludeOutside();
          return one(resize<D>(*in[0], p));
        })
        .Case([&](tg::ReduceSumOp r) { return reduceOp(ReduceKind::Sum, r, in); })
        .Case([&](tg::ReduceMeanOp r) {
          return reduceOp(ReduceKind::Mean, r, in);
        })
        .Case([&](tg::ReduceMaxOp r) { return reduceOp(ReduceKind::Max, r, in); })
        .Case([&](tg::SoftmaxOp s) {
          return one(softmax<D>(*in[0], axisOf(s.getAxis(), in[0]->rank())));
        })
        .Case([&](tg::LayerNormOp l) {
          return one(layerNorm<D>(*in[0], *in[1], *in[2],
                                  axisOf(l.getAxis(), in[0]->rank()),
                                  l.getEpsilon().convertToDouble()));
        })
        .Case([&](tg::BatchNormOp b) {
          return one(batchNorm<D>(*in[0], *in[1], *in[2], *in[3], *in[4],
                                  b.getEpsilon().convertToDouble()));
        })
        .Default([&](Operation *other) -> R {
          return other->emitOpError(
              "is not supported by the reference interpreter");
        });
  }

  template <typename OpT>
  FailureOr<std::vector<Tensor<D>>> reduceOp(ReduceKind kind, OpT op,
                                             ArrayRef<const Tensor<D> *> in) {
    std::vector<int64_t> axes;
    for (int64_t a : op.getAxes())
      axes.push_back(axisOf(a, in[0]->rank()));
    llvm::sort(axes);
    std::vector<Tensor<D>> v;
    v.push_back(reduce<D>(kind, *in[0], axes, op.getKeepdims()));
    return v;
  }

  LogicalResult checkSize(Operation *op, Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasStaticShape())
      return op->emitOpError("has a result of type ")
             << type << "; the interpreter needs static tensor shapes";
    int64_t n = checkedNumElements(shaped.getShape());
    if (n < 0 || n > options.maxElements)
      return op->emitOpError("would produce a tensor of type ")
             << type << ", larger than the interpreter's limit of "
             << options.maxElements << " elements";
    return success();
  }

  FailureOr<std::vector<TensorPtr>> call(func::FuncOp fn,
                                         ArrayRef<TensorPtr> args) {
    if (fn.isExternal())
      return fn.emitOpError("has no body to interpret");
    if (!fn.getBody().hasOneBlock())
      return fn.emitOpError("must have a single block to be interpreted");
    if (++depth > options.maxCallDepth) {
      --depth;
      return fn.emitOpError("call depth exceeds ")
             << options.maxCallDepth << " (recursion?)";
    }
    llvm::scope_exit cleanup([&] { --depth; });
    Block &block = fn.getBody().front();
    llvm::DenseMap<Value, TensorPtr> env;
    llvm::DenseMap<Value, unsigned> remainingUses;
    for (auto [arg, t] : llvm::zip(block.getArguments(), args))
      env[arg] = t;
    for (Operation &op : block)
      for (Value v : op.getOperands())
        ++remainingUses[v];

    for (Operation &op : block) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        std::vector<TensorPtr> results;
        for (Value v : ret.getOperands())
          results.push_back(env.lookup(v));
        return results;
      }
      auto start = std::chrono::steady_clock::now();
      for (Type t : op.getResultTypes())
        if (failed(checkSize(&op, t)))
          return failure();
      std::vector<TensorPtr> results;
      if (auto w = dyn_cast<tg::WeightOp>(op)) {
        auto t = loadWeight(w);
        if (failed(t))
          return failure();
        results.push_back(*t);
      } else if (auto c = dyn_cast<tg::ConstantOp>(op)) {
        auto t = constant(c);
        if (failed(t))
          return failure();
        results.push_back(*t);
      } else if (auto callOp = dyn_cast<func::CallOp>(op)) {
        auto callee =
            SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                callOp, callOp.getCalleeAttr());
        if (!callee)
          return callOp.emitOpError("calls an unknown function");
        std::vector<TensorPtr> callArgs;
        for (Value v : callOp.getOperands())
          callArgs.push_back(env.lookup(v));
        auto r = call(callee, callArgs);
        if (failed(r))
          return failure();
        results = std::move(*r);
      } else {
        std::vector<const Tensor<D> *> in;
        for (Value v : op.getOperands()) {
          auto it = env.find(v);
          if (it == env.end())
            return op.emitOpError("uses a value the interpreter has not "
                                  "computed");
          in.push_back(it->second.get());
        }
        auto r = eval(&op, in);
        if (failed(r))
          return failure();
        for (Tensor<D> &t : *r)
          results.push_back(std::make_shared<const Tensor<D>>(std::move(t)));
      }
      for (auto [v, t] : llvm::zip(op.getResults(), results))
        env[v] = t;
      // Free operands after their last use.
      for (Value v : op.getOperands())
        if (--remainingUses[v] == 0)
          env.erase(v);
      if (options.profile) {
        double s = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
        OpProfile &p = profile[op.getName().getStringRef()];
        ++p.count;
        p.seconds += s;
      }
    }
    return fn.emitOpError("has no terminator");
  }
};

template <class D>
Interpreter<D>::Interpreter(ModuleOp module, InterpreterOptions options)
    : impl(std::make_unique<Impl>(module, std::move(options))) {}

template <class D> Interpreter<D>::~Interpreter() = default;

template <class D>
const llvm::StringMap<OpProfile> &Interpreter<D>::profile() const {
  return impl->profile;
}

template <class D>
FailureOr<std::vector<Tensor<D>>>
Interpreter<D>::run(func::FuncOp fn, ArrayRef<Tensor<D>> args) {
  FunctionType type = fn.getFunctionType();
  if (args.size() != type.getNumInputs())
    return fn.emitOpError("takes ")
           << type.getNumInputs() << " argument(s), given " << args.size();
  std::vector<typename Impl::TensorPtr> ptrs;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto shaped = dyn_cast<RankedTensorType>(t);
    if (!shaped || !shaped.hasStaticShape())
      return fn.emitOpError("argument ")
             << i << " has type " << t
             << "; the interpreter needs statically shaped tensors";
    if (llvm::ArrayRef<int64_t>(args[i].shape) != shaped.getShape())
      return fn.emitOpError("argument ")
             << i << " expects " << t << " but was given a tensor of shape "
             << safetensors::formatShape(args[i].shape);
    ptrs.push_back(std::make_shared<const Tensor<D>>(args[i]));
  }
  for (Type t : type.getResults())
    if (!isa<RankedTensorType>(t))
      return fn.emitOpError("returns ") << t << "; only tensors are supported";
  auto results = impl->call(fn, ptrs);
  if (failed(results))
    return failure();
  std::vector<Tensor<D>> out;
  for (auto &p : *results)
    out.push_back(*p);
  return out;
}

template class loom::interp::Interpreter<F32Domain>;
template class loom::interp::Interpreter<F64Domain>;
template class loom::interp::Interpreter<ModPDomain>;

int64_t loom::interp::randomIntegerBound(BlockArgument arg) {
  if (getElementTypeOrSelf(arg.getType()).isInteger(1))
    return 2;
  std::optional<int64_t> bound;
  for (OpOperand &use : arg.getUses())
    if (auto g = dyn_cast<tg::GatherOp>(use.getOwner());
        g && use.get() == g.getIndices()) {
      auto data = g.getData().getType();
      int64_t axis =
          g.getAxis() < 0 ? g.getAxis() + data.getRank() : g.getAxis();
      int64_t size = std::max<int64_t>(1, data.getDimSize(axis));
      bound = bound ? std::min(*bound, size) : size;
    }
  return bound.value_or(10);
}
