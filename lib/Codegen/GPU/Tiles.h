//===- Tiles.h - Contractions as 16 x 16 tiles in workgroup memory -*- C++ -*-===//
//
// Part of Loom. What the matrix-product class (MatmulTiles.cpp) and the
// convolution class (ConvTiles.cpp) share (docs/Codegen/GPU.md, "Kernel
// classes"): a linalg op whose payload is `out + a * b` seen as a batch of
// matrix products C[m][n] += A[m][k] * B[k][n], each of m, n and k a set of
// the op's loops (linearised), and the one kernel that computes it in
// 16 x 16 tiles staged in workgroup memory.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_GPU_TILES_H
#define LOOM_LIB_CODEGEN_GPU_TILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace loom::codegen::gpu {

/// A linalg op as a batch of matrix products: its loops by role, and its
/// inputs A (indexed by the batch, m and k loops) and B (the batch, k and
/// n loops). A position along m, n or k is the row-major linearisation of
/// its loops' positions (the first loop outermost).
struct Contraction {
  mlir::linalg::LinalgOp op;
  /// The static extent of every loop of the op.
  llvm::SmallVector<int64_t> ranges;
  /// The loops of each role, in loop order: batch loops index the output
  /// and both inputs; m loops the output and A; n loops the output and B;
  /// k loops (reductions) A and B.
  llvm::SmallVector<unsigned> batch, m, n, k;
  mlir::OpOperand *a = nullptr, *b = nullptr;
  /// The fill of the output just before the op that the kernel takes in
  /// (KernelClasses.h, recordedPrologue): the sums start from its value
  /// instead of the output's elements, and the fill is erased with the op.
  mlir::linalg::FillOp prologue;
  /// The elementwise op just after the op that the kernel takes in
  /// (recordedEpilogue): each output element's value is the epilogue's of
  /// the sum, and the epilogue is erased with the op.
  mlir::linalg::LinalgOp epilogue;

  /// The number of positions of \p loops (their extents' product).
  int64_t extent(llvm::ArrayRef<unsigned> loops) const;
};

/// \p op as a contraction, or failure: pure buffer semantics, static
/// extents, two shaped inputs and one f32 output, the payload exactly
/// `out + a * b` (either order of each), every loop in exactly one role and
/// at least one loop of m, n and k. B is the input that the output's
/// innermost index varies (so that a tile's stores and B's loads run along
/// it); A the other.
mlir::FailureOr<Contraction> classifyContraction(mlir::linalg::LinalgOp op);

/// How narrow products use tensor cores: not at all (Vulkan), through
/// mma.sync (CUDA), through wgmma on a warpgroup (CUDA, sm_90a only:
/// `--gpu-wgmma`), or in either form with each mma.sync or wgmma computed
/// through workgroup memory (a check of the form on a device without tensor
/// cores: lavapipe). The same choice decides the staging's loads
/// (TileKernel::Loads): an element a load, vector loads, or their grouping
/// as scalar loads.
enum class TensorCores { None, Mma, Wgmma, EmulatedMma, EmulatedWgmma };

/// The pass options' choice: `emulate-tensor-cores`, else `tensor-cores`;
/// with `wgmma`, the warpgroup form of either.
inline TensorCores tensorCoresOf(bool use, bool emulate, bool wgmma) {
  if (emulate)
    return wgmma ? TensorCores::EmulatedWgmma : TensorCores::EmulatedMma;
  if (!use)
    return TensorCores::None;
  return wgmma ? TensorCores::Wgmma : TensorCores::Mma;
}
inline bool isEmulated(TensorCores t) {
  return t == TensorCores::EmulatedMma || t == TensorCores::EmulatedWgmma;
}
inline bool isWarpgroup(TensorCores t) {
  return t == TensorCores::Wgmma || t == TensorCores::EmulatedWgmma;
}

/// Replaces \p c's op with one `gpu.launch` of 128 threads per tile of the
/// output's m x n and batch position, 64 x 64 where that makes at least
/// \p largeTileBlocks workgroups (never when it is negative), else 16 x 16:
/// per step of 16 along k the threads stage the A tile (`[m][k]`) and the
/// B tile (`[k][n]`) in workgroup memory (zeros past the edges), a barrier,
/// each thread accumulates its register tile of output elements (2 or 32)
/// from them, a barrier; then each thread adds its sums to its output
/// elements inside the bounds. With \p tensorCores, a product whose
/// inputs are both multiplied in bf16 or both in f16 (--precision's narrow
/// products) stages them in that type and takes the tensor-core form: the
/// four warps 2 x 2 over a tile of 64 x 64 (else 32 x 32), each step one
/// `nvvm.mma.sync` m16n8k16 (f32 accumulation) per 16 x 8 of the warp's
/// quarter. A product of at most 4 rows (m) takes the row form instead: a
/// workgroup per row and 8 output columns, its threads 16 slices of k whose
/// partial sums meet in workgroup memory. Fails (leaving the op) when a
/// grid of 65535 x 65535 blocks does not hold the tiles.
mlir::LogicalResult emitTiledContraction(Contraction &c,
                                         int64_t largeTileBlocks,
                                         TensorCores tensorCores);

enum class KernelClass;

/// Maps each of \p found (the ops of the class \p kind, KernelClasses.h)
/// with emitTiledContraction, with the prologue and epilogue each records
/// in \p kind (recordedPrologue, recordedEpilogue); an op whose tiles no
/// grid holds is an error at its location.
mlir::LogicalResult mapContractions(llvm::MutableArrayRef<Contraction> found,
                                    KernelClass kind, int64_t largeTileBlocks,
                                    TensorCores tensorCores);

} // namespace loom::codegen::gpu

#endif // LOOM_LIB_CODEGEN_GPU_TILES_H
