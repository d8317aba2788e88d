//===- Optimize.h - Superoptimise the functions of a module -----*- C++ -*-===//
//
// Part of Loom. What --tg-superopt and loom-bench-superopt share: convert
// each function to a term graph, run the chosen engine, write the best
// graph back when it is cheaper, and describe what happened as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_OPTIMIZE_H
#define LOOM_SEARCH_OPTIMIZE_H

#include "loom/Search/Backtracking.h"
#include "loom/Search/EGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "loom/Support/PhaseTimer.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace loom::search {

struct SuperoptOptions {
  /// "backtrack" or "eqsat".
  std::string engine = "backtrack";
  BacktrackOptions backtrack;
  EqsatOptions eqsat;
  /// Print progress lines of long searches to stderr: the first after
  /// `progressAfter` seconds, then one every 2 s, and a last line with the
  /// outcome when any was printed.
  bool progress = false;
  double progressAfter = 2.0;
  /// After the search, batch the independent products of equal shapes
  /// (BatchProducts.h) where the cost model prices it cheaper; reported as
  /// the rewrite `batch-products`.
  bool batchProducts = false;
};

struct FunctionResult {
  std::string function;
  /// Empty when the function was searched; else why it was skipped.
  std::string skipped;
  Outcome outcome;
  size_t opsBefore = 0, opsAfter = 0;
  /// TermGraph::storedBytes of the graph searched and of the one returned.
  double storedBytesBefore = 0, storedBytesAfter = 0;
};

/// Folds each relu, sigmoid or tanh of a tg.conv result that nothing else
/// reads into that convolution's `activation` (a conv that has none), as a
/// library runs it (a oneDNN post-op); returns how many. The search starts
/// from this form, so that it prices such an activation as part of its
/// convolution rather than as a pass of its own, and does not move it where
/// no library fuses it (ShuffleNet-v2's `concat(relu(conv), relu(conv))`
/// -> `relu(concat(...))`, compiled and timed for nothing). `fn` has one
/// block.
unsigned fuseConvActivations(mlir::func::FuncOp fn);

/// Optimises every function of `module` in place (a function is rewritten
/// only when the search found a cheaper graph).
std::vector<FunctionResult> superoptimize(SearchContext &sc,
                                          const RuleSet &rules,
                                          mlir::ModuleOp module,
                                          const SuperoptOptions &options);

/// The JSON report: totals (cost_before, cost_after, ratio, seconds,
/// stored_bytes_before, stored_bytes_after, rules_applied per rule) and one
/// entry per function.
llvm::json::Object makeReport(const SearchContext &sc, const RuleSet &rules,
                              const SuperoptOptions &options,
                              llvm::ArrayRef<FunctionResult> results);

/// What --tg-superopt and loom-compile ask of a whole module.
struct ModuleSuperoptOptions {
  /// The rules file (empty: the generator's default set).
  std::string rules;
  /// Also apply every rule from its target to its source.
  bool bothDirections = true;
  /// Warn at each function the search skipped (the report lists them too).
  bool warnSkipped = true;
  /// Seconds per byte of each distinct folded constant the graph stores
  /// (SearchContext::setStoredBytePrice).
  double storedBytePrice = kStoredBytePrice;
  SuperoptOptions search;
  /// The timer the rule loading ("load rules") and the search ("search")
  /// nest under (loom-compile --time-phases; a null timer: untimed).
  PhaseTimer timing;
};

/// Loads the rules and superoptimises every function of \p module in place
/// under \p model (null: unit costs); warns at each function it skipped
/// (ModuleSuperoptOptions::warnSkipped).
/// Returns the report (makeReport); a missing or malformed rules file is
/// diagnosed on \p module.
mlir::FailureOr<llvm::json::Object>
superoptimizeModule(mlir::ModuleOp module, cost::CostModel *model,
                    const ModuleSuperoptOptions &options);

} // namespace loom::search

#endif // LOOM_SEARCH_OPTIMIZE_H
