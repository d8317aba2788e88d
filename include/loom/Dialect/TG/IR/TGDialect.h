//===- TGDialect.h - Tensor graph dialect -----------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGDIALECT_H
#define LOOM_DIALECT_TG_IR_TGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "loom/Dialect/TG/IR/TGOpsDialect.h.inc"

#endif // LOOM_DIALECT_TG_IR_TGDIALECT_H
