//===- StageFunctions.h - A plan's stages as functions ----------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_STAGEFUNCTIONS_H
#define LOOM_PIPELINE_STAGEFUNCTIONS_H

#include "loom/Pipeline/Partition.h"

namespace loom::pipeline {

struct StageFunctions {
  std::string forward, backward;
  /// The values of the partitioned function the stage takes and produces.
  std::vector<mlir::Value> inputs, outputs;
};

/// Writes `stage`'s forward and backward functions beside `fn` (names from
/// `base`). The backward takes the forward's inputs, then the gradient of
/// every float output, and returns a probe value, the gradient of every
/// float input, then of every parameter (docs/Pipelines.md).
mlir::FailureOr<StageFunctions> outlineStage(mlir::func::FuncOp fn,
                                             const GraphModel &graph,
                                             const Stage &stage,
                                             llvm::StringRef base);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_STAGEFUNCTIONS_H
