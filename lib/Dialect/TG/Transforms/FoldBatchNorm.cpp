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

/// k = gamma * rsqrt(var + epsilon) per channel: the factor of \p bn's
/// normalisation, as tg ops on its parameters.
Value normFactor(BatchNormOp bn, PatternRewriter &rewriter) {
  Location loc = bn.getLoc();
  Type elem = cast<RankedTensorType>(bn.getScale().getType()).getElementType();
  auto scalar = RankedTensorType::get({}, elem);
  auto epsilon = ConstantOp::create(
      rewriter, loc, scalar,
      DenseElementsAttr::get(
          scalar,
          rewriter.getFloatAttr(elem, bn.getEpsilon().convertToDouble())));
  Value shifted = AddOp::create(rewriter, loc, bn.getVariance(), epsilon);
  Value inv = RsqrtOp::create(rewriter, loc, shifted);
  return MulOp::create(rewriter, loc, bn.getScale(), inv);
}

/// Whether the four parameters of \p bn are weights or constants.
bool hasParameters(BatchNormOp bn) {
  return llvm::all_of(ValueRange{bn.getScale(), bn.getBias(), bn.getMean(),
                                 bn.getVariance()},
                      isParameter);
}

struct FoldIntoConv : OpRewritePattern<BatchNormOp> {
  FoldIntoConv(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() ||
        conv.getActivation() != Activation::None ||
        !isParameter(conv.getFilter()) ||
        (conv.getBias() && !isParameter(conv.getBias())) ||
        !hasParameters(bn))
      return failure();
    Location loc = bn.getLoc();
    auto filterType = conv.getFilter().getType();
    Type elem = filterType.getElementType();
    Value k = normFactor(bn, rewriter);
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

/// A batchnorm no convolution takes (a pre-activation network's: DenseNet's
/// layers normalise a concatenation, pre-activation ResNets a residual sum):
/// x * k + (beta - mean * k), k and the shift reshaped to [1, C, 1, ...].
/// --tg-fold-weights computes both; the backends see a multiply and an add
/// by one value per channel (oneDNN's binary step with the shift and an
/// activation as post-ops, in the convolutions' layout: docs/Runtime.md).
struct PerChannelAffine : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(bn.getInput().getType());
    if (type.getRank() < 2 || type.isDynamicDim(1) || !hasParameters(bn))
      return failure();
    Location loc = bn.getLoc();
    Value k = normFactor(bn, rewriter);
    Value shift = SubOp::create(rewriter, loc, bn.getBias(),
                                MulOp::create(rewriter, loc, bn.getMean(), k));
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape[1] = type.getDimSize(1);
    auto channelType = RankedTensorType::get(shape, type.getElementType());
    Value scaled = MulOp::create(
        rewriter, loc, bn.getInput(),
        ReshapeOp::create(rewriter, loc, channelType, k));
    rewriter.replaceOpWithNewOp<AddOp>(
        bn, scaled, ReshapeOp::create(rewriter, loc, channelType, shift));
    return success();
  }
};

struct FoldBatchNorm : public tg::impl::TGFoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv, PerChannelAffine>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
