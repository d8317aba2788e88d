//===- ParallelizeKernels.cpp - Tile kernel roots with scf.forall ---------===//
//
// Part of Loom. See LoomParallelizeKernels in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace loom::compiler {
#define GEN_PASS_DEF_LOOMPARALLELIZEKERNELS
#include "loom/Compiler/Passes.h.inc"
} // namespace loom::compiler

using namespace mlir;
using namespace loom;

namespace {

/// Tile sizes: 1 on leading parallel loops until their trip counts multiply
/// to at least \p minIterations, 0 (untiled) on every other loop.
SmallVector<OpFoldResult> chooseTileSizes(TilingInterface op, OpBuilder &b,
                                          int64_t minIterations) {
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  SmallVector<Range> domain = op.getIterationDomain(b);
  SmallVector<OpFoldResult> sizes(iterators.size(), b.getIndexAttr(0));
  int64_t iterations = 1;
  // The innermost loop is never cut into size-1 tiles: it is what LLVM
  // vectorises, and a producer fused into each tile (softmax's max and sum)
  // usually reduces along it, so each tile would recompute the reduction
  // (ppocr-rec's 40x6625 softmax: 3.5 G operations instead of 0.5 M).
  for (auto [i, kind] : llvm::enumerate(iterators)) {
    if (kind != utils::IteratorType::parallel || iterations >= minIterations ||
        i + 1 == iterators.size())
      break;
    std::optional<int64_t> extent = getConstantIntValue(domain[i].size);
    if (!extent)
      break;
    sizes[i] = b.getIndexAttr(1);
    iterations *= *extent;
  }
  return sizes;
}

struct ParallelizeKernels
    : public compiler::impl::LoomParallelizeKernelsBase<ParallelizeKernels> {
  using LoomParallelizeKernelsBase::LoomParallelizeKernelsBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
      if (ret.getNumOperands() != 1)
        continue; // several results: left sequential
      auto root = ret.getOperand(0).getDefiningOp<TilingInterface>();
      if (!root || root->getNumResults() != 1)
        continue;
      rewriter.setInsertionPoint(root);
      SmallVector<OpFoldResult> sizes =
          chooseTileSizes(root, rewriter, minIterations);
      if (llvm::all_of(sizes,
                       [](OpFoldResult s) { return isConstantIntValue(s, 0); }))
        continue;
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(sizes);
      tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      auto result =
          scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
      if (failed(result)) {
        root->emitError("cannot tile this kernel's result for threads");
        return signalPassFailure();
      }
      for (auto [original, replacement] : result->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
    }
  }
};

} // namespace
