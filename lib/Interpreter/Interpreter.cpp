//===- Interpreter.cpp - Reference interpreter for tg ----------------------===//
//
// Part of Loom. Values, weights and calls; each tg op's semantics is its
// EvaluableOpInterface (lib/Dialect/TG/IR/*Ops.cpp), which calls the
// domain-generic kernels.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Interpreter.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/EvalFrame.h"
#include "loom/Interpreter/Kernels.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <chrono>
#include <optional>

using namespace mlir;
using namespace loom;
using namespace loom::interp;


template <class D> struct Interpreter<D>::Impl {
  using TensorPtr = std::shared_ptr<const Tensor<D>>;

  ModuleOp module;
  InterpreterOptions options;
  tg::LazyWeights weights;
  llvm::StringMap<TensorPtr> weightCache;
  llvm::StringMap<OpProfile> profile;
  unsigned depth = 0;

  Impl(ModuleOp module, InterpreterOptions options)
      : module(module), options(std::move(options)),
        weights(module, this->options.weightsFile) {}

  FailureOr<TensorPtr> loadWeight(tg::WeightOp op) {
    auto it = weightCache.find(op.getName());
    if (it != weightCache.end())
      return it->second;
    auto file = weights.fileFor(op);
    if (failed(file))
      return failure();
    auto values = (*file)->readAsDouble(op.getName());
    if (!values)
      return op.emitOpError() << llvm::toString(values.takeError());
    auto t = std::make_shared<const Tensor<D>>(
        Tensor<D>::fromDoubles(
            std::vector<int64_t>(op.getType().getShape().begin(),
                                 op.getType().getShape().end()),
            *values));
    weightCache[op.getName()] = t;
    return t;
  }

  /// Evaluates one tg op through its EvaluableOpInterface.
  LogicalResult evaluate(Operation *op, ArrayRef<const Tensor<D> *> in,
                         std::vector<TensorPtr> &results) {
    auto evaluable = dyn_cast<tg::EvaluableOpInterface>(op);
    if (!evaluable)
      return op->emitOpError("is not supported by the reference interpreter");
    auto loadThisWeight = [&]() -> FailureOr<TensorPtr> {
      return loadWeight(cast<tg::WeightOp>(op));
    };
    auto runBody = [&](Block &body, ArrayRef<TensorPtr> args) {
      return runBlock(body, args);
    };
    interp::TypedFrame<D> typed(in, results, loadThisWeight, runBody);
    interp::EvalFrame frame(typed);
    if (failed(evaluable.evaluate(frame)))
      return failure();
    if (results.size() != op->getNumResults())
      return op->emitOpError("produced ")
             << results.size() << " value(s) for " << op->getNumResults()
             << " result(s) (a bug in its EvaluableOpInterface)";
    roundNarrowResults(op, results);
    return success();
  }

  /// Rounds each f16 or bf16 result of \p op to its format, as the compiled
  /// code stores it (docs/Interpreter.md, "Narrow floats"): an op computes in
  /// the domain and its result is rounded once, a product accumulating in
  /// the domain as compiled products accumulate in f32. Exact domains have
  /// no precision to lose.
  void roundNarrowResults(Operation *op, std::vector<TensorPtr> &results) {
    if constexpr (!D::isExact) {
      for (auto [value, t] : llvm::zip(op->getResults(), results)) {
        auto type = dyn_cast<RankedTensorType>(value.getType());
        std::optional<ElemKind> kind =
            type ? tg::elemKindOf(type.getElementType()) : std::nullopt;
        if (t && kind && (*kind == ElemKind::F16 || *kind == ElemKind::BF16))
          t = std::make_shared<const Tensor<D>>(interp::cast(*t, *kind));
      }
    }
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
    return runBlock(fn.getBody().front(), args);
  }

  /// The values of the blocks being run, innermost last: a region that is
  /// not isolated from above (tg.if) reads the values of enclosing blocks.
  std::vector<const llvm::DenseMap<Value, TensorPtr> *> scopes;

  /// The value of \p v in the innermost block that has it, or null.
  TensorPtr lookup(Value v) const {
    for (auto *env : llvm::reverse(scopes)) {
      auto it = env->find(v);
      if (it != env->end())
        return it->second;
    }
    return nullptr;
  }

  /// Calls \p fn on each value \p op reads: its operands and the values
  /// its regions use from outside it.
  static void forEachUse(Operation &op, llvm::function_ref<void(Value)> fn) {
    for (Value v : op.getOperands())
      fn(v);
    for (Region &region : op.getRegions())
      region.walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (!op.isAncestor(v.getParentRegion()->getParentOp()))
            fn(v);
      });
  }

  /// Runs the ops of \p block on \p args; returns the terminator's operands
  /// (func.return, tg.yield).
  FailureOr<std::vector<TensorPtr>> runBlock(Block &block,
                                             ArrayRef<TensorPtr> args) {
    llvm::DenseMap<Value, TensorPtr> env;
    llvm::DenseMap<Value, unsigned> remainingUses;
    for (auto [arg, t] : llvm::zip(block.getArguments(), args))
      env[arg] = t;
    for (Operation &op : block)
      forEachUse(op, [&](Value v) { ++remainingUses[v]; });
    scopes.push_back(&env);
    llvm::scope_exit popScope([&] { scopes.pop_back(); });

    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        std::vector<TensorPtr> results;
        for (Value v : op.getOperands())
          results.push_back(lookup(v));
        return results;
      }
      auto start = std::chrono::steady_clock::now();
      for (Type t : op.getResultTypes())
        if (failed(checkSize(&op, t)))
          return failure();
      std::vector<TensorPtr> results;
      if (auto callOp = dyn_cast<func::CallOp>(op)) {
        auto callee =
            SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                callOp, callOp.getCalleeAttr());
        if (!callee)
          return callOp.emitOpError("calls an unknown function");
        std::vector<TensorPtr> callArgs;
        for (Value v : callOp.getOperands())
          callArgs.push_back(lookup(v));
        auto r = call(callee, callArgs);
        if (failed(r))
          return failure();
        results = std::move(*r);
      } else {
        std::vector<const Tensor<D> *> in;
        for (Value v : op.getOperands()) {
          const Tensor<D> *t = lookup(v).get();
          if (!t)
            return op.emitOpError("uses a value the interpreter has not "
                                  "computed");
          in.push_back(t);
        }
        if (failed(evaluate(&op, in, results)))
          return failure();
      }
      for (auto [v, t] : llvm::zip(op.getResults(), results))
        env[v] = t;
      // Free the values of this block after their last use.
      forEachUse(op, [&](Value v) {
        if (--remainingUses[v] == 0)
          env.erase(v);
      });
      if (options.profile) {
        double s = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
        OpProfile &p = profile[op.getName().getStringRef()];
        ++p.count;
        p.seconds += s;
      }
    }
    return mlir::emitError(block.getParent()->getLoc(),
                           "a block without a terminator");
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

/// The smallest size of a gathered axis that \p v indexes (through
/// fragments, whose block arguments stand for their inputs).
static void gatherBound(Value v, std::optional<int64_t> &bound) {
  for (OpOperand &use : v.getUses()) {
    if (auto fragment = dyn_cast<tg::FragmentOp>(use.getOwner())) {
      gatherBound(fragment.getBody().front().getArgument(
                      use.getOperandNumber()),
                  bound);
      continue;
    }
    auto g = dyn_cast<tg::GatherOp>(use.getOwner());
    if (!g || use.get() != g.getIndices())
      continue;
    auto data = g.getData().getType();
    int64_t axis = int64_t(g.getAxis()); // I64Attr reads back as uint64_t
    if (axis < 0)
      axis += data.getRank();
    if (axis < 0 || axis >= data.getRank())
      continue;
    int64_t size = std::max<int64_t>(1, data.getDimSize(axis));
    bound = bound ? std::min(*bound, size) : size;
  }
}

int64_t loom::interp::randomIntegerBound(BlockArgument arg) {
  if (getElementTypeOrSelf(arg.getType()).isInteger(1))
    return 2;
  std::optional<int64_t> bound;
  gatherBound(arg, bound);
  return bound.value_or(10);
}
