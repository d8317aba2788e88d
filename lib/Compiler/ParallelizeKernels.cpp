//===- ParallelizeKernels.cpp - Tile kernel roots with scf.forall ---------===//
//
// Part of Loom. See LoomParallelizeKernels in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
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

/// A contraction (matmul, batched matmul, convolution as a generic with a
/// reduction) whose tile for one thread is tiled again for the caches: the
/// innermost parallel loop by 512 and every reduction loop by 256, so that
/// a 256x512 block of the right-hand side (512 KiB) stays in L2 while a
/// thread's rows go over it. Only loops longer than the tile are cut.
void tileForCaches(IRRewriter &rewriter, TilingInterface op) {
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  rewriter.setInsertionPoint(op);
  SmallVector<Range> domain = op.getIterationDomain(rewriter);
  int64_t lastParallel = -1;
  for (auto [i, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::parallel)
      lastParallel = int64_t(i);
  SmallVector<OpFoldResult> sizes(iterators.size(), rewriter.getIndexAttr(0));
  bool any = false;
  for (auto [i, kind] : llvm::enumerate(iterators)) {
    int64_t tile = kind == utils::IteratorType::reduction ? 256
                   : int64_t(i) == lastParallel           ? 512
                                                          : 0;
    std::optional<int64_t> extent = getConstantIntValue(domain[i].size);
    if (tile && extent && *extent > tile) {
      sizes[i] = rewriter.getIndexAttr(tile);
      any = true;
    }
  }
  if (!any)
    return;
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  auto tiled = scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled))
    return; // left as one tile
  rewriter.replaceOp(op, tiled->replacements);
}

bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
         linalgOp.getNumParallelLoops() >= 2 &&
         linalgOp.getNumDpsInputs() == 2 &&
         (linalg::isaContractionOpInterface(linalgOp) ||
          linalg::isaConvolutionOpInterface(linalgOp));
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
      // A contraction's thread tile takes up to 16 rows of its first
      // parallel loop (at least 32 tiles left), which the cache tiling below
      // then runs over each block of the right-hand side.
      if (isContraction(root) && isConstantIntValue(sizes[0], 1)) {
        SmallVector<Range> domain = root.getIterationDomain(rewriter);
        if (std::optional<int64_t> rows = getConstantIntValue(domain[0].size))
          sizes[0] = rewriter.getIndexAttr(
              std::clamp<int64_t>(*rows / 32, 1, 16));
      }
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
      Operation *tiledRoot = result->tiledAndFusedOps.front();
      if (isContraction(tiledRoot))
        tileForCaches(rewriter, cast<TilingInterface>(tiledRoot));
    }
  }
};

} // namespace
