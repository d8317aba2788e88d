//===- Dynamic.cpp - NonZero, TopK, NMS, Unique, GatherND; bounded values -===//
//
// Part of Loom. The ONNX operators whose result length depends on the data,
// imported as bounded dynamic shapes (docs/ONNX/Import.md "Bounded dynamic
// shapes"): a result is a tensor padded to a static upper bound, and a
// rank-0 i64 value beside it holds its run-time length. The importer keeps,
// for every ONNX value, which of its dimensions is bounded and by which
// length value (ImportedValue::bound); propagateBounds carries that through
// the operators that keep the valid prefix of a padded dimension valid
// (elementwise, movement, gathers) and refuses, naming the node, every
// other consumer of a padded dimension (reductions, softmax, Shape, ...).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

std::optional<BoundedDim> onnx_to_tg::inputBound(NodeContext &ctx,
                                                 unsigned i) {
  if (!ctx.hasInput(i))
    return std::nullopt;
  ImportedValue *v = ctx.importer().lookup(ctx.node().input(i));
  return v ? v->bound : std::nullopt;
}

void onnx_to_tg::setOutputBound(NodeContext &ctx, unsigned i,
                                BoundedDim bound) {
  if (!ctx.hasOutput(i))
    return;
  if (ImportedValue *v = ctx.importer().lookup(ctx.node().output(i)))
    v->bound = bound;
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
  auto k = *runTimeK ? FailureOr<int64_t>(std::min(
                           (*runTimeK)->upper, ctx.inputShape(0)[*axis]))
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
  auto op = ctx.createOp(
      tg::TopKOp::getOperationName(), operands,
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
  if ((boxBound && boxBound->dim != 1) || (scoreBound && scoreBound->dim != 2) ||
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
  auto summed = ctx.create<tg::ReduceSumOp>(
      {*scaled}, {ctx.arrayAttr("axes", {-1}), ctx.boolAttr("keepdims", false)});
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
  auto out = ctx.create<tg::GatherOp>({*flat, *linear}, {ctx.i64Attr("axis", 0)});
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

//===----------------------------------------------------------------------===//
// Propagation of bounds through the other operators
//===----------------------------------------------------------------------===//

namespace {

/// Operators computing each output element from the input elements at the
/// same (numpy-broadcast) position: a padded dimension stays padded
/// (Expand's shape operand is never padded: only its data broadcasts).
const llvm::StringSet<> &elementwiseOperators() {
  static const llvm::StringSet<> ops = {
      "Abs",     "Add",          "And",       "Cast",        "CastLike",
      "Ceil",    "Celu",         "Clip",      "Div",         "Dropout",
      "Elu",     "Equal",        "Erf",       "Exp",         "Expand",
      "Floor",
      "Gelu",    "Greater",      "GreaterOrEqual",           "HardSigmoid",
      "HardSwish",               "Identity",  "LeakyRelu",   "Less",
      "LessOrEqual",             "Log",       "Max",         "Mean",
      "Min",     "Mod",          "Mul",       "Neg",         "Not",
      "Or",      "PRelu",        "Pow",       "Reciprocal",  "Relu",
      "Round",   "Selu",         "Sigmoid",   "Sign",        "Softsign",
      "Sqrt",    "Sub",          "Sum",       "Tanh",        "Where",
      "Xor"};
  return ops;
}

/// Operators that only rearrange elements without mixing a padded
/// dimension with another (the row-major position of each valid element
/// relative to the padded dimension is unchanged).
const llvm::StringSet<> &reshapeOperators() {
  static const llvm::StringSet<> ops = {"Reshape", "Squeeze", "Unsqueeze",
                                        "Flatten"};
  return ops;
}

/// The node's output `out` gets `bound`, or the node is refused when its
/// inputs disagree on the length.
struct BoundMerger {
  NodeContext &ctx;
  std::optional<BoundedDim> merged;
  LogicalResult add(BoundedDim b) {
    if (merged && (merged->dim != b.dim || merged->length != b.length))
      return ctx.fail("inputs of different data-dependent lengths (or padded "
                      "along different dimensions) are not supported");
    merged = b;
    return success();
  }
};

} // namespace

/// Elementwise: the inputs are aligned on the right with the output; a
/// padded input dimension must not be broadcast.
static LogicalResult propagateElementwise(NodeContext &ctx,
                                          ArrayRef<int64_t> outShape,
                                          BoundMerger &m) {
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    int64_t dim = b->dim + int64_t(outShape.size()) - ctx.inputRank(i);
    if (outShape[dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    if (failed(m.add({dim, b->length})))
      return failure();
  }
  return success();
}

/// Reshape-like: the padded dimension must survive as one output
/// dimension with the same number of elements before it: of the same size,
/// or merged with the dimensions after it (torchvision's
/// `boxes.reshape(-1, 4)` of [boxes, classes, 4]), whose valid elements are
/// then the first `length * inner` (the product of the merged dimensions).
static LogicalResult propagateReshape(NodeContext &ctx,
                                      ArrayRef<int64_t> outShape,
                                      BoundMerger &m) {
  std::optional<BoundedDim> b = inputBound(ctx, 0);
  if (!b)
    return success();
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t before = 1;
  for (int64_t d = 0; d < b->dim; ++d)
    before *= in[d];
  int64_t outBefore = 1;
  for (int64_t d = 0; d < int64_t(outShape.size()); ++d) {
    if (outBefore == before) {
      int64_t merged = in[b->dim];
      for (int64_t e = b->dim + 1;
           merged < outShape[d] && e < int64_t(in.size()); ++e)
        merged *= in[e];
      if (merged == outShape[d]) {
        int64_t inner = in[b->dim] ? merged / in[b->dim] : 1;
        if (inner == 1)
          return m.add({d, b->length});
        auto length =
            lengthOp(ctx, LengthOp::Mul, b->length,
                     ctx.scalar(ctx.builder().getI64Type(), double(inner)));
        if (failed(length))
          return failure();
        return m.add({d, *length});
      }
    }
    outBefore *= outShape[d];
  }
  return ctx.fail("a reshape that splits a dimension of data-dependent "
                  "length, or merges it with the dimensions before it, is "
                  "not supported");
}

static LogicalResult propagateGather(NodeContext &ctx, BoundMerger &m) {
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "axis");
  if (failed(axis))
    return failure();
  int64_t idxRank = ctx.inputRank(1);
  // A padded data dimension other than the axis moves with the gather; the
  // axis itself is read at the given (valid) indices.
  if (std::optional<BoundedDim> b = inputBound(ctx, 0); b && b->dim != *axis)
    if (failed(m.add({b->dim < *axis ? b->dim : b->dim + idxRank - 1,
                      b->length})))
      return failure();
  if (std::optional<BoundedDim> b = inputBound(ctx, 1))
    return m.add({*axis + b->dim, b->length});
  return success();
}

/// The dimension of the output a padded dimension of input `i` keeps when
/// the node (Transpose, Slice, Concat) does not touch it.
static LogicalResult propagateMovement(NodeContext &ctx,
                                       ArrayRef<int64_t> outShape,
                                       BoundMerger &m) {
  StringRef op = ctx.opType();
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    if (op == "Transpose") {
      auto perm = ctx.getInts("perm");
      int64_t rank = ctx.inputRank(0), dim = rank - 1 - b->dim;
      if (perm)
        dim = std::find(perm->begin(), perm->end(), b->dim) - perm->begin();
      if (failed(m.add({dim, b->length})))
        return failure();
      continue;
    }
    if (i > 0 && op == "Slice")
      return ctx.fail("slice bounds of data-dependent length are not "
                      "supported");
    if (op == "Concat" &&
        *ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(i), "axis") ==
            b->dim)
      return ctx.fail("concatenating along a dimension of data-dependent "
                      "length is not supported");
    if (outShape[b->dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("slicing a dimension of data-dependent length is not "
                      "supported");
    if (failed(m.add({b->dim, b->length})))
      return failure();
  }
  return success();
}

/// MatMul and Gemm: a padded row dimension of A (or batch dimension, not
/// broadcast) or column dimension of B is the output's; a padded
/// contracted dimension is refused. Gemm's C broadcasts as elementwise.
static LogicalResult propagateProduct(NodeContext &ctx,
                                      ArrayRef<int64_t> outShape,
                                      BoundMerger &m) {
  bool gemm = ctx.opType() == "Gemm";
  int64_t outRank = outShape.size();
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    int64_t rank = ctx.inputRank(i), dim = -1;
    if (gemm) {
      bool trans = ctx.getInt(i == 0 ? "transA" : "transB", 0) != 0;
      // A's rows are dimension trans ? 1 : 0, B's columns trans ? 0 : 1.
      if (b->dim == ((i == 0) == trans ? 1 : 0))
        dim = i;
    } else if (rank >= 2) {
      int64_t contracted = i == 0 ? rank - 1 : rank - 2;
      if (b->dim == rank - 1 && i == 1)
        dim = outRank - 1;
      else if (b->dim != contracted)
        dim = b->dim + outRank - rank;
    }
    if (dim < 0)
      return ctx.fail("a product over a dimension of data-dependent length is "
                      "not supported");
    if (outShape[dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    if (failed(m.add({dim, b->length})))
      return failure();
  }
  if (std::optional<BoundedDim> b = inputBound(ctx, 2)) {
    int64_t dim = b->dim + outRank - ctx.inputRank(2);
    if (outShape[dim] != ctx.inputShape(2)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    return m.add({dim, b->length});
  }
  return success();
}

/// Operators that compute every index of some dimensions on its own (a
/// convolution's, a pooling's or a resize's batch, a softmax's dimensions
/// off its axis): the padded dimension of input 0 stays padded when it is
/// one of them; no other input may be padded.
static LogicalResult propagateIndependent(NodeContext &ctx, BoundMerger &m) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("reads a parameter of data-dependent length (padded to "
                      "its bound, docs/ONNX/Import.md)");
  std::optional<BoundedDim> b = inputBound(ctx, 0);
  StringRef op = ctx.opType();
  bool independent = b->dim == 0;
  // A resize must keep the padded dimension's size (a scale of 1 there).
  if (op == "Resize" || op == "Upsample")
    if (ImportedValue *out = ctx.importer().lookup(ctx.node().output(0)))
      independent &= out->shape[b->dim] == ctx.inputShape(0)[b->dim];
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax" ||
      op == "LayerNormalization") {
    bool coerced = op != "LayerNormalization" && ctx.opset() < 13;
    int64_t rank = ctx.inputRank(0);
    auto axis = ctx.normalizeAxis(
        ctx.getInt("axis", op == "LayerNormalization" || !coerced ? -1 : 1),
        rank, "axis");
    if (failed(axis))
      return failure();
    // Opsets before 13 and LayerNormalization normalise over every
    // dimension from the axis on.
    independent = coerced || op == "LayerNormalization" ? b->dim < *axis
                                                         : b->dim != *axis;
  }
  if (!independent)
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md), and this operator mixes "
                    "the elements of the padded dimension");
  return m.add(*b);
}

/// ArgMax and ArgMin along another dimension than the padded one keep it
/// (one index per position of it), one dimension to the left when the
/// axis before it is dropped.
static LogicalResult propagateArgExtreme(NodeContext &ctx, BoundMerger &m) {
  BoundedDim b = *inputBound(ctx, 0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
  if (failed(axis))
    return failure();
  if (*axis == b.dim)
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md) along its axis");
  if (ctx.getInt("keepdims", 1) == 0 && *axis < b.dim)
    --b.dim;
  return m.add(b);
}

/// Pad (any mode) that neither pads nor crops the padded dimension keeps
/// it: padding another dimension moves no element along it (Mask R-CNN's
/// `F.pad(masks, (1, 1, 1, 1))` of the detections' masks).
static LogicalResult propagatePad(NodeContext &ctx, BoundMerger &m) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("reads a parameter of data-dependent length (padded to "
                      "its bound, docs/ONNX/Import.md)");
  BoundedDim b = *inputBound(ctx, 0);
  int64_t rank = ctx.inputRank(0);
  SmallVector<int64_t> pads, axes;
  if (ctx.opset() < 11) {
    if (auto a = ctx.getInts("pads"))
      pads.assign(a->begin(), a->end());
  } else if (const HostTensor *t = ctx.known(1)) {
    pads.assign(t->ints.begin(), t->ints.end());
  }
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "axes");
    if (failed(a))
      return failure();
    for (int64_t axis : *a) {
      auto n = ctx.normalizeAxis(axis, rank, "axes");
      if (failed(n))
        return failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.fail("the pads of a value of data-dependent length must be "
                    "known at import time");
  for (auto [k, axis] : llvm::enumerate(axes))
    if (axis == b.dim && (pads[k] != 0 || pads[k + axes.size()] != 0))
      return ctx.fail("padding a dimension of data-dependent length is not "
                      "supported");
  return m.add(b);
}

/// Operators propagateIndependent handles.
static const llvm::StringSet<> &independentOperators() {
  static const llvm::StringSet<> ops = {
      "Conv",          "ConvTranspose",      "MaxPool",
      "AveragePool",   "GlobalAveragePool",  "GlobalMaxPool",
      "LpPool",        "BatchNormalization", "InstanceNormalization",
      "Softmax",       "LogSoftmax",         "Hardmax",
      "LayerNormalization", "Resize",          "Upsample"};
  return ops;
}

/// Split along another dimension than the padded one: every output keeps
/// the padded dimension.
static LogicalResult propagateSplit(NodeContext &ctx) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("split sizes of data-dependent length are not "
                      "supported");
  std::optional<BoundedDim> b = inputBound(ctx, 0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
  if (failed(axis))
    return failure();
  if (*axis == b->dim)
    return ctx.fail("splitting along a dimension of data-dependent length is "
                    "not supported");
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    if (!ctx.hasOutput(i))
      continue;
    ImportedValue *out = ctx.importer().lookup(ctx.node().output(i));
    if (!out || !out->value || out->known)
      return ctx.fail("the value of a split of a value of data-dependent "
                      "length is not known at import time");
    out->bound = *b;
  }
  return success();
}

LogicalResult onnx_to_tg::propagateBounds(NodeContext &ctx) {
  StringRef op = ctx.opType();
  if (op == "NonZero" || op == "TopK" || op == "NonMaxSuppression" ||
      op == "Unique" || op == "GatherND" || op == "RoiAlign" ||
      op == "ScatterElements" || op == "Scatter" || op == "ScatterND")
    return success(); // Their handlers read and set the bounds.
  bool anyBounded = false;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    anyBounded |= bool(inputBound(ctx, i));
  if (!anyBounded)
    return success();
  if (op == "Split")
    return propagateSplit(ctx);
  if (ctx.numOutputs() != 1)
    return ctx.fail("a node with several outputs reading a value of "
                    "data-dependent length is not supported");
  ImportedValue *out = ctx.importer().lookup(ctx.node().output(0));
  if (!out || !out->value || out->known)
    return ctx.fail("the shape or the value of a value of data-dependent "
                    "length is not known at import time (Loom pads it to a "
                    "static bound; docs/ONNX/Import.md)");
  BoundMerger m{ctx, std::nullopt};
  LogicalResult result = failure();
  if (elementwiseOperators().contains(op))
    result = propagateElementwise(ctx, out->shape, m);
  else if (reshapeOperators().contains(op))
    result = propagateReshape(ctx, out->shape, m);
  else if (op == "Gather")
    result = propagateGather(ctx, m);
  else if (op == "Transpose" || op == "Slice" || op == "Concat")
    result = propagateMovement(ctx, out->shape, m);
  else if (op == "MatMul" || op == "Gemm")
    result = propagateProduct(ctx, out->shape, m);
  else if (op == "Pad")
    result = propagatePad(ctx, m);
  else if (op == "ArgMax" || op == "ArgMin")
    result = propagateArgExtreme(ctx, m);
  else if (independentOperators().contains(op))
    result = propagateIndependent(ctx, m);
  else
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md), and this operator mixes or "
                    "counts the elements of the padded dimension");
  if (failed(result))
    return failure();
  out->bound = m.merged;
  return success();
}
