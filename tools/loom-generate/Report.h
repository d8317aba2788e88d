//===- Report.h - What loom-generate prints and writes ----------*- C++ -*-===//
//
// Part of Loom. The generated ids on stdout (one line per sequence, ids
// separated by commas: a --prompt-ids value); the timings and the check on
// stderr; everything in one JSON object with --json.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_REPORT_H
#define LOOM_TOOLS_LOOM_GENERATE_REPORT_H

#include "Check.h"
#include "Contract.h"
#include "TokenLoop.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace loom::generate {

/// Milliseconds; percentiles by the nearest rank (the smallest latency
/// that at least p% of the decode steps do not exceed).
struct Timings {
  double ttftMs = 0;
  int64_t decodeSteps = 0;
  double p50Ms = 0, p90Ms = 0, p99Ms = 0, meanMs = 0;
  /// Generated tokens (real sequences only) per second: over the whole
  /// loop (prefill included), and over the decode steps alone (0: none).
  double tokensPerSecond = 0, decodeTokensPerSecond = 0;
};

/// With \p wallSeconds (groups run at once, --groups) the tokens a second
/// are over that wall time (and, in decode, over it less the prefill), not
/// over the sum of the steps.
Timings summarize(const LoopResult &result, int64_t real,
                  double wallSeconds = 0);

/// A run of loom-generate, as reported.
struct RunReport {
  std::string model;
  const DecoderContract *contract = nullptr;
  const Batch *batch = nullptr;
  const LoopOptions *loop = nullptr;
  int threads = 0;
  const LoopResult *result = nullptr;
  /// The batches run at once (--groups), `batch` all of their sequences.
  int64_t groups = 1;
  Timings timings;
  std::optional<CheckResult> check;
};

/// The generated ids, one line per real sequence.
void printTokens(llvm::raw_ostream &os, const RunReport &report);
/// The timings (and the check's result) for a reader.
void printSummary(llvm::raw_ostream &os, const RunReport &report);
/// The whole report as one JSON object.
llvm::Error writeJson(llvm::StringRef path, const RunReport &report);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_REPORT_H
