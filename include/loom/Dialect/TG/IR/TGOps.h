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

#endif // LOOM_DIALECT_TG_IR_TGOPS_H
