//===- ParallelFirst.cpp - Parallel loops before reductions ---------------===//
//
// Part of Loom. See the description of LoomGPUParallelFirst in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUPARALLELFIRST
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

struct ParallelFirst
    : public loom::codegen::gpu::impl::LoomGPUParallelFirstBase<
          ParallelFirst> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isa<func::FuncOp>(op->getParentOp()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<unsigned> parallel, reduction;
      for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
        (kind == utils::IteratorType::parallel ? parallel : reduction)
            .push_back(i);
      SmallVector<unsigned> order(parallel);
      order.append(reduction);
      if (llvm::is_sorted(order))
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("loom-gpu-parallel-first: cannot interchange its "
                       "loops");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
