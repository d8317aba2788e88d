//===- MatmulTiles.cpp - The tiled matrix-product kernel class ------------===//
//
// Part of Loom. See the description of LoomGPUMapMatmuls in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "Launches.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPMATMULS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// A tile of the output is kTile x kTile elements, and a step of the
/// reduction kTile: 16 x 16 tiles of A and B in workgroup memory.
constexpr int64_t kTile = 16;
/// Threads of a workgroup: 16 columns of 8 rows, each thread computing the
/// output elements of its column in rows `ty` and `ty + 8` (Vulkan's
/// guaranteed 128 invocations).
constexpr int64_t kThreads = 128;
constexpr int64_t kRowsPerThread = kTile * kTile / kThreads;

/// A linalg op of the matrix-product class: parallel loops (batch..., m, n)
/// and one reduction loop k, `out += a * b` with a indexed by m and k, b by
/// k and n.
struct Matmul {
  linalg::LinalgOp op;
  /// The extents of the batch loops, and m, n, k.
  SmallVector<int64_t> batch;
  int64_t m = 0, n = 0, k = 0;
  /// The inputs: a (uses m, not n) and b (uses n, not m).
  OpOperand *a = nullptr, *b = nullptr;
};

/// Whether \p map's results are loop indices only.
bool isPermutationLike(AffineMap map) {
  return llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); });
}

/// Whether the payload of \p op is `out + in0 * in1` (either order of
/// each): f32 products summed, so that zeros past a tile's edge add
/// nothing.
bool isMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto add = dyn_cast<arith::AddFOp>(
      body->getTerminator()->getOperand(0).getDefiningOp());
  auto mul = dyn_cast<arith::MulFOp>(&body->front());
  if (!add || !mul)
    return false;
  BlockArgument out = op.getRegionOutputArgs().front();
  auto ins = op.getRegionInputArgs();
  bool sumsProduct = (add.getLhs() == out && add.getRhs() == mul) ||
                     (add.getRhs() == out && add.getLhs() == mul);
  bool multipliesInputs = (mul.getLhs() == ins[0] && mul.getRhs() == ins[1]) ||
                          (mul.getLhs() == ins[1] && mul.getRhs() == ins[0]);
  return sumsProduct && multipliesInputs;
}

/// \p op as a matrix product whose reduction has at least \p minDepth
/// steps, or failure (then the generic class maps it).
FailureOr<Matmul> classify(linalg::LinalgOp op, int64_t minDepth) {
  Matmul mm;
  mm.op = op;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2 || op->getNumRegions() != 1 ||
      op.getNumLoops() < 3 || op.getNumReductionLoops() != 1)
    return failure();
  auto outType = dyn_cast<MemRefType>(op.getDpsInits().front().getType());
  if (!outType || !outType.getElementType().isF32() || !isMultiplyAdd(op))
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = ranges.size(), kDim = numLoops - 1;
  unsigned mDim = numLoops - 3, nDim = numLoops - 2;
  if (iterators[kDim] != utils::IteratorType::reduction ||
      llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  // The output is indexed by the parallel loops in order: (batch..., m, n).
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() != numLoops - 1)
    return failure();
  for (unsigned d = 0; d + 1 < numLoops; ++d)
    if (outMap.getResult(d) != getAffineDimExpr(d, op.getContext()))
      return failure();
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (!isa<MemRefType>(in->get().getType()) || !isPermutationLike(map) ||
        !map.isFunctionOfDim(kDim))
      return failure();
    bool usesM = map.isFunctionOfDim(mDim), usesN = map.isFunctionOfDim(nDim);
    if (usesM && !usesN && !mm.a)
      mm.a = in;
    else if (usesN && !usesM && !mm.b)
      mm.b = in;
    else
      return failure();
  }
  mm.batch.assign(ranges.begin(), ranges.begin() + mDim);
  mm.m = ranges[mDim];
  mm.n = ranges[nDim];
  mm.k = ranges[kDim];
  if (mm.m == 0 || mm.n == 0 || mm.k < std::max<int64_t>(minDepth, 1))
    return failure();
  return mm;
}

/// The element of \p in at loop positions \p ivs, or 0 where \p inRange
/// is false (past the edge of the matrix).
Value loadOrZero(OpBuilder &b, Location loc, Matmul &mm, OpOperand *in,
                 ArrayRef<Value> ivs, Value inRange) {
  AffineMap map = mm.op.getMatchingIndexingMap(in);
  auto guard = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &tb, Location) {
        SmallVector<Value> at;
        for (AffineExpr e : map.getResults())
          at.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
        Value v = memref::LoadOp::create(tb, loc, in->get(), at);
        scf::YieldOp::create(tb, loc, v);
      },
      [&](OpBuilder &eb, Location) {
        Value zero = arith::ConstantOp::create(eb, loc, eb.getF32FloatAttr(0));
        scf::YieldOp::create(eb, loc, zero);
      });
  return guard.getResult(0);
}

/// `lhs < rhs && ...` of index values \p pairs.
Value allBelow(OpBuilder &b, Location loc,
               ArrayRef<std::pair<Value, int64_t>> pairs) {
  Value all;
  for (auto [v, bound] : pairs) {
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                              arith::ConstantIndexOp::create(b, loc, bound));
    all = all ? arith::AndIOp::create(b, loc, all, below).getResult() : below;
  }
  return all;
}

/// The loop positions of an element: the batch positions \p batch, then
/// m, n, k.
SmallVector<Value> positions(ArrayRef<Value> batch, Value m, Value n, Value k) {
  SmallVector<Value> ivs(batch);
  ivs.append({m, n, k});
  return ivs;
}

/// Stages the A and B tiles at reduction offset \p k0 into \p sharedA
/// (`[m][k]`) and \p sharedB (`[k][n]`), each thread two elements of each
/// (neighbouring threads neighbouring columns), zeros past the edges.
void stageTiles(OpBuilder &b, Location loc, Matmul &mm, ArrayRef<Value> batch,
                Value m0, Value n0, Value k0, Value tid, Value sharedA,
                Value sharedB) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  for (int64_t r = 0; r < kRowsPerThread; ++r) {
    Value e = arith::AddIOp::create(b, loc, tid, index(r * kThreads));
    Value row = arith::DivUIOp::create(b, loc, e, index(kTile));
    Value col = arith::RemUIOp::create(b, loc, e, index(kTile));
    Value am = arith::AddIOp::create(b, loc, m0, row);
    Value ak = arith::AddIOp::create(b, loc, k0, col);
    Value a = loadOrZero(b, loc, mm, mm.a, positions(batch, am, n0, ak),
                         allBelow(b, loc, {{am, mm.m}, {ak, mm.k}}));
    memref::StoreOp::create(b, loc, a, sharedA, ValueRange{row, col});
    Value bk = arith::AddIOp::create(b, loc, k0, row);
    Value bn = arith::AddIOp::create(b, loc, n0, col);
    Value bv = loadOrZero(b, loc, mm, mm.b, positions(batch, m0, bn, bk),
                          allBelow(b, loc, {{bk, mm.k}, {bn, mm.n}}));
    memref::StoreOp::create(b, loc, bv, sharedB, ValueRange{row, col});
  }
}

/// Replaces \p mm's op with a launch of one workgroup per 16 x 16 output
/// tile (and batch position): per reduction step of 16 the workgroup
/// stages the A and B tiles in workgroup memory, a barrier, each thread
/// accumulates its two elements from them, a barrier; then each thread
/// adds its sums to the output (guarded at the edges).
LogicalResult emitMatmulKernel(Matmul &mm) {
  int64_t mTiles = llvm::divideCeil(mm.m, kTile);
  int64_t nTiles = llvm::divideCeil(mm.n, kTile);
  SmallVector<int64_t> tiles(mm.batch);
  tiles.append({mTiles, nTiles});
  int64_t blocks = mTiles * nTiles;
  for (int64_t e : mm.batch)
    blocks *= e;
  FailureOr<Grid> grid = gridFor(blocks);
  if (failed(grid) || blocks == 0)
    return failure();
  linalg::LinalgOp op = mm.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  mlir::gpu::LaunchOp launch = createLaunch(b, loc, *grid, kThreads);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value sharedA = allocWorkgroupMemory(b, loc, {kTile, kTile}, b.getF32Type());
  Value sharedB = allocWorkgroupMemory(b, loc, {kTile, kTile}, b.getF32Type());
  Value block = linearBlockId(b, loc, launch, *grid);
  // A block past the last tile (the grid's last column) computes the last
  // tile and stores nothing: every thread reaches the barriers.
  Value tile = arith::MinUIOp::create(b, loc, block, index(blocks - 1));
  SmallVector<Value> at = delinearize(b, loc, tile, tiles);
  Value n0 = arith::MulIOp::create(b, loc, at.pop_back_val(), index(kTile));
  Value m0 = arith::MulIOp::create(b, loc, at.pop_back_val(), index(kTile));
  ArrayRef<Value> batch = at;
  Value tid = launch.getThreadIds().x;
  Value tx = arith::RemUIOp::create(b, loc, tid, index(kTile));
  Value ty = arith::DivUIOp::create(b, loc, tid, index(kTile));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> init(kRowsPerThread, zero);
  auto steps = scf::ForOp::create(
      b, loc, index(0), index(mm.k), index(kTile), init,
      [&](OpBuilder &sb, Location, Value k0, ValueRange sums) {
        stageTiles(sb, loc, mm, batch, m0, n0, k0, tid, sharedA, sharedB);
        mlir::gpu::BarrierOp::create(sb, loc);
        auto inner = scf::ForOp::create(
            sb, loc, arith::ConstantIndexOp::create(sb, loc, 0),
            arith::ConstantIndexOp::create(sb, loc, kTile),
            arith::ConstantIndexOp::create(sb, loc, 1), sums,
            [&](OpBuilder &ib, Location, Value kk, ValueRange acc) {
              Value bv =
                  memref::LoadOp::create(ib, loc, sharedB, ValueRange{kk, tx});
              SmallVector<Value> next;
              for (int64_t r = 0; r < kRowsPerThread; ++r) {
                Value row =
                    arith::AddIOp::create(ib, loc, ty,
                                          arith::ConstantIndexOp::create(
                                              ib, loc, r * kThreads / kTile));
                Value av = memref::LoadOp::create(ib, loc, sharedA,
                                                  ValueRange{row, kk});
                Value p = arith::MulFOp::create(ib, loc, av, bv);
                next.push_back(arith::AddFOp::create(ib, loc, acc[r], p));
              }
              scf::YieldOp::create(ib, loc, next);
            });
        mlir::gpu::BarrierOp::create(sb, loc);
        scf::YieldOp::create(sb, loc, inner.getResults());
      });
  Value n = arith::AddIOp::create(b, loc, n0, tx);
  Value out = op.getDpsInits().front();
  for (int64_t r = 0; r < kRowsPerThread; ++r) {
    Value m = arith::AddIOp::create(
        b, loc, m0,
        arith::AddIOp::create(b, loc, ty, index(r * kThreads / kTile)));
    Value store = allBelow(b, loc, {{m, mm.m}, {n, mm.n}, {block, blocks}});
    auto storeIf = scf::IfOp::create(b, loc, store, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(storeIf.thenBlock());
    SmallVector<Value> c(batch);
    c.append({m, n});
    Value old = memref::LoadOp::create(sb, loc, out, c);
    Value sum = arith::AddFOp::create(sb, loc, old, steps.getResult(r));
    memref::StoreOp::create(sb, loc, sum, out, c);
  }
  op->erase();
  clonePureProducers(launch);
  return success();
}

struct MapMatmuls
    : public loom::codegen::gpu::impl::LoomGPUMapMatmulsBase<MapMatmuls> {
  using LoomGPUMapMatmulsBase::LoomGPUMapMatmulsBase;

  void runOnOperation() override {
    SmallVector<Matmul> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<mlir::gpu::LaunchOp>())
        return;
      if (auto mm = classify(op, minDepth); succeeded(mm))
        found.push_back(*mm);
    });
    for (Matmul &mm : found)
      if (failed(emitMatmulKernel(mm))) {
        mm.op->emitOpError("has more output tiles than a grid of 65535 x "
                           "65535 holds");
        return signalPassFailure();
      }
  }
};

} // namespace
