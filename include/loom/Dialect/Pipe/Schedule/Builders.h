//===- Builders.h - Emitting pipeline schedules ------------------*- C++ -*-===//
//
// Part of Loom. Given the stages (a chain or a DAG, with their costs), the
// edges and the device assignment of a Schedule, fill in every device's
// actions for a named schedule, sends and receives included:
//
// - gpipe: all forwards, then all backwards (GPipe);
// - 1f1b: one forward, one backward, with at most depth(s) micro-batches in
//   flight on a stage s whose longest path to a sink has depth(s) stages
//   (PipeDream-Flush / Megatron's 1F1B);
// - interleaved: v stages per device (stage k of a chain on device k mod p),
//   Megatron's interleaved 1F1B order, micro-batches in groups of p;
// - zb-h1: Zero Bubble's H1: B split into I and W, I first, W deferred to
//   fill the bubbles, 1F1B's memory.
//
// Every builder list-schedules the compute actions in time with the
// schedule's costs (a device picks among its ready actions by the schedule's
// rule), then puts each send right after the action it sends from and each
// receive right before the action that needs it. The receives therefore
// follow a feasible run and the schedule cannot deadlock; every emitted
// schedule passes checkSchedule.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_BUILDERS_H
#define LOOM_DIALECT_PIPE_SCHEDULE_BUILDERS_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

namespace loom::pipe {

enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZBH1 };

std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);
llvm::StringRef scheduleKindName(ScheduleKind kind); // "gpipe", "1f1b", ...

/// Replaces `schedule.programs` with the actions of `kind` for the stages,
/// edges, devices and micro-batches of `schedule`. Fails (and leaves the
/// programs alone) when the stages do not fit the kind: interleaved needs
/// every device to hold the same number of stages, and micro-batches a
/// multiple of the devices.
llvm::Error buildPrograms(Schedule &schedule, ScheduleKind kind);

/// A synthetic chain for tests and benchmarks: `devices * chunks` stages
/// s0, s1, ... in a chain, stage k on device k mod devices, every stage with
/// the same costs; the forward of stage k is function "stage<k>_forward" (and
/// "stage<k>_backward", or "stage<k>_input" / "stage<k>_weight").
struct ChainSpec {
  int devices = 4;
  int chunks = 1;
  int64_t microBatches = 8;
  int64_t microBatchSize = 1;
  double forwardTime = 1e-3, backwardTime = 2e-3;
  /// Set both to split the backward (zb-h1); else it is split in halves.
  double inputTime = 0, weightTime = 0;
  int64_t weightBytes = 0, optimizerBytes = 0, activationBytes = 0;
  int64_t edgeBytes = 0;
  int64_t memory = 0; // per device
  bool splitBackward = false; // name input_grad/weight_grad functions
  Links links;
};
Schedule makeChain(const ChainSpec &spec);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_BUILDERS_H
