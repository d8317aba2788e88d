//===- DecodePlan.h - Choosing how ranks share a decode step ----*- C++ -*-===//
//
// Part of Loom. The planner of issue 52 (docs/CacheParallel.md "The
// planner"): for a decoder program, a machine of devices, a context length
// and a batch, the estimated time of one decode token under every split of
// the devices into cache parallelism (CP: the caches sharded by position,
// weights replicated) times tensor parallelism (TP: Megatron's split of the
// heads and the MLP, two all-reduces a layer) times pipeline stages (PP:
// the layers in stages, the batch in groups in flight), each candidate's parts
// (weights read, cache read, compute, messages) and memory, and the
// fastest that fits. An analytic model on a machine's figures: the
// devices' published ones (cost::lookupTarget) and the links of the
// pipeline partitioner (Partition.h), or a machine file of measured ones
// (readDecodeMachine; loom-bench-decode --ranks writes one from its runs).
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
  /// Bytes of every weight (held); of the weights a step reads in full
  /// (all but the tables it gathers rows of: embeddings, rotary tables);
  /// and of one position of every layer's cache (keys and values) for one
  /// sequence.
  int64_t weightBytes = 0, weightBytesRead = 0, cacheBytesPerPosition = 0;
  /// Bytes of an element of the caches and activations (4: f32).
  int64_t elementBytes = 4;
  /// The width of the logits (the result named `logits`, else the first):
  /// a tensor-parallel program splits the head's columns when `tp`
  /// divides it (and gathers the logits), else every rank reads the whole
  /// head (`Hq D V` elements).
  int64_t vocab = 0;
};

/// Reads \p decode (the attentions over the tied caches, the weights).
llvm::Expected<DecoderCost> decoderCost(mlir::func::FuncOp decode);

/// Devices and their links.
struct DecodeMachine {
  std::string name;
  int devices = 8, devicesPerHost = 8;
  /// Bytes a second a device reads its weights at; its caches at
  /// `cacheBandwidth` (0: the same), which a measured machine tells apart
  /// (an attention reads its cache at a rate of its own). Flops a second
  /// (0: not modelled apart, as in measured rates of whole steps, which
  /// hold the arithmetic); bytes of memory a device.
  double memBandwidth = 3.35e12, cacheBandwidth = 0, peakFlops = 67e12,
         memoryBytes = 80e9;
  Link intraHost{450e9, 2e-6}, interHost{50e9, 10e-6};
};

/// "h100x8" (one host of 8 H100 SXM over NVLink), "h100x32" (4 hosts of 8
/// over 400 Gb/s), "h200x8", or a machine file (a name ending in .json,
/// readDecodeMachine); an error names the known ones.
llvm::Expected<DecodeMachine> decodeMachine(llvm::StringRef name);

/// A machine file (docs/tools/loom-plan-decode.md "Machine files"): a JSON
/// object of `devices`, `memory_bandwidth`, `memory_bytes` and `intra_host`
/// (`{"bandwidth", "latency"}`), and optionally `name`, `devices_per_host`,
/// `cache_bandwidth`, `peak_flops` and `inter_host`. An error names the file
/// and the key, or the line and column of bad JSON; unknown keys are
/// refused.
llvm::Expected<DecodeMachine> readDecodeMachine(llvm::StringRef path);

/// One candidate's estimate for a batch at a context length: its cache
/// parallelism, tensor parallelism and pipeline stages.
struct DecodeEstimate {
  int cp = 1, tp = 1, pp = 1;
  /// The batch's groups in flight through the stages (min(pp, batch)): run
  /// by loom-generate --groups over the program at batch / groups.
  int64_t groups = 1;
  double weightsSeconds = 0, cacheSeconds = 0, computeSeconds = 0,
         messageSeconds = 0, seconds = 0;
  /// Per device: bytes held (weights and cache), and sent per token.
  double memoryBytes = 0, bytesSentPerToken = 0;
  bool fits = true;
};

/// Every split cp x tp x pp <= devices in powers of two, tp dividing the
/// key/value heads (and so the query heads), pp at most the layers, each
/// estimated; by cp, then tp, then pp.
std::vector<DecodeEstimate> estimateDecode(const DecoderCost &model,
                                           const DecodeMachine &machine,
                                           int64_t context, int64_t batch);

/// The fastest estimate that fits, or null when none does.
const DecodeEstimate *bestDecode(const std::vector<DecodeEstimate> &all);

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_DECODEPLAN_H
