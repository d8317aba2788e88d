//===- Verifier.cpp - Checking a pipeline schedule ------------------------===//
//
// Part of Loom. One walk per device (order, completeness, memory), one pass
// over the sends and receives (matching), then a run of the simulator
// (deadlock). Each problem names the device, the action and the micro-batch.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Verifier.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "Message.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace loom::pipe;

namespace {
class Checker {
public:
  Checker(const Schedule &s, size_t maxProblems)
      : s(s), maxProblems(maxProblems), in(s.inEdges()), out(s.outEdges()) {}

  std::vector<ScheduleProblem> run() {
    for (size_t d = 0; d < s.devices.size(); ++d)
      walkDevice(d);
    matchMessages();
    if (problems.empty())
      findDeadlock();
    std::stable_sort(problems.begin(), problems.end(),
                     [](const ScheduleProblem &a, const ScheduleProblem &b) {
                       return std::tie(a.device, a.action) <
                              std::tie(b.device, b.action);
                     });
    if (problems.size() > maxProblems)
      problems.resize(maxProblems);
    return std::move(problems);
  }

private:
  std::string dev(int d) const { return "@" + s.devices[d].name; }
  std::string stage(int st) const { return "@" + s.stages[st].name; }

  void add(int d, int action, const std::string &message) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "device " << dev(d);
    if (action >= 0)
      os << ", action " << action << " (" << s.describe(s.programs[d][action])
         << ")";
    os << ": " << message;
    problems.push_back({d, action, text});
  }

  /// Order, completeness and memory on device `d`.
  void walkDevice(int d) {
    using Done = std::tuple<int, int, int>; // kind, stage, micro-batch
    using Recv = std::tuple<int, int, int, int, int>;
    llvm::DenseSet<Done> done;
    llvm::DenseSet<Recv> received;
    auto isDone = [&](ActionKind k, int st, int m) {
      return done.contains({static_cast<int>(k), st, m});
    };
    auto gradientDone = [&](int st, int m) {
      return isDone(ActionKind::B, st, m) || isDone(ActionKind::I, st, m);
    };
    int64_t staticBytes = 0;
    for (const Stage &st : s.stages)
      if (llvm::is_contained(st.devices, d))
        staticBytes += st.staticBytes();
    int64_t capacity = s.devices[d].memory;
    int64_t activations = 0;
    int inFlight = 0;
    bool memoryReported = false, orderReported = false;
    if (capacity && staticBytes > capacity) {
      add(d, -1,
          "weights and optimizer state alone (" + std::to_string(staticBytes) +
              " bytes) exceed the capacity of " + std::to_string(capacity) +
              " bytes");
      memoryReported = true;
    }
    auto order = [&](int i, const std::string &message) {
      if (!orderReported)
        add(d, i, message);
      orderReported = true;
    };

    const std::vector<Action> &program = s.programs[d];
    for (size_t i = 0; i < program.size(); ++i) {
      const Action &a = program[i];
      int m = a.microBatch;
      std::string mb = " for micro-batch " + std::to_string(m);
      switch (a.kind) {
      case ActionKind::F: {
        if (isDone(ActionKind::F, a.stage, m))
          order(i, "repeats the forward of stage " + stage(a.stage) + mb);
        for (int e : in[a.stage]) {
          int from = s.edges[e].from;
          for (int r : s.stages[from].devices) {
            if (r == d ? !isDone(ActionKind::F, from, m)
                       : !received.contains({0, a.stage, m, from, r}))
              order(i, "runs before its input" + mb + " from stage " +
                           stage(from) + " on " + dev(r) +
                           (r == d ? " is computed" : " is received"));
          }
        }
        activations += s.stages[a.stage].activationBytes;
        ++inFlight;
        break;
      }
      case ActionKind::B:
      case ActionKind::I: {
        const char *what = a.kind == ActionKind::B ? "backward" : "input gradient";
        if (!isDone(ActionKind::F, a.stage, m))
          order(i, std::string(what) + " runs before its forward F " +
                       stage(a.stage) + " " + std::to_string(m));
        if (gradientDone(a.stage, m))
          order(i, "repeats the backward of stage " + stage(a.stage) + mb);
        for (int e : out[a.stage]) {
          int to = s.edges[e].to;
          for (int r : s.stages[to].devices) {
            if (r == d ? !gradientDone(to, m)
                       : !received.contains({1, a.stage, m, to, r}))
              order(i, std::string(what) + " runs before its output "
                           "gradient" + mb + " from stage " + stage(to) +
                           " on " + dev(r) +
                           (r == d ? " is computed" : " is received"));
          }
        }
        if (a.kind == ActionKind::B) {
          activations -= s.stages[a.stage].activationBytes;
          --inFlight;
        }
        break;
      }
      case ActionKind::W:
        if (!isDone(ActionKind::I, a.stage, m))
          order(i, "weight gradient runs before its input gradient I " +
                       stage(a.stage) + " " + std::to_string(m));
        if (isDone(ActionKind::W, a.stage, m))
          order(i, "repeats the weight gradient of stage " + stage(a.stage) +
                       mb);
        activations -= s.stages[a.stage].activationBytes;
        --inFlight;
        break;
      case ActionKind::SendF:
        if (!isDone(ActionKind::F, a.stage, m))
          order(i, "sends an activation before its forward F " +
                       stage(a.stage) + " " + std::to_string(m) + " ran");
        break;
      case ActionKind::SendB:
        if (!gradientDone(a.stage, m))
          order(i, "sends a gradient before the backward of " +
                       stage(a.stage) + " for micro-batch " +
                       std::to_string(m) + " ran");
        break;
      case ActionKind::RecvF:
        received.insert({0, a.stage, m, a.peerStage, a.peerDevice});
        break;
      case ActionKind::RecvB:
        received.insert({1, a.stage, m, a.peerStage, a.peerDevice});
        break;
      }
      if (isCompute(a.kind))
        done.insert({static_cast<int>(a.kind), a.stage, m});
      if (capacity && !memoryReported && staticBytes + activations > capacity) {
        add(d, i,
            "peak memory " + std::to_string(staticBytes + activations) +
                " bytes (weights and optimizer state " +
                std::to_string(staticBytes) + ", activations of " +
                std::to_string(inFlight) + " micro-batches in flight " +
                std::to_string(activations) + ") exceeds the capacity of " +
                std::to_string(capacity) + " bytes" + mb);
        memoryReported = true;
      }
    }
    if (orderReported)
      return;

    // Completeness: F once, and B once or I and W once, per micro-batch.
    for (size_t st = 0; st < s.stages.size(); ++st) {
      if (!llvm::is_contained(s.stages[st].devices, d))
        continue;
      for (int64_t m = 0; m < s.microBatches; ++m) {
        std::string what = " of stage " + stage(st) + " for micro-batch " +
                           std::to_string(m);
        bool f = isDone(ActionKind::F, st, m), b = isDone(ActionKind::B, st, m),
             ii = isDone(ActionKind::I, st, m),
             w = isDone(ActionKind::W, st, m);
        if (!f)
          add(d, -1, "drops micro-batch " + std::to_string(m) +
                         ": no forward F " + stage(st) + " " +
                         std::to_string(m));
        else if (b && (ii || w))
          add(d, -1, "runs both B and I/W" + what);
        else if (!b && !ii)
          add(d, -1, "drops micro-batch " + std::to_string(m) +
                         ": no backward (B or I) " + stage(st) + " " +
                         std::to_string(m));
        else if (ii && !w)
          add(d, -1, "drops micro-batch " + std::to_string(m) +
                         ": I without W " + stage(st) + " " +
                         std::to_string(m));
        else
          continue;
        if (problems.size() >= maxProblems)
          return;
      }
    }
  }

  /// Every send has one receive and every receive one send.
  void matchMessages() {
    struct Ends {
      int sends = 0, recvs = 0;
      int sendDevice = -1, sendAction = -1, recvDevice = -1, recvAction = -1;
    };
    llvm::DenseMap<MessageKey, Ends> messages;
    for (size_t d = 0; d < s.devices.size(); ++d) {
      const std::vector<Action> &program = s.programs[d];
      for (size_t i = 0; i < program.size(); ++i) {
        const Action &a = program[i];
        if (isCompute(a.kind))
          continue;
        Ends &ends = messages[MessageKey::of(a, d)];
        if (isSend(a.kind)) {
          if (++ends.sends > 1)
            add(d, i, "repeats a send of micro-batch " +
                          std::to_string(a.microBatch));
          ends.sendDevice = d, ends.sendAction = i;
        } else {
          if (++ends.recvs > 1)
            add(d, i, "repeats a receive of micro-batch " +
                          std::to_string(a.microBatch));
          ends.recvDevice = d, ends.recvAction = i;
        }
      }
    }
    for (auto &[key, ends] : messages) {
      if (ends.sends && !ends.recvs)
        add(ends.sendDevice, ends.sendAction,
            "send without a matching receive on " + dev(key.receiver) +
                " (micro-batch " + std::to_string(key.microBatch) + ")");
      else if (ends.recvs && !ends.sends)
        add(ends.recvDevice, ends.recvAction,
            "receive without a matching send on " + dev(key.sender) +
                " (micro-batch " + std::to_string(key.microBatch) + ")");
    }
  }

  /// Runs the schedule with blocking receives; names the devices left
  /// blocked and the cycle they wait in.
  void findDeadlock() {
    Simulation sim = simulate(s);
    if (!sim.deadlocked())
      return;
    std::vector<int> waitsFor(s.devices.size(), -1);
    for (const auto &b : sim.blocked)
      waitsFor[b.device] = s.programs[b.device][b.action].peerDevice;
    for (const auto &b : sim.blocked) {
      // Follow the waits-for chain from b.device to its cycle.
      std::vector<int> chain{b.device};
      std::vector<int> seenAt(s.devices.size(), -1);
      seenAt[b.device] = 0;
      int cur = b.device;
      std::string cycle;
      while (true) {
        int next = waitsFor[cur];
        if (next < 0) {
          cycle = ", which never sends it";
          break;
        }
        if (seenAt[next] >= 0) {
          cycle = "; deadlock cycle ";
          for (size_t k = seenAt[next]; k < chain.size(); ++k)
            cycle += dev(chain[k]) + " -> ";
          cycle += dev(next);
          break;
        }
        seenAt[next] = chain.size();
        chain.push_back(next);
        cur = next;
      }
      const Action &a = s.programs[b.device][b.action];
      add(b.device, b.action,
          "blocks forever waiting for micro-batch " +
              std::to_string(a.microBatch) + " from " + dev(a.peerDevice) +
              cycle);
    }
  }

  const Schedule &s;
  size_t maxProblems;
  std::vector<std::vector<int>> in, out;
  std::vector<ScheduleProblem> problems;
};
} // namespace

std::vector<ScheduleProblem> loom::pipe::checkSchedule(const Schedule &s,
                                                       size_t maxProblems) {
  return Checker(s, maxProblems).run();
}

LogicalResult loom::pipe::verifySchedule(ScheduleOp op, const Schedule &s) {
  std::vector<ScheduleProblem> problems = checkSchedule(s);
  if (problems.empty())
    return success();
  llvm::StringMap<Operation *> where;
  for (auto device : op.getBody().getOps<DeviceOp>())
    where[device.getSymName()] = device;
  for (auto program : op.getBody().getOps<ProgramOp>())
    where[program.getDevice()] = program;
  for (const ScheduleProblem &p : problems) {
    Operation *at = op;
    if (p.device >= 0)
      if (Operation *found = where.lookup(s.devices[p.device].name))
        at = found;
    at->emitError(p.message);
  }
  return failure();
}
