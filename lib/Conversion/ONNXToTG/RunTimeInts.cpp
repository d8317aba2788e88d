//===- RunTimeInts.cpp - Shapes and shape arithmetic on padded lengths ----===//
//
// Part of Loom. Exported detectors take the Shape of a value of
// data-dependent length (a bounded value, Dynamic.cpp) and compute with it
// (`topk(min(k, n))`, a ConstantOfShape of the same length, `numel() ==
// 0`). Shape and Size of a bounded value are computed at run time, and the
// importer tracks, per element of such small integer tensors, an upper
// bound and the length value it equals (ImportedValue::runTimeInts) through
// the shape arithmetic exporters write (Gather, Concat, Unsqueeze, Reshape,
// Cast, ReduceMin/Max/Prod, Min/Max, Add, Equal, Where); ConstantOfShape,
// Range, Reshape and Expand to a tracked shape are padded to its upper
// bounds. The rules are the operators' entries in the bound rules
// (BoundRules.h). docs/ONNX/Import.md "Bounded dynamic shapes".
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

using Ints = RunTimeInts;

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

FailureOr<Value> onnx_to_tg::runTimeElement(NodeContext &ctx, unsigned i,
                                            const RunTimeInt &e, int64_t k) {
  if (e.length)
    return e.length;
  if (e.exact)
    return i64Scalar(ctx, e.upper);
  return readElement(ctx, i, k);
}

//===----------------------------------------------------------------------===//
// Shape, Size, ConstantOfShape, and reductions of tracked integers
//===----------------------------------------------------------------------===//

LogicalResult onnx_to_tg::importShapeOfBounded(NodeContext &ctx,
                                               ArrayRef<BoundedDim> bs) {
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
    const BoundedDim *b =
        llvm::find_if(bs, [&](const BoundedDim &x) { return x.dim == d; });
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

namespace {

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
  setOutputInts(
      ctx, 0,
      {{others * shape[b.dim], false, others == 1 ? b.length : Value()}});
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
  if (failed(setSplatOutput(ctx, dims, *fill)))
    return failure();
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
    setBounds(ctx, *outputValue(ctx, 0), bounds);
  return success();
}

/// ReduceMin, ReduceMax or ReduceProd (\p kind Min, Max or Mul) of all the
/// elements of a tracked 1-D tensor, as a chain of binary ops on its
/// elements.
LogicalResult importReduceOfTracked(NodeContext &ctx, LengthOp kind) {
  Ints ints = *intsOf(ctx, 0);
  if (ints.empty())
    return ctx.fail("a reduction of an empty tracked shape is not "
                    "supported");
  Value acc;
  RunTimeInt r{kind == LengthOp::Mul ? 1 : ints.front().upper, true, Value()};
  for (auto [k, e] : llvm::enumerate(ints)) {
    auto v = runTimeElement(ctx, 0, e, k);
    if (failed(v))
      return failure();
    FailureOr<Value> next = *v;
    if (acc)
      next = lengthOp(ctx, kind, acc, *v);
    if (failed(next))
      return failure();
    acc = *next;
    r.upper = kind == LengthOp::Min   ? std::min(r.upper, e.upper)
              : kind == LengthOp::Max ? std::max(r.upper, e.upper)
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
  LogicalResult done = ownHandler(ctx);
  if (succeeded(done))
    done = propagateBounds(ctx);
  *shape = std::move(saved);
  if (failed(done) || !runTimeDim)
    return done;
  ImportedValue *out = outputValue(ctx, 0);
  int64_t dim = *runTimeDim + int64_t(out->shape.size()) - int64_t(ints.size());
  if (std::optional<BoundedDim> b = getBound(out->value)) {
    if (b->dim != dim)
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
  setOutputBound(ctx, 0, {0, length});
  return success();
}

//===----------------------------------------------------------------------===//
// Tracking through the shape arithmetic
//===----------------------------------------------------------------------===//

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
    llvm::function_ref<std::optional<RunTimeInt>(RunTimeInt, RunTimeInt)> fn) {
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

/// Gather of a tracked 1-D tensor at known indices picks those elements.
std::optional<Ints> trackedGather(NodeContext &ctx) {
  std::optional<Ints> data = intsOf(ctx, 0);
  const HostTensor *idx = ctx.known(1, kMaxTracked);
  if (!data || !idx || ctx.inputRank(0) != 1)
    return std::nullopt;
  return pickElements<RunTimeInt>(*data, idx->ints);
}

/// Concat of 1-D tracked (or known) parts: their elements in order.
std::optional<Ints> trackedConcat(NodeContext &ctx) {
  Ints out;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<Ints> part = intsOf(ctx, i);
    if (!part || ctx.inputRank(i) != 1)
      return std::nullopt;
    out.append(part->begin(), part->end());
  }
  return out;
}

/// Min or Max (\p isMin) of one-element tracked values: the least
/// (greatest) upper bound, no longer exact.
std::optional<Ints> trackedExtreme(NodeContext &ctx, bool isMin) {
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
    r.upper = isMin ? std::min(r.upper, e.upper) : std::max(r.upper, e.upper);
    r.exact = false;
    r.length = Value();
  }
  return out;
}

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
  const BoundRules &rules = getBoundRules(ctx);
  bool any = false;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    any |= isTracked(ctx, i);
  ImportedValue *out = outputValue(ctx, 0);
  if (!out || out->known || onnxutil::numElementsOf(out->shape) > kMaxTracked)
    return;
  if (!out->runTimeInts) {
    std::optional<Ints> ints =
        any && rules.track ? rules.track(ctx) : std::nullopt;
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
  setBound(ctx, v, bound);
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

void onnx_to_tg::populateRunTimeIntRules(BoundRulesTable &table) {
  table["Shape"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    std::optional<BoundedDim> b = inputBound(c, 0);
    if (!b)
      return false;
    return handled(importShapeOfBounded(c, {*b}));
  };
  table["Size"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    std::optional<BoundedDim> b = inputBound(c, 0);
    if (!b)
      return false;
    return handled(importSizeOfBounded(c, *b));
  };
  table["Range"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    if (!isTracked(c, 1) || c.known(1))
      return false;
    return handled(importRangeToTracked(c));
  };
  table["ConstantOfShape"].lengths = [](NodeContext &c) -> FailureOr<bool> {
    if (!isTracked(c, 0))
      return false;
    return handled(importConstantOfTrackedShape(c));
  };
  for (StringRef op : {"Reshape", "Expand"})
    table[op].lengths = [](NodeContext &c) -> FailureOr<bool> {
      if (!isTracked(c, 1))
        return false;
      return handled(importShapedByTracked(c, 1));
    };
  // A reduction of a tracked 1-D tensor to one element; any other is the
  // reduction's own handler, on the run-time values (or a reduction over a
  // padded dimension, RunTimeLengths.cpp).
  for (auto [op, kind] : {std::pair{"ReduceMin", LengthOp::Min},
                          std::pair{"ReduceMax", LengthOp::Max},
                          std::pair{"ReduceProd", LengthOp::Mul}})
    addLengthsRule(table, op, [kind = kind](NodeContext &c) -> FailureOr<bool> {
      if (!isTracked(c, 0) || c.inputRank(0) > 1 ||
          c.inputDataType(0) != TP::INT64 ||
          (c.inputRank(0) != 0 && c.getInt("keepdims", 1) != 0))
        return false;
      return handled(importReduceOfTracked(c, kind));
    });

  // The elements of the output of the shape arithmetic.
  for (StringRef op :
       {"Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten"})
    table[op].track = [](NodeContext &c) { return intsOf(c, 0); };
  table["Cast"].track = [](NodeContext &c) -> std::optional<Ints> {
    if (onnxutil::isFloatDataType(c.getInt("to", 0)))
      return std::nullopt;
    return intsOf(c, 0);
  };
  table["Gather"].track = trackedGather;
  table["Concat"].track = trackedConcat;
  table["Min"].track = [](NodeContext &c) { return trackedExtreme(c, true); };
  table["Max"].track = [](NodeContext &c) { return trackedExtreme(c, false); };
  table["Add"].track = trackedAdd;
  table["Equal"].track = trackedEqual;
  table["Where"].track = trackedWhere;
}
