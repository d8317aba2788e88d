//===- Optimize.cpp - Superoptimise the functions of a module -------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Optimize.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::search;

std::vector<FunctionResult>
search::superoptimize(SearchContext &sc, const RuleSet &rules, ModuleOp module,
                      const SuperoptOptions &options) {
  std::vector<FunctionResult> results;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FunctionResult r;
    r.function = fn.getSymName().str();
    std::string why;
    FailureOr<TermGraph> g = TermGraph::fromFunc(sc, fn, why);
    if (failed(g)) {
      r.skipped = why;
      results.push_back(std::move(r));
      continue;
    }
    std::string prefix = "tg-superopt @" + r.function + ": ";
    Progress progress(options.progress
                          ? std::function<void(const std::string &)>(
                                [&](const std::string &line) {
                                  llvm::errs() << prefix << line << "\n";
                                })
                          : nullptr,
                      options.progressAfter);
    r.opsBefore = g->numOps(sc);
    if (options.engine == "eqsat") {
      EqsatOptions o = options.eqsat;
      o.progress = &progress;
      r.outcome = equalitySaturation(sc, rules, *g, o);
    } else {
      BacktrackOptions o = options.backtrack;
      o.progress = &progress;
      r.outcome = backtrackingSearch(sc, rules, *g, o);
    }
    if (progress.printedAny())
      progress.print(llvm::formatv(
          "{0}: done ({1}), cost {2:e} -> {3:e} ({4:f3}x), {5:f2} s",
          options.engine, r.outcome.stopReason, r.outcome.costBefore,
          std::min(r.outcome.costAfter, r.outcome.costBefore),
          r.outcome.costAfter > 0 && r.outcome.costAfter < r.outcome.costBefore
              ? r.outcome.costBefore / r.outcome.costAfter
              : 1.0,
          r.outcome.seconds));
    if (r.outcome.costAfter < r.outcome.costBefore) {
      r.outcome.best.toFunc(sc, fn);
    } else {
      r.outcome.best = *g;
      r.outcome.costAfter = r.outcome.costBefore;
      r.outcome.rulesApplied.clear();
    }
    r.opsAfter = r.outcome.best.numOps(sc);
    results.push_back(std::move(r));
  }
  return results;
}

llvm::json::Object search::makeReport(const SearchContext &sc,
                                      const RuleSet &rules,
                                      const SuperoptOptions &options,
                                      ArrayRef<FunctionResult> results) {
  double before = 0, after = 0, seconds = 0;
  std::map<std::string, unsigned> applied;
  llvm::json::Array functions;
  for (const FunctionResult &r : results) {
    llvm::json::Object f{{"function", r.function}};
    if (!r.skipped.empty()) {
      f["skipped"] = r.skipped;
      functions.push_back(std::move(f));
      continue;
    }
    const Outcome &o = r.outcome;
    before += o.costBefore;
    after += o.costAfter;
    seconds += o.seconds;
    llvm::json::Object perRule;
    for (auto &[name, n] : o.rulesApplied) {
      perRule[name] = int64_t(n);
      applied[name] += n;
    }
    f["cost_before"] = o.costBefore;
    f["cost_after"] = o.costAfter;
    f["ratio"] = o.costAfter > 0 ? o.costBefore / o.costAfter : 1.0;
    f["seconds"] = o.seconds;
    f["ops_before"] = int64_t(r.opsBefore);
    f["ops_after"] = int64_t(r.opsAfter);
    f["stop"] = o.stopReason;
    f["rules_applied"] = std::move(perRule);
    f["stats"] = llvm::json::Object(o.stats);
    functions.push_back(std::move(f));
  }
  llvm::json::Object perRule;
  for (auto &[name, n] : applied)
    perRule[name] = int64_t(n);
  llvm::json::Object report{{"search", options.engine},
                            {"cost_model", sc.getCostModel()
                                               ? sc.getCostModel()->name()
                                               : std::string("unit")},
                            {"rules_file", rules.path},
                            {"rules", int64_t(rules.rules.size())},
                            {"cost_before", before},
                            {"cost_after", after},
                            {"ratio", after > 0 ? before / after : 1.0},
                            {"seconds", seconds},
                            {"rules_applied", std::move(perRule)},
                            {"functions", std::move(functions)}};
  if (options.engine == "eqsat")
    report["options"] = llvm::json::Object{
        {"max_nodes", int64_t(options.eqsat.maxNodes)},
        {"max_iterations", int64_t(options.eqsat.maxIterations)},
        {"time_limit", options.eqsat.timeLimit},
        {"extraction", options.eqsat.extraction}};
  else
    report["options"] =
        llvm::json::Object{{"alpha", options.backtrack.alpha},
                           {"budget", int64_t(options.backtrack.budget)},
                           {"time_limit", options.backtrack.timeLimit},
                           {"max_growth", options.backtrack.maxGrowth}};
  return report;
}
