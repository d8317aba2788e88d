//===- GraphBuilder.cpp - A C++ API for building tg graphs ----------------===//
//
// Part of Loom. Every op method checks its operands, runs the op's shape rule
// from TypeInference.cpp with the current location (so a bad shape is that
// rule's diagnostic), creates the op with the inferred type and verifies it.
// Attributes equal to their defaults are left unset, so the printed IR reads
// like hand-written IR.
//
//===----------------------------------------------------------------------===//

#include "loom/Builder/GraphBuilder.h"

#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace loom;

namespace {

/// `values` as an attribute, or null when it equals the op's default.
DenseI64ArrayAttr arrayOrDefault(OpBuilder &b, ArrayRef<int64_t> values,
                                 ArrayRef<int64_t> defaults) {
  if (values == defaults)
    return nullptr;
  return b.getDenseI64ArrayAttr(values);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

//===----------------------------------------------------------------------===//
// Construction, scopes, diagnostics
//===----------------------------------------------------------------------===//

GraphBuilder::GraphBuilder(MLIRContext &ctx, StringRef weightsFile,
                           StringRef entryName)
    : context(&ctx), builder(&ctx), entryName(entryName.str()) {
  ctx.loadDialect<tg::TGDialect, func::FuncDialect>();
  elementType = builder.getF32Type();
  Location moduleLoc = NameLoc::get(builder.getStringAttr(entryName));
  module = ModuleOp::create(moduleLoc);
  setWeightsFile(weightsFile);
  builder.setInsertionPointToEnd(module->getBody());
  entry = func::FuncOp::create(builder, moduleLoc, entryName,
                               builder.getFunctionType({}, {}));
  builder.setInsertionPointToEnd(entry.addEntryBlock());
}

GraphBuilder::~GraphBuilder() = default;

void GraphBuilder::setWeightsFile(StringRef weightsFile) {
  if (!module)
    return;
  if (weightsFile.empty())
    (*module)->removeAttr(tg::TGDialect::kWeightsAttrName);
  else
    (*module)->setAttr(tg::TGDialect::kWeightsAttrName,
                       builder.getStringAttr(weightsFile));
}

Location GraphBuilder::loc() {
  std::string path = qualify("");
  return NameLoc::get(builder.getStringAttr(path.empty() ? entryName : path));
}

Value GraphBuilder::fail(const Twine &message) {
  emitError(loc()) << message;
  hasFailed = true;
  return {};
}

Value GraphBuilder::failComposite(StringRef what, const Twine &message) {
  return fail(what + " '" + qualify("") + "': " + message);
}

Value GraphBuilder::failInputShape(StringRef what, ArrayRef<int64_t> shape,
                                   const Twine &expected) {
  return failComposite(what, "the input is " + shapeString(shape) +
                                 ", expected " + expected);
}

GraphBuilder::Scope::~Scope() {
  if (b)
    b->popScope();
}

GraphBuilder::Scope GraphBuilder::scope(StringRef name) {
  scopes.push_back(name.str());
  return Scope(this);
}

void GraphBuilder::popScope() {
  if (!scopes.empty())
    scopes.pop_back();
}

std::string GraphBuilder::qualify(StringRef name) const {
  std::string path;
  for (const std::string &s : scopes) {
    if (s.empty())
      continue;
    if (!path.empty())
      path += '.';
    path += s;
  }
  if (name.empty())
    return path;
  return path.empty() ? name.str() : path + "." + name.str();
}

RankedTensorType GraphBuilder::tensorType(ArrayRef<int64_t> shape,
                                          Type element) {
  return RankedTensorType::get(shape, element ? element : elementType);
}

bool GraphBuilder::ready(ArrayRef<Value> operands, StringRef op) {
  if (finished) {
    if (!hasFailed)
      emitError(module ? loc() : UnknownLoc::get(context))
          << op << ": the GraphBuilder was used after finish()";
    hasFailed = true;
    return false;
  }
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (!v) {
      // A null value is normally the result of an error reported already.
      if (!hasFailed)
        fail(op + ": operand #" + Twine(i) +
             " is a null value (it was never built)");
      hasFailed = true;
      return false;
    }
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape()) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << v.getType();
      fail(op + ": operand #" + Twine(i) + " has type " + s +
           ", expected a statically shaped ranked tensor");
      return false;
    }
  }
  return true;
}

bool GraphBuilder::ruleAccepts(LogicalResult inference) {
  if (failed(inference))
    hasFailed = true;
  return succeeded(inference);
}

Value GraphBuilder::check(Operation *op) {
  if (failed(verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    hasFailed = true;
    return {};
  }
  return op->getResult(0);
}

//===----------------------------------------------------------------------===//
// Inputs, parameters, constants
//===----------------------------------------------------------------------===//

Value GraphBuilder::input(StringRef name, ArrayRef<int64_t> shape,
                          Type element) {
  if (!ready({}, "input"))
    return {};
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return fail("input '" + name + "': negative dimension in shape " +
                shapeString(shape));
  auto [it, inserted] = inputNames.try_emplace(name, 0);
  if (!inserted)
    return fail("input '" + name + "' is declared twice");
  Block &block = entry.getBody().front();
  BlockArgument arg = block.addArgument(tensorType(shape, element), loc());
  it->second = arg.getArgNumber();
  // The function type and argument attributes are set in finish().
  return arg;
}

Value GraphBuilder::weight(StringRef name, ArrayRef<int64_t> shape,
                           Type element) {
  if (!ready({}, "weight"))
    return {};
  std::string full = qualify(name);
  if (full.empty())
    return fail("a weight needs a non-empty name");
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return fail("weight '" + full + "': negative dimension in shape " +
                shapeString(shape));
  RankedTensorType type = tensorType(shape, element);
  auto found = weights.find(full);
  if (found != weights.end()) {
    if (!found->second)
      return {};
    if (found->second.getType() != type) {
      std::string was, now;
      llvm::raw_string_ostream(was) << found->second.getType();
      llvm::raw_string_ostream(now) << type;
      return fail("weight '" + full + "' is declared with type " + now +
                  ", but it was declared before with type " + was);
    }
    return found->second;
  }
  Value w = check(
      tg::WeightOp::create(builder, loc(), type, builder.getStringAttr(full)));
  weights[full] = w;
  weightOrder.push_back(full);
  return w;
}

Value GraphBuilder::constant(DenseElementsAttr value) {
  if (!ready({}, "tg.constant"))
    return {};
  if (!value)
    return fail("tg.constant: null value attribute");
  return check(tg::ConstantOp::create(builder, loc(), value.getType(), value));
}

Value GraphBuilder::scalar(double value) {
  return constant(ArrayRef<float>{float(value)}, {});
}

Value GraphBuilder::constant(ArrayRef<float> values, ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(shape);
  if (int64_t(values.size()) != type.getNumElements())
    return fail("constant of shape " + shapeString(shape) + " needs " +
                Twine(type.getNumElements()) + " values, got " +
                Twine(values.size()));
  if (!isa<FloatType>(elementType))
    return fail("constant: the element type is not a float type");
  auto floatType = mlir::cast<FloatType>(elementType);
  SmallVector<APFloat> converted;
  for (float v : values) {
    APFloat f(v);
    bool lost;
    f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    converted.push_back(f);
  }
  return constant(DenseElementsAttr::get(type, converted));
}

Value GraphBuilder::constantI64(ArrayRef<int64_t> values,
                                ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(shape, builder.getI64Type());
  if (int64_t(values.size()) != type.getNumElements())
    return fail("constant of shape " + shapeString(shape) + " needs " +
                Twine(type.getNumElements()) + " values, got " +
                Twine(values.size()));
  return constant(DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy> Value GraphBuilder::binary(Value lhs, Value rhs) {
  if (!ready({lhs, rhs}, OpTy::getOperationName()))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferBroadcastBinary(loc(), lhs.getType(), rhs.getType(),
                                            inferred)))
    return {};
  return check(OpTy::create(builder, loc(), inferred[0], lhs, rhs));
}

template <typename OpTy> Value GraphBuilder::unary(Value x) {
  if (!ready({x}, OpTy::getOperationName()))
    return {};
  return check(OpTy::create(builder, loc(), x.getType(), x));
}

Value GraphBuilder::add(Value l, Value r) { return binary<tg::AddOp>(l, r); }
Value GraphBuilder::sub(Value l, Value r) { return binary<tg::SubOp>(l, r); }
Value GraphBuilder::mul(Value l, Value r) { return binary<tg::MulOp>(l, r); }
Value GraphBuilder::div(Value l, Value r) { return binary<tg::DivOp>(l, r); }
Value GraphBuilder::max(Value l, Value r) { return binary<tg::MaxOp>(l, r); }
Value GraphBuilder::min(Value l, Value r) { return binary<tg::MinOp>(l, r); }
Value GraphBuilder::pow(Value l, Value r) { return binary<tg::PowOp>(l, r); }

Value GraphBuilder::scale(Value x, double factor) {
  if (!ready({x}, "scale"))
    return {};
  Type saved = elementType;
  elementType = mlir::cast<RankedTensorType>(x.getType()).getElementType();
  Value c = isa<FloatType>(elementType)
                ? scalar(factor)
                : fail("scale: the input is not a float tensor");
  elementType = saved;
  return mul(x, c);
}

Value GraphBuilder::relu(Value x) { return unary<tg::ReluOp>(x); }
Value GraphBuilder::sigmoid(Value x) { return unary<tg::SigmoidOp>(x); }
Value GraphBuilder::tanh(Value x) { return unary<tg::TanhOp>(x); }
Value GraphBuilder::exp(Value x) { return unary<tg::ExpOp>(x); }
Value GraphBuilder::log(Value x) { return unary<tg::LogOp>(x); }
Value GraphBuilder::sqrt(Value x) { return unary<tg::SqrtOp>(x); }
Value GraphBuilder::rsqrt(Value x) { return unary<tg::RsqrtOp>(x); }
Value GraphBuilder::neg(Value x) { return unary<tg::NegOp>(x); }
Value GraphBuilder::erf(Value x) { return unary<tg::ErfOp>(x); }
Value GraphBuilder::hardswish(Value x) { return unary<tg::HardSwishOp>(x); }

Value GraphBuilder::gelu(Value x, bool tanhApproximation) {
  if (!ready({x}, "tg.gelu"))
    return {};
  return check(tg::GeluOp::create(builder, loc(), x.getType(), x,
                                  tanhApproximation ? builder.getBoolAttr(true)
                                                    : BoolAttr()));
}

Value GraphBuilder::clip(Value x, double min, double max) {
  if (!ready({x}, "tg.clip"))
    return {};
  return check(tg::ClipOp::create(builder, loc(), x.getType(), x,
                                  builder.getF64FloatAttr(min),
                                  builder.getF64FloatAttr(max)));
}

Value GraphBuilder::hardsigmoid(Value x, double alpha, double beta) {
  if (!ready({x}, "tg.hardsigmoid"))
    return {};
  return check(tg::HardSigmoidOp::create(
      builder, loc(), x.getType(), x,
      alpha == 0.2 ? FloatAttr() : builder.getF64FloatAttr(alpha),
      beta == 0.5 ? FloatAttr() : builder.getF64FloatAttr(beta)));
}

Value GraphBuilder::activation(Value x, Act act, double alpha, double beta) {
  switch (act) {
  case Act::None:
    return x;
  case Act::Relu:
    return relu(x);
  case Act::Sigmoid:
    return sigmoid(x);
  case Act::Tanh:
    return tanh(x);
  case Act::GeluErf:
    return gelu(x);
  case Act::GeluTanh:
    return gelu(x, /*tanhApproximation=*/true);
  case Act::HardSwish:
    return hardswish(x);
  case Act::Swish:
    return mul(x, sigmoid(x));
  case Act::Clip:
    return clip(x, alpha, beta);
  case Act::HardSigmoid:
    return hardsigmoid(x, alpha, beta);
  case Act::LeakyRelu:
    // relu(x) - alpha * relu(-x), exact for any slope: the ONNX importer's
    // spelling, which the backends match as one leaky ReLU.
    return sub(relu(x), mul(scalar(alpha), relu(neg(x))));
  }
  llvm_unreachable("unknown activation");
}

Value GraphBuilder::cast(Value x, Type element) {
  if (!ready({x}, "tg.cast"))
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  return check(tg::CastOp::create(builder, loc(), type.clone(element), x));
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling
//===----------------------------------------------------------------------===//

Value GraphBuilder::matmul(Value lhs, Value rhs) {
  if (!ready({lhs, rhs}, "tg.matmul"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(
          tg::inferMatmul(loc(), lhs.getType(), rhs.getType(), inferred)))
    return {};
  return check(tg::MatmulOp::create(builder, loc(), inferred[0], lhs, rhs));
}

SmallVector<int64_t, 4>
GraphBuilder::resolvePads(Value input, Window kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations, Padding padding,
                          ArrayRef<int64_t> pads, bool ceilMode) {
  SmallVector<int64_t, 4> result(pads.begin(), pads.end());
  auto type = mlir::cast<RankedTensorType>(input.getType());
  // Malformed inputs are left to the shape rule, which reports them.
  if (type.getRank() != 4 || strides.size() != 2 || dilations.size() != 2 ||
      result.size() != 4 || strides[0] < 1 || strides[1] < 1)
    return result;
  int64_t in[2] = {type.getDimSize(2), type.getDimSize(3)};
  int64_t k[2] = {kernel.h, kernel.w};
  for (int d = 0; d < 2; ++d) {
    int64_t span = dilations[d] * (k[d] - 1) + 1;
    if (padding == Padding::Same) {
      int64_t out = ceilDiv(in[d], strides[d]);
      int64_t total =
          std::max<int64_t>((out - 1) * strides[d] + span - in[d], 0);
      result[d] = total / 2;
      result[d + 2] = total - total / 2;
    }
    if (ceilMode) {
      int64_t padded = in[d] + result[d] + result[d + 2];
      if (padded < span)
        continue;
      int64_t out = ceilDiv(padded - span, strides[d]) + 1;
      // The last window must start inside the input or the begin padding.
      if ((out - 1) * strides[d] >= in[d] + result[d])
        --out;
      result[d + 2] +=
          std::max<int64_t>((out - 1) * strides[d] + span - padded, 0);
    }
  }
  return result;
}

Value GraphBuilder::conv2d(Value input, Value filter, const Conv2dOptions &o) {
  SmallVector<Value, 3> operands{input, filter};
  if (o.bias)
    operands.push_back(o.bias);
  if (!ready(operands, "tg.conv"))
    return {};
  auto filterType = mlir::cast<RankedTensorType>(filter.getType());
  SmallVector<int64_t, 4> pads = o.pads;
  if (o.padding == Padding::Same && filterType.getRank() == 4)
    pads = resolvePads(
        input, Window(filterType.getDimSize(2), filterType.getDimSize(3)),
        o.strides, o.dilations, o.padding, o.pads, false);
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferConv(loc(), input.getType(), filter.getType(),
                                   o.bias ? o.bias.getType() : Type(),
                                   o.strides, pads, o.dilations, o.groups,
                                   inferred)))
    return {};
  return check(tg::ConvOp::create(
      builder, loc(), inferred[0], input, filter, o.bias,
      arrayOrDefault(builder, o.strides, {1, 1}),
      arrayOrDefault(builder, pads, {0, 0, 0, 0}),
      arrayOrDefault(builder, o.dilations, {1, 1}),
      o.groups == 1 ? IntegerAttr() : builder.getI64IntegerAttr(o.groups),
      o.activation == tg::Activation::None
          ? tg::ActivationAttr()
          : tg::ActivationAttr::get(context, o.activation)));
}

template <typename OpTy>
Value GraphBuilder::pool(Value input, const Pool2dOptions &o) {
  if (!ready({input}, OpTy::getOperationName()))
    return {};
  SmallVector<int64_t, 2> kernel{o.kernel.h, o.kernel.w};
  SmallVector<int64_t, 4> pads = resolvePads(input, o.kernel, o.strides, {1, 1},
                                             o.padding, o.pads, o.ceilMode);
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferPool(loc(), input.getType(), kernel, o.strides,
                                   pads, inferred)))
    return {};
  DenseI64ArrayAttr kernelAttr = builder.getDenseI64ArrayAttr(kernel);
  DenseI64ArrayAttr stridesAttr = arrayOrDefault(builder, o.strides, {1, 1});
  DenseI64ArrayAttr padsAttr = arrayOrDefault(builder, pads, {0, 0, 0, 0});
  if constexpr (std::is_same_v<OpTy, tg::AvgPoolOp>)
    return check(tg::AvgPoolOp::create(
        builder, loc(), inferred[0], input, kernelAttr, stridesAttr, padsAttr,
        o.countIncludePad ? builder.getBoolAttr(true) : BoolAttr()));
  else
    return check(tg::MaxPoolOp::create(builder, loc(), inferred[0], input,
                                         kernelAttr, stridesAttr, padsAttr));
}

Value GraphBuilder::maxpool2d(Value input, const Pool2dOptions &options) {
  return pool<tg::MaxPoolOp>(input, options);
}

Value GraphBuilder::avgpool2d(Value input, const Pool2dOptions &options) {
  return pool<tg::AvgPoolOp>(input, options);
}

Value GraphBuilder::globalAvgPool(Value input) {
  if (!ready({input}, "tg.global_avgpool"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferGlobalAvgPool(loc(), input.getType(), inferred)))
    return {};
  return check(tg::GlobalAvgPoolOp::create(builder, loc(), inferred[0], input));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Value GraphBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (!ready({x}, "tg.reshape"))
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return fail("tg.reshape: negative dimension in the new shape " +
                shapeString(shape));
  RankedTensorType to = type.clone(shape);
  if (to.getNumElements() != type.getNumElements())
    return fail("tg.reshape: cannot reshape " + shapeString(type.getShape()) +
                " (" + Twine(type.getNumElements()) + " elements) to " +
                shapeString(shape) + " (" + Twine(to.getNumElements()) +
                " elements)");
  return check(tg::ReshapeOp::create(builder, loc(), to, x));
}

Value GraphBuilder::flatten(Value x, int64_t axis) {
  if (!ready({x}, "flatten"))
    return {};
  ArrayRef<int64_t> shape =
      mlir::cast<RankedTensorType>(x.getType()).getShape();
  if (axis < 0 || axis > int64_t(shape.size()))
    return fail("flatten: axis " + Twine(axis) + " is out of range for rank " +
                Twine(shape.size()));
  SmallVector<int64_t> to(shape.begin(), shape.begin() + axis);
  to.push_back(std::accumulate(shape.begin() + axis, shape.end(), int64_t(1),
                               std::multiplies<int64_t>()));
  return reshape(x, to);
}

Value GraphBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  if (!ready({x}, "tg.transpose"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferTranspose(loc(), x.getType(), perm, inferred)))
    return {};
  return check(tg::TransposeOp::create(builder, loc(), inferred[0], x,
                                       builder.getDenseI64ArrayAttr(perm)));
}

Value GraphBuilder::concat(ValueRange inputs, int64_t axis) {
  SmallVector<Value> operands(inputs.begin(), inputs.end());
  if (!ready(operands, "tg.concat"))
    return {};
  if (operands.empty())
    return fail("tg.concat needs at least one input");
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferConcat(loc(), inputs.getTypes(), axis, inferred)))
    return {};
  return check(tg::ConcatOp::create(builder, loc(), inferred[0], inputs,
                                    builder.getI64IntegerAttr(axis)));
}

SmallVector<Value> GraphBuilder::split(Value x, int64_t axis,
                                       ArrayRef<int64_t> sizes) {
  if (!ready({x}, "tg.split"))
    return {};
  SmallVector<Type> inferred;
  if (!ruleAccepts(tg::inferSplit(loc(), x.getType(), axis, sizes, inferred)))
    return {};
  auto op = tg::SplitOp::create(builder, loc(), inferred, x,
                                builder.getI64IntegerAttr(axis),
                                builder.getDenseI64ArrayAttr(sizes));
  if (!check(op))
    return {};
  return SmallVector<Value>(op->getResults());
}

Value GraphBuilder::slice(Value x, ArrayRef<int64_t> starts,
                          ArrayRef<int64_t> limits, ArrayRef<int64_t> strides) {
  if (!ready({x}, "tg.slice"))
    return {};
  std::optional<ArrayRef<int64_t>> maybeStrides;
  bool unit = llvm::all_of(strides, [](int64_t s) { return s == 1; });
  if (!strides.empty() && !unit)
    maybeStrides = strides;
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferSlice(loc(), x.getType(), starts, limits,
                                  maybeStrides, inferred)))
    return {};
  return check(tg::SliceOp::create(
      builder, loc(), inferred[0], x, builder.getDenseI64ArrayAttr(starts),
      builder.getDenseI64ArrayAttr(limits),
      maybeStrides ? builder.getDenseI64ArrayAttr(*maybeStrides)
                   : DenseI64ArrayAttr()));
}

Value GraphBuilder::sliceAxis(Value x, int64_t axis, int64_t start,
                              int64_t limit) {
  if (!ready({x}, "tg.slice"))
    return {};
  ArrayRef<int64_t> shape =
      mlir::cast<RankedTensorType>(x.getType()).getShape();
  int64_t rank = shape.size();
  if (axis < -rank || axis >= rank)
    return fail("tg.slice: axis " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> starts(rank, 0), limits(shape.begin(), shape.end());
  starts[axis] = start;
  limits[axis] = limit;
  return slice(x, starts, limits);
}

Value GraphBuilder::pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        double value) {
  if (!ready({x}, "tg.pad"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferPad(loc(), x.getType(), low, high, inferred)))
    return {};
  return check(tg::PadOp::create(
      builder, loc(), inferred[0], x, builder.getDenseI64ArrayAttr(low),
      builder.getDenseI64ArrayAttr(high),
      value == 0.0 ? FloatAttr() : builder.getF64FloatAttr(value)));
}

Value GraphBuilder::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  if (!ready({x}, "tg.broadcast_to"))
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (!tg::isBroadcastableTo(type.getShape(), shape))
    return fail("tg.broadcast_to: " + shapeString(type.getShape()) +
                " does not broadcast to " + shapeString(shape));
  return check(tg::BroadcastToOp::create(builder, loc(), type.clone(shape), x));
}

Value GraphBuilder::gather(Value data, Value indices, int64_t axis) {
  if (!ready({data, indices}, "tg.gather"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferGather(loc(), data.getType(), indices.getType(),
                                   axis, inferred)))
    return {};
  return check(tg::GatherOp::create(
      builder, loc(), inferred[0], data, indices,
      axis == 0 ? IntegerAttr() : builder.getI64IntegerAttr(axis)));
}

Value GraphBuilder::enlarge(Value filter, Window kernel) {
  if (!ready({filter}, "tg.enlarge"))
    return {};
  SmallVector<int64_t, 2> k{kernel.h, kernel.w};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferEnlarge(loc(), filter.getType(), k, inferred)))
    return {};
  return check(tg::EnlargeOp::create(builder, loc(), inferred[0], filter,
                                     builder.getDenseI64ArrayAttr(k)));
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

template <typename OpTy>
Value GraphBuilder::reduce(Value x, ArrayRef<int64_t> axes, bool keepDims) {
  if (!ready({x}, OpTy::getOperationName()))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(
          tg::inferReduce(loc(), x.getType(), axes, keepDims, inferred)))
    return {};
  return check(OpTy::create(
      builder, loc(), inferred[0], x, builder.getDenseI64ArrayAttr(axes),
      keepDims ? BoolAttr() : builder.getBoolAttr(false)));
}

Value GraphBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keep) {
  return reduce<tg::ReduceSumOp>(x, axes, keep);
}
Value GraphBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keep) {
  return reduce<tg::ReduceMeanOp>(x, axes, keep);
}
Value GraphBuilder::reduceMax(Value x, ArrayRef<int64_t> axes, bool keep) {
  return reduce<tg::ReduceMaxOp>(x, axes, keep);
}

Value GraphBuilder::softmax(Value x, int64_t axis) {
  if (!ready({x}, "tg.softmax"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferSoftmax(loc(), x.getType(), axis, inferred)))
    return {};
  return check(tg::SoftmaxOp::create(
      builder, loc(), inferred[0], x,
      axis == -1 ? IntegerAttr() : builder.getI64IntegerAttr(axis)));
}

Value GraphBuilder::fusedAttention(Value q, Value k, Value v, Value length,
                                   std::optional<double> scale, bool causal) {
  SmallVector<Value, 4> operands = {q, k, v};
  if (length)
    operands.push_back(length);
  if (!ready(operands, "tg.attention"))
    return {};
  auto qType = mlir::cast<RankedTensorType>(q.getType());
  double s = scale.value_or(
      qType.getRank() == 4 ? 1.0 / std::sqrt(double(qType.getDimSize(3))) : 1);
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferAttention(loc(), q.getType(), k.getType(),
                                      v.getType(),
                                      length ? length.getType() : Type(), s,
                                      causal, inferred)))
    return {};
  return check(tg::AttentionOp::create(builder, loc(), inferred[0], q, k, v,
                                       length, builder.getF64FloatAttr(s),
                                       builder.getBoolAttr(causal)));
}

Value GraphBuilder::updateSlice(Value base, Value update, Value offsets,
                                int64_t axis) {
  if (!ready({base, update, offsets}, "tg.update_slice"))
    return {};
  return check(tg::UpdateSliceOp::create(builder, loc(), base.getType(), base,
                                         update, offsets,
                                         builder.getI64IntegerAttr(axis)));
}

Value GraphBuilder::layernorm(Value x, Value scale, Value bias, int64_t axis,
                              double epsilon) {
  if (!ready({x, scale, bias}, "tg.layernorm"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferLayerNorm(loc(), x.getType(), scale.getType(),
                                      bias.getType(), axis, inferred)))
    return {};
  return check(tg::LayerNormOp::create(
      builder, loc(), inferred[0], x, scale, bias,
      axis == -1 ? IntegerAttr() : builder.getI64IntegerAttr(axis),
      epsilon == 1e-5 ? FloatAttr() : builder.getF64FloatAttr(epsilon)));
}

Value GraphBuilder::batchnorm(Value x, Value scale, Value bias, Value mean,
                              Value variance, double epsilon) {
  if (!ready({x, scale, bias, mean, variance}, "tg.batchnorm"))
    return {};
  SmallVector<Type, 1> inferred;
  if (!ruleAccepts(tg::inferBatchNorm(loc(), x.getType(), scale.getType(),
                                      bias.getType(), mean.getType(),
                                      variance.getType(), inferred)))
    return {};
  return check(tg::BatchNormOp::create(
      builder, loc(), inferred[0], x, scale, bias, mean, variance,
      epsilon == 1e-5 ? FloatAttr() : builder.getF64FloatAttr(epsilon)));
}

//===----------------------------------------------------------------------===//
// Finishing
//===----------------------------------------------------------------------===//

void GraphBuilder::tie(Value input, StringRef outputName) {
  auto arg = mlir::dyn_cast_or_null<BlockArgument>(input);
  if (!arg || arg.getOwner() != &entry.getBody().front()) {
    fail("tie: the value tied to output '" + outputName +
         "' is not an input of function '" + entryName + "'");
    return;
  }
  ties.emplace_back(arg.getArgNumber(), outputName.str());
}

bool GraphBuilder::endFunction(ValueRange outputs, ArrayRef<StringRef> names) {
  SmallVector<Value> results(outputs.begin(), outputs.end());
  if (!ready(results, "finish"))
    return false;
  if (!names.empty() && names.size() != results.size()) {
    fail("finish: " + Twine(names.size()) + " names for " +
         Twine(results.size()) + " outputs");
    return false;
  }
  if (hasFailed)
    return false;
  Block &block = entry.getBody().front();
  func::ReturnOp::create(builder, loc(), results);
  entry.setType(builder.getFunctionType(block.getArgumentTypes(),
                                        ValueRange(results).getTypes()));
  for (const auto &it : inputNames)
    entry.setArgAttr(it.getValue(), "tg.name",
                     builder.getStringAttr(it.getKey()));
  for (auto [i, name] : llvm::enumerate(names))
    entry.setResultAttr(i, "tg.name", builder.getStringAttr(name));
  for (const auto &[arg, outputName] : ties) {
    const auto *named = llvm::find(names, outputName);
    if (named == names.end()) {
      fail("input " + Twine(arg) + " of function '" + entryName +
           "' is tied to output '" + outputName + "', which it does not return");
      return false;
    }
    tg::setTiedResult(entry, arg, named - names.begin());
  }
  return true;
}

bool GraphBuilder::nextFunction(StringRef name, ValueRange outputs,
                                ArrayRef<StringRef> names) {
  if (!endFunction(outputs, names))
    return false;
  entryName = name.str();
  weights.clear();
  inputNames.clear();
  ties.clear();
  builder.setInsertionPointToEnd(module->getBody());
  entry = func::FuncOp::create(builder, loc(), entryName,
                               builder.getFunctionType({}, {}));
  builder.setInsertionPointToEnd(entry.addEntryBlock());
  return true;
}

FailureOr<OwningOpRef<ModuleOp>>
GraphBuilder::finish(ValueRange outputs, ArrayRef<StringRef> names) {
  if (!endFunction(outputs, names))
    return failure();
  finished = true;
  if (mlir::failed(verify(*module))) {
    hasFailed = true;
    return failure();
  }
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// Writers
//===----------------------------------------------------------------------===//

LogicalResult loom::writeModule(ModuleOp module, StringRef path,
                                StringRef header) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return module.emitError() << "cannot write '" << path << "': " << error;
  SmallVector<StringRef> lines;
  if (!header.empty())
    header.split(lines, '\n');
  for (StringRef line : lines)
    file->os() << (line.empty() ? "//" : "// " + line.str()) << "\n";
  module.print(file->os());
  file->os() << "\n";
  file->keep();
  if (file->os().has_error())
    return module.emitError() << "error writing '" << path << "'";
  return success();
}

LogicalResult loom::writeRandomWeights(ModuleOp module, StringRef path,
                                       uint64_t seed) {
  return tg::writeRandomWeights(module, path, seed);
}

llvm::StringMap<unsigned> loom::countOps(ModuleOp module) {
  llvm::StringMap<unsigned> counts;
  module.walk([&](Operation *op) {
    if (op != module.getOperation())
      ++counts[op->getName().getStringRef()];
  });
  return counts;
}
