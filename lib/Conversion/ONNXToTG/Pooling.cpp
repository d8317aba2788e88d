//===- Pooling.cpp - ONNX pooling operators to tg -------------------------===//
//
// Part of Loom. MaxPool and AveragePool over 1-D, 2-D and 3-D windows (a
// 1-D pool is a 2-D one over a height of 1, as 1-D convolutions are), with
// auto_pad and ceil_mode (as extra end padding, which never wins a maximum
// and is excluded from averages), and GlobalAveragePool / GlobalMaxPool over
// any number of spatial dimensions (tg.global_avgpool for 1 to 3). A dilated
// MaxPool, or one whose Indices output is read, is built from its window's
// taps (maxPoolByTaps).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

/// Most taps a MaxPool built from its window's taps may have.
constexpr int64_t kMaxPoolTaps = 256;

/// MaxPool by its window's taps: the input padded with -inf, one strided
/// slice per tap, a running maximum that a tap replaces only where it is
/// strictly greater (the first maximum in window order wins, as in ONNX
/// Runtime), and beside it the winning tap's offset within the window. The
/// Indices output is the window origin's flat position plus that offset
/// plus (n * C + c) times the spatial size: row-major over the spatial
/// dimensions, or column-major with `storage_order` = 1. `pads` holds
/// ceil_mode's extra end padding.
LogicalResult maxPoolByTaps(NodeContext &ctx, Value input,
                            ArrayRef<int64_t> kernel, const WindowAttrs &w,
                            ArrayRef<int64_t> pads) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  size_t n = kernel.size();
  int64_t taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  if (taps > kMaxPoolTaps)
    return ctx.fail("a dilated MaxPool or one with Indices over more than " +
                    Twine(kMaxPoolTaps) +
                    " window positions is not "
                    "supported");
  int64_t order = ctx.getInt("storage_order", 0);
  if (order != 0 && order != 1)
    return ctx.fail("storage_order must be 0 or 1");
  // Flat strides of the spatial dimensions in the Indices' order, the
  // output's spatial sizes.
  SmallVector<int64_t> flatStride(n), out(n);
  int64_t plane = 1;
  for (size_t j = 0; j < n; ++j) {
    size_t i = order ? j : n - 1 - j;
    flatStride[i] = plane;
    plane *= in[2 + i];
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t span = in[2 + i] + pads[i] + pads[n + i] - extent;
    if (span < 0)
      return ctx.fail("the window is larger than the padded input");
    out[i] = span / w.strides[i] + 1;
  }
  SmallVector<int64_t> low(pads.take_front(n)), high(pads.drop_front(n));
  low.insert(low.begin(), {0, 0});
  high.insert(high.begin(), {0, 0});
  auto padded = ctx.create<tg::PadOp>(
      input, {ctx.arrayAttr("low", low), ctx.arrayAttr("high", high),
              ctx.f64Attr("value", -std::numeric_limits<double>::infinity())});
  if (failed(padded))
    return failure();
  // Positions are computed in f64 (exact below 2^53; tg.add is for floats).
  Type f64 = ctx.builder().getF64Type();
  Value best, offset;
  SmallVector<int64_t> tap(n, 0);
  for (int64_t t = 0; t < taps; ++t) {
    SmallVector<int64_t> starts = {0, 0}, limits = {in[0], in[1]},
                         steps = {1, 1};
    int64_t tapOffset = 0;
    for (size_t i = 0; i < n; ++i) {
      starts.push_back(tap[i] * w.dilations[i]);
      limits.push_back(starts.back() + (out[i] - 1) * w.strides[i] + 1);
      steps.push_back(w.strides[i]);
      tapOffset += starts.back() * flatStride[i];
    }
    auto v =
        ctx.create<tg::SliceOp>(*padded, {ctx.arrayAttr("starts", starts),
                                          ctx.arrayAttr("limits", limits),
                                          ctx.arrayAttr("strides", steps)});
    if (failed(v))
      return failure();
    Value here = ctx.scalar(f64, double(tapOffset));
    if (!best) {
      best = *v;
      offset = here;
    } else {
      auto wins = ctx.create<tg::GreaterOp>({*v, best});
      if (failed(wins))
        return failure();
      auto value = ctx.create<tg::SelectOp>({*wins, *v, best});
      auto where = ctx.create<tg::SelectOp>({*wins, here, offset});
      if (failed(value) || failed(where))
        return failure();
      best = *value;
      offset = *where;
    }
    for (size_t i = n; i-- > 0;) // the next tap, row-major
      if (++tap[i] < kernel[i])
        break;
      else
        tap[i] = 0;
  }
  ctx.setOutput(0, best);
  if (!ctx.hasOutput(1))
    return success();
  // The window origins' flat positions [1, 1, out...] and (n * C + c)
  // times the plane [N, C, 1...].
  HostTensor origin, channel;
  origin.dataType = channel.dataType = onnx::TensorProto::DOUBLE;
  origin.shape = {1, 1};
  llvm::append_range(origin.shape, out);
  channel.shape.assign(n + 2, 1);
  channel.shape[0] = in[0];
  channel.shape[1] = in[1];
  for (int64_t nc = 0; nc < in[0] * in[1]; ++nc)
    channel.floats.push_back(double(nc * plane));
  SmallVector<int64_t> pos(n, 0);
  for (bool more = true; more;) {
    int64_t flat = 0;
    for (size_t i = 0; i < n; ++i)
      flat += (pos[i] * w.strides[i] - pads[i]) * flatStride[i];
    origin.floats.push_back(double(flat));
    more = false;
    for (size_t i = n; i-- > 0;)
      if (++pos[i] < out[i]) {
        more = true;
        break;
      } else {
        pos[i] = 0;
      }
  }
  auto originValue = ctx.materialize(origin, "maxpool_window_origins");
  auto channelValue = ctx.materialize(channel, "maxpool_channel_offsets");
  if (failed(originValue) || failed(channelValue))
    return failure();
  auto within = ctx.create<tg::AddOp>({*originValue, offset});
  if (failed(within))
    return failure();
  auto sum = ctx.create<tg::AddOp>({*within, *channelValue});
  if (failed(sum))
    return failure();
  auto indices = ctx.convert(*sum, ctx.builder().getI64Type());
  if (failed(indices))
    return failure();
  ctx.setOutput(1, *indices);
  return success();
}

/// An average pool of a constant-zero tg.pad of the spatial dimensions alone
/// (how PyTorch exports avg_pool2d with padding and count_include_pad)
/// reads the unpadded input with those pads, counted in every window:
/// one pooling that oneDNN runs in the convolutions' layout instead of a
/// generated pad kernel and a pool on plain NCHW (Inception-v3's nine
/// branch pools). Only where the pool pads nothing itself and each pad is
/// narrower than its window, so every window still overlaps the input;
/// \p input unchanged otherwise.
Value foldZeroPad(Value input, ArrayRef<int64_t> kernel,
                  SmallVectorImpl<int64_t> &pads, bool &countIncludePad) {
  auto pad = input.getDefiningOp<tg::PadOp>();
  size_t n = kernel.size();
  if (!pad || !pad.getValue().isZero() ||
      llvm::any_of(pads, [](int64_t p) { return p != 0; }))
    return input;
  ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
  if (low.size() != n + 2 || high.size() != n + 2 || low[0] || low[1] ||
      high[0] || high[1])
    return input;
  for (size_t i = 0; i < n; ++i)
    if (low[2 + i] < 0 || high[2 + i] < 0 || low[2 + i] >= kernel[i] ||
        high[2 + i] >= kernel[i])
      return input;
  for (size_t i = 0; i < n; ++i) {
    pads[i] = low[2 + i];
    pads[n + i] = high[2 + i];
  }
  countIncludePad = true;
  return pad.getInput();
}

LogicalResult importPool(NodeContext &ctx, bool isMax) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank < 3 || rank > 5)
    return ctx.fail("only 1-D, 2-D and 3-D pooling (inputs of rank 3 to 5) "
                    "is supported, the input has rank " +
                    Twine(rank));
  auto kernel = ctx.getInts("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != rank - 2)
    return ctx.fail("'kernel_shape' needs " + Twine(rank - 2) + " entries");
  llvm::ArrayRef<int64_t> in = ctx.inputShape(0);
  auto attrs = readWindowAttrs(ctx, in.drop_front(2), *kernel);
  if (failed(attrs))
    return failure();
  size_t n = kernel->size();
  for (int64_t k : *kernel)
    if (k < 1 || k > kMaxExtent)
      return ctx.fail("'kernel_shape' entries must be in [1, " +
                      Twine(kMaxExtent) + "]");
  bool dilated =
      llvm::any_of(attrs->dilations, [](int64_t d) { return d != 1; });
  if (dilated && !isMax)
    return ctx.fail("dilated AveragePool is not supported");
  bool countIncludePad = ctx.getInt("count_include_pad", 0) != 0;
  SmallVector<int64_t> pads = attrs->pads;
  if (ctx.getInt("ceil_mode", 0)) {
    for (size_t i = 0; i < n; ++i) {
      int64_t extent = ((*kernel)[i] - 1) * attrs->dilations[i] + 1;
      int64_t span = in[2 + i] + pads[i] + pads[n + i] - extent;
      if (span < 0)
        return ctx.fail("the window is larger than the padded input");
      int64_t s = attrs->strides[i];
      int64_t outCeil = (span + s - 1) / s + 1;
      // The last window must start inside the input or its begin padding.
      if ((outCeil - 1) * s >= in[2 + i] + pads[i])
        --outCeil;
      int64_t extra =
          (outCeil - 1) * s + extent - (in[2 + i] + pads[i] + pads[n + i]);
      if (extra > 0) {
        if (!isMax && countIncludePad)
          return ctx.fail("ceil_mode with count_include_pad is not "
                          "supported where it adds windows");
        pads[n + i] += extra;
      }
    }
  }
  if (isMax && (dilated || ctx.hasOutput(1)))
    return maxPoolByTaps(ctx, *x, *kernel, *attrs, pads);
  Value input = *x;
  if (!isMax)
    input = foldZeroPad(input, *kernel, pads, countIncludePad);
  SmallVector<int64_t> k(*kernel), strides = attrs->strides;
  if (rank == 3) {
    auto r = insertUnitHeight(ctx, input);
    if (failed(r))
      return failure();
    input = *r;
    k.insert(k.begin(), 1);
    strides.insert(strides.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  SmallVector<NamedAttribute> named{ctx.arrayAttr("kernel_size", k),
                                    ctx.arrayAttr("strides", strides),
                                    ctx.arrayAttr("pads", pads)};
  FailureOr<Value> y = failure();
  if (isMax) {
    y = ctx.create<tg::MaxPoolOp>(input, named);
  } else {
    named.push_back(ctx.boolAttr("count_include_pad", countIncludePad));
    y = ctx.create<tg::AvgPoolOp>(input, named);
  }
  if (failed(y))
    return failure();
  return setWindowOutput(ctx, *y, rank == 3);
}

LogicalResult importGlobalPool(NodeContext &ctx, bool isMax) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank < 3)
    return ctx.fail("the input needs spatial dimensions (rank >= 3)");
  FailureOr<Value> y = failure();
  if (!isMax && rank <= 5) {
    y = ctx.create<tg::GlobalAvgPoolOp>(*x);
  } else {
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
    auto attrs = {ctx.arrayAttr("axes", axes), ctx.boolAttr("keepdims", true)};
    y = isMax ? ctx.create<tg::ReduceMaxOp>(*x, attrs)
              : ctx.create<tg::ReduceMeanOp>(*x, attrs);
  }
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populatePoolingHandlers(HandlerTable &table) {
  table["MaxPool"] = [](NodeContext &c) { return importPool(c, true); };
  table["AveragePool"] = [](NodeContext &c) { return importPool(c, false); };
  table["GlobalAveragePool"] = [](NodeContext &c) {
    return importGlobalPool(c, false);
  };
  table["GlobalMaxPool"] = [](NodeContext &c) {
    return importGlobalPool(c, true);
  };
}
