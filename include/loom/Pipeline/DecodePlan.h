//===- DecodePlan.h - Choosing how ranks share a decode step ----*- C++ -*-===//
//
// Part of Loom. The planner of issue 52 (docs/CacheParallel.md "The
// planner"): for a decoder program, a machine of devices, a context length
// and a batch, the estimated time of one decode token under every split of
// the devices into cache parallelism (CP: the caches sharded by position,
// weights replicated) times tensor parallelism (TP: Megatron's split of the
// heads and the MLP, two all-reduces a layer), each candidate's parts
// (weights read, cache read, compute, messages) and memory, and the
// fastest that fits. An analytic model on the devices' published figures
// (cost::lookupTarget) and the links of the pipeline partitioner
// (Partition.h); it is not fed by measured runs yet.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_DECODEPLAN_H
#define LOOM_PIPELINE_DECODEPLAN_H

#include "loom/Pipeline/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace loom::pipeline {

/// What a decode step of a decoder program reads and moves, from its
/// `decode` function (docs/Decoding.md's contract).
struct DecoderCost {
  int64_t layers = 0, queryHeads = 0, kvHeads = 0, headDim = 0;
  /// Bytes of every weight, and of one position of every layer's cache
  /// (keys and values) for one sequence.
  int64_t weightBytes = 0, cacheBytesPerPosition = 0;
  /// Bytes of an element of the caches and activations (4: f32).
  int64_t elementBytes = 4;
};

/// Reads \p decode (the attentions over the tied caches, the weights).
llvm::Expected<DecoderCost> decoderCost(mlir::func::FuncOp decode);

/// Devices and their links.
struct DecodeMachine {
  std::string name;
  int devices = 8, devicesPerHost = 8;
  double memBandwidth = 3.35e12, peakFlops = 67e12, memoryBytes = 80e9;
  Link intraHost{450e9, 2e-6}, interHost{50e9, 10e-6};
};

/// "h100x8" (one host of 8 H100 SXM over NVLink), "h100x32" (4 hosts of 8
/// over 400 Gb/s), "h200x8"; an error names the known ones.
llvm::Expected<DecodeMachine> decodeMachine(llvm::StringRef name);

/// One candidate's estimate for a batch at a context length.
struct DecodeEstimate {
  int cp = 1, tp = 1;
  double weightsSeconds = 0, cacheSeconds = 0, computeSeconds = 0,
         messageSeconds = 0, seconds = 0;
  /// Per device: bytes held (weights and cache), and sent per token.
  double memoryBytes = 0, bytesSentPerToken = 0;
  bool fits = true;
};

/// Every split cp x tp <= devices in powers of two, tp dividing the
/// key/value heads (and so the query heads), each estimated; by cp then tp.
std::vector<DecodeEstimate> estimateDecode(const DecoderCost &model,
                                           const DecodeMachine &machine,
                                           int64_t context, int64_t batch);

/// The fastest estimate that fits, or null when none does.
const DecodeEstimate *bestDecode(const std::vector<DecodeEstimate> &all);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_DECODEPLAN_H
