//===- ReductionOps.cpp - Facts of reductions and normalisations ----------===//
//
// Part of Loom. reduce_sum, reduce_mean, reduce_max, softmax, the losses
// softmax_cross_entropy and mse_loss, layernorm and batchnorm.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Evaluates reduction \p op (its axes sorted and normalised).
template <typename ReduceOp>
static LogicalResult evaluateReduce(ReduceOp op, interp::ReduceKind kind,
                                    interp::EvalFrame &frame) {
  int64_t rank = op.getInput().getType().getRank();
  std::vector<int64_t> axes;
  for (int64_t a : op.getAxes())
    axes.push_back(axisOf(a, rank));
  llvm::sort(axes);
  return frame.visit([&](auto &f) {
    return f.push(interp::reduce(kind, f.in(0), axes, op.getKeepdims()));
  });
}

/// One operation per input element.
template <typename ReduceOp> static OpWork reduceWork(ReduceOp op) {
  OpWork work = streamingWork(op, 0);
  work.flops = numElementsOf(op.getInput().getType());
  return work;
}

/// ONNX opset 17 takes ReduceSum's axes as an input and the others' as an
/// attribute.
template <typename ReduceOp>
static LogicalResult exportReduce(ReduceOp op, ONNXEmitter &e, StringRef opType,
                                  bool axesAsInput) {
  SmallVector<std::string> ins{e.input(0)};
  if (axesAsInput)
    ins.push_back(e.constI64(op.getAxes(), "_axes"));
  auto node = e.node(opType, ins, {e.output()});
  if (!axesAsInput)
    node.attr("axes", op.getAxes());
  node.attr("keepdims", int64_t(op.getKeepdims()));
  return success();
}

LogicalResult ReduceSumOp::evaluate(interp::EvalFrame &frame) {
  return evaluateReduce(*this, interp::ReduceKind::Sum, frame);
}
OpWork ReduceSumOp::getWork() { return reduceWork(*this); }
LogicalResult ReduceSumOp::exportONNX(ONNXEmitter &e) {
  return exportReduce(*this, e, "ReduceSum", /*axesAsInput=*/true);
}

namespace {
/// reduce_mean over every spatial axis (2 .. rank-1) of a 4-D or 5-D tensor
/// -> global_avgpool, reshaped to N x C without keepdims. torchvision's
/// `x.mean([2, 3])` heads (MNASNet, ShuffleNet-V2) export this reduction; as
/// a pool the backends read the convolutions' layout (NHWC, nChw16c)
/// instead of reordering the last feature map to NCHW first. A mean that
/// keeps its dimensions changes only where convolutions or reshapes read
/// it (squeeze-and-excitation): a normalisation's statistics (instance
/// norm: broadcast back against the tensor) stay reductions, fused with
/// their elementwise neighbours. 3-D tensors stay too: [batch, sequence,
/// features] has the same shape as [N, C, length].
struct MeanOverSpatialAsPool : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!in || in.getRank() < 4 || in.getRank() > 5 || !in.hasStaticShape())
      return failure();
    if (op.getKeepdims() &&
        !llvm::all_of(op->getUsers(), llvm::IsaPred<ConvOp, ReshapeOp>))
      return failure();
    int64_t rank = in.getRank();
    SmallVector<int64_t> axes;
    for (int64_t a : op.getAxes())
      axes.push_back(axisOf(a, rank));
    llvm::sort(axes);
    if (!llvm::equal(axes, llvm::seq<int64_t>(2, rank)))
      return failure();
    SmallVector<int64_t> pooledShape(in.getShape().take_front(2));
    pooledShape.append(rank - 2, 1);
    Value pooled = GlobalAvgPoolOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(pooledShape, in.getElementType()),
        op.getInput());
    if (pooled.getType() != op.getType())
      pooled = ReshapeOp::create(rewriter, op.getLoc(), op.getType(), pooled);
    rewriter.replaceOp(op, pooled);
    return success();
  }
};
} // namespace

void ReduceMeanOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<MeanOverSpatialAsPool>(context);
}

LogicalResult ReduceMeanOp::evaluate(interp::EvalFrame &frame) {
  return evaluateReduce(*this, interp::ReduceKind::Mean, frame);
}
OpWork ReduceMeanOp::getWork() { return reduceWork(*this); }
LogicalResult ReduceMeanOp::exportONNX(ONNXEmitter &e) {
  return exportReduce(*this, e, "ReduceMean", /*axesAsInput=*/false);
}

LogicalResult ReduceMaxOp::evaluate(interp::EvalFrame &frame) {
  return evaluateReduce(*this, interp::ReduceKind::Max, frame);
}
OpWork ReduceMaxOp::getWork() { return reduceWork(*this); }
LogicalResult ReduceMaxOp::exportONNX(ONNXEmitter &e) {
  return exportReduce(*this, e, "ReduceMax", /*axesAsInput=*/false);
}

//===----------------------------------------------------------------------===//
// tg.softmax
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferSoftmax(location, adaptor.getInput().getType(), adaptor.getAxis(),
                      inferred);
}

LogicalResult SoftmaxOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getType().getRank());
  return frame.visit(
      [&](auto &f) { return f.push(interp::softmax(f.in(0), axis)); });
}

// exp, then max, subtract, sum and divide.
OpWork SoftmaxOp::getWork() {
  return streamingWork(*this, kTranscendentalFlops + 4);
}

LogicalResult SoftmaxOp::exportONNX(ONNXEmitter &e) {
  e.node("Softmax", {e.input(0)}, {e.output()})
      .attr("axis", int64_t(getAxis()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.softmax_cross_entropy
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxCrossEntropy(location, adaptor.getLogits().getType(),
                                  adaptor.getLabels().getType(), inferred);
}

LogicalResult SoftmaxCrossEntropyOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) -> LogicalResult {
    auto r = interp::softmaxCrossEntropy(f.in(0), f.in(1));
    if (!r)
      return emitOpError() << llvm::toString(r.takeError());
    return f.push(std::move(*r));
  });
}

// Per logit: max, subtract, exp and sum; per row a log.
OpWork SoftmaxCrossEntropyOp::getWork() {
  OpWork work = streamingWork(*this, 0);
  work.flops =
      (kTranscendentalFlops + 3) * numElementsOf(getLogits().getType());
  return work;
}

LogicalResult SoftmaxCrossEntropyOp::exportONNX(ONNXEmitter &e) {
  e.node("SoftmaxCrossEntropyLoss", {e.input(0), e.input(1)}, {e.output()})
      .attr("reduction", StringRef("mean"));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.mse_loss
//===----------------------------------------------------------------------===//

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferMseLoss(location, adaptor.getLhs().getType(),
                      adaptor.getRhs().getType(), inferred);
}

LogicalResult MseLossOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::mseLoss(f.in(0), f.in(1))); });
}

// Subtract, square and sum per element.
OpWork MseLossOp::getWork() {
  OpWork work = streamingWork(*this, 0);
  work.flops = 3 * numElementsOf(getLhs().getType());
  return work;
}

LogicalResult MseLossOp::exportONNX(ONNXEmitter &e) {
  // ReduceMean without axes (opset 17) reduces over every dimension.
  std::string diff = e.fresh("_diff"), square = e.fresh("_square");
  e.node("Sub", {e.input(0), e.input(1)}, {diff});
  e.node("Mul", {diff, diff}, {square});
  e.node("ReduceMean", {square}, {e.output()}).attr("keepdims", int64_t(0));
  return success();
}

/// ONNX's default epsilon (1e-5) is left implicit.
static void addONNXEpsilon(ONNXNode node, double epsilon) {
  if (static_cast<float>(epsilon) != 1e-5f)
    node.attr("epsilon", epsilon);
}

//===----------------------------------------------------------------------===//
// tg.layernorm
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferLayerNorm(
      location, adaptor.getInput().getType(), adaptor.getScale().getType(),
      adaptor.getBias().getType(), adaptor.getAxis(), inferred);
}

LogicalResult LayerNormOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getType().getRank());
  double epsilon = getEpsilon().convertToDouble();
  return frame.visit([&](auto &f) {
    return f.push(interp::layerNorm(f.in(0), f.in(1), f.in(2), axis, epsilon));
  });
}

// Mean, variance, normalise, scale and shift.
OpWork LayerNormOp::getWork() { return streamingWork(*this, 8); }

LogicalResult LayerNormOp::exportONNX(ONNXEmitter &e) {
  addONNXEpsilon(e.node("LayerNormalization",
                        {e.input(0), e.input(1), e.input(2)}, {e.output()})
                     .attr("axis", int64_t(getAxis())),
                 getEpsilon().convertToDouble());
  return success();
}

//===----------------------------------------------------------------------===//
// tg.batchnorm
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferBatchNorm(
      location, adaptor.getInput().getType(), adaptor.getScale().getType(),
      adaptor.getBias().getType(), adaptor.getMean().getType(),
      adaptor.getVariance().getType(), inferred);
}

LogicalResult BatchNormOp::evaluate(interp::EvalFrame &frame) {
  double epsilon = getEpsilon().convertToDouble();
  return frame.visit([&](auto &f) {
    return f.push(interp::batchNorm(f.in(0), f.in(1), f.in(2), f.in(3), f.in(4),
                                    epsilon));
  });
}

// A multiply-add per element once the per-channel factors are known.
OpWork BatchNormOp::getWork() { return streamingWork(*this, 2); }

LogicalResult BatchNormOp::exportONNX(ONNXEmitter &e) {
  addONNXEpsilon(
      e.node("BatchNormalization",
             {e.input(0), e.input(1), e.input(2), e.input(3), e.input(4)},
             {e.output()}),
      getEpsilon().convertToDouble());
  return success();
}
