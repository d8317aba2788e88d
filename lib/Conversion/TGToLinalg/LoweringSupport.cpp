//===- LoweringSupport.cpp - Building blocks of the tg lowering -----------===//
//
// Part of Loom. See LoweringSupport.h.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "loom/Conversion/TGToLinalg/TGToLinalg.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace loom;
namespace lowering = loom::tg::lowering;
using namespace loom::tg::lowering;

thread_local OpBuilder *LinalgDomain::builder = nullptr;
thread_local const Location *LinalgDomain::loc = nullptr;
thread_local Type LinalgDomain::element = nullptr;

// Rounded once to the element type, as the interpreter's domains do.
Value LinalgDomain::fromDouble(double v) {
  return arith::ConstantOp::create(*builder, *loc,
                                   builder->getFloatAttr(element, v));
}
Value LinalgDomain::add(Value a, Value b) {
  return arith::AddFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::sub(Value a, Value b) {
  return arith::SubFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::mul(Value a, Value b) {
  return arith::MulFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::div(Value a, Value b) {
  return arith::DivFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::neg(Value a) {
  return arith::NegFOp::create(*builder, *loc, a);
}
// NaN-propagating, as the interpreter's domains.
Value LinalgDomain::max(Value a, Value b) {
  return arith::MaximumFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::min(Value a, Value b) {
  return arith::MinimumFOp::create(*builder, *loc, a, b);
}
Value LinalgDomain::exp(Value a) {
  return math::ExpOp::create(*builder, *loc, a);
}
Value LinalgDomain::log(Value a) {
  return math::LogOp::create(*builder, *loc, a);
}
Value LinalgDomain::sqrt(Value a) {
  return math::SqrtOp::create(*builder, *loc, a);
}
Value LinalgDomain::tanh(Value a) {
  return math::TanhOp::create(*builder, *loc, a);
}
Value LinalgDomain::erf(Value a) {
  return math::ErfOp::create(*builder, *loc, a);
}
Value LinalgDomain::roundTF32(Value a) {
  Value tf32 =
      arith::TruncFOp::create(*builder, *loc, builder->getTF32Type(), a);
  return arith::ExtFOp::create(*builder, *loc, a.getType(), tf32);
}
Value LinalgDomain::pow(Value a, Value b) {
  return math::PowFOp::create(*builder, *loc, a, b);
}

// arith.remf is C fmod (the dividend's sign).
Value LinalgDomain::fmod(Value a, Value b) {
  return arith::RemFOp::create(*builder, *loc, a, b);
}
Value lowering::multiplyAccumulate(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value lhs, Value rhs,
                                   ArrayRef<AffineMap> maps,
                                   ArrayRef<utils::IteratorType> iterators) {
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{lhs, rhs},
             ValueRange{filled(b, loc, type, 0.0)}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Type acc = type.getElementType();
               Value p = arith::MulFOp::create(
                   nb, nl, castScalar(nb, nl, args[0], acc),
                   castScalar(nb, nl, args[1], acc));
               linalg::YieldOp::create(
                   nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], p)));
             })
      .getResult(0);
}

Value lowering::castScalar(OpBuilder &b, Location loc, Value x, Type to) {
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
  if (fromF && toF && fromF.getWidth() == toF.getWidth()) {
    // f16 <-> bf16: through f32, which holds both exactly (one rounding).
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
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

RankedTensorType lowering::accumulatorType(RankedTensorType type) {
  Type elem = type.getElementType();
  if (!elem.isF16() && !elem.isBF16())
    return type;
  return RankedTensorType::get(type.getShape(),
                               Float32Type::get(type.getContext()));
}

Value lowering::convertedTo(OpBuilder &b, Location loc, Value value,
                            RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getElementType() == type.getElementType())
    return value;
  Type to = type.getElementType();
  return elementwise(b, loc, RankedTensorType::get(from.getShape(), to),
                     {value}, [&](OpBuilder &nb, Location nl, ValueRange args) {
                       return castScalar(nb, nl, args[0], to);
                     });
}

Value lowering::f32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
}

Value lowering::elementwise(OpBuilder &b, Location loc,
                            RankedTensorType resultType, ValueRange inputs,
                            ScalarFn fn) {
  return elementwiseWithStats(b, loc, resultType, inputs, {}, {}, fn);
}

/// The kept dimensions of \p rank dimensions reduced along \p axes.
static AffineMap keptProjection(OpBuilder &b, int64_t rank,
                                ArrayRef<int64_t> axes) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

Value lowering::elementwiseWithStats(OpBuilder &b, Location loc,
                                     RankedTensorType resultType,
                                     ValueRange inputs, ValueRange stats,
                                     ArrayRef<int64_t> axes, ScalarFn fn) {
  int64_t rank = resultType.getRank();
  ArrayRef<int64_t> out = resultType.getShape();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    auto type = cast<RankedTensorType>(in.getType());
    SmallVector<AffineExpr> exprs;
    int64_t r = type.getRank();
    for (int64_t j = 0; j < r; ++j) {
      int64_t dim = rank - r + j;
      exprs.push_back(type.getDimSize(j) == 1 && out[dim] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(dim));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  for (size_t i = 0; i < stats.size(); ++i)
    maps.push_back(keptProjection(b, rank, axes));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(b, loc, out, resultType.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  SmallVector<Value> operands(inputs);
  llvm::append_range(operands, stats);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = fn(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

Value lowering::filled(OpBuilder &b, Location loc, RankedTensorType type,
                       double value) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, v, init).getResult(0);
}

Value lowering::reduceKept(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  // The reduction writes the kept dimensions only: a projection, which
  // tiling and fusion follow (a reshape in between stops them).
  SmallVector<int64_t> keptShape;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (!reduced)
      keptShape.push_back(type.getDimSize(d));
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
  }
  auto outType = RankedTensorType::get(keptShape, type.getElementType());
  Value acc = filled(b, loc, outType, init);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 keptProjection(b, rank, axes)};
  return linalg::GenericOp::create(
             b, loc, outType, ValueRange{input}, ValueRange{acc}, maps,
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       combine(nb, nl, args[1], args[0]));
             })
      .getResult(0);
}

Value lowering::reduceKeepDims(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> keepDims(type.getShape());
  for (int64_t d : axes)
    keepDims[d] = 1;
  return reshapeTo(b, loc, reduceKept(b, loc, input, axes, init, combine),
                   RankedTensorType::get(keepDims, type.getElementType()));
}

Value lowering::reshapeTo(OpBuilder &b, Location loc, Value value,
                          RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  auto flatType = RankedTensorType::get({from.getNumElements()},
                                        from.getElementType());
  Value flat = value;
  if (from.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < from.getRank(); ++d)
      all[0].push_back(d);
    if (from.getRank() == 0)
      all.clear();
    flat = from.getRank() == 0
               ? Value(tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                                     all))
               : Value(tensor::CollapseShapeOp::create(b, loc, flatType, value,
                                                       all));
  }
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all);
}

void loom::tg::registerTGToLinalgInterfaceModels(DialectRegistry &registry) {
  registry.insert<linalg::LinalgDialect, tensor::TensorDialect,
                  arith::ArithDialect, math::MathDialect, scf::SCFDialect>();
  registry.addExtension(+[](MLIRContext *context, TGDialect *) {
    context->loadDialect<linalg::LinalgDialect, tensor::TensorDialect,
                         arith::ArithDialect, math::MathDialect,
                         scf::SCFDialect>();
    attachAttentionModels(context);
    attachDynamicModels(context);
    attachElementwiseModels(context);
    attachLinearModels(context);
    attachLoopModels(context);
    attachMovementModels(context);
    attachReductionModels(context);
  });
}
