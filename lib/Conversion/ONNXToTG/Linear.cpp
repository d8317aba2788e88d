//===- Linear.cpp - ONNX MatMul, Gemm, Conv and ConvTranspose to tg -------===//
//
// Part of Loom. MatMul (1-D operands are promoted and the added dimension
// removed again, as numpy does), Gemm (transposes, alpha, beta, C) and Conv
// (1-D and 2-D, every attribute: kernel_shape, strides, pads, dilations,
// group and each auto_pad mode; a 1-D convolution is a 2-D one over a height
// of 1) and ConvTranspose (as a convolution of the zero-interleaved input
// with the flipped filter).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

LogicalResult importMatMul(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)) || failed(ctx.requireFloatInput(1)))
    return failure();
  auto a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  auto aType = cast<RankedTensorType>(a->getType());
  auto bType = cast<RankedTensorType>(b->getType());
  if (aType.getRank() == 0 || bType.getRank() == 0)
    return ctx.fail("operands must have rank >= 1");
  Value lhs = *a, rhs = *b;
  bool dropRow = aType.getRank() == 1, dropCol = bType.getRank() == 1;
  if (dropRow) {
    auto r = ctx.reshape(lhs, {1, aType.getDimSize(0)});
    if (failed(r))
      return failure();
    lhs = *r;
  }
  if (dropCol) {
    auto r = ctx.reshape(rhs, {bType.getDimSize(0), 1});
    if (failed(r))
      return failure();
    rhs = *r;
  }
  auto y = ctx.create<tg::MatmulOp>({lhs, rhs});
  if (failed(y))
    return failure();
  Value result = *y;
  if (dropRow || dropCol) {
    auto shape = cast<RankedTensorType>(result.getType()).getShape();
    SmallVector<int64_t> out(shape.begin(), shape.end());
    // [..., M, N]: a promoted row vector is M = 1, a column vector N = 1.
    if (dropCol)
      out.pop_back();
    if (dropRow)
      out.erase(out.end() - (dropCol ? 1 : 2));
    auto r = ctx.reshape(result, out);
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

LogicalResult importGemm(NodeContext &ctx) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  auto a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (ctx.inputRank(0) != 2 || ctx.inputRank(1) != 2)
    return ctx.fail("A and B must be matrices");
  Value lhs = *a, rhs = *b;
  if (ctx.getInt("transA", 0)) {
    auto t = ctx.transpose(lhs, {1, 0});
    if (failed(t))
      return failure();
    lhs = *t;
  }
  if (ctx.getInt("transB", 0)) {
    auto t = ctx.transpose(rhs, {1, 0});
    if (failed(t))
      return failure();
    rhs = *t;
  }
  auto y = ctx.create<tg::MatmulOp>({lhs, rhs});
  if (failed(y))
    return failure();
  Value result = *y;
  Type e = cast<RankedTensorType>(result.getType()).getElementType();
  double alpha = ctx.getFloat("alpha", 1.0), beta = ctx.getFloat("beta", 1.0);
  if (alpha != 1.0) {
    auto r = ctx.create<tg::MulOp>({result, ctx.scalar(e, alpha)});
    if (failed(r))
      return failure();
    result = *r;
  }
  if (ctx.hasInput(2) && beta != 0.0) {
    auto c = ctx.input(2);
    if (failed(c))
      return failure();
    Value bias = *c;
    if (beta != 1.0) {
      auto r = ctx.create<tg::MulOp>({bias, ctx.scalar(e, beta)});
      if (failed(r))
        return failure();
      bias = *r;
    }
    auto resultShape = cast<RankedTensorType>(result.getType()).getShape();
    auto biasShape = cast<RankedTensorType>(bias.getType()).getShape();
    auto shape = broadcastHostShapes(resultShape, biasShape);
    if (!shape || llvm::ArrayRef<int64_t>(*shape) != resultShape)
      return ctx.fail("C of shape " + safetensors::formatShape(biasShape) +
                      " does not broadcast to the product's " +
                      safetensors::formatShape(resultShape));
    auto r = ctx.create<tg::AddOp>({result, bias});
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

/// Begin and end padding of one spatial dimension under `autoPad`.
FailureOr<std::pair<int64_t, int64_t>>
autoPadding(NodeContext &ctx, llvm::StringRef autoPad, int64_t in,
            int64_t kernel, int64_t stride, int64_t dilation) {
  if (autoPad == "VALID")
    return std::make_pair<int64_t, int64_t>(0, 0);
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (out - 1) * stride +
                                           (kernel - 1) * dilation + 1 - in);
  int64_t small = total / 2, big = total - small;
  if (autoPad == "SAME_UPPER")
    return std::make_pair(small, big);
  if (autoPad == "SAME_LOWER")
    return std::make_pair(big, small);
  return ctx.fail("auto_pad '" + autoPad + "' is not a valid mode");
}

} // namespace

/// Window attributes of Conv and the pooling operators, for `spatial`
/// dimensions, as tg wants them (pads: begin of each dimension, then end).
FailureOr<onnx_to_tg::WindowAttrs>
onnx_to_tg::readWindowAttrs(NodeContext &ctx, llvm::ArrayRef<int64_t> inShape,
                            llvm::ArrayRef<int64_t> kernel) {
  size_t n = kernel.size();
  WindowAttrs w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = ctx.getInts("strides").value_or(SmallVector<int64_t>(n, 1));
  w.dilations = ctx.getInts("dilations").value_or(SmallVector<int64_t>(n, 1));
  if (w.strides.size() != n || w.dilations.size() != n)
    return ctx.fail("'strides' and 'dilations' need " + Twine(n) + " entries");
  for (size_t i = 0; i < n; ++i)
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1 ||
        w.strides[i] > kMaxExtent || w.dilations[i] > kMaxExtent ||
        w.kernel[i] > kMaxExtent)
      return ctx.fail("kernel sizes, strides and dilations must be in [1, " +
                      Twine(kMaxExtent) + "]");
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    w.pads = ctx.getInts("pads").value_or(SmallVector<int64_t>(2 * n, 0));
    if (w.pads.size() != 2 * n)
      return ctx.fail("'pads' needs " + Twine(2 * n) + " entries");
    for (int64_t p : w.pads)
      if (p < 0 || p > kMaxExtent)
        return ctx.fail("'pads' must be in [0, " + Twine(kMaxExtent) + "]");
  } else {
    w.pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      auto p = autoPadding(ctx, autoPad, inShape[i], w.kernel[i], w.strides[i],
                           w.dilations[i]);
      if (failed(p))
        return failure();
      w.pads[i] = p->first;
      w.pads[n + i] = p->second;
    }
  }
  return w;
}

FailureOr<Value> onnx_to_tg::insertUnitHeight(NodeContext &ctx, Value v) {
  auto s = cast<RankedTensorType>(v.getType()).getShape();
  return ctx.reshape(v, {s[0], s[1], 1, s[2]});
}

LogicalResult onnx_to_tg::setWindowOutput(NodeContext &ctx, Value result,
                                          bool lifted) {
  if (lifted) {
    auto s = cast<RankedTensorType>(result.getType()).getShape();
    auto r = ctx.reshape(result, {s[0], s[1], s[3]});
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

namespace {

/// The input and filter of a convolution.
struct ConvOperands {
  Value input, filter;
};

/// The float input and filter of a Conv or ConvTranspose (`what` names it
/// in errors): 1-D or 2-D, that is inputs of rank 3 or 4, and the filter of
/// the input's rank.
FailureOr<ConvOperands> readConvOperands(NodeContext &ctx, StringRef what) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  auto x = ctx.input(0), w = ctx.input(1);
  if (failed(x) || failed(w))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank != 3 && rank != 4)
    return ctx.fail("only 1-D and 2-D " + what +
                    " (inputs of rank 3 or 4) are supported, the input has "
                    "rank " +
                    Twine(rank));
  if (ctx.inputRank(1) != rank)
    return ctx.fail("the filter must have the input's rank");
  return ConvOperands{*x, *w};
}

/// Sets the node's output to tg.conv of `input` and `filter` (and the
/// bias, input 2, when given) with `attrs`; `lifted`: the convolution is a
/// 1-D one done in 2-D, whose result drops its unit height again.
LogicalResult buildConv2d(NodeContext &ctx, Value input, Value filter,
                          ArrayRef<NamedAttribute> attrs, bool lifted) {
  SmallVector<Value> operands{input, filter};
  if (ctx.hasInput(2)) {
    auto b = ctx.input(2);
    if (failed(b))
      return failure();
    operands.push_back(*b);
  }
  auto y = ctx.create<tg::ConvOp>(operands, attrs);
  if (failed(y))
    return failure();
  return setWindowOutput(ctx, *y, lifted);
}

LogicalResult importConv(NodeContext &ctx) {
  auto operands = readConvOperands(ctx, "convolutions");
  if (failed(operands))
    return failure();
  llvm::ArrayRef<int64_t> wShape = ctx.inputShape(1);
  SmallVector<int64_t> kernel(wShape.drop_front(2));
  if (auto k = ctx.getInts("kernel_shape"); k && *k != kernel)
    return ctx.fail("'kernel_shape' differs from the filter's shape");
  auto attrs = readWindowAttrs(ctx, ctx.inputShape(0).drop_front(2), kernel);
  if (failed(attrs))
    return failure();
  Value input = operands->input, filter = operands->filter;
  SmallVector<int64_t> strides = attrs->strides, dilations = attrs->dilations,
                       pads = attrs->pads;
  bool lifted = ctx.inputRank(0) == 3;
  if (lifted) {
    auto r = insertUnitHeight(ctx, input);
    auto f = insertUnitHeight(ctx, filter);
    if (failed(r) || failed(f))
      return failure();
    input = *r;
    filter = *f;
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  return buildConv2d(ctx, input, filter,
                     {ctx.arrayAttr("strides", strides),
                      ctx.arrayAttr("pads", pads),
                      ctx.arrayAttr("dilations", dilations),
                      ctx.i64Attr("groups", ctx.getInt("group", 1))},
                     lifted);
}

/// The attributes of a ConvTranspose per spatial dimension.
struct ConvTransposeAttrs {
  SmallVector<int64_t> kernel, strides, dilations, outPad;
  /// All begins, then all ends.
  SmallVector<int64_t> pads;
  int64_t group = 1;
};

/// Reads and checks group, strides, dilations and output_padding of a
/// ConvTranspose of an input of shape `in` by a filter of shape `ws`.
FailureOr<ConvTransposeAttrs> readConvTransposeAttrs(NodeContext &ctx,
                                                     ArrayRef<int64_t> in,
                                                     ArrayRef<int64_t> ws) {
  size_t n = in.size() - 2;
  ConvTransposeAttrs a;
  a.group = ctx.getInt("group", 1);
  if (a.group < 1 || in[1] != ws[0] || ws[0] % a.group != 0)
    return ctx.fail("the filter's first dimension must be the input's " +
                    Twine(in[1]) + " channels, divisible by group " +
                    Twine(a.group));
  a.kernel.assign(ws.begin() + 2, ws.end());
  a.strides = ctx.getInts("strides").value_or(SmallVector<int64_t>(n, 1));
  a.dilations = ctx.getInts("dilations").value_or(SmallVector<int64_t>(n, 1));
  a.outPad = ctx.getInts("output_padding").value_or(SmallVector<int64_t>(n, 0));
  if (a.strides.size() != n || a.dilations.size() != n || a.outPad.size() != n)
    return ctx.fail("strides, dilations and output_padding need " + Twine(n) +
                    " entries");
  for (size_t i = 0; i < n; ++i)
    if (a.strides[i] < 1 || a.dilations[i] < 1 || a.outPad[i] < 0 ||
        a.strides[i] > kMaxExtent || a.dilations[i] > kMaxExtent ||
        a.outPad[i] > kMaxExtent || a.kernel[i] > kMaxExtent)
      return ctx.fail("strides and dilations must be in [1, " +
                      Twine(kMaxExtent) + "], output_padding in [0, " +
                      Twine(kMaxExtent) + "]");
  return a;
}

/// The padding of a ConvTranspose of an input of shape `in` (into
/// `a.pads`): given by `pads`, or derived from `output_shape` or
/// `auto_pad`.
LogicalResult readConvTransposePads(NodeContext &ctx, ArrayRef<int64_t> in,
                                    ConvTransposeAttrs &a) {
  size_t n = in.size() - 2;
  a.pads.assign(2 * n, 0);
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  auto outputShape = ctx.getInts("output_shape");
  if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    SmallVector<int64_t> target;
    if (outputShape) {
      target.assign(outputShape->end() - std::min(outputShape->size(), n),
                    outputShape->end());
      if (target.size() != n)
        return ctx.fail("'output_shape' needs " + Twine(n) + " entries");
    } else {
      for (size_t i = 0; i < n; ++i)
        target.push_back(in[2 + i] * a.strides[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t total = a.strides[i] * (in[2 + i] - 1) + a.outPad[i] +
                      (a.kernel[i] - 1) * a.dilations[i] + 1 - target[i];
      // As the spec (with Python's floor division): a negative total makes
      // the output larger, the extra rows at the end (lower: beginning).
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      bool upper = autoPad == "SAME_UPPER";
      a.pads[i] = upper ? half : total - half;
      a.pads[n + i] = upper ? total - half : half;
    }
    return success();
  }
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return ctx.fail("auto_pad '" + autoPad + "' is not a valid mode");
  if (autoPad == "NOTSET")
    a.pads = ctx.getInts("pads").value_or(a.pads);
  if (a.pads.size() != 2 * n)
    return ctx.fail("'pads' needs " + Twine(2 * n) + " entries");
  for (int64_t p : a.pads)
    if (p < 0 || p > kMaxExtent)
      return ctx.fail("'pads' must be in [0, " + Twine(kMaxExtent) + "]");
  return success();
}

/// Step 1 of a ConvTranspose: stride - 1 zeros between the elements of the
/// [N, C, H, W] `input`: [N, C, H, 1, W, 1] padded to [N, C, H, s, W, s],
/// flattened, the trailing zeros sliced off.
FailureOr<Value> interleaveZeros(NodeContext &ctx, Value input,
                                 ArrayRef<int64_t> strides) {
  if (strides[0] == 1 && strides[1] == 1)
    return input;
  auto xs = cast<RankedTensorType>(input.getType()).getShape();
  int64_t nb = xs[0], cin = xs[1], h = xs[2], wd = xs[3];
  auto spread = ctx.reshape(input, {nb, cin, h, 1, wd, 1});
  if (failed(spread))
    return failure();
  auto padded = ctx.create<tg::PadOp>(
      *spread,
      {ctx.arrayAttr("low", {0, 0, 0, 0, 0, 0}),
       ctx.arrayAttr("high", {0, 0, 0, strides[0] - 1, 0, strides[1] - 1})});
  if (failed(padded))
    return failure();
  auto flat = ctx.reshape(*padded, {nb, cin, h * strides[0], wd * strides[1]});
  if (failed(flat))
    return failure();
  return ctx.create<tg::SliceOp>(
      *flat, {ctx.arrayAttr("starts", {0, 0, 0, 0}),
              ctx.arrayAttr("limits", {nb, cin, (h - 1) * strides[0] + 1,
                                       (wd - 1) * strides[1] + 1})});
}

/// Step 2 of a ConvTranspose: pads (or crops) the spread input by
/// dilation * (kernel - 1) - pad on each side, plus output_padding at the
/// end.
FailureOr<Value> padForConvTranspose(NodeContext &ctx, Value input,
                                     const ConvTransposeAttrs &a) {
  auto upShape = cast<RankedTensorType>(input.getType()).getShape();
  SmallVector<int64_t> low(4, 0), high(4, 0), cropStart(4, 0),
      cropLimit(upShape.begin(), upShape.end());
  bool crop = false, pad = false;
  for (int i = 0; i < 2; ++i) {
    int64_t full = a.dilations[i] * (a.kernel[i] - 1);
    int64_t b = full - a.pads[i], e = full - a.pads[2 + i] + a.outPad[i];
    if (b < 0) {
      cropStart[2 + i] = -b;
      crop = true;
    } else {
      low[2 + i] = b;
      pad |= b > 0;
    }
    if (e < 0) {
      cropLimit[2 + i] += e;
      crop = true;
    } else {
      high[2 + i] = e;
      pad |= e > 0;
    }
  }
  if (crop) {
    for (int i = 2; i < 4; ++i)
      if (cropStart[i] > cropLimit[i])
        return ctx.fail("the padding removes more than the whole input");
    auto r =
        ctx.create<tg::SliceOp>(input, {ctx.arrayAttr("starts", cropStart),
                                        ctx.arrayAttr("limits", cropLimit)});
    if (failed(r))
      return failure();
    input = *r;
  }
  if (pad)
    return ctx.create<tg::PadOp>(
        input, {ctx.arrayAttr("low", low), ctx.arrayAttr("high", high)});
  return input;
}

/// Step 3 of a ConvTranspose: the [Cin, Cout/g, KH, KW] `filter` of `group`
/// groups as the [Cout, Cin/g, KH, KW] filter of a convolution, flipped
/// spatially.
FailureOr<Value> flipConvTransposeFilter(NodeContext &ctx, Value filter,
                                         int64_t group) {
  auto fs = cast<RankedTensorType>(filter.getType()).getShape();
  int64_t cinPerGroup = fs[0] / group, coutPerGroup = fs[1], kh = fs[2],
          kw = fs[3];
  auto g5 = ctx.reshape(filter, {group, cinPerGroup, coutPerGroup, kh, kw});
  if (failed(g5))
    return failure();
  auto swapped = ctx.transpose(*g5, {0, 2, 1, 3, 4});
  if (failed(swapped))
    return failure();
  auto f4 = ctx.reshape(*swapped, {coutPerGroup * group, cinPerGroup, kh, kw});
  if (failed(f4))
    return failure();
  Value flipped = *f4;
  for (int axis : {2, 3}) {
    int64_t k = axis == 2 ? kh : kw;
    if (k == 1)
      continue;
    auto r =
        ctx.gather(flipped, axis,
                   llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, k))));
    if (failed(r))
      return failure();
    flipped = *r;
  }
  return flipped;
}

/// Whether a ConvTranspose is an upsampling whose windows tile the output:
/// one group, kernel == stride on each axis, no dilation, padding or
/// output padding (DBNet's, U-Net's and FPN's 2x2 stride-2 upsampling).
bool tilesOutput(const ConvTransposeAttrs &a) {
  for (size_t i = 0; i < a.kernel.size(); ++i)
    if (a.kernel[i] != a.strides[i] || a.dilations[i] != 1 || a.outPad[i] != 0)
      return false;
  return a.group == 1 && llvm::all_of(a.pads, [](int64_t p) { return p == 0; });
}

/// A ConvTranspose whose windows tile the output (tilesOutput) on a 4-D
/// input: each input pixel writes its own s0 x s1 block, out[n, o, s0 i + a,
/// s1 j + b] = sum_c x[n, c, i, j] w[c, o, a, b] (+ bias[o]): a 1x1
/// convolution to O s0 s1 channels (the filter [C, O, s0, s1] transposed to
/// [O s0 s1, C, 1, 1], the bias repeated per block position), then the
/// channels moved into the blocks (a pixel shuffle: reshape, transpose,
/// reshape). The same sums as the convolution of the zero-interleaved
/// input without its products with zero, and s0 s1 times less work.
LogicalResult importTilingConvTranspose(NodeContext &ctx, Value input,
                                        Value filter, bool lifted) {
  auto xs = cast<RankedTensorType>(input.getType()).getShape();
  auto fs = cast<RankedTensorType>(filter.getType()).getShape();
  int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3];
  int64_t o = fs[1], s0 = fs[2], s1 = fs[3];
  auto perBlock = ctx.transpose(filter, {1, 2, 3, 0});
  if (failed(perBlock))
    return failure();
  auto pointwise = ctx.reshape(*perBlock, {o * s0 * s1, c, 1, 1});
  if (failed(pointwise))
    return failure();
  SmallVector<Value> operands{input, *pointwise};
  if (ctx.hasInput(2)) {
    auto b = ctx.input(2);
    if (failed(b))
      return failure();
    SmallVector<int64_t> repeat;
    for (int64_t k = 0; k < o * s0 * s1; ++k)
      repeat.push_back(k / (s0 * s1));
    auto repeated = ctx.gather(*b, 0, repeat);
    if (failed(repeated))
      return failure();
    operands.push_back(*repeated);
  }
  auto y = ctx.create<tg::ConvOp>(operands, {});
  if (failed(y))
    return failure();
  auto blocks = ctx.reshape(*y, {n, o, s0, s1, h, w});
  if (failed(blocks))
    return failure();
  auto shuffled = ctx.transpose(*blocks, {0, 1, 4, 2, 5, 3});
  if (failed(shuffled))
    return failure();
  auto out = ctx.reshape(*shuffled, {n, o, h * s0, w * s1});
  if (failed(out))
    return failure();
  return setWindowOutput(ctx, *out, lifted);
}

/// ConvTranspose as a convolution: the input with stride - 1 zeros between
/// its elements, padded by dilation * (kernel - 1) - pad on each side (a
/// negative amount crops), convolved at stride 1 with the spatially flipped
/// filter whose input and output channels are swapped within each group.
/// Exact: the inserted zeros and the padding add products with zero. Where
/// the windows tile the output, a 1x1 convolution and a pixel shuffle
/// instead (importTilingConvTranspose).
LogicalResult importConvTranspose(NodeContext &ctx) {
  auto operands = readConvOperands(ctx, "transposed convolutions");
  if (failed(operands))
    return failure();
  llvm::ArrayRef<int64_t> in = ctx.inputShape(0);
  auto attrs = readConvTransposeAttrs(ctx, in, ctx.inputShape(1));
  if (failed(attrs) || failed(readConvTransposePads(ctx, in, *attrs)))
    return failure();
  ConvTransposeAttrs &a = *attrs;

  // Work in 2-D: [N, C, W] is [N, C, 1, W].
  Value input = operands->input, filter = operands->filter;
  bool lifted = in.size() == 3;
  if (lifted) {
    a.kernel.insert(a.kernel.begin(), 1);
    a.strides.insert(a.strides.begin(), 1);
    a.dilations.insert(a.dilations.begin(), 1);
    a.outPad.insert(a.outPad.begin(), 0);
    a.pads = {0, a.pads[0], 0, a.pads[1]};
    auto r = insertUnitHeight(ctx, input);
    auto f = insertUnitHeight(ctx, filter);
    if (failed(r) || failed(f))
      return failure();
    input = *r;
    filter = *f;
  }
  if (tilesOutput(a))
    return importTilingConvTranspose(ctx, input, filter, lifted);
  auto spread = interleaveZeros(ctx, input, a.strides);
  if (failed(spread))
    return failure();
  auto padded = padForConvTranspose(ctx, *spread, a);
  if (failed(padded))
    return failure();
  auto flipped = flipConvTransposeFilter(ctx, filter, a.group);
  if (failed(flipped))
    return failure();
  return buildConv2d(
      ctx, *padded, *flipped,
      {ctx.arrayAttr("dilations", a.dilations), ctx.i64Attr("groups", a.group)},
      lifted);
}

} // namespace

void onnx_to_tg::populateLinearHandlers(HandlerTable &table) {
  table["ConvTranspose"] = importConvTranspose;
  table["MatMul"] = importMatMul;
  table["Gemm"] = importGemm;
  table["Conv"] = importConv;
}
