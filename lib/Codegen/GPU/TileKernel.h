//===- TileKernel.h - One tiled contraction's kernel under construction ---===//
//
// Part of Loom. The kernel Tiles.cpp builds for a contraction of the matrix
// product and convolution classes (docs/Codegen/GPU.md, "Kernel classes"):
// its tiles, the staging of them in workgroup memory and the threads' sums.
// The scalar form's methods are in Tiles.cpp, the tensor-core form's
// (mma.sync, ldmatrix and their emulations) in TensorCoreTiles.cpp, the
// warpgroup form's (wgmma and its emulation) in WarpgroupTiles.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_GPU_TILEKERNEL_H
#define LOOM_LIB_CODEGEN_GPU_TILEKERNEL_H

#include "Launches.h"
#include "Tiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace loom::codegen::gpu::tiles {

using llvm::function_ref;
using mlir::ArrayRef;
using mlir::Location;
using mlir::OpBuilder;
using mlir::OpOperand;
using mlir::SmallVector;
using mlir::SmallVectorImpl;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;
namespace memref = mlir::memref;

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

/// The warpgroup form (narrow operands, CUDA sm_90a, `--gpu-wgmma`): the
/// workgroup's four warps are one warpgroup, which multiplies a staged step
/// with one wgmma.mma_async m64nNk16, N the tile's columns: warp w holds
/// rows 16 w .. 16 w + 15 of the sums. 64 x 64: 32 sums a thread; 64 x 32:
/// 16. The tiles are staged as core matrices (8 rows of 16 bytes, 128
/// contiguous bytes: A's rows of m, B's of n, both along k), which is what a
/// descriptor without swizzling describes.
constexpr int64_t kWarpgroupM = 64;
constexpr Tiling kLargeWarpgroupTiles{64, 64};
constexpr Tiling kSmallWarpgroupTiles{64, 32};
constexpr int64_t kCoreRows = 8;
constexpr int64_t kCoreRowBytes = 16;
static_assert(kWarpgroupM == 4 * kMmaM && kThreads == 4 * kWarpSize,
              "a workgroup is one warpgroup of four warps, 16 rows each");

inline Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// \p v + \p d, of index type.
inline Value plusIndex(OpBuilder &b, Location loc, Value v, int64_t d) {
  return arith::AddIOp::create(b, loc, v, index(b, loc, d));
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
  /// The warpgroup form's tiles (wgmma): sharedA is
  /// `[buffer][m / 8][k / 8][m % 8][k % 8]`, sharedB
  /// `[buffer][n / 8][k / 8][n % 8][k % 8]` (tileElement), each innermost
  /// 8 x 8 a core matrix.
  bool coreMatrices = false;
  /// The warpgroup form's wgmma computed through workgroup memory
  /// (emulatedWgmma) instead of by tensor cores.
  bool emulatedWarpgroup = false;

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
             ArrayRef<unsigned> loops, Value at) const;

  /// The indices of \p operand at loop positions \p ivs.
  SmallVector<Value> indicesOf(OpBuilder &b, OpOperand *operand,
                               ArrayRef<Value> ivs) const {
    return applyMap(b, loc, c.op.getMatchingIndexingMap(operand), ivs);
  }

  /// How the staging reads global memory (emitTiledContraction's
  /// TensorCores): an element a load (Vulkan), a thread's \p width
  /// consecutive elements of a row in one aligned vector load (CUDA:
  /// `ld.global.v4.f32`, 16 bytes), or those elements as as many loads at
  /// the same places (emulate-tensor-cores: the grouping checked where
  /// CUDA is not).
  enum class Loads { Scalar, Vector, EmulatedVector };
  Loads loads = Loads::Scalar;

  /// The elements of \p in a thread stages at once along \p loops, a
  /// tile's columns or (a transposed operand) its rows (loadTiles):
  /// min(4, \p perThread, the tile's elements a thread) where consecutive
  /// positions of \p loops are consecutive elements in memory (each of
  /// them a loop alone in one index, the strides those of their row-major
  /// order, the innermost 1 and in the last index) and a group of that many
  /// starting at a multiple of it is that many elements aligned and inside
  /// the matrix or outside it whole (the other strides, the offset and the
  /// positions of \p loops multiples of it; the runtime's buffers are
  /// 64-byte aligned); else 1.
  int64_t loadWidth(OpOperand *in, ArrayRef<unsigned> loops,
                    int64_t perThread) const;

  /// The \p width elements of \p in from where the linear positions
  /// \p rowAt of \p rowLoops and \p colAt of \p colLoops are, along its
  /// last index (loadWidth's group, along the columns or the rows), or zeros
  /// where \p inRange is false (past the edge of the matrix); each converted as
  /// the payload converts it before the product (staged narrow, or summed in
  /// f32).
  SmallVector<Value, 4> loadOrZero(OpBuilder &b, OpOperand *in,
                                   ArrayRef<unsigned> rowLoops, Value rowAt,
                                   ArrayRef<unsigned> colLoops, Value colAt,
                                   Value inRange, int64_t width = 1) const;

  /// The thread's elements of the A tile (`[m][k]`, tileM x kStep) at
  /// reduction offset \p k0, then of the B tile (`[k][n]`, kStep x tileN),
  /// each with its row and column in the tile: the threads load consecutive
  /// groups of loadWidth elements of each row (thread t the group t, then
  /// t + kThreads, ...), or where only the tile's rows are contiguous in
  /// memory (a transposed operand) of each column (thread t the column
  /// t % tile columns), zeros past the edges. With \p storeInto, each
  /// element is stored into that buffer as soon as it is loaded.
  struct Staged {
    SmallVector<Value> values, rows, cols;
  };
  Staged loadTiles(OpBuilder &b, Value k0, Value storeInto = {}) const;

  /// Stores \p s (loadTiles') into buffer \p buffer of sharedA and
  /// sharedB.
  void storeTiles(OpBuilder &b, const Staged &s, Value buffer) const;

  /// The indices of element (\p row, \p col) of buffer \p buffer of the
  /// A tile (\p ofA: row m, column k) or of the B tile (row k, column n):
  /// tileAt, or in core matrices where coreMatrices is set.
  SmallVector<Value, 5> tileElement(OpBuilder &b, bool ofA, Value buffer,
                                    Value row, Value col) const;

  /// The warpgroup form's matrix descriptor (PTX's "matrix descriptor
  /// format", no swizzling) of buffer readBuffer of \p tile: its start
  /// address (the tile's in shared memory, or 0 for emulatedWgmma, which
  /// reads the tile from its own start), the leading-dimension byte offset
  /// (from a core matrix to the next along k: 128) and the
  /// stride-dimension byte offset (from 8 rows to the next 8: 256), each
  /// as its bits 4..17.
  Value wgmmaDescriptor(OpBuilder &b, Value tile) const;

  /// One wgmma.mma_async m64nNk16 (N = t.tileN) of the warpgroup with f32
  /// accumulation, from the descriptors \p descA (K-major A) and \p descB
  /// (K-major B), preceded by wgmma.fence and followed by its commit and
  /// a wait for it; \p sums are the thread's accumulators as PTX numbers
  /// them (accumulateWgmma), and so are the results.
  SmallVector<Value> wgmma(OpBuilder &b, Value descA, Value descB,
                           ValueRange sums) const;

  /// wgmma()'s result computed without tensor cores (lavapipe): each
  /// thread decodes the descriptors as PTX defines them and reads its rows
  /// of A and columns of B from where they say, so that a descriptor or a
  /// staged layout that disagrees with the other gives a wrong product here
  /// as on a GPU.
  SmallVector<Value> emulatedWgmma(OpBuilder &b, Value descA, Value descB,
                                   ValueRange sums) const;

  /// The warpgroup's sums over one staged step: one wgmma (or
  /// emulatedWgmma) of the descriptors of sharedA and sharedB. \p sums
  /// holds d0..d(N/2 - 1): d(4 j + e) at row 16 warp + group + 8 (e / 2)
  /// and column 8 j + pairStart + e % 2 of the tile.
  SmallVector<Value> accumulateWgmma(OpBuilder &b, ValueRange sums) const;

  /// After the threads' stores into the tiles and before the barrier that
  /// ends them: in the warpgroup form on tensor cores, a
  /// `fence.proxy.async.shared::cta`, so that wgmma (which reads workgroup
  /// memory through the async proxy) sees them; nothing otherwise.
  void publishTiles(OpBuilder &b) const;

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
      function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> accumulate);

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
                                ValueRange sums) const;

  /// Two staged elements as one register of mma.sync's operands: a
  /// vector<2xf16>, or bf16's pair as the i32 it takes; \p lo the element
  /// of the lower index (the register's low half).
  Value pair(OpBuilder &b, Value lo, Value hi) const;

  /// mma.sync.m16n8k16.row.col (bf16, f16), or m16n8k8 (tf32), with f32
  /// accumulation of one warp: \p a (a0..a7; tf32 a0..a3), \p bv (b0..b3;
  /// tf32 b0, b1) and \p acc (c0..c3) are the lane's fragments as PTX
  /// numbers them; returns d0..d3. A tf32 register is the f32 value's bits.
  SmallVector<Value, 4> mma(OpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bv,
                            ValueRange acc) const;

  /// mma()'s result computed without tensor cores, for a device that has
  /// none (lavapipe: --gpu-emulate-tensor-cores): each lane writes its
  /// fragments of A and B where PTX's fragment tables put them, in its
  /// warp's part of emulatedA (16 x 16) and emulatedB (16 x 8), a barrier,
  /// each lane sums its four elements of D from them, a barrier. A fragment
  /// loaded from the wrong place of the tiles gives a wrong product here as
  /// on a GPU.
  SmallVector<Value, 4> emulatedMma(OpBuilder &b, ArrayRef<Value> a,
                                    ArrayRef<Value> bv, ValueRange acc) const;

  /// ldmatrix.sync.aligned.m8n8.x4.b16 (with \p trans, .trans) from
  /// \p tile's buffer readBuffer, this lane giving the start of row
  /// (\p row, \p col) (8 consecutive elements): lanes 8q..8q+7 give the
  /// rows of matrix q. Returns the lane's 4 x 2 elements, register q's
  /// first: row lane / 4 of matrix q at columns 2 (lane % 4) + {0, 1}, or
  /// with \p trans column lane / 4 at rows 2 (lane % 4) + {0, 1}
  /// (emulatedLdmatrix without tensor cores).
  SmallVector<Value, 8> ldmatrix(OpBuilder &b, Value tile, Value row, Value col,
                                 bool trans) const;

  /// ldmatrix()'s elements without tensor cores: each lane writes the row
  /// start it gives into its warp's part of emulatedRows, a barrier, each
  /// lane loads its elements from the rows the others gave, as PTX defines
  /// ldmatrix, a barrier. A row start given wrong gives wrong fragments
  /// here as on a GPU.
  SmallVector<Value, 8> emulatedLdmatrix(OpBuilder &b, Value tile, Value row,
                                         Value col, bool trans) const;

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
                                                   int64_t i) const;

  /// The fragments of B for the warp's sub-tile columns \p j (columns
  /// \p warpCol + kMmaN j ..), one list per mma along the step, appended
  /// to \p out: m16n8k16, those of sub-tiles j and j + 1 from one
  /// ldmatrix.x4.trans whose matrix q covers rows (q % 2) 8.. of the step
  /// and the columns of sub-tile j + q / 2 (registers b0b1, b2b3 of j, then
  /// of j + 1: b0..b3 at rows pairStart + {0, 1}, + 8 for b2, b3, column
  /// group); m16n8k8 (tf32), sub-tile j's, per half of the step: b0, b1 at
  /// rows member and member + 4, column group.
  void
  fragmentsB(OpBuilder &b, Value warpCol, int64_t j,
             SmallVectorImpl<SmallVector<SmallVector<Value, 8>, 2>> &out) const;

  /// The warp's sums over one staged step of kStep: the warp's sub-tiles of
  /// kMmaM x kMmaN at rows \p warpRow + kMmaM i and columns
  /// \p warpCol + kMmaN j of the tile, each kStep / mmaDepth() mma (or
  /// emulatedMma) of the fragments PTX defines for the lane (fragmentsA,
  /// fragmentsB). \p sums holds c0..c3 per sub-tile (rows group and
  /// group + 8, columns pairStart and pairStart + 1), row-major over the
  /// sub-tiles.
  SmallVector<Value> accumulateMma(OpBuilder &b, Value warpRow, Value warpCol,
                                   ValueRange sums) const;

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

} // namespace loom::codegen::gpu::tiles

#endif // LOOM_LIB_CODEGEN_GPU_TILEKERNEL_H
