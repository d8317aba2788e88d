//===- Placement.h - Backend placement columns of loom-bench-cpu -*- C++ -*-===//
//
// Part of Loom. With --placement, each model is also compiled with every
// fixed backend set (loom-compile --backends=codegen|onednn|openblas) and
// placed by the search (--backends=auto: a cold search with an empty cost
// database, then a warm one reusing it), each run on the same inputs and
// checked against the interpreter (docs/Placement.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_PLACEMENT_H
#define LOOM_BENCH_CPU_PLACEMENT_H

#include "Peers.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::bench {

/// The fixed sets, in column order.
inline constexpr const char *kFixedBackendSets[] = {"codegen", "onednn",
                                                    "openblas"};

struct PlacementResult {
  /// One per kFixedBackendSets entry.
  std::vector<CompiledResult> fixed;
  /// The warm compilation's artifact, run.
  CompiledResult placed;
  /// The search's own seconds (loom-compile's "placed N sites in X s").
  std::optional<double> searchColdSeconds, searchWarmSeconds;

  /// The fastest fixed set, or -1 when none was measured.
  int bestFixed() const;
  /// placed / best fixed latency.
  std::optional<double> placedOverBest() const;
};

/// Measures the columns of one model in subdirectories of \p workDir.
PlacementResult measurePlacement(const CompiledOptions &options,
                                 llvm::StringRef model,
                                 llvm::ArrayRef<std::string> compileArgs,
                                 llvm::StringRef workDir,
                                 llvm::StringRef inputsPath,
                                 const RunTensors &interpreterValues);

/// The search time in loom-compile's stderr \p log, if it placed.
std::optional<double> parseSearchSeconds(llvm::StringRef log);

/// One model's row of the placement table (after printPlacementHeader).
void printPlacementHeader(llvm::raw_ostream &os);
void printPlacementRow(llvm::raw_ostream &os, llvm::StringRef model,
                       const PlacementResult &r);
/// Why a column is missing, one line each (empty when nothing is).
std::vector<std::string> placementNotes(const PlacementResult &r);

llvm::json::Object placementJSON(const PlacementResult &r);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_PLACEMENT_H
