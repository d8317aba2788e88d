//===- CheckWeights.cpp - Check tg.weight ops against their file -----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Weights.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGCHECKWEIGHTS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom::tg;

namespace {
struct CheckWeightsPass
    : loom::tg::impl::TGCheckWeightsBase<CheckWeightsPass> {
  using TGCheckWeightsBase::TGCheckWeightsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    markAllAnalysesPreserved();
    if (!usesWeights(module))
      return;
    auto file = openWeights(module, weightsFile);
    if (failed(file))
      return signalPassFailure();
    bool ok = true;
    module.walk([&](WeightOp op) { ok &= succeeded(checkWeight(op, *file)); });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
