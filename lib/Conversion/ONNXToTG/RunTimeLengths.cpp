//===- RunTimeLengths.cpp - What graphs compute from padded lengths -------===//
//
// Part of Loom. Exported detectors do more with a value of data-dependent
// length (a bounded value, Dynamic.cpp) than read its valid prefix: they
// take its Shape and compute with it (`topk(min(k, n))`, a ConstantOfShape
// of the same length, `numel() == 0`), concatenate per-class candidates
// along the padded dimension, slice the first k of them, and reduce over
// them (the largest coordinate). This file imports those idioms:
//
// - Shape and Size of a bounded value are computed at run time, and the
//   importer tracks, per element of such small integer tensors, an upper
//   bound and the length value it equals (ImportedValue::runTimeInts)
//   through the shape arithmetic exporters write (Gather, Concat,
//   Unsqueeze, Reshape, Cast, ReduceMin/Max/Prod, Min/Max);
// - ConstantOfShape of a tracked shape is padded to the upper bounds, and
//   TopK with a tracked K takes its upper bound as the static k;
// - Concat along a padded dimension is a run-time compaction: a gather from
//   the static concatenation by indices computed from the lengths;
// - Slice of a padded dimension (non-negative starts, step 1) keeps
//   min(length, end) - start;
// - reductions over a padded dimension read the padding as the reduction's
//   identity (ReduceMean, whose divisor would count it, is refused).
//
// docs/ONNX/Import.md "Bounded dynamic shapes".
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

namespace {

/// Integer tensors of at most this many elements are tracked.
constexpr int64_t kMaxTracked = 16;

using Ints = SmallVector<RunTimeInt>;

ImportedValue *inputValue(NodeContext &ctx, unsigned i) {
  return ctx.hasInput(i) ? ctx.importer().lookup(ctx.node().input(i))
                         : nullptr;
}

ImportedValue *outputValue(NodeContext &ctx, unsigned i) {
  return ctx.hasOutput(i) ? ctx.importer().lookup(ctx.node().output(i))
                          : nullptr;
}

bool isTracked(NodeContext &ctx, unsigned i) {
  ImportedValue *v = inputValue(ctx, i);
  return v && v->runTimeInts;
}

/// The elements of input `i`: tracked, or exact when known at import time.
std::optional<Ints> intsOf(NodeContext &ctx, unsigned i) {
  ImportedValue *v = inputValue(ctx, i);
  if (!v)
    return std::nullopt;
  if (v->runTimeInts)
    return *v->runTimeInts;
  const HostTensor *t = ctx.known(i, kMaxTracked);
  if (!t || t->isFloat())
    return std::nullopt;
  Ints out;
  for (int64_t e : t->ints)
    out.push_back({e, true, Value()});
  return out;
}

Type i64Type(NodeContext &ctx) { return IntegerType::get(ctx.context(), 64); }

/// A node this file imports: true, or the handler's failure.
FailureOr<bool> handled(LogicalResult result) {
  if (failed(result))
    return failure();
  return true;
}

Value i64Scalar(NodeContext &ctx, int64_t v) {
  return ctx.scalar(i64Type(ctx), static_cast<double>(v));
}

} // namespace

FailureOr<Value> onnx_to_tg::lengthOp(NodeContext &ctx, LengthOp kind, Value a,
                                      Value b) {
  Type f64 = Float64Type::get(ctx.context());
  OpChain c{ctx, f64};
  switch (kind) {
  case LengthOp::Min:
  case LengthOp::Max: {
    auto less = ctx.create<tg::LessOp>({a, b});
    return kind == LengthOp::Min ? c.select(less, a, b) : c.select(less, b, a);
  }
  case LengthOp::Add:
    return c.cast(c.bin<tg::AddOp>(c.cast(a, f64), c.cast(b, f64)),
                  i64Type(ctx));
  case LengthOp::Sub:
    return c.cast(c.bin<tg::SubOp>(c.cast(a, f64), c.cast(b, f64)),
                  i64Type(ctx));
  case LengthOp::Mul:
    return c.cast(c.bin<tg::MulOp>(c.cast(a, f64), c.cast(b, f64)),
                  i64Type(ctx));
  }
  llvm_unreachable("unknown LengthOp");
}

namespace {

/// A constant i64 tensor of `shape` holding 0, 1, ... along its one
/// dimension of size n > 1 (or its only element).
FailureOr<Value> iota(NodeContext &ctx, int64_t n,
                      ArrayRef<int64_t> shape) {
  HostTensor t;
  t.dataType = TP::INT64;
  t.shape.assign(shape.begin(), shape.end());
  for (int64_t i = 0; i < n; ++i)
    t.ints.push_back(i);
  return ctx.materialize(t, "iota");
}

/// Element `k` of a 1-D (or one-element) run-time integer tensor, rank 0.
FailureOr<Value> elementAt(NodeContext &ctx, Value v, int64_t k) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0)
    return v;
  auto flat = ctx.reshape(v, {type.getNumElements()});
  if (failed(flat))
    return failure();
  auto one = ctx.create<tg::SliceOp>(*flat, {ctx.arrayAttr("starts", {k}),
                                            ctx.arrayAttr("limits", {k + 1})});
  if (failed(one))
    return failure();
  return ctx.reshape(*one, {});
}

/// Element `k` of integer input `i`, read at run time as a rank-0 i64.
FailureOr<Value> readElement(NodeContext &ctx, unsigned i, int64_t k) {
  auto v = ctx.input(i);
  if (failed(v))
    return failure();
  auto x = ctx.convert(*v, i64Type(ctx));
  if (failed(x))
    return failure();
  return elementAt(ctx, *x, k);
}

} // namespace

FailureOr<Value> onnx_to_tg::runTimeElement(NodeContext &ctx, unsigned i,
                                            const RunTimeInt &e, int64_t k) {
  if (e.length)
    return e.length;
  if (e.exact)
    return i64Scalar(ctx, e.upper);
  return readElement(ctx, i, k);
}

namespace {

void setOutputInts(NodeContext &ctx, unsigned i, Ints ints) {
  if (ImportedValue *v = outputValue(ctx, i))
    v->runTimeInts = std::move(ints);
}

void setBound(NodeContext &ctx, unsigned i, BoundedDim b) {
  if (ImportedValue *v = outputValue(ctx, i))
    v->bound = b;
}

//===----------------------------------------------------------------------===//
// Shape, Size, ConstantOfShape, and reductions of tracked integers
//===----------------------------------------------------------------------===//

LogicalResult importShapeOfBounded(NodeContext &ctx, ArrayRef<BoundedDim> bs) {
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
  Ints ints;
  SmallVector<Value> pieces;
  SmallVector<int64_t> run;
  auto flush = [&]() -> LogicalResult {
    if (run.empty())
      return success();
    HostTensor t;
    t.dataType = TP::INT64;
    t.shape = {int64_t(run.size())};
    t.ints.assign(run.begin(), run.end());
    auto c = ctx.materialize(t, "shape");
    if (failed(c))
      return failure();
    pieces.push_back(*c);
    run.clear();
    return success();
  };
  for (int64_t d = start; d < end; ++d) {
    const BoundedDim *b = llvm::find_if(
        bs, [&](const BoundedDim &x) { return x.dim == d; });
    if (b == bs.end()) {
      run.push_back(shape[d]);
      ints.push_back({shape[d], true, Value()});
      continue;
    }
    if (failed(flush()))
      return failure();
    auto len = ctx.reshape(b->length, {1});
    if (failed(len))
      return failure();
    pieces.push_back(*len);
    ints.push_back({shape[d], false, b->length});
  }
  if (failed(flush()))
    return failure();
  if (pieces.empty())
    return ctx.fail("a Shape of no dimensions is not supported");
  Value out = pieces.front();
  if (pieces.size() > 1) {
    auto cat = ctx.create<tg::ConcatOp>(pieces, {ctx.i64Attr("axis", 0)});
    if (failed(cat))
      return failure();
    out = *cat;
  }
  ctx.setOutput(0, out);
  setOutputInts(ctx, 0, std::move(ints));
  return success();
}

LogicalResult importSizeOfBounded(NodeContext &ctx, BoundedDim b) {
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t others = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (d != b.dim)
      others *= shape[d];
  auto size = lengthOp(ctx, LengthOp::Mul, b.length, i64Scalar(ctx, others));
  if (failed(size))
    return failure();
  ctx.setOutput(0, *size);
  setOutputInts(ctx, 0,
                {{others * shape[b.dim], false,
                  others == 1 ? b.length : Value()}});
  return success();
}

/// The one element of \p ints whose value is known only at run time
/// (std::nullopt when all are exact), as a tracked shape's dimension; a
/// shape with several is refused (Loom pads one dimension).
FailureOr<std::optional<int64_t>> runTimeDimOf(NodeContext &ctx,
                                               const Ints &ints) {
  std::optional<int64_t> runTimeDim;
  for (auto [k, e] : llvm::enumerate(ints)) {
    if (e.exact)
      continue;
    if (runTimeDim)
      return ctx.fail("a shape with several dimensions of data-dependent "
                      "length is not supported (Loom pads one dimension)");
    runTimeDim = k;
  }
  return runTimeDim;
}

LogicalResult importConstantOfTrackedShape(NodeContext &ctx) {
  Ints ints = *intsOf(ctx, 0);
  SmallVector<int64_t> runTimeDims;
  for (auto [k, e] : llvm::enumerate(ints))
    if (!e.exact)
      runTimeDims.push_back(k);
  if (runTimeDims.size() > 2)
    return ctx.fail("a shape with more than two dimensions of "
                    "data-dependent length is not supported (Loom pads at "
                    "most two dimensions of a value)");
  SmallVector<int64_t> dims;
  for (const RunTimeInt &e : ints)
    dims.push_back(e.upper);
  auto fill = constantOfShapeValue(ctx);
  if (failed(fill))
    return failure();
  HostTensor value = std::move(*fill);
  Type e = onnxutil::getTGElementType(ctx.context(), value.dataType);
  if (!e)
    return ctx.fail("element type " + onnxutil::dataTypeName(value.dataType) +
                    " is not supported");
  ctx.setOutput(0, ctx.splat(RankedTensorType::get(dims, e),
                             value.asDouble(0)));
  // Zeros of two run-time sizes (torchvision's `torch.zeros(y_0, w)` around
  // a pasted mask) are padded in both.
  SmallVector<BoundedDim> bounds;
  for (int64_t d : runTimeDims) {
    auto len = runTimeElement(ctx, 0, ints[d], d);
    if (failed(len))
      return failure();
    bounds.push_back({d, *len});
  }
  if (!bounds.empty())
    setBound(ctx, 0, bounds.front());
  if (bounds.size() > 1)
    outputValue(ctx, 0)->secondBound = bounds[1];
  return success();
}

/// ReduceMin, ReduceMax or ReduceProd of all the elements of a tracked
/// 1-D tensor, as a chain of binary ops on its elements.
LogicalResult importReduceOfTracked(NodeContext &ctx) {
  StringRef op = ctx.opType();
  Ints ints = *intsOf(ctx, 0);
  if (ints.empty())
    return ctx.fail("a reduction of an empty tracked shape is not "
                    "supported");
  Value acc;
  RunTimeInt r{op == "ReduceProd" ? 1 : ints.front().upper, true, Value()};
  for (auto [k, e] : llvm::enumerate(ints)) {
    auto v = runTimeElement(ctx, 0, e, k);
    if (failed(v))
      return failure();
    FailureOr<Value> next = *v;
    if (acc)
      next = lengthOp(ctx,
                      op == "ReduceMin"   ? LengthOp::Min
                      : op == "ReduceMax" ? LengthOp::Max
                                          : LengthOp::Mul,
                      acc, *v);
    if (failed(next))
      return failure();
    acc = *next;
    r.upper = op == "ReduceMin"   ? std::min(r.upper, e.upper)
              : op == "ReduceMax" ? std::max(r.upper, e.upper)
                                  : r.upper * e.upper;
    r.exact &= e.exact;
  }
  if (ints.size() == 1)
    r.length = ints.front().length;
  ctx.setOutput(0, acc);
  setOutputInts(ctx, 0, {r});
  return success();
}

/// Reshape or Expand to a tracked shape: the node's own handler, given the
/// upper bounds as the shape, and the one element of data-dependent length
/// must be the padded dimension of the result (the input's, carried by
/// propagateBounds, or a new one of that length where Expand broadcasts).
LogicalResult importShapedByTracked(NodeContext &ctx, unsigned shapeInput) {
  Ints ints = *intsOf(ctx, shapeInput);
  auto found = runTimeDimOf(ctx, ints);
  if (failed(found))
    return failure();
  std::optional<int64_t> runTimeDim = *found;
  HostTensor uppers;
  uppers.dataType = TP::INT64;
  uppers.shape = {int64_t(ints.size())};
  for (const RunTimeInt &e : ints)
    uppers.ints.push_back(e.upper);
  ImportedValue *shape = inputValue(ctx, shapeInput);
  ImportedValue saved = *shape;
  shape->value = Value();
  shape->known = std::make_shared<const HostTensor>(std::move(uppers));
  shape->runTimeInts.reset();
  shape->origin = ImportedValue::Origin::Folded;
  LogicalResult done = getHandlerTable().find(ctx.opType())->second(ctx);
  if (succeeded(done))
    done = propagateBounds(ctx);
  *shape = std::move(saved);
  if (failed(done) || !runTimeDim)
    return done;
  ImportedValue *out = outputValue(ctx, 0);
  int64_t dim = *runTimeDim + int64_t(out->shape.size()) - int64_t(ints.size());
  if (out->bound) {
    if (out->bound->dim != dim)
      return ctx.fail("the dimension of data-dependent length in the shape "
                      "is not the padded dimension of the result");
    return success();
  }
  auto len = runTimeElement(ctx, shapeInput, ints[*runTimeDim], *runTimeDim);
  if (failed(len))
    return failure();
  // Data known at import time expanded to a padded shape (torchvision's
  // `arange(classes).expand_as(scores)`).
  return setPadded(ctx, *out, BoundedDim{dim, *len});
}

/// Range(start, limit, delta) to a tracked limit (torchvision's
/// `arange(num_masks)` over the detections): start and delta known, delta
/// positive. The static range to the limit's upper bound, padded, of length
/// max(ceil((limit - start) / delta), 0); a range from 0 by 1 has the
/// limit's own length value, so that it pairs with the values of that
/// length.
LogicalResult importRangeToTracked(NodeContext &ctx) {
  Ints limits = *intsOf(ctx, 1);
  if (limits.size() != 1)
    return ctx.fail("the limit (input 1) must have one element");
  RunTimeInt limit = limits.front();
  const HostTensor *start = ctx.known(0), *delta = ctx.known(2);
  if (!start || !delta || start->numElements() != 1 ||
      delta->numElements() != 1)
    return ctx.fail("a range to a limit of data-dependent value needs a "
                    "start and a delta known at import time");
  double s = start->asDouble(0), d = delta->asDouble(0);
  if (!(d > 0))
    return ctx.fail("a range to a limit of data-dependent value needs a "
                    "positive delta");
  double bound = std::max(std::ceil((double(limit.upper) - s) / d), 0.0);
  if (!(bound <= kFoldLimit))
    return ctx.fail("the range has more than " + Twine(kFoldLimit) +
                    " elements");
  auto values =
      ctx.materialize(rangeHost(*start, *delta, int64_t(bound)), "range");
  auto l = runTimeElement(ctx, 1, limit, 0);
  if (failed(values) || failed(l))
    return failure();
  Value length = *l;
  if (s != 0 || d != 1) {
    Type f64 = Float64Type::get(ctx.context());
    OpChain b{ctx, f64};
    auto steps =
        b.bin<tg::DivOp>(b.bin<tg::SubOp>(b.cast(length, f64), b.c(s)), b.c(d));
    if (failed(steps))
      return failure();
    auto up = b.cast(ceilAtRunTime(b, *steps), i64Type(ctx));
    if (failed(up))
      return failure();
    auto count = lengthOp(ctx, LengthOp::Max, *up, i64Scalar(ctx, 0));
    if (failed(count))
      return failure();
    length = *count;
  }
  ctx.setOutput(0, *values);
  setBound(ctx, 0, {0, length});
  return success();
}

//===----------------------------------------------------------------------===//
// Concatenation along a padded dimension
//===----------------------------------------------------------------------===//

struct Segment {
  int64_t size;
  Value length; // null: all `size` elements are valid
};

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

/// \p values concatenated along \p axis with each part's padding
/// (\p segments) compacted out: the result and its run-time length there.
FailureOr<std::pair<Value, Value>> concatCompacted(NodeContext &ctx,
                                                   ArrayRef<Value> values,
                                                   ArrayRef<Segment> segments,
                                                   int64_t axis) {
  auto stacked = values.size() == 1
                     ? FailureOr<Value>(values.front())
                     : ctx.create<tg::ConcatOp>(values,
                                                {ctx.i64Attr("axis", axis)});
  auto compact = compaction(ctx, segments);
  if (failed(stacked) || failed(compact))
    return failure();
  auto gathered = ctx.create<tg::GatherOp>({*stacked, compact->first},
                                           {ctx.i64Attr("axis", axis)});
  if (failed(gathered))
    return failure();
  return std::make_pair(*gathered, compact->second);
}

LogicalResult importConcatAlongBounded(NodeContext &ctx, int64_t axis) {
  SmallVector<Value> values;
  SmallVector<Segment> segments;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *v = inputValue(ctx, i);
    if (v && v->bound && v->bound->dim != axis)
      return ctx.fail("concatenating values padded along different "
                      "dimensions is not supported");
    int64_t size = ctx.inputShape(i)[axis];
    if (size == 0)
      continue;
    auto x = ctx.input(i);
    if (failed(x))
      return failure();
    values.push_back(*x);
    segments.push_back({size, v && v->bound ? v->bound->length : Value()});
  }
  auto joined = concatCompacted(ctx, values, segments, axis);
  if (failed(joined))
    return failure();
  ctx.setOutput(0, joined->first);
  setBound(ctx, 0, {axis, joined->second});
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
  auto handler = getHandlerTable().find("Slice");
  ImportedValue *endsIn = inputValue(ctx, 2);
  if (!endsIn || !endsIn->runTimeInts || ctx.opset() < 10)
    return handler->second(ctx);
  ImportedValue saved = *endsIn;
  HostTensor upper = HostTensor::splat(TP::INT64, endsIn->shape, 0);
  for (auto [k, e] : llvm::enumerate(*endsIn->runTimeInts))
    upper.ints[k] = e.upper;
  endsIn->known = std::make_shared<const HostTensor>(
      endsIn->dataType == TP::INT64 ? std::move(upper)
                                    : castHost(upper, endsIn->dataType));
  endsIn->runTimeInts.reset();
  LogicalResult done = handler->second(ctx);
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
  setBound(ctx, 0, {b.dim, *len});
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions over a padded dimension
//===----------------------------------------------------------------------===//

/// The value the padding of a reduction's input takes: its identity.
std::optional<double> reductionIdentity(StringRef op) {
  double inf = std::numeric_limits<double>::infinity();
  if (op == "ReduceMax" || op == "ReduceLogSumExp")
    return -inf;
  if (op == "ReduceMin")
    return inf;
  if (op == "ReduceSum" || op == "ReduceSumSquare" || op == "ReduceL1" ||
      op == "ReduceL2" || op == "ReduceLogSum")
    return 0.0;
  return std::nullopt;
}

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

LogicalResult importReductionOfBounded(NodeContext &ctx, BoundedDim b) {
  auto axes = reducedAxes(ctx);
  if (failed(axes))
    return failure();
  bool overPadded = llvm::is_contained(*axes, b.dim);
  ImportedValue *in = inputValue(ctx, 0);
  ImportedValue saved = *in;
  if (overPadded) {
    std::optional<double> identity = reductionIdentity(ctx.opType());
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
    in->bound.reset();
  } else {
    in->bound.reset();
  }
  LogicalResult done = getHandlerTable().find(ctx.opType())->second(ctx);
  *in = std::move(saved);
  if (failed(done) || overPadded)
    return done;
  // The padded dimension survives, moved left by the reduced axes before it
  // unless they are kept.
  int64_t dim = b.dim;
  if (ctx.getInt("keepdims", 1) == 0)
    for (int64_t a : *axes)
      dim -= a < b.dim;
  setBound(ctx, 0, {dim, b.length});
  return success();
}

//===----------------------------------------------------------------------===//
// Values padded in two dimensions
//===----------------------------------------------------------------------===//

/// The node's own handler with its inputs' padded dimensions hidden (the
/// caller sets the output's).
LogicalResult withBoundsHidden(NodeContext &ctx) {
  SmallVector<std::pair<ImportedValue *, ImportedValue>> saved;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *in = inputValue(ctx, i);
    if (!in || (!in->bound && !in->secondBound) ||
        llvm::any_of(saved, [&](auto &p) { return p.first == in; }))
      continue;
    saved.push_back({in, *in});
    in->bound.reset();
    in->secondBound.reset();
  }
  LogicalResult done = getHandlerTable().find(ctx.opType())->second(ctx);
  for (auto &[in, value] : saved)
    *in = std::move(value);
  return done;
}

/// Sets output 0's padded dimensions (one or two).
void setBounds(NodeContext &ctx, ArrayRef<BoundedDim> bs) {
  ImportedValue *out = outputValue(ctx, 0);
  out->bound = bs.front();
  if (bs.size() > 1)
    out->secondBound = bs[1];
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
  auto read = b.select(ctx.create<tg::LessOp>({p, i64Scalar(ctx, 0)}),
                       fromEnd, p);
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
                                       SmallVector<BoundedDim> bs) {
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
  setBounds(ctx, bs);
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
    ImportedValue *v = inputValue(ctx, i);
    if (!v->bound) {
      anyUnpadded = true;
      continue;
    }
    for (const std::optional<BoundedDim> &b : {v->bound, v->secondBound})
      if (b && b->dim == *axis)
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
    ImportedValue *v = inputValue(ctx, i);
    if (!v->bound || !v->secondBound)
      return ctx.fail("a Concat along a padded dimension of values padded in "
                      "two dimensions needs every part padded in both");
    BoundedDim along = v->bound->dim == *axis ? *v->bound : *v->secondBound;
    BoundedDim across = v->bound->dim == *axis ? *v->secondBound : *v->bound;
    if (along.dim != *axis ||
        (other && (other->dim != across.dim || other->length != across.length)))
      return ctx.fail("a Concat of values padded in two dimensions needs "
                      "the parts' other padded dimension to have the same "
                      "length");
    other = across;
    int64_t size = ctx.inputShape(i)[*axis];
    if (size == 0)
      continue;
    auto x = ctx.input(i);
    if (failed(x))
      return failure();
    values.push_back(*x);
    segments.push_back({size, along.length});
  }
  auto joined = concatCompacted(ctx, values, segments, *axis);
  if (failed(joined))
    return failure();
  ctx.setOutput(0, joined->first);
  setBounds(ctx, {BoundedDim{*axis, joined->second}, *other});
  return success();
}

/// Unsqueeze of a value padded in two dimensions: they move past the new
/// axes. Cast and Identity keep them.
LogicalResult importReshapeLikeOfTwicePadded(NodeContext &ctx,
                                             SmallVector<BoundedDim> bs) {
  if (failed(withBoundsHidden(ctx)))
    return failure();
  if (ctx.opType() == "Unsqueeze") {
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
      if (!llvm::any_of(axes, [&](int64_t a) {
            return (a < 0 ? a + outRank : a) == p;
          }))
        fromInput.push_back(p);
    for (BoundedDim &b : bs)
      b.dim = fromInput[b.dim];
  }
  setBounds(ctx, bs);
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
  setBounds(ctx, kept);
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
  setBound(ctx, 0, {rank - 2, *length});
  return success();
}

/// A node reading a value padded in two dimensions (a Resize to a
/// run-time height and width): Shape, Gather and a Reshape merging them
/// are imported; any other is refused, naming the node.
FailureOr<bool> importWithTwoPaddedDims(NodeContext &ctx) {
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *v = inputValue(ctx, i);
    if (!v || !v->secondBound)
      continue;
    StringRef op = ctx.opType();
    SmallVector<BoundedDim> bs{*v->bound, *v->secondBound};
    if (i == 0 && op == "Shape")
      return handled(importShapeOfBounded(ctx, bs));
    if (i == 0 && op == "Gather")
      return handled(importGatherOfTwicePadded(ctx, bs));
    if (i == 0 && op == "Reshape" && !isTracked(ctx, 1))
      return handled(importReshapeMergingPadded(ctx, bs[0], bs[1]));
    if (i == 0 && op == "Slice")
      return handled(importSliceOfTwicePadded(ctx, bs));
    if (op == "Concat")
      return handled(importConcatOfTwicePadded(ctx));
    if (i == 0 && (op == "Unsqueeze" || op == "Cast" || op == "Identity"))
      return handled(importReshapeLikeOfTwicePadded(ctx, bs));
    return ctx.fail("reads a value padded in two dimensions (sizes known "
                    "only at run time, docs/ONNX/Import.md); only Shape, "
                    "Gather, Slice, Concat, Cast, Identity, Unsqueeze and a "
                    "Reshape merging the two read one");
  }
  return false;
}

/// ArgMax or ArgMin along a padded dimension: the padding reads as the
/// value that never wins (-inf for ArgMax, +inf for ArgMin), so the index is
/// that of the valid elements' extreme (0 when there are none). Integers
/// are compared in f64, as ArgMax's own handler compares them.
LogicalResult importArgExtremeOverPadded(NodeContext &ctx, BoundedDim b) {
  double inf = std::numeric_limits<double>::infinity();
  auto x = ctx.input(0);
  if (succeeded(x) && !ctx.isFloatInput(0))
    x = ctx.convert(*x, ctx.builder().getF64Type());
  if (failed(x))
    return failure();
  auto masked =
      maskPadding(ctx, *x, b, ctx.opType() == "ArgMax" ? -inf : inf);
  if (failed(masked))
    return failure();
  ImportedValue *in = inputValue(ctx, 0);
  ImportedValue saved = *in;
  in->value = *masked;
  in->known.reset();
  in->initializer = nullptr;
  in->bound.reset();
  LogicalResult done = getHandlerTable().find(ctx.opType())->second(ctx);
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
  return c.select(ctx.create<tg::LessOp>({*positions, b.length}), x,
                  c.c(fill));
}

namespace {

//===----------------------------------------------------------------------===//
// Tracking through the shape arithmetic
//===----------------------------------------------------------------------===//

/// After the node's own handler: the tracked elements of its output.
/// Element \p k of \p v broadcast to \p n elements (one element, or n).
std::optional<RunTimeInt> broadcastElement(const Ints &v, size_t n, size_t k) {
  if (v.size() == n)
    return v[k];
  if (v.size() == 1)
    return v.front();
  return std::nullopt;
}

/// Inputs 0 and 1 tracked (or known), broadcast against each other, and
/// combined element by element with \p fn; nothing when an input is not
/// tracked or \p fn gives nothing for an element.
std::optional<Ints> zipTracked(
    NodeContext &ctx,
    llvm::function_ref<std::optional<RunTimeInt>(RunTimeInt, RunTimeInt)>
        fn) {
  std::optional<Ints> a = intsOf(ctx, 0), b = intsOf(ctx, 1);
  if (!a || !b)
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  Ints out;
  for (size_t k = 0; k < n; ++k) {
    std::optional<RunTimeInt> x = broadcastElement(*a, n, k),
                              y = broadcastElement(*b, n, k);
    std::optional<RunTimeInt> r = x && y ? fn(*x, *y) : std::nullopt;
    if (!r)
      return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

/// Equal of tracked integers, where every comparison is decided at import
/// time: two exact elements compare; one of data-dependent length (a
/// length, in [0, upper]) equals no value outside that range (PyTorch's
/// `Where(Equal(shape, -1), 1, shape)` before an Expand).
std::optional<Ints> trackedEqual(NodeContext &ctx) {
  return zipTracked(
      ctx, [](RunTimeInt x, RunTimeInt y) -> std::optional<RunTimeInt> {
        if (!x.exact && !y.exact)
          return std::nullopt;
        if (!y.exact)
          std::swap(x, y);
        bool outside = y.upper < 0 || y.upper > x.upper;
        if (!x.exact && !outside)
          return std::nullopt;
        return RunTimeInt{x.exact && x.upper == y.upper, true, Value()};
      });
}

/// Add of tracked integers that cannot be negative (lengths, and known
/// non-negative values: PyTorch's `start + boxes_per_image` slice ends):
/// the sum of the upper bounds; a length plus 0 is that length.
std::optional<Ints> trackedAdd(NodeContext &ctx) {
  return zipTracked(
      ctx, [](RunTimeInt x, RunTimeInt y) -> std::optional<RunTimeInt> {
        if (x.upper < 0 || y.upper < 0)
          return std::nullopt;
        if (y.exact && y.upper == 0)
          return x;
        if (x.exact && x.upper == 0)
          return y;
        return RunTimeInt{x.upper + y.upper, x.exact && y.exact, Value()};
      });
}

/// Where on a condition known at import time: each element the chosen
/// input's (tracked or exact).
std::optional<Ints> trackedWhere(NodeContext &ctx) {
  std::optional<Ints> c = intsOf(ctx, 0), x = intsOf(ctx, 1),
                      y = intsOf(ctx, 2);
  if (!c || !x || !y)
    return std::nullopt;
  size_t n = std::max({c->size(), x->size(), y->size()});
  Ints out;
  for (size_t k = 0; k < n; ++k) {
    std::optional<RunTimeInt> ck = broadcastElement(*c, n, k),
                              xk = broadcastElement(*x, n, k),
                              yk = broadcastElement(*y, n, k);
    if (!ck || !xk || !yk || !ck->exact)
      return std::nullopt;
    out.push_back(ck->upper ? *xk : *yk);
  }
  return out;
}

std::optional<Ints> trackedResult(NodeContext &ctx) {
  StringRef op = ctx.opType();
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" ||
      op == "Reshape" || op == "Flatten" ||
      (op == "Cast" && !onnxutil::isFloatDataType(ctx.getInt("to", 0))))
    return intsOf(ctx, 0);
  if (op == "Gather") {
    std::optional<Ints> data = intsOf(ctx, 0);
    const HostTensor *idx = ctx.known(1, kMaxTracked);
    if (!data || !idx || ctx.inputRank(0) != 1)
      return std::nullopt;
    return pickElements<RunTimeInt>(*data, idx->ints);
  }
  if (op == "Concat") {
    Ints out;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      std::optional<Ints> part = intsOf(ctx, i);
      if (!part || ctx.inputRank(i) != 1)
        return std::nullopt;
      out.append(part->begin(), part->end());
    }
    return out;
  }
  if (op == "Min" || op == "Max") {
    std::optional<Ints> out;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      std::optional<Ints> part = intsOf(ctx, i);
      if (!part || part->size() != 1)
        return std::nullopt;
      if (!out) {
        out = part;
        continue;
      }
      RunTimeInt &r = out->front();
      const RunTimeInt &e = part->front();
      r.upper = op == "Min" ? std::min(r.upper, e.upper)
                            : std::max(r.upper, e.upper);
      r.exact = false;
      r.length = Value();
    }
    return out;
  }
  if (op == "Add")
    return trackedAdd(ctx);
  if (op == "Equal")
    return trackedEqual(ctx);
  if (op == "Where")
    return trackedWhere(ctx);
  return std::nullopt;
}

} // namespace

FailureOr<bool> onnx_to_tg::importWithRunTimeLengths(NodeContext &ctx) {
  auto twice = importWithTwoPaddedDims(ctx);
  if (failed(twice) || *twice)
    return twice;
  StringRef op = ctx.opType();
  ImportedValue *in = inputValue(ctx, 0);
  std::optional<BoundedDim> b = in ? in->bound : std::nullopt;
  if (op == "Shape" && b)
    return handled(importShapeOfBounded(ctx, {*b}));
  if (op == "Size" && b)
    return handled(importSizeOfBounded(ctx, *b));
  if (op == "Range" && isTracked(ctx, 1) && !ctx.known(1))
    return handled(importRangeToTracked(ctx));
  if (op == "ConstantOfShape" && isTracked(ctx, 0))
    return handled(importConstantOfTrackedShape(ctx));
  if ((op == "Reshape" || op == "Expand") && isTracked(ctx, 1))
    return handled(importShapedByTracked(ctx, 1));
  // A reduction of a tracked 1-D tensor to one element; any other is the
  // reduction's own handler, on the run-time values.
  if ((op == "ReduceMin" || op == "ReduceMax" || op == "ReduceProd") &&
      isTracked(ctx, 0) && ctx.inputRank(0) <= 1 &&
      ctx.inputDataType(0) == TP::INT64 &&
      (ctx.inputRank(0) == 0 || ctx.getInt("keepdims", 1) == 0))
    return handled(importReduceOfTracked(ctx));
  if (op == "Concat") {
    int64_t rank = ctx.numInputs() ? ctx.inputRank(0) : 0;
    auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "axis");
    if (failed(axis))
      return failure();
    for (unsigned i = 0; i < ctx.numInputs(); ++i)
      if (ImportedValue *v = inputValue(ctx, i); v && v->bound &&
                                                 v->bound->dim == *axis)
        return handled(importConcatAlongBounded(ctx, *axis));
    return false;
  }
  if (op == "Slice" && b) {
    auto range = slicedRange(ctx, b->dim);
    if (failed(range))
      return failure();
    if (!*range)
      return false;
    return handled(importSliceOfBounded(ctx, *b, **range));
  }
  if (op.starts_with("Reduce") && b)
    return handled(importReductionOfBounded(ctx, *b));
  if ((op == "ArgMax" || op == "ArgMin") && b) {
    auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
    if (failed(axis))
      return failure();
    if (*axis == b->dim)
      return handled(importArgExtremeOverPadded(ctx, *b));
  }
  return false;
}

namespace {

/// The elements of a small integer value whose range is bounded and not
/// negative (ValueRanges.cpp): tracked as elements of data-dependent value
/// with their upper bounds.
std::optional<Ints> intsOfRanges(const ImportedValue &v) {
  if (v.ranges.empty() || onnxutil::isFloatDataType(v.dataType) ||
      v.dataType == TP::BOOL)
    return std::nullopt;
  int64_t n = onnxutil::numElementsOf(v.shape);
  Ints out;
  for (int64_t k = 0; k < n; ++k) {
    const Interval &r = v.ranges[v.ranges.size() == 1 ? 0 : k];
    if (!(r.lo >= 0) || !(r.hi <= double(int64_t(1) << 53)))
      return std::nullopt;
    out.push_back({int64_t(std::floor(r.hi)), false, Value()});
  }
  return out;
}

} // namespace

void onnx_to_tg::trackRunTimeInts(NodeContext &ctx) {
  bool any = false;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    any |= isTracked(ctx, i);
  ImportedValue *out = outputValue(ctx, 0);
  if (!out || out->known || onnxutil::numElementsOf(out->shape) > kMaxTracked)
    return;
  if (!out->runTimeInts) {
    std::optional<Ints> ints = any ? trackedResult(ctx) : std::nullopt;
    if (!ints)
      ints = intsOfRanges(*out);
    if (!ints || int64_t(ints->size()) != onnxutil::numElementsOf(out->shape))
      return;
    out->runTimeInts = std::move(*ints);
  }
  // Every element exact (the static dimensions of a padded value's Shape):
  // the result is known at import time too, so that what follows folds (a
  // branch on such a dimension, as torchvision's MultiScaleRoIAlign's If on
  // a box tensor's second dimension, imports one branch).
  if (!llvm::all_of(*out->runTimeInts,
                    [](const RunTimeInt &e) { return e.exact; }))
    return;
  HostTensor t = HostTensor::splat(TP::INT64, out->shape, 0);
  for (auto [k, e] : llvm::enumerate(*out->runTimeInts))
    t.ints[k] = e.upper;
  out->known = std::make_shared<const HostTensor>(
      out->dataType == TP::INT64 ? std::move(t) : castHost(t, out->dataType));
}

LogicalResult onnx_to_tg::setPadded(NodeContext &ctx, ImportedValue &v,
                                    BoundedDim bound) {
  // A padded value is no longer known at import time (consumers must see
  // its bound), so a known one becomes a constant of the graph.
  if (v.known) {
    if (!v.value) {
      auto value = ctx.materialize(*v.known, "padded");
      if (failed(value))
        return failure();
      v.value = *value;
    }
    v.known.reset();
    v.origin = ImportedValue::Origin::Computed;
  }
  v.bound = bound;
  return success();
}

FailureOr<std::optional<RunTimeInt>> onnx_to_tg::trackedScalar(NodeContext &ctx,
                                                                unsigned i) {
  if (!isTracked(ctx, i))
    return std::optional<RunTimeInt>();
  Ints ints = *intsOf(ctx, i);
  if (ints.size() != 1)
    return ctx.fail("input " + Twine(i) + " must have one element");
  return std::optional<RunTimeInt>(ints.front());
}
