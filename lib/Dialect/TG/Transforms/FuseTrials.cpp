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
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
    // What a rule built that nothing reads (a convolution's unfolded result
    // when only its transpose was used).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(to)))
      if (isOpTriviallyDead(&op))
        op.erase();
    return success();
  }

private:
  LogicalResult fuseOp(Operation *op) {
    builder.emplace(b, op->getLoc());
    // Computed with its operand by an earlier rule (a filter gradient's
    // transpose, with its convolution per trial).
    if (op->getNumResults() == 1 && map.contains(op->getResult(0)))
      return success();
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
    if (op->hasTrait<Elementwise>() && keepsChannelsMerged(op))
      return fuseMergedElementwise(op);
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
          if (Value conv = channelsMerged.lookup(t.getInput());
              conv && t.getPerm() == ArrayRef<int64_t>{1, 0, 2, 3}) {
            defineOp(t, transposeMergedChannels(conv, t.getType()));
            return success();
          }
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
        .Case<MaxPoolOp, MaxPoolGradOp, AvgPoolOp, GlobalAvgPoolOp>(
            [&](Operation *p) {
              return keepsChannelsMerged(p) ? fusePerChannel(p)
                                            : foldIntoDim0(p);
            })
        .Case<EnlargeOp>([&](EnlargeOp e) { return foldIntoDim0(e); })
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
    Value m = mapped(v);
    if (perTrial.contains(v))
      return m;
    return g().broadcastTo(m, trialType(v.getType()));
  }

  /// The fused value of `v` ([N, ...] when per trial): a value held only
  /// with the trials in its channels is unfolded here, once.
  Value mapped(Value v) {
    if (Value m = map.lookupOrNull(v))
      return m;
    Value m = channelsIntoTrials(channelsMerged.lookup(v),
                                 trialType(v.getType()));
    map.map(v, m);
    return m;
  }

  /// A per-trial NCHW value `v` with the trials in its channels, [B, N * C,
  /// ...] (folded here, once, if it is not held so).
  Value merged(Value v) {
    Value &m = channelsMerged[v];
    if (!m)
      m = trialsIntoChannels(lift(v));
    return m;
  }
  bool isMerged(Value v) { return channelsMerged.count(v); }
  /// `t` [B, C, ...] as [B, N * C, ...].
  RankedTensorType mergedType(Type t) {
    auto type = cast<RankedTensorType>(t);
    SmallVector<int64_t> shape(type.getShape());
    shape[1] *= o.trials;
    return RankedTensorType::get(shape, type.getElementType());
  }
  /// Defines `original` by its fused value with the trials in its channels;
  /// the [N, ...] form is made when an op needs it (mapped).
  void defineMerged(Value original, Value fusedValue) {
    channelsMerged[original] = fusedValue;
    perTrial.insert(original);
  }

  /// The fused value of `v` as an operand of a numpy-broadcasting op of
  /// result rank `rank`: per trial [N, 1, ..., 1, shape] (rank + 1), so that
  /// the trial dimension leads; a shared value as it is.
  Value aligned(Value v, int64_t rank) {
    Value m = mapped(v);
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

  /// Whether `op` (elementwise, or a pooling, which computes each channel
  /// on its own) reads a value held with the trials in its channels and can
  /// compute in that form: every per-trial operand of the result's NCHW
  /// shape, every shared one a scalar.
  bool keepsChannelsMerged(Operation *op) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    bool pooling = !op->hasTrait<Elementwise>();
    if (type.getRank() != 4 || llvm::none_of(op->getOperands(), [&](Value v) {
          return isMerged(v);
        }))
      return false;
    return llvm::all_of(op->getOperands(), [&](Value v) {
      if (!perTrial.contains(v))
        return !pooling && rankOf(v) == 0;
      return rankOf(v) == 4 && (pooling || typeOf(v).getShape() == type.getShape());
    });
  }

  /// An elementwise op on values with the trials in their channels (a
  /// convolution's result and what follows it): computed in that form.
  LogicalResult fuseMergedElementwise(Operation *op) {
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(perTrial.contains(v) ? merged(v) : map.lookup(v));
    SmallVector<Type> types;
    for (Type t : op->getResultTypes())
      types.push_back(mergedType(t));
    Operation *fusedOp = rebuild(op, operands, types);
    for (auto [from, to] : llvm::zip(op->getResults(), fusedOp->getResults()))
      defineMerged(from, to);
    return success();
  }

  /// A pooling (or its gradient) with the trials in the channels: each
  /// channel is pooled on its own.
  LogicalResult fusePerChannel(Operation *op) {
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(merged(v));
    Operation *pooled =
        rebuild(op, operands, {mergedType(op->getResult(0).getType())});
    defineMerged(op->getResult(0), pooled->getResult(0));
    return success();
  }

  LogicalResult fuseReduction(Operation *op) {
    Value input = op->getOperand(0);
    SmallVector<int64_t> axes;
    for (int64_t a : cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef())
      axes.push_back(normalizeAxis(a, rankOf(input)) + 1);
    // Over the batch but not the channels of a value with the trials in its
    // channels (a bias gradient): reduced in that form, the channels first
    // in what remains.
    if (isMerged(input) && llvm::is_contained(axes, 1) &&
        !llvm::is_contained(axes, 2)) {
      auto type = typeOf(op->getResult(0));
      SmallVector<int64_t> shape(type.getShape());
      bool keep = op->getAttrOfType<BoolAttr>("keepdims").getValue();
      shape[keep ? 1 : 0] *= o.trials;
      Value r = rebuild(op, {merged(input)},
                        {RankedTensorType::get(shape, type.getElementType())})
                    ->getResult(0);
      if (keep)
        defineMerged(op->getResult(0), r);
      else
        defineOp(op, g().reshape(r, trialShape(op)));
      return success();
    }
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
    Type foldedType = RankedTensorType::get(merge(resultType.getShape()),
                                            resultType.getElementType());
    Operation *folded = rebuild(op, operands, {foldedType});
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
  /// trials folded into the channels: groups * N groups. With a shared input
  /// and one group, the trials' filters are one filter of N times the
  /// output channels (the input is read once, not broadcast N times).
  /// Either way the result holds the trials in its channels, [B, N * O,
  /// ...], and is kept so (channelsMerged).
  LogicalResult fuseConv(ConvOp c) {
    if (rankOf(c.getInput()) != 4)
      return noFusedForm(c, "a 1-D or 3-D convolution (2-D only)");
    if (o.perTrialConvolutions)
      return fuseConvPerTrial(c);
    bool sharedInput =
        !perTrial.contains(c.getInput()) && c.getGroups() == 1;
    SmallVector<Value> operands = {sharedInput ? map.lookup(c.getInput())
                                               : merged(c.getInput()),
                                   flattenTrials(lift(c.getFilter()))};
    if (c.getBias())
      operands.push_back(flattenTrials(lift(c.getBias())));
    Operation *conv = rebuild(
        c, operands, {mergedType(c.getType())},
        {b.getNamedAttr("groups",
                        b.getI64IntegerAttr(
                            sharedInput ? 1 : c.getGroups() * o.trials))});
    defineMerged(c.getResult(), conv->getResult(0));
    return success();
  }

  /// Trial \p t's value of per-trial \p v: its slice of the [N, ...] form,
  /// contiguous (the trial dimension leads).
  Value trialSlice(Value v, int64_t t) {
    Value all = mapped(v);
    auto shape = typeOf(all).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
    starts[0] = t;
    limits[0] = t + 1;
    return g().reshape(g().slice(all, starts, limits), shape.drop_front());
  }

  /// per-trial-convolutions: the convolution as N dense ones, each on its
  /// trial's slices (a shared operand as it is), their results stacked
  /// into the [N, ...] form. A filter gradient's transpose [1, 0, 2, 3]
  /// (its sole user) is applied per trial too, so that each trial's
  /// convolution and transpose are the backend's filter-gradient step.
  LogicalResult fuseConvPerTrial(ConvOp c) {
    TransposeOp gradient;
    if (c->hasOneUse())
      gradient = dyn_cast<TransposeOp>(*c->user_begin());
    if (gradient && gradient.getPerm() != ArrayRef<int64_t>{1, 0, 2, 3})
      gradient = {};
    Value last = gradient ? gradient.getResult() : c.getResult();
    SmallVector<Value> pieces;
    for (int64_t t = 0; t < o.trials; ++t) {
      SmallVector<Value> operands;
      for (Value v : c->getOperands())
        operands.push_back(perTrial.contains(v) ? trialSlice(v, t)
                                                : map.lookup(v));
      Value r = rebuild(c, operands, {c.getType()})->getResult(0);
      if (gradient)
        r = g().transpose(r, {1, 0, 2, 3});
      SmallVector<int64_t> one = {1};
      llvm::append_range(one, typeOf(last).getShape());
      pieces.push_back(g().reshape(r, one));
    }
    Value stacked =
        pieces.size() == 1
            ? pieces.front()
            : ConcatOp::create(b, c.getLoc(), trialType(last.getType()),
                               pieces, b.getI64IntegerAttr(0))
                  .getResult();
    define(last, stacked);
    return success();
  }

  /// The transpose [1, 0, 2, 3] of each trial's convolution result, from
  /// the convolution's result with the trials in its channels (\p conv, [B,
  /// N * O, ...]): transposed as a whole to [N * O, B, ...], which is [N, O,
  /// B, ...]. A filter gradient (GradBuilder::conv2dFilterGrad) keeps the
  /// form its backend recognises: a convolution, then this transpose.
  Value transposeMergedChannels(Value conv, RankedTensorType perTrialType) {
    return g().reshape(g().transpose(conv, {1, 0, 2, 3}),
                       trialType(perTrialType).getShape());
  }

  /// Inference batchnorm: per channel, so trials fold into the channels.
  LogicalResult fuseBatchNorm(BatchNormOp bn) {
    SmallVector<Value> operands = {merged(bn.getInput())};
    for (Value p : bn->getOperands().drop_front())
      operands.push_back(flattenTrials(lift(p)));
    Operation *norm = rebuild(bn, operands, {operands[0].getType()});
    defineMerged(bn.getResult(), norm->getResult(0));
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
    Value labels = mapped(ce.getLabels()); // [B], or [N, B] per trial
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
  /// Per-trial NCHW values -> their fused value with the trials in the
  /// channels, [B, N * C, ...]: a convolution's result and the elementwise
  /// ops and poolings after it stay in that form (no copy between them);
  /// `map` gets the [N, B, C, ...] form when an op needs it.
  DenseMap<Value, Value> channelsMerged;
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
    o.perTrialConvolutions = perTrialConvolutions;
    o.name = name;
    o.plantWrongRule = plantWrongRule;
    if (failed(fuseTrials(*fn, o)))
      signalPassFailure();
  }
};

} // namespace
