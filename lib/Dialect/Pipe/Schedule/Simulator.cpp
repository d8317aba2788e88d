//===- Simulator.cpp - Timing a pipeline schedule -------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Dialect/Pipe/Schedule/Fill.h"
#include "loom/Dialect/Pipe/Schedule/Profile.h"
#include "Message.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace loom::pipe;

namespace {
/// The memory of one device while the simulation runs.
struct DeviceMemory {
  int64_t activations = 0, fillActivations = 0;
  int inFlight = 0;

  void note(DeviceStats &stats, int64_t fillStatic) const {
    int64_t now = stats.staticBytes + fillStatic + activations + fillActivations;
    if (now > stats.peakBytes ||
        (inFlight > stats.peakInFlight && now == stats.peakBytes)) {
      stats.peakBytes = now;
      stats.peakInFlight = inFlight;
    }
  }
};
} // namespace

/// Completed trial steps of the filler: per device, the steps all of whose
/// forwards and backwards ran.
static int64_t completedFillSteps(const Schedule &s) {
  int64_t steps = 0;
  for (const std::vector<FillAction> &fills : s.fills) {
    llvm::DenseMap<int, int64_t> actions;
    for (const FillAction &a : fills)
      ++actions[a.step];
    for (auto &[step, n] : actions)
      steps += n == 2 * s.filler->microBatches;
  }
  return steps;
}

/// A simulation of \p s before its first action: the times' tables when
/// asked for, and each device's static memory (its stages' weights and
/// optimizer state, the filler's on a device that runs filler work, which
/// \p fillStatic receives).
static Simulation startSimulation(const Schedule &s,
                                  const SimulateOptions &options, bool filled,
                                  std::vector<int64_t> &fillStatic) {
  size_t n = s.devices.size();
  Simulation sim;
  sim.devices.assign(n, {});
  if (options.recordTimes) {
    sim.times.resize(n);
    for (size_t d = 0; d < n; ++d)
      sim.times[d].resize(s.programs[d].size());
    if (filled) {
      sim.fillTimes.resize(n);
      for (size_t d = 0; d < n; ++d)
        sim.fillTimes[d].resize(s.fills[d].size());
    }
  }
  fillStatic.assign(n, 0);
  for (const Stage &st : s.stages)
    for (int d : st.devices)
      sim.devices[d].staticBytes += st.staticBytes();
  for (size_t d = 0; d < n; ++d) {
    if (filled && !s.fills[d].empty())
      fillStatic[d] = s.filler->staticBytes;
    sim.devices[d].peakBytes = sim.devices[d].staticBytes + fillStatic[d];
  }
  return sim;
}

/// Completes \p sim once no device can go on: the devices left blocked
/// (program counters \p pc), finish times (\p clock), the makespan, the
/// bubbles with and without the filler, and the throughput.
static void finishSimulation(const Schedule &s, bool filled,
                             const std::vector<size_t> &pc,
                             const std::vector<double> &clock,
                             Simulation &sim) {
  for (size_t d = 0; d < s.devices.size(); ++d) {
    if (pc[d] < s.programs[d].size())
      sim.blocked.push_back({static_cast<int>(d), static_cast<int>(pc[d])});
    sim.devices[d].finish = clock[d];
    sim.makespan = std::max(sim.makespan, clock[d]);
  }
  int computing = 0;
  for (DeviceStats &stats : sim.devices) {
    stats.bubble = sim.makespan > 0 ? 1 - stats.busy / sim.makespan : 0;
    if (stats.busy > 0) {
      sim.meanBubble += stats.bubble;
      sim.meanFilledBubble +=
          sim.makespan > 0 ? 1 - (stats.busy + stats.fillBusy) / sim.makespan
                           : 0;
      ++computing;
    }
  }
  if (computing) {
    sim.meanBubble /= computing;
    sim.meanFilledBubble /= computing;
  }
  if (filled)
    sim.fillSteps = completedFillSteps(s);
  else
    sim.meanFilledBubble = sim.meanBubble;
  if (sim.makespan > 0 && !sim.deadlocked()) {
    sim.microBatchesPerSecond = s.microBatches / sim.makespan;
    sim.samplesPerSecond = sim.microBatchesPerSecond * s.microBatchSize;
  }
}

/// The step's tail as the ranks run it (SimulateOptions::tail): the
/// all-reduces of the replicated stages in stage order, then the updates.
static void simulateTail(const Schedule &s, const StepProfile &p,
                         std::vector<double> &clock, Simulation &sim) {
  for (const Stage &st : s.stages) {
    if (st.devices.size() < 2)
      continue;
    double start = 0;
    for (int d : st.devices)
      start = std::max(start, clock[d]);
    double end = start + p.allReduce.seconds(st.weightBytes / 2);
    for (int d : st.devices)
      clock[d] = end;
  }
  for (size_t d = 0; d < p.updateSeconds.size() && d < clock.size(); ++d) {
    clock[d] += p.updateSeconds[d];
    sim.devices[d].busy += p.updateSeconds[d];
  }
}

Simulation loom::pipe::simulate(const Schedule &s,
                                const SimulateOptions &options) {
  size_t n = s.devices.size();
  bool filled = s.filler && !s.fills.empty();
  std::vector<int64_t> fillStatic;
  Simulation sim = startSimulation(s, options, filled, fillStatic);

  // Per-edge bytes per send, looked up once per (from, to) pair.
  llvm::DenseMap<std::pair<int, int>, int> edgeOf;
  for (size_t e = 0; e < s.edges.size(); ++e)
    edgeOf[{s.edges[e].from, s.edges[e].to}] = e;
  auto bytesOf = [&](const MessageKey &k) -> int64_t {
    auto it = edgeOf.find({k.fromStage, k.toStage});
    if (it == edgeOf.end())
      return 0;
    const Edge &e = s.edges[it->second];
    int64_t pairs = static_cast<int64_t>(s.stages[e.from].devices.size()) *
                    s.stages[e.to].devices.size();
    return (k.backward ? e.gradBytes : e.bytes) / std::max<int64_t>(pairs, 1);
  };

  std::vector<size_t> pc(n, 0), fc(n, 0);
  std::vector<double> clock(n, 0.0);
  std::vector<DeviceMemory> memory(n);
  llvm::DenseMap<MessageKey, double> arrival;
  llvm::DenseMap<MessageKey, int> waiting;
  llvm::DenseMap<std::pair<int, int>, double> linkFree;
  std::vector<int> work;
  work.reserve(n);
  for (size_t d = n; d-- > 0;)
    work.push_back(d);

  // The filler actions of device d at position p of its program, once each.
  auto runFills = [&](int d, size_t p) {
    if (!filled)
      return;
    const std::vector<FillAction> &fills = s.fills[d];
    for (; fc[d] < fills.size() && size_t(fills[fc[d]].at) == p; ++fc[d]) {
      const FillAction &a = fills[fc[d]];
      double start = clock[d];
      clock[d] += s.filler->seconds(a);
      sim.devices[d].fillBusy += clock[d] - start;
      memory[d].fillActivations +=
          a.backward ? -s.filler->activationBytes : s.filler->activationBytes;
      memory[d].note(sim.devices[d], fillStatic[d]);
      if (options.recordTimes)
        sim.fillTimes[d][fc[d]] = {start, clock[d]};
    }
  };

  while (!work.empty()) {
    int d = work.back();
    work.pop_back();
    const std::vector<Action> &program = s.programs[d];
    DeviceStats &stats = sim.devices[d];
    while (pc[d] < program.size()) {
      runFills(d, pc[d]);
      const Action &a = program[pc[d]];
      double start = clock[d], end = start;
      if (isCompute(a.kind)) {
        end = start + s.stages[a.stage].seconds(a.kind);
        stats.busy += end - start;
        clock[d] = end;
        memory[d].activations += s.activationDelta(a);
        if (a.kind == ActionKind::F) {
          ++memory[d].inFlight;
          memory[d].note(stats, fillStatic[d]);
        } else if (a.kind == ActionKind::B || a.kind == ActionKind::W) {
          --memory[d].inFlight;
        }
      } else if (isSend(a.kind)) {
        MessageKey key = MessageKey::of(a, d);
        int64_t bytes = bytesOf(key);
        bool intra = s.nodeOf(d) == s.nodeOf(a.peerDevice);
        const MessageCost *m = options.messages;
        double bandwidth = m ? m->bandwidth
                         : intra ? s.links.intraBandwidth
                                 : s.links.interBandwidth;
        double latency = m       ? m->latency
                         : intra ? s.links.intraLatency
                                 : s.links.interLatency;
        double &free = linkFree[{d, a.peerDevice}];
        double leave = std::max(start, free);
        free = leave + (bandwidth > 0 ? bytes / bandwidth : 0);
        end = free + latency;
        arrival[key] = end;
        if (m) // the sender's part of posting it
          clock[d] = start + m->sendSeconds;
        if (auto it = waiting.find(key); it != waiting.end()) {
          work.push_back(it->second);
          waiting.erase(it);
        }
      } else { // receive
        MessageKey key = MessageKey::of(a, d);
        auto it = arrival.find(key);
        if (it == arrival.end()) {
          waiting[key] = d;
          break;
        }
        double least = options.messages ? options.messages->recvSeconds : 0;
        end = std::max(start + least, it->second);
        clock[d] = end;
      }
      if (options.recordTimes)
        sim.times[d][pc[d]] = {start, end};
      ++pc[d];
    }
    if (pc[d] == program.size())
      runFills(d, pc[d]);
  }

  bool done = llvm::all_of(llvm::seq<size_t>(0, n), [&](size_t d) {
    return pc[d] == s.programs[d].size();
  });
  if (options.tail && done)
    simulateTail(s, *options.tail, clock, sim);
  finishSimulation(s, filled, pc, clock, sim);
  return sim;
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

static double mib(int64_t bytes) { return bytes / (1024.0 * 1024.0); }

void loom::pipe::printSimulation(llvm::raw_ostream &os, const Schedule &s,
                                 const Simulation &sim) {
  os << "pipe.schedule @" << s.name << ": " << s.devices.size()
     << " devices, " << s.stages.size() << " stages, " << s.microBatches
     << " micro-batches, " << s.numActions() << " actions\n";
  os << llvm::format("%-12s %12s %12s %8s %12s %12s %6s\n", "device",
                     "busy (s)", "finish (s)", "bubble", "peak (MiB)",
                     "memory (MiB)", "peakmb");
  // Large schedules: the first and last devices, the rest summarised.
  size_t n = s.devices.size();
  for (size_t d = 0; d < n; ++d) {
    if (n > 40 && d == 16) {
      os << "  ... " << (n - 32) << " more devices ...\n";
      d = n - 16;
    }
    const DeviceStats &st = sim.devices[d];
    std::string name = "@" + s.devices[d].name;
    std::string memory =
        s.devices[d].memory
            ? llvm::formatv("{0:F3}", mib(s.devices[d].memory)).str()
            : "unlimited";
    os << llvm::format("%-12s %12.6g %12.6g %8.4f %12.3f %12s %6d\n",
                       name.c_str(), st.busy, st.finish, st.bubble,
                       mib(st.peakBytes), memory.c_str(), st.peakInFlight);
  }
  if (sim.deadlocked()) {
    os << "DEADLOCK: " << sim.blocked.size() << " devices blocked\n";
    return;
  }
  os << llvm::format("makespan %.6g s, throughput %.6g micro-batches/s "
                     "(%.6g samples/s), mean bubble %.4f\n",
                     sim.makespan, sim.microBatchesPerSecond,
                     sim.samplesPerSecond, sim.meanBubble);
  printFillSummary(os, s, sim);
}

void loom::pipe::writeSimulationJSON(llvm::raw_ostream &os, const Schedule &s,
                                     const Simulation &sim,
                                     const StepProfile *fed) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("schedule", s.name);
    j.attribute("devices", static_cast<int64_t>(s.devices.size()));
    j.attribute("stages", static_cast<int64_t>(s.stages.size()));
    j.attribute("micro_batches", s.microBatches);
    j.attribute("micro_batch_size", s.microBatchSize);
    j.attribute("actions", s.numActions());
    j.attribute("deadlocked", sim.deadlocked());
    j.attribute("makespan_s", sim.makespan);
    j.attribute("micro_batches_per_s", sim.microBatchesPerSecond);
    j.attribute("samples_per_s", sim.samplesPerSecond);
    j.attribute("mean_bubble", sim.meanBubble);
    if (s.filler)
      j.attributeObject("filler", [&] {
        j.attribute("name", s.filler->name);
        j.attribute("function", s.filler->function);
        j.attribute("micro_batches", s.filler->microBatches);
        j.attribute("forward_s", s.filler->forwardTime);
        j.attribute("backward_s", s.filler->backwardTime);
        j.attribute("static_bytes", s.filler->staticBytes);
        j.attribute("activation_bytes", s.filler->activationBytes);
        j.attribute("actions", s.numFillActions());
        j.attribute("trial_steps_per_main_step", sim.fillSteps);
        j.attribute("mean_bubble_filled", sim.meanFilledBubble);
      });
    j.attributeArray("per_device", [&] {
      for (size_t d = 0; d < s.devices.size(); ++d) {
        const DeviceStats &st = sim.devices[d];
        j.object([&] {
          j.attribute("device", s.devices[d].name);
          j.attribute("busy_s", st.busy);
          j.attribute("finish_s", st.finish);
          j.attribute("bubble", st.bubble);
          if (s.filler)
            j.attribute("filler_busy_s", st.fillBusy);
          j.attribute("static_bytes", st.staticBytes);
          j.attribute("peak_bytes", st.peakBytes);
          j.attribute("peak_in_flight", st.peakInFlight);
          j.attribute("memory_bytes", s.devices[d].memory);
        });
      }
    });
    if (!fed)
      return;
    j.attributeObject("fed", [&] {
      const MessageCost &m = fed->messages;
      j.attribute("profiles", fed->files);
      j.attribute("steps", fed->steps);
      j.attribute("measured_step_s", medianOf(fed->stepSeconds));
      j.attribute("measured_period_s", medianOf(fed->periodSeconds));
      j.attribute("send_s", m.sendSeconds);
      j.attribute("receive_s", m.recvSeconds);
      j.attribute("latency_s", m.latency);
      j.attribute("bandwidth_bytes_per_s", m.bandwidth);
      j.attribute("all_reduce_latency_s", fed->allReduce.latency);
      j.attribute("all_reduce_bandwidth_bytes_per_s", fed->allReduce.bandwidth);
      j.attributeArray("update_s", [&] {
        for (double u : fed->updateSeconds)
          j.value(u);
      });
      j.attributeArray("stages", [&] {
        for (const Stage &st : s.stages)
          j.object([&] {
            j.attribute("stage", st.name);
            j.attribute("forward_s", st.forwardTime);
            j.attribute("backward_s", st.backwardTime);
            j.attribute("input_s", st.inputTime);
            j.attribute("weight_s", st.weightTime);
          });
      });
    });
  });
  os << "\n";
}
