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

#include <type_traits>

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
                       LinalgDomain::Scope scope(nb, nl, args[0].getType());
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
        LinalgDomain::Scope scope(nb, nl, args[0].getType());
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

/// tg.mod. Float operands have fmod = true (the verifier): the
/// interpreter's FMod over LinalgDomain (arith.remf, C fmod). Integers:
/// arith.remsi, the truncated remainder, plus the divisor for the floored
/// one when it is non-zero and its sign differs from the divisor's (as the
/// interpreter's domains compute mod). A divisor of 0 or -1 is replaced by
/// 1 before the division, which traps on x86 for 0 and for INT_MIN / -1:
/// the remainder by -1 is 0 anyway, and by 0 (undefined, as in ONNX) the
/// kernel gives 0 instead of killing the process.
Lowered lowerMod(ModOp op, OpBuilder &b) {
  bool truncated = op.getFmod();
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), resultType(op), op->getOperands(),
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value x = args[0], y = args[1];
        if (isa<FloatType>(x.getType())) {
          LinalgDomain::Scope scope(nb, nl, args[0].getType());
          return interp::applyBinary<LinalgDomain, BinaryKind::FMod>(x, y);
        }
        Type type = x.getType();
        auto constant = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(nb, nl,
                                           nb.getIntegerAttr(type, v));
        };
        auto cmp = [&](arith::CmpIPredicate p, Value l, Value c) -> Value {
          return arith::CmpIOp::create(nb, nl, p, l, c);
        };
        Value zero = constant(0);
        Value trapping = arith::OrIOp::create(
            nb, nl, cmp(arith::CmpIPredicate::eq, y, zero),
            cmp(arith::CmpIPredicate::eq, y, constant(-1)));
        Value divisor =
            arith::SelectOp::create(nb, nl, trapping, constant(1), y);
        Value r = arith::RemSIOp::create(nb, nl, x, divisor);
        if (truncated)
          return r;
        Value differ = arith::XOrIOp::create(
            nb, nl, cmp(arith::CmpIPredicate::slt, r, zero),
            cmp(arith::CmpIPredicate::slt, y, zero));
        Value adjust = arith::AndIOp::create(
            nb, nl, cmp(arith::CmpIPredicate::ne, r, zero), differ);
        return arith::SelectOp::create(nb, nl, adjust,
                                       arith::AddIOp::create(nb, nl, r, y), r);
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

/// Whether an op class declares its family's interpreter kind.
template <class OpT, class = void> struct HasUnaryKind : std::false_type {};
template <class OpT>
struct HasUnaryKind<OpT, std::void_t<decltype(OpT::kUnaryKind)>>
    : std::true_type {};
template <class OpT, class = void> struct HasBinaryKind : std::false_type {};
template <class OpT>
struct HasBinaryKind<OpT, std::void_t<decltype(OpT::kBinaryKind)>>
    : std::true_type {};
template <class OpT, class = void> struct HasCompareKind : std::false_type {};
template <class OpT>
struct HasCompareKind<OpT, std::void_t<decltype(OpT::kCompareKind)>>
    : std::true_type {};

/// The lowering of an op of the elementwise families of TGOps.td, from the
/// kind the family declares (kUnaryKind, kBinaryKind, kCompareKind): the
/// interpreter's definition instantiated over LinalgDomain. Other ops are
/// attached by name below.
template <class OpT> void attachFamilyModel(MLIRContext *context) {
  if constexpr (HasUnaryKind<OpT>::value)
    attach<OpT, lowerUnary<OpT, OpT::kUnaryKind>>(context);
  else if constexpr (HasBinaryKind<OpT>::value)
    attach<OpT, lowerBinary<OpT, OpT::kBinaryKind>>(context);
  else if constexpr (HasCompareKind<OpT>::value)
    attach<OpT, lowerCompare<OpT, OpT::kCompareKind>>(context);
}

template <class... OpTs> void attachFamilyModels(MLIRContext *context) {
  (attachFamilyModel<OpTs>(context), ...);
}

} // namespace

void lowering::attachElementwiseModels(MLIRContext *context) {
  // Every op of the unary, binary and comparison families: a new one needs
  // no line here.
  attachFamilyModels<
#define GET_OP_LIST
#include "loom/Dialect/TG/IR/TGOps.cpp.inc"
      >(context);
  attach<ClipOp, lowerClip>(context);
  attach<HardSigmoidOp, lowerHardSigmoid>(context);
  attach<GeluOp, lowerGelu>(context);
  attach<ModOp, lowerMod>(context);
  attach<SelectOp, lowerSelect>(context);
  attach<CastOp, lowerCast>(context);
  attach<ConstantOp, lowerConstant>(context);
}
