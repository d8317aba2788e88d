//===- Resize.cpp - ONNX Resize and Upsample to tg.resize -----------------===//
//
// Part of Loom. Resize (opsets 10 to 13: scales or sizes, which must be
// known at import time; nearest, linear and cubic; every coordinate
// transformation mode but tf_crop_and_resize) and the older Upsample, which
// is Resize with asymmetric coordinates and nearest rounding down.
//
// Sizes known only at run time but bounded (tracked, RunTimeLengths.cpp and
// ValueRanges.cpp: a mask resized to its box's size) in one or two
// dimensions give a result padded to the bounds there: each such dimension
// is resampled by a product with the [bound, in] matrix of the taps'
// weights, computed at run time from the size as the interpreter's
// resizeTaps computes them (include/loom/Interpreter/ResizeKernel.h).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

/// The options of one Resize node (its attributes).
struct ResizeOptions {
  tg::ResizeMode mode;
  tg::ResizeCoordinateMode coordinates;
  tg::ResizeNearestMode nearest;
  double cubicA;
  bool excludeOutside;
};

FailureOr<ResizeOptions> readOptions(NodeContext &ctx, llvm::StringRef mode,
                                     llvm::StringRef coordinateMode,
                                     llvm::StringRef nearestMode) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
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
  return ResizeOptions{*modeValue, *coordinateValue, *nearestValue,
                       ctx.getFloat("cubic_coeff_a", -0.75),
                       ctx.getInt("exclude_outside", 0) != 0};
}

/// tg.resize of `x` to `sizes` (and `scales`, when given).
FailureOr<Value> createResize(NodeContext &ctx, Value x,
                              llvm::ArrayRef<int64_t> sizes,
                              std::optional<SmallVector<double>> scales,
                              const ResizeOptions &o) {
  MLIRContext *context = ctx.context();
  SmallVector<NamedAttribute> attrs{
      ctx.arrayAttr("sizes", sizes),
      ctx.namedAttr("mode", tg::ResizeModeAttr::get(context, o.mode)),
      ctx.namedAttr("coordinate_transformation_mode",
                    tg::ResizeCoordinateModeAttr::get(context, o.coordinates)),
      ctx.namedAttr("nearest_mode",
                    tg::ResizeNearestModeAttr::get(context, o.nearest)),
      ctx.f64Attr("cubic_coeff_a", o.cubicA),
      ctx.boolAttr("exclude_outside", o.excludeOutside)};
  if (scales)
    attrs.push_back(
        ctx.namedAttr("scales", ctx.builder().getDenseF64ArrayAttr(*scales)));
  return ctx.create<tg::ResizeOp>(x, attrs);
}

/// Builds tg.resize for input 0 from either `scales` or `sizes`.
LogicalResult buildResize(NodeContext &ctx,
                          std::optional<SmallVector<double>> scales,
                          std::optional<SmallVector<int64_t>> sizes,
                          llvm::StringRef mode, llvm::StringRef coordinateMode,
                          llvm::StringRef nearestMode) {
  auto options = readOptions(ctx, mode, coordinateMode, nearestMode);
  if (failed(options))
    return failure();
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
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto y = createResize(ctx, *x, outSizes, scales, *options);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// The input coordinate of every output index `i` (an [S, 1] f64 constant)
/// for a dimension resized from `n` to the run-time `length` (f64), as
/// resizeTaps computes it.
FailureOr<Value> sourceCoordinates(OpChain &b, Value i, int64_t n,
                                   Value length,
                                   tg::ResizeCoordinateMode mode) {
  NodeContext &ctx = b.ctx;
  auto positive = ctx.create<tg::GreaterOp>({length, b.c(0)});
  // A length of 0 has no valid output: its scale reads as 1.
  auto scale = b.select(positive, b.bin<tg::DivOp>(length, b.c(double(n))),
                        b.c(1));
  auto half = b.bin<tg::AddOp>(i, b.c(0.5));
  auto halfPixel = b.bin<tg::SubOp>(b.bin<tg::DivOp>(half, scale), b.c(0.5));
  switch (mode) {
  case tg::ResizeCoordinateMode::HalfPixel:
    return halfPixel;
  case tg::ResizeCoordinateMode::PytorchHalfPixel:
    return b.select(ctx.create<tg::GreaterOp>({length, b.c(1)}), halfPixel,
                    b.c(-0.5));
  case tg::ResizeCoordinateMode::AlignCorners: {
    auto last = b.bin<tg::MaxOp>(b.bin<tg::SubOp>(length, b.c(1)), b.c(1));
    auto c = b.bin<tg::DivOp>(b.bin<tg::MulOp>(i, b.c(double(n - 1))), last);
    return b.select(ctx.create<tg::EqualOp>({length, b.c(1)}), b.c(0), c);
  }
  case tg::ResizeCoordinateMode::Asymmetric:
    return b.bin<tg::DivOp>(i, scale);
  case tg::ResizeCoordinateMode::TfHalfPixelForNN:
    return b.bin<tg::DivOp>(half, scale);
  }
  llvm_unreachable("unknown coordinate transformation mode");
}

/// The weights of the taps at floor-like `first`, `first + 1`, ... for the
/// distance `r` in (0, 1] of the coordinate from its left neighbour.
FailureOr<SmallVector<Value>> tapWeights(OpChain &b, Value r,
                                         const ResizeOptions &o) {
  NodeContext &ctx = b.ctx;
  auto add = [&](FailureOr<Value> x, double v) {
    return b.bin<tg::AddOp>(x, b.c(v));
  };
  auto mul = [&](FailureOr<Value> x, FailureOr<Value> y) {
    return b.bin<tg::MulOp>(x, y);
  };
  SmallVector<FailureOr<Value>> w;
  switch (o.mode) {
  case tg::ResizeMode::Nearest: {
    FailureOr<Value> up = b.c(1);
    switch (o.nearest) {
    case tg::ResizeNearestMode::RoundPreferFloor:
      up = b.select(ctx.create<tg::GreaterOp>({r, b.c(0.5)}), b.c(1), b.c(0));
      break;
    case tg::ResizeNearestMode::RoundPreferCeil:
      up = b.select(ctx.create<tg::GreaterEqualOp>({r, b.c(0.5)}), b.c(1),
                    b.c(0));
      break;
    case tg::ResizeNearestMode::Floor:
      up = b.select(ctx.create<tg::GreaterEqualOp>({r, b.c(1)}), b.c(1),
                    b.c(0));
      break;
    case tg::ResizeNearestMode::Ceil:
      up = b.bin<tg::AddOp>(b.bin<tg::MulOp>(r, b.c(0)), b.c(1));
      break;
    }
    w = {b.bin<tg::SubOp>(b.c(1), up), up};
    break;
  }
  case tg::ResizeMode::Linear:
    w = {b.bin<tg::SubOp>(b.c(1), r), r};
    break;
  case tg::ResizeMode::Cubic: {
    double a = o.cubicA;
    auto s = b.bin<tg::SubOp>(b.c(1), r);
    // ((a (t + 1) - 5a) (t + 1) + 8a) (t + 1) - 4a, for t = r and 1 - r.
    auto outer = [&](FailureOr<Value> t) {
      auto t1 = add(t, 1);
      return add(mul(add(mul(add(mul(t1, b.c(a)), -5 * a), t1), 8 * a), t1),
                 -4 * a);
    };
    // ((a + 2) t - (a + 3)) t t + 1
    auto inner = [&](FailureOr<Value> t) {
      return add(mul(mul(add(mul(t, b.c(a + 2)), -(a + 3)), t), t), 1);
    };
    w = {outer(r), inner(r), inner(s), outer(s)};
    break;
  }
  }
  SmallVector<Value> out;
  for (FailureOr<Value> &x : w) {
    if (failed(x))
      return failure();
    out.push_back(*x);
  }
  return out;
}

/// The [S, n] matrix whose row i holds the weights output i of a dimension
/// resized from `n` to the run-time `size` (rank-0 i64, at most S) gives the
/// inputs, in f64: the taps of resizeTaps, clamped into [0, n), summed.
FailureOr<Value> resizeMatrix(NodeContext &ctx, int64_t n, int64_t S,
                              Value size, const ResizeOptions &o) {
  Type f64 = Float64Type::get(ctx.context());
  OpChain b{ctx, f64};
  auto iota = [&](ArrayRef<int64_t> shape, int64_t count) {
    HostTensor t;
    t.dataType = onnx::TensorProto::DOUBLE;
    t.shape.assign(shape.begin(), shape.end());
    for (int64_t k = 0; k < count; ++k)
      t.floats.push_back(double(k));
    return ctx.materialize(t, "resize_index");
  };
  auto i = iota({S, 1}, S), j = iota({1, n}, n);
  auto length = b.cast(size, f64);
  if (failed(i) || failed(j) || failed(length))
    return failure();
  auto c = sourceCoordinates(b, *i, n, *length, o.coordinates);
  if (failed(c))
    return failure();
  // first is the neighbour left of c, r in (0, 1] the distance to it.
  auto left = b.bin<tg::SubOp>(ceilAtRunTime(b, *c), b.c(1));
  auto r = b.bin<tg::SubOp>(*c, left);
  if (failed(r))
    return failure();
  auto weights = tapWeights(b, *r, o);
  if (failed(weights))
    return failure();
  int64_t firstOffset = o.mode == tg::ResizeMode::Cubic ? -1 : 0;
  SmallVector<Value> taps;
  for (size_t k = 0; k < weights->size(); ++k) {
    auto idx = b.bin<tg::AddOp>(left, b.c(double(firstOffset + int64_t(k))));
    auto clamped = b.bin<tg::MinOp>(b.bin<tg::MaxOp>(idx, b.c(0)),
                                    b.c(double(n - 1)));
    if (failed(idx) || failed(clamped))
      return failure();
    taps.push_back(*clamped);
    if (o.excludeOutside) {
      auto w = b.select(ctx.create<tg::EqualOp>({*idx, *clamped}),
                        (*weights)[k], b.c(0));
      if (failed(w))
        return failure();
      (*weights)[k] = *w;
    }
  }
  if (o.excludeOutside) {
    FailureOr<Value> sum = (*weights)[0];
    for (size_t k = 1; k < weights->size(); ++k)
      sum = b.bin<tg::AddOp>(sum, (*weights)[k]);
    auto nonzero = b.select(ctx.create<tg::EqualOp>({*sum, b.c(0)}), b.c(1),
                            sum);
    for (Value &w : *weights) {
      auto scaled = b.bin<tg::DivOp>(w, nonzero);
      if (failed(scaled))
        return failure();
      w = *scaled;
    }
  }
  FailureOr<Value> matrix = failure();
  for (size_t k = 0; k < taps.size(); ++k) {
    auto term = b.select(ctx.create<tg::EqualOp>({taps[k], *j}),
                         (*weights)[k], b.c(0));
    matrix = k == 0 ? term : b.bin<tg::AddOp>(matrix, term);
  }
  return matrix;
}

/// `y` resampled along dimension `d` (of size n) to the run-time `size`,
/// padded to its bound S: a product with resizeMatrix.
FailureOr<Value> resizeAlong(NodeContext &ctx, Value y, int64_t d, int64_t S,
                             Value size, const ResizeOptions &o) {
  auto type = cast<RankedTensorType>(y.getType());
  int64_t n = type.getDimSize(d), outer = 1, inner = 1;
  auto matrix = resizeMatrix(ctx, n, S, size, o);
  if (failed(matrix))
    return failure();
  auto weights = ctx.convert(*matrix, type.getElementType());
  for (int64_t k = 0; k < type.getRank(); ++k)
    (k < d ? outer : inner) *= k == d ? 1 : type.getDimSize(k);
  if (failed(weights))
    return failure();
  // The last dimension: one product [outer, n] x [n, S]; another: the
  // matrix applied to every [n, inner] slice.
  FailureOr<Value> product = failure();
  if (inner == 1) {
    auto rows = ctx.reshape(y, {outer, n});
    auto columns = ctx.transpose(*weights, {1, 0});
    if (failed(rows) || failed(columns))
      return failure();
    product = ctx.create<tg::MatmulOp>({*rows, *columns});
  } else {
    auto rows = ctx.reshape(y, {outer, n, inner});
    if (failed(rows))
      return failure();
    product = ctx.create<tg::MatmulOp>({*weights, *rows});
  }
  if (failed(product))
    return failure();
  SmallVector<int64_t> outShape(type.getShape());
  outShape[d] = S;
  return ctx.reshape(*product, outShape);
}

/// Resize to sizes (input 3) tracked with one or two elements of
/// data-dependent value: the static dimensions by tg.resize, those by
/// products with resizeMatrix; the result is padded there, their lengths
/// the sizes.
LogicalResult resizeToRunTimeSizes(NodeContext &ctx,
                                   ArrayRef<RunTimeInt> sizes,
                                   const ResizeOptions &o) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  if (int64_t(sizes.size()) != rank)
    return ctx.fail("'sizes' needs " + Twine(rank) + " entries");
  if (inputBound(ctx, 0))
    return ctx.fail("a Resize of a value of data-dependent length to sizes "
                    "known only at run time is not supported");
  SmallVector<int64_t> runTime, staticSizes(in.begin(), in.end());
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d].exact)
      staticSizes[d] = sizes[d].upper;
    else
      runTime.push_back(d);
  }
  if (runTime.size() > 2) {
    std::string bounds;
    for (int64_t d : runTime)
      bounds += (bounds.empty() ? "" : ", ") + std::to_string(sizes[d].upper);
    return ctx.fail("sizes (input 3) are known only at run time in " +
                    Twine(runTime.size()) + " dimensions (at most " + bounds +
                    "); Loom pads at most two dimensions of a value "
                    "(docs/ONNX/Import.md)");
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Value y = *x;
  if (ArrayRef<int64_t>(staticSizes) != in) {
    auto resized = createResize(ctx, y, staticSizes, std::nullopt, o);
    if (failed(resized))
      return failure();
    y = *resized;
  }
  SmallVector<BoundedDim> bounds;
  for (int64_t d : runTime) {
    int64_t S = sizes[d].upper;
    if (S < 1 || S > kMaxExtent || in[d] < 1)
      return ctx.fail("the bound " + Twine(S) + " of the run-time size of "
                      "dimension " + Twine(d) + " is not in [1, 2^24], or "
                      "the input is empty there");
    auto size = runTimeElement(ctx, 3, sizes[d], d);
    if (failed(size))
      return failure();
    auto resized = resizeAlong(ctx, y, d, S, *size, o);
    if (failed(resized))
      return failure();
    y = *resized;
    bounds.push_back({d, *size});
  }
  ctx.setOutput(0, y);
  if (ImportedValue *out = ctx.importer().lookup(ctx.node().output(0)))
    setBounds(ctx, *out, bounds);
  return success();
}

LogicalResult importResizeToRunTimeSizes(NodeContext &ctx,
                                         ArrayRef<RunTimeInt> sizes,
                                         llvm::StringRef mode,
                                         llvm::StringRef coordinateMode,
                                         llvm::StringRef nearestMode) {
  auto options = readOptions(ctx, mode, coordinateMode, nearestMode);
  if (failed(options))
    return failure();
  return resizeToRunTimeSizes(ctx, sizes, *options);
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
  ImportedValue *sizesIn =
      ctx.hasInput(sizesAt)
          ? ctx.importer().lookup(ctx.node().input(sizesAt))
          : nullptr;
  if (sizesIn && sizesIn->runTimeInts && !sizesIn->known)
    return importResizeToRunTimeSizes(ctx, *sizesIn->runTimeInts, mode,
                                      coordinateMode, nearestMode);
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
