//===- Reductions.cpp - VJPs of reductions, normalisations and losses -----===//
//
// Part of Loom. reduce_max shares the gradient equally among tied maxima
// (as torch.amax). layernorm and batchnorm recompute their statistics from
// the input (nothing is saved by the forward ops); batchnorm here is the
// inference form, with mean and variance as operands: --tg-autodiff rewrites
// it into batch statistics first unless told to keep it (docs/Training.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradBuilder.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

namespace {

SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a < 0 ? a + rank : a);
  llvm::sort(out);
  return out;
}

/// The reduction's result gradient with the reduced dimensions kept (1).
Value keptShape(GradBuilder &g, Value v, RankedTensorType inType,
                ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(inType.getShape());
  for (int64_t a : axes)
    shape[a] = 1;
  return g.reshape(v, shape);
}

template <class OpT>
VJP reduceVJP(OpT op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inType = GradBuilder::typeOf(op.getInput());
  auto axes = normalizedAxes(op.getAxes(), inType.getRank());
  Value dy = keptShape(g, grads[0], inType, axes);
  if constexpr (std::is_same_v<OpT, ReduceSumOp>) {
    out[0] = g.broadcastTo(dy, inType);
  } else if constexpr (std::is_same_v<OpT, ReduceMeanOp>) {
    double count = 1;
    for (int64_t a : axes)
      count *= inType.getDimSize(a);
    out[0] = g.broadcastTo(g.scale(dy, 1.0 / count), inType);
  } else {
    Value y = keptShape(g, op.getOutput(), inType, axes);
    Value hit = g.toFloat(g.equal(op.getInput(), y), inType.getElementType());
    Value ties = g.reduceSum(hit, axes, /*keepdims=*/true);
    out[0] = g.mul(hit, g.div(dy, ties));
  }
  return out;
}

VJP softmaxVJP(SoftmaxOp op, GradBuilder &g, ValueRange grads,
               ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  Value y = op.getOutput(), dy = grads[0];
  Value dot = g.reduceSum(g.mul(dy, y), {int64_t(op.getAxis())}, /*keepdims=*/true);
  out[0] = g.mul(y, g.sub(dy, dot));
  return out;
}

VJP layernormVJP(LayerNormOp op, GradBuilder &g, ValueRange grads,
                 ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value x = op.getInput(), dy = grads[0];
  auto type = GradBuilder::typeOf(x);
  int64_t rank = type.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  Value mean = g.reduceMean(x, axes, true);
  Value centred = g.sub(x, mean);
  Value var = g.reduceMean(g.mul(centred, centred), axes, true);
  Value rstd = g.rsqrt(g.add(var, g.scalarLike(
                                      op.getEpsilon().convertToDouble(), x)));
  Value xhat = g.mul(centred, rstd);
  if (needed[0]) {
    Value gs = g.mul(dy, op.getScale());
    Value meanG = g.reduceMean(gs, axes, true);
    Value meanGX = g.reduceMean(g.mul(gs, xhat), axes, true);
    out[0] = g.mul(rstd, g.sub(g.sub(gs, meanG), g.mul(xhat, meanGX)));
  }
  if (needed[1])
    out[1] = g.sumTo(g.mul(dy, xhat), GradBuilder::typeOf(op.getScale()));
  if (needed[2])
    out[2] = g.sumTo(dy, GradBuilder::typeOf(op.getBias()));
  return out;
}

VJP batchnormVJP(BatchNormOp op, GradBuilder &g, ValueRange grads,
                 ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value x = op.getInput(), dy = grads[0];
  auto type = GradBuilder::typeOf(x);
  int64_t c = type.getDimSize(1);
  SmallVector<int64_t> perChannel(type.getRank(), 1), axes = {0};
  perChannel[1] = c;
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  auto channel = [&](Value v) { return g.reshape(v, perChannel); };
  Value rstd = g.rsqrt(g.add(op.getVariance(),
                             g.scalarLike(op.getEpsilon().convertToDouble(),
                                          x)));
  Value scaled = g.mul(op.getScale(), rstd); // [C]
  Value centred = g.sub(x, channel(op.getMean()));
  Value sumDy = needed[2] || needed[3]
                    ? g.reduceSum(dy, axes, /*keepdims=*/false)
                    : Value();
  Value sumDyX = needed[1] || needed[4]
                     ? g.reduceSum(g.mul(dy, centred), axes, false)
                     : Value();
  if (needed[0])
    out[0] = g.mul(dy, channel(scaled));
  if (needed[1])
    out[1] = g.mul(sumDyX, rstd);
  if (needed[2])
    out[2] = sumDy;
  if (needed[3])
    out[3] = g.neg(g.mul(sumDy, scaled));
  if (needed[4])
    out[4] = g.mul(g.mul(sumDyX, g.scale(scaled, -0.5)), g.mul(rstd, rstd));
  return out;
}

VJP crossEntropyVJP(SoftmaxCrossEntropyOp op, GradBuilder &g, ValueRange grads,
                    ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  Value logits = op->getOperand(0), labels = op->getOperand(1);
  auto type = GradBuilder::typeOf(logits);
  int64_t n = type.getDimSize(0), classes = type.getDimSize(1);
  Value oneHot = g.oneHot(labels, classes, type.getElementType());
  Value diff = g.sub(g.softmax(logits, 1), oneHot);
  out[0] = g.mul(diff, g.scale(grads[0], 1.0 / double(n)));
  return out;
}


VJP mseVJP(MseLossOp op, GradBuilder &g, ValueRange grads,
           ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value a = op->getOperand(0), b = op->getOperand(1);
  double count = GradBuilder::typeOf(a).getNumElements();
  Value d = g.mul(g.sub(a, b), g.scale(grads[0], 2.0 / count));
  if (needed[0])
    out[0] = d;
  if (needed[1])
    out[1] = g.neg(d);
  return out;
}


} // namespace

void loom::tg::autodiff::attachReductionGradients(MLIRContext *context) {
  attachGradient<ReduceSumOp, reduceVJP<ReduceSumOp>>(context);
  attachGradient<ReduceMeanOp, reduceVJP<ReduceMeanOp>>(context);
  attachGradient<ReduceMaxOp, reduceVJP<ReduceMaxOp>>(context);
  attachGradient<SoftmaxOp, softmaxVJP>(context);
  attachGradient<LayerNormOp, layernormVJP>(context);
  attachGradient<BatchNormOp, batchnormVJP>(context);
  attachGradient<SoftmaxCrossEntropyOp, crossEntropyVJP>(context);
  attachGradient<MseLossOp, mseVJP>(context);

}
