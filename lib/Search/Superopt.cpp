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
    if (!(storedBytePrice >= 0)) {
      module.emitError() << "tg-superopt: stored-byte-price must be at "
                            "least 0, got "
                         << storedBytePrice;
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

    search::ModuleSuperoptOptions options;
    options.rules = rules;
    options.bothDirections = directions == "both";
    options.storedBytePrice = storedBytePrice;
    search::SuperoptOptions &so = options.search;
    so.engine = search;
    so.progress = progress;
    so.progressAfter = progressAfter;
    so.batchProducts = batchProducts;
    so.backtrack.alpha = alpha;
    so.backtrack.budget = budget;
    so.backtrack.maxGrowth = maxGrowth;
    so.backtrack.timeLimit = timeLimit;
    so.eqsat.maxNodes = maxNodes;
    so.eqsat.maxIterations = maxIters;
    so.eqsat.multiPatternIterations = multiIters;
    so.eqsat.seminaive = seminaive;
    so.eqsat.rounds = rounds;
    so.eqsat.extraction = extract;
    so.eqsat.ilpTimeLimit = ilpTimeLimit;
    so.eqsat.ilpMaxNodes = ilpMaxNodes;
    so.eqsat.timeLimit = timeLimit;
    so.backtrack.ruleIndex = ruleIndex;
    so.eqsat.ruleIndex = ruleIndex;

    OwningOpRef<ModuleOp> original;
    if (check)
      original = module.clone();

    FailureOr<llvm::json::Object> json =
        search::superoptimizeModule(module, model.get(), options);
    if (failed(json))
      return signalPassFailure();

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
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*json)))
         << "\n";
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
