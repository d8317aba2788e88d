//===- FillJob.h - Pricing a bubble-filling job -----------------*- C++ -*-===//
//
// Part of Loom. The costs of a second job whose trial steps fill a
// pipeline's bubbles (include/loom/Dialect/Pipe/Schedule/Fill.h), from a
// forward function and Loom's cost model (docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_FILLJOB_H
#define LOOM_PIPELINE_FILLJOB_H

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "mlir/IR/BuiltinOps.h"

namespace loom::pipeline {

struct FillJobSpec {
  /// The forward function: looked up in `modulePath` when given (parsed
  /// into the context of the module the pass runs on), else in the module.
  std::string function, modulePath;
  std::string target = "h100";
  std::string optimizer = "adam";
  int64_t microBatches = 1;
};

/// The filler job of `spec.function`: one trial step is `microBatches`
/// forwards and backwards of the function (its batch is one micro-batch),
/// each priced as the partitioner prices a stage (modelGraph: the ops'
/// forward costs and their VJPs' costs on the target); static bytes are the
/// parameters (`tg.weight`s and the arguments marked `tg.parameter`, as a
/// `--tg-fuse-trials` function has them) times the optimizer's state
/// factor, activation bytes what its ops keep for the backward pass. A
/// training step (arguments marked tg.optimizer_state or
/// tg.hyper_parameter, as --tg-autodiff and --tg-fuse-trials write them) is
/// a whole trial step: its F is the step's cost, its B none, its static
/// bytes its parameters, their gradients and its optimizer state; then
/// `microBatches` must be 1.
/// Errors are emitted at `module` (or the function).
mlir::FailureOr<pipe::FillJob> priceFillJob(mlir::ModuleOp module,
                                            const FillJobSpec &spec);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_FILLJOB_H
