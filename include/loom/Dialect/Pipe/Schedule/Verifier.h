//===- Verifier.h - Checking a pipeline schedule -----------------*- C++ -*-===//
//
// Part of Loom. The semantic checks of a schedule (docs/Dialects/Pipe.md):
//
// - order: a stage's F runs after its inputs are there (computed on the
//   device or received), B or I after its F and its output gradients, W
//   after I, a send after what it sends is computed;
// - completeness: every replica of every stage runs F and B (or I and W)
//   exactly once per micro-batch, never B together with I/W;
// - matching: every send has exactly one receive and every receive one send;
// - memory: weights + optimizer state + the activations in flight (an F adds
//   its stage's activation bytes, its B or W frees them) fit the device;
// - deadlock: run with blocking receives, every device finishes;
// - a filler job (pipe.filler, pipe.fill): complete trial steps in order,
//   memory with its bytes, and the main job unchanged (Fill.h, checkFill).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_VERIFIER_H
#define LOOM_DIALECT_PIPE_SCHEDULE_VERIFIER_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include <string>
#include <vector>

namespace loom::pipe {

struct ScheduleProblem {
  int device = -1;  // the device whose program is wrong
  int action = -1;  // the index of the action in it, or -1
  std::string message; // "device @d1, action 4 (B @s1 2): ..."
  bool filler = false; // a problem of the device's pipe.fill
};

/// Every problem of `schedule` (at most `maxProblems`), sorted by device and
/// action. Empty: the schedule is correct.
std::vector<ScheduleProblem> checkSchedule(const Schedule &schedule,
                                           size_t maxProblems = 32);

/// checkSchedule, each problem emitted as an error at the device's
/// pipe.program op (its pipe.fill op for a filler problem; the pipe.device
/// op when it has none).
mlir::LogicalResult verifySchedule(ScheduleOp op, const Schedule &schedule);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_VERIFIER_H
