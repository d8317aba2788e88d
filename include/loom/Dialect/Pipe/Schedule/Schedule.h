//===- Schedule.h - A pipeline schedule as plain C++ data --------*- C++ -*-===//
//
// Part of Loom. The in-memory form of a `pipe.schedule` (docs/Dialects/Pipe.md):
// what the verifier, the simulator, the builders and the pictures work on,
// and what a partitioner fills in before writing it as IR. Stages, devices
// and edges are referred to by their positions in the vectors.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_SCHEDULE_H
#define LOOM_DIALECT_PIPE_SCHEDULE_SCHEDULE_H

#include "loom/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::pipe {

/// torch.distributed.pipelining's action vocabulary. The values are stored
/// in `pipe.program`'s `actions`: do not reorder.
enum class ActionKind : int32_t { F, B, I, W, SendF, RecvF, SendB, RecvB };
constexpr int kNumActionKinds = 8;

llvm::StringRef actionKindName(ActionKind kind); // "F", ..., "SEND_F", ...
std::optional<ActionKind> parseActionKind(llvm::StringRef name);
inline bool isCompute(ActionKind k) { return k <= ActionKind::W; }
inline bool isSend(ActionKind k) {
  return k == ActionKind::SendF || k == ActionKind::SendB;
}
inline bool isRecv(ActionKind k) {
  return k == ActionKind::RecvF || k == ActionKind::RecvB;
}

/// One action of a device's program. `stage` is always a stage placed on
/// the device; a send or receive also names the stage at the other end of
/// the edge and the device it runs on.
struct Action {
  ActionKind kind = ActionKind::F;
  int stage = 0;
  int microBatch = 0;
  int peerStage = -1;
  int peerDevice = -1;

  static Action compute(ActionKind kind, int stage, int microBatch) {
    return {kind, stage, microBatch, -1, -1};
  }
  static Action comm(ActionKind kind, int stage, int microBatch,
                     int peerStage, int peerDevice) {
    return {kind, stage, microBatch, peerStage, peerDevice};
  }
  bool operator==(const Action &o) const {
    return kind == o.kind && stage == o.stage && microBatch == o.microBatch &&
           peerStage == o.peerStage && peerDevice == o.peerDevice;
  }
};

struct Device {
  std::string name;
  int node = -1;       // -1: position / devicesPerNode
  int64_t memory = 0;  // bytes; 0: unlimited
};

struct Stage {
  std::string name;
  std::vector<int> devices; // one, or several data-parallel replicas
  std::string forward, backward, inputGrad, weightGrad; // function names
  double forwardTime = 0, backwardTime = 0, inputTime = 0, weightTime = 0;
  int64_t weightBytes = 0, optimizerBytes = 0, activationBytes = 0;

  /// Seconds of a compute action on one replica (the fall-backs of
  /// PipeOps.td: B = I + W when B is 0, I = W = B / 2 when both are 0).
  double seconds(ActionKind kind) const;
  /// Weights, their gradients and the optimizer state.
  int64_t staticBytes() const { return weightBytes + optimizerBytes; }
};

struct Edge {
  int from = 0, to = 0;
  int64_t bytes = 0;     // activation per micro-batch, sent forward
  int64_t gradBytes = 0; // its gradient, sent back
};

struct Links {
  double intraBandwidth = 450e9, intraLatency = 2e-6; // bytes/s, s
  double interBandwidth = 50e9, interLatency = 10e-6;
  int devicesPerNode = 8;
};

/// The F or B of a trial step's micro-batch of the filler job, run when
/// the device reaches position `at` of its program (before its action `at`;
/// after the last when `at` is the program's length).
struct FillAction {
  bool backward = false;
  int step = 0, microBatch = 0, at = 0;
  bool operator==(const FillAction &o) const {
    return backward == o.backward && step == o.step &&
           microBatch == o.microBatch && at == o.at;
  }
};

/// A second job whose trial steps fill the bubbles (pipe.filler): one trial
/// step is `microBatches` forwards and backwards on one device.
struct FillJob {
  std::string name = "filler";
  std::string function; // where the costs come from ("" : given directly)
  int64_t microBatches = 1;
  double forwardTime = 0, backwardTime = 0;
  int64_t staticBytes = 0, activationBytes = 0;

  double seconds(const FillAction &a) const {
    return a.backward ? backwardTime : forwardTime;
  }
};

struct Schedule {
  std::string name = "step";
  int64_t microBatches = 1;
  int64_t microBatchSize = 1;
  Links links;
  std::vector<Device> devices;
  std::vector<Stage> stages;
  std::vector<Edge> edges;
  /// programs[d]: device d's actions in order (one entry per device).
  std::vector<std::vector<Action>> programs;
  /// The bubble-filling job and, per device, its actions (fills is empty,
  /// or has one entry per device, positions not decreasing).
  std::optional<FillJob> filler;
  std::vector<std::vector<FillAction>> fills;

  int nodeOf(int device) const;
  /// Seconds to move `bytes` from device `from` to device `to` (0 on one
  /// device), not counting waiting for the link.
  double transferSeconds(int from, int to, int64_t bytes) const;
  /// Bytes one replica of the sending stage sends for `send` (a SEND_F or
  /// SEND_B action of a stage on some device): the edge's bytes divided
  /// among the replica pairs. -1 when there is no such edge.
  int64_t sendBytes(const Action &send) const;
  /// The edge from stage `from` to stage `to`, or -1.
  int findEdge(int from, int to) const;
  /// Predecessor / successor edges of every stage (indices into `edges`).
  std::vector<std::vector<int>> inEdges() const;
  std::vector<std::vector<int>> outEdges() const;
  /// "SEND_F @s0 3 to @s1 on @d1"
  std::string describe(const Action &action) const;
  /// "F 0 1 at 4" (filler step 0, micro-batch 1, before main action 4)
  std::string describe(const FillAction &action) const;
  int64_t numActions() const;
  int64_t numFillActions() const;
  /// Bytes of activations an action keeps (+) or frees (-) on its device:
  /// an F keeps its stage's, its B or W frees them.
  int64_t activationDelta(const Action &action) const;
};

/// Reads a `pipe.schedule` op (its op verifier has checked the structure).
/// Errors (a name that does not resolve) are emitted at the op.
mlir::FailureOr<Schedule> readSchedule(ScheduleOp op);

/// Writes `schedule` as a new `pipe.schedule` op at the builder's position.
/// Stage functions are referred to by name and must exist in the module for
/// the op to verify.
ScheduleOp writeSchedule(mlir::OpBuilder &builder, mlir::Location loc,
                         const Schedule &schedule);

/// Replaces the `pipe.program` ops of `op` with `schedule.programs`, and its
/// `pipe.filler` and `pipe.fill` ops with `schedule.filler` and
/// `schedule.fills` (the devices, stages and edges of `schedule` must be
/// those of `op`).
void writePrograms(ScheduleOp op, const Schedule &schedule);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_SCHEDULE_H
