//===- ConvOverConcat.cpp - Convolutions of a concatenation's operands ----===//
//
// Part of Loom. See TGConvOverConcat in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Activation.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGCONVOVERCONCAT
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// Fewer channels than one AVX-512 vector of f32 make a convolution's
/// reduction too short for the library kernels to run at speed: an operand
/// that narrow keeps its concatenation.
constexpr int64_t kMinOperandChannels = 16;

/// The concatenation's axis in `[0, rank)`, or -1 when its result is not a
/// ranked tensor of static shape.
int64_t concatAxis(ConcatOp concat) {
  auto type = dyn_cast<RankedTensorType>(concat.getType());
  if (!type || !type.hasStaticShape())
    return -1;
  int64_t axis = concat.getAxis();
  return axis < 0 ? axis + type.getRank() : axis;
}

/// `pool(concat(x1, ..., xn))` -> `concat(pool(x1), ..., pool(xn))` where
/// the pool is the concatenation's only reader and the concatenation joins
/// batches or channels (a pool works on each image and channel alone). The
/// concatenation then copies the pooled tensors, and convolutions reading
/// it may take its operands apart (ConvsOverConcat).
template <typename PoolOp>
struct PoolBeforeConcat : OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolOp pool,
                                PatternRewriter &rewriter) const override {
    auto concat = pool.getInput().template getDefiningOp<ConcatOp>();
    if (!concat || !concat->hasOneUse())
      return failure();
    int64_t axis = concatAxis(concat);
    auto outType = dyn_cast<RankedTensorType>(pool.getType());
    if (axis < 0 || axis > 1 || !outType || !outType.hasStaticShape())
      return failure();
    SmallVector<Value> pooled;
    for (Value x : concat.getInputs()) {
      SmallVector<int64_t> shape(outType.getShape());
      shape[axis] = cast<RankedTensorType>(x.getType()).getDimSize(axis);
      OperationState state(pool.getLoc(), pool->getName(), ValueRange{x},
                           {outType.clone(shape)}, pool->getAttrs());
      pooled.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOp(pool,
                       ConcatOp::create(rewriter, concat.getLoc(), pooled,
                                        axis)
                           .getResult());
    rewriter.eraseOp(concat);
    return success();
  }
};

/// The convolutions that read \p concat's result as their input, when they
/// are all of its readers, dense (one group) and of parameter filters;
/// empty otherwise.
SmallVector<ConvOp> convReaders(ConcatOp concat) {
  SmallVector<ConvOp> convs;
  for (Operation *user : concat->getUsers()) {
    auto conv = dyn_cast<ConvOp>(user);
    if (!conv || conv.getInput() != concat.getResult() ||
        conv.getFilter() == concat.getResult() || conv.getGroups() != 1 ||
        !isParameter(conv.getFilter()) ||
        !cast<RankedTensorType>(conv.getType()).hasStaticShape())
      return {};
    if (!llvm::is_contained(convs, conv))
      convs.push_back(conv);
  }
  return convs;
}

/// `conv(concat(x1, ..., xn), W, b)` -> `conv(x1, W1, b) + ... + conv(xn,
/// Wn)` along the channels, `Wi` the filter's slice of `xi`'s input
/// channels, the fused activation applied to the sum. Convolution is linear
/// in its input channels (zero padding included), so this is exact in real
/// arithmetic. Applied to all of a concatenation's readers at once, when
/// every reader is such a convolution, so that the concatenation goes away.
/// It pays where copying the concatenation costs more memory traffic than
/// the partial sums: each of the `n - 1` additions writes and reads a
/// convolution's result once more (a library convolution adds it as a sum
/// post-op), the concatenation reads and writes its whole result, so
/// `(n - 1) * sum(elements of each reader's result) < elements of the
/// concatenation` (SqueezeNet's fire modules: 128 -> 16 channels of
/// squeeze after the 64 + 64 of expand).
struct ConvsOverConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(concat.getType());
    if (concatAxis(concat) != 1 || type.getRank() < 3 ||
        concat.getInputs().size() < 2)
      return failure();
    for (Value x : concat.getInputs())
      if (cast<RankedTensorType>(x.getType()).getDimSize(1) <
          kMinOperandChannels)
        return failure();
    SmallVector<ConvOp> convs = convReaders(concat);
    if (convs.empty())
      return failure();
    int64_t partials = 0;
    for (ConvOp conv : convs)
      partials += cast<RankedTensorType>(conv.getType()).getNumElements();
    int64_t extra = int64_t(concat.getInputs().size() - 1) * partials;
    if (extra >= type.getNumElements())
      return failure();
    for (ConvOp conv : convs)
      split(conv, concat, rewriter);
    rewriter.eraseOp(concat);
    return success();
  }

  /// Replaces \p conv by one convolution per operand of \p concat, summed.
  static void split(ConvOp conv, ConcatOp concat, PatternRewriter &r) {
    r.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    Value filter = conv.getFilter();
    auto filterType = cast<RankedTensorType>(filter.getType());
    SmallVector<int64_t> starts(filterType.getRank(), 0);
    SmallVector<int64_t> limits(filterType.getShape());
    Value sum;
    for (Value x : concat.getInputs()) {
      int64_t channels = cast<RankedTensorType>(x.getType()).getDimSize(1);
      limits[1] = starts[1] + channels;
      Value part = SliceOp::create(r, loc, filter,
                                   r.getDenseI64ArrayAttr(starts),
                                   r.getDenseI64ArrayAttr(limits),
                                   DenseI64ArrayAttr());
      starts[1] = limits[1];
      Value y = ConvOp::create(
          r, loc, conv.getType(), x, part, sum ? Value() : conv.getBias(),
          conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
          conv.getGroupsAttr(),
          ActivationAttr::get(r.getContext(), Activation::None));
      sum = sum ? AddOp::create(r, loc, y, sum).getResult() : y;
    }
    r.replaceOp(conv, applyActivation(r, loc, conv.getActivation(), sum));
  }
};

struct ConvOverConcat
    : public tg::impl::TGConvOverConcatBase<ConvOverConcat> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PoolBeforeConcat<MaxPoolOp>, PoolBeforeConcat<AvgPoolOp>,
                 PoolBeforeConcat<GlobalAvgPoolOp>, ConvsOverConcat>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
