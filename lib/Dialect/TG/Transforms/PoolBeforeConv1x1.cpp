//===- PoolBeforeConv1x1.cpp - Average pooling before a 1x1 convolution --===//
//
// Part of Loom. See TGPoolBeforeConv1x1 in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGPOOLBEFORECONV1X1
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

bool allEqual(ArrayRef<int64_t> values, int64_t v) {
  return llvm::all_of(values, [&](int64_t x) { return x == v; });
}

/// The number of pixels (product of the spatial dimensions) of \p type.
int64_t pixels(RankedTensorType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape().drop_front(2))
    n *= d;
  return n;
}

/// Whether \p conv computes each output pixel from the same input pixel
/// alone: a 1x1 filter, unit strides, no padding, no activation.
bool isPointwise(ConvOp conv) {
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  return conv.getActivation() == Activation::None &&
         allEqual(filter.getShape().drop_front(2), 1) &&
         allEqual(conv.getStrides(), 1) && allEqual(conv.getPads(), 0);
}

struct PoolFirst : OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AvgPoolOp pool,
                                PatternRewriter &rewriter) const override {
    auto conv = pool.getInput().getDefiningOp<ConvOp>();
    // Without padding every window is whole and divided by its size, so the
    // bias passes through the mean unchanged.
    if (!conv || !conv->hasOneUse() || !isPointwise(conv) ||
        !allEqual(pool.getPads(), 0))
      return failure();
    auto in = cast<RankedTensorType>(conv.getInput().getType());
    auto convOut = cast<RankedTensorType>(conv.getType());
    auto out = cast<RankedTensorType>(pool.getType());
    if (!in.hasStaticShape() || !out.hasStaticShape())
      return failure();
    // Worth it when the convolution's multiply-adds saved exceed the
    // pool's extra work on the wider side (C_in above C_out).
    int64_t cin = in.getDimSize(1), cout = convOut.getDimSize(1);
    int64_t window = 1;
    for (int64_t k : pool.getKernelSize())
      window *= k;
    int64_t saved = (cin / conv.getGroups()) * cout *
                    (pixels(convOut) - pixels(out));
    int64_t extra = (cin - cout) * pixels(out) * window;
    if (saved <= std::max<int64_t>(extra, 0))
      return failure();
    SmallVector<int64_t> pooledShape(out.getShape());
    pooledShape[1] = cin;
    auto pooledType = RankedTensorType::get(pooledShape, in.getElementType());
    Value pooled = AvgPoolOp::create(
        rewriter, pool.getLoc(), pooledType, conv.getInput(),
        pool.getKernelSizeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
        pool.getCountIncludePadAttr());
    auto moved = ConvOp::create(
        rewriter, conv.getLoc(), out, pooled, conv.getFilter(),
        conv.getBias(), conv.getStridesAttr(), conv.getPadsAttr(),
        conv.getDilationsAttr(), conv.getGroupsAttr(),
        conv.getActivationAttr());
    rewriter.replaceOp(pool, moved.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct PoolBeforeConv1x1
    : public tg::impl::TGPoolBeforeConv1x1Base<PoolBeforeConv1x1> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PoolFirst>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
