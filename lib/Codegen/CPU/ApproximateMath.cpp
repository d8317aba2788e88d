//===- ApproximateMath.cpp - Vectorisable polynomial math -----------------===//
//
// Part of Loom. See LoomApproximateMath in include/loom/Codegen/CPU/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMAPPROXIMATEMATH
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

struct ApproximateMath
    : public codegen::cpu::impl::LoomApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
