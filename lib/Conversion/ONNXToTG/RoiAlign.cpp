//===- RoiAlign.cpp - ONNX RoiAlign as gathers of bilinear taps -----------===//
//
// Part of Loom. RoiAlign (opset 10 and 16, mode avg; what torchvision's
// MultiScaleRoIAlign exports for Faster and Mask R-CNN), as ONNX Runtime
// computes it: for region r = (x1, y1, x2, y2) of image b, bin (ph, pw)
// and sampling point (iy, ix) of a sampling_ratio x sampling_ratio grid,
//
//   start = x1 * spatial_scale - offset (offset 0.5 for half_pixel, else 0)
//   extent = (x2 - x1) * spatial_scale (at least 1 unless half_pixel)
//   x = start + pw * extent / W' + (ix + 0.5) * extent / (W' * ratio)
//
// (the same for y), and the bilinear value of X[b] at (y, x): 0 when y or x
// lies below -1 or beyond the size; else the position clamped at 0, its
// floor and floor + 1 as taps (both the last row or column at or past
// size - 1), weighted by the distances. The output is the mean over the
// sampling points. The weights are separable: per region, the taps and
// weights of the rows [R, H' * ratio] and of the columns [R, W' * ratio]
// are computed once, and each of the four combinations of taps is one
// gather of X's rows of channels [N * H * W, C] at b * H * W + y * W + x:
//
//   sum over taps of rows * (wy * wx) -> [R, H', ratio, W', ratio, C]
//   mean over the ratios, then        -> [R, C, H', W']
//
// (the taps' gathers, their sum and the mean compile to one kernel: the
// gathers are fused like elementwise ops, lib/Compiler/FormFragments.cpp).
//
// A sampling_ratio of 0 (adaptive, ceil(extent / W'), a per-region count)
// and mode max are refused. Regions of data-dependent length (the
// proposals of a region proposal network) give a result of that length.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

namespace {

/// The two taps of one axis for every region and sample: positions (f64,
/// integral) and weights (the coordinates' type).
struct AxisTaps {
  Value low, high, lowWeight, highWeight;
};

/// Taps along one axis of \p size: \p start and \p extent are [R, 1], the
/// sample offsets [1, S] (fractions of the extent).
FailureOr<AxisTaps> axisTaps(OpChain &b, OpChain &wide, Value start,
                             Value extent, Value fractions, int64_t size) {
  auto at = b.bin<tg::AddOp>(start, b.bin<tg::MulOp>(extent, fractions));
  // Outside [-1, size]: no contribution.
  auto valid = b.select(b.bin<tg::GreaterEqualOp>(at, b.c(-1)),
                        b.select(b.bin<tg::LessEqualOp>(at, b.c(double(size))),
                                 b.c(1), b.c(0)),
                        b.c(0));
  auto clamped = b.bin<tg::MaxOp>(at, b.c(0));
  if (failed(clamped))
    return failure();
  auto floor = floorAtRunTime(b, *clamped);
  // At or past the last row: both taps there, all weight on it.
  auto last = b.bin<tg::GreaterEqualOp>(floor, b.c(double(size - 1)));
  auto low = b.select(last, b.c(double(size - 1)), floor);
  auto high = b.select(last, b.c(double(size - 1)),
                       b.bin<tg::AddOp>(floor, b.c(1)));
  auto frac = b.select(last, b.c(0), b.bin<tg::SubOp>(*clamped, floor));
  auto lowWeight = b.bin<tg::MulOp>(b.bin<tg::SubOp>(b.c(1), frac), valid);
  auto highWeight = b.bin<tg::MulOp>(frac, valid);
  auto lowWide = wide.cast(low, wide.e), highWide = wide.cast(high, wide.e);
  if (failed(lowWeight) || failed(highWeight) || failed(lowWide) ||
      failed(highWide))
    return failure();
  return AxisTaps{*lowWide, *highWide, *lowWeight, *highWeight};
}

/// The sample positions within a region along an axis, as fractions of its
/// extent: (p + (i + 0.5) / ratio) / bins for bin p and sample i, [1, S].
FailureOr<Value> sampleFractions(NodeContext &ctx, Type type, int64_t bins,
                                 int64_t ratio) {
  HostTensor t;
  t.dataType = type.isF64() ? onnx::TensorProto::DOUBLE
                            : onnx::TensorProto::FLOAT;
  t.shape = {1, bins * ratio};
  for (int64_t p = 0; p < bins; ++p)
    for (int64_t i = 0; i < ratio; ++i)
      t.floats.push_back((double(p) + (double(i) + 0.5) / double(ratio)) /
                         double(bins));
  return ctx.materialize(t, "roi_align_samples");
}

/// Column k of the regions [R, 4] as [R, 1], times the spatial scale.
FailureOr<Value> roiColumn(NodeContext &ctx, OpChain &b, Value rois,
                           int64_t k, double scale) {
  int64_t r = cast<RankedTensorType>(rois.getType()).getDimSize(0);
  auto column = ctx.create<tg::SliceOp>(
      rois, {ctx.arrayAttr("starts", {0, k}),
             ctx.arrayAttr("limits", {r, k + 1})});
  return b.bin<tg::MulOp>(column, b.c(scale));
}

LogicalResult importRoiAlign(NodeContext &ctx) {
  if (ctx.numInputs() != 3)
    return ctx.fail("needs inputs X, rois and batch_indices");
  if (failed(ctx.requireFloatInput(0)) || failed(ctx.requireFloatInput(1)))
    return failure();
  ArrayRef<int64_t> xShape = ctx.inputShape(0), roiShape = ctx.inputShape(1);
  if (xShape.size() != 4 || roiShape.size() != 2 || roiShape[1] != 4 ||
      ctx.inputShape(2).size() != 1 || ctx.inputShape(2)[0] != roiShape[0])
    return ctx.fail("expects X [N, C, H, W], rois [R, 4] and batch_indices "
                    "[R]");
  if (ctx.getString("mode", "avg") != "avg")
    return ctx.fail("mode '" + ctx.getString("mode", "avg") +
                    "' is not supported (only avg)");
  int64_t ratio = ctx.getInt("sampling_ratio", 0);
  if (ratio <= 0)
    return ctx.fail("an adaptive sampling_ratio (0: a sample count per "
                    "region) is not supported");
  int64_t outH = ctx.getInt("output_height", 1),
          outW = ctx.getInt("output_width", 1);
  if (outH < 1 || outW < 1)
    return ctx.fail("output_height and output_width must be positive");
  std::string transform = ctx.getString(
      "coordinate_transformation_mode",
      ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return ctx.fail("coordinate_transformation_mode '" + transform +
                    "' is not supported");
  bool halfPixel = transform == "half_pixel";
  double scale = ctx.getFloat("spatial_scale", 1.0);
  int64_t n = xShape[0], channels = xShape[1], h = xShape[2], w = xShape[3],
          regions = roiShape[0];

  auto x = ctx.input(0), rois = ctx.input(1), batch = ctx.input(2);
  if (failed(x) || failed(rois) || failed(batch))
    return failure();
  Type e = cast<RankedTensorType>(x->getType()).getElementType();
  Type coord = e.getIntOrFloatBitWidth() < 32 ? ctx.builder().getF32Type() : e;
  OpChain b{ctx, coord};
  OpChain wide{ctx, ctx.builder().getF64Type()};
  auto r = ctx.convert(*rois, coord);
  if (failed(r))
    return failure();
  double offset = halfPixel ? 0.5 : 0.0;
  FailureOr<Value> corner[4];
  for (int64_t k = 0; k < 4; ++k)
    corner[k] = roiColumn(ctx, b, *r, k, scale);
  for (auto &c : corner)
    if (failed(c))
      return failure();
  auto extent = [&](int64_t lo, int64_t hi) {
    auto d = b.bin<tg::SubOp>(*corner[hi], *corner[lo]);
    return halfPixel ? d : b.bin<tg::MaxOp>(d, b.c(1));
  };
  auto rows = sampleFractions(ctx, coord, outH, ratio),
       cols = sampleFractions(ctx, coord, outW, ratio);
  auto startY = b.bin<tg::SubOp>(*corner[1], b.c(offset)),
       startX = b.bin<tg::SubOp>(*corner[0], b.c(offset));
  auto extentY = extent(1, 3), extentX = extent(0, 2);
  if (failed(rows) || failed(cols) || failed(startY) || failed(startX) ||
      failed(extentY) || failed(extentX))
    return failure();
  auto ty = axisTaps(b, wide, *startY, *extentY, *rows, h);
  auto tx = axisTaps(b, wide, *startX, *extentX, *cols, w);
  if (failed(ty) || failed(tx))
    return failure();

  // X as rows of channels [N * H * W, C]; the image of each region as
  // b * H * W, [R, 1, 1].
  auto xRows = ctx.transpose(*x, {0, 2, 3, 1});
  if (failed(xRows))
    return failure();
  xRows = ctx.reshape(*xRows, {n * h * w, channels});
  auto image = wide.bin<tg::MulOp>(wide.cast(*batch, wide.e),
                                   wide.c(double(h * w)));
  if (failed(xRows) || failed(image))
    return failure();
  auto imageCol = ctx.reshape(*image, {regions, 1, 1, 1, 1});
  if (failed(imageCol))
    return failure();
  FailureOr<Value> sum = failure();
  for (int yTap = 0; yTap < 2; ++yTap) {
    for (int xTap = 0; xTap < 2; ++xTap) {
      Value py = yTap ? ty->high : ty->low, px = xTap ? tx->high : tx->low;
      Value wy = yTap ? ty->highWeight : ty->lowWeight,
            wx = xTap ? tx->highWeight : tx->lowWeight;
      auto rowOffset = wide.bin<tg::MulOp>(py, wide.c(double(w)));
      if (failed(rowOffset))
        return failure();
      // Samples as [R, H', ratio, W', ratio] from the start, so that the
      // sum of the taps feeds the mean without a reshape between them.
      auto rowTerm = ctx.reshape(*rowOffset, {regions, outH, ratio, 1, 1});
      auto colTerm = ctx.reshape(px, {regions, 1, 1, outW, ratio});
      auto wyCol = ctx.reshape(wy, {regions, outH, ratio, 1, 1});
      auto wxRow = ctx.reshape(wx, {regions, 1, 1, outW, ratio});
      if (failed(rowTerm) || failed(colTerm) || failed(wyCol) || failed(wxRow))
        return failure();
      auto index = wide.cast(
          wide.bin<tg::AddOp>(wide.bin<tg::AddOp>(*imageCol, *rowTerm),
                              *colTerm),
          ctx.builder().getI64Type());
      auto weight = b.bin<tg::MulOp>(*wyCol, *wxRow);
      if (failed(index) || failed(weight))
        return failure();
      auto picked = ctx.create<tg::GatherOp>({*xRows, *index},
                                             {ctx.i64Attr("axis", 0)});
      auto w6 = ctx.reshape(*weight, {regions, outH, ratio, outW, ratio, 1});
      if (failed(picked) || failed(w6))
        return failure();
      auto term = b.bin<tg::MulOp>(*picked, b.cast(*w6, e));
      sum = succeeded(sum) ? b.bin<tg::AddOp>(sum, term) : term;
      if (failed(sum))
        return failure();
    }
  }
  // [R, H', ratio, W', ratio, C] -> mean over the samples -> [R, C, H', W'].
  auto mean = ctx.create<tg::ReduceMeanOp>(
      *sum, {ctx.arrayAttr("axes", {2, 4}), ctx.boolAttr("keepdims", false)});
  if (failed(mean))
    return failure();
  auto y = ctx.transpose(*mean, {0, 3, 1, 2});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  // Regions of data-dependent length: so is the result.
  ImportedValue *in = ctx.importer().lookup(ctx.node().input(1));
  std::optional<BoundedDim> padded = in ? getBound(in->value) : std::nullopt;
  if (padded) {
    if (padded->dim != 0)
      return ctx.fail("rois padded along their coordinates");
    if (ImportedValue *out = ctx.importer().lookup(ctx.node().output(0)))
      setBound(ctx, *out, *padded);
  }
  return success();
}

} // namespace

void onnx_to_tg::populateRoiAlignHandlers(HandlerTable &table) {
  table["RoiAlign"] = importRoiAlign;
}
