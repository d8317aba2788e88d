//===- Fill.cpp - Filling a schedule's bubbles with a second job ----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Fill.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace loom::pipe;

/// Seconds as the messages print them: "0.0015".
static std::string secondsText(double seconds) {
  return llvm::formatv("{0}", llvm::format("%.6g", seconds)).str();
}

/// The schedule without its filler actions.
static Schedule mainJob(const Schedule &s) {
  Schedule main = s;
  main.fills.clear();
  return main;
}

/// The main job's activation bytes on device `d` after each prefix of its
/// program: active[p] after actions 0..p-1.
static std::vector<int64_t> activationsBefore(const Schedule &s, int d) {
  const std::vector<Action> &program = s.programs[d];
  std::vector<int64_t> active(program.size() + 1, 0);
  for (size_t i = 0; i < program.size(); ++i)
    active[i + 1] = active[i] + s.activationDelta(program[i]);
  return active;
}

static int64_t staticBytesOn(const Schedule &s, int d) {
  int64_t bytes = 0;
  for (const Stage &st : s.stages)
    if (llvm::is_contained(st.devices, d))
      bytes += st.staticBytes();
  return bytes;
}

namespace {
/// The idle windows of one device: before position p of its program, from
/// when the device is free (its previous action done) to when action p needs
/// it (a receive: its message's arrival); the last one ends at the makespan.
struct Windows {
  std::vector<double> from, to;

  Windows(const Schedule &s, const Simulation &sim, int d) {
    const std::vector<Action> &program = s.programs[d];
    const std::vector<ActionTime> &times = sim.times[d];
    double free = 0;
    for (size_t p = 0; p < program.size(); ++p) {
      from.push_back(free);
      to.push_back(isRecv(program[p].kind) ? times[p].end : times[p].start);
      // A send leaves at once: the device is free again when it starts.
      free = isSend(program[p].kind) ? times[p].start : times[p].end;
    }
    from.push_back(free);
    to.push_back(sim.makespan);
  }
};

/// Places one device's trial steps: F 0, B 0, F 1, B 1, ... per step.
class DeviceFiller {
public:
  DeviceFiller(const Schedule &s, const FillJob &job, int d)
      : s(s), job(job), d(d) {}

  std::vector<FillAction> run(const Simulation &sim, int64_t budget) {
    std::vector<FillAction> placed;
    int64_t capacity = s.devices[d].memory;
    std::vector<int64_t> active = activationsBefore(s, d);
    // The most the main job holds from position p to the end.
    std::vector<int64_t> later(active);
    for (size_t p = later.size() - 1; p-- > 0;)
      later[p] = std::max(later[p], later[p + 1]);
    int64_t fixed = staticBytesOn(s, d) + job.staticBytes;
    if (capacity && fixed + later[0] > capacity)
      return placed; // the trials' parameters do not fit beside the stages
    Windows w(s, sim, d);
    FillAction next;
    for (size_t p = 0; p < w.from.size(); ++p) {
      double t = w.from[p];
      next.at = p;
      while (int64_t(placed.size()) < budget &&
             t + job.seconds(next) <= w.to[p]) {
        if (!next.backward && capacity &&
            fixed + later[p] + job.activationBytes > capacity)
          break;
        t += job.seconds(next);
        placed.push_back(next);
        advance(next);
      }
    }
    // Leave out the trial step that is not complete.
    while (!placed.empty() && placed.back().step == next.step)
      placed.pop_back();
    return placed;
  }

private:
  void advance(FillAction &a) const {
    if (!a.backward) {
      a.backward = true;
      return;
    }
    a.backward = false;
    if (++a.microBatch == job.microBatches) {
      a.microBatch = 0;
      ++a.step;
    }
  }

  const Schedule &s;
  const FillJob &job;
  int d;
};
} // namespace

llvm::Error loom::pipe::fillBubbles(Schedule &s, const FillJob &job,
                                    const FillOptions &options) {
  if (job.forwardTime < 0 || job.backwardTime < 0 ||
      job.forwardTime + job.backwardTime <= 0 || job.microBatches < 1 ||
      job.staticBytes < 0 || job.activationBytes < 0)
    return llvm::createStringError(
        "the filler needs positive seconds per trial step, at least one "
        "micro-batch and non-negative bytes");
  Schedule main = mainJob(s);
  SimulateOptions record;
  record.recordTimes = true;
  Simulation sim = simulate(main, record);
  if (sim.deadlocked())
    return llvm::createStringError("the schedule deadlocks: no bubbles to fill");
  s.filler = job;
  s.fills.assign(s.devices.size(), {});
  int64_t budget = options.maxActions;
  for (size_t d = 0; d < s.devices.size(); ++d) {
    s.fills[d] = DeviceFiller(s, job, d).run(sim, budget);
    budget -= s.fills[d].size();
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

namespace {
class FillChecker {
public:
  FillChecker(const Schedule &s, std::vector<ScheduleProblem> &problems)
      : s(s), job(*s.filler), problems(problems) {}

  void run() {
    for (size_t d = 0; d < s.fills.size(); ++d) {
      checkSteps(d);
      checkMemory(d);
    }
    checkTimes();
  }

private:
  std::string dev(int d) const { return "@" + s.devices[d].name; }

  /// A problem at filler action `j` of device `d` (-1: the device's fill).
  void add(int d, int j, const std::string &message) {
    std::string text = "device " + dev(d);
    int at = -1;
    if (j >= 0) {
      text += ", filler action " + std::to_string(j) + " (" +
              s.describe(s.fills[d][j]) + ")";
      at = s.fills[d][j].at;
    }
    problems.push_back({d, at, text + ": " + message, /*filler=*/true});
  }

  /// Trial steps 0, 1, ... in order; per micro-batch F once then B once;
  /// every step complete.
  void checkSteps(int d) {
    const std::vector<FillAction> &fills = s.fills[d];
    int step = 0;
    llvm::DenseSet<int> forwards, backwards;
    auto incomplete = [&](int j) {
      add(d, j,
          "trial step " + std::to_string(step) + " is incomplete: " +
              std::to_string(backwards.size()) + " of " +
              std::to_string(job.microBatches) + " micro-batches done");
    };
    for (size_t j = 0; j < fills.size(); ++j) {
      const FillAction &a = fills[j];
      if (a.step != step) {
        if (a.step != step + 1)
          return add(d, j,
                     "trial steps must run in order 0, 1, ...: expected step " +
                         std::to_string(step) + " or " +
                         std::to_string(step + 1));
        if (int64_t(backwards.size()) != job.microBatches)
          return incomplete(j);
        step = a.step;
        forwards.clear();
        backwards.clear();
      }
      if (!a.backward && !forwards.insert(a.microBatch).second)
        return add(d, j, "repeats the forward");
      if (a.backward && !forwards.contains(a.microBatch))
        return add(d, j, "runs the backward before its forward");
      if (a.backward && !backwards.insert(a.microBatch).second)
        return add(d, j, "repeats the backward");
    }
    if (!fills.empty() && int64_t(backwards.size()) != job.microBatches)
      incomplete(-1);
  }

  /// The device's memory, walking its main and filler actions in order.
  void checkMemory(int d) {
    int64_t capacity = s.devices[d].memory;
    const std::vector<FillAction> &fills = s.fills[d];
    if (!capacity || fills.empty())
      return;
    const std::vector<Action> &program = s.programs[d];
    int64_t fixed = staticBytesOn(s, d), main = 0, filler = 0;
    size_t j = 0;
    for (size_t p = 0; p <= program.size(); ++p) {
      for (; j < fills.size() && size_t(fills[j].at) == p; ++j) {
        filler += fills[j].backward ? -job.activationBytes : job.activationBytes;
        if (over(d, int(j), fixed, main, filler))
          return;
      }
      if (p == program.size())
        break;
      main += s.activationDelta(program[p]);
      // Past the capacity without the filler: the schedule's own problem.
      if (fixed + main <= capacity && over(d, int(j) - 1, fixed, main, filler))
        return;
    }
  }

  bool over(int d, int j, int64_t fixed, int64_t main, int64_t filler) {
    int64_t capacity = s.devices[d].memory;
    int64_t total = fixed + job.staticBytes + main + filler;
    if (total <= capacity)
      return false;
    add(d, j,
        "with the filler, memory " + std::to_string(total) +
            " bytes (stages' weights and optimizer state " +
            std::to_string(fixed) + ", their activations " +
            std::to_string(main) + ", the filler's static bytes " +
            std::to_string(job.staticBytes) + " and activations " +
            std::to_string(filler) + ") exceeds the capacity of " +
            std::to_string(capacity) + " bytes");
    return true;
  }

  /// The main job runs as without the filler: every filler action ends
  /// before the device's next main action needs the device in the run
  /// without the filler (a receive: when its message arrives; after the
  /// last action: the makespan). The earliest one that does not is the
  /// cause (every later time may move with it); and, as a check of that
  /// rule, the two runs' main actions are compared.
  void checkTimes() {
    SimulateOptions record;
    record.recordTimes = true;
    Simulation alone = simulate(mainJob(s), record);
    if (alone.deadlocked())
      return; // reported as the schedule's own problem
    Simulation filled = simulate(s, record);
    double tolerance = 1e-9 * std::max(alone.makespan, 1e-12);
    struct Overrun {
      int d = -1, j = -1;
      double start = 0, end = 0, deadline = 0;
    } first;
    for (size_t d = 0; d < s.fills.size(); ++d) {
      Windows w(s, alone, d);
      for (size_t j = 0; j < s.fills[d].size(); ++j) {
        const ActionTime &t = filled.fillTimes[d][j];
        double deadline = w.to[s.fills[d][j].at];
        if (t.end <= deadline + tolerance)
          continue;
        if (first.d < 0 || t.start < first.start)
          first = {int(d), int(j), t.start, t.end, deadline};
        break;
      }
    }
    if (first.d >= 0) {
      size_t at = s.fills[first.d][first.j].at;
      const std::vector<Action> &program = s.programs[first.d];
      std::string needs =
          at < program.size()
              ? "action " + std::to_string(at) + " (" +
                    s.describe(program[at]) + ") needs the device"
              : std::string("the main step ends");
      return add(first.d, first.j,
                 llvm::formatv("overruns its bubble and delays the main job: "
                               "it ends at {0} s, but {1} at {2} s",
                               secondsText(first.end), needs,
                               secondsText(first.deadline))
                     .str());
    }
    for (size_t d = 0; d < s.programs.size(); ++d)
      for (size_t i = 0; i < s.programs[d].size(); ++i) {
        const ActionTime &a = alone.times[d][i], &f = filled.times[d][i];
        if (std::fabs(a.end - f.end) <= tolerance &&
            (isRecv(s.programs[d][i].kind) ||
             std::fabs(a.start - f.start) <= tolerance))
          continue;
        return add(d, -1,
                   llvm::formatv("the filler delays the main job: action {0} "
                                 "({1}) ends at {2} s instead of {3} s",
                                 i, s.describe(s.programs[d][i]),
                                 secondsText(f.end), secondsText(a.end))
                       .str());
      }
  }

  const Schedule &s;
  const FillJob &job;
  std::vector<ScheduleProblem> &problems;
};
} // namespace

void loom::pipe::checkFill(const Schedule &s,
                           std::vector<ScheduleProblem> &problems) {
  if (s.filler && !s.fills.empty())
    FillChecker(s, problems).run();
}

void loom::pipe::printFillSummary(llvm::raw_ostream &os, const Schedule &s,
                                  const Simulation &sim) {
  if (!s.filler)
    return;
  const FillJob &job = *s.filler;
  double perSecond = sim.makespan > 0 ? sim.fillSteps / sim.makespan : 0;
  os << "filler @" << job.name;
  if (!job.function.empty())
    os << " (" << job.function << ")";
  os << llvm::format(": %lld micro-batches per trial step, F %.6g s, B %.6g s; "
                     "%lld trial steps per main step (%.6g per second), "
                     "%lld filler actions; mean idle fraction %.4f -> %.4f\n",
                     static_cast<long long>(job.microBatches), job.forwardTime,
                     job.backwardTime, static_cast<long long>(sim.fillSteps),
                     perSecond, static_cast<long long>(s.numFillActions()),
                     sim.meanBubble, sim.meanFilledBubble);
}
