//===- Simulator.h - Timing a pipeline schedule ------------------*- C++ -*-===//
//
// Part of Loom. Event-driven and O(actions): every device runs its program
// in order; a compute action takes its stage's seconds; a send leaves at once
// (it does not block its device) and occupies the directed link between the
// two devices for bytes / bandwidth, arriving latency later; a receive
// blocks its device until its message has arrived. A receive whose send
// never comes leaves its device blocked: the schedule deadlocks. Fed with
// measured message costs (Profile.h), a send also keeps its device busy, a
// message's flight and link are the measured ones, and a receive costs its
// device at least the measured receive time. Filler actions (pipe.fill) run
// when their device reaches their position, each taking the filler's
// seconds; the filler's static bytes count on a device that runs any of it,
// its activations from an F to its B.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_SIMULATOR_H
#define LOOM_DIALECT_PIPE_SCHEDULE_SIMULATOR_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace loom::pipe {

struct ActionTime {
  double start = 0, end = 0; // for a send: leaves at start, arrives at end
};

struct DeviceStats {
  double busy = 0;           // seconds of F/B/I/W
  double finish = 0;         // when its last action ends
  double bubble = 0;         // 1 - busy / makespan
  double fillBusy = 0;       // seconds of filler actions
  int64_t staticBytes = 0;   // weights + optimizer state of its stages
  int64_t peakBytes = 0;     // static + the most activations in flight
  int peakInFlight = 0;      // activations in flight at the peak
};

struct Simulation {
  double makespan = 0;
  double microBatchesPerSecond = 0, samplesPerSecond = 0;
  double meanBubble = 0;     // over the devices that compute
  /// The same with the filler's work counted as busy; and the filler's
  /// completed trial steps (summed over the devices).
  double meanFilledBubble = 0;
  int64_t fillSteps = 0;
  std::vector<DeviceStats> devices;
  /// times[d][i]: when action i of device d ran (when recorded).
  std::vector<std::vector<ActionTime>> times;
  /// fillTimes[d][j]: when filler action j of device d ran (when recorded).
  std::vector<std::vector<ActionTime>> fillTimes;
  /// A device left blocked, and the action it blocks at.
  struct Blocked {
    int device, action;
  };
  std::vector<Blocked> blocked;
  bool deadlocked() const { return !blocked.empty(); }
};

struct MessageCost;
struct StepProfile;

struct SimulateOptions {
  bool recordTimes = false;
  /// Measured message costs in place of the schedule's links (null: the
  /// links').
  const MessageCost *messages = nullptr;
  /// A measured run whose step's tail to simulate after the programs (null:
  /// none): each replicated stage's all-reduce of its gradients (half its
  /// weight_bytes) in stage order, entered by every replica when done and
  /// left together, then each device's update (StepProfile).
  const StepProfile *tail = nullptr;
};

Simulation simulate(const Schedule &schedule,
                    const SimulateOptions &options = {});

/// The table: one row per device (busy, bubble, peak memory) and totals.
void printSimulation(llvm::raw_ostream &os, const Schedule &schedule,
                     const Simulation &sim);
struct StepProfile;

/// The same as JSON; with \p fed, what the simulation was fed with and
/// what that run measured ("fed").
void writeSimulationJSON(llvm::raw_ostream &os, const Schedule &schedule,
                         const Simulation &sim,
                         const StepProfile *fed = nullptr);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_SIMULATOR_H
