//===- TwicePadded.cpp - Values padded in two dimensions ------------------===//
//
// Part of Loom. A Resize to a run-time height and width, or a
// ConstantOfShape of two run-time sizes (torchvision's paste of a mask),
// gives a value padded in two dimensions (ImportedValue::bound and
// secondBound). Shape, Gather, Slice, Concat, Cast, Identity, Unsqueeze and
// a Reshape merging the two read such a value, as those operators'
// `twicePadded` rules (BoundRules.h); any other node reading one is refused,
// naming it. docs/ONNX/Import.md "Bounded dynamic shapes".
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

#include "loom/Dialect/TG/IR/TGOps.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

namespace {

/// The node's own handler with its inputs' padded dimensions hidden (the
/// caller sets the output's).
LogicalResult withBoundsHidden(NodeContext &ctx) {
  SmallVector<std::pair<ImportedValue *, ImportedValue>> saved;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *in = inputValue(ctx, i);
    if (!in || !getBound(in->value) ||
        llvm::any_of(saved, [&](auto &p) { return p.first == in; }))
      continue;
    saved.push_back({in, *in});
    hideBounds(*in);
  }
  LogicalResult done = ownHandler(ctx);
  for (auto &[in, value] : saved)
    *in = std::move(value);
  return done;
}

/// Element `k` of Slice's input `i` (starts or ends), a rank-0 i64: known,
/// or read at run time.
FailureOr<Value> sliceParameter(NodeContext &ctx, unsigned i, int64_t k) {
  if (const HostTensor *t = ctx.known(i))
    return i64Scalar(ctx, t->asInt(k));
  return readElement(ctx, i, k);
}

/// `p` (a start or end of Slice) as a position in [0, length]: a negative
/// one counts from the end.
FailureOr<Value> slicePosition(NodeContext &ctx, Value p, Value length) {
  OpChain b{ctx, i64Type(ctx)};
  auto fromEnd = lengthOp(ctx, LengthOp::Add, p, length);
  auto read =
      b.select(ctx.create<tg::LessOp>({p, i64Scalar(ctx, 0)}), fromEnd, p);
  if (failed(read))
    return failure();
  auto low = lengthOp(ctx, LengthOp::Max, *read, i64Scalar(ctx, 0));
  if (failed(low))
    return failure();
  return lengthOp(ctx, LengthOp::Min, *low, length);
}

/// Slice (step 1) of padded dimensions of a value padded in two, from
/// starts and to ends known or read at run time (torchvision's paste of a
/// mask slices it from box offsets): position j of the result reads
/// start + j, its length max(end - start, 0), both positions counted
/// within the valid length. Its size is the bound, or a known end below it.
LogicalResult importSliceOfTwicePadded(NodeContext &ctx,
                                       ArrayRef<BoundedDim> padded) {
  SmallVector<BoundedDim> bs(padded);
  if (ctx.opset() < 10 || !ctx.hasInput(3))
    return ctx.fail("a Slice of a value padded in two dimensions needs its "
                    "axes as an input");
  auto axes = ctx.constantInts(3, "axes");
  if (failed(axes))
    return failure();
  if (ctx.hasInput(4)) {
    auto steps = ctx.constantInts(4, "steps");
    if (failed(steps))
      return failure();
    if (llvm::any_of(*steps, [](int64_t t) { return t != 1; }))
      return ctx.fail("a Slice of a value padded in two dimensions needs "
                      "steps of 1");
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Value y = *x;
  int64_t rank = ctx.inputRank(0);
  for (auto [k, a] : llvm::enumerate(*axes)) {
    int64_t axis = a < 0 ? a + rank : a;
    BoundedDim *b =
        llvm::find_if(bs, [&](const BoundedDim &d) { return d.dim == axis; });
    if (b == bs.end())
      return ctx.fail("a Slice of a value padded in two dimensions must "
                      "slice only the padded ones");
    int64_t size = ctx.inputShape(0)[axis];
    auto length = lengthOp(ctx, LengthOp::Min, b->length, i64Scalar(ctx, size));
    auto start = sliceParameter(ctx, 1, k), end = sliceParameter(ctx, 2, k);
    if (failed(length) || failed(start) || failed(end))
      return failure();
    auto from = slicePosition(ctx, *start, *length);
    auto to = slicePosition(ctx, *end, *length);
    if (failed(from) || failed(to))
      return failure();
    int64_t outSize = size;
    if (const HostTensor *t = ctx.known(2); t && t->asInt(k) >= 0)
      outSize = std::min(size, t->asInt(k));
    auto j = iota(ctx, outSize, {outSize});
    if (failed(j))
      return failure();
    auto shifted = lengthOp(ctx, LengthOp::Add, *j, *from);
    if (failed(shifted))
      return failure();
    auto index = lengthOp(ctx, LengthOp::Min, *shifted,
                          i64Scalar(ctx, std::max<int64_t>(size - 1, 0)));
    if (failed(index))
      return failure();
    auto gathered =
        ctx.create<tg::GatherOp>({y, *index}, {ctx.i64Attr("axis", axis)});
    auto kept = lengthOp(ctx, LengthOp::Sub, *to, *from);
    if (failed(gathered) || failed(kept))
      return failure();
    auto newLength = lengthOp(ctx, LengthOp::Max, *kept, i64Scalar(ctx, 0));
    if (failed(newLength))
      return failure();
    y = *gathered;
    b->length = *newLength;
  }
  ctx.setOutput(0, y);
  setOutputBounds(ctx, bs);
  return success();
}

/// Concat of values padded in two dimensions. Along a padded dimension:
/// every part padded there and in the same other dimension with the same
/// length, compacted along the axis as for one padded dimension (the
/// zeros torchvision concatenates around a pasted mask). Along another
/// axis beside a part that is not padded: ONNX requires the parts' sizes
/// to be equal, so the padded dimensions are full and the result is not
/// padded (a pasted mask appended to the image-sized masks).
LogicalResult importConcatOfTwicePadded(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "axis");
  if (failed(axis))
    return failure();
  bool anyUnpadded = false, alongPadded = false;
  std::optional<BoundedDim> other;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    SmallVector<BoundedDim, 2> bs = tg::getBounds(inputValue(ctx, i)->value);
    if (bs.empty()) {
      anyUnpadded = true;
      continue;
    }
    for (const BoundedDim &b : bs)
      if (b.dim == *axis)
        alongPadded = true;
  }
  if (!alongPadded) {
    if (!anyUnpadded)
      return ctx.fail("a Concat of values padded in two dimensions along "
                      "another dimension needs a part that is not padded");
    return withBoundsHidden(ctx);
  }
  SmallVector<Value> values;
  SmallVector<Segment> segments;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    SmallVector<BoundedDim, 2> bs = tg::getBounds(inputValue(ctx, i)->value);
    if (bs.size() < 2)
      return ctx.fail("a Concat along a padded dimension of values padded in "
                      "two dimensions needs every part padded in both");
    BoundedDim along = bs[0].dim == *axis ? bs[0] : bs[1];
    BoundedDim across = bs[0].dim == *axis ? bs[1] : bs[0];
    if (along.dim != *axis ||
        (other && (other->dim != across.dim || other->length != across.length)))
      return ctx.fail("a Concat of values padded in two dimensions needs "
                      "the parts' other padded dimension to have the same "
                      "length");
    other = across;
    if (failed(addSegment(ctx, i, *axis, along.length, values, segments)))
      return failure();
  }
  auto joined = concatCompacted(ctx, values, segments, *axis);
  if (failed(joined))
    return failure();
  ctx.setOutput(0, joined->first);
  setOutputBounds(ctx, {BoundedDim{*axis, joined->second}, *other});
  return success();
}

/// Cast and Identity of a value padded in two dimensions keep them.
LogicalResult importKeepingTwicePadded(NodeContext &ctx,
                                       ArrayRef<BoundedDim> bs) {
  if (failed(withBoundsHidden(ctx)))
    return failure();
  setOutputBounds(ctx, bs);
  return success();
}

/// Unsqueeze of a value padded in two dimensions: they move past the new
/// axes.
LogicalResult importUnsqueezeOfTwicePadded(NodeContext &ctx,
                                           ArrayRef<BoundedDim> padded) {
  SmallVector<BoundedDim> bs(padded);
  if (failed(withBoundsHidden(ctx)))
    return failure();
  {
    int64_t outRank = outputValue(ctx, 0)->shape.size();
    SmallVector<int64_t> axes;
    if (auto a = ctx.getInts("axes"); a && ctx.opset() < 13)
      axes.assign(a->begin(), a->end());
    else if (auto k = ctx.constantInts(1, "axes"); succeeded(k))
      axes = *k;
    else
      return failure();
    SmallVector<int64_t> fromInput; // output dimension of each input one
    for (int64_t p = 0; p < outRank; ++p)
      if (!llvm::any_of(
              axes, [&](int64_t a) { return (a < 0 ? a + outRank : a) == p; }))
        fromInput.push_back(p);
    for (BoundedDim &b : bs)
      b.dim = fromInput[b.dim];
  }
  setOutputBounds(ctx, bs);
  return success();
}

/// Gather from a value padded in two dimensions by indices that are not
/// padded: a padded dimension other than the axis moves with the gather;
/// the axis is read at the given (valid) indices.
LogicalResult importGatherOfTwicePadded(NodeContext &ctx,
                                        ArrayRef<BoundedDim> bs) {
  if (inputBound(ctx, 1))
    return ctx.fail("a Gather of a value padded in two dimensions by "
                    "indices of data-dependent length is not supported");
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
  if (failed(axis) || failed(withBoundsHidden(ctx)))
    return failure();
  int64_t idxRank = ctx.inputRank(1);
  SmallVector<BoundedDim> kept;
  for (BoundedDim b : bs)
    if (b.dim != *axis)
      kept.push_back({b.dim < *axis ? b.dim : b.dim + idxRank - 1, b.length});
  setOutputBounds(ctx, kept);
  return success();
}

/// Reshape of a value padded in its last two dimensions [.., H, W] (valid
/// h x w) that merges them into one, [.., H * W]: a compaction, so that the
/// merged dimension holds the h * w valid elements row by row first
/// (position j reads row j / w, column j % w), its length h * w.
LogicalResult importReshapeMergingPadded(NodeContext &ctx, BoundedDim rows,
                                         BoundedDim cols) {
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  SmallVector<int64_t> merged(in.drop_back(2));
  merged.push_back(in[rank - 2] * in[rank - 1]);
  // The target shape: known, with -1 (the rest) and 0 (the input's size).
  const HostTensor *target = ctx.known(1);
  bool merges = target && !target->isFloat() &&
                int64_t(target->ints.size()) == rank - 1 &&
                rows.dim == rank - 2 && cols.dim == rank - 1;
  for (int64_t d = 0; merges && d < rank - 1; ++d) {
    int64_t t = target->ints[d];
    merges = t == merged[d] || t == -1 ||
             (t == 0 && !ctx.getInt("allowzero", 0) && in[d] == merged[d]);
  }
  if (!merges)
    return ctx.fail("a Reshape of a value padded in two dimensions must "
                    "merge its last two dimensions, the padded ones");
  int64_t H = in[rank - 2], W = in[rank - 1], n = H * W, outer = 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    outer *= in[d];
  Type f64 = Float64Type::get(ctx.context());
  OpChain b{ctx, f64};
  auto j = iota(ctx, n, {n});
  auto x = ctx.input(0);
  if (failed(j) || failed(x))
    return failure();
  auto jf = b.cast(*j, f64);
  auto w = b.cast(cols.length, f64);
  auto safeW = b.bin<tg::MaxOp>(w, b.c(1));
  auto row = floorAtRunTime(b, *b.bin<tg::DivOp>(jf, safeW));
  if (failed(row))
    return failure();
  auto col = b.bin<tg::SubOp>(jf, b.bin<tg::MulOp>(*row, safeW));
  auto source = b.bin<tg::AddOp>(b.bin<tg::MulOp>(*row, b.c(double(W))), col);
  auto length = lengthOp(ctx, LengthOp::Mul, rows.length, cols.length);
  if (failed(source) || failed(length))
    return failure();
  auto valid = ctx.create<tg::LessOp>({*j, *length});
  auto index = b.cast(b.select(valid, source, b.c(0)), i64Type(ctx));
  auto flat = ctx.reshape(*x, {outer, n});
  if (failed(index) || failed(flat))
    return failure();
  auto gathered =
      ctx.create<tg::GatherOp>({*flat, *index}, {ctx.i64Attr("axis", 1)});
  if (failed(gathered))
    return failure();
  auto result = ctx.reshape(*gathered, merged);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  setOutputBound(ctx, 0, {rank - 2, *length});
  return success();
}

/// A rule reading a value padded in two dimensions as input 0 only.
template <LogicalResult (*import)(NodeContext &, ArrayRef<BoundedDim>)>
FailureOr<bool> ofInput0(NodeContext &ctx, unsigned i,
                         ArrayRef<BoundedDim> bs) {
  if (i != 0)
    return false;
  return handled(import(ctx, bs));
}

} // namespace

void onnx_to_tg::populateTwicePaddedRules(BoundRulesTable &table) {
  table["Shape"].twicePadded = ofInput0<importShapeOfBounded>;
  table["Gather"].twicePadded = ofInput0<importGatherOfTwicePadded>;
  table["Slice"].twicePadded = ofInput0<importSliceOfTwicePadded>;
  table["Unsqueeze"].twicePadded = ofInput0<importUnsqueezeOfTwicePadded>;
  table["Cast"].twicePadded = ofInput0<importKeepingTwicePadded>;
  table["Identity"].twicePadded = ofInput0<importKeepingTwicePadded>;
  table["Reshape"].twicePadded =
      [](NodeContext &c, unsigned i,
         ArrayRef<BoundedDim> bs) -> FailureOr<bool> {
    if (i != 0 || isTracked(c, 1))
      return false;
    return handled(importReshapeMergingPadded(c, bs[0], bs[1]));
  };
  table["Concat"].twicePadded = [](NodeContext &c, unsigned,
                                   ArrayRef<BoundedDim>) {
    return handled(importConcatOfTwicePadded(c));
  };
}
