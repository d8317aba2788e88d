//===- KernelClasses.h - Which class maps each kernel op ------*- C++ -*-===//
//
// Part of Loom. The kernel classes of the map stage (docs/Codegen/GPU.md,
// "Kernel classes"), written once: their names, the attribute that records
// the class chosen for an op (`loom.gpu.kernel_class`, set by
// `loom-gpu-select-kernel-classes`), and what each class takes (its match,
// defined beside its lowering). Each class's pass maps the ops that record
// its class; an op that records none (a class's pass run alone) it takes
// when its match holds under the pass's own options.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_GPU_KERNELCLASSES_H
#define LOOM_LIB_CODEGEN_GPU_KERNELCLASSES_H

#include "Tiles.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <vector>

namespace loom::codegen::gpu {

/// The classes, in the order the selection tries them: the first whose
/// match holds maps the op (the generic class's holds for every op).
#define LOOM_GPU_KERNEL_CLASSES(X)                                             \
  X(Recurrence, "recurrence")                                                  \
  X(MatmulTiles, "matmul_tiles")                                               \
  X(ConvTiles, "conv_tiles")                                                   \
  X(RowGroup, "row_group")                                                     \
  X(RowReduction, "row_reduction")                                             \
  X(Generic, "generic")

enum class KernelClass {
#define LOOM_GPU_KERNEL_CLASS_ENUM(name, text) name,
  LOOM_GPU_KERNEL_CLASSES(LOOM_GPU_KERNEL_CLASS_ENUM)
#undef LOOM_GPU_KERNEL_CLASS_ENUM
};

/// The discardable attribute (a string: the class's name) that records the
/// class chosen for a linalg op or a recurrence's `scf.for`.
constexpr llvm::StringLiteral kKernelClassAttrName = "loom.gpu.kernel_class";

/// The fewest threads of a row-reduction workgroup: a whole warp on CUDA
/// (the shuffles of a subgroup reduction take every lane), several
/// subgroups of any Vulkan device. A block size below it has no row class.
constexpr int64_t kMinRowThreads = 32;

llvm::StringRef nameOf(KernelClass kind);
std::optional<KernelClass> kernelClassNamed(llvm::StringRef name);
/// "recurrence, matmul_tiles, ...", for messages.
std::string kernelClassNames();

/// The class \p op records: none without the attribute, and failure (with
/// a diagnostic at \p op) when the attribute names no class.
mlir::FailureOr<std::optional<KernelClass>> recordedClass(mlir::Operation *op);
void recordClass(mlir::Operation *op, KernelClass kind);
/// Whether \p op's attribute names \p kind; whether it has none.
bool recordsClass(mlir::Operation *op, KernelClass kind);
bool recordsNoClass(mlir::linalg::LinalgOp op);

/// Whether \p loop (a top-level op of a kernel function) is a recurrence: a
/// sequential loop with a structured op inside (tg.scan's lowering).
/// Recurrences.cpp.
bool isRecurrence(mlir::scf::ForOp loop);
/// \p op as a product of the matrix-product class: a contraction whose
/// inputs are indexed by loops only, with one k loop of at least
/// \p minDepth steps. MatmulTiles.cpp.
mlir::FailureOr<Contraction> matchMatmulTiles(mlir::linalg::LinalgOp op,
                                              int64_t minDepth);
/// \p op as a convolution of the convolution class, at least \p minDepth
/// reduction steps deep with \p minChannels output channels per group.
/// ConvTiles.cpp.
mlir::FailureOr<Contraction> matchConvTiles(mlir::linalg::LinalgOp op,
                                            int64_t minDepth,
                                            int64_t minChannels);
/// Whether \p op is a row reduction of rows of at least \p minLength
/// elements, its rows read contiguously where the class asks it (or
/// anyhow with \p anyLayout). RowReductions.cpp.
bool isRowReduction(mlir::linalg::LinalgOp op, int64_t minLength,
                    bool anyLayout);

/// Records the row-group class on the ops of \p block (a kernel function's
/// body) that form row groups: runs of consecutive ops that \p eligible
/// takes, over the same rows, anchored by a row reduction of rows of at
/// least \p minLength elements read contiguously, for workgroups of at
/// most \p maxThreads threads. RowGroups.cpp.
void selectRowGroups(mlir::Block &block, int64_t minLength,
                     int64_t maxThreads,
                     llvm::function_ref<bool(mlir::linalg::LinalgOp)> eligible);
/// Whether \p op may be a member of a row group: a row reduction, or an op
/// whose loops are all parallel and static with a pure payload.
bool isRowGroupOp(mlir::linalg::LinalgOp op);

/// Whether \p op may stand between two structured ops that a class maps
/// together (a row group's ops, a product and its prologue or epilogue):
/// a pure op without regions that is not a structured op (a constant, a
/// view), whose order against them does not matter.
bool isBetweenStructuredOps(mlir::Operation *op);

/// The fill a product or convolution may take in (its **prologue**): the
/// structured op just before \p op in its block (pure ops that are not
/// structured ops between them), when it is a `linalg.fill` of \p op's one
/// output with a constant; else null. The matrix-product and convolution
/// classes start their sums from the constant instead of reading the
/// filled output, one launch fewer.
mlir::linalg::FillOp prologueOf(mlir::linalg::LinalgOp op);
/// \p op's prologue when it records \p kind, the class of \p op (the
/// selection records the product's class on it); else null.
mlir::linalg::FillOp recordedPrologue(mlir::linalg::LinalgOp op,
                                      KernelClass kind);
/// The elementwise op a product or convolution may take in after it (its
/// **epilogue**: a bias, an activation, a residual sum): the structured op
/// just after \p op in its block (pure ops that are not structured ops
/// between), when its loops are all parallel and static, its payload pure,
/// its one output \p op's output indexed by its loops in order (updated in
/// place), and its payload reads that output, there only; else null. The classes
/// then store the epilogue's value of each output element instead of the
/// product's, one launch fewer.
mlir::linalg::LinalgOp epilogueOf(mlir::linalg::LinalgOp op);
/// \p op's epilogue when it records \p kind, the class of \p op; else
/// null.
mlir::linalg::LinalgOp recordedEpilogue(mlir::linalg::LinalgOp op,
                                        KernelClass kind);
/// The structured op just after (before) \p op in its block, pure ops that
/// are not structured ops between them; else null.
mlir::linalg::LinalgOp nextStructuredOp(mlir::Operation *op);
mlir::linalg::LinalgOp previousStructuredOp(mlir::Operation *op);
/// Whether \p op, recording \p kind, is the prologue or the epilogue of a
/// product or convolution next to it that records \p kind (it is mapped
/// with that op).
bool isRecordedCompanion(mlir::linalg::LinalgOp op, KernelClass kind);

/// Calls \p visit on every linalg op of \p module outside a launch that the
/// class \p kind may map: those recording \p kind (`recorded`) and those
/// recording no class. Fails at the first failure of \p visit.
mlir::LogicalResult
forEachOpOfClass(mlir::ModuleOp module, KernelClass kind,
                 llvm::function_ref<mlir::LogicalResult(mlir::linalg::LinalgOp,
                                                        bool recorded)>
                     visit);

/// Calls \p visit on every top-level `scf.for` of a kernel function of
/// \p module (where recurrences are) with the class it records. Fails where
/// an attribute names no class or \p visit fails.
mlir::LogicalResult forEachTopLevelLoop(
    mlir::ModuleOp module,
    llvm::function_ref<mlir::LogicalResult(mlir::scf::ForOp,
                                           std::optional<KernelClass>)>
        visit);

/// The error at \p op that records \p kind but is not one of its ops.
mlir::LogicalResult emitNotOfClass(mlir::Operation *op, KernelClass kind);

/// What the class \p kind maps in \p module, in walk order: each op that
/// records \p kind as \p match(op, /*recorded=*/true) makes it (whatever
/// its pass's thresholds; an op it does not take is an error), and each op
/// that records no class that \p match(op, /*recorded=*/false) takes (a
/// class's pass run alone decides under its own options).
template <typename Match>
auto opsOfClass(mlir::ModuleOp module, KernelClass kind, Match match)
    -> mlir::FailureOr<std::vector<
        typename decltype(match(mlir::linalg::LinalgOp(), true))::value_type>> {
  std::vector<typename decltype(match(mlir::linalg::LinalgOp(),
                                      true))::value_type>
      found;
  auto visit = [&](mlir::linalg::LinalgOp op,
                   bool recorded) -> mlir::LogicalResult {
    auto matched = match(op, recorded);
    if (mlir::succeeded(matched))
      found.push_back(*matched);
    else if (recorded)
      return emitNotOfClass(op, kind);
    return mlir::success();
  };
  if (mlir::failed(forEachOpOfClass(module, kind, visit)))
    return mlir::failure();
  return found;
}

} // namespace loom::codegen::gpu

#endif // LOOM_LIB_CODEGEN_GPU_KERNELCLASSES_H
