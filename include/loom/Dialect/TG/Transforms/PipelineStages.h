//===- PipelineStages.h - A decoder program cut into pipeline stages -*- C++
//-*-===//
//
// Part of Loom. --tg-pipeline-stages="stages=S" (docs/CacheParallel.md,
// "Pipeline stages"): a decoder program's layers cut into S contiguous
// stages, one a rank. Rank s holds the key/value caches (and reads the
// weights) of its stage's layers only; the values that cross from one
// stage to the next are sent in one tg.all_gather a boundary, and the last
// stage's outputs (the logits) are gathered to every rank, so that every
// rank returns what the program as given returns. Each function becomes S
// functions `<name>.rank<s>` (tg.runs_on_rank), as --tg-tensor-parallel
// makes. Registered in C++ (no Passes.td entry): docs/CacheParallel.md is
// its reference.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_PIPELINESTAGES_H
#define LOOM_DIALECT_TG_TRANSFORMS_PIPELINESTAGES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace loom::tg {

/// --tg-pipeline-stages over a world of \p stages ranks (on a module).
std::unique_ptr<mlir::Pass> createTGPipelineStagesPass(int64_t stages);

/// Runs --tg-pipeline-stages on \p module (loom-compile --pipeline-stages=S).
mlir::LogicalResult stageLayers(mlir::ModuleOp module, int64_t stages);

/// Registers --tg-pipeline-stages with loom-opt's pass registry.
void registerTGPipelineStagesPass();

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_PIPELINESTAGES_H
