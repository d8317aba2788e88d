//===- GridSample.cpp - ONNX GridSample as gathers of taps ----------------===//
//
// Part of Loom. GridSample (opset 16: 4-D input, modes bilinear, nearest,
// bicubic; opset 20 and later: r spatial dimensions, modes linear, nearest,
// cubic) with every padding mode (zeros, border, reflection) and both
// align_corners settings, as PyTorch's grid_sampler defines them (ONNX's
// reference follows it).
//
// There is no sampling op in tg: the importer writes what it computes. Per
// spatial dimension j of size S, the grid's coordinate g becomes a source
// position u (unnormalised; clamped or reflected by the padding mode), then
// the interpolation's taps: integer positions c with weights (nearest: the
// rounded u, weight 1; linear: floor(u) and floor(u) + 1, weights 1 - t and
// t; cubic: floor(u) - 1 .. floor(u) + 2 with the cubic-convolution
// weights of t, A = -0.75, each tap padded on its own). For every
// combination of taps across the dimensions the input is gathered at the
// linear index n * prod(S) + sum_j c_j * stride_j (in f64, exact below
// 2^53) as rows of its channels, weighted by the product of the weights,
// zero where a tap falls outside the input, and summed:
//
//   X [N, C, S...] -> [N * prod(S), C] (transpose, reshape)
//   gather rows by index [N, D...]     -> [N, D..., C]
//   sum over taps of rows * weight      -> [N, D..., C] -> [N, C, D...]
//
// Coordinates are computed in the input's element type, or f32 for
// narrower types.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

enum class Interpolation { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// One tap along one spatial dimension: an integral source position and
/// its weight (none: 1).
struct Tap {
  Value position;
  std::optional<Value> weight;
};

/// A tap ready for the gathers: its weight, zero where the position lies
/// outside the input, and its term of the linear index (the position
/// clamped into range times the dimension's stride, in f64).
struct TapTerm {
  Value weight;
  Value offset;
};

/// The per-dimension arithmetic of the sampler, on coordinate tensors of
/// shape [N, D...].
struct Sampler {
  OpChain &b;
  Padding padding;
  bool alignCorners;

  /// The grid's normalised coordinate g in [-1, 1] as a position in
  /// [0, size - 1] (align_corners) or [-0.5, size - 0.5].
  FailureOr<Value> unnormalize(Value g, int64_t size) {
    if (alignCorners)
      return b.bin<tg::MulOp>(
          b.bin<tg::DivOp>(b.bin<tg::AddOp>(g, b.c(1)), b.c(2)),
          b.c(double(size - 1)));
    return b.bin<tg::DivOp>(
        b.bin<tg::SubOp>(b.bin<tg::MulOp>(b.bin<tg::AddOp>(g, b.c(1)),
                                          b.c(double(size))),
                         b.c(1)),
        b.c(2));
  }

  FailureOr<Value> clip(FailureOr<Value> u, int64_t size) {
    return b.bin<tg::MinOp>(b.bin<tg::MaxOp>(u, b.c(0)), b.c(double(size - 1)));
  }

  /// u reflected into [low, high] (given doubled, as PyTorch does):
  /// |u - low| folded by the span, mirrored on every odd fold.
  FailureOr<Value> reflect(Value u, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return b.bin<tg::MulOp>(u, b.c(0));
    double low = double(twiceLow) / 2, span = double(twiceHigh - twiceLow) / 2;
    auto shifted = b.bin<tg::SubOp>(u, b.c(low));
    auto distance = b.bin<tg::MaxOp>(shifted, b.un<tg::NegOp>(shifted));
    if (failed(distance))
      return failure();
    auto extra = b.ctx.create<tg::ModOp>({*distance, b.c(span)},
                                         {b.ctx.boolAttr("fmod", true)});
    auto folds = b.bin<tg::DivOp>(*distance, b.c(span));
    if (failed(folds))
      return failure();
    auto flips = floorAtRunTime(b, *folds);
    auto parity = b.ctx.create<tg::ModOp>({*flips, b.c(2)},
                                          {b.ctx.boolAttr("fmod", true)});
    return b.select(b.bin<tg::EqualOp>(parity, b.c(0)),
                    b.bin<tg::AddOp>(extra, b.c(low)),
                    b.bin<tg::AddOp>(b.bin<tg::SubOp>(b.c(span), extra),
                                     b.c(low)));
  }

  /// The padding mode applied to a position (zeros: unchanged).
  FailureOr<Value> pad(FailureOr<Value> u, int64_t size) {
    if (failed(u))
      return failure();
    switch (padding) {
    case Padding::Zeros:
      return u;
    case Padding::Border:
      return clip(u, size);
    case Padding::Reflection:
      return clip(alignCorners ? reflect(*u, 0, 2 * (size - 1))
                               : reflect(*u, -1, 2 * size - 1),
                  size);
    }
    llvm_unreachable("unknown padding mode");
  }

  /// Keys's cubic convolution weight (A = -0.75) at distance d <= 1 ...
  FailureOr<Value> cubicNear(FailureOr<Value> d) {
    constexpr double A = -0.75;
    return b.bin<tg::AddOp>(
        b.bin<tg::MulOp>(
            b.bin<tg::MulOp>(b.bin<tg::SubOp>(b.bin<tg::MulOp>(d, b.c(A + 2)),
                                              b.c(A + 3)),
                             d),
            d),
        b.c(1));
  }
  /// ... and at 1 < d < 2.
  FailureOr<Value> cubicFar(FailureOr<Value> d) {
    constexpr double A = -0.75;
    auto inner = b.bin<tg::AddOp>(
        b.bin<tg::MulOp>(
            b.bin<tg::SubOp>(b.bin<tg::MulOp>(d, b.c(A)), b.c(5 * A)), d),
        b.c(8 * A));
    return b.bin<tg::SubOp>(b.bin<tg::MulOp>(inner, d), b.c(4 * A));
  }

  /// The taps of one spatial dimension for grid coordinates g.
  FailureOr<SmallVector<Tap>> taps(Interpolation mode, Value g, int64_t size) {
    auto u = unnormalize(g, size);
    if (failed(u))
      return failure();
    auto positioned = [&](FailureOr<Value> p, FailureOr<Value> w,
                          bool weighted) -> FailureOr<Tap> {
      if (failed(p) || (weighted && failed(w)))
        return failure();
      return Tap{*p, weighted ? std::optional<Value>(*w) : std::nullopt};
    };
    SmallVector<FailureOr<Tap>> out;
    switch (mode) {
    case Interpolation::Nearest: {
      auto padded = pad(u, size);
      if (failed(padded))
        return failure();
      out.push_back(positioned(roundHalfEvenAtRunTime(b, *padded), failure(),
                               /*weighted=*/false));
      break;
    }
    case Interpolation::Linear: {
      auto padded = pad(u, size);
      if (failed(padded))
        return failure();
      auto base = floorAtRunTime(b, *padded);
      auto t = b.bin<tg::SubOp>(*padded, base);
      out.push_back(positioned(base, b.bin<tg::SubOp>(b.c(1), t), true));
      out.push_back(positioned(b.bin<tg::AddOp>(base, b.c(1)), t, true));
      break;
    }
    case Interpolation::Cubic: {
      auto base = floorAtRunTime(b, *u);
      auto t = b.bin<tg::SubOp>(*u, base);
      auto oneMinus = b.bin<tg::SubOp>(b.c(1), t);
      FailureOr<Value> weights[] = {
          cubicFar(b.bin<tg::AddOp>(t, b.c(1))), cubicNear(t),
          cubicNear(oneMinus), cubicFar(b.bin<tg::AddOp>(oneMinus, b.c(1)))};
      for (int64_t o = -1; o <= 2; ++o)
        out.push_back(positioned(
            pad(b.bin<tg::AddOp>(base, b.c(double(o))), size), weights[o + 1],
            true));
      break;
    }
    }
    SmallVector<Tap> taps;
    for (auto &t : out) {
      if (failed(t))
        return failure();
      taps.push_back(*t);
    }
    return taps;
  }

  /// 1 where 0 <= position <= size - 1, else 0 (in the coordinates' type).
  FailureOr<Value> inside(Value position, int64_t size) {
    auto lo = b.bin<tg::GreaterEqualOp>(position, b.c(0));
    auto hi = b.bin<tg::LessEqualOp>(position, b.c(double(size - 1)));
    return b.select(lo, b.select(hi, b.c(1), b.c(0)), b.c(0));
  }

  /// \p tap of a dimension of \p size and \p stride as a TapTerm.
  FailureOr<TapTerm> term(const Tap &tap, int64_t size, double stride,
                          OpChain &wide) {
    auto weight = inside(tap.position, size);
    if (tap.weight)
      weight = b.bin<tg::MulOp>(weight, *tap.weight);
    auto offset = wide.bin<tg::MulOp>(
        wide.cast(clip(tap.position, size), wide.e), wide.c(stride));
    if (failed(weight) || failed(offset))
      return failure();
    return TapTerm{*weight, *offset};
  }
};

FailureOr<Interpolation> readMode(NodeContext &ctx, int64_t spatialRank) {
  std::string mode =
      ctx.getString("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  auto parsed = llvm::StringSwitch<std::optional<Interpolation>>(mode)
                    .Cases({"bilinear", "linear"}, Interpolation::Linear)
                    .Case("nearest", Interpolation::Nearest)
                    .Cases({"bicubic", "cubic"}, Interpolation::Cubic)
                    .Default(std::nullopt);
  if (!parsed)
    return ctx.fail("'mode' must be linear (bilinear), nearest or cubic "
                    "(bicubic), got '" +
                    mode + "'");
  if (*parsed == Interpolation::Cubic && spatialRank != 2)
    return ctx.fail("cubic mode needs a 4-D input (2 spatial dimensions), "
                    "got " +
                    Twine(spatialRank));
  return *parsed;
}

FailureOr<Padding> readPadding(NodeContext &ctx) {
  std::string padding = ctx.getString("padding_mode", "zeros");
  auto parsed = llvm::StringSwitch<std::optional<Padding>>(padding)
                    .Case("zeros", Padding::Zeros)
                    .Case("border", Padding::Border)
                    .Case("reflection", Padding::Reflection)
                    .Default(std::nullopt);
  if (!parsed)
    return ctx.fail("'padding_mode' must be zeros, border or reflection, got '" +
                    padding + "'");
  return *parsed;
}

/// Checks the operands' shapes: X [N, C, S_1..S_r], grid [N, D_1..D_r, r].
LogicalResult checkShapes(NodeContext &ctx) {
  ArrayRef<int64_t> x = ctx.inputShape(0), grid = ctx.inputShape(1);
  int64_t r = int64_t(x.size()) - 2;
  if (r < 1 || (ctx.opset() < 20 && r != 2))
    return ctx.fail("input X must have rank " +
                    Twine(ctx.opset() < 20 ? "4" : "3 or more") + ", got " +
                    Twine(x.size()));
  if (int64_t(grid.size()) != r + 2 || grid.back() != r || grid[0] != x[0])
    return ctx.fail("grid must have shape [N, D_1, ..., D_r, r] with N = " +
                    Twine(x[0]) + " and r = " + Twine(r) + ", got " +
                    safetensors::formatShape(grid));
  for (int64_t d : x.drop_front(2))
    if (d < 1)
      return ctx.fail("input X has an empty spatial dimension");
  return success();
}

/// The batch offsets n * prod(S) as an f64 tensor [N, 1, ..., 1].
FailureOr<Value> batchOffsets(NodeContext &ctx, int64_t n, int64_t plane,
                              int64_t spatialRank) {
  HostTensor t;
  t.dataType = onnx::TensorProto::DOUBLE;
  t.shape.assign(spatialRank + 1, 1);
  t.shape[0] = n;
  for (int64_t i = 0; i < n; ++i)
    t.floats.push_back(double(i) * double(plane));
  return ctx.materialize(t, "grid_sample_batch_offsets");
}

LogicalResult importGridSample(NodeContext &ctx) {
  if (ctx.numInputs() != 2 || !ctx.hasInput(0) || !ctx.hasInput(1))
    return ctx.fail("needs inputs X and grid");
  if (failed(ctx.requireFloatInput(0)) || failed(ctx.requireFloatInput(1)) ||
      failed(checkShapes(ctx)))
    return failure();
  ArrayRef<int64_t> xShape = ctx.inputShape(0), gridShape = ctx.inputShape(1);
  int64_t r = int64_t(xShape.size()) - 2, n = xShape[0], channels = xShape[1];
  auto mode = readMode(ctx, r);
  auto padding = readPadding(ctx);
  auto x = ctx.input(0), grid = ctx.input(1);
  if (failed(mode) || failed(padding) || failed(x) || failed(grid))
    return failure();
  Type xType = cast<RankedTensorType>(x->getType()).getElementType();
  Type coordType = xType.getIntOrFloatBitWidth() < 32
                       ? Type(ctx.builder().getF32Type())
                       : xType;
  OpChain b{ctx, coordType};
  Sampler sampler{b, *padding, ctx.getInt("align_corners", 0) != 0};

  // Per spatial dimension j (X's dimension 2 + j): its taps. The grid's
  // last axis lists the coordinates innermost first (x, then y, ...).
  SmallVector<int64_t> outShape(gridShape.drop_back()); // [N, D...]
  auto g = ctx.convert(*grid, coordType);
  if (failed(g))
    return failure();
  OpChain wide{ctx, ctx.builder().getF64Type()};
  SmallVector<SmallVector<TapTerm>> taps;
  SmallVector<double> strides(r);
  double stride = 1;
  for (int64_t j = r - 1; j >= 0; --j) {
    strides[j] = stride;
    stride *= double(xShape[2 + j]);
  }
  for (int64_t j = 0; j < r; ++j) {
    SmallVector<int64_t> starts(r + 2, 0), limits(gridShape);
    starts.back() = r - 1 - j;
    limits.back() = r - j;
    auto component = ctx.create<tg::SliceOp>(
        *g, {ctx.arrayAttr("starts", starts), ctx.arrayAttr("limits", limits)});
    if (failed(component))
      return failure();
    auto coordinate = ctx.reshape(*component, outShape);
    if (failed(coordinate))
      return failure();
    auto t = sampler.taps(*mode, *coordinate, xShape[2 + j]);
    if (failed(t))
      return failure();
    SmallVector<TapTerm> terms;
    for (const Tap &tap : *t) {
      auto term = sampler.term(tap, xShape[2 + j], strides[j], wide);
      if (failed(term))
        return failure();
      terms.push_back(*term);
    }
    taps.push_back(std::move(terms));
  }

  // X as rows of channels, [N * prod(S), C].
  SmallVector<int64_t> toChannelsLast = {0};
  for (int64_t j = 0; j < r; ++j)
    toChannelsLast.push_back(2 + j);
  toChannelsLast.push_back(1);
  auto rows = ctx.transpose(*x, toChannelsLast);
  if (failed(rows))
    return failure();
  rows = ctx.reshape(*rows, {n * int64_t(stride), channels});
  auto offsets = batchOffsets(ctx, n, int64_t(stride), r);
  if (failed(rows) || failed(offsets))
    return failure();

  // Every combination of taps, one gather each.
  SmallVector<int64_t> weightShape(outShape);
  weightShape.push_back(1);
  FailureOr<Value> sum = failure();
  SmallVector<size_t> pick(r, 0);
  for (bool more = true; more;) {
    FailureOr<Value> index = *offsets;
    FailureOr<Value> weight = failure();
    for (int64_t j = 0; j < r; ++j) {
      const TapTerm &tap = taps[j][pick[j]];
      weight = j == 0 ? FailureOr<Value>(tap.weight)
                      : b.bin<tg::MulOp>(weight, tap.weight);
      index = wide.bin<tg::AddOp>(index, tap.offset);
    }
    auto gathered = wide.cast(index, ctx.builder().getI64Type());
    if (failed(gathered) || failed(weight))
      return failure();
    auto picked = ctx.create<tg::GatherOp>({*rows, *gathered},
                                           {ctx.i64Attr("axis", 0)});
    auto w = ctx.reshape(*weight, weightShape);
    if (failed(picked) || failed(w))
      return failure();
    auto term = b.bin<tg::MulOp>(*picked, b.cast(*w, xType));
    sum = succeeded(sum) ? b.bin<tg::AddOp>(sum, term) : term;
    if (failed(sum))
      return failure();
    // The next combination (the last dimension's taps fastest).
    more = false;
    for (int64_t j = r - 1; j >= 0 && !more; --j) {
      if (++pick[j] < taps[j].size())
        more = true;
      else
        pick[j] = 0;
    }
  }

  // [N, D..., C] -> [N, C, D...].
  SmallVector<int64_t> toChannelsFirst = {0, r + 1};
  for (int64_t j = 0; j < r; ++j)
    toChannelsFirst.push_back(1 + j);
  auto y = ctx.transpose(*sum, toChannelsFirst);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populateGridSampleHandlers(HandlerTable &table) {
  table["GridSample"] = importGridSample;
}
