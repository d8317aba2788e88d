//===- Fill.h - Filling a schedule's bubbles with a second job ---*- C++ -*-===//
//
// Part of Loom. Hydro's bubble filling (docs/Pipelines.md): a second job's
// trial steps (a FillJob: per trial step, micro-batches of F then B on one
// device) placed in the idle time of a pipeline schedule's devices, so that
// the main job runs exactly as it does alone.
//
// In the simulator a device is idle only while a receive waits for its
// message and after its last action until the step's makespan: fillBubbles
// places filler actions there, greedily in time order, each one only where
// it ends before the device's next action needs the device (the arrival of
// the receive's message, or the makespan), and only where the device's
// memory holds the main job's bytes at every later action plus the filler's
// static bytes and one activation. A device runs its own trials, one trial
// step after another; a step that cannot be completed in the step's bubbles
// is left out, so every trial step placed is complete and the filled step
// can repeat.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_FILL_H
#define LOOM_DIALECT_PIPE_SCHEDULE_FILL_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Dialect/Pipe/Schedule/Verifier.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::pipe {

struct FillOptions {
  /// Stop placing filler actions beyond this many in the schedule.
  int64_t maxActions = 200000;
};

/// Sets `schedule.filler` to `job` and `schedule.fills` to its placement in
/// the bubbles of `schedule.programs` (the previous fills are replaced).
/// Fails when the main schedule deadlocks, or the job's times are negative
/// or both zero.
llvm::Error fillBubbles(Schedule &schedule, const FillJob &job,
                        const FillOptions &options = {});

/// The filler's problems, appended to `problems`: on every device, trial
/// steps 0, 1, ... one after another, each micro-batch's F once and then its
/// B once, every step complete; the device's memory with the filler's bytes
/// (an order-based walk as the main job's check); and the main job
/// unchanged: simulated with and without the filler, every main action
/// starts and ends at the same time (receives: ends), and no device's
/// filler runs past the main step's makespan. Used by checkSchedule.
void checkFill(const Schedule &schedule,
               std::vector<ScheduleProblem> &problems);

/// One line on the filling (nothing without a filler): the idle fraction
/// before and after, trial steps per main step and per second.
void printFillSummary(llvm::raw_ostream &os, const Schedule &schedule,
                      const Simulation &sim);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_FILL_H
