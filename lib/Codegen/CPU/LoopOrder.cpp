//===- LoopOrder.cpp - The innermost loop of each structured op -----------===//
//
// Part of Loom. See the description of LoomVectorizableLoopOrder in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMVECTORIZABLELOOPORDER
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

/// The element stride of \p operand along loop \p dim: the coefficient of
/// the dimension in the accessed address (nullopt: not static).
std::optional<int64_t> strideAlong(AffineMap map, MemRefType type,
                                   unsigned dim) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> zeros(map.getNumDims(),
                                getAffineConstantExpr(0, ctx));
  SmallVector<AffineExpr> unit = zeros;
  unit[dim] = getAffineConstantExpr(1, ctx);
  int64_t total = 0;
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    auto at0 = dyn_cast<AffineConstantExpr>(
        expr.replaceDimsAndSymbols(zeros, {}));
    auto at1 =
        dyn_cast<AffineConstantExpr>(expr.replaceDimsAndSymbols(unit, {}));
    if (!at0 || !at1)
      return std::nullopt;
    int64_t coefficient = at1.getValue() - at0.getValue();
    if (coefficient == 0)
      continue;
    if (ShapedType::isDynamic(strides[r]))
      return std::nullopt;
    total += coefficient * strides[r];
  }
  return total;
}

/// How well loop \p dim suits the innermost position: each operand read
/// or written at unit stride or not moving (held in a register) counts +1,
/// one it walks through with a larger stride -1.
int score(linalg::LinalgOp op, unsigned dim) {
  int total = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    std::optional<int64_t> stride =
        strideAlong(op.getMatchingIndexingMap(&operand), type, dim);
    if (stride)
      total += (*stride == 0 || *stride == 1 || *stride == -1) ? 1 : -1;
  }
  return total;
}

struct VectorizableLoopOrder
    : public loom::codegen::cpu::impl::LoomVectorizableLoopOrderBase<
          VectorizableLoopOrder> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 1 &&
          !isa<linalg::FillOp, linalg::CopyOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      unsigned loops = op.getNumLoops();
      SmallVector<int64_t> extents = op.getStaticLoopRanges();
      unsigned best = loops - 1;
      int bestScore = score(op, best);
      for (unsigned d = 0; d + 1 < loops; ++d) {
        int s = score(op, d);
        bool longer = !ShapedType::isDynamic(extents[d]) &&
                      !ShapedType::isDynamic(extents[best]) &&
                      extents[d] > extents[best];
        if (s > bestScore || (s == bestScore && longer)) {
          best = d;
          bestScore = s;
        }
      }
      if (best == loops - 1)
        continue;
      // Loop `best` moves innermost; the others keep their order.
      SmallVector<unsigned> order;
      for (unsigned d = 0; d < loops; ++d)
        if (d != best)
          order.push_back(d);
      order.push_back(best);
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        auto generalized = linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
        return signalPassFailure();
    }
  }
};

} // namespace
