//===- Autodiff.cpp - Reverse-mode differentiation of tg functions --------===//
//
// Part of Loom. A training step is built in five steps on a clone of the
// forward function: parameters (float tg.weights) become arguments;
// batchnorm takes the batch's statistics; a forward sweep marks the values
// that depend on a parameter; a reverse sweep asks every such op for its
// VJP and sums the gradients of values used more than once; the optimizer's
// update is appended. Backward ops follow the forward ops in the block, so
// which activations the backward pass keeps is visible in the IR: the
// forward values it uses. With recompute=elementwise, cheap elementwise
// forward ops are cloned (marked `tg.recomputed`) before their first
// backward use instead.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"

#include "loom/Autodiff/GradBuilder.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

void loom::tg::registerTGGradientInterfaceModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, TGDialect *) {
    attachElementwiseGradients(context);
    attachLinearGradients(context);
    attachMovementGradients(context);
    attachReductionGradients(context);
  });
}

namespace {
const NoGradient kNoGradient[] = {
    {ConstantOp::getOperationName(),
     "no operands: nothing to differentiate with respect to"},
    {WeightOp::getOperationName(),
     "no operands; float weights become arguments, whose gradients are the "
     "result"},
    {EqualOp::getOperationName(), "an i1 result carries no cotangent"},
    {GreaterOp::getOperationName(), "an i1 result carries no cotangent"},
    {GreaterEqualOp::getOperationName(), "an i1 result carries no cotangent"},
    {LessOp::getOperationName(), "an i1 result carries no cotangent"},
    {LessEqualOp::getOperationName(), "an i1 result carries no cotangent"},
    {ResizeOp::getOperationName(),
     "the adjoint of the interpolation is not built"},
    {MaxPoolGradOp::getOperationName(),
     "second-order differentiation of max pooling is not supported"},
    {FragmentOp::getOperationName(),
     "differentiate before forming fragments"},
    {IfOp::getOperationName(),
     "reverse mode through run-time control flow is not built"},
    {ScanOp::getOperationName(),
     "reverse mode through a recurrence (its steps' states would have to be "
     "kept) is not built"},
    {NonZeroOp::getOperationName(),
     "integer coordinates and a length carry no cotangent"},
    {TopKOp::getOperationName(),
     "the scatter of the values' gradient to their positions is not built "
     "(training through a run-time selection is not supported)"},
    {NonMaxSuppressionOp::getOperationName(),
     "integer box indices and a length carry no cotangent"},
    {UpdateSliceOp::getOperationName(),
     "the update's gradient is a slice at a run-time offset, which tg cannot "
     "express (decoding's state update is not trained through)"},
    {AttentionOp::getOperationName(),
     "the fused attention's backward (FlashAttention's recomputation) is not "
     "built: decoder programs run it for inference only"},
    {ShardAttentionOp::getOperationName(),
     "cache-parallel decoder programs run it for inference only"},
    {WorldRankOp::getOperationName(), "an integer rank carries no cotangent"},
    {AllGatherOp::getOperationName(),
     "the gather's adjoint (a reduce-scatter) is not built: programs of "
     "several ranks are not trained through"},
};
} // namespace

ArrayRef<NoGradient> autodiff::opsWithoutGradient() { return kNoGradient; }

std::optional<StringRef> autodiff::noGradientReason(StringRef opName) {
  for (const NoGradient &entry : kNoGradient)
    if (entry.op == opName)
      return entry.reason;
  return std::nullopt;
}

namespace {
/// Appends an argument named `name` (tg.name) to `fn` and its block, with
/// the role attribute `role` (kParameterAttr, kOptimizerStateAttr or
/// kHyperParameterAttr) set to `roleValue`.
Value appendArgument(func::FuncOp fn, Type type, StringRef name, Location loc,
                     StringRef role, Attribute roleValue) {
  unsigned index = fn.getNumArguments();
  MLIRContext *ctx = fn.getContext();
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, "tg.name"),
                           StringAttr::get(ctx, name)),
            NamedAttribute(StringAttr::get(ctx, role), roleValue)});
  (void)fn.insertArgument(index, type, attrs, loc);
  return fn.getArgument(index);
}
} // namespace

SmallVector<std::string> autodiff::weightsToArguments(func::FuncOp fn) {
  SmallVector<std::string> names;
  llvm::StringMap<Value> argOf;
  SmallVector<WeightOp> weights;
  fn.walk([&](WeightOp w) {
    if (isa<FloatType>(w.getType().getElementType()))
      weights.push_back(w);
  });
  for (WeightOp w : weights) {
    auto [it, inserted] = argOf.try_emplace(w.getName(), Value());
    if (inserted) {
      it->second = appendArgument(fn, w.getType(), w.getName(), w.getLoc(),
                                  kParameterAttr,
                                  UnitAttr::get(fn.getContext()));
      names.push_back(w.getName().str());
    }
    w.getOutput().replaceAllUsesWith(it->second);
    w.erase();
  }
  return names;
}

/// y = (x - mean_b) * rsqrt(var_b + eps) * scale + bias, with the batch's
/// mean and (biased) variance over every dimension but the channel.
void autodiff::batchnormToTraining(func::FuncOp fn) {
  SmallVector<BatchNormOp> ops;
  fn.walk([&](BatchNormOp op) { ops.push_back(op); });
  for (BatchNormOp op : ops) {
    OpBuilder b(op);
    GradBuilder g(b, op.getLoc());
    Value x = op.getInput();
    auto type = GradBuilder::typeOf(x);
    SmallVector<int64_t> axes = {0}, perChannel(type.getRank(), 1);
    perChannel[1] = type.getDimSize(1);
    for (int64_t d = 2; d < type.getRank(); ++d)
      axes.push_back(d);
    Value centred = g.sub(x, g.reduceMean(x, axes, true));
    Value var = g.reduceMean(g.mul(centred, centred), axes, true);
    Value rstd = g.rsqrt(g.add(var, g.scalarLike(
                                        op.getEpsilon().convertToDouble(), x)));
    Value y = g.add(g.mul(g.mul(centred, rstd),
                          g.reshape(op.getScale(), perChannel)),
                    g.reshape(op.getBias(), perChannel));
    op.getOutput().replaceAllUsesWith(y);
    op.erase();
  }
}

namespace {

bool isFloat(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

class Differentiator {
public:
  Differentiator(func::FuncOp fn, OpBuilder &b) : fn(fn), b(b) {}

  /// The gradient of the single result with respect to each of `wrt`
  /// (zeros where it does not depend on one).
  FailureOr<SmallVector<Value>> run(ArrayRef<Value> wrt) {
    Block &body = fn.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);
    // A region reads values that are not its op's operands: activity and
    // cotangents would not flow through it.
    for (Operation &op : body.without_terminator())
      if (isa<IfOp>(op))
        return op.emitOpError(
            "cannot be differentiated: reverse mode through run-time "
            "control flow is not built (a condition known at compile time "
            "folds away with --canonicalize)");
    DenseSet<Value> active(wrt.begin(), wrt.end());
    for (Operation &op : body.without_terminator())
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (isFloat(r))
            active.insert(r);
    if (!active.contains(loss))
      return fn.emitError("the loss does not depend on any parameter");

    lastForward = ret->getPrevNode();
    b.setInsertionPoint(ret);
    GradBuilder g(b, fn.getLoc());
    grads[loss] = g.scalarLike(1, loss);
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);
    for (Operation *op : llvm::reverse(forward)) {
      if (llvm::none_of(op->getResults(),
                        [&](Value r) { return grads.count(r); }))
        continue;
      SmallVector<bool> needed;
      for (Value v : op->getOperands())
        needed.push_back(active.contains(v));
      if (llvm::none_of(needed, [](bool n) { return n; }))
        continue;
      auto iface = dyn_cast<GradientOpInterface>(op);
      if (!iface) {
        if (std::optional<StringRef> why =
                noGradientReason(op->getName().getStringRef()))
          return op->emitOpError("has no gradient yet (docs/Training.md "
                                 "lists the differentiable ops): ")
                 << *why;
        return op->emitOpError("has no gradient (GradientOpInterface)");
      }
      SmallVector<Value> resultGrads;
      for (Value r : op->getResults()) {
        auto it = grads.find(r);
        resultGrads.push_back(it != grads.end()
                                  ? it->second
                                  : GradBuilder(b, op->getLoc()).zerosLike(r));
      }
      b.setInsertionPoint(ret);
      FailureOr<SmallVector<Value>> operandGrads =
          iface.buildVJP(b, resultGrads, needed);
      if (failed(operandGrads))
        return failure();
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        Value d = (*operandGrads)[i];
        if (!needed[i] || !d)
          continue;
        if (d.getType() != v.getType())
          return op->emitOpError("gradient of operand ")
                 << i << " has type " << d.getType() << ", expected "
                 << v.getType();
        accumulate(v, d, op->getLoc());
      }
    }
    SmallVector<Value> out;
    for (Value v : wrt) {
      auto it = grads.find(v);
      out.push_back(it != grads.end() ? it->second
                                      : GradBuilder(b, v.getLoc()).zerosLike(v));
    }
    return out;
  }

  /// Clones cheap elementwise forward ops before their first backward use.
  void recomputeElementwise() {
    Block &body = fn.getBody().front();
    SmallVector<Operation *> candidates;
    for (Operation &op : body) {
      if (&op == lastForward->getNextNode())
        break;
      if (op.hasTrait<CheapToRecompute>())
        candidates.push_back(&op);
    }
    auto isBackward = [&](Operation *user) {
      return user->getBlock() == &body &&
             lastForward->isBeforeInBlock(user) &&
             !isa<func::ReturnOp>(user);
    };
    for (Operation *op : llvm::reverse(candidates)) {
      Operation *first = nullptr;
      for (Operation *user : op->getResult(0).getUsers())
        if (isBackward(user) && (!first || user->isBeforeInBlock(first)))
          first = user;
      if (!first)
        continue;
      b.setInsertionPoint(first);
      Operation *copy = b.clone(*op);
      copy->setAttr("tg.recomputed", b.getUnitAttr());
      op->getResult(0).replaceUsesWithIf(copy->getResult(0), [&](OpOperand &u) {
        return isBackward(u.getOwner());
      });
    }
  }

private:
  void accumulate(Value v, Value d, Location loc) {
    auto [it, inserted] = grads.try_emplace(v, d);
    if (!inserted)
      it->second = AddOp::create(b, loc, it->second, d);
  }

  func::FuncOp fn;
  OpBuilder &b;
  DenseMap<Value, Value> grads;
  Operation *lastForward = nullptr;
};

/// The hyper-parameters of the step `o` builds, in argument order: lr, then
/// momentum (SGD, when not 0) or beta1 and beta2 (Adam), then weight_decay
/// (when not 0), each with its value in `o`.
SmallVector<std::pair<StringRef, double>> hyperParameters(const Options &o) {
  SmallVector<std::pair<StringRef, double>> hp = {{"lr", o.learningRate}};
  if (o.optimizer == Optimizer::SGD && o.momentum != 0)
    hp.push_back({"momentum", o.momentum});
  if (o.optimizer == Optimizer::Adam) {
    hp.push_back({"beta1", o.beta1});
    hp.push_back({"beta2", o.beta2});
  }
  if (o.weightDecay != 0)
    hp.push_back({"weight_decay", o.weightDecay});
  return hp;
}

struct Update {
  SmallVector<Value> values;
  SmallVector<std::string> names;
};

/// Appends the optimizer's state arguments and builds the updates.
Update applyOptimizer(func::FuncOp fn, OpBuilder &b, const Options &o,
                      ArrayRef<Value> params, ArrayRef<std::string> names,
                      ArrayRef<Value> grads) {
  GradBuilder g(b, fn.getLoc());
  auto addState = [&](Type type, StringRef name) {
    return appendArgument(fn, type, name, fn.getLoc(), kOptimizerStateAttr,
                          UnitAttr::get(fn.getContext()));
  };
  // A hyper-parameter: a constant, or with hyperParameterArguments a scalar
  // f32 argument (its nominal value recorded), cast to `et` where needed.
  llvm::StringMap<Value> hyperArgs;
  if (o.hyperParameterArguments)
    for (auto [name, value] : hyperParameters(o))
      hyperArgs[name] = appendArgument(
          fn, RankedTensorType::get({}, b.getF32Type()), name, fn.getLoc(),
          kHyperParameterAttr, b.getF64FloatAttr(value));
  auto hyper = [&](StringRef name, double value, Type et) -> Value {
    if (!o.hyperParameterArguments)
      return g.scalar(value, et);
    Value arg = hyperArgs.lookup(name);
    assert(arg && "hyperParameters() lists every hyper-parameter used");
    if (et == b.getF32Type())
      return arg;
    return CastOp::create(b, fn.getLoc(), RankedTensorType::get({}, et), arg);
  };
  // 1 - value: a constant as before, or computed from the argument.
  auto oneMinus = [&](StringRef name, double value, Type et) -> Value {
    if (!o.hyperParameterArguments)
      return g.scalar(1 - value, et);
    return g.sub(g.scalar(1, et), hyper(name, value, et));
  };
  auto elemOf = [](Value v) { return GradBuilder::typeOf(v).getElementType(); };
  auto scaleBy = [&](Value v, StringRef name, double value) {
    return g.mul(v, hyper(name, value, elemOf(v)));
  };
  Update up;
  SmallVector<Value> gs;
  for (auto [p, d] : llvm::zip(params, grads))
    gs.push_back(o.weightDecay != 0
                     ? g.add(d, scaleBy(p, "weight_decay", o.weightDecay))
                     : d);
  SmallVector<Value> newParams;
  SmallVector<std::pair<Value, std::string>> state;
  if (o.optimizer == Optimizer::SGD) {
    for (auto [i, p] : llvm::enumerate(params)) {
      Value step = gs[i];
      if (o.momentum != 0) {
        std::string n = names[i] + ".velocity";
        Value v = addState(p.getType(), n);
        step = g.add(scaleBy(v, "momentum", o.momentum), gs[i]);
        state.push_back({step, n});
      }
      newParams.push_back(g.sub(p, scaleBy(step, "lr", o.learningRate)));
    }
  } else {
    SmallVector<Value> ms, vs;
    for (auto [i, p] : llvm::enumerate(params))
      ms.push_back(addState(p.getType(), names[i] + ".m"));
    for (auto [i, p] : llvm::enumerate(params))
      vs.push_back(addState(p.getType(), names[i] + ".v"));
    Type f32 = b.getF32Type();
    Value t = addState(RankedTensorType::get({}, f32), "adam.step");
    Value t1 = g.add(t, g.scalar(1, f32));
    SmallVector<Value> newM, newV;
    for (auto [i, p] : llvm::enumerate(params)) {
      Type et = GradBuilder::typeOf(p).getElementType();
      Value time = et == f32 ? t1
                             : Value(CastOp::create(
                                   b, fn.getLoc(), RankedTensorType::get({}, et),
                                   t1));
      Value one = g.scalar(1, et);
      Value beta1 = hyper("beta1", o.beta1, et);
      Value beta2 = hyper("beta2", o.beta2, et);
      Value m = g.add(g.mul(ms[i], beta1),
                      g.mul(gs[i], oneMinus("beta1", o.beta1, et)));
      Value v = g.add(g.mul(vs[i], beta2),
                      g.mul(g.mul(gs[i], gs[i]), oneMinus("beta2", o.beta2, et)));
      Value bc1 = g.sub(one, g.pow(beta1, time));
      Value bc2 = g.sub(one, g.pow(beta2, time));
      Value denom = g.add(g.sqrt(g.div(v, bc2)), g.scalar(o.epsilon, et));
      Value stepSize = g.div(hyper("lr", o.learningRate, et), bc1);
      newParams.push_back(g.sub(p, g.mul(stepSize, g.div(m, denom))));
      newM.push_back(m);
      newV.push_back(v);
    }
    for (auto [i, m] : llvm::enumerate(newM))
      state.push_back({m, names[i] + ".m"});
    for (auto [i, v] : llvm::enumerate(newV))
      state.push_back({v, names[i] + ".v"});
    state.push_back({t1, "adam.step"});
  }
  for (auto [i, p] : llvm::enumerate(newParams)) {
    up.values.push_back(p);
    up.names.push_back(names[i]);
  }
  for (auto &[v, n] : state) {
    up.values.push_back(v);
    up.names.push_back(n);
  }
  return up;
}

std::string defaultName(func::FuncOp fn, const Options &o) {
  if (!o.name.empty())
    return o.name;
  return (fn.getName() +
          (o.optimizer == Optimizer::None ? "_grad" : "_train_step"))
      .str();
}

} // namespace

FailureOr<func::FuncOp> autodiff::buildTrainStep(func::FuncOp fn,
                                                 const Options &options) {
  auto module = fn->getParentOfType<ModuleOp>();
  if (fn.isExternal())
    return fn.emitError("cannot differentiate a function without a body");
  if (fn.getNumResults() != 1 ||
      cast<RankedTensorType>(fn.getResultTypes()[0]).getRank() != 0 ||
      !isa<FloatType>(
          cast<RankedTensorType>(fn.getResultTypes()[0]).getElementType()))
    return fn.emitError("the function to differentiate must return exactly "
                        "one scalar float (the loss), not ")
           << fn.getFunctionType().getResults();
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("cannot differentiate a function of several blocks");
  if (options.wrtArguments && options.optimizer != Optimizer::None)
    return fn.emitError("differentiating with respect to the arguments needs "
                        "optimizer=none (arguments are not updated)");
  if (options.recompute != "none" && options.recompute != "elementwise")
    return fn.emitError("unknown recompute policy '")
           << options.recompute << "' (none, elementwise)";
  std::string name = defaultName(fn, options);
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return fn.emitError("the module already has a function named '")
           << name << "'";

  auto step = cast<func::FuncOp>(fn->clone());
  step.setName(name);
  auto fail = [&]() -> FailureOr<func::FuncOp> {
    step.erase();
    return failure();
  };
  if (module) {
    SymbolTable table(module);
    table.insert(step, std::next(Block::iterator(fn)));
  }
  unsigned numInputs = fn.getNumArguments();
  SmallVector<std::string> names = weightsToArguments(step);
  if (options.batchnormTraining)
    batchnormToTraining(step);

  Block &body = step.getBody().front();
  SmallVector<Value> wrt, params;
  if (options.wrtArguments)
    for (unsigned i = 0; i < numInputs; ++i)
      if (isFloat(body.getArgument(i)))
        wrt.push_back(body.getArgument(i));
  for (unsigned i = numInputs; i < body.getNumArguments(); ++i)
    params.push_back(body.getArgument(i));
  wrt.append(params);
  if (wrt.empty()) {
    fn.emitError("nothing to differentiate: the function has no float "
                 "tg.weight")
        << (options.wrtArguments ? " and no float argument" : "");
    return fail();
  }

  OpBuilder b(step.getContext());
  Differentiator diff(step, b);
  FailureOr<SmallVector<Value>> grads = diff.run(wrt);
  if (failed(grads))
    return fail();

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  SmallVector<Value> results = {ret.getOperand(0)};
  SmallVector<std::string> resultNames = {"loss"};
  if (options.optimizer == Optimizer::None) {
    for (auto [i, d] : llvm::enumerate(*grads)) {
      results.push_back(d);
      Value of = wrt[i];
      auto arg = cast<BlockArgument>(of);
      auto attr = step.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    "tg.name");
      resultNames.push_back(
          (attr ? attr.getValue().str()
                : "arg" + std::to_string(arg.getArgNumber())) +
          ".grad");
    }
  } else {
    ArrayRef<Value> paramGrads = ArrayRef<Value>(*grads).take_back(
        params.size());
    Update up = applyOptimizer(step, b, options, params, names, paramGrads);
    results.append(up.values);
    resultNames.append(up.names);
  }
  if (options.recompute == "elementwise")
    diff.recomputeElementwise();
  b.setInsertionPoint(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  step.setType(FunctionType::get(step.getContext(), step.getArgumentTypes(),
                                 resultTypes));
  SmallVector<DictionaryAttr> resultAttrs;
  for (const std::string &n : resultNames)
    resultAttrs.push_back(DictionaryAttr::get(
        step.getContext(),
        {NamedAttribute(StringAttr::get(step.getContext(), "tg.name"),
                        StringAttr::get(step.getContext(), n))}));
  step.setAllResultAttrs(resultAttrs);
  return step;
}
