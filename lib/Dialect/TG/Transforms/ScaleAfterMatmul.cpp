//===- ScaleAfterMatmul.cpp - A matmul operand's scale onto its result ---===//
//
// Part of Loom. See TGScaleAfterMatmul in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGSCALEAFTERMATMUL
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// Whether \p v is a constant of one element (a scalar or all-ones shape).
bool isScalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseFPElementsAttr>(c.getValue()) : nullptr;
  return dense && dense.getNumElements() == 1;
}

/// The scaled value and the scale of \p op when it is `x / c`, `x * c` or
/// `c * x` with a one-element constant c and the result of x's type.
std::optional<std::pair<Value, Value>> scaleOf(Operation *op) {
  if (!op || !isa<DivOp, MulOp>(op) || op->getNumOperands() != 2)
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (isa<MulOp>(op) && isScalarConstant(lhs))
    std::swap(lhs, rhs);
  if (!isScalarConstant(rhs) || lhs.getType() != op->getResult(0).getType())
    return std::nullopt;
  return std::make_pair(lhs, rhs);
}

/// Whether generated code would fuse an elementwise op before \p user (an
/// elementwise op or a softmax: lib/Compiler/FormFragments.cpp).
bool fusesScale(Operation *user) {
  return isa<SoftmaxOp>(user) || user->hasTrait<tg::Elementwise>();
}

struct ScaleAfter : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (!matmul->hasOneUse() || !fusesScale(*matmul->user_begin()))
      return failure();
    for (OpOperand &operand : matmul->getOpOperands()) {
      Operation *scale = operand.get().getDefiningOp();
      auto scaled = scaleOf(scale);
      if (!scaled || !scale->hasOneUse() ||
          !isa_and_nonnull<TransposeOp, ReshapeOp, SliceOp>(
              scaled->first.getDefiningOp()))
        continue;
      rewriter.modifyOpInPlace(matmul, [&] { operand.set(scaled->first); });
      rewriter.setInsertionPointAfter(matmul);
      Operation *after = rewriter.clone(*scale);
      after->setOperands(isa<MulOp>(scale) && scale->getOperand(0) ==
                                                  scaled->second
                             ? ValueRange{scaled->second, matmul.getResult()}
                             : ValueRange{matmul.getResult(), scaled->second});
      after->getResult(0).setType(matmul.getType());
      rewriter.replaceAllUsesExcept(matmul.getResult(), after->getResult(0),
                                    after);
      rewriter.eraseOp(scale);
      return success();
    }
    return failure();
  }
};

struct ScaleAfterMatmul
    : public tg::impl::TGScaleAfterMatmulBase<ScaleAfterMatmul> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScaleAfter>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
