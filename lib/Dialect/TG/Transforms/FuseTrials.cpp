//===- FuseTrials.cpp - N training trials as one function -----------------===//
//
// Part of Loom. See TGFuseTrials in Passes.td and FuseTrials.h. Every value
// of the original function is either shared by the trials (it depends on no
// per-trial argument: it is computed once, as written) or per trial (it is
// computed as one tensor [N, ...original shape]). An op whose operands are
// all shared is copied; any other op is rewritten by the rule of its kind:
// the rules are grouped by what the op's computation class
// (TGTraits.td) and semantics let the trial dimension do.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/FuseTrials.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradBuilder.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace loom::tg {
#define GEN_PASS_DEF_TGFUSETRIALS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using autodiff::GradBuilder;

bool tg::isPerTrialArgument(func::FuncOp fn, unsigned index,
                            bool perTrialInputs) {
  for (StringRef role : {autodiff::kParameterAttr,
                         autodiff::kOptimizerStateAttr,
                         autodiff::kHyperParameterAttr})
    if (fn.getArgAttr(index, role))
      return true;
  return perTrialInputs;
}

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `t` with a leading trial dimension of `trials`.
RankedTensorType withTrials(Type t, int64_t trials) {
  auto type = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape = {trials};
  llvm::append_range(shape, type.getShape());
  return RankedTensorType::get(shape, type.getElementType());
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Builds the fused function op by op (see the file comment).
class TrialFuser {
public:
  TrialFuser(func::FuncOp fn, func::FuncOp fused, const FuseTrialsOptions &o)
      : fn(fn), fused(fused), o(o), b(fn.getContext()) {}

  LogicalResult run() {
    Block &from = fn.getBody().front();
    Block &to = fused.getBody().front();
    for (BlockArgument arg : from.getArguments()) {
      map.map(arg, to.getArgument(arg.getArgNumber()));
      if (isPerTrialArgument(fn, arg.getArgNumber(), o.perTrialInputs))
        perTrial.insert(arg);
    }
    b.setInsertionPointToEnd(&to);
    for (Operation &op : from.without_terminator())
      if (failed(fuseOp(&op)))
        return failure();
    builder.emplace(b, from.getTerminator()->getLoc());
    SmallVector<Value> results;
    for (Value v : from.getTerminator()->getOperands())
      results.push_back(lift(v));
    func::ReturnOp::create(b, from.getTerminator()->getLoc(), results);
    return success();
  }

private:
  LogicalResult fuseOp(Operation *op) {
    builder.emplace(b, op->getLoc());
    // The values the op reads: its operands and, for an op with regions,
    // the values its regions take from above.
    llvm::SetVector<Value> reads(op->operand_begin(), op->operand_end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, reads);
    if (llvm::none_of(reads, [&](Value v) { return perTrial.contains(v); })) {
      b.clone(*op, map);
      return success();
    }
    if (op->getNumRegions() != 0)
      return noFusedForm(op, "it computes in regions");
    // Numpy-broadcasting ops: the trial dimension broadcasts as a leading one.
    if (op->hasTrait<Elementwise>() || isa<MatmulOp>(op))
      return fuseBroadcasting(op);
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case<ReshapeOp>([&](ReshapeOp r) {
          defineOp(r, g().reshape(lift(r.getInput()), trialShape(r)));
          return success();
        })
        .Case<BroadcastToOp>([&](BroadcastToOp r) {
          defineOp(r, g().broadcastTo(aligned(r.getInput(), resultRank(r)),
                                  trialType(r.getType())));
          return success();
        })
        .Case<TransposeOp>([&](TransposeOp t) {
          SmallVector<int64_t> perm = {0};
          for (int64_t p : t.getPerm())
            perm.push_back(p + 1);
          defineOp(t, g().transpose(lift(t.getInput()), perm));
          return success();
        })
        .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
            [&](Operation *r) { return fuseReduction(r); })
        .Case<SoftmaxOp>([&](SoftmaxOp s) {
          int64_t axis = normalizeAxis(s.getAxis(), rankOf(s.getInput()));
          defineOp(s, g().softmax(lift(s.getInput()),
                              o.plantWrongRule ? axis : axis + 1));
          return success();
        })
        .Case<PadOp, SliceOp, ConcatOp, SplitOp>(
            [&](Operation *m) { return fuseMovement(m); })
        .Case<GatherOp>([&](GatherOp gather) {
          return fuseIndexed(gather, gather.getIndices(), gather.getAxis(),
                             rankOf(gather.getData()));
        })
        .Case<ScatterAddOp>([&](ScatterAddOp s) {
          return fuseIndexed(s, s.getIndices(), s.getAxis(),
                             rankOf(s.getUpdates()));
        })
        // Each element of dimension 0 (the batch of NCHW pooling, the output
        // channel of a filter) is computed on its own: trials fold into it.
        .Case<MaxPoolOp, MaxPoolGradOp, AvgPoolOp, GlobalAvgPoolOp,
              EnlargeOp>([&](Operation *p) { return foldIntoDim0(p); })
        .Case<ConvOp>([&](ConvOp c) { return fuseConv(c); })
        .Case<BatchNormOp>([&](BatchNormOp bn) { return fuseBatchNorm(bn); })
        .Case<LayerNormOp>([&](LayerNormOp ln) { return fuseLayerNorm(ln); })
        .Case<SoftmaxCrossEntropyOp>(
            [&](SoftmaxCrossEntropyOp ce) { return fuseCrossEntropy(ce); })
        .Case<MseLossOp>([&](MseLossOp m) { return fuseMse(m); })
        .Default([&](Operation *other) {
          return noFusedForm(other, "no rule for this op");
        });
  }

  LogicalResult noFusedForm(Operation *op, StringRef why) {
    return op->emitOpError("has no fused form for ")
           << o.trials << " trials (" << why
           << "); it has an operand that differs per trial";
  }

  GradBuilder &g() { return *builder; }

  // ----- Values -----

  int64_t rankOf(Value v) { return typeOf(v).getRank(); }
  int64_t resultRank(Operation *op) { return rankOf(op->getResult(0)); }

  RankedTensorType trialType(Type t) { return withTrials(t, o.trials); }
  SmallVector<int64_t> trialShape(Operation *op) {
    return llvm::to_vector(trialType(op->getResult(0).getType()).getShape());
  }

  /// The fused value of `v` with its trial dimension (a shared value is
  /// broadcast to every trial).
  Value lift(Value v) {
    Value m = map.lookup(v);
    if (perTrial.contains(v))
      return m;
    return g().broadcastTo(m, trialType(v.getType()));
  }

  /// The fused value of `v` as an operand of a numpy-broadcasting op of
  /// result rank `rank`: per trial [N, 1, ..., 1, shape] (rank + 1), so that
  /// the trial dimension leads; a shared value as it is.
  Value aligned(Value v, int64_t rank) {
    Value m = map.lookup(v);
    if (!perTrial.contains(v))
      return m;
    SmallVector<int64_t> shape = {o.trials};
    shape.append(rank - rankOf(v), 1);
    llvm::append_range(shape, typeOf(v).getShape());
    return g().reshape(m, shape);
  }

  /// `op` computed with `operands`, `results` and its attributes overridden
  /// by `attrs`.
  Operation *rebuild(Operation *op, ValueRange operands, TypeRange results,
                     ArrayRef<NamedAttribute> attrs = {}) {
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(results);
    NamedAttrList list(op->getAttrs());
    for (const NamedAttribute &a : attrs)
      list.set(a.getName(), a.getValue());
    state.addAttributes(list);
    return b.create(state);
  }

  void define(Value original, Value fusedValue) {
    map.map(original, fusedValue);
    perTrial.insert(original);
  }
  void defineOp(Operation *original, Value fusedValue) {
    define(original->getResult(0), fusedValue);
  }
  void defineAll(Operation *original, Operation *fusedOp) {
    for (auto [from, to] :
         llvm::zip(original->getResults(), fusedOp->getResults()))
      define(from, to);
  }

  SmallVector<Type> trialResultTypes(Operation *op) {
    SmallVector<Type> types;
    for (Type t : op->getResultTypes())
      types.push_back(trialType(t));
    return types;
  }

  // ----- Rules -----

  /// Elementwise ops and matmul (batch dimensions broadcast as numpy's):
  /// a product with per-trial operands becomes a batched product.
  LogicalResult fuseBroadcasting(Operation *op) {
    int64_t rank = resultRank(op);
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(aligned(v, rank));
    defineAll(op, rebuild(op, operands, trialResultTypes(op)));
    return success();
  }

  LogicalResult fuseReduction(Operation *op) {
    Value input = op->getOperand(0);
    SmallVector<int64_t> axes;
    for (int64_t a : cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef())
      axes.push_back(normalizeAxis(a, rankOf(input)) + 1);
    defineAll(op, rebuild(op, {lift(input)}, trialResultTypes(op),
                          {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes))}));
    return success();
  }

  /// Pad, slice, concat, split: the trial dimension is one more dimension
  /// that they leave whole.
  LogicalResult fuseMovement(Operation *op) {
    auto prepend = [&](StringRef name, int64_t first) {
      SmallVector<int64_t> v = {first};
      llvm::append_range(
          v, cast<DenseI64ArrayAttr>(op->getAttr(name)).asArrayRef());
      return b.getNamedAttr(name, b.getDenseI64ArrayAttr(v));
    };
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(lift(v));
    SmallVector<NamedAttribute> attrs;
    int64_t rank = rankOf(op->getOperand(0));
    if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
      attrs.push_back(b.getNamedAttr(
          "axis", b.getI64IntegerAttr(normalizeAxis(axis.getInt(), rank) + 1)));
    if (isa<PadOp>(op))
      attrs.append({prepend("low", 0), prepend("high", 0)});
    if (isa<SliceOp>(op)) {
      attrs.append({prepend("starts", 0), prepend("limits", o.trials)});
      if (op->getAttr("strides"))
        attrs.push_back(prepend("strides", 1));
    }
    defineAll(op, rebuild(op, operands, trialResultTypes(op), attrs));
    return success();
  }

  /// Gather and scatter_add with per-trial data and shared indices.
  LogicalResult fuseIndexed(Operation *op, Value indices, int64_t axis,
                            int64_t rank) {
    if (perTrial.contains(indices))
      return noFusedForm(op, "its indices differ per trial");
    SmallVector<Value> operands = {lift(op->getOperand(0)), map.lookup(indices)};
    defineAll(op, rebuild(op, operands, trialResultTypes(op),
                          {b.getNamedAttr("axis", b.getI64IntegerAttr(
                                                      normalizeAxis(axis, rank) +
                                                      1))}));
    return success();
  }

  /// [N, d0, ...] as [N * d0, ...], the op, and back.
  LogicalResult foldIntoDim0(Operation *op) {
    auto merge = [&](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> merged(shape.drop_front());
      merged[0] *= o.trials;
      return merged;
    };
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(
          g().reshape(lift(v), merge(trialType(v.getType()).getShape())));
    auto resultType = trialType(op->getResult(0).getType());
    Type merged = RankedTensorType::get(merge(resultType.getShape()),
                                        resultType.getElementType());
    Operation *folded = rebuild(op, operands, {merged});
    defineOp(op, g().reshape(folded->getResult(0), resultType.getShape()));
    return success();
  }

  /// [N, B, C, ...] as [B, N * C, ...] (trials folded into channels).
  Value trialsIntoChannels(Value v) {
    auto shape = typeOf(v).getShape();
    SmallVector<int64_t> perm = {1, 0};
    for (int64_t d = 2; d < (int64_t)shape.size(); ++d)
      perm.push_back(d);
    SmallVector<int64_t> merged = {shape[1], shape[0] * shape[2]};
    llvm::append_range(merged, shape.drop_front(3));
    return g().reshape(g().transpose(v, perm), merged);
  }
  /// The inverse of trialsIntoChannels for a result of type `type` [N, B, ...].
  Value channelsIntoTrials(Value v, RankedTensorType type) {
    auto shape = type.getShape();
    SmallVector<int64_t> split = {shape[1], shape[0]};
    llvm::append_range(split, shape.drop_front(2));
    SmallVector<int64_t> perm = {1, 0};
    for (int64_t d = 2; d < (int64_t)shape.size(); ++d)
      perm.push_back(d);
    return g().transpose(g().reshape(v, split), perm);
  }
  /// [N, ...] as [N * shape[0], ...].
  Value flattenTrials(Value v) {
    auto shape = typeOf(v).getShape();
    SmallVector<int64_t> merged(shape.drop_front());
    merged[0] *= shape[0];
    return g().reshape(v, merged);
  }

  /// A convolution per trial is one group of a grouped convolution with the
  /// trials folded into the channels: groups * N groups.
  LogicalResult fuseConv(ConvOp c) {
    SmallVector<Value> operands = {trialsIntoChannels(lift(c.getInput())),
                                   flattenTrials(lift(c.getFilter()))};
    if (c.getBias())
      operands.push_back(flattenTrials(lift(c.getBias())));
    auto resultType = trialType(c.getType());
    auto shape = resultType.getShape();
    SmallVector<int64_t> merged = {shape[1], shape[0] * shape[2], shape[3],
                                   shape[4]};
    Operation *conv = rebuild(
        c, operands,
        {RankedTensorType::get(merged, resultType.getElementType())},
        {b.getNamedAttr("groups",
                        b.getI64IntegerAttr(c.getGroups() * o.trials))});
    defineOp(c, channelsIntoTrials(conv->getResult(0), resultType));
    return success();
  }

  /// Inference batchnorm: per channel, so trials fold into the channels.
  LogicalResult fuseBatchNorm(BatchNormOp bn) {
    SmallVector<Value> operands = {trialsIntoChannels(lift(bn.getInput()))};
    for (Value p : bn->getOperands().drop_front())
      operands.push_back(flattenTrials(lift(p)));
    auto resultType = trialType(bn.getType());
    Operation *norm = rebuild(bn, operands, {operands[0].getType()});
    defineOp(bn, channelsIntoTrials(norm->getResult(0), resultType));
    return success();
  }

  /// Normalised per trial over the same trailing dimensions; a per-trial
  /// scale or bias is applied after a normalisation with 1 and 0.
  LogicalResult fuseLayerNorm(LayerNormOp ln) {
    int64_t rank = rankOf(ln.getInput());
    auto axis = b.getNamedAttr(
        "axis", b.getI64IntegerAttr(normalizeAxis(ln.getAxis(), rank) + 1));
    Value x = lift(ln.getInput());
    if (!perTrial.contains(ln.getScale()) && !perTrial.contains(ln.getBias())) {
      defineOp(ln, rebuild(ln, {x, map.lookup(ln.getScale()),
                              map.lookup(ln.getBias())},
                         {x.getType()}, {axis})
                     ->getResult(0));
      return success();
    }
    auto paramType = typeOf(ln.getScale());
    Value normalized =
        rebuild(ln, {x, g().splat(1, paramType), g().splat(0, paramType)},
                {x.getType()}, {axis})
            ->getResult(0);
    defineOp(ln, g().add(g().mul(normalized, aligned(ln.getScale(), rank)),
                     aligned(ln.getBias(), rank)));
    return success();
  }

  /// mean over the batch of logsumexp(logits) - logits[label], per trial.
  LogicalResult fuseCrossEntropy(SoftmaxCrossEntropyOp ce) {
    Value x = lift(ce.getLogits()); // [N, B, C]
    Value labels = map.lookup(ce.getLabels()); // [B], or [N, B] per trial
    auto type = typeOf(x);
    Value max = ReduceMaxOp::create(b, ce.getLoc(), x, ArrayRef<int64_t>{2},
                                    true);
    Value lse = g().add(g().log(g().reduceSum(g().exp(g().sub(x, max)), {2}, true)), max);
    Value picked = g().reduceSum(
        g().mul(x, g().oneHot(labels, type.getDimSize(2), type.getElementType())),
        {2}, true);
    defineOp(ce, g().reduceMean(g().sub(lse, picked), {1, 2}, false));
    return success();
  }

  /// mean((lhs - rhs)^2) per trial.
  LogicalResult fuseMse(MseLossOp m) {
    int64_t rank = rankOf(m.getLhs());
    Value d = g().sub(aligned(m.getLhs(), rank), aligned(m.getRhs(), rank));
    d = g().broadcastTo(d, trialType(m.getLhs().getType()));
    Value squared = g().mul(d, d);
    if (rank == 0) {
      defineOp(m, squared);
      return success();
    }
    SmallVector<int64_t> axes;
    for (int64_t a = 1; a <= rank; ++a)
      axes.push_back(a);
    defineOp(m, g().reduceMean(squared, axes, false));
    return success();
  }

  func::FuncOp fn, fused;
  const FuseTrialsOptions &o;
  OpBuilder b;
  std::optional<GradBuilder> builder; // at the op being fused
  IRMapping map;
  DenseSet<Value> perTrial;
};

} // namespace

FailureOr<func::FuncOp> tg::fuseTrials(func::FuncOp fn,
                                       const FuseTrialsOptions &options) {
  if (options.trials < 1)
    return fn.emitError("--tg-fuse-trials: trials must be at least 1, not ")
           << options.trials;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return fn.emitError("--tg-fuse-trials needs a function of one block");
  auto module = fn->getParentOfType<ModuleOp>();
  std::string name =
      options.name.empty() ? (fn.getName() + "_trials").str() : options.name;
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return fn.emitError("the module already has a function named '")
           << name << "'";
  // The original, with its weights as parameter arguments.
  auto source = cast<func::FuncOp>(fn->clone());
  autodiff::weightsToArguments(source);

  SmallVector<Type> argTypes;
  for (BlockArgument arg : source.getArguments())
    argTypes.push_back(
        isPerTrialArgument(source, arg.getArgNumber(), options.perTrialInputs)
            ? withTrials(arg.getType(), options.trials)
            : arg.getType());
  SmallVector<Type> resultTypes;
  for (Type t : source.getResultTypes())
    resultTypes.push_back(withTrials(t, options.trials));
  OpBuilder b(fn.getContext());
  auto fused = func::FuncOp::create(
      b, fn.getLoc(), name, b.getFunctionType(argTypes, resultTypes));
  if (ArrayAttr args = source.getAllArgAttrs())
    fused.setAllArgAttrs(args);
  if (ArrayAttr results = source.getAllResultAttrs())
    fused.setAllResultAttrs(results);
  fused.addEntryBlock();
  LogicalResult ok = TrialFuser(source, fused, options).run();
  source.erase();
  if (failed(ok)) {
    fused.erase();
    return failure();
  }
  if (module) {
    SymbolTable table(module);
    table.insert(fused, std::next(Block::iterator(fn)));
  }
  return fused;
}

namespace {

struct FuseTrialsPass : public tg::impl::TGFuseTrialsBase<FuseTrialsPass> {
  using TGFuseTrialsBase::TGFuseTrialsBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> fn =
        autodiff::findFunction(getOperation(), function, "tg-fuse-trials");
    if (failed(fn))
      return signalPassFailure();
    FuseTrialsOptions o;
    o.trials = trials;
    o.perTrialInputs = perTrialInputs;
    o.name = name;
    o.plantWrongRule = plantWrongRule;
    if (failed(fuseTrials(*fn, o)))
      signalPassFailure();
  }
};

} // namespace
