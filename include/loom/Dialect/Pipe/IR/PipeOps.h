//===- PipeOps.h - Pipeline schedule operations -----------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_IR_PIPEOPS_H
#define LOOM_DIALECT_PIPE_IR_PIPEOPS_H

#include "loom/Dialect/Pipe/IR/PipeDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "loom/Dialect/Pipe/IR/PipeOps.h.inc"

#endif // LOOM_DIALECT_PIPE_IR_PIPEOPS_H
