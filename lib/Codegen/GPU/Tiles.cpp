//===- Tiles.cpp - Contractions as tiles in workgroup memory --------------===//
//
// Part of Loom. See Tiles.h and docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "Tiles.h"

#include "KernelClasses.h"

#include "Launches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace loom::codegen::gpu {
namespace {

/// Threads of a workgroup (Vulkan's guaranteed 128 invocations): 16
/// columns `tx` of 8 rows `ty`.
constexpr int64_t kThreads = 128;
constexpr int64_t kThreadCols = 16;
constexpr int64_t kThreadRows = kThreads / kThreadCols;
/// A step of the reduction: kStep columns of the A tile, rows of the B tile.
constexpr int64_t kStep = 16;

/// The output tile of a workgroup, tileM x tileN: thread (tx, ty) computes
/// the elements in rows `ty + 8 i` and columns `tx + 16 j`, a register tile
/// of rows() x cols() sums. The small tile (16 x 16: two sums a thread) keeps
/// many workgroups on a small product; the large one (64 x 64: 32 sums a
/// thread) loads 12 elements of workgroup memory per 32 multiply-adds where
/// the small one loads 3 per 2.
struct Tiling {
  int64_t tileM, tileN;
  int64_t rows() const { return tileM / kThreadRows; }
  int64_t cols() const { return tileN / kThreadCols; }
};
constexpr Tiling kSmallTiles{16, 16};
constexpr Tiling kLargeTiles{64, 64};

/// The tensor-core form (narrow operands, CUDA): the workgroup's four warps
/// as 2 x 2, each a quarter of the tile in mma.sync's m16n8k16 shapes (a
/// step of kStep is one k16). 64 x 64: 2 x 4 products a warp per step, 32
/// sums a thread; 32 x 32: 1 x 2, 8 sums a thread.
constexpr int64_t kWarpSize = 32;
constexpr int64_t kWarpRows = 2, kWarpCols = 2;
constexpr int64_t kMmaM = 16, kMmaN = 8;
constexpr Tiling kLargeMmaTiles{64, 64};
/// Elements (16 bytes of bf16 or f16) each staged row of the ldmatrix form
/// is padded by: rows 16 + 8 (A) and 32 + 8 or 64 + 8 (B) elements apart
/// put the 8 rows an ldmatrix matrix reads in 8 distinct groups of 4 banks.
constexpr int64_t kLdmatrixPadding = 8;
constexpr Tiling kSmallMmaTiles{32, 32};
static_assert(kWarpRows * kWarpCols * kWarpSize == kThreads && kStep == 16,
              "four warps of the workgroup, a step one mma.sync k");

/// Products of at most kRowFormMaxRows rows of A (a decoder's step, one
/// token a sequence; attention's values for one query) take the row form:
/// a workgroup per row and kRowCols adjacent output columns (32 bytes of a
/// row of B: one memory sector), its threads kRowSlices slices of k.
constexpr int64_t kRowFormMaxRows = 4;
constexpr int64_t kRowCols = 8;
constexpr int64_t kRowSlices = kThreads / kRowCols;

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// \p v + \p d, of index type.
Value plusIndex(OpBuilder &b, Location loc, Value v, int64_t d) {
  return arith::AddIOp::create(b, loc, v, index(b, loc, d));
}

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

/// The kernel of one contraction under construction: the op, the
/// workgroup's tiles and the loop positions every thread shares.
struct TileKernel {
  TileKernel(Contraction &c, Tiling t, Location loc, Type staged,
             Type multiplied)
      : c(c), t(t), loc(loc), staged(staged), multiplied(multiplied) {}

  Contraction &c;
  Tiling t;
  Location loc;
  /// The loop positions fixed for the workgroup (its batch position) and
  /// zero elsewhere, a copy completed per element.
  SmallVector<Value> base;
  /// sharedA and sharedB hold the tiles (`[m][k]`, `[k][n]`), or with
  /// double buffering two of each (`[buffer][m][k]`, `[buffer][k][n]`:
  /// sumSteps); readBuffer is the one the current step's accumulate reads.
  Value m0, n0, tid, sharedA, sharedB, readBuffer;
  bool doubleBuffered = false;

  /// The indices of a tile's element (\p row, \p col) in buffer
  /// \p buffer.
  SmallVector<Value, 3> tileAt(Value buffer, Value row, Value col) const {
    if (!doubleBuffered)
      return {row, col};
    return {buffer, row, col};
  }
  /// The element type of the staged tiles: f32, or the narrow type the
  /// tensor-core form multiplies in (the payload's last conversion, the
  /// extension to f32, left to mma.sync's f32 accumulation). TF32 operands
  /// are staged as the f32 values of their rounding (the whole chain
  /// applied), which mma.sync's .tf32 form reads exactly.
  Type staged;
  /// What the tensor-core form multiplies in (bf16, f16 or tf32), or null
  /// (the scalar f32 form).
  Type multiplied;
  /// The tensor-core form's thread: its warp, its lane's groupID (lane / 4,
  /// PTX's name), threadID_in_group (lane % 4: the column of A and row of
  /// B of a tf32 fragment) and 2 threadID_in_group (the first column of its
  /// pairs of A and of the sums, the first row of its pairs of B).
  struct Lane {
    Value warp, id, group, member, pairStart;
  } lane;
  /// emulatedMma's workgroup memory, [warp][16][16] and [warp][16][8] f32
  /// (null: mma.sync), and emulatedLdmatrix's, [warp][32][2] i32.
  Value emulatedA, emulatedB, emulatedRows;

  /// \p base with the positions of \p loops set from the linear position
  /// \p at (row-major over their extents).
  void place(OpBuilder &b, SmallVectorImpl<Value> &ivs,
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

  /// The indices of \p operand at loop positions \p ivs.
  SmallVector<Value> indicesOf(OpBuilder &b, OpOperand *operand,
                               ArrayRef<Value> ivs) const {
    return applyMap(b, loc, c.op.getMatchingIndexingMap(operand), ivs);
  }

  /// The element of \p in where the linear positions \p rowAt of
  /// \p rowLoops and \p colAt of \p colLoops are, or 0 where \p inRange is
  /// false (past the edge of the matrix).
  Value loadOrZero(OpBuilder &b, OpOperand *in, ArrayRef<unsigned> rowLoops,
                   Value rowAt, ArrayRef<unsigned> colLoops, Value colAt,
                   Value inRange) const {
    auto guard = scf::IfOp::create(
        b, loc, inRange,
        [&](OpBuilder &tb, Location) {
          SmallVector<Value> ivs(base);
          place(tb, ivs, rowLoops, rowAt);
          place(tb, ivs, colLoops, colAt);
          Value v =
              memref::LoadOp::create(tb, loc, in->get(), indicesOf(tb, in, ivs));
          // The payload's conversions of the element (isMultiplyAdd): a
          // narrow operand summed in f32, or staged narrow.
          SmallVector<Operation *> chain = conversionsOf(c.op, in);
          if (!staged.isF32())
            chain.pop_back();
          for (Operation *conversion : chain) {
            IRMapping map;
            map.map(conversion->getOperand(0), v);
            v = tb.clone(*conversion, map)->getResult(0);
          }
          scf::YieldOp::create(tb, loc, v);
        },
        [&](OpBuilder &eb, Location) {
          Value zero = arith::ConstantOp::create(eb, loc, staged,
                                                 eb.getFloatAttr(staged, 0));
          scf::YieldOp::create(eb, loc, zero);
        });
    return guard.getResult(0);
  }

  /// The thread's elements of the A tile (`[m][k]`, tileM x kStep) at
  /// reduction offset \p k0, then of the B tile (`[k][n]`, kStep x tileN),
  /// each with its row and column in the tile: the threads load consecutive
  /// elements of each row, zeros past the edges. With \p storeInto, each
  /// element is stored into that buffer as soon as it is loaded.
  struct Staged {
    SmallVector<Value> values, rows, cols;
  };
  Staged loadTiles(OpBuilder &b, Value k0, Value storeInto = {}) const {
    int64_t m = c.extent(c.m), n = c.extent(c.n), k = c.extent(c.k);
    Staged s;
    auto stored = [&](Value tile) {
      if (storeInto)
        memref::StoreOp::create(
            b, loc, s.values.back(), tile,
            tileAt(storeInto, s.rows.back(), s.cols.back()));
    };
    auto place = [&](int64_t r, int64_t width) {
      Value e = arith::AddIOp::create(b, loc, tid, index(b, loc, r * kThreads));
      s.rows.push_back(arith::DivUIOp::create(b, loc, e, index(b, loc, width)));
      s.cols.push_back(arith::RemUIOp::create(b, loc, e, index(b, loc, width)));
    };
    for (int64_t r = 0; r < t.tileM * kStep / kThreads; ++r) {
      place(r, kStep);
      Value am = arith::AddIOp::create(b, loc, m0, s.rows.back());
      Value ak = arith::AddIOp::create(b, loc, k0, s.cols.back());
      s.values.push_back(loadOrZero(b, c.a, c.m, am, c.k, ak,
                                    allBelow(b, loc, {{am, m}, {ak, k}})));
      stored(sharedA);
    }
    for (int64_t r = 0; r < kStep * t.tileN / kThreads; ++r) {
      place(r, t.tileN);
      Value bk = arith::AddIOp::create(b, loc, k0, s.rows.back());
      Value bn = arith::AddIOp::create(b, loc, n0, s.cols.back());
      s.values.push_back(loadOrZero(b, c.b, c.k, bk, c.n, bn,
                                    allBelow(b, loc, {{bk, k}, {bn, n}})));
      stored(sharedB);
    }
    return s;
  }

  /// Stores \p s (loadTiles') into buffer \p buffer of sharedA and
  /// sharedB.
  void storeTiles(OpBuilder &b, const Staged &s, Value buffer) const {
    size_t aElements = t.tileM * kStep / kThreads;
    for (auto [i, v] : llvm::enumerate(s.values))
      memref::StoreOp::create(b, loc, v, i < aElements ? sharedA : sharedB,
                              tileAt(buffer, s.rows[i], s.cols[i]));
  }

  /// The sums of the thread over every step of kStep along k, from
  /// \p init, each step's sums by \p accumulate (reading buffer
  /// readBuffer). With one buffer: stage a step's tiles, a barrier,
  /// accumulate, a barrier. Double-buffered (the tensor-core form): the
  /// first step's tiles staged before the loop; each step loads the next
  /// step's elements from global memory into registers first, accumulates
  /// from one buffer while they arrive, stores them into the other, and one
  /// barrier ends the step (the buffer it writes was last read a step
  /// before, behind that step's barrier).
  ValueRange sumSteps(
      OpBuilder &b, ArrayRef<Value> init,
      function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> accumulate) {
    int64_t k = c.extent(c.k);
    Value first = index(b, loc, 0);
    if (doubleBuffered) {
      storeTiles(b, loadTiles(b, first), first);
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
            readBuffer =
                arith::RemUIOp::create(sb, loc, step, index(sb, loc, 2));
            Value other =
                arith::SubIOp::create(sb, loc, index(sb, loc, 1), readBuffer);
            // Past the last step the loads are zeros (their guards), stored
            // into the buffer nothing reads again.
            Staged ahead = loadTiles(sb, plusIndex(sb, loc, k0, kStep));
            next = accumulate(sb, sums);
            storeTiles(sb, ahead, other);
          }
          mlir::gpu::BarrierOp::create(sb, loc);
          scf::YieldOp::create(sb, loc, next);
        });
    return steps.getResults();
  }

  /// Row \p i and column \p j of thread (\p tx, \p ty)'s register tile,
  /// in the workgroup's output tile.
  Value rowOf(OpBuilder &b, Value ty, int64_t i) const {
    return arith::AddIOp::create(b, loc, ty, index(b, loc, i * kThreadRows));
  }
  Value colOf(OpBuilder &b, Value tx, int64_t j) const {
    return arith::AddIOp::create(b, loc, tx, index(b, loc, j * kThreadCols));
  }

  /// Each thread's sums over one staged step: per step of k, its rows of
  /// A and columns of B read once from the tiles, every pair multiplied
  /// into \p sums (row-major over the register tile).
  SmallVector<Value> accumulate(OpBuilder &b, Value tx, Value ty,
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
              next.push_back(arith::AddFOp::create(
                  ib, loc, acc[i * t.cols() + j], p));
            }
          scf::YieldOp::create(ib, loc, next);
        });
    return SmallVector<Value>(inner.getResults());
  }

  /// Two staged elements as one register of mma.sync's operands: a
  /// vector<2xf16>, or bf16's pair as the i32 it takes; \p lo the element
  /// of the lower index (the register's low half).
  Value pair(OpBuilder &b, Value lo, Value hi) const {
    auto type = VectorType::get({2}, staged);
    Value v = LLVM::PoisonOp::create(b, loc, type);
    for (auto [i, e] : llvm::enumerate(ArrayRef<Value>{lo, hi})) {
      Value at = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                          b.getI32IntegerAttr(int32_t(i)));
      v = LLVM::InsertElementOp::create(b, loc, v, e, at);
    }
    if (staged.isBF16())
      v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
    return v;
  }

  /// mma.sync.m16n8k16.row.col (bf16, f16), or m16n8k8 (tf32), with f32
  /// accumulation of one warp: \p a (a0..a7; tf32 a0..a3), \p bv (b0..b3;
  /// tf32 b0, b1) and \p acc (c0..c3) are the lane's fragments as PTX
  /// numbers them; returns d0..d3. A tf32 register is the f32 value's bits.
  SmallVector<Value, 4> mma(OpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bv,
                            ValueRange acc) const {
    SmallVector<Value, 4> aRegs, bRegs;
    auto bits = [&](Value v) -> Value {
      return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
    };
    bool tf32 = multiplied.isTF32();
    for (size_t i = 0; i < a.size(); i += tf32 ? 1 : 2)
      aRegs.push_back(tf32 ? bits(a[i]) : pair(b, a[i], a[i + 1]));
    for (size_t i = 0; i < bv.size(); i += tf32 ? 1 : 2)
      bRegs.push_back(tf32 ? bits(bv[i]) : pair(b, bv[i], bv[i + 1]));
    NVVM::MMATypes ptxType = tf32              ? NVVM::MMATypes::tf32
                             : staged.isBF16() ? NVVM::MMATypes::bf16
                                               : NVVM::MMATypes::f16;
    Type f32 = b.getF32Type();
    auto result =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    auto op = NVVM::MmaOp::create(
        b, loc, result, aRegs, bRegs, acc, {kMmaM, kMmaN, mmaDepth()},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value, 4> d;
    for (int64_t e = 0; e < 4; ++e)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, op, e));
    return d;
  }

  /// mma()'s result computed without tensor cores, for a device that has
  /// none (lavapipe: --gpu-emulate-tensor-cores): each lane writes its
  /// fragments of A and B where PTX's fragment tables put them, in its
  /// warp's part of emulatedA (16 x 16) and emulatedB (16 x 8), a barrier,
  /// each lane sums its four elements of D from them, a barrier. A fragment
  /// loaded from the wrong place of the tiles gives a wrong product here as
  /// on a GPU.
  SmallVector<Value, 4> emulatedMma(OpBuilder &b, ArrayRef<Value> a,
                                    ArrayRef<Value> bv, ValueRange acc) const {
    auto widened = [&](Value v) -> Value {
      if (v.getType().isF32())
        return v;
      return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    };
    bool tf32 = multiplied.isTF32();
    for (int64_t i = 0; i < int64_t(a.size()); ++i) {
      // A (m16n8k16): row groupID for a0, a1, a4, a5, groupID + 8
      // otherwise; column threadID_in_group * 2 + (i & 1), + 8 for i >= 4.
      // A (m16n8k8 tf32): row groupID for a0, a2, groupID + 8 for a1, a3;
      // column threadID_in_group, + 4 for a2, a3.
      Value row, col;
      if (tf32) {
        row = plusIndex(b, loc, lane.group, (i & 1) ? 8 : 0);
        col = plusIndex(b, loc, lane.member, i >= 2 ? 4 : 0);
      } else {
        bool low = i < 2 || (i >= 4 && i < 6);
        row = plusIndex(b, loc, lane.group, low ? 0 : 8);
        col = plusIndex(b, loc, lane.pairStart, (i & 1) + (i >= 4 ? 8 : 0));
      }
      memref::StoreOp::create(b, loc, widened(a[i]), emulatedA,
                              ValueRange{lane.warp, row, col});
    }
    for (int64_t i = 0; i < int64_t(bv.size()); ++i) {
      // B (m16n8k16): row threadID_in_group * 2 + (i & 1), + 8 for i >= 2;
      // (m16n8k8 tf32): row threadID_in_group, + 4 for b1; column groupID.
      Value row =
          tf32 ? plusIndex(b, loc, lane.member, i ? 4 : 0)
               : plusIndex(b, loc, lane.pairStart, (i & 1) + (i >= 2 ? 8 : 0));
      memref::StoreOp::create(b, loc, widened(bv[i]), emulatedB,
                              ValueRange{lane.warp, row, lane.group});
    }
    mlir::gpu::BarrierOp::create(b, loc);
    SmallVector<Value, 4> d;
    for (int64_t i = 0; i < 4; ++i) {
      // C and D: row groupID, + 8 for i >= 2; column
      // threadID_in_group * 2 + (i & 1).
      Value row = plusIndex(b, loc, lane.group, i >= 2 ? 8 : 0);
      Value col = plusIndex(b, loc, lane.pairStart, i & 1);
      Value sum = acc[i];
      for (int64_t kk = 0; kk < mmaDepth(); ++kk) {
        Value x = memref::LoadOp::create(
            b, loc, emulatedA, ValueRange{lane.warp, row, index(b, loc, kk)});
        Value y = memref::LoadOp::create(
            b, loc, emulatedB, ValueRange{lane.warp, index(b, loc, kk), col});
        sum = arith::AddFOp::create(b, loc, sum,
                                    arith::MulFOp::create(b, loc, x, y));
      }
      d.push_back(sum);
    }
    mlir::gpu::BarrierOp::create(b, loc);
    return d;
  }

  /// ldmatrix.sync.aligned.m8n8.x4.b16 (with \p trans, .trans) from
  /// \p tile's buffer readBuffer, this lane giving the start of row
  /// (\p row, \p col) (8 consecutive elements): lanes 8q..8q+7 give the
  /// rows of matrix q. Returns the lane's 4 x 2 elements, register q's
  /// first: row lane / 4 of matrix q at columns 2 (lane % 4) + {0, 1}, or
  /// with \p trans column lane / 4 at rows 2 (lane % 4) + {0, 1}
  /// (emulatedLdmatrix without tensor cores).
  SmallVector<Value, 8> ldmatrix(OpBuilder &b, Value tile, Value row, Value col,
                                 bool trans) const {
    if (emulatedRows)
      return emulatedLdmatrix(b, tile, row, col, trans);
    auto type = cast<MemRefType>(tile.getType());
    // The tiles are dense row-major allocations (allocWorkgroupMemory).
    SmallVector<int64_t> strides;
    int64_t offset;
    bool strided = succeeded(type.getStridesAndOffset(strides, offset));
    assert(strided && offset == 0 && "a workgroup tile is dense");
    (void)strided;
    Value element = index(b, loc, 0);
    for (auto [i, v] : llvm::enumerate(tileAt(readBuffer, row, col)))
      element = arith::AddIOp::create(
          b, loc, element,
          arith::MulIOp::create(b, loc, v, index(b, loc, strides[i])));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile);
    Value bytes = arith::MulIOp::create(
        b, loc, element, index(b, loc, type.getElementTypeBitWidth() / 8));
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, bytes));
    Value ptr = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
    Type i32 = b.getI32Type();
    auto regs =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
    Value loaded = NVVM::LdMatrixOp::create(
        b, loc, regs, ptr, 4,
        trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    SmallVector<Value, 8> elements;
    auto pairType = VectorType::get({2}, staged);
    for (int64_t q = 0; q < 4; ++q) {
      Value reg = LLVM::ExtractValueOp::create(b, loc, loaded, q);
      Value pairOf = LLVM::BitcastOp::create(b, loc, pairType, reg);
      for (int32_t e = 0; e < 2; ++e)
        elements.push_back(LLVM::ExtractElementOp::create(
            b, loc, pairOf,
            LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(e))));
    }
    return elements;
  }

  /// ldmatrix()'s elements without tensor cores: each lane writes the row
  /// start it gives into its warp's part of emulatedRows, a barrier, each
  /// lane loads its elements from the rows the others gave, as PTX defines
  /// ldmatrix, a barrier. A row start given wrong gives wrong fragments
  /// here as on a GPU.
  SmallVector<Value, 8> emulatedLdmatrix(OpBuilder &b, Value tile, Value row,
                                         Value col, bool trans) const {
    Type i32 = b.getI32Type();
    auto slot = [&](Value from, int64_t which) -> SmallVector<Value, 3> {
      return {lane.warp, from, index(b, loc, which)};
    };
    for (auto [which, v] : llvm::enumerate(ArrayRef<Value>{row, col}))
      memref::StoreOp::create(b, loc,
                              arith::IndexCastOp::create(b, loc, i32, v),
                              emulatedRows, slot(lane.id, which));
    mlir::gpu::BarrierOp::create(b, loc);
    auto given = [&](Value from, int64_t which) -> Value {
      Value v = memref::LoadOp::create(b, loc, emulatedRows, slot(from, which));
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    SmallVector<Value, 8> elements;
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t e = 0; e < 2; ++e) {
        // Not transposed: row lane / 4 of matrix q, given by lane
        // 8q + lane / 4, at its columns 2 (lane % 4) + e. Transposed: row
        // 2 (lane % 4) + e of matrix q, at its column lane / 4.
        Value from = plusIndex(b, loc, trans ? lane.pairStart : lane.group,
                               8 * q + (trans ? e : 0));
        Value r = given(from, 0);
        Value c = arith::AddIOp::create(
            b, loc, given(from, 1),
            trans ? lane.group : plusIndex(b, loc, lane.pairStart, e));
        elements.push_back(tileLoad(b, tile, r, c));
      }
    mlir::gpu::BarrierOp::create(b, loc);
    return elements;
  }

  /// The k of one mma.sync: 16 (bf16, f16: m16n8k16), 8 (tf32: m16n8k8).
  int64_t mmaDepth() const { return multiplied.isTF32() ? 8 : kStep; }

  /// The fragments of A for the warp's sub-tile row \p i (rows \p warpRow +
  /// kMmaM i ..), one list per mma along the step. m16n8k16 (bf16, f16):
  /// one ldmatrix.x4 whose matrix q covers rows (q % 2) 8.. and columns
  /// (q / 2) 8.. of the step, registers a0a1, a2a3, a4a5, a6a7: a0, a1, a4,
  /// a5 from row group, the others from group + 8, at columns pairStart +
  /// {0, 1}, + 8 for a4..a7. m16n8k8 (tf32), per half of the step: a0..a3
  /// from rows group (a0, a2) and group + 8 at columns member (a0, a1) and
  /// member + 4, loaded one by one (ldmatrix moves 16-bit elements).
  SmallVector<SmallVector<Value, 8>, 2> fragmentsA(OpBuilder &b, Value warpRow,
                                                   int64_t i) const {
    Value top = plusIndex(b, loc, warpRow, i * kMmaM);
    if (!multiplied.isTF32()) {
      Value q = divIndex(b, lane.id, 8);
      Value r = arith::AddIOp::create(
          b, loc, top,
          arith::AddIOp::create(b, loc, mulIndex(b, remIndex(b, q, 2), 8),
                                remIndex(b, lane.id, 8)));
      Value c = mulIndex(b, divIndex(b, q, 2), 8);
      return {ldmatrix(b, sharedA, r, c, /*trans=*/false)};
    }
    Value lo = arith::AddIOp::create(b, loc, top, lane.group);
    Value hi = plusIndex(b, loc, lo, 8);
    SmallVector<SmallVector<Value, 8>, 2> halves;
    for (int64_t h : {0, 8}) {
      SmallVector<Value, 8> fragment;
      for (int64_t kOff : {0, 4})
        for (Value r : {lo, hi})
          fragment.push_back(tileLoad(
              b, sharedA, r, plusIndex(b, loc, lane.member, h + kOff)));
      halves.push_back(fragment);
    }
    return halves;
  }

  /// The fragments of B for the warp's sub-tile columns \p j (columns
  /// \p warpCol + kMmaN j ..), one list per mma along the step, appended
  /// to \p out: m16n8k16, those of sub-tiles j and j + 1 from one
  /// ldmatrix.x4.trans whose matrix q covers rows (q % 2) 8.. of the step
  /// and the columns of sub-tile j + q / 2 (registers b0b1, b2b3 of j, then
  /// of j + 1: b0..b3 at rows pairStart + {0, 1}, + 8 for b2, b3, column
  /// group); m16n8k8 (tf32), sub-tile j's, per half of the step: b0, b1 at
  /// rows member and member + 4, column group.
  void fragmentsB(
      OpBuilder &b, Value warpCol, int64_t j,
      SmallVectorImpl<SmallVector<SmallVector<Value, 8>, 2>> &out) const {
    Value left = plusIndex(b, loc, warpCol, j * kMmaN);
    if (!multiplied.isTF32()) {
      Value q = divIndex(b, lane.id, 8);
      Value r = arith::AddIOp::create(b, loc, mulIndex(b, remIndex(b, q, 2), 8),
                                      remIndex(b, lane.id, 8));
      Value c = arith::AddIOp::create(b, loc, left,
                                      mulIndex(b, divIndex(b, q, 2), kMmaN));
      SmallVector<Value, 8> both = ldmatrix(b, sharedB, r, c, /*trans=*/true);
      out.push_back({SmallVector<Value, 8>(both.begin(), both.begin() + 4)});
      out.push_back({SmallVector<Value, 8>(both.begin() + 4, both.end())});
      return;
    }
    Value col = arith::AddIOp::create(b, loc, left, lane.group);
    SmallVector<SmallVector<Value, 8>, 2> halves;
    for (int64_t h : {0, 8}) {
      SmallVector<Value, 8> fragment;
      for (int64_t kOff : {0, 4})
        fragment.push_back(tileLoad(
            b, sharedB, plusIndex(b, loc, lane.member, h + kOff), col));
      halves.push_back(fragment);
    }
    out.push_back(halves);
  }

  /// The warp's sums over one staged step of kStep: the warp's sub-tiles of
  /// kMmaM x kMmaN at rows \p warpRow + kMmaM i and columns
  /// \p warpCol + kMmaN j of the tile, each kStep / mmaDepth() mma (or
  /// emulatedMma) of the fragments PTX defines for the lane (fragmentsA,
  /// fragmentsB). \p sums holds c0..c3 per sub-tile (rows group and
  /// group + 8, columns pairStart and pairStart + 1), row-major over the
  /// sub-tiles.
  SmallVector<Value> accumulateMma(OpBuilder &b, Value warpRow, Value warpCol,
                                   ValueRange sums) const {
    int64_t subRows = t.tileM / kWarpRows / kMmaM;
    int64_t subCols = t.tileN / kWarpCols / kMmaN;
    static_assert(kSmallMmaTiles.tileN / kWarpCols / kMmaN % 2 == 0 &&
                      kLargeMmaTiles.tileN / kWarpCols / kMmaN % 2 == 0,
                  "B's ldmatrix.x4 loads two sub-tiles' fragments");
    // as[i][h], bs[j][h]: the fragments of the h-th mma along the step.
    SmallVector<SmallVector<SmallVector<Value, 8>, 2>> as, bs;
    for (int64_t i = 0; i < subRows; ++i)
      as.push_back(fragmentsA(b, warpRow, i));
    for (int64_t j = 0; j < subCols; j += multiplied.isTF32() ? 1 : 2)
      fragmentsB(b, warpCol, j, bs);
    SmallVector<Value> next;
    for (int64_t i = 0; i < subRows; ++i)
      for (int64_t j = 0; j < subCols; ++j) {
        SmallVector<Value, 4> acc(sums.slice((i * subCols + j) * 4, 4));
        for (size_t h = 0; h < as[i].size(); ++h)
          acc = emulatedA ? emulatedMma(b, as[i][h], bs[j][h], acc)
                          : mma(b, as[i][h], bs[j][h], acc);
        llvm::append_range(next, acc);
      }
    return next;
  }

  /// Element (\p row, \p col) of buffer readBuffer of \p tile.
  Value tileLoad(OpBuilder &b, Value tile, Value row, Value col) const {
    return memref::LoadOp::create(b, loc, tile, tileAt(readBuffer, row, col));
  }
  Value divIndex(OpBuilder &b, Value v, int64_t d) const {
    return arith::DivUIOp::create(b, loc, v, index(b, loc, d));
  }
  Value remIndex(OpBuilder &b, Value v, int64_t d) const {
    return arith::RemUIOp::create(b, loc, v, index(b, loc, d));
  }
  Value mulIndex(OpBuilder &b, Value v, int64_t d) const {
    return arith::MulIOp::create(b, loc, v, index(b, loc, d));
  }
};

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
      ValueRange{zero},
      [&](OpBuilder &fb, Location, Value kk, ValueRange acc) {
        Value a = kernel.loadOrZero(fb, c.a, c.m, row, c.k, kk, always);
        Value bv = kernel.loadOrZero(fb, c.b, c.k, kk, c.n, column, inside);
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
  Tiling large = narrow ? kLargeMmaTiles : kLargeTiles;
  Tiling t = largeTileBlocks >= 0 && int64_t(blocksOf(large)) >= largeTileBlocks
                 ? large
                 : (narrow ? kSmallMmaTiles : kSmallTiles);
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
  // The tensor-core form double-buffers its tiles (sumSteps). Where
  // ldmatrix reads them (bf16, f16), each row is padded by 16 bytes, so
  // that the 8 rows of a matrix (16 bytes each) fall in distinct banks.
  kernel.doubleBuffered = bool(narrow);
  int64_t padding = narrow && !narrow.isTF32() ? kLdmatrixPadding : 0;
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
  kernel.sharedA = tiles(t.tileM, kStep);
  kernel.sharedB = tiles(kStep, t.tileN);
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
    if (tensorCores == TensorCores::Emulated) {
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
        return narrow ? kernel.accumulateMma(sb, warpRow, warpCol, acc)
                      : kernel.accumulate(sb, tx, ty, acc);
      });
  // The thread's sums in the order accumulate (accumulateMma) yields them,
  // each at its row and column of the tile.
  OpOperand *out = op.getDpsInitOperand(0);
  SmallVector<std::pair<Value, Value>> places;
  if (narrow) {
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
