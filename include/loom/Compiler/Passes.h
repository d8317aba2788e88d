//===- Passes.h - The CPU compiler's passes ---------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_PASSES_H
#define LOOM_COMPILER_PASSES_H

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::compiler {

#define GEN_PASS_DECL
#include "loom/Compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Compiler/Passes.h.inc"

/// --tg-form-fragments over the backends of \p registry (the registered
/// pass, and createTGFormFragments(options), use
/// BackendRegistry::builtin()).
std::unique_ptr<mlir::Pass>
createTGFormFragments(const BackendRegistry &registry,
                      const TGFormFragmentsOptions &options);

} // namespace loom::compiler

#endif // LOOM_COMPILER_PASSES_H
