//===- GradBuilder.cpp - tg ops for writing vector-Jacobian products ------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

Value GradBuilder::scalar(double v, Type elementType) {
  return splat(v, RankedTensorType::get({}, elementType));
}

Value GradBuilder::splat(double v, RankedTensorType type) {
  auto attr = DenseElementsAttr::get(
      type, b.getFloatAttr(type.getElementType(), v).getValue());
  return ConstantOp::create(b, loc, type, cast<ElementsAttr>(attr));
}

Value GradBuilder::indices(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  auto attr = DenseElementsAttr::get(type, values);
  return ConstantOp::create(b, loc, type, cast<ElementsAttr>(attr));
}

Value GradBuilder::toFloat(Value cond, Type elementType) {
  auto type = RankedTensorType::get(typeOf(cond).getShape(), elementType);
  return CastOp::create(b, loc, type, cond);
}

Value GradBuilder::oneHot(Value labels, int64_t classes, Type elementType) {
  auto labelType = typeOf(labels);
  SmallVector<int64_t> iota;
  for (int64_t k = 0; k < classes; ++k)
    iota.push_back(k);
  Value range = indices(iota, {1, classes});
  if (labelType.getElementType() != typeOf(range).getElementType())
    range = CastOp::create(
        b, loc, RankedTensorType::get({1, classes}, labelType.getElementType()),
        range);
  SmallVector<int64_t> column(labelType.getShape());
  column.push_back(1);
  return toFloat(equal(reshape(labels, column), range), elementType);
}

Value GradBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(v).getElementType());
  if (type == v.getType())
    return v;
  return ReshapeOp::create(b, loc, type, v);
}

Value GradBuilder::broadcastTo(Value v, RankedTensorType type) {
  if (v.getType() == type)
    return v;
  return BroadcastToOp::create(b, loc, type, v);
}

Value GradBuilder::slice(Value v, ArrayRef<int64_t> starts,
                         ArrayRef<int64_t> limits) {
  auto shape = typeOf(v).getShape();
  bool whole = true;
  for (size_t d = 0; d < shape.size(); ++d)
    whole &= starts[d] == 0 && limits[d] == shape[d];
  if (whole)
    return v;
  return SliceOp::create(b, loc, v, starts, limits, DenseI64ArrayAttr());
}

Value GradBuilder::padOrCrop(Value v, ArrayRef<int64_t> low,
                             ArrayRef<int64_t> high) {
  auto shape = typeOf(v).getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> starts(rank), limits(shape), padLow(rank),
      padHigh(rank);
  bool pads = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0)
      starts[d] = -low[d];
    else
      padLow[d] = low[d];
    if (high[d] < 0)
      limits[d] = shape[d] + high[d];
    else
      padHigh[d] = high[d];
    pads |= padLow[d] > 0 || padHigh[d] > 0;
  }
  Value cropped = slice(v, starts, limits);
  if (!pads)
    return cropped;
  return PadOp::create(b, loc, cropped, padLow, padHigh, APFloat(0.0));
}

Value GradBuilder::interleaveZeros(Value v, ArrayRef<int64_t> strides) {
  if (llvm::all_of(strides, [](int64_t s) { return s == 1; }))
    return v;
  auto shape = typeOf(v).getShape();
  SmallVector<int64_t> split, high, merged;
  for (size_t d = 0; d < shape.size(); ++d) {
    split.append({shape[d], 1});
    high.append({0, strides[d] - 1});
    merged.push_back(shape[d] * strides[d]);
  }
  Value padded = padOrCrop(reshape(v, split), SmallVector<int64_t>(high.size()),
                           high);
  return reshape(padded, merged);
}

Value GradBuilder::reverse(Value v, int64_t axis) {
  int64_t n = typeOf(v).getDimSize(axis);
  if (n == 1)
    return v;
  SmallVector<int64_t> order;
  for (int64_t i = n - 1; i >= 0; --i)
    order.push_back(i);
  return GatherOp::create(b, loc, v, indices(order, {n}),
                          b.getI64IntegerAttr(axis));
}

Value GradBuilder::sumTo(Value g, RankedTensorType target) {
  auto shape = typeOf(g).getShape();
  int64_t rank = shape.size(), targetRank = target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t t = d - (rank - targetRank);
    if (t < 0 || (target.getDimSize(t) == 1 && shape[d] != 1))
      axes.push_back(d);
  }
  Value summed = axes.empty() ? g : reduceSum(g, axes, /*keepdims=*/true);
  return reshape(summed, target.getShape());
}

Value GradBuilder::weightedSum(ValueRange values, ValueRange weights,
                               RankedTensorType scalar) {
  Value total;
  for (auto [v, w] : llvm::zip(values, weights)) {
    int64_t rank = typeOf(v).getRank();
    Value term = mul(v, w);
    if (rank > 0) {
      SmallVector<int64_t> axes;
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
      term = reduceSum(term, axes, /*keepdims=*/false);
    }
    if (typeOf(term) != scalar)
      term = CastOp::create(b, loc, scalar, term);
    total = total ? add(total, term) : term;
  }
  return total;
}

Value GradBuilder::activationGrad(Activation activation, Value y, Value g) {
  switch (activation) {
  case Activation::None:
    return g;
  case Activation::Relu: // relu'(0) = 0: y > 0 exactly where x > 0
    return mask(greater(y, scalarLike(0, y)), g);
  case Activation::Sigmoid:
    return mul(g, mul(y, sub(scalarLike(1, y), y)));
  case Activation::Tanh:
    return mul(g, sub(scalarLike(1, y), mul(y, y)));
  }
  llvm_unreachable("unknown activation");
}

// dx[n, ci, h] = sum over (o in ci's group, kh, oh) with
// oh * s + kh * d - pad_begin = h of dz[n, o, oh] * w[o, ci, kh]: the
// correlation of dz, spread by the stride, with the filter flipped in space
// and transposed per group, at dilation d.
Value GradBuilder::conv2dInputGrad(Value dz, Value filter,
                                   RankedTensorType inputType,
                                   ArrayRef<int64_t> strides,
                                   ArrayRef<int64_t> pads,
                                   ArrayRef<int64_t> dilations,
                                   int64_t groups) {
  auto dzShape = typeOf(dz).getShape();
  auto fShape = typeOf(filter).getShape();
  int64_t n = dzShape[0], o = dzShape[1], cg = fShape[1], og = o / groups;
  int64_t kernel[2] = {fShape[2], fShape[3]};
  int64_t spatial[2] = {inputType.getDimSize(2), inputType.getDimSize(3)};
  if (groups == 1 && dilations[0] == 1 && dilations[1] == 1 &&
      strides[0] >= kernel[0] && strides[1] >= kernel[1]) {
    // Windows that do not overlap (a patch embedding): every input element
    // is in at most one window, so the adjoint is one product W^T dz laid
    // out patch by patch, instead of a convolution over a zero-spread
    // gradient with the whole kernel (16x16 taps for a ViT).
    int64_t oh = dzShape[2], ow = dzShape[3], c = cg;
    Value d = reshape(transpose(dz, {0, 2, 3, 1}), {n * oh * ow, o});
    Value cols = matmul(d, reshape(filter, {o, c * kernel[0] * kernel[1]}));
    cols = reshape(cols, {n, oh, ow, c, kernel[0], kernel[1]});
    cols = transpose(cols, {0, 3, 1, 4, 2, 5});
    cols = padOrCrop(cols, {0, 0, 0, 0, 0, 0},
                     {0, 0, 0, strides[0] - kernel[0], 0,
                      strides[1] - kernel[1]});
    cols = reshape(cols, {n, c, oh * strides[0], ow * strides[1]});
    return padOrCrop(cols, {0, 0, -pads[0], -pads[1]},
                     {0, 0, spatial[0] - (oh * strides[0] - pads[0]),
                      spatial[1] - (ow * strides[1] - pads[1])});
  }
  Value spread = interleaveZeros(dz, {1, 1, strides[0], strides[1]});
  SmallVector<int64_t> low(4, 0), high(4, 0);
  for (int d = 0; d < 2; ++d) {
    int64_t reach = dilations[d] * (kernel[d] - 1);
    low[2 + d] = reach - pads[d];
    // Output size spatial[d] at stride 1: length + low + high - reach = size.
    high[2 + d] = spatial[d] + reach - low[2 + d] -
                  dzShape[2 + d] * strides[d];
  }
  spread = padOrCrop(spread, low, high);
  // [g*og, cg, kh, kw] -> [g*cg, og, kh, kw], flipped in space.
  Value w = reshape(filter, {groups, og, cg, kernel[0], kernel[1]});
  w = transpose(w, {0, 2, 1, 3, 4});
  w = reshape(w, {groups * cg, og, kernel[0], kernel[1]});
  w = reverse(reverse(w, 2), 3);
  (void)n;
  return ConvOp::create(b, loc, inputType, spread, w, Value(),
                          ArrayRef<int64_t>{1, 1},
                          ArrayRef<int64_t>{0, 0, 0, 0}, dilations, groups,
                          Activation::None);
}

// dw[o, c, kh] = sum over (n, oh) of dz[n, o, oh] * x[n, g(o)*cg + c,
// oh * s + kh * d - pad_begin]: a grouped convolution of the input with
// batch and channels exchanged, by the gradient used as the filter, whose
// stride is the forward dilation and whose dilation is the forward stride.
Value GradBuilder::conv2dFilterGrad(Value dz, Value input,
                                    RankedTensorType filterType,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> pads,
                                    ArrayRef<int64_t> dilations,
                                    int64_t groups) {
  auto xShape = typeOf(input).getShape();
  auto dzShape = typeOf(dz).getShape();
  int64_t n = xShape[0], c = xShape[1], cg = c / groups, o = dzShape[1],
          og = o / groups;
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  // x [n, g*cg, h, w] -> [cg, g*n, h, w]
  Value x = reshape(input, {n, groups, cg, xShape[2], xShape[3]});
  x = transpose(x, {2, 1, 0, 3, 4});
  x = reshape(x, {cg, groups * n, xShape[2], xShape[3]});
  // dz [n, g*og, oh, ow] -> [g*og, n, oh, ow]
  Value f = reshape(dz, {n, groups, og, dzShape[2], dzShape[3]});
  f = transpose(f, {1, 2, 0, 3, 4});
  f = reshape(f, {o, n, dzShape[2], dzShape[3]});
  Value r = ConvOp::create(b, loc, x, f, Value(), dilations, pads, strides,
                             groups, Activation::None);
  // [cg, o, >= kh, >= kw] -> [o, cg, kh, kw]
  r = slice(r, {0, 0, 0, 0}, {cg, o, kh, kw});
  return transpose(r, {1, 0, 2, 3});
}
