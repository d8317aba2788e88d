//===- Probe.h - A fragment as a function of its own ------------*- C++ -*-===//
//
// Part of Loom. Internal to lib/Placement.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_PLACEMENT_PROBE_H
#define LOOM_LIB_PLACEMENT_PROBE_H

#include "loom/Compiler/Backend.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <random>

namespace loom::placement {

/// Appends to \p module a public function \p name computing \p call's ops:
/// activations as arguments, weights and large constants as tg.weight ops
/// named "<weightPrefix><i>" (when \p weights is given, filled with random
/// values there), small constants copied; the last op's results returned.
/// With \p formFragment, the ops are then formed into the one fragment
/// \p call places.
mlir::func::FuncOp buildProbe(const compiler::LibraryCall &call,
                              mlir::ModuleOp module, llvm::StringRef name,
                              llvm::StringRef weightPrefix,
                              safetensors::Writer *weights,
                              std::mt19937 *rng, bool formFragment,
                              const compiler::BackendRegistry &registry);

} // namespace loom::placement

#endif // LOOM_LIB_PLACEMENT_PROBE_H
