//===- Superopt.cpp - Search for cheaper equivalent tg graphs -------------===//
//
// Part of Loom. The --tg-superopt pass: loads rules, builds the cost model,
// runs one of LoomSearch's engines on every function, optionally checks the
// result against the original with the interpreter, and writes a report.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"
#include "loom/Search/Check.h"
#include "loom/Search/Optimize.h"
#include "loom/Search/Passes.h"
#include "loom/Search/Rule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::search {
#define GEN_PASS_DEF_TGSUPEROPT
#include "loom/Search/Passes.h.inc"
} // namespace loom::search

using namespace mlir;
using namespace loom;

namespace {

struct SuperoptPass : loom::search::impl::TGSuperoptBase<SuperoptPass> {
  using TGSuperoptBase::TGSuperoptBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (search != "backtrack" && search != "eqsat") {
      module.emitError() << "tg-superopt: unknown search '" << search
                         << "' (expected backtrack or eqsat)";
      return signalPassFailure();
    }
    if (extract != "ilp" && extract != "local" && extract != "greedy") {
      module.emitError() << "tg-superopt: unknown extraction '" << extract
                         << "' (expected ilp, local or greedy)";
      return signalPassFailure();
    }
    if (directions != "both" && directions != "forward") {
      module.emitError() << "tg-superopt: directions must be both or forward";
      return signalPassFailure();
    }

    auto handle = cost::createCostModel(target, costDb);
    if (!handle) {
      module.emitError() << "tg-superopt: "
                         << llvm::toString(handle.takeError());
      return signalPassFailure();
    }
    std::unique_ptr<cost::CostModel> &model = handle->model;

    std::string rulesPath = rules;
    if (rulesPath.empty()) {
      rulesPath = search::defaultRulesPath();
      if (rulesPath.empty() || !llvm::sys::fs::exists(rulesPath)) {
        module.emitError()
            << "tg-superopt: no default rule set: pass rules=FILE"
            << (rulesPath.empty() ? std::string()
                                  : " (expected the rule generator's default "
                                    "set at '" +
                                        rulesPath + "')");
        return signalPassFailure();
      }
    }
    search::SearchContext sc(&getContext(), model.get());
    search::RuleLoadOptions loadOptions;
    loadOptions.bothDirections = directions == "both";
    FailureOr<search::RuleSet> ruleSet =
        search::loadRules(sc, rulesPath, loadOptions);
    if (failed(ruleSet)) {
      module.emitError() << "tg-superopt: cannot load rules from '" << rulesPath
                         << "'";
      return signalPassFailure();
    }

    search::SuperoptOptions options;
    options.engine = search;
    options.progress = progress;
    options.progressAfter = progressAfter;
    options.backtrack.alpha = alpha;
    options.backtrack.budget = budget;
    options.backtrack.maxGrowth = maxGrowth;
    options.backtrack.timeLimit = timeLimit;
    options.eqsat.maxNodes = maxNodes;
    options.eqsat.maxIterations = maxIters;
    options.eqsat.multiPatternIterations = multiIters;
    options.eqsat.seminaive = seminaive;
    options.eqsat.rounds = rounds;
    options.eqsat.extraction = extract;
    options.eqsat.ilpTimeLimit = ilpTimeLimit;
    options.eqsat.ilpMaxNodes = ilpMaxNodes;
    options.eqsat.timeLimit = timeLimit;

    OwningOpRef<ModuleOp> original;
    if (check)
      original = module.clone();

    std::vector<search::FunctionResult> results =
        search::superoptimize(sc, *ruleSet, module, options);
    for (const search::FunctionResult &r : results)
      if (!r.skipped.empty())
        if (auto fn = module.lookupSymbol<func::FuncOp>(r.function))
          fn.emitWarning() << "tg-superopt: skipped: " << r.skipped;

    if (llvm::Error err = handle->saveDatabase()) {
      module.emitError() << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    if (!report.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(report, ec);
      if (ec) {
        module.emitError() << "tg-superopt: cannot write '" << report
                           << "': " << ec.message();
        return signalPassFailure();
      }
      llvm::json::Object json =
          search::makeReport(sc, *ruleSet, options, results);
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
    }
    if (check) {
      search::CheckOptions copts;
      copts.seed = checkSeed;
      copts.rtol = checkRtol;
      if (failed(search::checkEquivalent(*original, module, copts)))
        return signalPassFailure();
    }
  }
};

} // namespace
