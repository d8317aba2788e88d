//===- Placement.h - Backend placement columns of loom-bench-cpu -*- C++ -*-===//
//
// Part of Loom. With --placement, each model is also compiled with every
// fixed backend set (loom-compile --backends=codegen|onednn|openblas) and
// placed by the search (--backends=auto: a cold search with an empty cost
// database, then a warm one reusing it, whose artifact is run), each in a
// subdirectory of the model's work directory, run on the same inputs and
// checked against the interpreter (docs/Placement.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_PLACEMENT_H
#define LOOM_BENCH_CPU_PLACEMENT_H

#include "Peers.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// The fixed sets, in column order (also their subdirectories' names).
inline constexpr const char *kFixedBackendSets[] = {"codegen", "onednn",
                                                    "openblas"};

struct PlacementResult {
  /// One per kFixedBackendSets entry.
  std::vector<CompiledResult> fixed;
  /// The cold compilation (a search with an empty cost database), not run:
  /// its note says why it did not compile (empty when it did).
  CompiledResult cold;
  /// The warm compilation (the same database again), run: the auto column.
  CompiledResult placed;
  /// The search's own seconds (loom-compile's "placed N sites in X s").
  std::optional<double> searchColdSeconds, searchWarmSeconds;

  /// The fastest fixed set, or -1 when none was measured.
  int bestFixed() const;
  /// placed / best fixed latency.
  std::optional<double> placedOverBest() const;
};

/// Measures the columns of one model in subdirectories of \p workDir (one per
/// fixed set, and auto/ with the cost database fragment-costs.json).
PlacementResult measurePlacement(const CompiledOptions &options,
                                 llvm::StringRef model,
                                 llvm::ArrayRef<std::string> compileArgs,
                                 llvm::StringRef workDir,
                                 llvm::StringRef inputsPath,
                                 const RunTensors &interpreterValues);

/// The search time in loom-compile's stderr \p log, if it placed.
std::optional<double> parseSearchSeconds(llvm::StringRef log);

/// The placement table: its header, then one row per model.
void printPlacementHeader(llvm::raw_ostream &os);
void printPlacementRow(llvm::raw_ostream &os, llvm::StringRef model,
                       const PlacementResult &r);
/// What the table's columns are, printed under it.
void printPlacementLegend(llvm::raw_ostream &os);
/// Why a column is missing or its outputs differ, one line each (empty when
/// nothing is).
std::vector<std::string> placementNotes(const PlacementResult &r);

llvm::json::Object placementJSON(const PlacementResult &r);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_PLACEMENT_H
