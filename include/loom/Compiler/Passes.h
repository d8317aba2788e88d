//===- Passes.h - The CPU compiler's passes ---------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_PASSES_H
#define LOOM_COMPILER_PASSES_H

#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::compiler {

#define GEN_PASS_DECL
#include "loom/Compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Compiler/Passes.h.inc"

} // namespace loom::compiler

#endif // LOOM_COMPILER_PASSES_H
