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

#include <functional>

namespace loom::tg {

#define GEN_PASS_DECL
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

/// --tg-fold-weights reading the weights from \p weights (kept by the
/// caller) instead of a file: what loom-compile uses for an imported ONNX
/// model, whose weights are in memory. A TG_KeptUnfolded op of parameters
/// (a weight's tg.round_tf32) is folded too where \p foldsKeptFor holds for
/// every op that reads it (loom-compile: ops a library step runs).
std::unique_ptr<mlir::Pass> createTGFoldWeightsPass(
    const safetensors::File *weights, int64_t maxElements,
    std::function<bool(mlir::Operation *)> foldsKeptFor = nullptr);

/// --tg-conv3d-as-2d leaving the 3-D convolutions \p keep holds (those a
/// library backend runs as they are: oneDNN's and cuDNN's 3-D
/// convolutions).
std::unique_ptr<mlir::Pass>
createTGConv3dAs2d(std::function<bool(mlir::Operation *)> keep);

/// --tg-narrow-products on \p module: every f32 tg.matmul and tg.conv
/// computed in \p narrow (bf16 or f16) between casts. What loom-compile
/// --precision=bf16|f16 applies to the model as read, before the graph is
/// captured for loom-run --check.
void narrowProducts(mlir::ModuleOp module, mlir::FloatType narrow);
/// --tg-narrow-products=type=tf32 on \p module: both multiplicands of
/// every f32 tg.matmul and tg.conv rounded by a tg.round_tf32 of their own
/// (one per use), results f32. loom-compile --precision=tf32.
void roundProductsToTF32(mlir::ModuleOp module);
/// The narrow type --tg-narrow-products and loom-compile --precision name:
/// bf16 or f16; null for any other name.
mlir::FloatType narrowTypeNamed(mlir::MLIRContext *context,
                                llvm::StringRef name);

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_H
