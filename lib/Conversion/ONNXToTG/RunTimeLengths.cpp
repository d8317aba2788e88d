//===- RunTimeLengths.cpp - Concat, Slice, reductions of padded values ----===//
//
// Part of Loom. Exported detectors do more with a value of data-dependent
// length (a bounded value, Dynamic.cpp) than read its valid prefix: they
// concatenate per-class candidates along the padded dimension, slice the
// first k of them, and reduce over them (the largest coordinate). This file
// imports those idioms, as the operators' `lengths` rules (BoundRules.h):
//
// - Concat along a padded dimension is a run-time compaction: a gather from
//   the static concatenation by indices computed from the lengths;
// - Slice of a padded dimension (non-negative starts, step 1) keeps
//   min(length, end) - start;
// - reductions over a padded dimension read the padding as the reduction's
//   identity (ReduceMean, whose divisor would count it, is refused), and
//   ArgMax/ArgMin as the value that never wins.
//
// It also holds the one entry point of these rules before a node's handler,
// importWithRunTimeLengths. docs/ONNX/Import.md "Bounded dynamic shapes".
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

namespace {

//===----------------------------------------------------------------------===//
// Concatenation along a padded dimension
//===----------------------------------------------------------------------===//

/// The gather indices that compact `segments` (concatenated statically)
/// so that their valid prefixes follow one another, and the total length.
/// For output position j in the segment l that holds it at run time,
/// index(j) = j + sum over the earlier padded segments of their padding.
FailureOr<std::pair<Value, Value>> compaction(NodeContext &ctx,
                                              ArrayRef<Segment> segments) {
  GraphImporter::CompactionKey key;
  for (const Segment &s : segments)
    key.push_back({s.size, s.length.getAsOpaquePointer()});
  auto &memo = ctx.importer().compactions;
  if (auto it = memo.find(key); it != memo.end())
    return it->second;

  int64_t total = 0;
  for (const Segment &s : segments)
    total += s.size;
  Type f64 = Float64Type::get(ctx.context());
  SmallVector<Value> offsets, paddings;
  Value end = i64Scalar(ctx, 0);
  for (auto [l, s] : llvm::enumerate(segments)) {
    Value len = s.length ? s.length : i64Scalar(ctx, s.size);
    auto next = lengthOp(ctx, LengthOp::Add, end, len);
    if (failed(next))
      return failure();
    end = *next;
    if (!s.length || l + 1 == segments.size())
      continue;
    auto pad = lengthOp(ctx, LengthOp::Sub, i64Scalar(ctx, s.size), s.length);
    auto off = ctx.reshape(end, {1});
    if (failed(pad) || failed(off))
      return failure();
    auto padding = ctx.reshape(*pad, {1});
    if (failed(padding))
      return failure();
    offsets.push_back(*off);
    paddings.push_back(*padding);
  }
  auto j = iota(ctx, total, {total});
  if (failed(j))
    return failure();
  Value index = *j;
  OpChain b{ctx, f64};
  if (!offsets.empty()) {
    auto cat = [&](ArrayRef<Value> v) -> FailureOr<Value> {
      if (v.size() == 1)
        return v.front();
      return ctx.create<tg::ConcatOp>(v, {ctx.i64Attr("axis", 0)});
    };
    auto off = cat(offsets), pad = cat(paddings);
    auto column = ctx.reshape(*j, {total, 1});
    if (failed(off) || failed(pad) || failed(column))
      return failure();
    // past[j, l]: position j lies past the valid end of padded segment l.
    auto past = ctx.create<tg::GreaterEqualOp>({*column, *off});
    auto skip = b.select(past, b.cast(*pad, f64), b.c(0));
    auto shift = ctx.create<tg::ReduceSumOp>(
        *skip, {ctx.arrayAttr("axes", {1}), ctx.boolAttr("keepdims", false)});
    if (failed(shift))
      return failure();
    auto sum = b.cast(b.bin<tg::AddOp>(b.cast(*j, f64), *shift), i64Type(ctx));
    if (failed(sum))
      return failure();
    index = *sum;
  }
  // Positions past the total length read element 0 (the padding).
  auto valid = ctx.create<tg::LessOp>({*j, end});
  auto padded = b.select(valid, index, i64Scalar(ctx, 0));
  if (failed(padded))
    return failure();
  std::pair<Value, Value> result{*padded, end};
  memo[key] = result;
  return result;
}

} // namespace

LogicalResult onnx_to_tg::addSegment(NodeContext &ctx, unsigned i, int64_t axis,
                                     Value length,
                                     SmallVectorImpl<Value> &values,
                                     SmallVectorImpl<Segment> &segments) {
  int64_t size = ctx.inputShape(i)[axis];
  if (size == 0)
    return success();
  auto x = ctx.input(i);
  if (failed(x))
    return failure();
  values.push_back(*x);
  segments.push_back({size, length});
  return success();
}

FailureOr<std::pair<Value, Value>>
onnx_to_tg::concatCompacted(NodeContext &ctx, ArrayRef<Value> values,
                            ArrayRef<Segment> segments, int64_t axis) {
  auto stacked =
      values.size() == 1
          ? FailureOr<Value>(values.front())
          : ctx.create<tg::ConcatOp>(values, {ctx.i64Attr("axis", axis)});
  auto compact = compaction(ctx, segments);
  if (failed(stacked) || failed(compact))
    return failure();
  auto gathered = ctx.create<tg::GatherOp>({*stacked, compact->first},
                                           {ctx.i64Attr("axis", axis)});
  if (failed(gathered))
    return failure();
  return std::make_pair(*gathered, compact->second);
}

namespace {

LogicalResult importConcatAlongBounded(NodeContext &ctx, int64_t axis) {
  SmallVector<Value> values;
  SmallVector<Segment> segments;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *v = inputValue(ctx, i);
    std::optional<BoundedDim> b = v ? getBound(v->value) : std::nullopt;
    if (b && b->dim != axis)
      return ctx.fail("concatenating values padded along different "
                      "dimensions is not supported");
    if (failed(addSegment(ctx, i, axis, b ? b->length : Value(), values,
                          segments)))
      return failure();
  }
  auto joined = concatCompacted(ctx, values, segments, axis);
  if (failed(joined))
    return failure();
  ctx.setOutput(0, joined->first);
  setOutputBound(ctx, 0, {axis, joined->second});
  return success();
}

//===----------------------------------------------------------------------===//
// Slice of a padded dimension
//===----------------------------------------------------------------------===//

/// What Slice does to the padded dimension it slices: from `start` to the
/// static `end`, and when the end is a tracked run-time value (PyTorch's
/// `split(boxes_per_image)`: an end computed from a length), `endValue`
/// holds it and `end` is its upper bound.
struct SlicedRange {
  int64_t start = 0, end = 0;
  Value endValue;
};

/// The ends of Slice: known, or tracked (their upper bounds, and for each
/// element of data-dependent length its run-time value).
FailureOr<std::pair<SmallVector<int64_t>, SmallVector<Value>>>
sliceEnds(NodeContext &ctx) {
  SmallVector<Value> values;
  if (!isTracked(ctx, 2)) {
    auto known = ctx.constantInts(2, "ends");
    if (failed(known))
      return failure();
    values.resize(known->size());
    return std::pair(*known, values);
  }
  SmallVector<int64_t> upper;
  for (auto [k, e] : llvm::enumerate(*intsOf(ctx, 2))) {
    upper.push_back(e.upper);
    if (e.exact) {
      values.push_back(Value());
      continue;
    }
    auto v = runTimeElement(ctx, 2, e, k);
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  return std::pair(upper, values);
}

/// The range Slice gives the padded dimension `dim`, if it slices it;
/// refused unless the start is known, start and end are non-negative and
/// the step is 1.
FailureOr<std::optional<SlicedRange>> slicedRange(NodeContext &ctx,
                                                  int64_t dim) {
  bool asInputs = ctx.opset() >= 10;
  auto read = [&](unsigned i, StringRef attr,
                  StringRef what) -> FailureOr<SmallVector<int64_t>> {
    if (asInputs)
      return ctx.constantInts(i, what);
    auto v = ctx.getInts(attr);
    if (!v)
      return ctx.fail(what + " is required");
    return *v;
  };
  auto starts = read(1, "starts", "starts");
  if (failed(starts))
    return failure();
  FailureOr<std::pair<SmallVector<int64_t>, SmallVector<Value>>> ends =
      failure();
  if (asInputs) {
    ends = sliceEnds(ctx);
  } else if (auto known = read(2, "ends", "ends"); succeeded(known)) {
    ends = std::pair(*known, SmallVector<Value>(known->size()));
  }
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  for (int64_t a = 0; a < int64_t(starts->size()); ++a)
    axes.push_back(a);
  if (asInputs ? ctx.hasInput(3) : ctx.hasAttr("axes")) {
    auto a = read(3, "axes", "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  if (asInputs && ctx.hasInput(4)) {
    auto s = ctx.constantInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  int64_t rank = ctx.inputRank(0), size = ctx.inputShape(0)[dim];
  for (auto [k, a] : llvm::enumerate(axes)) {
    if ((a < 0 ? a + rank : a) != dim)
      continue;
    int64_t start = (*starts)[k], end = ends->first[k];
    if (start < 0 || end < 0 || steps[k] != 1)
      return ctx.fail("slicing a dimension of data-dependent length is "
                      "supported only from a non-negative start to a "
                      "non-negative end with step 1 (negative positions "
                      "count from a run-time end)");
    return std::optional<SlicedRange>(SlicedRange{
        std::min(start, size), std::min(end, size), ends->second[k]});
  }
  return std::optional<SlicedRange>();
}

/// The Slice handler, with run-time ends (tracked) replaced by their upper
/// bounds: the static slice keeps every element that may be valid.
LogicalResult sliceToUpperEnds(NodeContext &ctx) {
  ImportedValue *endsIn = inputValue(ctx, 2);
  if (!endsIn || !endsIn->runTimeInts || ctx.opset() < 10)
    return ownHandler(ctx);
  ImportedValue saved = *endsIn;
  HostTensor upper = HostTensor::splat(TP::INT64, endsIn->shape, 0);
  for (auto [k, e] : llvm::enumerate(*endsIn->runTimeInts))
    upper.ints[k] = e.upper;
  endsIn->known = std::make_shared<const HostTensor>(
      endsIn->dataType == TP::INT64 ? std::move(upper)
                                    : castHost(upper, endsIn->dataType));
  endsIn->runTimeInts.reset();
  LogicalResult done = ownHandler(ctx);
  *endsIn = std::move(saved);
  return done;
}

LogicalResult importSliceOfBounded(NodeContext &ctx, BoundedDim b,
                                   const SlicedRange &range) {
  if (failed(sliceToUpperEnds(ctx)))
    return failure();
  Value end = range.endValue ? range.endValue : i64Scalar(ctx, range.end);
  auto upTo = lengthOp(ctx, LengthOp::Min, b.length, end);
  if (failed(upTo))
    return failure();
  auto kept = lengthOp(ctx, LengthOp::Sub, *upTo, i64Scalar(ctx, range.start));
  if (failed(kept))
    return failure();
  auto len = lengthOp(ctx, LengthOp::Max, *kept, i64Scalar(ctx, 0));
  if (failed(len))
    return failure();
  setOutputBound(ctx, 0, {b.dim, *len});
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions over a padded dimension
//===----------------------------------------------------------------------===//

/// The axes a reduction reduces (all of them when none are given).
FailureOr<SmallVector<int64_t>> reducedAxes(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  std::optional<SmallVector<int64_t>> axes = ctx.getInts("axes");
  if (ctx.hasInput(1)) {
    auto a = ctx.constantInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  SmallVector<int64_t> out;
  if (!axes || axes->empty()) {
    if (axes && ctx.getInt("noop_with_empty_axes", 0))
      return out;
    for (int64_t d = 0; d < rank; ++d)
      out.push_back(d);
    return out;
  }
  for (int64_t a : *axes) {
    auto n = ctx.normalizeAxis(a, rank, "axes");
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  return out;
}

/// A reduction of padded \p b: over the padded dimension, the padding reads
/// as the reduction's \p identity (none: refused); over others, the padded
/// dimension survives.
LogicalResult importReductionOfBounded(NodeContext &ctx, BoundedDim b,
                                       std::optional<double> identity) {
  auto axes = reducedAxes(ctx);
  if (failed(axes))
    return failure();
  bool overPadded = llvm::is_contained(*axes, b.dim);
  ImportedValue *in = inputValue(ctx, 0);
  ImportedValue saved = *in;
  if (overPadded) {
    if (!identity)
      return ctx.fail("reads a value of data-dependent length (padded to its "
                      "bound, docs/ONNX/Import.md), and this reduction "
                      "counts the elements of the padded dimension");
    auto x = ctx.input(0);
    if (failed(x))
      return failure();
    auto masked = maskPadding(ctx, *x, b, *identity);
    if (failed(masked))
      return failure();
    // The reduction's handler reads the masked value as its input.
    in->value = *masked;
    in->known.reset();
    in->initializer = nullptr;
  } else {
    hideBounds(*in);
  }
  LogicalResult done = ownHandler(ctx);
  *in = std::move(saved);
  if (failed(done) || overPadded)
    return done;
  // The padded dimension survives, moved left by the reduced axes before it
  // unless they are kept.
  int64_t dim = b.dim;
  if (ctx.getInt("keepdims", 1) == 0)
    for (int64_t a : *axes)
      dim -= a < b.dim;
  setOutputBound(ctx, 0, {dim, b.length});
  return success();
}

/// are compared in f64, as ArgMax's own handler compares them.
LogicalResult importArgExtremeOverPadded(NodeContext &ctx, BoundedDim b,
                                         bool isMax) {
  double inf = std::numeric_limits<double>::infinity();
  auto x = ctx.input(0);
  if (succeeded(x) && !ctx.isFloatInput(0))
    x = ctx.convert(*x, ctx.builder().getF64Type());
  if (failed(x))
    return failure();
  auto masked = maskPadding(ctx, *x, b, isMax ? -inf : inf);
  if (failed(masked))
    return failure();
  ImportedValue *in = inputValue(ctx, 0);
  ImportedValue saved = *in;
  in->value = *masked;
  in->known.reset();
  in->initializer = nullptr;
  LogicalResult done = ownHandler(ctx);
  *in = std::move(saved);
  return done;
}

} // namespace

FailureOr<Value> onnx_to_tg::maskPadding(NodeContext &ctx, Value x,
                                         BoundedDim b, double fill) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[b.dim] = type.getDimSize(b.dim);
  auto positions = iota(ctx, shape[b.dim], shape);
  if (failed(positions))
    return failure();
  OpChain c{ctx, type.getElementType()};
  return c.select(ctx.create<tg::LessOp>({*positions, b.length}), x, c.c(fill));
}

FailureOr<bool> onnx_to_tg::importWithRunTimeLengths(NodeContext &ctx) {
  const BoundRules &rules = getBoundRules(ctx);
  // A node reading a value padded in two dimensions (a Resize to a run-time
  // height and width) is imported by its rule, or refused naming the node.
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *v = inputValue(ctx, i);
    SmallVector<BoundedDim, 2> bs = v ? tg::getBounds(v->value)
                                      : SmallVector<BoundedDim, 2>();
    if (bs.size() < 2)
      continue;
    FailureOr<bool> done = false;
    if (rules.twicePadded)
      done = rules.twicePadded(ctx, i, bs);
    if (failed(done) || *done)
      return done;
    return ctx.fail("reads a value padded in two dimensions (sizes known "
                    "only at run time, docs/ONNX/Import.md); only Shape, "
                    "Gather, Slice, Concat, Cast, Identity, Unsqueeze and a "
                    "Reshape merging the two read one");
  }
  if (!rules.lengths)
    return false;
  return rules.lengths(ctx);
}

void onnx_to_tg::populateRunTimeLengthRules(BoundRulesTable &table) {
  table["Concat"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    int64_t rank = c.numInputs() ? c.inputRank(0) : 0;
    auto axis = c.normalizeAxis(c.getInt("axis", 0), rank, "axis");
    if (failed(axis))
      return failure();
    for (unsigned i = 0; i < c.numInputs(); ++i)
      if (std::optional<BoundedDim> b = inputBound(c, i); b && b->dim == *axis)
        return handled(importConcatAlongBounded(c, *axis));
    return false;
  };
  table["Slice"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    std::optional<BoundedDim> b = inputBound(c, 0);
    if (!b)
      return false;
    auto range = slicedRange(c, b->dim);
    if (failed(range))
      return failure();
    if (!*range)
      return false;
    return handled(importSliceOfBounded(c, *b, **range));
  };
  // Reductions: the value the padding of their input takes, their identity
  // (none: they count the elements).
  double inf = std::numeric_limits<double>::infinity();
  for (auto [op, identity] :
       {std::pair<StringRef, std::optional<double>>{"ReduceMax", -inf},
        {"ReduceLogSumExp", -inf},
        {"ReduceMin", inf},
        {"ReduceSum", 0.0},
        {"ReduceSumSquare", 0.0},
        {"ReduceL1", 0.0},
        {"ReduceL2", 0.0},
        {"ReduceLogSum", 0.0},
        {"ReduceMean", std::nullopt},
        {"ReduceProd", std::nullopt}})
    addLengthsRule(table, op,
                   [identity = identity](NodeContext &c) -> FailureOr<bool> {
                     std::optional<BoundedDim> b = inputBound(c, 0);
                     if (!b)
                       return false;
                     return handled(importReductionOfBounded(c, *b, identity));
                   });
  for (auto [op, isMax] : {std::pair{"ArgMax", true}, {"ArgMin", false}})
    table[op].lengths = [isMax = isMax](NodeContext &c) -> FailureOr<bool> {
      std::optional<BoundedDim> b = inputBound(c, 0);
      if (!b)
        return false;
      auto axis = c.normalizeAxis(c.getInt("axis", 0), c.inputRank(0));
      if (failed(axis))
        return failure();
      if (*axis != b->dim)
        return false;
      return handled(importArgExtremeOverPadded(c, *b, isMax));
    };
}
