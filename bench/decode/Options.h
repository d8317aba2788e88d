//===- Options.h - The command line of loom-bench-decode --------*- C++ -*-===//
//
// Part of Loom. What loom-bench-decode measures and with what
// (docs/benchmarks/decode.md "Options"), parsed and checked once.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_OPTIONS_H
#define LOOM_BENCH_DECODE_OPTIONS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// The model of a run: a zoo decoder (`zoo:gpt2-small`, `zoo:tinyllama`) or
/// an ONNX export in the past/present form.
struct ModelSpec {
  std::string text;
  /// The zoo's name, or empty for a file.
  std::string zooName;
  /// scripts/export-decoder.py's --arch: gpt2 or llama (zoo models).
  std::string arch;
  std::string onnxFile;
  bool isZoo() const { return !zooName.empty(); }
};

struct DecodeOptions {
  ModelSpec model;
  /// Live lengths (keys a decode step attends over), ascending.
  std::vector<int64_t> contexts;
  /// The cache's capacity C (default: the largest context) and the prompt
  /// bound P of prefill (at most C).
  int64_t capacity = 0, promptBound = 1024;
  /// loom-zoo passthrough (0: the model's default).
  int64_t layers = 0, hidden = 0, vocab = 0;
  unsigned seed = 0, threads = 2, rounds = 2;
  unsigned warmup = 3, steps = 20, prefillRepeat = 3;
  /// Capacities compared at live length capacityLive (empty: none).
  std::vector<int64_t> capacityCheck;
  int64_t capacityLive = 1024;
  /// Alternations of the capacity comparison.
  unsigned capacityRounds = 9;
  /// Prompt length of the logits agreement check (0: none).
  int64_t agreeTokens = 32;
  bool runOrt = true, runTorch = true;
  /// Keep the weights, artifacts and exports already in --workdir; stop
  /// once they are made.
  bool reuse = false, prepareOnly = false;
  /// Copy benchmark: MiB copied, best of copyRepeat. bandwidthOnly: run
  /// it alone and print its JSON (what each round starts as a child).
  int64_t copyMiB = 512;
  unsigned copyRepeat = 5;
  bool bandwidthOnly = false;
  /// This executable, which each round runs with --bandwidth-only.
  std::string self;
  /// --ranks: rank counts of the parallel sweep (empty: the peer
  /// comparison instead); --parallel: how the ranks split the work, each
  /// of "cp" (the caches by position), "tp" (heads and columns), "cptp"
  /// (2 cache shards x ranks / 2 tensor-parallel ranks) and "pp" (pipeline
  /// stages of contiguous layers): splitOf.
  std::vector<int64_t> ranks;
  std::vector<std::string> parallels = {"cp"};
  /// Wait up to waitSeconds for the 1-minute load to fall to maxLoad.
  double maxLoad = 1.5;
  unsigned waitSeconds = 0;
  std::string json, workDir, node, ortPackage, ortScript, torchScript,
      exportScript, python, binDir;
};

/// Parses argv (llvm::cl) into options; an error names the bad argument.
llvm::Expected<DecodeOptions> parseOptions(int argc, char **argv);

/// How a row's ranks split a decoder: cache shards x tensor-parallel ranks
/// x pipeline stages (the planner's cp x tp x pp).
struct Split {
  int64_t cp = 0, tp = 0, pp = 0;
  /// Whether the kind splits the rank count at all.
  explicit operator bool() const { return cp > 0; }
};

/// The split of \p ranks ranks as --parallel kind \p kind ("none": one
/// process), or an empty one where the kind does not split that many
/// ("cptp": 2 x ranks / 2, for an even count of at least 4).
Split splitOf(llvm::StringRef kind, int64_t ranks);

/// "128,1k,32K" -> {128, 1024, 32768}: positive, strictly ascending.
llvm::Expected<std::vector<int64_t>> parseLengths(llvm::StringRef text,
                                                  llvm::StringRef option);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_OPTIONS_H
