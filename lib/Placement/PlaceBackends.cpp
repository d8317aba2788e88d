//===- PlaceBackends.cpp - The tg-place-backends pass ---------------------===//
//
// Part of Loom. See the description of TGPlaceBackends in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Placement/Passes.h"
#include "loom/Placement/Placement.h"

#include "llvm/Support/raw_ostream.h"

namespace loom::placement {
#define GEN_PASS_DEF_TGPLACEBACKENDS
#include "loom/Placement/Passes.h.inc"
} // namespace loom::placement

using namespace mlir;
using namespace loom;
using namespace loom::placement;

namespace {

struct PlaceBackends
    : public placement::impl::TGPlaceBackendsBase<PlaceBackends> {
  using TGPlaceBackendsBase::TGPlaceBackendsBase;
  PlaceBackends(const compiler::BackendRegistry &registry,
                const TGPlaceBackendsOptions &options)
      : TGPlaceBackendsBase(options), registry(&registry) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError("tg-place-backends: ") << message;
      signalPassFailure();
    };
    const compiler::BackendRegistry &registry = *this->registry;
    PlaceOptions options;
    options.registry = &registry;
    if (backends != "all" && backends != "auto") {
      auto listed = registry.parseList(backends);
      if (!listed)
        return fail(llvm::toString(listed.takeError()));
      for (const compiler::Backend *backend : *listed)
        options.backends.push_back(backend->name().str());
    }
    options.placementIn = placementIn;
    options.placementOut = placementOut;
    std::unique_ptr<llvm::raw_fd_ostream> reportFile;
    if (report == "-") {
      options.report = &llvm::errs();
    } else if (!report.empty()) {
      std::error_code ec;
      reportFile = std::make_unique<llvm::raw_fd_ostream>(report, ec);
      if (ec)
        return fail("cannot write the report " + report + ": " + ec.message());
      options.report = reportFile.get();
    }
    options.progress = &llvm::errs();
    std::unique_ptr<cost::CostDatabase> db;
    std::unique_ptr<FragmentCostModel> model;
    if (placementIn.empty()) {
      auto roofline = cost::lookupTarget(target);
      if (!roofline)
        return fail(llvm::toString(roofline.takeError()));
      auto analytic = createAnalyticCostModel(*roofline);
      if (cost == "analytic") {
        model = std::move(analytic);
      } else if (cost == "measured") {
        if (costDb.empty())
          return fail("cost=measured needs cost-db=<file.json> (the cache "
                      "of measured fragments)");
        auto loaded = cost::CostDatabase::load(costDb);
        if (!loaded)
          return fail(llvm::toString(loaded.takeError()));
        db = std::make_unique<cost::CostDatabase>(std::move(*loaded));
        MeasureOptions measure;
        measure.threads = threads;
        // With the end-to-end level, fragments get half the budget: whole
        // trials are what the choice finally rests on, and pricing every
        // fragment of a large model (NASNet-A: 1,021) can take all of it.
        measure.budgetSeconds = endToEnd ? budget / 2 : budget;
        measure.progress = &llvm::errs();
        model = createMeasuredCostModel(registry, *db, measure,
                                        std::move(analytic));
        options.endToEnd = endToEnd;
        options.budgetSeconds = budget;
        options.threads = threads;
        options.db = db.get();
      } else {
        return fail("cost must be analytic or measured, got '" + cost + "'");
      }
      options.costModel = model.get();
    }
    if (failed(placeBackends(module, options)))
      signalPassFailure();
  }

private:
  const compiler::BackendRegistry *registry =
      &compiler::BackendRegistry::builtin();
};

} // namespace

std::unique_ptr<Pass>
placement::createTGPlaceBackends(const compiler::BackendRegistry &registry,
                                 const TGPlaceBackendsOptions &options) {
  return std::make_unique<PlaceBackends>(registry, options);
}
