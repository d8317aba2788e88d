//===- DataMovement.cpp - ONNX data movement operators to tg --------------===//
//
// Part of Loom. Transpose, Reshape (0 and -1 resolved), Flatten, Squeeze,
// Unsqueeze, Concat, Split, Slice (negative and out-of-range indices
// normalised; negative steps become a gather), Pad (constant, edge and
// reflect; negative pads crop), Expand, Tile, Trilu, Gather, DepthToSpace
// and SpaceToDepth. Shapes, axes and indices must be known at import time; when
// the data is too (a shape computation), the result is folded.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

/// Sets output 0 to `t` with `shape` (a reshape of a known value).
void setReshaped(NodeContext &ctx, const HostTensor &t,
                 ArrayRef<int64_t> shape) {
  HostTensor out = t;
  out.shape.assign(shape.begin(), shape.end());
  ctx.setOutput(0, std::move(out));
}

/// Output 0 is input 0 under a new shape: folded when known, else reshaped.
LogicalResult reshapeTo(NodeContext &ctx, ArrayRef<int64_t> shape) {
  if (onnxutil::numElementsOf(shape) !=
      onnxutil::numElementsOf(ctx.inputShape(0)))
    return ctx.fail("cannot reshape " +
                    safetensors::formatShape(ctx.inputShape(0)) + " to " +
                    safetensors::formatShape(shape));
  if (const HostTensor *t = ctx.constant(0)) {
    setReshaped(ctx, *t, shape);
    return success();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto y = ctx.reshape(*x, shape);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importTranspose(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  SmallVector<int64_t> perm = ctx.getInts("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.fail("'perm' has " + Twine(perm.size()) +
                    " entries for an input of rank " + Twine(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ctx.fail("'perm' is not a permutation");
    seen[p] = true;
  }
  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, transposeHost(*t, perm));
    return success();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto y = ctx.transpose(*x, perm);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importReshape(NodeContext &ctx) {
  SmallVector<int64_t> target;
  if (ctx.opset() < 5 && !ctx.hasInput(1)) {
    target = ctx.getInts("shape").value_or(SmallVector<int64_t>());
  } else {
    auto s = ctx.constantInts(1, "the shape");
    if (failed(s))
      return failure();
    target = *s;
  }
  ArrayRef<int64_t> in = ctx.inputShape(0);
  bool allowZero = ctx.getInt("allowzero", 0) != 0;
  int64_t inferAt = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= in.size())
        return ctx.fail("shape entry " + Twine(i) +
                        " is 0 (copy) but the input has rank " +
                        Twine(in.size()));
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (inferAt >= 0)
        return ctx.fail("the shape has more than one -1");
      inferAt = i;
      continue;
    }
    if (target[i] < 0)
      return ctx.fail("shape entry " + Twine(target[i]) + " is invalid");
    auto product = llvm::checkedMul(known, target[i]);
    if (!product)
      return ctx.fail("the shape's element count overflows");
    known = *product;
  }
  int64_t total = onnxutil::numElementsOf(in);
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0)
      return ctx.fail("cannot infer the -1 of shape for " +
                      safetensors::formatShape(in));
    target[inferAt] = total / known;
  }
  return reshapeTo(ctx, target);
}

LogicalResult importFlatten(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  return reshapeTo(ctx, {onnxutil::numElementsOf(in.take_front(axis)),
                         onnxutil::numElementsOf(in.drop_front(axis))});
}

/// Axes from the attribute (before `inputOpset`) or input 1.
FailureOr<std::optional<SmallVector<int64_t>>> readAxes(NodeContext &ctx) {
  if (ctx.hasInput(1)) {
    auto a = ctx.constantInts(1, "axes");
    if (failed(a))
      return failure();
    return std::optional<SmallVector<int64_t>>(*a);
  }
  return ctx.getInts("axes");
}

LogicalResult importSqueeze(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  auto axes = readAxes(ctx);
  if (failed(axes))
    return failure();
  SmallVector<bool> drop(rank, false);
  if (*axes) {
    for (int64_t a : **axes) {
      auto n = ctx.normalizeAxis(a, rank, "squeezed axis");
      if (failed(n))
        return failure();
      if (in[*n] != 1)
        return ctx.fail("cannot squeeze axis " + Twine(*n) + " of size " +
                        Twine(in[*n]));
      drop[*n] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[d] == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      shape.push_back(in[d]);
  return reshapeTo(ctx, shape);
}

LogicalResult importUnsqueeze(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  auto axes = readAxes(ctx);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail("'axes' is required");
  int64_t outRank = in.size() + (*axes)->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : **axes) {
    auto n = ctx.normalizeAxis(a, outRank, "inserted axis");
    if (failed(n))
      return failure();
    if (inserted[*n])
      return ctx.fail("axis " + Twine(*n) + " is inserted twice");
    inserted[*n] = true;
  }
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(inserted[d] ? 1 : in[next++]);
  return reshapeTo(ctx, shape);
}

LogicalResult importConcat(NodeContext &ctx) {
  unsigned n = ctx.numInputs();
  if (n == 0)
    return ctx.fail("needs at least one input");
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  for (unsigned i = 0; i < n; ++i) {
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is missing");
    if (ctx.inputDataType(i) != ctx.inputDataType(0) ||
        ctx.inputRank(i) != rank)
      return ctx.fail("inputs differ in element type or rank");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && ctx.inputShape(i)[d] != ctx.inputShape(0)[d])
        return ctx.fail("input shapes " +
                        safetensors::formatShape(ctx.inputShape(0)) + " and " +
                        safetensors::formatShape(ctx.inputShape(i)) +
                        " differ outside the axis");
  }
  if (ctx.allConstant()) {
    SmallVector<const HostTensor *> parts;
    for (unsigned i = 0; i < n; ++i)
      parts.push_back(ctx.constant(i));
    ctx.setOutput(0, concatHost(parts, *axis));
    return success();
  }
  SmallVector<Value> operands;
  for (unsigned i = 0; i < n; ++i) {
    if (ctx.inputShape(i)[*axis] == 0 && n > 1)
      continue; // Empty pieces add nothing.
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  if (operands.empty()) {
    auto v = ctx.input(0);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<Value> y =
      operands.size() == 1
          ? FailureOr<Value>(operands.front())
          : ctx.create<tg::ConcatOp>(operands, {ctx.i64Attr("axis", *axis)});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importSplit(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t dim = in[*axis];
  unsigned outputs = ctx.numOutputs();
  SmallVector<int64_t> sizes;
  if (ctx.hasInput(1)) {
    auto s = ctx.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto attr = ctx.getInts("split")) {
    sizes = *attr;
  } else {
    int64_t parts = ctx.getInt("num_outputs", outputs);
    if (parts < 1)
      return ctx.fail("needs at least one output");
    int64_t chunk = (dim + parts - 1) / parts;
    if (!ctx.hasAttr("num_outputs") && dim % parts != 0)
      return ctx.fail("axis size " + Twine(dim) + " does not split into " +
                      Twine(parts) + " equal parts");
    for (int64_t i = 0, left = dim; i < parts; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
  }
  if (sizes.size() != outputs)
    return ctx.fail(Twine(sizes.size()) + " split sizes for " + Twine(outputs) +
                    " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim)
      return ctx.fail("split sizes must be in [0, " + Twine(dim) + "]");
    total += s;
  }
  if (total != dim)
    return ctx.fail("split sizes sum to " + Twine(total) +
                    ", not to the axis "
                    "size " +
                    Twine(dim));

  if (const HostTensor *t = ctx.constant(0)) {
    int64_t start = 0;
    SmallVector<int64_t> steps(rank, 1), starts(rank, 0);
    for (unsigned i = 0; i < outputs; ++i) {
      SmallVector<int64_t> shape(in.begin(), in.end());
      shape[*axis] = sizes[i];
      starts[*axis] = start;
      ctx.setOutput(i, sliceHost(*t, starts, steps, shape));
      start += sizes[i];
    }
    return success();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> nonEmpty;
  for (int64_t s : sizes)
    if (s > 0)
      nonEmpty.push_back(s);
  SmallVector<Value> pieces;
  if (nonEmpty.size() == 1) {
    pieces.push_back(*x);
  } else if (!nonEmpty.empty()) {
    auto op = ctx.createOp(
        tg::SplitOp::getOperationName(), *x,
        {ctx.i64Attr("axis", *axis), ctx.arrayAttr("sizes", nonEmpty)},
        std::nullopt);
    if (failed(op))
      return failure();
    llvm::append_range(pieces, (*op)->getResults());
  }
  auto elemType = cast<RankedTensorType>(x->getType()).getElementType();
  for (unsigned i = 0, next = 0; i < outputs; ++i) {
    if (sizes[i] > 0) {
      ctx.setOutput(i, pieces[next++]);
      continue;
    }
    SmallVector<int64_t> shape(in.begin(), in.end());
    shape[*axis] = 0;
    ctx.setOutput(i, ctx.splat(RankedTensorType::get(shape, elemType), 0));
  }
  return success();
}

/// Builds the index list [start, start + step, ...] of `size` entries.
SmallVector<int64_t> stepIndices(int64_t start, int64_t step, int64_t size) {
  SmallVector<int64_t> idx;
  for (int64_t i = 0; i < size; ++i)
    idx.push_back(start + i * step);
  return idx;
}

LogicalResult importSlice(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10 && !ctx.hasInput(1)) {
    starts = ctx.getInts("starts").value_or(SmallVector<int64_t>());
    ends = ctx.getInts("ends").value_or(SmallVector<int64_t>());
    if (auto a = ctx.getInts("axes"))
      axes = *a;
  } else {
    auto s = ctx.constantInts(1, "starts");
    auto e = ctx.constantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.hasInput(3)) {
      auto a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      auto st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    axes.assign(llvm::seq<int64_t>(0, starts.size()).begin(),
                llvm::seq<int64_t>(0, starts.size()).end());
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.fail("starts, ends, axes and steps differ in length");

  // Per dimension: first index, step and count.
  SmallVector<int64_t> first(rank, 0), step(rank, 1),
      count(in.begin(), in.end());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = ctx.normalizeAxis(axes[i], rank, "sliced axis");
    if (failed(ax))
      return failure();
    if (seen[*ax])
      return ctx.fail("axis " + Twine(*ax) + " is sliced twice");
    seen[*ax] = true;
    int64_t dim = in[*ax], s = steps[i];
    if (s == 0)
      return ctx.fail("steps must not be 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0)
      b = b < -dim ? -1 : b + dim;
    if (e < 0)
      e = e < -dim ? -1 : e + dim;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[*ax] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -s overflows for INT64_MIN; any step below -dim visits one index.
      int64_t ns = s < -dim ? dim + 1 : -s;
      count[*ax] = b > e ? (b - e - 1) / ns + 1 : 0;
    }
    first[*ax] = count[*ax] > 0 ? b : 0;
    step[*ax] = s;
  }

  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, sliceHost(*t, first, step, count));
    return success();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Value result = *x;
  // Positive steps: one tg.slice; negative steps: a gather per axis.
  SmallVector<int64_t> sStart(rank), sLimit(rank), sStride(rank);
  bool needSlice = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (step[d] > 0) {
      sStart[d] = first[d];
      sStride[d] = step[d];
      sLimit[d] = count[d] ? first[d] + (count[d] - 1) * step[d] + 1 : first[d];
    } else {
      sStart[d] = 0;
      sStride[d] = 1;
      sLimit[d] = in[d];
    }
    needSlice |= sStart[d] != 0 || sLimit[d] != in[d] || sStride[d] != 1;
  }
  if (needSlice) {
    auto r =
        ctx.create<tg::SliceOp>(result, {ctx.arrayAttr("starts", sStart),
                                         ctx.arrayAttr("limits", sLimit),
                                         ctx.arrayAttr("strides", sStride)});
    if (failed(r))
      return failure();
    result = *r;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (step[d] > 0)
      continue;
    auto r = ctx.gather(result, d, stepIndices(first[d], step[d], count[d]));
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

/// The source index of padded position `i` of a dimension of size `dim`
/// with `low` elements before it, for edge and reflect padding.
int64_t padSource(int64_t i, int64_t low, int64_t dim, bool reflect) {
  int64_t j = i - low;
  if (!reflect)
    return std::clamp<int64_t>(j, 0, dim - 1);
  if (dim == 1)
    return 0;
  int64_t period = 2 * (dim - 1);
  j %= period;
  if (j < 0)
    j += period;
  return j < dim ? j : period - j;
}

LogicalResult importPad(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  std::string mode = ctx.getString("mode", "constant");
  SmallVector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.getInts(ctx.opset() < 2 ? "paddings" : "pads")
               .value_or(SmallVector<int64_t>());
    value = ctx.getFloat("value", 0.0);
  } else {
    auto p = ctx.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2)) {
      auto v = ctx.constantDoubles(2, "constant_value");
      if (failed(v))
        return failure();
      if (v->size() != 1)
        return ctx.fail("constant_value must be a scalar");
      value = v->front();
    }
  }
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
    for (int64_t &ax : axes) {
      auto n = ctx.normalizeAxis(ax, rank, "padded axis");
      if (failed(n))
        return failure();
      ax = *n;
    }
  }
  if (pads.size() != 2 * axes.size())
    return ctx.fail("'pads' needs " + Twine(2 * axes.size()) +
                    " entries, got " + Twine(pads.size()));
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    low[axes[i]] = pads[i];
    high[axes[i]] = pads[axes.size() + i];
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return ctx.fail("mode '" + mode + "' is not supported");

  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Value result = *x;
  // Negative pads crop first.
  SmallVector<int64_t> cropStart(rank), cropLimit(rank),
      shape(in.begin(), in.end());
  bool crop = false;
  for (int64_t d = 0; d < rank; ++d) {
    cropStart[d] = low[d] < 0 ? -low[d] : 0;
    cropLimit[d] = in[d] - (high[d] < 0 ? -high[d] : 0);
    if (cropStart[d] > cropLimit[d])
      return ctx.fail("negative pads remove more than the whole axis " +
                      Twine(d));
    crop |= low[d] < 0 || high[d] < 0;
    low[d] = std::max<int64_t>(low[d], 0);
    high[d] = std::max<int64_t>(high[d], 0);
    shape[d] = cropLimit[d] - cropStart[d];
  }
  if (crop) {
    auto r =
        ctx.create<tg::SliceOp>(result, {ctx.arrayAttr("starts", cropStart),
                                         ctx.arrayAttr("limits", cropLimit)});
    if (failed(r))
      return failure();
    result = *r;
  }
  if (mode == "constant") {
    if (llvm::any_of(low, [](int64_t v) { return v; }) ||
        llvm::any_of(high, [](int64_t v) { return v; })) {
      auto r = ctx.create<tg::PadOp>(result, {ctx.arrayAttr("low", low),
                                              ctx.arrayAttr("high", high),
                                              ctx.f64Attr("value", value)});
      if (failed(r))
        return failure();
      result = *r;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      if (!low[d] && !high[d])
        continue;
      if (shape[d] == 0)
        return ctx.fail("cannot " + mode + "-pad the empty axis " + Twine(d));
      if (mode == "reflect" && (low[d] >= shape[d] || high[d] >= shape[d]))
        return ctx.fail("reflect padding must be smaller than the axis");
      if (low[d] > kMaxExtent || high[d] > kMaxExtent)
        return ctx.fail("pads of more than " + Twine(kMaxExtent) +
                        " elements are not supported");
      SmallVector<int64_t> idx;
      for (int64_t i = 0; i < low[d] + shape[d] + high[d]; ++i)
        idx.push_back(padSource(i, low[d], shape[d], mode == "reflect"));
      auto r = ctx.gather(result, d, idx);
      if (failed(r))
        return failure();
      result = *r;
    }
  }
  ctx.setOutput(0, result);
  return success();
}

LogicalResult importExpand(NodeContext &ctx) {
  auto target = ctx.constantInts(1, "the shape");
  if (failed(target))
    return failure();
  ArrayRef<int64_t> in = ctx.inputShape(0);
  auto shape = broadcastHostShapes(in, *target);
  if (!shape)
    return ctx.fail("cannot expand " + safetensors::formatShape(in) + " to " +
                    safetensors::formatShape(*target));
  if (const HostTensor *t = ctx.constant(0)) {
    if (onnxutil::numElementsOf(*shape) <= kFoldLimit) {
      ctx.setOutput(0, broadcastHost(*t, *shape));
      return success();
    }
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getShape() == ArrayRef<int64_t>(*shape)) {
    ctx.setOutput(0, *x);
    return success();
  }
  auto y = ctx.createTyped<tg::BroadcastToOp>(type.clone(*shape), *x);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the last
/// two dimensions, zeros elsewhere; k (input 1, default 0) must be known.
/// Folded when the input is known (PyTorch's causal masks: triu of a
/// constant), otherwise a tg.select with the triangle as a constant mask.
LogicalResult importTrilu(NodeContext &ctx) {
  if (!ctx.hasInput(0))
    return ctx.fail("input 0 is required");
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  if (shape.size() < 2)
    return ctx.fail("input must have rank at least 2, got " +
                    Twine(shape.size()));
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto given = ctx.constantInts(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.fail("k must hold one value");
    k = (*given)[0];
  }
  bool upper = ctx.getInt("upper", 1) != 0;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  auto kept = [&](int64_t i, int64_t j) {
    // In int64 without overflow: |k| may be anything.
    return upper ? j >= i + std::clamp<int64_t>(k, -cols - rows, cols + rows)
                 : j <= i + std::clamp<int64_t>(k, -cols - rows, cols + rows);
  };
  if (const HostTensor *t = ctx.constant(0)) {
    HostTensor out = *t;
    for (int64_t e = 0; e < out.numElements(); ++e) {
      int64_t j = e % cols, i = (e / cols) % rows;
      if (kept(i, j))
        continue;
      if (out.isFloat())
        out.floats[e] = 0;
      else
        out.ints[e] = 0;
    }
    ctx.setOutput(0, std::move(out));
    return success();
  }
  HostTensor mask;
  mask.dataType = onnx::TensorProto::BOOL;
  mask.shape = {rows, cols};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.ints.push_back(kept(i, j) ? 1 : 0);
  auto x = ctx.input(0);
  auto maskValue = ctx.materialize(mask, "trilu_mask");
  if (failed(x) || failed(maskValue))
    return failure();
  Type e = cast<RankedTensorType>(x->getType()).getElementType();
  auto y = ctx.create<tg::SelectOp>({*maskValue, *x, ctx.scalar(e, 0)});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importTile(NodeContext &ctx) {
  auto repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  ArrayRef<int64_t> in = ctx.inputShape(0);
  if (repeats->size() != in.size())
    return ctx.fail("'repeats' needs one entry per input dimension");
  // [d0, d1] -> [1, d0, 1, d1] -> broadcast [r0, d0, r1, d1] -> reshape.
  SmallVector<int64_t> spread, broadcast, out;
  for (size_t d = 0; d < in.size(); ++d) {
    if ((*repeats)[d] < 0)
      return ctx.fail("'repeats' must not be negative");
    auto size = llvm::checkedMul((*repeats)[d], in[d]);
    if (!size)
      return ctx.fail("the tiled size overflows");
    spread.append({1, in[d]});
    broadcast.append({(*repeats)[d], in[d]});
    out.push_back(*size);
  }
  if (const HostTensor *t = ctx.constant(0)) {
    if (onnxutil::numElementsOf(out) <= kFoldLimit) {
      HostTensor s = *t;
      s.shape.assign(spread.begin(), spread.end());
      HostTensor b = broadcastHost(s, broadcast);
      b.shape.assign(out.begin(), out.end());
      ctx.setOutput(0, std::move(b));
      return success();
    }
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  auto s = ctx.reshape(*x, spread);
  if (failed(s))
    return failure();
  Value b = *s;
  if (spread != broadcast) {
    auto r = ctx.createTyped<tg::BroadcastToOp>(type.clone(broadcast), *s);
    if (failed(r))
      return failure();
    b = *r;
  }
  auto y = ctx.reshape(b, out);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importGather(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  if (rank == 0)
    return ctx.fail("data must have rank >= 1");
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int32_t it = ctx.inputDataType(1);
  if (it != onnx::TensorProto::INT64 && it != onnx::TensorProto::INT32)
    return ctx.fail("indices must be int32 or int64");
  int64_t dim = in[*axis];
  if (const HostTensor *idx = ctx.constant(1)) {
    SmallVector<int64_t> norm;
    for (int64_t i : idx->ints) {
      if (i < -dim || i >= dim)
        return ctx.fail("index " + Twine(i) + " is out of range [" +
                        Twine(-dim) + ", " + Twine(dim) + ")");
      norm.push_back(i < 0 ? i + dim : i);
    }
    if (const HostTensor *data = ctx.constant(0)) {
      ctx.setOutput(0, gatherHost(*data, norm, idx->shape, *axis));
      return success();
    }
  }
  auto data = ctx.input(0), indices = ctx.input(1);
  if (failed(data) || failed(indices))
    return failure();
  auto y =
      ctx.create<tg::GatherOp>({*data, *indices}, {ctx.i64Attr("axis", *axis)});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// DepthToSpace and SpaceToDepth: reshape, transpose, reshape.
LogicalResult importDepthSpace(NodeContext &ctx, bool toSpace) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  if (in.size() != 4)
    return ctx.fail("the input must have rank 4 (NCHW)");
  int64_t b = ctx.getInt("blocksize", 0);
  if (b < 1 || b > kMaxExtent)
    return ctx.fail("'blocksize' must be in [1, " + Twine(kMaxExtent) + "]");
  int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  SmallVector<int64_t> split, perm, out;
  if (toSpace) {
    if (c % (b * b))
      return ctx.fail("channels must be divisible by blocksize^2");
    if (ctx.getString("mode", "DCR") == "CRD") {
      split = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      split = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
    out = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b || w % b)
      return ctx.fail("height and width must be divisible by blocksize");
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * b * b, h / b, w / b};
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto r = ctx.reshape(*x, split);
  if (failed(r))
    return failure();
  auto t = ctx.transpose(*r, perm);
  if (failed(t))
    return failure();
  auto y = ctx.reshape(*t, out);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populateDataMovementHandlers(HandlerTable &table) {
  table["Transpose"] = importTranspose;
  table["Reshape"] = importReshape;
  table["Flatten"] = importFlatten;
  table["Squeeze"] = importSqueeze;
  table["Unsqueeze"] = importUnsqueeze;
  table["Concat"] = importConcat;
  table["Split"] = importSplit;
  table["Slice"] = importSlice;
  table["Pad"] = importPad;
  table["Expand"] = importExpand;
  table["Tile"] = importTile;
  table["Trilu"] = importTrilu;
  table["Gather"] = importGather;
  table["DepthToSpace"] = [](NodeContext &c) {
    return importDepthSpace(c, true);
  };
  table["SpaceToDepth"] = [](NodeContext &c) {
    return importDepthSpace(c, false);
  };
}
