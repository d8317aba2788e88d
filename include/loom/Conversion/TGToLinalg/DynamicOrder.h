//===- DynamicOrder.h - The selections' order and overlap as IR -*- C++ -*-===//
//
// Part of Loom. loom/Support/DynamicAlgorithms.h's comparisons (the order of
// tg.topk and tg.non_max_suppression, and a box's suppression of another)
// built as arith ops on scalars, and the scalar ops both of their
// implementations build with: the scf lowering of the dynamic ops
// (lib/Conversion/TGToLinalg/Dynamic.cpp) and the GPU selection kernels
// (lib/Codegen/GPU/Selections.cpp), one definition for both.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_TGTOLINALG_DYNAMICORDER_H
#define LOOM_CONVERSION_TGTOLINALG_DYNAMICORDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace loom::tg {

/// Integer, index and i1 scalar ops at an ImplicitLocOpBuilder's insertion
/// point.
struct ScalarOps {
  mlir::ImplicitLocOpBuilder &b;

  mlir::Value index(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, v);
  }
  mlir::Value i32(int64_t v) {
    return mlir::arith::ConstantIntOp::create(b, v, 32);
  }
  mlir::Value i64(int64_t v) {
    return mlir::arith::ConstantIntOp::create(b, v, 64);
  }
  /// An integer or index \p v as \p type (itself when it is).
  mlir::Value cast(mlir::Value v, mlir::Type type) {
    if (v.getType() == type)
      return v;
    return mlir::arith::IndexCastOp::create(b, type, v);
  }
  mlir::Value toIndex(mlir::Value v) { return cast(v, b.getIndexType()); }
  mlir::Value toI64(mlir::Value v) { return cast(v, b.getI64Type()); }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubIOp::create(b, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, x, y);
  }
  mlir::Value minI(mlir::Value x, mlir::Value y) {
    return mlir::arith::MinSIOp::create(b, x, y);
  }
  mlir::Value maxI(mlir::Value x, mlir::Value y) {
    return mlir::arith::MaxSIOp::create(b, x, y);
  }
  mlir::Value cmp(mlir::arith::CmpIPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, p, x, y);
  }
  mlir::Value lt(mlir::Value x, mlir::Value y) {
    return cmp(mlir::arith::CmpIPredicate::slt, x, y);
  }
  mlir::Value eq(mlir::Value x, mlir::Value y) {
    return cmp(mlir::arith::CmpIPredicate::eq, x, y);
  }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, c, x, y);
  }
  mlir::Value andI(mlir::Value x, mlir::Value y) {
    return mlir::arith::AndIOp::create(b, x, y);
  }
  mlir::Value orI(mlir::Value x, mlir::Value y) {
    return mlir::arith::OrIOp::create(b, x, y);
  }
  mlir::Value notI(mlir::Value x) {
    return mlir::arith::XOrIOp::create(
        b, x, mlir::arith::ConstantIntOp::create(b, 1, 1));
  }
  /// 1 where \p flag holds, else 0, of \p type (an integer or index).
  mlir::Value oneIf(mlir::Value flag, mlir::Type type) {
    return select(flag,
                  mlir::arith::ConstantOp::create(b, b.getIntegerAttr(type, 1)),
                  mlir::arith::ConstantOp::create(b, b.getIntegerAttr(type, 0)));
  }
};

/// The interpreter's D::less on scalars: x < y, NaN larger than every number
/// (integers: signed).
mlir::Value buildLess(mlir::ImplicitLocOpBuilder &b, mlir::Value x,
                      mlir::Value y);

/// DynamicAlgorithms.h's before: element x at position i comes before y at
/// position j in descending order (\p largest) or ascending order; equal
/// elements keep the lower position first. i and j: integers of one type.
mlir::Value buildBefore(mlir::ImplicitLocOpBuilder &b, bool largest,
                        mlir::Value x, mlir::Value i, mlir::Value y,
                        mlir::Value j);

/// Whether box \p a suppresses box \p c (DynamicAlgorithms.h's
/// KeptBoxes::anySuppresses for one kept box): their intersection over
/// union is above \p threshold. Boxes are 4 f32 values, corners or
/// (\p centerPointBox) centre and size.
mlir::Value buildSuppresses(mlir::ImplicitLocOpBuilder &b,
                            llvm::ArrayRef<mlir::Value> a,
                            llvm::ArrayRef<mlir::Value> c, bool centerPointBox,
                            mlir::Value threshold);

} // namespace loom::tg

#endif // LOOM_CONVERSION_TGTOLINALG_DYNAMICORDER_H
