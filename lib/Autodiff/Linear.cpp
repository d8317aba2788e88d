//===- Linear.cpp - VJPs of matmul, convolution and pooling ---------------===//
//
// Part of Loom. The convolution adjoints are convolutions (GradBuilder);
// average pooling is a depthwise convolution with a constant filter, so its
// adjoint is the same input adjoint; max pooling has its own op,
// tg.maxpool_grad (the first maximum of each window takes the gradient).
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradBuilder.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

namespace {

/// Swaps the last two dimensions.
Value transposeLast(GradBuilder &g, Value v) {
  int64_t rank = GradBuilder::typeOf(v).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return g.transpose(v, perm);
}

VJP matmulVJP(MatmulOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value a = op.getLhs(), bm = op.getRhs(), dc = grads[0];
  if (needed[0])
    out[0] = g.sumTo(MatmulOp::create(g.builder(), op.getLoc(), dc,
                                      transposeLast(g, bm)),
                     GradBuilder::typeOf(a));
  if (needed[1])
    out[1] = g.sumTo(MatmulOp::create(g.builder(), op.getLoc(),
                                      transposeLast(g, a), dc),
                     GradBuilder::typeOf(bm));
  return out;
}

VJP conv2dVJP(ConvOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value dz = g.activationGrad(op.getActivation(), op.getOutput(), grads[0]);
  int64_t groups = op.getGroups();
  if (needed[0])
    out[0] = g.conv2dInputGrad(dz, op.getFilter(),
                               GradBuilder::typeOf(op.getInput()),
                               op.getStrides(), op.getPads(),
                               op.getDilations(), groups);
  if (needed[1])
    out[1] = g.conv2dFilterGrad(dz, op.getInput(),
                                GradBuilder::typeOf(op.getFilter()),
                                op.getStrides(), op.getPads(),
                                op.getDilations(), groups);
  if (op.getBias() && needed[2])
    out[2] = g.reduceSum(dz, {0, 2, 3}, /*keepdims=*/false);
  return out;
}

VJP maxpoolVJP(MaxPoolOp op, GradBuilder &g, ValueRange grads,
               ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = MaxPoolGradOp::create(g.builder(), op.getLoc(), op.getInput(),
                                     grads[0], op.getKernelSize(),
                                     op.getStrides(), op.getPads());
  return out;
}

VJP avgpoolVJP(AvgPoolOp op, GradBuilder &g, ValueRange grads,
               ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inType = GradBuilder::typeOf(op.getInput());
  auto outShape = op.getType().getShape();
  auto kernel = op.getKernelSize();
  auto strides = op.getStrides();
  auto pads = op.getPads();
  int64_t c = inType.getDimSize(1);
  // The divisor of every output position, as the forward op counts it.
  SmallVector<double> inverse;
  for (int64_t oh = 0; oh < outShape[2]; ++oh)
    for (int64_t ow = 0; ow < outShape[3]; ++ow) {
      int64_t count = kernel[0] * kernel[1];
      if (!op.getCountIncludePad()) {
        auto inside = [&](int64_t o, int d) {
          int64_t begin = o * strides[d] - pads[d];
          int64_t lo = std::max<int64_t>(begin, 0),
                  hi = std::min(begin + kernel[d], inType.getDimSize(2 + d));
          return std::max<int64_t>(hi - lo, 0);
        };
        count = inside(oh, 0) * inside(ow, 1);
      }
      inverse.push_back(count ? 1.0 / count : 0.0);
    }
  auto scaleType = RankedTensorType::get({1, 1, outShape[2], outShape[3]},
                                         inType.getElementType());
  SmallVector<APFloat> values;
  for (double v : inverse)
    values.push_back(g.builder()
                         .getFloatAttr(inType.getElementType(), v)
                         .getValue());
  Value scale = ConstantOp::create(
      g.builder(), op.getLoc(), scaleType,
      cast<ElementsAttr>(DenseElementsAttr::get(scaleType, values)));
  Value ones = g.splat(1, RankedTensorType::get({c, 1, kernel[0], kernel[1]},
                                                inType.getElementType()));
  out[0] = g.conv2dInputGrad(g.mul(grads[0], scale), ones, inType, strides,
                             pads, {1, 1}, c);
  return out;
}

VJP globalAvgpoolVJP(GlobalAvgPoolOp op, GradBuilder &g, ValueRange grads,
                     ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  auto inType = GradBuilder::typeOf(op.getInput());
  double count = 1;
  for (int64_t d = 2; d < inType.getRank(); ++d)
    count *= inType.getDimSize(d);
  out[0] = g.broadcastTo(g.scale(grads[0], 1.0 / count), inType);
  return out;
}

} // namespace

void loom::tg::autodiff::attachLinearGradients(MLIRContext *context) {
  attachGradient<MatmulOp, matmulVJP>(context);
  attachGradient<ConvOp, conv2dVJP>(context);
  attachGradient<MaxPoolOp, maxpoolVJP>(context);
  attachGradient<AvgPoolOp, avgpoolVJP>(context);
  attachGradient<GlobalAvgPoolOp, globalAvgpoolVJP>(context);
}
