//===- CheckBounds.cpp - Prove that every length fits its bound ------------===//
//
// Part of Loom. --tg-check-bounds: the integer range analysis
// (LengthRanges.h) over a function, then every tg.bound's length checked
// against the size of the dimension it bounds.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGBoundOp.h"
#include "loom/Dialect/TG/Transforms/LengthRanges.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGCHECKBOUNDS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace mlir::dataflow;
using namespace loom::tg;

namespace {

/// Checks \p op against the range the solver inferred for its length.
LogicalResult checkBound(BoundOp op, const DataFlowSolver &solver,
                         bool print) {
  int64_t dim = op.getDim();
  int64_t size = cast<RankedTensorType>(op.getInput().getType()).getDimSize(dim);
  const auto *lattice =
      solver.lookupState<IntegerValueRangeLattice>(op.getLength());
  if (!lattice || lattice->getValue().isUninitialized())
    return op.emitOpError("length of dimension ")
           << dim << " (size " << size
           << ") has no range: the range analysis does not reach it";
  const ConstantIntRanges &r = lattice->getValue().getValue();
  int64_t lo = r.smin().getSExtValue(), hi = r.smax().getSExtValue();
  if (lo < 0 || hi > size)
    return op.emitOpError("length of dimension ")
           << dim << " may be in [" << lo << ", " << hi
           << "], outside [0, " << size << "] (its size)";
  if (print)
    op.emitRemark("length in [")
        << lo << ", " << hi << "] of dimension " << dim << " (size " << size
        << ")";
  return success();
}

struct CheckBoundsPass
    : loom::tg::impl::TGCheckBoundsBase<CheckBoundsPass> {
  using TGCheckBoundsBase::TGCheckBoundsBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    registerTGLengthRangeModels(registry);
  }

  void runOnOperation() override {
    markAllAnalysesPreserved();
    DataFlowSolver solver;
    loadBaselineAnalyses(solver);
    solver.load<LengthRangeAnalysis>();
    if (failed(solver.initializeAndRun(getOperation())))
      return signalPassFailure();
    bool ok = true;
    getOperation().walk(
        [&](BoundOp op) { ok &= succeeded(checkBound(op, solver, print)); });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
