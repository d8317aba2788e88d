//===- Passes.h - tg transformation passes ----------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_TG_TRANSFORMS_PASSES_H

#include "loom/Support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::tg {

#define GEN_PASS_DECL
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

/// --tg-fold-weights reading the weights from \p weights (kept by the
/// caller) instead of a file: what loom-compile uses for an imported ONNX
/// model, whose weights are in memory.
std::unique_ptr<mlir::Pass>
createTGFoldWeightsPass(const safetensors::File *weights, int64_t maxElements);

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_H
