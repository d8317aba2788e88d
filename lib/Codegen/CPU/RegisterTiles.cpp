//===- RegisterTiles.cpp - Register-tile and vectorise contractions -------===//
//
// Part of Loom. See LoomRegisterTiles in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMREGISTERTILES
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

/// Where a contraction's register tile lies: `n` is the output's last
/// dimension (each operand that uses it has it last, so a row of the tile
/// is one contiguous vector), `m` the innermost other output dimension that
/// indexes an operand without `n` (or -1).
struct TileDims {
  int64_t m = -1, n = -1;
};

/// The register tile of \p op, or nothing when its shape does not fit one:
/// f32 operands, a multiply-add body, static loop extents, operands indexed
/// by projected permutations, and `n` contiguous wherever it is used.
std::optional<TileDims> registerTileDims(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
      return std::nullopt;
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return std::nullopt;
  }
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0)
    return std::nullopt;
  TileDims dims;
  dims.n = out.getDimPosition(out.getNumResults() - 1);
  MLIRContext *context = op.getContext();
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(dims.n, context));
    if (pos && *pos + 1 != map.getNumResults())
      return std::nullopt; // a row of the tile would be a strided gather
  }
  // The rows: the innermost other output dimension that indexes an operand
  // without `n` (its elements are broadcast along a row of the tile).
  for (int64_t r = int64_t(out.getNumResults()) - 2; r >= 0 && dims.m < 0;
       --r) {
    unsigned dim = out.getDimPosition(r);
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!map.isFunctionOfDim(dims.n) && map.isFunctionOfDim(dim))
        dims.m = dim;
    }
  }
  return dims;
}

/// The largest of \p choices dividing \p extent, 0 if none does.
int64_t largestDivisor(int64_t extent, ArrayRef<int64_t> choices) {
  for (int64_t c : choices)
    if (c <= extent && extent % c == 0)
      return c;
  return 0;
}

/// `[..., n]` expanded to `[..., n / columns, columns]`.
Value splitLastDim(OpBuilder &b, Location loc, Value tensor, int64_t columns) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.append({type.getShape().back() / columns, columns});
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), tensor,
      groups);
}

/// Rows of the left operand that must share a block of the right one
/// before copying the block into tile order pays.
constexpr int64_t kMinRowsToPack = 32;

/// The rows that read the right-hand side \p rhs of \p op: its own \p rows,
/// times the trip count of every loop around \p op that \p rhs is defined
/// outside of (a recurrent step's product inside its scan's loop reads the
/// same weights at every step; the copy, loop-invariant, is hoisted out of
/// the loop and made once).
int64_t rowsSharing(Operation *op, Value rhs, int64_t rows) {
  for (auto loop = op->getParentOfType<scf::ForOp>();
       loop && loop.isDefinedOutsideOfLoop(rhs);
       loop = loop->getParentOfType<scf::ForOp>()) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips)
      break;
    rows *= trips->getSExtValue();
  }
  return rows;
}

/// Copies the right-hand side of \p op (the operand indexed by `n`, every
/// other of its dimensions a reduction) into `[n / columns][...][columns]`
/// order, so that a register tile reads it contiguously, and rewrites \p op
/// into a contraction over that copy with `n` split into (`n1`, `n0`).
/// Returns the new op, or failure where the shape does not call for it.
/// Inside a cache tile the copy is one block of the right-hand side, which
/// the rows of the thread's tile then share.
FailureOr<linalg::GenericOp> packRightHandSide(IRRewriter &rewriter,
                                                linalg::GenericOp op,
                                                TileDims dims,
                                                int64_t columns) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (dims.m < 0 || extents[dims.n] % columns != 0)
    return failure();
  MLIRContext *context = op.getContext();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  OpOperand *rhs = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(dims.n))
      continue;
    for (unsigned r = 0; r + 1 < map.getNumResults(); ++r)
      if (iterators[map.getDimPosition(r)] != utils::IteratorType::reduction)
        return failure(); // not shared by all rows
    rhs = input;
  }
  if (!rhs || rowsSharing(op, rhs->get(), extents[dims.m]) < kMinRowsToPack)
    return failure();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto rhsType = cast<RankedTensorType>(rhs->get().getType());
  int64_t rank = rhsType.getRank();
  // [k..., n] -> [k..., n1, n0] -> [n1, k..., n0]
  Value expanded = splitLastDim(rewriter, loc, rhs->get(), columns);
  ArrayRef<int64_t> expandedShape =
      cast<RankedTensorType>(expanded.getType()).getShape();
  SmallVector<int64_t> permutation{rank - 1};
  for (int64_t d = 0; d + 1 < rank; ++d)
    permutation.push_back(d);
  permutation.push_back(rank);
  SmallVector<int64_t> packedShape;
  for (int64_t d : permutation)
    packedShape.push_back(expandedShape[d]);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, packedShape, rewriter.getF32Type());
  Value packed =
      linalg::TransposeOp::create(rewriter, loc, expanded, empty, permutation)
          ->getResult(0);

  // The contraction over [n1, k..., n0]: `n` now stands for `n1`, and a new
  // last loop for `n0`.
  unsigned numDims = op.getNumLoops() + 1;
  AffineExpr n0 = getAffineDimExpr(numDims - 1, context);
  auto widen = [&](AffineMap map) {
    return AffineMap::get(numDims, 0, map.getResults(), context);
  };
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (input != rhs) {
      maps.push_back(widen(map));
      inputs.push_back(input->get());
      continue;
    }
    SmallVector<AffineExpr> results{map.getResult(rank - 1)};
    for (int64_t r = 0; r + 1 < rank; ++r)
      results.push_back(map.getResult(r));
    results.push_back(n0);
    maps.push_back(AffineMap::get(numDims, 0, results, context));
    inputs.push_back(packed);
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  SmallVector<AffineExpr> outResults(outMap.getResults());
  outResults.push_back(n0);
  maps.push_back(AffineMap::get(numDims, 0, outResults, context));
  auto outType = cast<RankedTensorType>(init->get().getType());
  auto out = splitLastDim(rewriter, loc, init->get(), columns)
                 .getDefiningOp<tensor::ExpandShapeOp>();
  Type wideOutType = out.getType();
  iterators.push_back(utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{wideOutType},
                                           inputs, ValueRange{out}, maps,
                                           iterators);
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                              generic.getRegion().end());
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, outType, generic->getResult(0),
      out.getReassociationIndices());
  rewriter.replaceOp(op, result);
  return generic;
}

struct RegisterTiles
    : public codegen::cpu::impl::LoomRegisterTilesBase<RegisterTiles> {
  using LoomRegisterTilesBase::LoomRegisterTilesBase;

  /// The tile's rows: `rows`, else the largest power of two below it
  /// dividing the loop (never more accumulators than the option allows); 1
  /// without a row dimension. Packing the right-hand side keeps the extent
  /// of `m`, so this holds before and after it.
  int64_t tileRows(TileDims dims, ArrayRef<int64_t> extents) const {
    if (dims.m < 0)
      return 1;
    SmallVector<int64_t> choices{int64_t(rowsPerTile)};
    for (int64_t p = llvm::PowerOf2Ceil(rowsPerTile) / 2; p >= 1; p /= 2)
      if (p < rowsPerTile)
        choices.push_back(p);
    return largestDivisor(extents[dims.m], choices);
  }

  /// The tile's columns for \p rows rows of an output row of \p extent:
  /// `columns` (or half of it); with fewer rows than the option allows (a
  /// matrix-vector product, a recurrent step's `[batch, hidden]` rows), as
  /// many multiples of `columns` as the unused rows' accumulators hold, so
  /// that the tile still keeps `rows x columns` independent multiply-add
  /// chains in flight instead of waiting on the latency of a few. Only
  /// powers of two: a tile row is one vector of `columns` floats, and LLVM
  /// widens a vector of another length to the next power of two and
  /// assembles its loads and stores element by element (a 1x160 tile of an
  /// LSTM with hidden size 200 ran its step's product 40x slower than the
  /// 1x32 tile that replaces it).
  int64_t tileColumns(int64_t extent, int64_t rows) const {
    const int64_t width = vectorColumns;
    SmallVector<int64_t> choices;
    if (rows > 0 && rows < rowsPerTile)
      for (int64_t c = (rowsPerTile * width / rows) / width * width; c > width;
           c -= width)
        if (llvm::isPowerOf2_64(c))
          choices.push_back(c);
    choices.append({width, width / 2});
    return largestDivisor(extent, choices);
  }

  /// How many tiles of \p rows x \p columns along a packed product's loop
  /// over its column tiles (of \p tiles iterations) one register tile
  /// holds: as many as the accumulators a full `rows x columns` tile would
  /// use allow, dividing \p tiles. A step's row of 800 (an LSTM's four
  /// gates of hidden size 200) takes 1x32 tiles, two multiply-add chains
  /// waiting on each other; five of them at once keep ten in flight. Each
  /// is its own vector row (`[tiles, columns]`), so no vector is longer than
  /// `columns`.
  int64_t columnTilesAtOnce(int64_t tiles, int64_t rows,
                            int64_t columns) const {
    SmallVector<int64_t> choices;
    for (int64_t c = rowsPerTile * vectorColumns / (rows * columns); c > 1; --c)
      choices.push_back(c);
    return std::max<int64_t>(largestDivisor(tiles, choices), 1);
  }

  /// Tiles \p op into `rows x columns` register tiles with every other
  /// loop of size 1 (reductions innermost) and vectorises the tile.
  LogicalResult tile(IRRewriter &rewriter, linalg::LinalgOp op) {
    std::optional<TileDims> dims = registerTileDims(op);
    if (!dims)
      return failure();
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    int64_t rows = tileRows(*dims, extents);
    int64_t columns = tileColumns(extents[dims->n], rows);
    if (columns == 0 || columns % 8 != 0)
      return failure();
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        isa<linalg::GenericOp>(*op) ? cast<linalg::GenericOp>(*op)
                                    : linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return failure();
    op = *generic;
    // Packed, the loop over the column tiles (`n1`, where `n` was) may
    // take several tiles at once.
    int64_t tileLoop = -1, tilesAtOnce = 1;
    if (FailureOr<linalg::GenericOp> packedOp =
            packRightHandSide(rewriter, *generic, *dims, columns);
        succeeded(packedOp)) {
      tileLoop = dims->n;
      op = *packedOp;
      dims = registerTileDims(op);
      extents = op.getStaticLoopRanges();
      assert(dims && "a packed contraction has a register tile");
      tilesAtOnce = columnTilesAtOnce(extents[tileLoop], rows, columns);
    }
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<OpFoldResult> sizes;
    SmallVector<int64_t> interchange, reductions;
    for (auto [i, kind] : llvm::enumerate(iterators)) {
      int64_t size = int64_t(i) == dims->n    ? columns
                     : int64_t(i) == dims->m  ? rows
                     : int64_t(i) == tileLoop ? tilesAtOnce
                                              : 1;
      sizes.push_back(rewriter.getIndexAttr(size));
      if (kind == utils::IteratorType::reduction)
        reductions.push_back(i);
      else
        interchange.push_back(i);
    }
    llvm::append_range(interchange, reductions);
    scf::SCFTilingOptions options;
    options.setTileSizes(sizes);
    options.setInterchange(interchange);
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    rewriter.setInsertionPoint(op);
    auto tiled = scf::tileUsingSCF(rewriter, cast<TilingInterface>(*op),
                                   options);
    if (failed(tiled) || tiled->tiledOps.size() != 1)
      return failure();
    rewriter.replaceOp(op, tiled->replacements);
    // Loops over the product's parallel dimensions write disjoint tiles:
    // loom-team-kernels may split them over the threads of a team.
    for (auto [loop, dim] : llvm::zip(tiled->loops, interchange))
      if (iterators[dim] == utils::IteratorType::parallel)
        loop->setAttr(codegen::cpu::kParallelTilesAttr, rewriter.getUnitAttr());
    Operation *tileOp = tiled->tiledOps.front();
    // A tile the vectoriser refuses stays a (correct) scalar linalg op.
    rewriter.setInsertionPoint(tileOp);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, tileOp);
    if (succeeded(vectorized))
      rewriter.replaceOp(tileOp, vectorized->replacements);
    return success();
  }

  void runOnOperation() override {
    if (rowsPerTile < 1 || vectorColumns < 8 || vectorColumns % 8 != 0) {
      getOperation().emitError("--loom-register-tiles: rows must be at least "
                               "1 and columns a positive multiple of 8 (got "
                               "rows=")
          << int64_t(rowsPerTile) << " columns=" << int64_t(vectorColumns)
          << ")";
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> candidates;
      fn.walk([&](linalg::LinalgOp op) {
        if (registerTileDims(op))
          candidates.push_back(op);
      });
      if (candidates.empty())
        continue;
      bool any = false;
      for (linalg::LinalgOp op : candidates)
        any |= succeeded(tile(rewriter, op));
      if (!any)
        continue;
      // The vectorised tile reads its operands through broadcasts and
      // sums a unit dimension: make it one vector.contract reading
      // straight from the tensors.
      RewritePatternSet patterns(context);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
      scf::ForOp::getCanonicalizationPatterns(patterns, context);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
      // The accumulator tile stays in registers over the reductions: its
      // read and write are hoisted out of each loop around it, innermost
      // loops first (the canonicalisation above may have rebuilt loops, so
      // they are looked up again).
      SmallVector<LoopLikeOpInterface> loops;
      fn.walk<WalkOrder::PostOrder>(
          [&](scf::ForOp loop) { loops.push_back(loop); });
      for (LoopLikeOpInterface loop : loops) {
        moveLoopInvariantCode(loop);
        hoistLoopInvariantSubsets(rewriter, loop);
      }
    }
  }
};

} // namespace
