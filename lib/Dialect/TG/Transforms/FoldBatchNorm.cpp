//===- FoldBatchNorm.cpp - Fold inference batchnorm into convolutions -----===//
//
// Part of Loom. See TGFoldBatchNorm in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGFOLDBATCHNORM
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

struct FoldIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() ||
        conv.getActivation() != Activation::None ||
        !isParameter(conv.getFilter()) ||
        (conv.getBias() && !isParameter(conv.getBias())) ||
        !llvm::all_of(ValueRange{bn.getScale(), bn.getBias(), bn.getMean(),
                                 bn.getVariance()},
                      isParameter))
      return failure();
    Location loc = bn.getLoc();
    auto channel = cast<RankedTensorType>(bn.getScale().getType());
    auto filterType = conv.getFilter().getType();
    Type elem = channel.getElementType();
    auto scalar = RankedTensorType::get({}, elem);
    auto epsilon = ConstantOp::create(
        rewriter, loc, scalar,
        DenseElementsAttr::get(
            scalar,
            rewriter.getFloatAttr(elem, bn.getEpsilon().convertToDouble())));
    // k = gamma * rsqrt(var + epsilon), per output channel.
    Value shifted = AddOp::create(rewriter, loc, bn.getVariance(), epsilon);
    Value inv = RsqrtOp::create(rewriter, loc, shifted);
    Value k = MulOp::create(rewriter, loc, bn.getScale(), inv);
    // W' = W * k[o], broadcast over [O, C, K...] (1 to 3 spatial dims).
    SmallVector<int64_t> kShape(filterType.getRank(), 1);
    kShape[0] = filterType.getDimSize(0);
    auto kType = RankedTensorType::get(kShape, elem);
    Value kFilter = ReshapeOp::create(rewriter, loc, kType, k);
    Value filter = MulOp::create(rewriter, loc, conv.getFilter(), kFilter);
    // b' = (b - mean) * k + beta.
    Value centred =
        conv.getBias()
            ? SubOp::create(rewriter, loc, conv.getBias(), bn.getMean())
                  .getResult()
            : NegOp::create(rewriter, loc, bn.getMean()).getResult();
    Value bias = AddOp::create(
        rewriter, loc, MulOp::create(rewriter, loc, centred, k), bn.getBias());
    auto folded = ConvOp::create(
        rewriter, conv.getLoc(), conv.getInput(), filter, bias,
        conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
        conv.getGroupsAttr(), conv.getActivationAttr());
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct FoldBatchNorm : public tg::impl::TGFoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
