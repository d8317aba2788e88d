//===- TGBoundOp.h - The op that states a bounded dimension -----*- C++ -*-===//
//
// Part of Loom. tg.bound (TGBoundOp.td) and the queries every reader of
// bounds shares: which dimensions of a value are padded, and by which
// run-time length (docs/ONNX/Import.md "Bounds in the IR").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGBOUNDOP_H
#define LOOM_DIALECT_TG_IR_TGBOUNDOP_H

#include "loom/Dialect/TG/IR/TGOps.h"

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGBoundOp.h.inc"

namespace loom::tg {

/// A dimension of a value padded to its static size, of which only the
/// first `length` positions (a rank-0 i64 tensor) are valid.
struct Bound {
  int64_t dim = 0;
  mlir::Value length;
};

/// The bounds the tg.bound ops producing \p v state, in the order they were
/// stated (the innermost op first); empty when \p v has none.
llvm::SmallVector<Bound, 2> getBounds(mlir::Value v);
/// \p v without the tg.bound ops producing it: the padded tensor itself.
mlir::Value stripBounds(mlir::Value v);
/// \p v (its own bounds stripped) under \p bounds, one tg.bound each, built
/// at \p builder's insertion point; \p v itself when it already states
/// exactly \p bounds.
mlir::Value withBounds(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::Value v, llvm::ArrayRef<Bound> bounds);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TGBOUNDOP_H
