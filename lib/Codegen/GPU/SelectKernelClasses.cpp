//===- SelectKernelClasses.cpp - One kernel class per op ------------------===//
//
// Part of Loom. See the description of LoomGPUSelectKernelClasses in
// Passes.td and docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "KernelClasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUSELECTKERNELCLASSES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

struct SelectKernelClasses
    : public loom::codegen::gpu::impl::LoomGPUSelectKernelClassesBase<
          SelectKernelClasses> {
  using LoomGPUSelectKernelClassesBase::LoomGPUSelectKernelClassesBase;

  void runOnOperation() override {
    llvm::SmallPtrSet<Operation *, 8> recurrences;
    if (failed(selectRecurrences(recurrences)))
      return signalPassFailure();
    selectGroups();
    WalkResult walked = getOperation().walk([&](linalg::LinalgOp op) {
      // A recurrence's ops are its class's; a launch's are mapped.
      if (op->getParentOfType<mlir::gpu::LaunchOp>() ||
          llvm::any_of(recurrences, [&](Operation *loop) {
            return loop->isProperAncestor(op);
          }))
        return WalkResult::advance();
      FailureOr<std::optional<KernelClass>> recorded = recordedClass(op);
      if (failed(recorded) || (*recorded && failed(respect(op, **recorded))))
        return WalkResult::interrupt();
      if (!*recorded)
        recordClass(op, companionClass(op).value_or(select(op)));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }

  /// Records the recurrence class on every top-level `scf.for` of a kernel
  /// function that is a recurrence; a recurrence that records another
  /// class, or another loop that records a class but the generic one (which
  /// runs it on one thread), is an error.
  LogicalResult selectRecurrences(llvm::SmallPtrSetImpl<Operation *> &out) {
    auto select = [&](scf::ForOp loop,
                      std::optional<KernelClass> recorded) -> LogicalResult {
      if (!isRecurrence(loop))
        return recorded && *recorded != KernelClass::Generic
                   ? emitNotOfClass(loop, *recorded)
                   : success();
      if (recorded && *recorded != KernelClass::Recurrence)
        return loop.emitOpError("records kernel class '")
               << nameOf(*recorded)
               << "' but is a recurrence, which only the recurrence class "
                  "maps";
      recordClass(loop, KernelClass::Recurrence);
      out.insert(loop);
      return success();
    };
    return forEachTopLevelLoop(getOperation(), select);
  }

  /// Records the row-group class on the runs of ops of each kernel
  /// function's body that form row groups, among the ops that record no
  /// class and that no class tried before it takes.
  void selectGroups() {
    if (genericOnly || !rowClassRuns())
      return;
    auto eligible = [&](linalg::LinalgOp op) {
      return recordsNoClass(op) &&
             failed(matchMatmulTiles(op, matmulMinDepth)) &&
             failed(matchConvTiles(op, convMinDepth, convMinChannels));
    };
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal())
        selectRowGroups(fn.getBody().front(), rowMinLength, blockSize,
                        eligible);
  }

  /// The class of the product or convolution whose prologue or epilogue
  /// \p op is (KernelClasses.h, prologueOf and epilogueOf): the class that
  /// op records, or the one this pass selects for it; none when \p op is
  /// the prologue or epilogue of neither.
  std::optional<KernelClass> companionClass(linalg::LinalgOp op) const {
    // Read without a diagnostic: the walk reports a bad attribute at the
    // product itself.
    auto productClass = [&](linalg::LinalgOp product)
        -> std::optional<KernelClass> {
      for (KernelClass kind : {KernelClass::MatmulTiles, KernelClass::ConvTiles})
        if (recordsClass(product, kind) ||
            (recordsNoClass(product) && select(product) == kind))
          return kind;
      return std::nullopt;
    };
    if (linalg::LinalgOp next = nextStructuredOp(op);
        next && prologueOf(next).getOperation() == op.getOperation())
      return productClass(next);
    if (linalg::LinalgOp previous = previousStructuredOp(op);
        previous && epilogueOf(previous) == op)
      return productClass(previous);
    return std::nullopt;
  }

  bool rowClassRuns() const {
    return blockSize >= kMinRowThreads && blockSize <= 1024;
  }

  /// The first class whose match holds for \p op under this pass's options.
  KernelClass select(linalg::LinalgOp op) const {
    if (genericOnly)
      return KernelClass::Generic;
    if (succeeded(matchMatmulTiles(op, matmulMinDepth)))
      return KernelClass::MatmulTiles;
    if (succeeded(matchConvTiles(op, convMinDepth, convMinChannels)))
      return KernelClass::ConvTiles;
    if (rowClassRuns() && isRowReduction(op, rowMinLength, false))
      return KernelClass::RowReduction;
    return KernelClass::Generic;
  }

  /// Keeps the class \p kind that \p op records when the class takes it
  /// (whatever the thresholds) and the pipeline runs the class; else an
  /// error at \p op.
  LogicalResult respect(linalg::LinalgOp op, KernelClass kind) const {
    auto leftOut = [&](const Twine &why) {
      return op->emitOpError("records kernel class '")
             << nameOf(kind) << "', which " << why;
    };
    if (genericOnly && kind != KernelClass::Generic)
      return leftOut("generic-only leaves out");
    bool takes = true;
    switch (kind) {
    case KernelClass::Recurrence:
      takes = false;
      break;
    case KernelClass::MatmulTiles:
      takes = succeeded(matchMatmulTiles(op, 1)) || companionClass(op) == kind;
      break;
    case KernelClass::ConvTiles:
      takes =
          succeeded(matchConvTiles(op, 1, 0)) || companionClass(op) == kind;
      break;
    case KernelClass::RowGroup:
      if (!rowClassRuns())
        return leftOut("block-size " + Twine(int64_t(blockSize)) +
                       " leaves out (it needs 32 to 1024 threads)");
      takes = isRowGroupOp(op);
      break;
    case KernelClass::RowReduction:
      if (!rowClassRuns())
        return leftOut("block-size " + Twine(int64_t(blockSize)) +
                       " leaves out (it needs 32 to 1024 threads)");
      takes = isRowReduction(op, 1, /*anyLayout=*/true);
      break;
    case KernelClass::Generic:
      break;
    }
    return takes ? success() : emitNotOfClass(op, kind);
  }
};

} // namespace
