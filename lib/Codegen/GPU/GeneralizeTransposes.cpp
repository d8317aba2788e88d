//===- GeneralizeTransposes.cpp - Transposes as fusable generic ops -------===//
//
// Part of Loom. See the description of LoomGPUGeneralizeTransposes in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUGENERALIZETRANSPOSES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

struct GeneralizeTransposes
    : public loom::codegen::gpu::impl::LoomGPUGeneralizeTransposesBase<
          GeneralizeTransposes> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics())
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op.emitOpError("loom-gpu-generalize-transposes: cannot write it as "
                       "a linalg.generic");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
