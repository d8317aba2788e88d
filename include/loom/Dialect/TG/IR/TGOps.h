//===- TGOps.h - Tensor graph operations ------------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGOPS_H
#define LOOM_DIALECT_TG_IR_TGOPS_H

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGInterfaces.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Interpreter/ScalarFunctions.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "loom/Dialect/TG/IR/TGEnums.h"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/TG/IR/TGAttrs.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGOps.h.inc"

namespace loom::tg {

/// The unit attribute of a tg.constant whose elements are all TF32 values:
/// what --tg-fold-weights makes of a tg.round_tf32 of a weight whose every
/// reader a library step runs (docs/Precision.md, "TF32").
inline constexpr llvm::StringLiteral kTF32ValuesAttr = "tg.tf32_values";

/// Whether \p v holds TF32 values by construction: a tg.round_tf32's
/// result, or a tg.constant with kTF32ValuesAttr.
bool holdsTF32Values(mlir::Value v);

/// The multiplicands of \p op: a tg.matmul's two operands, a tg.conv's
/// input and filter (its bias is added after the products); none for any
/// other op.
llvm::SmallVector<mlir::OpOperand *, 2> multiplicands(mlir::Operation *op);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TGOPS_H
