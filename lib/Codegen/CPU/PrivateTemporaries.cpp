//===- PrivateTemporaries.cpp - An empty tensor per use -------------------===//
//
// Part of Loom. See LoomPrivateTemporaries in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Builders.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMPRIVATETEMPORARIES
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

/// Whether \p op yields a value with no contents of its own: a
/// tensor.empty, or a fill, reshape or vector read of such a value (the
/// accumulators that register tiling reads before its loops).
bool isFresh(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (!isa<linalg::FillOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
           vector::TransferReadOp>(op) ||
      op->getNumResults() != 1)
    return false;
  for (Value v : op->getOperands())
    if (isa<RankedTensorType>(v.getType()))
      if (Operation *def = v.getDefiningOp(); !def || !isFresh(def))
        return false;
  return true;
}

/// A copy of \p op with copies of the fresh values it reads.
Value cloneFresh(OpBuilder &b, Operation *op) {
  IRMapping mapping;
  for (Value v : op->getOperands())
    if (isa<RankedTensorType>(v.getType()))
      mapping.map(v, cloneFresh(b, v.getDefiningOp()));
  return b.clone(*op, mapping)->getResult(0);
}

/// Gives every use of \p op's result after the first a copy of \p op and
/// of the fresh values it reads, made where \p op is.
void privatize(Operation *op) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : op->getResult(0).getUses())
    uses.push_back(&use);
  for (OpOperand *use : llvm::drop_begin(uses)) {
    OpBuilder b(op);
    use->set(cloneFresh(b, op));
  }
}

struct PrivateTemporaries
    : public codegen::cpu::impl::LoomPrivateTemporariesBase<
          PrivateTemporaries> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.getNumResults() < 2)
        continue;
      // Users before producers: a read's copies take copies of its fill.
      SmallVector<Operation *> fresh;
      fn.walk([&](Operation *op) {
        if (isFresh(op))
          fresh.push_back(op);
      });
      for (Operation *op : llvm::reverse(fresh))
        if (!op->getResult(0).hasOneUse())
          privatize(op);
    }
  }
};

} // namespace
