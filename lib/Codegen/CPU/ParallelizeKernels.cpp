//===- ParallelizeKernels.cpp - Tile kernel roots with scf.forall ---------===//
//
// Part of Loom. See LoomParallelizeKernels in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMPARALLELIZEKERNELS
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

/// Tile sizes: 1 (or \p units[i] where given: 0 keeps loop i whole) on
/// parallel loops, outermost first, until their trip counts multiply to at
/// least \p minIterations, 0 (untiled) on every other loop.
SmallVector<OpFoldResult> chooseTileSizes(TilingInterface op, OpBuilder &b,
                                          int64_t minIterations,
                                          ArrayRef<int64_t> units) {
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  SmallVector<Range> domain = op.getIterationDomain(b);
  SmallVector<OpFoldResult> sizes(iterators.size(), b.getIndexAttr(0));
  int64_t iterations = 1;
  // The innermost loop is never cut into size-1 tiles: it is what LLVM
  // vectorises, and a producer fused into each tile (softmax's max and sum)
  // usually reduces along it, so each tile would recompute the reduction
  // (ppocr-rec's 40x6625 softmax: 3.5 G operations instead of 0.5 M).
  // Reduction loops stay whole inside a tile (threads never share an
  // accumulator); a parallel loop after them is still cut, so a reduction
  // over [N, C, H, W] to [C] (a convolution's bias gradient) runs on every
  // thread instead of one.
  for (auto [i, kind] : llvm::enumerate(iterators)) {
    if (iterations >= minIterations || i + 1 == iterators.size())
      break;
    int64_t unit = i < units.size() ? units[i] : 1;
    if (kind != utils::IteratorType::parallel || unit == 0)
      continue;
    std::optional<int64_t> extent = getConstantIntValue(domain[i].size);
    if (!extent)
      break;
    sizes[i] = b.getIndexAttr(unit);
    iterations *= llvm::divideCeil(*extent, unit);
  }
  return sizes;
}

/// The largest multiple of 32 up to \p limit that divides \p extent (so
/// that every cache tile has the same static shape, which register tiling
/// needs), or \p limit when none does (the last tile is then partial).
int64_t evenTile(int64_t extent, int64_t limit) {
  for (int64_t tile = limit; tile >= 32; tile -= 32)
    if (extent % tile == 0)
      return tile;
  return limit;
}

/// A contraction (matmul, batched matmul, convolution as a generic with a
/// reduction) whose tile for one thread is tiled again for the caches: the
/// innermost parallel loop by 512 and every reduction loop by 256 (or the
/// largest multiple of 32 below that divides the loop), so that a 256x512
/// block of the right-hand side (512 KiB) stays in L2 while a thread's rows
/// go over it. Only loops longer than the tile are cut.
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
      sizes[i] = rewriter.getIndexAttr(evenTile(*extent, tile));
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

bool isConvolution(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && !linalg::isaContractionOpInterface(linalgOp) &&
         linalg::isaConvolutionOpInterface(linalgOp);
}

/// The largest divisor of \p extent up to \p limit.
int64_t largestDivisorUpTo(int64_t extent, int64_t limit) {
  for (int64_t d = std::min(extent, limit); d > 1; --d)
    if (extent % d == 0)
      return d;
  return 1;
}

/// How a convolution kernel's thread tiles cut the loops of its result
/// \p root ([N, F, OH, OW], or [N, G, F, OH, OW] for groups; empty: not a
/// convolution kernel): whole output rows (loom-vectorize-convs computes a
/// row in vectors), all the output channels of a group, and for a dense
/// convolution blocks of channels (as many as 16 accumulator vectors of 16
/// floats hold for one chunk of the row: AVX-512's; on a narrower target
/// loom-vectorize-convs splits the block further), so that each input
/// vector a tile loads feeds several output channels.
SmallVector<int64_t> convolutionTileUnits(func::FuncOp fn,
                                          TilingInterface root) {
  auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  bool anyConv = false, grouped = false, dense = false, sameRows = false;
  fn.walk([&](linalg::LinalgOp op) {
    anyConv |= isConvolution(op);
    grouped |= isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
    if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
      dense = true;
      // One kernel column, no column padding, unit strides: the output's
      // rows read input rows of the same length, and loom-vectorize-convs
      // can run a tile's rows as one collapsed row.
      auto in = cast<ShapedType>(conv.getDpsInputs()[0].getType());
      auto out = cast<ShapedType>(conv.getDpsInits()[0].getType());
      sameRows = in.getDimSize(3) == out.getDimSize(3) &&
                 llvm::all_of(conv.getStrides().getValues<int64_t>(),
                              [](int64_t v) { return v == 1; });
    }
  });
  if (!anyConv || !type || !type.hasStaticShape())
    return {};
  int64_t rank = type.getRank();
  SmallVector<int64_t> units(rank, 1);
  units[rank - 1] = 0;
  if (grouped && rank == 5)
    units[2] = 0;
  if (dense && rank == 4) {
    int64_t row = type.getDimSize(3);
    // Rows shorter than a vector that can be collapsed: the tile keeps
    // the whole plane (openWakeWord's 3x1 convolutions on 2-8 wide planes
    // were one masked, mostly empty vector per row).
    if (sameRows && row < 16) {
      units[2] = 0;
      row *= type.getDimSize(2);
    }
    int64_t vectors = std::min<int64_t>(llvm::divideCeil(row, 16), 4);
    units[1] = largestDivisorUpTo(type.getDimSize(1), 16 / vectors);
  }
  return units;
}

/// Thread tiles of a matrix product's result (its last two parallel loops
/// are rows and columns, any before them batches): one batch, up to 64 rows
/// (a divisor, so that every tile has the same static shape), and, when that
/// leaves fewer than 32 tiles and \p columnBands allows, the columns cut
/// into bands (multiples of 32, at least 64 wide) until there are 32; then
/// fewer rows (down to 8) while there are still fewer than 32 tiles. Each
/// tile reads only its band of the right-hand side, and its rows share every
/// block of it: a 128-row product (BERT's) no longer streams the whole
/// weight once per 4 rows.
std::optional<SmallVector<OpFoldResult>>
matmulTileSizes(TilingInterface op, OpBuilder &b, bool columnBands) {
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  SmallVector<Range> domain = op.getIterationDomain(b);
  SmallVector<int64_t> parallel;
  for (auto [i, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::parallel)
      parallel.push_back(i);
  if (parallel.size() < 2)
    return std::nullopt;
  SmallVector<int64_t> extents;
  for (const Range &r : domain) {
    std::optional<int64_t> e = getConstantIntValue(r.size);
    if (!e)
      return std::nullopt;
    extents.push_back(*e);
  }
  int64_t rowsDim = parallel[parallel.size() - 2], colsDim = parallel.back();
  SmallVector<OpFoldResult> sizes(iterators.size(), b.getIndexAttr(0));
  int64_t tiles = 1;
  for (int64_t d : ArrayRef(parallel).drop_back(2)) {
    sizes[d] = b.getIndexAttr(1);
    tiles *= extents[d];
  }
  int64_t rows = largestDivisorUpTo(extents[rowsDim], 64);
  tiles *= extents[rowsDim] / rows;
  constexpr int64_t kWantedTiles = 32;
  int64_t cols = extents[colsDim];
  if (columnBands && tiles < kWantedTiles && cols % 32 == 0) {
    int64_t band = 0;
    for (int64_t c = cols - 32; c >= 64; c -= 32) {
      if (cols % c != 0)
        continue;
      band = c; // the narrowest so far
      if (tiles * (cols / c) >= kWantedTiles)
        break;
    }
    if (band) {
      sizes[colsDim] = b.getIndexAttr(band);
      tiles *= cols / band;
    }
  }
  // Still too few tiles: fewer rows per tile, down to 8 (one register tile).
  while (tiles < kWantedTiles && rows > 8) {
    int64_t fewer = largestDivisorUpTo(extents[rowsDim], rows / 2);
    tiles = tiles / (extents[rowsDim] / rows) * (extents[rowsDim] / fewer);
    rows = fewer;
  }
  sizes[rowsDim] = b.getIndexAttr(rows);
  return sizes;
}

/// The op computing a kernel's result \p v: its defining op, or through a
/// reshape, the op computing the reshape's source (a lowering that works
/// on an expanded view, such as maxpool_grad's [N, C, OH, sh, OW, sw]
/// spread, returns it collapsed).
TilingInterface rootOf(Value v) {
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
    v = collapse.getSrc();
  else if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>())
    v = expand.getSrc();
  return v.getDefiningOp<TilingInterface>();
}

struct ParallelizeKernels
    : public codegen::cpu::impl::LoomParallelizeKernelsBase<ParallelizeKernels> {
  using LoomParallelizeKernelsBase::LoomParallelizeKernelsBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
      if (ret.getNumOperands() != 1)
        continue; // several results: left sequential
      auto root = rootOf(ret.getOperand(0));
      if (!root || root->getNumResults() != 1)
        continue;
      rewriter.setInsertionPoint(root);
      SmallVector<int64_t> units = convolutionTileUnits(fn, root);
      SmallVector<OpFoldResult> sizes =
          chooseTileSizes(root, rewriter, minIterations, units);
      // A matrix product's kernel (the product itself, or its epilogue
      // with the product fused in) gets thread tiles of up to 64 rows by a
      // band of columns (see matmulTileSizes); a convolution's, up to 64
      // rows of its first loop.
      bool matmul = false, conv = false, otherReductions = false;
      fn.walk([&](linalg::LinalgOp op) {
        if (isContraction(op))
          (isConvolution(op) ? conv : matmul) = true;
        else if (op.getNumReductionLoops() > 0)
          otherReductions = true;
      });
      if (matmul) {
        // Column bands only under an elementwise epilogue: a softmax or a
        // norm over the columns would be recomputed in every band.
        if (std::optional<SmallVector<OpFoldResult>> tiles =
                matmulTileSizes(root, rewriter, !otherReductions))
          sizes = std::move(*tiles);
      } else if (conv && isConstantIntValue(sizes[0], 1)) {
        SmallVector<Range> domain = root.getIterationDomain(rewriter);
        if (std::optional<int64_t> rows = getConstantIntValue(domain[0].size))
          sizes[0] =
              rewriter.getIndexAttr(std::clamp<int64_t>(*rows / 32, 1, 64));
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
      for (Operation *tiled : result->tiledAndFusedOps)
        if (isContraction(tiled))
          tileForCaches(rewriter, cast<TilingInterface>(tiled));
    }
  }
};

} // namespace
