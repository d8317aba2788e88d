//===- TGTypes.h - Element types of tg tensors as MLIR types ----*- C++ -*-===//
//
// Part of Loom. The MLIR side of loom/Support/ElementTypes.def.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGTYPES_H
#define LOOM_DIALECT_TG_IR_TGTYPES_H

#include "loom/Support/ElementTypes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace loom::tg {

/// The ElemKind of \p type (an element type, or a shaped type's element
/// type); nullopt for types a tg tensor cannot hold.
std::optional<ElemKind> elemKindOf(mlir::Type type);
/// The MLIR element type of \p kind.
mlir::Type getElementType(mlir::MLIRContext *context, ElemKind kind);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TGTYPES_H
