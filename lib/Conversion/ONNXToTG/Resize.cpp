//===- Resize.cpp - ONNX Resize and Upsample to tg.resize -----------------===//
//
// Part of Loom. Resize (opsets 10 to 13: scales or sizes, which must be
// known at import time; nearest, linear and cubic; every coordinate
// transformation mode but tf_crop_and_resize) and the older Upsample, which
// is Resize with asymmetric coordinates and nearest rounding down.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

/// Builds tg.resize for input 0 from either `scales` or `sizes`.
LogicalResult buildResize(NodeContext &ctx,
                          std::optional<SmallVector<double>> scales,
                          std::optional<SmallVector<int64_t>> sizes,
                          llvm::StringRef mode, llvm::StringRef coordinateMode,
                          llvm::StringRef nearestMode) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
  llvm::ArrayRef<int64_t> in = ctx.inputShape(0);
  size_t rank = in.size();
  SmallVector<int64_t> outSizes;
  if (sizes) {
    if (sizes->size() != rank)
      return ctx.fail("'sizes' needs " + Twine(rank) + " entries");
    outSizes = *sizes;
    scales.reset();
  } else {
    if (!scales || scales->size() != rank)
      return ctx.fail("'scales' needs " + Twine(rank) + " entries");
    for (size_t d = 0; d < rank; ++d) {
      double s = (*scales)[d];
      if (!(s > 0) || std::isinf(s) ||
          static_cast<double>(in[d]) * s > static_cast<double>(1ll << 40))
        return ctx.fail("scales must be positive and give sizes below 2^40");
      outSizes.push_back(
          static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * s)));
    }
  }
  auto modeValue = tg::symbolizeResizeMode(mode);
  if (!modeValue)
    return ctx.fail("'mode' must be nearest, linear or cubic, got '" + mode +
                    "'");
  auto coordinateValue = tg::symbolizeResizeCoordinateMode(coordinateMode);
  if (!coordinateValue)
    return ctx.fail("'coordinate_transformation_mode' must be half_pixel, "
                    "pytorch_half_pixel, align_corners, asymmetric or "
                    "tf_half_pixel_for_nn, got '" +
                    coordinateMode + "'");
  auto nearestValue = tg::symbolizeResizeNearestMode(nearestMode);
  if (!nearestValue)
    return ctx.fail("'nearest_mode' must be round_prefer_floor, "
                    "round_prefer_ceil, floor or ceil, got '" +
                    nearestMode + "'");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  MLIRContext *context = ctx.context();
  SmallVector<NamedAttribute> attrs{
      ctx.arrayAttr("sizes", outSizes),
      ctx.namedAttr("mode", tg::ResizeModeAttr::get(context, *modeValue)),
      ctx.namedAttr(
          "coordinate_transformation_mode",
          tg::ResizeCoordinateModeAttr::get(context, *coordinateValue)),
      ctx.namedAttr("nearest_mode",
                    tg::ResizeNearestModeAttr::get(context, *nearestValue)),
      ctx.f64Attr("cubic_coeff_a", ctx.getFloat("cubic_coeff_a", -0.75)),
      ctx.boolAttr("exclude_outside", ctx.getInt("exclude_outside", 0) != 0)};
  if (scales)
    attrs.push_back(
        ctx.namedAttr("scales", ctx.builder().getDenseF64ArrayAttr(*scales)));
  auto y = ctx.create<tg::ResizeOp>(*x, attrs);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importResize(NodeContext &ctx) {
  std::string mode = ctx.getString("mode", "nearest");
  std::string coordinateMode =
      ctx.getString("coordinate_transformation_mode",
                    ctx.opset() < 11 ? "asymmetric" : "half_pixel");
  std::string nearestMode = ctx.getString(
      "nearest_mode", ctx.opset() < 11 ? "floor" : "round_prefer_floor");
  if (coordinateMode == "tf_crop_and_resize")
    return ctx.fail("coordinate_transformation_mode 'tf_crop_and_resize' is "
                    "not supported");
  if (ctx.getInt("antialias", 0))
    return ctx.fail("antialias is not supported");
  if (ctx.hasAttr("axes"))
    return ctx.fail("'axes' is not supported");
  if (ctx.getString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return ctx.fail("keep_aspect_ratio_policy other than 'stretch' is not "
                    "supported");
  // Opset 10: (X, scales); since 11: (X, roi, scales, sizes).
  unsigned scalesAt = ctx.opset() < 11 ? 1 : 2, sizesAt = 3;
  std::optional<SmallVector<int64_t>> sizes;
  std::optional<SmallVector<double>> scales;
  if (ctx.hasInput(sizesAt) && !ctx.inputShape(sizesAt).empty() &&
      ctx.inputShape(sizesAt)[0] > 0) {
    auto s = ctx.constantInts(sizesAt, "sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (ctx.hasInput(scalesAt)) {
    auto s = ctx.constantDoubles(scalesAt, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    return ctx.fail("needs scales or sizes");
  }
  return buildResize(ctx, scales, sizes, mode, coordinateMode, nearestMode);
}

LogicalResult importUpsample(NodeContext &ctx) {
  std::optional<SmallVector<double>> scales;
  if (ctx.hasInput(1)) {
    auto s = ctx.constantDoubles(1, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    scales = ctx.getFloats("scales");
  }
  std::string mode = ctx.getString("mode", "nearest");
  if (mode == "bilinear")
    mode = "linear";
  return buildResize(ctx, scales, std::nullopt, mode, "asymmetric", "floor");
}

} // namespace

void onnx_to_tg::populateResizeHandlers(HandlerTable &table) {
  table["Resize"] = importResize;
  table["Upsample"] = importUpsample;
}
