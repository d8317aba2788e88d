//===- Profile.h - A schedule's costs measured by a run ---------*- C++ -*-===//
//
// Part of Loom. A step profile (`loom-run --step-profile=FILE`,
// docs/Runtime.md "Step profile") holds the start and end of every action
// of every rank of a multi-rank artifact over the steps of a run. Read
// here, it gives the simulator measured costs in place of the cost model's
// (docs/Dialects/Pipe.md "Fed with a measured run"): each stage's compute
// times (means per stage function) and a per-message cost fitted from the
// exchanges, every step but a run's first (its warm-up) sampled.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_PROFILE_H
#define LOOM_DIALECT_PIPE_SCHEDULE_PROFILE_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace loom::pipe {

/// What one message (one SEND/RECV action: every tensor of an edge for a
/// micro-batch) costs, measured. A send keeps its device busy sendSeconds;
/// it can be received latency + bytes / bandwidth after the send began
/// (bandwidth 0: no per-byte term), the messages of one directed link
/// taking turns for their bytes; a receive ends at the later of that and
/// recvSeconds after it began.
struct MessageCost {
  double sendSeconds = 0, recvSeconds = 0, latency = 0, bandwidth = 0;
  /// The observations each was fitted from.
  int sendSamples = 0, recvSamples = 0, flightSamples = 0;
  /// How many distinct message sizes the flight samples had.
  int flightSizes = 0;
};

/// What a replicated stage's all-reduce of its gradients costs, measured:
/// latency + bytes / bandwidth (bandwidth 0: no per-byte term), fitted as a
/// message's flight is, from each all-reduce's time on the member of its
/// group that reached it last (the others waited for it too).
struct AllReduceCost {
  double latency = 0, bandwidth = 0;
  int samples = 0, sizes = 0;
  double seconds(int64_t bytes) const {
    return latency + (bandwidth > 0 ? bytes / bandwidth : 0);
  }
};

/// The times of one or more step profiles, pooled.
struct StepProfile {
  /// Per entry (a stage function): the seconds of each of its computes,
  /// with the accumulations that directly follow it on its rank.
  std::map<std::string, std::vector<double>> compute;
  /// Per entry: the seconds of the parameter-gradient accumulations of one
  /// micro-batch deferred past other actions (ZB-H1's W), attributed to the
  /// rank's latest compute of that micro-batch.
  std::map<std::string, std::vector<double>> deferred;
  MessageCost messages;
  /// The step's tail as the ranks run it (a step with data-parallel stages
  /// or compiled with --optimizer): the all-reduces' cost, and per rank
  /// the mean seconds of its update (its stages' optimizer step; empty, or
  /// 0 for a rank, when none was measured).
  AllReduceCost allReduce;
  std::vector<double> updateSeconds;
  /// Each step's span over every rank (first start to last end), but a
  /// file's first step (its warm-up: first calls, first messages) when it
  /// has more.
  std::vector<double> stepSeconds;
  /// Per file with several steps: the steady period, (the last step's end
  /// - the first step's end) / (steps - 1); consecutive steps overlap.
  std::vector<double> periodSeconds;
  int64_t files = 0, steps = 0, ranks = 0, cores = 0;
};

/// Reads and pools the profiles at \p paths. The errors name the file and
/// the offending member (`ranks[1].actions[3].entry`).
llvm::Expected<StepProfile> readStepProfiles(llvm::ArrayRef<std::string> paths);

/// Puts \p profile's means into \p schedule's stages: F the forward
/// function's computes, I the backward function's, W the deferred
/// accumulations (0 when none was deferred), B = I + W, each over the
/// stage's replicas (a replica ran whole micro-batches, its share; the
/// schedule's replicas run every micro-batch on a share of its samples). An error names a
/// stage function the profile never ran, a schedule that sends when the
/// profile measured no message, one with replicated stages when it measured
/// no all-reduce, or a profile with update times of another number of
/// ranks than the schedule's devices.
llvm::Error feedStageTimes(Schedule &schedule, const StepProfile &profile);

/// What was fed: per stage F/B/I/W, the message costs, the measured step.
void printFed(llvm::raw_ostream &os, const Schedule &schedule,
              const StepProfile &profile);

/// The median of \p samples (0 when empty).
double medianOf(std::vector<double> samples);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_PROFILE_H
