//===- RankSweep.h - loom-bench-decode --ranks: decode on ranks -*- C++ -*-===//
//
// Part of Loom. The parallel sweep of loom-bench-decode (--ranks=1,2,4
// --parallel=cp,tp, docs/benchmarks/cache-parallel.md): for each rank count
// P and split the artifact compiled for P ranks (loom-compile
// --cache-parallel=P, --tensor-parallel=P), its
// ranks threads of this process with one runtime thread each, every rank's
// decode step run at once; beside it the one-process artifact on P
// threads. Per row: the step's time, the bytes a rank sent per token
// (counted by the world), the memory a rank holds (weights and its shard of
// the caches), whether a greedy generation gives the one-process tokens,
// and the planner's estimate fed by the sweep's runs (FedPlan.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_RANKSWEEP_H
#define LOOM_BENCH_DECODE_RANKSWEEP_H

#include "Options.h"

#include "llvm/ADT/StringRef.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// One row of the sweep.
struct RanksRow {
  int64_t ranks = 1, threadsPerRank = 1, context = 0, batch = 1;
  std::string parallel;
  /// Median decode step, ms (nullopt: failed, see error).
  std::optional<double> decodeMs;
  double bytesPerTokenPerRank = 0;
  /// Weights + this rank's state, MiB; and the bound weights + state / P
  /// (nullopt for tensor parallelism, whose artifact holds every rank's
  /// weights: its peak resident set tells what a rank holds).
  std::optional<double> memoryMiBPerRank, boundMiBPerRank;
  /// The peak resident set of the largest rank, MiB, in a generation of
  /// its own processes (loom-launch; nullopt: not measured, see error).
  std::optional<double> peakRssMiBPerRank;
  std::optional<bool> tokensEqual;
  /// The fed planner's ms per token (FedPlan.h; nullopt: none).
  std::optional<double> simulatedMs;
  std::string error;
};

struct PlanChoice;

/// The artifacts of the sweep by (split: --parallel's kind, ranks).
using RankArtifacts = std::map<std::pair<std::string, int64_t>, std::string>;

/// Runs the sweep over o.ranks and o.contexts in \p workDir; fills \p rows
/// and, from the fed planner, \p choices.
int runRanksSweep(const DecodeOptions &o, llvm::StringRef workDir,
                  std::vector<RanksRow> &rows,
                  std::vector<PlanChoice> &choices);

/// The sweep's table, and its JSON.
void printRanksTable(const std::vector<RanksRow> &rows);
llvm::json::Value ranksJSON(const DecodeOptions &o,
                            const std::vector<RanksRow> &rows,
                            const std::vector<PlanChoice> &choices,
                            llvm::json::Object machine);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_RANKSWEEP_H
