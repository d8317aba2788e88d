//===- Launches.h - Building gpu.launch ops of a kernel class ---*- C++ -*-===//
//
// Part of Loom. What every kernel class of the GPU kernel pipeline
// (docs/Codegen/GPU.md, "Kernel classes") shares when it builds a launch:
// the grid that covers a number of blocks within Vulkan's limits, the launch
// itself, the linear block index, and the capture of pure producers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_GPU_LAUNCHES_H
#define LOOM_LIB_CODEGEN_GPU_LAUNCHES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace loom::codegen::gpu {

/// The most blocks along one grid dimension (Vulkan's guaranteed minimum of
/// maxComputeWorkGroupCount; CUDA allows more along x only).
constexpr int64_t kMaxGridDim = 65535;

/// The most loop iterations a kernel class lets one thread of a launch take
/// (its loops' back edges together, counted from constant bounds): lavapipe
/// (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS) leaves every loop of an
/// invocation once they have iterated 65,535 times, and a launch of bounded
/// length is what a GPU's scheduler expects too.
constexpr int64_t kLoopBudget = 60000;

/// A grid of [x, y, 1] blocks that holds at least `blocks` of them.
struct Grid {
  int64_t x = 1, y = 1;
  int64_t size() const { return x * y; }
};

/// The grid for \p blocks blocks (x first), or failure when even a grid of
/// 65535 x 65535 does not hold them.
mlir::FailureOr<Grid> gridFor(int64_t blocks);

/// The constant trip count of each dimension of \p loop, or failure when a
/// bound or step is not a constant (or a step not positive).
mlir::FailureOr<llvm::SmallVector<int64_t>>
tripCounts(mlir::scf::ParallelOp loop);

/// A launch of \p grid of blocks of [threads, 1, 1], its body empty but for
/// the terminator; the builder is left before the terminator.
mlir::gpu::LaunchOp createLaunch(mlir::OpBuilder &b, mlir::Location loc,
                                 Grid grid, int64_t threads);

/// The linear index of the block running \p launch (y * grid.x + x), built
/// at \p b's insertion point.
mlir::Value linearBlockId(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::gpu::LaunchOp launch, Grid grid);

/// Workgroup memory of \p shape and \p elementType in its one canonical
/// form: a `memref.alloc` in `#gpu.address_space<workgroup>`, built at
/// \p b's insertion point (the top of a launch body), aligned to
/// \p alignment bytes where given (the alloc's `alignment`; else the
/// element's). loom-gpu-nvvm-forms and loom-gpu-spirv-forms rewrite it for
/// each path.
mlir::Value allocWorkgroupMemory(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::ArrayRef<int64_t> shape,
                                 mlir::Type elementType,
                                 std::optional<uint64_t> alignment = {});

/// The position of linear index \p id in a row-major space of \p extents
/// (the last extent varies fastest), one index per extent.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b,
                                           mlir::Location loc, mlir::Value id,
                                           llvm::ArrayRef<int64_t> extents);

/// The indices \p map selects from the loop positions \p ivs: a loop's
/// position as it is, any other expression (a convolution's
/// `oh * stride + kh * dilation`) as an `affine.apply` on \p ivs.
llvm::SmallVector<mlir::Value> applyMap(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::AffineMap map,
                                        llvm::ArrayRef<mlir::Value> ivs);

/// \p op's payload at loop positions \p ivs, built at \p b's insertion
/// point: each block argument is \p given's value for its operand where
/// that is not null, else the operand itself (a scalar) or, where the
/// payload uses it, the operand's element loaded at its indices there; a
/// `linalg.index` is the loop's position. The values the payload yields,
/// one per output.
llvm::SmallVector<mlir::Value>
payloadAt(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::LinalgOp op,
          llvm::ArrayRef<mlir::Value> ivs,
          llvm::function_ref<mlir::Value(mlir::OpOperand &)> given = nullptr);

/// Whether \p op loads from a parameter of its function that the function
/// never writes (every use of the parameter is a load): such a load may be
/// repeated wherever its value is needed, as a pure op may (a top-k's
/// run-time K, read by several launches).
bool isInvariantLoad(mlir::Operation *op);

/// Clones into \p launch every pure op (a constant, a view of a parameter)
/// and invariant load whose results its body uses, so that it captures only
/// the function's parameters.
void clonePureProducers(mlir::gpu::LaunchOp launch);

} // namespace loom::codegen::gpu

#endif // LOOM_LIB_CODEGEN_GPU_LAUNCHES_H
