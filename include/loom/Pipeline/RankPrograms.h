//===- RankPrograms.h - A pipe.schedule as the ranks' programs --*- C++ -*-===//
//
// Part of Loom. What loom-compile makes of a partitioned module (one with a
// `pipe.schedule` written by --pipe-partition): one rank per schedule
// device, each running the compiled entries of its stages in its device's
// action order, with the sends and receives of consecutive actions batched
// into one exchange (sends held back, or receives posted earlier, where
// that is what keeps sends that block until received from deadlocking),
// gradients summed over the micro-batches
// (docs/Artifact.md "The pipelined step", docs/Pipelines.md "Running on
// ranks"). The dataflow is the reference executor's (Executor.h), so the
// ranks' gradients are the reference's.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_RANKPROGRAMS_H
#define LOOM_PIPELINE_RANKPROGRAMS_H

#include "loom/Artifact/Schema.h"
#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace loom::pipeline {

/// One value of a stage function's signature.
struct StageValue {
  artifact::TensorDesc desc;
  bool isFloat = false;
  /// A forward input: the stage and output it comes from (stage -1: the
  /// partitioned function's argument). A forward output: the partitioned
  /// function's results it is returned as.
  int64_t sourceStage = -1, sourceIndex = 0;
  std::vector<int64_t> returned = {};
};

struct StageSignature {
  std::string forward, backward;
  std::vector<StageValue> inputs, outputs;
  /// The backward's parameters, named as the weights.
  std::vector<artifact::TensorDesc> params;
  /// The forward's parameter arguments (a step with an optimizer: its
  /// weights turned into arguments), named as the weights.
  std::vector<artifact::TensorDesc> forwardParams;
};

/// A partitioned training step as read before compilation: the schedule,
/// each stage's signature, the step's inputs per micro-batch (the
/// partitioned function's arguments, then the cotangent of each float
/// result) and where each result's cotangent is among them (-1: none).
struct PartitionedStep {
  pipe::Schedule schedule;
  std::vector<StageSignature> stages;
  std::vector<artifact::TensorDesc> stepInputs;
  std::vector<int64_t> cotangentInput;
  mlir::Location loc;
  /// The optimizer step each rank ends with (none: the caller's).
  artifact::Optimizer optimizer;
};

/// Reads the module's one `pipe.schedule` and its stage functions. Fails
/// (diagnosed) on a schedule the ranks cannot run: a stage without a
/// backward function, programs that deadlock. With \p optimizer the stage
/// forward functions' weights become arguments (the ranks update their
/// parameters), and a parameter whose gradient no rank holds whole is
/// refused.
mlir::FailureOr<PartitionedStep>
readPartitionedStep(mlir::ModuleOp module, pipe::ScheduleOp op,
                    const artifact::Optimizer &optimizer = {});

/// Turns \p m, the manifest of every stage entry on one device, into the
/// world of \p step: a device and a rank per schedule device, each stage's
/// entries on its rank, and every rank's slots, channels and actions,
/// checked with artifact::checkWorldStep. Diagnoses failures at step.loc.
mlir::LogicalResult buildRankPrograms(const PartitionedStep &step,
                                      artifact::Manifest &m);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_RANKPROGRAMS_H
