//===- PipeDialect.h - Pipeline schedule dialect ----------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_IR_PIPEDIALECT_H
#define LOOM_DIALECT_PIPE_IR_PIPEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "loom/Dialect/Pipe/IR/PipeOpsDialect.h.inc"

#endif // LOOM_DIALECT_PIPE_IR_PIPEDIALECT_H
