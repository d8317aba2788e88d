//===- Executor.h - Running a pipe.schedule on the interpreter --*- C++ -*-===//
//
// Part of Loom. The reference executor of issue 15: every device's program
// of a `pipe.schedule` written by --pipe-partition runs in one process on
// the reference interpreter (f64), each device in its own action order, a
// SEND_F/SEND_B putting the micro-batch's activation or gradient into a
// queue that the matching RECV takes (a RECV whose message was not sent yet
// makes its device wait; no device able to move is a deadlock, reported).
// The parameter gradients it accumulates over the step are compared with
// the unpartitioned function's (--tg-autodiff on the whole function, summed
// over the same micro-batches), which is what makes a partitioned training
// step give the same updated weights as the unpartitioned one.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_EXECUTOR_H
#define LOOM_PIPELINE_EXECUTOR_H

#include "loom/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace loom::pipeline {

struct ExecutorOptions {
  uint64_t seed = 0;           // of every micro-batch's inputs
  std::string weightsFile;     // default: the module's tg.weights
  /// Keep the micro-batches' inputs and the reference gradients in the
  /// result (loom-run --reference runs a compiled step on the same ones).
  bool keepTensors = false;
};

struct ExecutionResult {
  std::string function;        // the partitioned function
  int64_t actions = 0;         // actions executed, over every device
  int64_t microBatches = 0;
  /// Per parameter: the largest |pipelined - reference| / max(1, |reference|).
  std::vector<std::pair<std::string, double>> errors;
  double worst = 0;
  /// With keepTensors: per micro-batch the step's inputs (the function's
  /// arguments, then the cotangent of each float result), and per
  /// parameter the unpartitioned step's gradient summed over them.
  std::vector<std::vector<std::vector<double>>> inputs;
  std::map<std::string, std::vector<double>> reference;
};

/// Runs `schedule` and its unpartitioned function on the same micro-batches.
/// On failure (a deadlock, a missing stage function, an interpreter error)
/// a diagnostic has been emitted.
mlir::FailureOr<ExecutionResult> executeSchedule(mlir::ModuleOp module,
                                                 pipe::ScheduleOp schedule,
                                                 const ExecutorOptions &options);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_EXECUTOR_H
