//===- Verifier.cpp - Checking a pipeline schedule ------------------------===//
//
// Part of Loom. One walk per device (order, completeness, memory), one pass
// over the sends and receives (matching), then a run of the simulator
// (deadlock). Each problem names the device, the action and the micro-batch.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Verifier.h"
#include "loom/Dialect/Pipe/Schedule/Fill.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Support/StableSort.h"
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
    checkFill(s, problems);
    loom::stableSort(problems,
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

  /// What the walk of one device has seen so far.
  struct DeviceWalk {
    using Done = std::tuple<int, int, int>; // kind, stage, micro-batch
    using Recv = std::tuple<int, int, int, int, int>; // direction, stage,
                                                      // micro-batch, peer
                                                      // stage, peer device
    int d;
    llvm::DenseSet<Done> done;
    llvm::DenseSet<Recv> received;
    int64_t staticBytes = 0, capacity = 0, activations = 0;
    int inFlight = 0;
    bool memoryReported = false, orderReported = false;

    explicit DeviceWalk(int d) : d(d) {}
    bool isDone(ActionKind k, int st, int m) const {
      return done.contains({static_cast<int>(k), st, m});
    }
    bool gradientDone(int st, int m) const {
      return isDone(ActionKind::B, st, m) || isDone(ActionKind::I, st, m);
    }
  };

  /// Order, completeness and memory on device `d`.
  void walkDevice(int d) {
    DeviceWalk w(d);
    for (const Stage &st : s.stages)
      if (llvm::is_contained(st.devices, d))
        w.staticBytes += st.staticBytes();
    w.capacity = s.devices[d].memory;
    if (w.capacity && w.staticBytes > w.capacity) {
      add(d, -1,
          "weights and optimizer state alone (" +
              std::to_string(w.staticBytes) +
              " bytes) exceed the capacity of " + std::to_string(w.capacity) +
              " bytes");
      w.memoryReported = true;
    }
    const std::vector<Action> &program = s.programs[d];
    for (size_t i = 0; i < program.size(); ++i) {
      checkAction(w, i);
      if (isCompute(program[i].kind))
        w.done.insert({static_cast<int>(program[i].kind), program[i].stage,
                       program[i].microBatch});
      checkMemory(w, i);
    }
    if (!w.orderReported)
      checkCompleteness(w);
  }

  /// Reports the first order problem of a device only: later ones follow
  /// from it.
  void order(DeviceWalk &w, int i, const std::string &message) {
    if (!w.orderReported)
      add(w.d, i, message);
    w.orderReported = true;
  }

  static std::string forMicroBatch(int64_t m) {
    return " for micro-batch " + std::to_string(m);
  }

  /// Action `i` of the device runs after what it needs; updates the
  /// activations in flight and the messages received.
  void checkAction(DeviceWalk &w, int i) {
    const Action &a = s.programs[w.d][i];
    int m = a.microBatch;
    switch (a.kind) {
    case ActionKind::F:
      checkForward(w, i);
      return;
    case ActionKind::B:
    case ActionKind::I:
      checkBackward(w, i);
      return;
    case ActionKind::W:
      if (!w.isDone(ActionKind::I, a.stage, m))
        order(w, i,
              "weight gradient runs before its input gradient I " +
                  stage(a.stage) + " " + std::to_string(m));
      if (w.isDone(ActionKind::W, a.stage, m))
        order(w, i,
              "repeats the weight gradient of stage " + stage(a.stage) +
                  forMicroBatch(m));
      w.activations -= s.stages[a.stage].activationBytes;
      --w.inFlight;
      return;
    case ActionKind::SendF:
      if (!w.isDone(ActionKind::F, a.stage, m))
        order(w, i,
              "sends an activation before its forward F " + stage(a.stage) +
                  " " + std::to_string(m) + " ran");
      return;
    case ActionKind::SendB:
      if (!w.gradientDone(a.stage, m))
        order(w, i,
              "sends a gradient before the backward of " + stage(a.stage) +
                  forMicroBatch(m) + " ran");
      return;
    case ActionKind::RecvF:
      w.received.insert({0, a.stage, m, a.peerStage, a.peerDevice});
      return;
    case ActionKind::RecvB:
      w.received.insert({1, a.stage, m, a.peerStage, a.peerDevice});
      return;
    }
  }

  /// F: once, after its inputs are computed here or received.
  void checkForward(DeviceWalk &w, int i) {
    const Action &a = s.programs[w.d][i];
    int m = a.microBatch;
    if (w.isDone(ActionKind::F, a.stage, m))
      order(w, i,
            "repeats the forward of stage " + stage(a.stage) +
                forMicroBatch(m));
    for (int e : in[a.stage]) {
      int from = s.edges[e].from;
      for (int r : s.stages[from].devices) {
        if (r == w.d ? !w.isDone(ActionKind::F, from, m)
                     : !w.received.contains({0, a.stage, m, from, r}))
          order(w, i,
                "runs before its input" + forMicroBatch(m) + " from stage " +
                    stage(from) + " on " + dev(r) +
                    (r == w.d ? " is computed" : " is received"));
      }
    }
    w.activations += s.stages[a.stage].activationBytes;
    ++w.inFlight;
  }

  /// B or I: once, after its forward and its output gradients.
  void checkBackward(DeviceWalk &w, int i) {
    const Action &a = s.programs[w.d][i];
    int m = a.microBatch;
    const char *what = a.kind == ActionKind::B ? "backward" : "input gradient";
    if (!w.isDone(ActionKind::F, a.stage, m))
      order(w, i,
            std::string(what) + " runs before its forward F " + stage(a.stage) +
                " " + std::to_string(m));
    if (w.gradientDone(a.stage, m))
      order(w, i,
            "repeats the backward of stage " + stage(a.stage) +
                forMicroBatch(m));
    for (int e : out[a.stage]) {
      int to = s.edges[e].to;
      for (int r : s.stages[to].devices) {
        if (r == w.d ? !w.gradientDone(to, m)
                     : !w.received.contains({1, a.stage, m, to, r}))
          order(w, i,
                std::string(what) + " runs before its output gradient" +
                    forMicroBatch(m) + " from stage " + stage(to) + " on " +
                    dev(r) + (r == w.d ? " is computed" : " is received"));
      }
    }
    if (a.kind == ActionKind::B) {
      w.activations -= s.stages[a.stage].activationBytes;
      --w.inFlight;
    }
  }

  /// The first action after which the device holds more than its capacity.
  void checkMemory(DeviceWalk &w, int i) {
    if (!w.capacity || w.memoryReported ||
        w.staticBytes + w.activations <= w.capacity)
      return;
    add(w.d, i,
        "peak memory " + std::to_string(w.staticBytes + w.activations) +
            " bytes (weights and optimizer state " +
            std::to_string(w.staticBytes) + ", activations of " +
            std::to_string(w.inFlight) + " micro-batches in flight " +
            std::to_string(w.activations) + ") exceeds the capacity of " +
            std::to_string(w.capacity) + " bytes" +
            forMicroBatch(s.programs[w.d][i].microBatch));
    w.memoryReported = true;
  }

  /// Completeness: F once, and B once or I and W once, per micro-batch.
  void checkCompleteness(const DeviceWalk &w) {
    for (size_t st = 0; st < s.stages.size(); ++st) {
      if (!llvm::is_contained(s.stages[st].devices, w.d))
        continue;
      for (int64_t m = 0; m < s.microBatches; ++m) {
        std::string what = " of stage " + stage(st) + forMicroBatch(m);
        std::string drops = "drops micro-batch " + std::to_string(m) + ": ";
        std::string id = stage(st) + " " + std::to_string(m);
        bool f = w.isDone(ActionKind::F, st, m),
             b = w.isDone(ActionKind::B, st, m),
             ii = w.isDone(ActionKind::I, st, m),
             wg = w.isDone(ActionKind::W, st, m);
        if (!f)
          add(w.d, -1, drops + "no forward F " + id);
        else if (b && (ii || wg))
          add(w.d, -1, "runs both B and I/W" + what);
        else if (!b && !ii)
          add(w.d, -1, drops + "no backward (B or I) " + id);
        else if (ii && !wg)
          add(w.d, -1, drops + "I without W " + id);
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
  llvm::StringMap<Operation *> where, fillWhere;
  for (auto device : op.getBody().getOps<DeviceOp>())
    where[device.getSymName()] = device;
  for (auto program : op.getBody().getOps<ProgramOp>())
    where[program.getDevice()] = program;
  for (auto fill : op.getBody().getOps<FillOp>())
    fillWhere[fill.getDevice()] = fill;
  for (const ScheduleProblem &p : problems) {
    Operation *at = op;
    if (p.device >= 0) {
      StringRef name = s.devices[p.device].name;
      if (Operation *found = p.filler ? fillWhere.lookup(name) : nullptr)
        at = found;
      else if (Operation *found = where.lookup(name))
        at = found;
    }
    at->emitError(p.message);
  }
  return failure();
}
