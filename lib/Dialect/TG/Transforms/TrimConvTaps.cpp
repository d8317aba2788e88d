//===- TrimConvTaps.cpp - Drop convolution taps that read only padding ----===//
//
// Part of Loom. See TGTrimConvTaps in Passes.td.
//
// One spatial dimension of a convolution: input size I, begin and end pads
// pb and pe, stride s, dilation d, kernel K, output size
// O = (I + pb + pe - d (K - 1) - 1) / s + 1 (rounded down). Output position
// o's tap k reads the padded input at o s + k d, that is input element
//
//   i(o, k) = o s + k d - pb,                                          (1)
//
// and a zero of the padding where i(o, k) is outside [0, I). Tap k "touches
// the input" when i(o, k) is in [0, I) for some o in [0, O); a tap that does
// not adds w[k] * 0 to every output and can be dropped. Dimensions are
// independent: an N-D tap touches the input exactly when each of its
// coordinates does in its own dimension, so trimming every dimension alone
// drops every N-D tap that reads only padding (up to the gaps below).
//
// The trimmed convolution keeps taps [a, b] (a <= first touching tap,
// b >= last one) with the filter sliced to them, k' = k - a, and
//
//   pb' = pb - a d          so that  o s + k' d - pb' = o s + k d - pb,  (2)
//
// the same input element as (1) for every kept tap and every output: the
// kept taps compute what they computed, the dropped ones only zeros. A
// padding cannot be negative, so a = min(first touching tap, pb / d). For
// the output size to stay O, the new padded length L' = I + pb' + pe' must
// satisfy (O - 1) s <= L' - d (b - a) - 1 < O s, that is, with
// last = i(O - 1, b) (the element the last output's last kept tap reads),
//
//   last - I + 1 <= pe' <= last - I + s.                               (3)
//
// pe' = max(0, last - I + 1) satisfies the left inequality, and the right
// one when last - I + s >= 0, i.e. b d >= I + pb - O s: b is the least tap
// at or after the last touching one for which that holds (b = K - 1 always
// does: the original sizes satisfy (3)). A dimension left with one tap
// reads with any dilation what it read before: it becomes dilation 1.
// Touching taps need not be contiguous (a stride longer than the input can
// step over it); the taps between the first and last touching ones stay,
// which is still exact. A dimension none of whose taps touches the input
// (the output is the bias alone) is left as it is.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace loom::tg {
#define GEN_PASS_DEF_TGTRIMCONVTAPS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// One spatial dimension of a convolution, as in the file comment.
struct ConvDim {
  int64_t input, kernel, stride, dilation, padBegin, padEnd, output;
};

/// The taps [first, last] of a dimension a trimmed convolution keeps, and
/// that dimension's new pads and dilation.
struct KeptTaps {
  int64_t first, last, padBegin, padEnd, dilation;
};

/// ceil(n / d) for d > 0 and any n.
int64_t ceilDiv(int64_t n, int64_t d) {
  return n > 0 ? (n + d - 1) / d : -(-n / d);
}

/// Whether tap \p k reads an input element for some output position: the
/// least o >= 0 with i(o, k) >= 0 (file comment, (1)) exists below O and
/// reads below I.
bool touchesInput(const ConvDim &c, int64_t k) {
  int64_t base = k * c.dilation - c.padBegin;
  int64_t o = std::max<int64_t>(0, ceilDiv(-base, c.stride));
  return o < c.output && o * c.stride + base < c.input;
}

/// The taps of \p c to keep (file comment, (2) and (3)); nothing when every
/// tap stays or none touches the input.
std::optional<KeptTaps> keptTaps(const ConvDim &c) {
  std::optional<int64_t> firstTouching, lastTouching;
  for (int64_t k = 0; k < c.kernel; ++k) {
    if (!touchesInput(c, k))
      continue;
    if (!firstTouching)
      firstTouching = k;
    lastTouching = k;
  }
  if (!firstTouching)
    return std::nullopt;
  KeptTaps kept;
  kept.first = std::min(*firstTouching, c.padBegin / c.dilation);
  kept.last = std::min(
      c.kernel - 1, std::max(*lastTouching,
                             ceilDiv(c.input + c.padBegin - c.output * c.stride,
                                     c.dilation)));
  if (kept.first == 0 && kept.last == c.kernel - 1)
    return std::nullopt;
  int64_t lastRead =
      (c.output - 1) * c.stride + kept.last * c.dilation - c.padBegin;
  kept.padBegin = c.padBegin - kept.first * c.dilation;
  kept.padEnd = std::max<int64_t>(0, lastRead - c.input + 1);
  kept.dilation = kept.first == kept.last ? 1 : c.dilation;
  return kept;
}

struct TrimTaps : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(conv.getInput().getType());
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    auto out = cast<RankedTensorType>(conv.getType());
    int64_t spatial = in.getRank() - 2;
    ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(),
                      dilations = conv.getDilations();
    if (int64_t(strides.size()) != spatial ||
        int64_t(dilations.size()) != spatial ||
        int64_t(pads.size()) != 2 * spatial)
      return failure();
    SmallVector<int64_t> starts(filter.getRank(), 0), limits(filter.getShape()),
        newPads(pads), newDilations(dilations);
    bool trimmed = false;
    for (int64_t i = 0; i < spatial; ++i) {
      ConvDim c{in.getDimSize(2 + i),
                filter.getDimSize(2 + i),
                strides[i],
                dilations[i],
                pads[i],
                pads[spatial + i],
                out.getDimSize(2 + i)};
      if (c.input < 1 || c.output < 1 || c.stride < 1 || c.dilation < 1)
        return failure();
      std::optional<KeptTaps> kept = keptTaps(c);
      if (!kept)
        continue;
      trimmed = true;
      starts[2 + i] = kept->first;
      limits[2 + i] = kept->last + 1;
      newPads[i] = kept->padBegin;
      newPads[spatial + i] = kept->padEnd;
      newDilations[i] = kept->dilation;
    }
    if (!trimmed)
      return failure();
    Value taps = SliceOp::create(rewriter, conv.getLoc(), conv.getFilter(),
                                 rewriter.getDenseI64ArrayAttr(starts),
                                 rewriter.getDenseI64ArrayAttr(limits),
                                 DenseI64ArrayAttr());
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getFilterMutable().assign(taps);
      conv.setPads(newPads);
      conv.setDilations(newDilations);
    });
    return success();
  }
};

struct TrimConvTaps : public tg::impl::TGTrimConvTapsBase<TrimConvTaps> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TrimTaps>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
