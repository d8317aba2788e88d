//===- ElementwiseOps.cpp - Facts of the elementwise tg ops ---------------===//
//
// Part of Loom. Elementwise arithmetic, comparisons, unary functions,
// tg.select and tg.cast: their verifiers and folders, and the facts
// (TGInterfaces.td) that their family classes in TGOps.td do not generate:
// ops with attributes (mod, gelu, clip, hardsigmoid, cast), tg.select, and
// exports that are more than one ONNX node (rsqrt).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "loom/Dialect/TG/IR/TGTypes.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// Shared by the families
//===----------------------------------------------------------------------===//

LogicalResult tg::evaluateUnary(interp::EvalFrame &frame,
                                interp::UnaryKind kind,
                                interp::UnaryParams params) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::unary(kind, f.in(0), params)); });
}

LogicalResult tg::evaluateBinary(interp::EvalFrame &frame,
                                 interp::BinaryKind kind) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::binary(kind, f.in(0), f.in(1))); });
}

LogicalResult tg::evaluateCompare(interp::EvalFrame &frame,
                                  interp::CompareKind kind) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::compare(kind, f.in(0), f.in(1))); });
}

double tg::numElementsOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return double(shaped.getNumElements());
}

static double bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  unsigned bits = shaped.getElementTypeBitWidth();
  return numElementsOf(type) * double((bits + 7) / 8);
}

OpWork tg::streamingWork(Operation *op, double flopsPerResultElement) {
  OpWork work;
  double out = 0;
  for (Type t : op->getOperandTypes())
    work.bytesRead += bytesOf(t);
  for (Type t : op->getResultTypes()) {
    work.bytesWritten += bytesOf(t);
    out += numElementsOf(t);
  }
  work.flops = flopsPerResultElement * out;
  return work;
}

OpWork tg::metadataWork() {
  OpWork work;
  work.kernel = false;
  return work;
}

//===----------------------------------------------------------------------===//
// Binary arithmetic: folders
//===----------------------------------------------------------------------===//

/// `x op c` folds to `x` when `c` is a splat constant matching `isNeutral` and
/// the op does not broadcast `x` to a larger shape.
template <typename Op, typename Matcher>
static OpFoldResult foldNeutralRhs(Op op, Matcher isNeutral) {
  if (op.getLhs().getType() == op.getType() &&
      matchPattern(op.getRhs(), isNeutral))
    return op.getLhs();
  return {};
}

// The neutral elements are the ones that are exact for every float, -0.0 and
// NaN included (as in the arith dialect): x + -0.0, x - 0.0, x * 1, x / 1.
OpFoldResult AddOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_NegZeroFloat());
}
OpFoldResult SubOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_PosZeroFloat());
}
OpFoldResult MulOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_OneFloat());
}
OpFoldResult DivOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_OneFloat());
}

//===----------------------------------------------------------------------===//
// tg.mod
//===----------------------------------------------------------------------===//

LogicalResult ModOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  if (failed(inferBroadcastBinary(location, adaptor.getLhs().getType(),
                                  adaptor.getRhs().getType(), inferred)))
    return failure();
  Type element = cast<RankedTensorType>(inferred.back()).getElementType();
  if (isa<FloatType>(element) && !adaptor.getFmod())
    return emitOptionalError(location, "float operands (", element,
                             ") need fmod = true: the floored remainder is "
                             "for integers, as in ONNX Mod");
  return success();
}

LogicalResult ModOp::evaluate(interp::EvalFrame &frame) {
  return evaluateBinary(frame, getFmod() ? interp::BinaryKind::FMod
                                         : interp::BinaryKind::Mod);
}

// A truncated quotient and a multiply-subtract per element.
OpWork ModOp::getWork() { return streamingWork(*this, 2); }

LogicalResult ModOp::exportONNX(ONNXEmitter &e) {
  e.node("Mod", {e.input(0), e.input(1)}, {e.output()})
      .attr("fmod", int64_t(getFmod()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.select
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferSelect(location, adaptor.getCond().getType(),
                     adaptor.getTrueValue().getType(),
                     adaptor.getFalseValue().getType(), inferred);
}

LogicalResult SelectOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) {
    return f.push(interp::select(f.in(0), f.in(1), f.in(2)));
  });
}

OpWork SelectOp::getWork() { return streamingWork(*this, 0); }

LogicalResult SelectOp::exportONNX(ONNXEmitter &e) { return e.direct("Where"); }

//===----------------------------------------------------------------------===//
// tg.rsqrt
//===----------------------------------------------------------------------===//

LogicalResult RsqrtOp::exportONNX(ONNXEmitter &e) {
  std::string s = e.fresh("_sqrt");
  e.node("Sqrt", {e.input(0)}, {s});
  e.node("Reciprocal", {s}, {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.round_tf32
//===----------------------------------------------------------------------===//

bool tg::holdsTF32Values(Value v) {
  Operation *def = v.getDefiningOp();
  return def && (isa<RoundTF32Op>(def) ||
                 (isa<ConstantOp>(def) && def->hasAttr(kTF32ValuesAttr)));
}

SmallVector<OpOperand *, 2> tg::multiplicands(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return {&matmul.getLhsMutable(), &matmul.getRhsMutable()};
  if (auto conv = dyn_cast<ConvOp>(op))
    return {&conv.getInputMutable(), &conv.getFilterMutable()};
  return {};
}

LogicalResult RoundTF32Op::exportONNX(ONNXEmitter &) {
  return emitOpError("has no ONNX export (ONNX has no TF32 rounding: export "
                     "the model before --precision=tf32)");
}

//===----------------------------------------------------------------------===//
// tg.gelu
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::evaluate(interp::EvalFrame &frame) {
  return evaluateUnary(frame, getTanhApproximation()
                                  ? interp::UnaryKind::GeluTanh
                                  : interp::UnaryKind::Gelu);
}

OpWork GeluOp::getWork() { return streamingWork(*this, kTranscendentalFlops); }

LogicalResult GeluOp::exportONNX(ONNXEmitter &e) {
  // Opset 17 has no Gelu: 0.5 * x * (1 + erf(x / sqrt(2))), or the tanh form
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
  Type elem = getType().getElementType();
  auto c = [&](double v) { return e.scalar(elem, v, "_c"); };
  auto half = c(0.5), one = c(1.0);
  if (failed(half) || failed(one))
    return failure();
  std::string x = e.input(0), inner;
  if (getTanhApproximation()) {
    auto k = c(0.044715), s = c(std::sqrt(2.0 / M_PI));
    if (failed(k) || failed(s))
      return failure();
    std::string x2 = e.fresh("_x2"), x3 = e.fresh("_x3"), kx3 = e.fresh("_kx3"),
                sum = e.fresh("_sum"), scaled = e.fresh("_scaled");
    e.node("Mul", {x, x}, {x2});
    e.node("Mul", {x2, x}, {x3});
    e.node("Mul", {x3, *k}, {kx3});
    e.node("Add", {x, kx3}, {sum});
    e.node("Mul", {sum, *s}, {scaled});
    inner = e.fresh("_tanh");
    e.node("Tanh", {scaled}, {inner});
  } else {
    auto r = c(M_SQRT1_2);
    if (failed(r))
      return failure();
    std::string scaled = e.fresh("_scaled");
    e.node("Mul", {x, *r}, {scaled});
    inner = e.fresh("_erf");
    e.node("Erf", {scaled}, {inner});
  }
  std::string plus = e.fresh("_plus"), hx = e.fresh("_hx");
  e.node("Add", {inner, *one}, {plus});
  e.node("Mul", {x, *half}, {hx});
  e.node("Mul", {hx, plus}, {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.clip
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (std::isnan(lo) || std::isnan(hi))
    return emitOpError("bounds must not be NaN");
  if (lo > hi)
    return emitOpError("'min' (")
           << lo << ") must not exceed 'max' (" << hi << ")";
  return success();
}

LogicalResult ClipOp::evaluate(interp::EvalFrame &frame) {
  return evaluateUnary(
      frame, interp::UnaryKind::Clip,
      {getMin().convertToDouble(), getMax().convertToDouble()});
}

OpWork ClipOp::getWork() { return streamingWork(*this, 1); }

LogicalResult ClipOp::exportONNX(ONNXEmitter &e) {
  // Infinite bounds are absent inputs.
  Type elem = getType().getElementType();
  auto bound = [&](double v, StringRef suffix) -> FailureOr<std::string> {
    if (std::isinf(v))
      return std::string();
    return e.scalar(elem, v, suffix);
  };
  auto lo = bound(getMin().convertToDouble(), "_min");
  auto hi = bound(getMax().convertToDouble(), "_max");
  if (failed(lo) || failed(hi))
    return failure();
  e.node("Clip", {e.input(0), *lo, *hi}, {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.hardsigmoid
//===----------------------------------------------------------------------===//

LogicalResult HardSigmoidOp::evaluate(interp::EvalFrame &frame) {
  return evaluateUnary(
      frame, interp::UnaryKind::HardSigmoid,
      {getAlpha().convertToDouble(), getBeta().convertToDouble()});
}

OpWork HardSigmoidOp::getWork() { return streamingWork(*this, 1); }

LogicalResult HardSigmoidOp::exportONNX(ONNXEmitter &e) {
  e.node("HardSigmoid", {e.input(0)}, {e.output()})
      .attr("alpha", getAlpha().convertToDouble())
      .attr("beta", getBeta().convertToDouble());
  return success();
}

//===----------------------------------------------------------------------===//
// tg.cast
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ")
           << in << " to " << out << "; a cast keeps the shape";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult CastOp::evaluate(interp::EvalFrame &frame) {
  auto kind = elemKindOf(getType());
  if (!kind)
    return emitOpError("casts to an element type the interpreter does not "
                       "know");
  return frame.visit(
      [&](auto &f) { return f.push(interp::cast(f.in(0), *kind)); });
}

// Conversion moves bytes: no FLOPs.
OpWork CastOp::getWork() { return streamingWork(*this, 0); }

LogicalResult CastOp::exportONNX(ONNXEmitter &e) {
  e.node("Cast", {e.input(0)}, {e.output()})
      .attr("to",
            int64_t(elementTypeInfo(*elemKindOf(getType())).onnxDataType));
  return success();
}
