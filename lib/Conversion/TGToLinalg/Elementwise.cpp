//===- Elementwise.cpp - Lowering of elementwise tg ops -------------------===//
//
// Part of Loom. Unary and binary ops become one linalg.generic each whose
// body is the interpreter's formula (ScalarFunctions.h) instantiated over
// LinalgDomain; binary ops broadcast numpy-style through the generic's
// indexing maps. linalg-fuse-elementwise-ops later merges chains.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "loom/Interpreter/ScalarFunctions.h"

using namespace mlir;
using namespace loom;
namespace lowering = loom::tg::lowering;
using namespace loom::tg;
using namespace loom::tg::lowering;
using interp::BinaryKind;
using interp::UnaryKind;

namespace {

RankedTensorType resultType(Operation *op, unsigned i = 0) {
  return cast<RankedTensorType>(op->getResult(i).getType());
}

/// `result = K(x)` elementwise.
Value unaryGeneric(OpBuilder &b, Location loc, RankedTensorType type, Value x,
                   UnaryKind kind, interp::UnaryParams params = {}) {
  return elementwise(b, loc, type, {x},
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       LinalgDomain::Scope scope(nb, nl);
                       interp::UnaryConsts<LinalgDomain> consts(params);
                       return interp::dispatchUnary(kind, [&](auto k) {
                         return interp::applyUnary<LinalgDomain, k.value>(
                             consts, args[0]);
                       });
                     });
}

template <class OpT, UnaryKind K> Lowered lowerUnary(OpT op, OpBuilder &b) {
  return SmallVector<Value>{unaryGeneric(b, op.getLoc(), resultType(op),
                                         op->getOperand(0), K)};
}

template <class OpT, BinaryKind K> Lowered lowerBinary(OpT op, OpBuilder &b) {
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), resultType(op), op->getOperands(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        LinalgDomain::Scope scope(nb, nl);
        return interp::applyBinary<LinalgDomain, K>(args[0], args[1]);
      })};
}

/// The interpreter's comparison K (applyCompare) on scalars of one type:
/// ordered float predicates (false on NaN), signed integers, unsigned i1
/// (whose true is 1, as in the interpreter).
template <interp::CompareKind K>
Value compareScalar(OpBuilder &b, Location loc, Value x, Value y) {
  using interp::CompareKind;
  if (isa<FloatType>(x.getType())) {
    arith::CmpFPredicate p = K == CompareKind::Equal     ? arith::CmpFPredicate::OEQ
                             : K == CompareKind::Greater ? arith::CmpFPredicate::OGT
                             : K == CompareKind::GreaterEqual
                                 ? arith::CmpFPredicate::OGE
                             : K == CompareKind::Less ? arith::CmpFPredicate::OLT
                                                      : arith::CmpFPredicate::OLE;
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  bool u = x.getType().isInteger(1);
  arith::CmpIPredicate p =
      K == CompareKind::Equal ? arith::CmpIPredicate::eq
      : K == CompareKind::Greater
          ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
      : K == CompareKind::GreaterEqual
          ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
      : K == CompareKind::Less
          ? (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
          : (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
  return arith::CmpIOp::create(b, loc, p, x, y);
}

template <class OpT, interp::CompareKind K>
Lowered lowerCompare(OpT op, OpBuilder &b) {
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), resultType(op), op->getOperands(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return compareScalar<K>(nb, nl, args[0], args[1]);
      })};
}

Lowered lowerSelect(SelectOp op, OpBuilder &b) {
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), resultType(op), op->getOperands(),
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::SelectOp::create(nb, nl, args[0], args[1], args[2]);
      })};
}

Lowered lowerClip(ClipOp op, OpBuilder &b) {
  interp::UnaryParams p{op.getMin().convertToDouble(),
                        op.getMax().convertToDouble()};
  return SmallVector<Value>{unaryGeneric(b, op.getLoc(), resultType(op),
                                         op.getInput(), UnaryKind::Clip, p)};
}

Lowered lowerHardSigmoid(HardSigmoidOp op, OpBuilder &b) {
  interp::UnaryParams p{op.getAlpha().convertToDouble(),
                        op.getBeta().convertToDouble()};
  return SmallVector<Value>{unaryGeneric(b, op.getLoc(), resultType(op),
                                         op.getInput(), UnaryKind::HardSigmoid,
                                         p)};
}

Lowered lowerGelu(GeluOp op, OpBuilder &b) {
  return SmallVector<Value>{unaryGeneric(
      b, op.getLoc(), resultType(op), op.getInput(),
      op.getTanhApproximation() ? UnaryKind::GeluTanh : UnaryKind::Gelu)};
}

/// The interpreter's cast (Kernels.h): floats round to the target format,
/// floats to integers truncate toward zero, anything to i1 is `!= 0`.
Value castScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::UNE, x,
          arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0)));
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, x,
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0)));
  }
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, x))
               : Value(arith::TruncFOp::create(b, loc, to, x));
  if (fromF)
    return arith::FPToSIOp::create(b, loc, to, x);
  if (toF)
    return from.isInteger(1) ? Value(arith::UIToFPOp::create(b, loc, to, x))
                             : Value(arith::SIToFPOp::create(b, loc, to, x));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) ? Value(arith::ExtUIOp::create(b, loc, to, x))
                             : Value(arith::ExtSIOp::create(b, loc, to, x));
  return arith::TruncIOp::create(b, loc, to, x);
}

Lowered lowerCast(CastOp op, OpBuilder &b) {
  Type to = op.getType().getElementType();
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), op.getType(), {op.getInput()},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return castScalar(nb, nl, args[0], to);
      })};
}

Lowered lowerConstant(ConstantOp op, OpBuilder &b) {
  auto value = dyn_cast<TypedAttr>(op.getValue());
  if (!value)
    return op.emitOpError("holds a value that arith.constant cannot");
  return SmallVector<Value>{arith::ConstantOp::create(b, op.getLoc(), value)};
}

} // namespace

void lowering::attachElementwiseModels(MLIRContext *context) {
  attach<ReluOp, lowerUnary<ReluOp, UnaryKind::Relu>>(context);
  attach<SigmoidOp, lowerUnary<SigmoidOp, UnaryKind::Sigmoid>>(context);
  attach<TanhOp, lowerUnary<TanhOp, UnaryKind::Tanh>>(context);
  attach<ExpOp, lowerUnary<ExpOp, UnaryKind::Exp>>(context);
  attach<LogOp, lowerUnary<LogOp, UnaryKind::Log>>(context);
  attach<SqrtOp, lowerUnary<SqrtOp, UnaryKind::Sqrt>>(context);
  attach<RsqrtOp, lowerUnary<RsqrtOp, UnaryKind::Rsqrt>>(context);
  attach<NegOp, lowerUnary<NegOp, UnaryKind::Neg>>(context);
  attach<ErfOp, lowerUnary<ErfOp, UnaryKind::Erf>>(context);
  attach<HardSwishOp, lowerUnary<HardSwishOp, UnaryKind::HardSwish>>(context);
  attach<SoftplusOp, lowerUnary<SoftplusOp, UnaryKind::Softplus>>(context);
  attach<ClipOp, lowerClip>(context);
  attach<HardSigmoidOp, lowerHardSigmoid>(context);
  attach<GeluOp, lowerGelu>(context);
  attach<AddOp, lowerBinary<AddOp, BinaryKind::Add>>(context);
  attach<SubOp, lowerBinary<SubOp, BinaryKind::Sub>>(context);
  attach<MulOp, lowerBinary<MulOp, BinaryKind::Mul>>(context);
  attach<DivOp, lowerBinary<DivOp, BinaryKind::Div>>(context);
  attach<MaxOp, lowerBinary<MaxOp, BinaryKind::Max>>(context);
  attach<MinOp, lowerBinary<MinOp, BinaryKind::Min>>(context);
  attach<PowOp, lowerBinary<PowOp, BinaryKind::Pow>>(context);
  attach<EqualOp, lowerCompare<EqualOp, interp::CompareKind::Equal>>(context);
  attach<GreaterOp, lowerCompare<GreaterOp, interp::CompareKind::Greater>>(
      context);
  attach<GreaterEqualOp,
         lowerCompare<GreaterEqualOp, interp::CompareKind::GreaterEqual>>(
      context);
  attach<LessOp, lowerCompare<LessOp, interp::CompareKind::Less>>(context);
  attach<LessEqualOp, lowerCompare<LessEqualOp, interp::CompareKind::LessEqual>>(
      context);
  attach<SelectOp, lowerSelect>(context);
  attach<CastOp, lowerCast>(context);
  attach<ConstantOp, lowerConstant>(context);
}
