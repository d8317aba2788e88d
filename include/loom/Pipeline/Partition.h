//===- Partition.h - Stage partitioning of a training graph -----*- C++ -*-===//
//
// Part of Loom. Splits the forward graph of a training step into pipeline
// stages placed on devices (docs/Pipelines.md):
//
// - modelGraph: the op DAG of a forward function with, per op, its forward
//   and backward seconds on a target (the backward is the cost of the op's
//   own VJP, built with GradientOpInterface), its parameter bytes and the
//   activation bytes it keeps for the backward pass;
// - partitionSequential: PipeDream's dynamic programme over a topological
//   order (contiguous stages, each possibly replicated data-parallel), the
//   baseline every sequential schedule (GPipe, 1F1B, interleaved, ZB-H1)
//   runs on;
// - partitionGraph: GraphPipe's idea, a DAG of stages: ops are grouped by
//   the model inputs they depend on (a multi-modal model's text and image
//   encoders, DLRM's towers), independent branches go to different devices
//   and run at once, small branches share a device, long ones are split;
//   the bottleneck stage time is minimised by a binary search.
//
// Both respect a memory limit per device (parameters, gradients and
// optimizer state, plus the activations of the micro-batches in flight),
// recomputing a stage's activations from its inputs when that is what fits.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_PARTITION_H
#define LOOM_PIPELINE_PARTITION_H

#include "loom/Cost/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::pipeline {

/// One op of the forward graph (tg.weight and tg.constant are folded into
/// their consumers).
struct Node {
  mlir::Operation *op = nullptr;
  double forward = 0;        // seconds per micro-batch
  double backward = 0;       // seconds per micro-batch (its VJP)
  int64_t weightBytes = 0;   // parameters it reads first
  int64_t activationBytes = 0; // results kept for the backward pass
  std::vector<int> preds, succs;
  std::vector<int64_t> succBytes; // bytes sent along each succ edge
};

/// The op DAG of a forward function, nodes in block (topological) order.
struct GraphModel {
  std::vector<Node> nodes;
  /// For every node, the indices of the function arguments it depends on.
  std::vector<std::vector<int>> inputs;
  int numInputs = 0;
  double totalForward = 0, totalBackward = 0;
  int64_t totalWeightBytes = 0;
};

/// Bytes of a statically shaped tensor type (0 for anything else).
int64_t bytesOf(mlir::Type type);

/// Bytes per parameter byte for parameters, gradients and the state of
/// `optimizer` (adam: 4, sgd-momentum: 3, sgd: 2); nullopt when unknown.
std::optional<double> stateFactorOf(llvm::StringRef optimizer);

/// Builds the model of `fn`'s body with `costs` (seconds per op; the
/// function's batch is one micro-batch). Ops whose VJP cannot be built are
/// charged twice their forward time for the backward.
mlir::FailureOr<GraphModel> modelGraph(mlir::func::FuncOp fn,
                                       cost::CostModel &costs);

struct Link {
  double bandwidth = 0; // bytes per second
  double latency = 0;   // seconds
  double seconds(int64_t bytes) const {
    return bytes ? latency + double(bytes) / bandwidth : 0.0;
  }
};

struct PartitionOptions {
  int devices = 4;
  int microBatches = 8;
  /// Bytes of memory per device (0: unlimited).
  int64_t memoryPerDevice = 0;
  /// Bytes per parameter byte for parameters + gradients + optimizer state
  /// (Adam: 4, SGD with momentum: 3, SGD: 2).
  double stateFactor = 4;
  int devicesPerNode = 8;
  Link intraNode{450e9, 2e-6};  // NVLink (H100 SXM: 450 GB/s per direction)
  Link interNode{50e9, 10e-6};  // 400 Gb/s
  /// Allow recomputing a stage's activations in its backward pass.
  bool allowRecompute = true;
  /// Sequential only: exactly `devices` stages of one replica each (the
  /// interleaved schedule places several of them on each device).
  bool oneStagePerDevice = false;
};

struct Stage {
  std::vector<int> nodes;      // indices into GraphModel::nodes
  double forward = 0, backward = 0;
  int64_t weightBytes = 0, activationBytes = 0, inputBytes = 0;
  bool recompute = false;      // keep only the stage inputs, redo forward
  std::vector<int> devices;    // one, or several replicas (data parallel)
  /// Seconds of forward + backward per micro-batch on one replica, with
  /// recomputation, divided among the replicas, plus their gradient
  /// all-reduce per micro-batch.
  double timePerMicroBatch = 0;
  int64_t peakBytes = 0;       // per device, at the planned in-flight count
};

struct StageEdge {
  int from = 0, to = 0;
  int64_t bytes = 0;
};

struct Plan {
  std::string method;          // "sequential" or "graph"
  std::vector<Stage> stages;   // in a topological order of the stage DAG
  std::vector<StageEdge> edges;
  double bottleneck = 0;       // max timePerMicroBatch
  double searchSeconds = 0;
};

/// The longest path of per-micro-batch stage times through the stage DAG.
double criticalPath(const Plan &plan);
/// (m - 1) x bottleneck + critical path: a step's time under a schedule
/// that keeps the bottleneck stage busy (refined by the simulator).
double stepEstimate(const Plan &plan, int microBatches);

/// PipeDream's DP: contiguous stages over the block order, with
/// replication. Returns up to 8 candidate plans, best step estimate first
/// (the caller may simulate them under a schedule and keep the fastest).
mlir::FailureOr<std::vector<Plan>> partitionSequential(const GraphModel &graph,
                                          const PartitionOptions &options,
                                          mlir::Location loc);

/// GraphPipe-style: a DAG of stages from the model's parallel branches.
/// Candidates as partitionSequential's.
mlir::FailureOr<std::vector<Plan>> partitionGraph(const GraphModel &graph,
                                     const PartitionOptions &options,
                                     mlir::Location loc);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_PARTITION_H
