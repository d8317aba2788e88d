//===- Movement.cpp - VJPs of the data-movement tg ops --------------------===//
//
// Part of Loom. Each adjoint moves the gradient back where the element came
// from: the inverse permutation, the original shape, the complementary
// slice or padding, the sum over broadcast dimensions, and scatter_add for
// gather (and gather for scatter_add).
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradBuilder.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

namespace {

int64_t normalize(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

VJP transposeVJP(TransposeOp op, GradBuilder &g, ValueRange grads,
                 ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  out[0] = g.transpose(grads[0], inverse);
  return out;
}

VJP reshapeVJP(ReshapeOp op, GradBuilder &g, ValueRange grads,
               ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = g.reshape(grads[0], GradBuilder::typeOf(op.getInput()).getShape());
  return out;
}

/// The identity: the gradient passes through; the length has none.
VJP boundVJP(BoundOp op, GradBuilder &, ValueRange grads,
             ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = grads[0];
  return out;
}

VJP broadcastVJP(BroadcastToOp op, GradBuilder &g, ValueRange grads,
                 ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = g.sumTo(grads[0], GradBuilder::typeOf(op.getInput()));
  return out;
}

VJP concatVJP(ConcatOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  auto shape = op.getType().getShape();
  int64_t axis = normalize(op.getAxis(), shape.size()), offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    int64_t size = GradBuilder::typeOf(input).getDimSize(axis);
    if (needed[i]) {
      SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
      starts[axis] = offset;
      limits[axis] = offset + size;
      out[i] = g.slice(grads[0], starts, limits);
    }
    offset += size;
  }
  return out;
}

VJP splitVJP(SplitOp op, GradBuilder &g, ValueRange grads,
             ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = ConcatOp::create(g.builder(), op.getLoc(), grads,
                              g.builder().getI64IntegerAttr(op.getAxis()));
  return out;
}

VJP sliceVJP(SliceOp op, GradBuilder &g, ValueRange grads,
             ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inShape = GradBuilder::typeOf(op.getInput()).getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> strides(rank, 1);
  if (auto s = op.getStrides())
    strides.assign(s->begin(), s->end());
  // Spread by the strides, then place at the starts; the spread's tail
  // beyond the input is cropped.
  Value spread = g.interleaveZeros(grads[0], strides);
  auto spreadShape = GradBuilder::typeOf(spread).getShape();
  SmallVector<int64_t> low(op.getStarts()), high(rank);
  for (int64_t d = 0; d < rank; ++d)
    high[d] = inShape[d] - low[d] - spreadShape[d];
  out[0] = g.padOrCrop(spread, low, high);
  return out;
}

VJP padVJP(PadOp op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inShape = GradBuilder::typeOf(op.getInput()).getShape();
  SmallVector<int64_t> starts(op.getLow()), limits;
  for (size_t d = 0; d < inShape.size(); ++d)
    limits.push_back(starts[d] + inShape[d]);
  out[0] = g.slice(grads[0], starts, limits);
  return out;
}

VJP enlargeVJP(EnlargeOp op, GradBuilder &g, ValueRange grads,
               ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inShape = GradBuilder::typeOf(op.getInput()).getShape();
  auto outShape = op.getType().getShape();
  SmallVector<int64_t> starts(4, 0), limits(inShape);
  for (int d = 2; d < 4; ++d) {
    starts[d] = (outShape[d] - inShape[d]) / 2;
    limits[d] = starts[d] + inShape[d];
  }
  out[0] = g.slice(grads[0], starts, limits);
  return out;
}

VJP gatherVJP(GatherOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto dataType = GradBuilder::typeOf(op.getData());
  int64_t axis = normalize(op.getAxis(), dataType.getRank());
  out[0] = ScatterAddOp::create(g.builder(), op.getLoc(), grads[0],
                                op.getIndices(), axis,
                                dataType.getDimSize(axis));
  return out;
}

VJP scatterAddVJP(ScatterAddOp op, GradBuilder &g, ValueRange grads,
                  ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = GatherOp::create(g.builder(), op.getLoc(), grads[0],
                              op->getOperand(1),
                              g.builder().getI64IntegerAttr(op.getAxis()));
  return out;
}

} // namespace

void loom::tg::autodiff::attachMovementGradients(MLIRContext *context) {
  attachGradient<TransposeOp, transposeVJP>(context);
  attachGradient<ReshapeOp, reshapeVJP>(context);
  attachGradient<BoundOp, boundVJP>(context);
  attachGradient<BroadcastToOp, broadcastVJP>(context);
  attachGradient<ConcatOp, concatVJP>(context);
  attachGradient<SplitOp, splitVJP>(context);
  attachGradient<SliceOp, sliceVJP>(context);
  attachGradient<PadOp, padVJP>(context);
  attachGradient<EnlargeOp, enlargeVJP>(context);
  attachGradient<GatherOp, gatherVJP>(context);
  attachGradient<ScatterAddOp, scatterAddVJP>(context);
}
