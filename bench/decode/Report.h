//===- Report.h - The rows of loom-bench-decode, as a table and JSON -*- C++
//-*-===//
//
// Part of Loom. One row per model and context: each side's per-token decode
// latency and time to first token (null, with a reason, where a side cannot
// run it), the bytes a decode step reads and Loom's read bandwidth against
// the copy benchmark's; per model the logits agreement of the three sides,
// their peak memory and the capacity comparison.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_REPORT_H
#define LOOM_BENCH_DECODE_REPORT_H

#include "Bandwidth.h"
#include "Options.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// What one side measured in a row: the best round's medians.
struct SideResult {
  std::optional<double> decodeMs, ttftMs;
  /// Why a value is null (empty otherwise).
  std::string reason;
  /// Keeps the smaller of each value.
  void keepBest(std::optional<double> decode, std::optional<double> ttft);
};

struct Row {
  std::string model;
  int64_t context = 0, capacity = 0, promptBound = 0;
  SideResult loom, ort, torch;
  /// Weights a decode step reads + the cache at live length `context`.
  int64_t weightBytesRead = 0, cacheBytesRead = 0;
  /// (weightBytesRead + cacheBytesRead) / Loom's decode time.
  std::optional<double> readGBps() const;
  /// The same bytes over a step of \p decodeMs.
  double readGBpsAt(double decodeMs) const;
  /// The copy and read bandwidths measured beside the row, once a round
  /// before its sides (this VM's memory bandwidth moves with its
  /// neighbours' load): the round of the best copy.
  Bandwidth copy;
  /// Per round, Loom's read bandwidth in that round over the copy measured
  /// just before it in the same round: the step against the machine's
  /// memory at that moment (readGBps() / copy pairs the best round's step
  /// with the best round's copy, which may be minutes apart).
  std::vector<double> pairedFractions;
  /// The median of pairedFractions (none: nullopt).
  std::optional<double> pairedFraction() const;
};

/// Per model: what is not per context.
struct ModelSummary {
  std::string model;
  int64_t capacity = 0, promptBound = 0;
  int64_t weightBytes = 0, decodeWeightBytes = 0, cacheBytes = 0;
  double compileSeconds = 0;
  int64_t compilePeakRssKb = 0;
  /// Peak resident memory of each side (KiB; 0: not measured).
  int64_t loomPeakKb = 0, ortPeakKb = 0, torchPeakKb = 0;
  /// Largest |a - b| of the prompt's logits between sides ("loom-torch",
  /// "loom-ort", "ort-torch"), and the prompt's length.
  std::map<std::string, double> agreement;
  int64_t agreementTokens = 0;
  std::vector<std::string> notes;
  /// Capacity comparison: capacity -> Loom's decode ms at live length
  /// `capacityLive`.
  std::map<int64_t, double> capacityMs;
  /// capacity -> the median over alternations of its decode ms over the
  /// first capacity's in the same alternation (the VM's bandwidth moves
  /// between alternations, not within one).
  std::map<int64_t, double> capacityPairedRatio;
  int64_t capacityLive = 0;
};

/// The table of `rows` and the summaries, on stdout.
void printReport(const std::vector<Row> &rows,
                 const std::vector<ModelSummary> &models);

/// The JSON document: machine, settings, bandwidth, models and rows.
llvm::json::Value reportJSON(const DecodeOptions &o,
                             const std::vector<Row> &rows,
                             const std::vector<ModelSummary> &models,
                             const Bandwidth &bw, llvm::json::Object machine);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_REPORT_H
