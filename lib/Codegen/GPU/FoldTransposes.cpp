//===- FoldTransposes.cpp - Transposes folded into matrix products --------===//
//
// Part of Loom. See the description of LoomGPUFoldTransposes in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUFOLDTRANSPOSES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

/// \p t's input map when \p t is a generalized transpose: one input read
/// through a permutation, the output at the loops' own position, the
/// payload the input element; else a null map.
AffineMap transposeInputMap(linalg::GenericOp t) {
  if (t.getNumDpsInputs() != 1 || t.getNumDpsInits() != 1 ||
      t.getNumParallelLoops() != t.getNumLoops() || !t.hasPureTensorSemantics())
    return {};
  AffineMap in = t.getMatchingIndexingMap(t.getDpsInputOperand(0));
  AffineMap out = t.getMatchingIndexingMap(t.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(t.getBody()->getTerminator());
  if (!in.isPermutation() || !out.isIdentity() ||
      yield.getValues().size() != 1 ||
      yield.getValues()[0] != t.getBody()->getArgument(0))
    return {};
  return in;
}

/// Rewrites the generalized transpose \p t of a contraction's result (the
/// contraction's one use, its output a fill's) as the contraction writing
/// its result through the permutation: T(d) = C(P(d)), so C' writes at
/// P^-1 of C's output position. Returns false where \p t is no such
/// transpose.
bool storeThroughTranspose(IRRewriter &rewriter, linalg::GenericOp t) {
  AffineMap perm = transposeInputMap(t);
  if (!perm)
    return false;
  auto c = t.getDpsInputOperand(0)->get().getDefiningOp<linalg::GenericOp>();
  if (!c || c->getNumResults() != 1 || !c->hasOneUse() ||
      c.getNumReductionLoops() == 0 || !c.hasPureTensorSemantics())
    return false;
  auto fill = c.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  auto type = cast<RankedTensorType>(t->getResult(0).getType());
  if (!fill || !fill->hasOneUse() || !type.hasStaticShape())
    return false;
  rewriter.setInsertionPoint(c);
  Location loc = c.getLoc();
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  Value zeros = linalg::FillOp::create(rewriter, loc, fill.getInputs(), empty)
                    .getResult(0);
  SmallVector<AffineMap> maps = c.getIndexingMapsArray();
  maps.back() = inversePermutation(perm).compose(maps.back());
  auto written = cast<linalg::GenericOp>(rewriter.clone(*c));
  written.getDpsInitsMutable()[0].set(zeros);
  written.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  written->getResult(0).setType(type);
  rewriter.replaceOp(t, written->getResults());
  rewriter.eraseOp(c);
  rewriter.eraseOp(fill);
  return true;
}

struct FoldTransposes
    : public loom::codegen::gpu::impl::LoomGPUFoldTransposesBase<
          FoldTransposes> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics())
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic)) {
        op.emitOpError("loom-gpu-fold-transposes: cannot write it as a "
                       "linalg.generic");
        return signalPassFailure();
      }
      storeThroughTranspose(rewriter, *generic);
    }
  }
};

} // namespace
