//===- Passes.h - Backend placement as a pass -------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLACEMENT_PASSES_H
#define LOOM_PLACEMENT_PASSES_H

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::placement {

#define GEN_PASS_DECL
#include "loom/Placement/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Placement/Passes.h.inc"

/// --tg-place-backends over the backends of \p registry (the registered
/// pass, and createTGPlaceBackends(options), use BackendRegistry::builtin()).
std::unique_ptr<mlir::Pass>
createTGPlaceBackends(const compiler::BackendRegistry &registry,
                      const TGPlaceBackendsOptions &options);

} // namespace loom::placement

#endif // LOOM_PLACEMENT_PASSES_H
