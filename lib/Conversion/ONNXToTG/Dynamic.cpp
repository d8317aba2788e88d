//===- Dynamic.cpp - NonZero, TopK, NMS, Unique, GatherND; bounded values -===//
//
// Part of Loom. The ONNX operators whose result length depends on the data,
// imported as bounded dynamic shapes (docs/ONNX/Import.md "Bounded dynamic
// shapes"): a result is a tensor padded to a static upper bound, and a
// rank-0 i64 value beside it holds its run-time length. The importer keeps,
// for every ONNX value, which of its dimensions is bounded and by which
// length value (ImportedValue::bound); the bound rules (BoundRules.h) carry
// that through the other operators (BoundPropagation.cpp) or refuse them,
// naming the node.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include "loom/Dialect/TG/IR/TGOps.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

std::optional<BoundedDim> onnx_to_tg::inputBound(NodeContext &ctx, unsigned i) {
  if (!ctx.hasInput(i))
    return std::nullopt;
  ImportedValue *v = ctx.importer().lookup(ctx.node().input(i));
  return v ? getBound(v->value) : std::nullopt;
}

void onnx_to_tg::setOutputBound(NodeContext &ctx, unsigned i,
                                BoundedDim bound) {
  if (!ctx.hasOutput(i))
    return;
  if (ImportedValue *v = ctx.importer().lookup(ctx.node().output(i)))
    setBound(ctx, *v, bound);
}

std::optional<BoundedDim> onnx_to_tg::getBound(Value v) {
  SmallVector<BoundedDim, 2> bounds = tg::getBounds(v);
  if (bounds.empty())
    return std::nullopt;
  return bounds.front();
}

void onnx_to_tg::setBounds(NodeContext &ctx, ImportedValue &v,
                           ArrayRef<BoundedDim> bounds) {
  if (v.value)
    v.value = tg::withBounds(ctx.builder(), ctx.loc(), v.value, bounds);
}

void onnx_to_tg::setBound(NodeContext &ctx, ImportedValue &v,
                          BoundedDim bound) {
  SmallVector<BoundedDim, 2> bounds = tg::getBounds(v.value);
  if (bounds.empty())
    bounds.push_back(bound);
  else
    bounds.front() = bound;
  setBounds(ctx, v, bounds);
}

void onnx_to_tg::hideBounds(ImportedValue &v) {
  v.value = tg::stripBounds(v.value);
}

static LogicalResult importNonZero(NodeContext &ctx) {
  auto input = ctx.input(0);
  if (failed(input))
    return failure();
  // Of a padded value: its padding reads as zero.
  if (std::optional<BoundedDim> b = inputBound(ctx, 0)) {
    auto masked = maskPadding(ctx, *input, *b, 0.0);
    if (failed(masked))
      return failure();
    input = *masked;
  }
  if (ctx.inputRank(0) == 0)
    return ctx.fail("NonZero of a scalar is not supported");
  auto op = ctx.createOp(tg::NonZeroOp::getOperationName(), {*input}, {},
                         std::nullopt);
  if (failed(op))
    return failure();
  ctx.setOutput(0, (*op)->getResult(0));
  setOutputBound(ctx, 0, {1, (*op)->getResult(1)});
  return success();
}

/// A scalar (or one-element) integer input known at import time.
static FailureOr<int64_t> constantScalarInt(NodeContext &ctx, unsigned i,
                                            StringRef what) {
  auto v = ctx.constantInts(i, what);
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return ctx.fail(what + " must have one element");
  return (*v)[0];
}

static LogicalResult importTopK(NodeContext &ctx) {
  if (ctx.opset() < 10)
    return ctx.fail("TopK before opset 10 (k as an attribute) is not "
                    "supported");
  auto input = ctx.input(0);
  if (failed(input))
    return failure();
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank, "axis");
  if (failed(axis))
    return failure();
  // A K computed from lengths (topk(min(k, n)) after a nonzero) takes its
  // upper bound as the static k, and the count is at most K.
  auto runTimeK = trackedScalar(ctx, 1);
  if (failed(runTimeK))
    return failure();
  auto k = *runTimeK ? FailureOr<int64_t>(std::min((*runTimeK)->upper,
                                                   ctx.inputShape(0)[*axis]))
                     : constantScalarInt(ctx, 1,
                                         "K (computed at run time from "
                                         "something else than shapes)");
  if (failed(k))
    return failure();
  SmallVector<Value> operands = {*input};
  std::optional<BoundedDim> bound = inputBound(ctx, 0);
  if (bound && bound->dim != *axis)
    return ctx.fail("TopK along axis " + Twine(*axis) +
                    " of a value whose axis " + Twine(bound->dim) +
                    " has a data-dependent length is not supported");
  if (bound)
    operands.push_back(bound->length);
  if (*k < 0 || *k > ctx.inputShape(0)[*axis])
    return ctx.fail("K = " + Twine(*k) + " is not in [0, " +
                    Twine(ctx.inputShape(0)[*axis]) + "], the size of axis " +
                    Twine(*axis) + (bound ? " (its upper bound)" : ""));
  auto op =
      ctx.createOp(tg::TopKOp::getOperationName(), operands,
                   {ctx.i64Attr("k", *k), ctx.i64Attr("axis", *axis),
                    ctx.boolAttr("largest", ctx.getInt("largest", 1) != 0),
                    ctx.boolAttr("sorted", ctx.getInt("sorted", 1) != 0)},
                   std::nullopt);
  if (failed(op))
    return failure();
  Value count = (*op)->getResult(2);
  if (*runTimeK && !(*runTimeK)->exact) {
    auto kValue = ctx.input(1);
    if (failed(kValue))
      return failure();
    auto kScalar = ctx.reshape(*kValue, {});
    if (failed(kScalar))
      return failure();
    auto least = lengthOp(ctx, LengthOp::Min, count, *kScalar);
    if (failed(least))
      return failure();
    count = *least;
  }
  for (unsigned i = 0; i < 2; ++i) {
    ctx.setOutput(i, (*op)->getResult(i));
    if (bound || (*runTimeK && !(*runTimeK)->exact))
      setOutputBound(ctx, i, {*axis, count});
  }
  return success();
}

static LogicalResult importNonMaxSuppression(NodeContext &ctx) {
  auto boxes = ctx.input(0), scores = ctx.input(1);
  if (failed(boxes) || failed(scores))
    return failure();
  if (failed(ctx.requireFloatInput(0)) || failed(ctx.requireFloatInput(1)))
    return failure();
  std::optional<BoundedDim> boxBound = inputBound(ctx, 0),
                            scoreBound = inputBound(ctx, 1);
  if ((boxBound && boxBound->dim != 1) ||
      (scoreBound && scoreBound->dim != 2) ||
      bool(boxBound) != bool(scoreBound) ||
      (boxBound && boxBound->length != scoreBound->length))
    return ctx.fail("boxes and scores of data-dependent length are supported "
                    "only with the same length along the box dimension");
  int64_t maxOutput = 0;
  if (ctx.hasInput(2)) {
    auto m = constantScalarInt(ctx, 2, "max_output_boxes_per_class");
    if (failed(m))
      return failure();
    maxOutput = std::max<int64_t>(*m, 0);
  }
  SmallVector<NamedAttribute> attrs = {
      ctx.i64Attr("center_point_box", ctx.getInt("center_point_box", 0)),
      ctx.i64Attr("max_output_boxes_per_class", maxOutput)};
  if (ctx.hasInput(3)) {
    auto iou = ctx.constantDoubles(3, "iou_threshold");
    if (failed(iou))
      return failure();
    if (iou->size() != 1)
      return ctx.fail("iou_threshold must have one element");
    attrs.push_back(ctx.f64Attr("iou_threshold", (*iou)[0]));
  }
  if (ctx.hasInput(4)) {
    auto score = ctx.constantDoubles(4, "score_threshold");
    if (failed(score))
      return failure();
    if (score->size() != 1)
      return ctx.fail("score_threshold must have one element");
    attrs.push_back(ctx.f64Attr("score_threshold", (*score)[0]));
  }
  SmallVector<Value> operands = {*boxes, *scores};
  if (boxBound)
    operands.push_back(boxBound->length);
  auto op = ctx.createOp(tg::NonMaxSuppressionOp::getOperationName(), operands,
                         attrs, std::nullopt);
  if (failed(op))
    return failure();
  ctx.setOutput(0, (*op)->getResult(0));
  setOutputBound(ctx, 0, {0, (*op)->getResult(1)});
  return success();
}

/// Most elements Unique takes (it compares every pair).
constexpr int64_t kMaxUniqueElements = 4096;

/// Unique without an axis, over the flattened input x [N], from pairwise
/// comparisons in f64 (exact for integers below 2^53): x[i] is the first
/// of its value when no earlier x[j] equals it; its rank among the distinct
/// values counts the first occurrences of smaller values (sorted = 1) or
/// those before its own first occurrence (sorted = 0), and is inverse[i].
/// Y, indices and counts are padded to N with the number of distinct
/// values as their run-time length: entry k gathers the first occurrence
/// of rank k (its value, its position, the number of its equals).
static LogicalResult importUnique(NodeContext &ctx) {
  if (ctx.hasAttr("axis"))
    return ctx.fail("Unique along an axis is not supported (only of the "
                    "flattened input)");
  if (inputBound(ctx, 0))
    return ctx.fail("Unique of a value of data-dependent length is not "
                    "supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t n = onnxutil::numElementsOf(ctx.inputShape(0));
  if (n < 1 || n > kMaxUniqueElements)
    return ctx.fail("Unique of " + Twine(n) + " elements is not supported " +
                    "(1 to " + Twine(kMaxUniqueElements) + ")");
  bool sorted = ctx.getInt("sorted", 1) != 0;
  Type f64 = ctx.builder().getF64Type(), i64 = ctx.builder().getI64Type();
  Type elementType = cast<RankedTensorType>(x->getType()).getElementType();
  OpChain B{ctx, f64};
  auto iota = [&](ArrayRef<int64_t> shape) {
    HostTensor t;
    t.dataType = onnx::TensorProto::DOUBLE;
    t.shape.assign(shape.begin(), shape.end());
    for (int64_t i = 0; i < n; ++i)
      t.floats.push_back(double(i));
    return ctx.materialize(t, "unique_positions");
  };
  auto value = B.cast(ctx.reshape(*x, {n}), f64);
  if (failed(value))
    return failure();
  auto row = ctx.reshape(*value, {n, 1}), col = ctx.reshape(*value, {1, n});
  auto rowPos = iota({n, 1}), colPos = iota({1, n});
  auto asNumber = [&](FailureOr<Value> cond) {
    return B.select(cond, B.c(1), B.c(0));
  };
  // equal[i, j], and the equals of x[i] before it.
  auto equal = asNumber(B.bin<tg::EqualOp>(row, col));
  auto earlier = asNumber(B.bin<tg::LessOp>(colPos, rowPos));
  auto before =
      B.reduce<tg::ReduceSumOp>(B.bin<tg::MulOp>(equal, earlier), {1});
  auto first = asNumber(B.bin<tg::EqualOp>(before, B.c(0))); // [n, 1]
  auto firstRow = ctx.reshape(*first, {1, n});
  auto equals = B.reduce<tg::ReduceSumOp>(equal, {1}); // [n, 1]
  FailureOr<Value> ahead = failure(); // [i, j]: j's value ranks before i's
  if (sorted) {
    ahead = B.bin<tg::LessOp>(col, row);
  } else {
    // The first occurrence of x[i]: n - max_j(equal[i, j] * (n - j)).
    auto firstPos = B.bin<tg::SubOp>(
        B.c(double(n)),
        B.reduce<tg::ReduceMaxOp>(
            B.bin<tg::MulOp>(equal, B.bin<tg::SubOp>(B.c(double(n)), colPos)),
            {1}));
    ahead = B.bin<tg::LessOp>(colPos, firstPos);
  }
  auto rank = B.reduce<tg::ReduceSumOp>(
      B.bin<tg::MulOp>(asNumber(ahead), firstRow), {1}); // [n, 1]
  // pick[k, i]: x[i] is the first occurrence of rank k.
  auto pick = B.bin<tg::MulOp>(
      asNumber(B.bin<tg::EqualOp>(ctx.reshape(*rank, {1, n}), rowPos)),
      firstRow);
  auto gathered = [&](FailureOr<Value> of) {
    return ctx.reshape(
        *B.reduce<tg::ReduceSumOp>(B.bin<tg::MulOp>(pick, of), {1}), {n});
  };
  auto distinct = B.reduce<tg::ReduceSumOp>(*first, {0, 1});
  if (failed(rank) || failed(pick) || failed(equals) || failed(distinct))
    return failure();
  auto length = B.cast(ctx.reshape(*distinct, {}), i64);
  // Y: the picked value, selected rather than multiplied (inf * 0 is NaN).
  auto y = B.cast(
      ctx.reshape(
          *B.reduce<tg::ReduceSumOp>(
              B.select(B.bin<tg::GreaterOp>(pick, B.c(0)), col, B.c(0)), {1}),
          {n}),
      elementType);
  auto indices = B.cast(gathered(colPos), i64);
  auto inverse = B.cast(ctx.reshape(*rank, {n}), i64);
  auto counts = B.cast(gathered(ctx.reshape(*equals, {1, n})), i64);
  if (failed(length) || failed(y) || failed(indices) || failed(inverse) ||
      failed(counts))
    return failure();
  Value outputs[] = {*y, *indices, *inverse, *counts};
  for (unsigned i = 0; i < 4; ++i) {
    ctx.setOutput(i, outputs[i]);
    if (i != 2)
      setOutputBound(ctx, i, {0, *length});
  }
  return success();
}

/// See Importer.h. Components are wrapped into range (tg.mod: negative ones
/// count from the end) and combined in f64 (exact below 2^53), then cast
/// back to i64.
FailureOr<Value> onnx_to_tg::linearizeIndices(NodeContext &ctx, Value indices,
                                              ArrayRef<int64_t> dataShape) {
  int64_t k = cast<RankedTensorType>(indices.getType()).getShape().back();
  // Dims and row-major strides of the addressed part of data.
  HostTensor dims, strides;
  dims.dataType = onnx::TensorProto::INT64;
  strides.dataType = onnx::TensorProto::DOUBLE;
  dims.shape = strides.shape = {k};
  int64_t rows = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    dims.ints.insert(dims.ints.begin(), dataShape[j]);
    strides.floats.insert(strides.floats.begin(), double(rows));
    rows *= dataShape[j];
  }
  auto dimsValue = ctx.materialize(dims, "linear_dims");
  auto stridesValue = ctx.materialize(strides, "linear_strides");
  auto idx64 = ctx.convert(indices, ctx.builder().getI64Type());
  if (failed(dimsValue) || failed(stridesValue) || failed(idx64))
    return failure();
  auto wrapped = ctx.create<tg::ModOp>({*idx64, *dimsValue});
  if (failed(wrapped))
    return failure();
  auto asF64 = ctx.convert(*wrapped, ctx.builder().getF64Type());
  if (failed(asF64))
    return failure();
  auto scaled = ctx.create<tg::MulOp>({*asF64, *stridesValue});
  if (failed(scaled))
    return failure();
  auto summed =
      ctx.create<tg::ReduceSumOp>({*scaled}, {ctx.arrayAttr("axes", {-1}),
                                              ctx.boolAttr("keepdims", false)});
  if (failed(summed))
    return failure();
  return ctx.convert(*summed, ctx.builder().getI64Type());
}

/// GatherND with batch_dims = 0: the last dimension of `indices` (size k)
/// addresses the first k dimensions of `data`, which are flattened into one
/// so that the gather is a tg.gather by linear indices (linearizeIndices).
/// Padded indices
/// (`data[mask]` after NonZero, PyTorch's boolean indexing) keep their
/// padded dimension.
static LogicalResult importGatherND(NodeContext &ctx) {
  if (ctx.getInt("batch_dims", 0) != 0)
    return ctx.fail("batch_dims other than 0 is not supported");
  if (inputBound(ctx, 0))
    return ctx.fail("GatherND from data of data-dependent length is not "
                    "supported");
  auto data = ctx.input(0), indices = ctx.input(1);
  if (failed(data) || failed(indices))
    return failure();
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  SmallVector<int64_t> idxShape(ctx.inputShape(1));
  if (idxShape.empty() || idxShape.back() < 1 ||
      idxShape.back() > int64_t(dataShape.size()))
    return ctx.fail("indices must have rank >= 1 and a last dimension in "
                    "[1, rank(data)]");
  int64_t k = idxShape.back();
  std::optional<BoundedDim> bound = inputBound(ctx, 1);
  if (bound && bound->dim == int64_t(idxShape.size()) - 1)
    return ctx.fail("indices padded along their last dimension are not "
                    "supported");
  auto linear = linearizeIndices(ctx, *indices, dataShape);
  int64_t rows = 1;
  for (int64_t d : dataShape.take_front(k))
    rows *= d;
  SmallVector<int64_t> flatShape = {rows};
  llvm::append_range(flatShape, dataShape.drop_front(k));
  auto flat = ctx.reshape(*data, flatShape);
  if (failed(linear) || failed(flat))
    return failure();
  auto out =
      ctx.create<tg::GatherOp>({*flat, *linear}, {ctx.i64Attr("axis", 0)});
  if (failed(out))
    return failure();
  ctx.setOutput(0, *out);
  if (bound)
    setOutputBound(ctx, 0, *bound);
  return success();
}

void onnx_to_tg::populateDynamicHandlers(HandlerTable &table) {
  table["GatherND"] = importGatherND;
  table["NonMaxSuppression"] = importNonMaxSuppression;
  table["NonZero"] = importNonZero;
  table["TopK"] = importTopK;
  table["Unique"] = importUnique;
}
