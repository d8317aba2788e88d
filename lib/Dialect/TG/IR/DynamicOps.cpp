//===- DynamicOps.cpp - Facts of the ops with data-dependent lengths ------===//
//
// Part of Loom. tg.nonzero, tg.topk and tg.non_max_suppression
// (TGDynamicOps.td): shape rules, evaluation (DynamicKernels.h), work and
// ONNX export. Their padded results and lengths are what the importer's
// bounded values are made of (docs/ONNX/Import.md "Bounded dynamic shapes").
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Interpreter/DynamicKernels.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

// The frames are instantiated here, not only inside the evaluation lambdas:
// clang 22 otherwise emits the vtables of the frames' shared_ptr control
// blocks in this file without their members, and a tool that links this
// file before any other family file (loom-translate) fails to link.
template class loom::interp::TypedFrame<loom::interp::F32Domain>;
template class loom::interp::TypedFrame<loom::interp::F64Domain>;
template class loom::interp::TypedFrame<loom::interp::ModPDomain>;

/// A rank-0 i64 tensor: a run-time length.
static Type lengthType(MLIRContext *context) {
  return RankedTensorType::get({}, IntegerType::get(context, 64));
}

/// The value of an optional `valid` operand of the op being evaluated (a
/// length, so a small integer in every domain).
template <class F>
static std::optional<int64_t> validOperand(F &f, unsigned index) {
  if (const auto *t = f.inOrNull(index))
    return static_cast<int64_t>(F::Domain::toDouble(t->data[0]));
  return std::nullopt;
}

/// Exports `padded`, an ONNX value whose dimension `axis` has a run-time
/// length, as result 0 of the op: padded with zeros to the op's static
/// bound; result 1 is that length.
static LogicalResult exportPadded(ONNXEmitter &e, const std::string &padded,
                                  int64_t axis, int64_t rank, int64_t bound) {
  std::string shape = e.fresh("_shape"), length = e.fresh("_length");
  e.node("Shape", {padded}, {shape});
  e.node("Gather", {shape, e.constI64({axis}, "_axis")}, {length});
  std::string missing = e.fresh("_missing");
  e.node("Sub", {e.constI64({bound}, "_bound"), length}, {missing});
  SmallVector<int64_t> zeros(2 * rank - 1, 0);
  std::string pads = e.fresh("_pads");
  // Pads are all begins, then all ends; only the end of `axis` is non-zero.
  SmallVector<int64_t> before(zeros.begin(), zeros.begin() + rank + axis);
  SmallVector<int64_t> after(zeros.begin(), zeros.begin() + (rank - axis - 1));
  SmallVector<std::string> parts = {e.constI64(before, "_pads_before"), missing};
  if (!after.empty())
    parts.push_back(e.constI64(after, "_pads_after"));
  e.node("Concat", parts, {pads}).attr("axis", int64_t(0));
  e.node("Pad", {padded, pads}, {e.output(0)});
  e.node("Squeeze", {length, e.constI64({0}, "_axes")}, {e.output(1)});
  return success();
}

/// Appends a padded result and its length to the frame.
template <class F, class D>
static LogicalResult pushPadded(F &f, interp::Tensor<D> value, int64_t count) {
  (void)f.push(std::move(value));
  return f.push(interp::Tensor<D>(std::vector<int64_t>{},
                                  std::vector<typename D::T>{D::fromInt(count)}));
}

//===----------------------------------------------------------------------===//
// tg.nonzero
//===----------------------------------------------------------------------===//

LogicalResult NonZeroOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 1)
    return emitOptionalError(location, "input must have rank >= 1");
  inferred.push_back(RankedTensorType::get(
      {input.getRank(), input.getNumElements()}, IntegerType::get(context, 64)));
  inferred.push_back(lengthType(context));
  return success();
}

LogicalResult NonZeroOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) -> LogicalResult {
    auto r = interp::nonZero(f.in(0));
    return pushPadded(f, std::move(r.value), r.count);
  });
}

OpWork NonZeroOp::getWork() { return streamingWork(*this, 1); }

LogicalResult NonZeroOp::exportONNX(ONNXEmitter &e) {
  std::string found = e.fresh("_found");
  e.node("NonZero", {e.input(0)}, {found});
  return exportPadded(e, found, 1, 2,
                      cast<RankedTensorType>(getIndices().getType()).getDimSize(1));
}

//===----------------------------------------------------------------------===//
// tg.topk
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 1)
    return emitOptionalError(location, "input must have rank >= 1");
  auto axis = normalizeAxis(location, adaptor.getAxis(), input.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t k = adaptor.getK(), dim = input.getDimSize(*axis);
  if (k < 0 || k > dim)
    return emitOptionalError(location, "k = ", k, " is not in [0, ", dim,
                             "], the size of axis ", *axis);
  SmallVector<int64_t> shape(input.getShape());
  shape[*axis] = k;
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  inferred.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  inferred.push_back(lengthType(context));
  return success();
}

LogicalResult TopKOp::evaluate(interp::EvalFrame &frame) {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  interp::TopKParams p;
  p.k = getK();
  p.axis = axisOf(getAxis(), inputType.getRank());
  p.largest = getLargest();
  return frame.visit([&](auto &f) -> LogicalResult {
    interp::TopKParams q = p;
    q.valid = validOperand(f, 1);
    auto r = interp::topK(f.in(0), q);
    (void)f.push(std::move(r.values));
    return pushPadded(f, std::move(r.indices), r.count);
  });
}

OpWork TopKOp::getWork() {
  // A comparison per element and output position (the selection the
  // generated code does).
  OpWork w = streamingWork(*this, 0);
  w.flops = numElementsOf(getInput().getType()) * double(getK());
  return w;
}

LogicalResult TopKOp::exportONNX(ONNXEmitter &e) {
  if (getValid())
    return emitOpError("with a run-time length (a bounded input) has no "
                       "ONNX export");
  e.node("TopK", {e.input(0), e.constI64({int64_t(getK())}, "_k")},
         {e.output(0), e.output(1)})
      .attr("axis", int64_t(getAxis()))
      .attr("largest", int64_t(getLargest()))
      .attr("sorted", int64_t(getSorted()));
  auto k = e.scalar(getCount().getType().getElementType(), double(getK()), "_k");
  if (failed(k))
    return failure();
  e.alias(2, *k);
  return success();
}

//===----------------------------------------------------------------------===//
// tg.non_max_suppression
//===----------------------------------------------------------------------===//

LogicalResult NonMaxSuppressionOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto boxes = cast<RankedTensorType>(adaptor.getBoxes().getType());
  auto scores = cast<RankedTensorType>(adaptor.getScores().getType());
  if (boxes.getRank() != 3 || boxes.getDimSize(2) != 4)
    return emitOptionalError(location, "boxes must be [batches, boxes, 4]");
  if (scores.getRank() != 3 || scores.getDimSize(0) != boxes.getDimSize(0) ||
      scores.getDimSize(2) != boxes.getDimSize(1))
    return emitOptionalError(location,
                             "scores must be [batches, classes, boxes] for "
                             "boxes [batches, boxes, 4]");
  if (adaptor.getCenterPointBox() != 0 && adaptor.getCenterPointBox() != 1)
    return emitOptionalError(location, "center_point_box must be 0 or 1");
  int64_t bound =
      interp::nmsBound(scores.getDimSize(0), scores.getDimSize(1),
                       scores.getDimSize(2), adaptor.getMaxOutputBoxesPerClass());
  inferred.push_back(
      RankedTensorType::get({bound, 3}, IntegerType::get(context, 64)));
  inferred.push_back(lengthType(context));
  return success();
}

LogicalResult NonMaxSuppressionOp::evaluate(interp::EvalFrame &frame) {
  interp::NMSParams p;
  p.centerPointBox = getCenterPointBox() == 1;
  p.maxOutputPerClass = getMaxOutputBoxesPerClass();
  p.iouThreshold = static_cast<float>(getIouThreshold().convertToDouble());
  if (auto s = getScoreThreshold())
    p.scoreThreshold = static_cast<float>(s->convertToDouble());
  return frame.visit([&](auto &f) -> LogicalResult {
    interp::NMSParams q = p;
    q.valid = validOperand(f, 2);
    auto r = interp::nonMaxSuppression(f.in(0), f.in(1), q);
    return pushPadded(f, std::move(r.value), r.count);
  });
}

OpWork NonMaxSuppressionOp::getWork() {
  // An overlap test (about 20 flops) per box and selected box.
  auto scores = cast<RankedTensorType>(getScores().getType());
  double rows = double(cast<RankedTensorType>(getSelected().getType()).getDimSize(0));
  OpWork w = streamingWork(*this, 0);
  w.flops = 20.0 * rows * double(scores.getDimSize(2));
  return w;
}

LogicalResult NonMaxSuppressionOp::exportONNX(ONNXEmitter &e) {
  if (getValid())
    return emitOpError("with a run-time length (a bounded input) has no "
                       "ONNX export");
  SmallVector<std::string> inputs = {
      e.input(0), e.input(1),
      e.constI64({int64_t(getMaxOutputBoxesPerClass())}, "_max_output"),
      e.constF32({getIouThreshold().convertToDouble()}, "_iou")};
  if (auto s = getScoreThreshold())
    inputs.push_back(e.constF32({s->convertToDouble()}, "_score"));
  std::string found = e.fresh("_found");
  e.node("NonMaxSuppression", inputs, {found})
      .attr("center_point_box", int64_t(getCenterPointBox()));
  return exportPadded(
      e, found, 0, 2,
      cast<RankedTensorType>(getSelected().getType()).getDimSize(0));
}

//===----------------------------------------------------------------------===//
// Function results of data-dependent length
//===----------------------------------------------------------------------===//

std::optional<ResultBound> tg::getResultBound(FunctionOpInterface fn,
                                              unsigned i) {
  auto dim = fn.getResultAttrOfType<IntegerAttr>(i, kBoundedDimAttr);
  auto length = fn.getResultAttrOfType<IntegerAttr>(i, kLengthResultAttr);
  if (!dim || !length)
    return std::nullopt;
  return ResultBound{dim.getInt(), unsigned(length.getInt())};
}

void tg::setResultBound(FunctionOpInterface fn, unsigned i, ResultBound bound) {
  Builder b(fn.getContext());
  fn.setResultAttr(i, kBoundedDimAttr, b.getI64IntegerAttr(bound.dim));
  fn.setResultAttr(i, kLengthResultAttr,
                   b.getI64IntegerAttr(int64_t(bound.lengthResult)));
}

LogicalResult tg::verifyResultBounds(FunctionOpInterface fn) {
  ArrayRef<Type> results = fn.getResultTypes();
  for (unsigned i = 0; i < results.size(); ++i) {
    auto dim = fn.getResultAttrOfType<IntegerAttr>(i, kBoundedDimAttr);
    auto length = fn.getResultAttrOfType<IntegerAttr>(i, kLengthResultAttr);
    if (!dim && !length)
      continue;
    if (!dim || !length)
      return fn.emitOpError() << "result " << i << " has only one of "
                              << kBoundedDimAttr << " and " << kLengthResultAttr;
    auto type = dyn_cast<RankedTensorType>(results[i]);
    if (!type || dim.getInt() < 0 || dim.getInt() >= type.getRank())
      return fn.emitOpError() << "result " << i << ": " << kBoundedDimAttr
                              << " " << dim.getInt() << " is not a dimension";
    int64_t j = length.getInt();
    if (j < 0 || j >= int64_t(results.size()) || j == int64_t(i))
      return fn.emitOpError() << "result " << i << ": " << kLengthResultAttr
                              << " " << j << " is not another result";
    auto lengthType = dyn_cast<RankedTensorType>(results[j]);
    if (!lengthType || lengthType.getRank() != 0 ||
        !lengthType.getElementType().isInteger(64) || getResultBound(fn, j))
      return fn.emitOpError() << "result " << i << ": its length, result " << j
                              << ", must be a tensor<i64> without a bound";
  }
  return success();
}
