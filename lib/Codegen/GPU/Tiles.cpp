//===- Tiles.cpp - Contractions as tiles in workgroup memory --------------===//
//
// Part of Loom. See Tiles.h and docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "Tiles.h"

#include "TileKernel.h"

#include "KernelClasses.h"

#include "Launches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace loom::codegen::gpu {
using namespace tiles;
namespace {

/// Products of at most kRowFormMaxRows rows of A (a decoder's step, one
/// token a sequence; attention's values for one query) take the row form:
/// a workgroup per row and kRowCols adjacent output columns (32 bytes of a
/// row of B: one memory sector), its threads kRowSlices slices of k.
constexpr int64_t kRowFormMaxRows = 4;
constexpr int64_t kRowCols = 8;
constexpr int64_t kRowSlices = kThreads / kRowCols;

/// Whether \p op converts one float to another (arith.extf, arith.truncf).
bool isFloatConversion(Operation *op) {
  return isa<arith::ExtFOp, arith::TruncFOp>(op);
}

/// \p v without the float conversions it may be made by, and their number
/// in \p conversions: a bf16 or f16 product's operand extended to f32 in
/// the payload (the f32 accumulation of --precision's narrow products,
/// docs/Precision.md), or an f32 operand rounded to the narrow type and
/// extended back (the cast before the product fused into it).
Value unconverted(Value v, size_t &conversions) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isFloatConversion(def) || !def->getResult(0).hasOneUse())
      break;
    v = def->getOperand(0);
    ++conversions;
  }
  return v;
}

/// The float conversions the payload of \p op applies to the element of
/// \p in before multiplying it, in order (unconverted's).
SmallVector<Operation *> conversionsOf(linalg::LinalgOp op, OpOperand *in) {
  SmallVector<Operation *> chain;
  Value v = op.getMatchingBlockArgument(in);
  while (v.hasOneUse() && isFloatConversion(*v.getUsers().begin())) {
    chain.push_back(*v.getUsers().begin());
    v = chain.back()->getResult(0);
  }
  return chain;
}

/// The type (bf16, f16 or tf32) both of \p c's inputs are multiplied in:
/// each input's conversions end in an extension from it to f32 (the
/// payload of --precision's narrow products, or the truncation to tf32 and
/// extension back of tg.round_tf32, docs/Precision.md); else null.
Type narrowOperandType(const Contraction &c) {
  Type narrow;
  for (OpOperand *in : {c.a, c.b}) {
    SmallVector<Operation *> chain = conversionsOf(c.op, in);
    auto ext = chain.empty() ? nullptr : dyn_cast<arith::ExtFOp>(chain.back());
    Type from = ext ? ext.getIn().getType() : Type();
    if (!from || !(from.isBF16() || from.isF16() || from.isTF32()) ||
        (narrow && narrow != from))
      return Type();
    narrow = from;
  }
  return narrow;
}

/// Whether the payload of \p op is `out + in0 * in1` (either order of
/// each), each input possibly converted between floats first (ending in
/// f32: unconverted): f32 products summed, so that zeros past a tile's
/// edge add nothing.
bool isMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto add = dyn_cast_or_null<arith::AddFOp>(
      body->getTerminator()->getOperand(0).getDefiningOp());
  auto mul = add ? add.getRhs().getDefiningOp<arith::MulFOp>() : nullptr;
  if (add && !mul)
    mul = add.getLhs().getDefiningOp<arith::MulFOp>();
  if (!add || !mul)
    return false;
  BlockArgument out = op.getRegionOutputArgs().front();
  auto ins = op.getRegionInputArgs();
  size_t conversions = 0;
  Value lhs = unconverted(mul.getLhs(), conversions),
        rhs = unconverted(mul.getRhs(), conversions);
  if (body->getOperations().size() != 3 + conversions)
    return false;
  bool sumsProduct = (add.getLhs() == out && add.getRhs() == mul) ||
                     (add.getRhs() == out && add.getLhs() == mul);
  bool multipliesInputs =
      (lhs == ins[0] && rhs == ins[1]) || (lhs == ins[1] && rhs == ins[0]);
  return sumsProduct && multipliesInputs;
}

/// `lhs < rhs && ...` of index values \p pairs.
Value allBelow(OpBuilder &b, Location loc,
               ArrayRef<std::pair<Value, int64_t>> pairs) {
  Value all;
  for (auto [v, bound] : pairs) {
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                        index(b, loc, bound));
    all = all ? arith::AndIOp::create(b, loc, all, below).getResult() : below;
  }
  return all;
}

} // namespace

namespace tiles {

void TileKernel::place(OpBuilder &b, SmallVectorImpl<Value> &ivs,
                       ArrayRef<unsigned> loops, Value at) const {
  if (loops.size() == 1) {
    ivs[loops.front()] = at;
    return;
  }
  SmallVector<int64_t> extents;
  for (unsigned l : loops)
    extents.push_back(c.ranges[l]);
  for (auto [l, v] : llvm::zip(loops, delinearize(b, loc, at, extents)))
    ivs[l] = v;
}

int64_t TileKernel::loadWidth(OpOperand *in, ArrayRef<unsigned> loops,
                              int64_t perThread) const {
  int64_t width = std::min<int64_t>(4, perThread);
  auto type = dyn_cast<MemRefType>(in->get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (loads == Loads::Scalar || width < 2 || !type ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % width != 0 ||
      c.extent(loops) % width != 0)
    return 1;
  // Each loop alone in one index, the innermost at stride 1 and each
  // other at its inner neighbour's stride times that one's extent; every
  // other index's stride a multiple of the width.
  AffineMap map = c.op.getMatchingIndexingMap(in);
  int64_t expected = 1;
  SmallVector<bool> isGroupIndex(map.getNumResults(), false);
  for (unsigned loop : llvm::reverse(loops)) {
    std::optional<unsigned> at;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (!e.isFunctionOfDim(loop))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (at || !dim || dim.getPosition() != loop)
        return 1;
      at = i;
    }
    // The innermost loop indexes the last dimension (loadOrZero steps the
    // last index), at stride 1.
    if (!at || strides[*at] != expected ||
        (expected == 1 && *at + 1 != map.getNumResults()))
      return 1;
    isGroupIndex[*at] = true;
    expected *= c.ranges[loop];
  }
  for (auto [i, stride] : llvm::enumerate(strides))
    if (!isGroupIndex[i] &&
        (ShapedType::isDynamic(stride) || stride % width != 0))
      return 1;
  return width;
}

SmallVector<Value, 4>
TileKernel::loadOrZero(OpBuilder &b, OpOperand *in, ArrayRef<unsigned> rowLoops,
                       Value rowAt, ArrayRef<unsigned> colLoops, Value colAt,
                       Value inRange, int64_t width) const {
  auto guard = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &tb, Location) {
        SmallVector<Value> ivs(base);
        place(tb, ivs, rowLoops, rowAt);
        place(tb, ivs, colLoops, colAt);
        SmallVector<Value> at = indicesOf(tb, in, ivs);
        Value memory = in->get();
        Type element = cast<MemRefType>(memory.getType()).getElementType();
        SmallVector<Value, 4> values;
        if (width > 1 && loads == Loads::Vector) {
          auto vector = vector::LoadOp::create(
              tb, loc, VectorType::get({width}, element), memory, at,
              /*nontemporal=*/false,
              llvm::Align(width * element.getIntOrFloatBitWidth() / 8));
          for (int64_t i = 0; i < width; ++i)
            values.push_back(vector::ExtractOp::create(tb, loc, vector, i));
        } else {
          for (int64_t i = 0; i < width; ++i) {
            SmallVector<Value> next(at);
            if (i > 0)
              next.back() = plusIndex(tb, loc, at.back(), i);
            values.push_back(memref::LoadOp::create(tb, loc, memory, next));
          }
        }
        // The payload's conversions of each element (isMultiplyAdd): a
        // narrow operand summed in f32, or staged narrow.
        SmallVector<Operation *> chain = conversionsOf(c.op, in);
        if (!staged.isF32())
          chain.pop_back();
        for (Value &v : values)
          for (Operation *conversion : chain) {
            IRMapping map;
            map.map(conversion->getOperand(0), v);
            v = tb.clone(*conversion, map)->getResult(0);
          }
        scf::YieldOp::create(tb, loc, values);
      },
      [&](OpBuilder &eb, Location) {
        Value zero = arith::ConstantOp::create(eb, loc, staged,
                                               eb.getFloatAttr(staged, 0));
        scf::YieldOp::create(eb, loc, SmallVector<Value>(width, zero));
      });
  return SmallVector<Value, 4>(guard.getResults());
}

TileKernel::Staged TileKernel::loadTiles(OpBuilder &b, Value k0,
                                         Value storeInto) const {
  int64_t m = c.extent(c.m), n = c.extent(c.n), k = c.extent(c.k);
  Staged s;
  // The groups of an operand's tile (tileRows x tileCols) that the threads
  // load, each \p load's elements at the group's row and column: along a
  // row where the tile's columns are contiguous in memory, else along a
  // column where its rows are (a transposed operand: thread t the group of
  // column t % tileCols), else an element a group.
  auto stage =
      [&](OpOperand *in, ArrayRef<unsigned> rowLoops,
          ArrayRef<unsigned> colLoops, int64_t tileRows, int64_t tileCols,
          Value tile,
          function_ref<SmallVector<Value, 4>(Value, Value, int64_t)> load) {
        int64_t perThread = tileRows * tileCols / kThreads;
        int64_t width = loadWidth(in, colLoops, perThread);
        bool alongColumn = false;
        if (width == 1) {
          width = loadWidth(in, rowLoops, perThread);
          alongColumn = width > 1;
        }
        for (int64_t r = 0; r < perThread / width; ++r) {
          Value group =
              arith::AddIOp::create(b, loc, tid, index(b, loc, r * kThreads));
          Value row, col;
          if (alongColumn) {
            col = remIndex(b, group, tileCols);
            row = mulIndex(b, divIndex(b, group, tileCols), width);
          } else {
            Value e = mulIndex(b, group, width);
            row = divIndex(b, e, tileCols);
            col = remIndex(b, e, tileCols);
          }
          for (auto [i, v] : llvm::enumerate(load(row, col, width))) {
            s.values.push_back(v);
            s.rows.push_back(
                i == 0 || !alongColumn ? row : plusIndex(b, loc, row, i));
            s.cols.push_back(i == 0 || alongColumn ? col
                                                   : plusIndex(b, loc, col, i));
            if (storeInto)
              memref::StoreOp::create(b, loc, v, tile,
                                      tileElement(b, tile == sharedA, storeInto,
                                                  s.rows.back(),
                                                  s.cols.back()));
          }
        }
      };
  stage(c.a, c.m, c.k, t.tileM, kStep, sharedA,
        [&](Value row, Value col, int64_t width) {
          Value am = arith::AddIOp::create(b, loc, m0, row);
          Value ak = arith::AddIOp::create(b, loc, k0, col);
          return loadOrZero(b, c.a, c.m, am, c.k, ak,
                            allBelow(b, loc, {{am, m}, {ak, k}}), width);
        });
  stage(c.b, c.k, c.n, kStep, t.tileN, sharedB,
        [&](Value row, Value col, int64_t width) {
          Value bk = arith::AddIOp::create(b, loc, k0, row);
          Value bn = arith::AddIOp::create(b, loc, n0, col);
          return loadOrZero(b, c.b, c.k, bk, c.n, bn,
                            allBelow(b, loc, {{bk, k}, {bn, n}}), width);
        });
  return s;
}

void TileKernel::storeTiles(OpBuilder &b, const Staged &s, Value buffer) const {
  size_t aElements = t.tileM * kStep / kThreads;
  for (auto [i, v] : llvm::enumerate(s.values)) {
    bool ofA = i < aElements;
    memref::StoreOp::create(b, loc, v, ofA ? sharedA : sharedB,
                            tileElement(b, ofA, buffer, s.rows[i], s.cols[i]));
  }
}

ValueRange TileKernel::sumSteps(
    OpBuilder &b, ArrayRef<Value> init,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> accumulate) {
  int64_t k = c.extent(c.k);
  Value first = index(b, loc, 0);
  if (doubleBuffered) {
    storeTiles(b, loadTiles(b, first), first);
    publishTiles(b);
    mlir::gpu::BarrierOp::create(b, loc);
  }
  auto steps = scf::ForOp::create(
      b, loc, first, index(b, loc, k), index(b, loc, kStep), init,
      [&](OpBuilder &sb, Location, Value k0, ValueRange sums) {
        SmallVector<Value> next;
        if (!doubleBuffered) {
          readBuffer = first;
          loadTiles(sb, k0, /*storeInto=*/first);
          mlir::gpu::BarrierOp::create(sb, loc);
          next = accumulate(sb, sums);
        } else {
          Value step =
              arith::DivUIOp::create(sb, loc, k0, index(sb, loc, kStep));
          readBuffer = arith::RemUIOp::create(sb, loc, step, index(sb, loc, 2));
          Value other =
              arith::SubIOp::create(sb, loc, index(sb, loc, 1), readBuffer);
          // Past the last step the loads are zeros (their guards), stored
          // into the buffer nothing reads again.
          Staged ahead = loadTiles(sb, plusIndex(sb, loc, k0, kStep));
          next = accumulate(sb, sums);
          storeTiles(sb, ahead, other);
          publishTiles(sb);
        }
        mlir::gpu::BarrierOp::create(sb, loc);
        scf::YieldOp::create(sb, loc, next);
      });
  return steps.getResults();
}

SmallVector<Value> TileKernel::accumulate(OpBuilder &b, Value tx, Value ty,
                                          ValueRange sums) const {
  auto inner = scf::ForOp::create(
      b, loc, index(b, loc, 0), index(b, loc, kStep), index(b, loc, 1), sums,
      [&](OpBuilder &ib, Location, Value kk, ValueRange acc) {
        SmallVector<Value> as, bs, next;
        for (int64_t i = 0; i < t.rows(); ++i)
          as.push_back(memref::LoadOp::create(
              ib, loc, sharedA, tileAt(readBuffer, rowOf(ib, ty, i), kk)));
        for (int64_t j = 0; j < t.cols(); ++j)
          bs.push_back(memref::LoadOp::create(
              ib, loc, sharedB, tileAt(readBuffer, kk, colOf(ib, tx, j))));
        for (int64_t i = 0; i < t.rows(); ++i)
          for (int64_t j = 0; j < t.cols(); ++j) {
            Value p = arith::MulFOp::create(ib, loc, as[i], bs[j]);
            next.push_back(
                arith::AddFOp::create(ib, loc, acc[i * t.cols() + j], p));
          }
        scf::YieldOp::create(ib, loc, next);
      });
  return SmallVector<Value>(inner.getResults());
}

} // namespace tiles

namespace {

/// The workgroups of \p c at \p mTiles x \p nTiles a batch position: the
/// extents of their positions (the batch loops', then m's and n's tiles),
/// their number, the grid that holds them (failure: none does), and their
/// launch of kThreads threads, created by \p b, with its linear block id.
struct Workgroups {
  SmallVector<int64_t> tiles;
  int64_t blocks;
  Grid grid;
  mlir::gpu::LaunchOp launch;
  Value block;
};
FailureOr<Workgroups> launchWorkgroups(const Contraction &c, OpBuilder &b,
                                       int64_t mTiles, int64_t nTiles) {
  Workgroups w;
  for (unsigned l : c.batch)
    w.tiles.push_back(c.ranges[l]);
  w.tiles.append({mTiles, nTiles});
  w.blocks = c.extent(c.batch) * mTiles * nTiles;
  FailureOr<Grid> grid = gridFor(w.blocks);
  if (failed(grid) || w.blocks == 0)
    return failure();
  w.grid = *grid;
  Location loc = c.op->getLoc();
  w.launch = createLaunch(b, loc, w.grid, kThreads);
  w.block = linearBlockId(b, loc, w.launch, w.grid);
  return w;
}

/// What the sums of \p c's output element at \p to start from: its
/// prologue's value (the fill the kernel took in), else the element.
Value startOf(OpBuilder &b, const Contraction &c, ValueRange to) {
  if (c.prologue)
    return linalg::FillOp(c.prologue).getInputs().front();
  linalg::LinalgOp op = c.op;
  return memref::LoadOp::create(b, op.getLoc(),
                                op.getDpsInitOperand(0)->get(), to);
}

/// Stores \p sum, \p c's output element at \p to, or its epilogue's value
/// of it: the epilogue's payload with the output read as \p sum and its
/// other inputs loaded at the element's position (its loops are the
/// output's dimensions in order).
void storeResult(OpBuilder &b, const Contraction &c, Value sum, ValueRange to) {
  linalg::LinalgOp op = c.op;
  Location loc = op.getLoc();
  Value out = op.getDpsInitOperand(0)->get();
  Value result = sum;
  if (linalg::LinalgOp epilogue = c.epilogue) {
    SmallVector<Value> ivs(to.begin(), to.end());
    result = payloadAt(b, loc, epilogue, ivs, [&](OpOperand &operand) {
               return operand.get() == out ? sum : Value();
             }).front();
  }
  memref::StoreOp::create(b, loc, result, out, to);
}

/// Erases \p c's op, and its prologue and epilogue with it.
void eraseWithCompanions(Contraction &c) {
  c.op->erase();
  if (c.prologue)
    c.prologue->erase();
  if (c.epilogue)
    c.epilogue->erase();
}

/// The row form of \p c (kRowFormMaxRows): thread (slice, col) of the
/// workgroup of row r and columns [n0, n0 + kRowCols) sums
/// A[r][k] * B[k][n0 + col] over k = slice, slice + kRowSlices, ... (its
/// loads of B coalesced with the other columns' threads, zeros past n);
/// the partial sums meet in workgroup memory, a barrier, and the threads of
/// slice 0 add the kRowSlices partials of their column, in slice order, to
/// the output element. Fails when no grid holds the workgroups.
LogicalResult emitRowContraction(Contraction &c) {
  int64_t m = c.extent(c.m), n = c.extent(c.n), k = c.extent(c.k);
  linalg::LinalgOp op = c.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  FailureOr<Workgroups> w =
      launchWorkgroups(c, b, m, llvm::divideCeil(n, kRowCols));
  if (failed(w))
    return failure();
  int64_t blocks = w->blocks;
  mlir::gpu::LaunchOp launch = w->launch;
  Value block = w->block;
  TileKernel kernel(c, kSmallTiles, loc, b.getF32Type(), Type());
  Value partials =
      allocWorkgroupMemory(b, loc, {kRowSlices, kRowCols}, b.getF32Type());
  // A block past the last (the grid's last column) computes the last
  // workgroup's sums and stores nothing: every thread reaches the barrier.
  Value last = arith::MinUIOp::create(b, loc, block, index(b, loc, blocks - 1));
  SmallVector<Value> at = delinearize(b, loc, last, w->tiles);
  Value n0 =
      arith::MulIOp::create(b, loc, at.pop_back_val(), index(b, loc, kRowCols));
  Value row = at.pop_back_val();
  kernel.base.assign(c.ranges.size(), index(b, loc, 0));
  for (auto [l, v] : llvm::zip(c.batch, at))
    kernel.base[l] = v;
  Value tid = launch.getThreadIds().x;
  Value col = arith::RemUIOp::create(b, loc, tid, index(b, loc, kRowCols));
  Value slice = arith::DivUIOp::create(b, loc, tid, index(b, loc, kRowCols));
  Value column = arith::AddIOp::create(b, loc, n0, col);
  Value inside = allBelow(b, loc, {{column, n}});
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value always = arith::ConstantIntOp::create(b, loc, 1, 1);
  auto sum = scf::ForOp::create(
      b, loc, slice, index(b, loc, k), index(b, loc, kRowSlices),
      ValueRange{zero}, [&](OpBuilder &fb, Location, Value kk, ValueRange acc) {
        Value a = kernel.loadOrZero(fb, c.a, c.m, row, c.k, kk, always).front();
        Value bv =
            kernel.loadOrZero(fb, c.b, c.k, kk, c.n, column, inside).front();
        Value p = arith::MulFOp::create(fb, loc, a, bv);
        Value next = arith::AddFOp::create(fb, loc, acc.front(), p);
        scf::YieldOp::create(fb, loc, next);
      });
  memref::StoreOp::create(b, loc, sum.getResult(0), partials,
                          ValueRange{slice, col});
  mlir::gpu::BarrierOp::create(b, loc);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slice,
                                      index(b, loc, 0));
  Value store = arith::AndIOp::create(
      b, loc, first, allBelow(b, loc, {{column, n}, {block, blocks}}));
  auto storeIf = scf::IfOp::create(b, loc, store, /*withElse=*/false);
  OpBuilder sb = OpBuilder::atBlockBegin(storeIf.thenBlock());
  Value total = zero;
  for (int64_t s = 0; s < kRowSlices; ++s)
    total = arith::AddFOp::create(
        sb, loc, total,
        memref::LoadOp::create(sb, loc, partials,
                               ValueRange{index(sb, loc, s), col}));
  OpOperand *out = op.getDpsInitOperand(0);
  SmallVector<Value> ivs(kernel.base);
  kernel.place(sb, ivs, c.m, row);
  kernel.place(sb, ivs, c.n, column);
  SmallVector<Value> to = kernel.indicesOf(sb, out, ivs);
  Value old = startOf(sb, c, to);
  storeResult(sb, c, arith::AddFOp::create(sb, loc, old, total), to);
  eraseWithCompanions(c);
  clonePureProducers(launch);
  return success();
}

} // namespace

int64_t Contraction::extent(ArrayRef<unsigned> loops) const {
  int64_t e = 1;
  for (unsigned l : loops)
    e *= ranges[l];
  return e;
}

FailureOr<Contraction> classifyContraction(linalg::LinalgOp op) {
  Contraction c;
  c.op = op;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2 || op->getNumRegions() != 1)
    return failure();
  OpOperand *out = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(out->get().getType());
  if (!outType || !outType.getElementType().isF32() || !isMultiplyAdd(op))
    return failure();
  c.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(c.ranges, ShapedType::isDynamic))
    return failure();
  AffineMap outMap = op.getMatchingIndexingMap(out);
  if (outMap.getNumResults() == 0 || !outMap.isProjectedPermutation())
    return failure();
  // B is the input the output's innermost index varies, A the other.
  unsigned inner = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()))
      return failure();
    bool usesInner = op.getMatchingIndexingMap(in).isFunctionOfDim(inner);
    OpOperand *&role = usesInner ? c.b : c.a;
    if (role)
      return failure();
    role = in;
  }
  AffineMap aMap = op.getMatchingIndexingMap(c.a);
  AffineMap bMap = op.getMatchingIndexingMap(c.b);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < c.ranges.size(); ++d) {
    bool inA = aMap.isFunctionOfDim(d), inB = bMap.isFunctionOfDim(d);
    bool inOut = outMap.isFunctionOfDim(d);
    if (iterators[d] == utils::IteratorType::reduction && !inOut && inA && inB)
      c.k.push_back(d);
    else if (iterators[d] != utils::IteratorType::parallel || !inOut ||
             (!inA && !inB))
      return failure();
    else if (inA && inB)
      c.batch.push_back(d);
    else
      (inA ? c.m : c.n).push_back(d);
  }
  if (c.m.empty() || c.n.empty() || c.k.empty() || c.extent(c.m) == 0 ||
      c.extent(c.n) == 0 || c.extent(c.k) == 0)
    return failure();
  return c;
}

/// The places (row, column in the tile) of \p kernel's thread's sums, in
/// the order its form's accumulate yields them: the warpgroup form's
/// (\p warpgroup: wgmma's D, warp w's rows 16 w + group and 8 below,
/// columns 8 j + pairStart + {0, 1}), the tensor-core form's (its warp's
/// quarter at \p warpRow, \p warpCol: mma.sync's D per 16 x 8) or the
/// scalar form's (the register tile of thread (\p tx, \p ty)).
static SmallVector<std::pair<Value, Value>>
placesOfSums(OpBuilder &b, const TileKernel &kernel, bool warpgroup, Value tx,
             Value ty, Value warpRow, Value warpCol) {
  Location loc = kernel.loc;
  Tiling t = kernel.t;
  SmallVector<std::pair<Value, Value>> places;
  if (warpgroup) {
    Value row0 = arith::AddIOp::create(
        b, loc, kernel.mulIndex(b, kernel.lane.warp, kMmaM), kernel.lane.group);
    for (int64_t j = 0; j < t.tileN / kMmaN; ++j)
      for (int64_t e = 0; e < 4; ++e)
        places.push_back(
            {plusIndex(b, loc, row0, (e / 2) * 8),
             plusIndex(b, loc, kernel.lane.pairStart, j * kMmaN + e % 2)});
  } else if (kernel.multiplied) {
    Value row0 = arith::AddIOp::create(b, loc, warpRow, kernel.lane.group);
    Value col0 = arith::AddIOp::create(b, loc, warpCol, kernel.lane.pairStart);
    for (int64_t i = 0; i < t.tileM / kWarpRows / kMmaM; ++i)
      for (int64_t j = 0; j < t.tileN / kWarpCols / kMmaN; ++j)
        for (int64_t e = 0; e < 4; ++e)
          places.push_back({plusIndex(b, loc, row0, i * kMmaM + (e / 2) * 8),
                            plusIndex(b, loc, col0, j * kMmaN + e % 2)});
  } else {
    for (int64_t i = 0; i < t.rows(); ++i)
      for (int64_t j = 0; j < t.cols(); ++j)
        places.push_back({kernel.rowOf(b, ty, i), kernel.colOf(b, tx, j)});
  }
  return places;
}

LogicalResult emitTiledContraction(Contraction &c, int64_t largeTileBlocks,
                                   TensorCores tensorCores) {
  int64_t m = c.extent(c.m), n = c.extent(c.n);
  if (m <= kRowFormMaxRows)
    return emitRowContraction(c);
  Type narrow =
      tensorCores != TensorCores::None ? narrowOperandType(c) : Type();
  auto blocksOf = [&](Tiling t) {
    return c.extent(c.batch) * llvm::divideCeil(m, t.tileM) *
           llvm::divideCeil(n, t.tileN);
  };
  // The warpgroup form (wgmma) multiplies bf16 and f16; TF32 keeps
  // mma.sync.
  bool warpgroup = narrow && !narrow.isTF32() && isWarpgroup(tensorCores);
  Tiling large = warpgroup ? kLargeWarpgroupTiles
                 : narrow  ? kLargeMmaTiles
                           : kLargeTiles;
  Tiling small = warpgroup ? kSmallWarpgroupTiles
                 : narrow  ? kSmallMmaTiles
                           : kSmallTiles;
  Tiling t = largeTileBlocks >= 0 && int64_t(blocksOf(large)) >= largeTileBlocks
                 ? large
                 : small;
  linalg::LinalgOp op = c.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  FailureOr<Workgroups> w = launchWorkgroups(
      c, b, llvm::divideCeil(m, t.tileM), llvm::divideCeil(n, t.tileN));
  if (failed(w))
    return failure();
  int64_t blocks = w->blocks;
  mlir::gpu::LaunchOp launch = w->launch;
  // bf16 and f16 operands are staged narrow; TF32 ones as the f32 values
  // of their rounding.
  Type staged = narrow && !narrow.isTF32() ? narrow : b.getF32Type();
  TileKernel kernel(c, t, loc, staged, narrow);
  kernel.loads = tensorCores == TensorCores::None ? TileKernel::Loads::Scalar
                 : isEmulated(tensorCores) ? TileKernel::Loads::EmulatedVector
                                           : TileKernel::Loads::Vector;
  // The tensor-core form double-buffers its tiles (sumSteps). Where
  // ldmatrix reads them (bf16, f16), each row is padded by 16 bytes, so
  // that the 8 rows of a matrix (16 bytes each) fall in distinct banks.
  kernel.doubleBuffered = bool(narrow);
  kernel.coreMatrices = warpgroup;
  kernel.emulatedWarpgroup = warpgroup && isEmulated(tensorCores);
  int64_t padding =
      narrow && !narrow.isTF32() && !warpgroup ? kLdmatrixPadding : 0;
  auto tiles = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t, 3> shape = {rows, cols + padding};
    if (kernel.doubleBuffered)
      shape.insert(shape.begin(), 2);
    // ldmatrix's row starts are 16-byte aligned.
    std::optional<uint64_t> alignment;
    if (padding)
      alignment = 16;
    return allocWorkgroupMemory(b, loc, shape, kernel.staged, alignment);
  };
  // The warpgroup form's tiles: \p mn rows (A's m, B's n) of a step's k,
  // as core matrices (TileKernel::tileElement), 128-byte aligned (a
  // descriptor's start address must be 16-byte aligned).
  auto coreTiles = [&](int64_t mn) {
    int64_t perRow = kCoreRowBytes * 8 / kernel.staged.getIntOrFloatBitWidth();
    return allocWorkgroupMemory(
        b, loc, {2, mn / kCoreRows, kStep / perRow, kCoreRows, perRow},
        kernel.staged, 128);
  };
  kernel.sharedA = warpgroup ? coreTiles(t.tileM) : tiles(t.tileM, kStep);
  kernel.sharedB = warpgroup ? coreTiles(t.tileN) : tiles(kStep, t.tileN);
  Value block = w->block;
  // A block past the last tile (the grid's last column) computes the last
  // tile and stores nothing: every thread reaches the barriers.
  Value tile = arith::MinUIOp::create(b, loc, block, index(b, loc, blocks - 1));
  SmallVector<Value> at = delinearize(b, loc, tile, w->tiles);
  kernel.n0 =
      arith::MulIOp::create(b, loc, at.pop_back_val(), index(b, loc, t.tileN));
  kernel.m0 =
      arith::MulIOp::create(b, loc, at.pop_back_val(), index(b, loc, t.tileM));
  kernel.base.assign(c.ranges.size(), index(b, loc, 0));
  for (auto [l, v] : llvm::zip(c.batch, at))
    kernel.base[l] = v;
  kernel.tid = launch.getThreadIds().x;
  auto div = [&](Value v, int64_t d) -> Value {
    return arith::DivUIOp::create(b, loc, v, index(b, loc, d));
  };
  auto rem = [&](Value v, int64_t d) -> Value {
    return arith::RemUIOp::create(b, loc, v, index(b, loc, d));
  };
  // The thread's roles: (tx, ty) of the register tiles, or the lane's
  // group and pairStart in its warp's quarter of the tile.
  Value tx, ty, warpRow, warpCol;
  if (!narrow) {
    tx = rem(kernel.tid, kThreadCols);
    ty = div(kernel.tid, kThreadCols);
  } else {
    Value warp = div(kernel.tid, kWarpSize), lane = rem(kernel.tid, kWarpSize);
    Value pairStart =
        arith::MulIOp::create(b, loc, rem(lane, 4), index(b, loc, 2));
    kernel.lane = {warp, lane, div(lane, 4), rem(lane, 4), pairStart};
    warpRow = arith::MulIOp::create(b, loc, div(warp, kWarpCols),
                                    index(b, loc, t.tileM / kWarpRows));
    warpCol = arith::MulIOp::create(b, loc, rem(warp, kWarpCols),
                                    index(b, loc, t.tileN / kWarpCols));
    if (isEmulated(tensorCores) && !warpgroup) {
      int64_t warps = kWarpRows * kWarpCols;
      kernel.emulatedA =
          allocWorkgroupMemory(b, loc, {warps, kMmaM, kStep}, b.getF32Type());
      kernel.emulatedB =
          allocWorkgroupMemory(b, loc, {warps, kStep, kMmaN}, b.getF32Type());
      if (!narrow.isTF32())
        kernel.emulatedRows =
            allocWorkgroupMemory(b, loc, {warps, kWarpSize, 2}, b.getI32Type());
    }
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> init(t.rows() * t.cols(), zero);
  ValueRange sums =
      kernel.sumSteps(b, init, [&](OpBuilder &sb, ValueRange acc) {
        if (warpgroup)
          return kernel.accumulateWgmma(sb, acc);
        return narrow ? kernel.accumulateMma(sb, warpRow, warpCol, acc)
                      : kernel.accumulate(sb, tx, ty, acc);
      });
  OpOperand *out = op.getDpsInitOperand(0);
  SmallVector<std::pair<Value, Value>> places =
      placesOfSums(b, kernel, warpgroup, tx, ty, warpRow, warpCol);
  for (auto [s, place] : llvm::enumerate(places)) {
    Value row = arith::AddIOp::create(b, loc, kernel.m0, place.first);
    Value col = arith::AddIOp::create(b, loc, kernel.n0, place.second);
    Value store = allBelow(b, loc, {{row, m}, {col, n}, {block, blocks}});
    auto storeIf = scf::IfOp::create(b, loc, store, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(storeIf.thenBlock());
    SmallVector<Value> ivs(kernel.base);
    kernel.place(sb, ivs, c.m, row);
    kernel.place(sb, ivs, c.n, col);
    SmallVector<Value> to = kernel.indicesOf(sb, out, ivs);
    Value old = startOf(sb, c, to);
    Value sum = arith::AddFOp::create(sb, loc, old, sums[s]);
    storeResult(sb, c, sum, to);
  }
  eraseWithCompanions(c);
  clonePureProducers(launch);
  return success();
}

LogicalResult mapContractions(MutableArrayRef<Contraction> found,
                              KernelClass kind, int64_t largeTileBlocks,
                              TensorCores tensorCores) {
  for (Contraction &c : found) {
    c.prologue = recordedPrologue(c.op, kind);
    c.epilogue = recordedEpilogue(c.op, kind);
  }
  for (Contraction &c : found)
    if (failed(emitTiledContraction(c, largeTileBlocks, tensorCores)))
      return c.op->emitOpError(
          "has more output tiles than a grid of 65535 x 65535 holds");
  return success();
}

} // namespace loom::codegen::gpu
