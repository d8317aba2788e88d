//===- Conv3dAs2d.cpp - 3-D convolutions as sums of 2-D ones --------------===//
//
// Part of Loom. See TGConv3dAs2d in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Activation.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGCONV3DAS2D
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// Swaps dimensions 1 and 2 of a rank-5 tensor ([N, C, D, H, W] <-> [N, D,
/// C, H, W]).
Value swapOneTwo(PatternRewriter &r, Location loc, Value v) {
  return TransposeOp::create(r, loc, v, r.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
}

/// A convolution whose kernel spans depth alone (`[O, C/g, KD, 1, 1]`, as
/// R(2+1)D's temporal ones), unit strides and no pads in height and width:
/// one 2-D convolution over `[N, C, D, H * W]` (a reshape, no copy) with the
/// kernel `[O, C/g, KD, 1]`. Null when \p conv is not of that form.
Value depthOnly(PatternRewriter &r, ConvOp conv) {
  auto inType = conv.getInput().getType();
  ArrayRef<int64_t> in = inType.getShape(),
                    f = conv.getFilter().getType().getShape();
  ArrayRef<int64_t> s = conv.getStrides(), p = conv.getPads(),
                    d = conv.getDilations();
  if (f[3] != 1 || f[4] != 1 || s[1] != 1 || s[2] != 1 || p[1] != 0 ||
      p[2] != 0 || p[4] != 0 || p[5] != 0)
    return Value();
  Location loc = conv.getLoc();
  Type e = inType.getElementType();
  int64_t plane = in[3] * in[4];
  Value x = ReshapeOp::create(
      r, loc, RankedTensorType::get({in[0], in[1], in[2], plane}, e),
      conv.getInput());
  Value k = ReshapeOp::create(
      r, loc, RankedTensorType::get({f[0], f[1], f[2], 1}, e),
      conv.getFilter());
  Value y = ConvOp::create(
      r, loc, x, k, conv.getBias(), r.getDenseI64ArrayAttr({s[0], 1}),
      r.getDenseI64ArrayAttr({p[0], 0, p[3], 0}),
      r.getDenseI64ArrayAttr({d[0], 1}), conv.getGroupsAttr(),
      conv.getActivationAttr());
  return ReshapeOp::create(r, loc, conv.getType(), y);
}

struct Conv3dAs2d : OpRewritePattern<ConvOp> {
  Conv3dAs2d(MLIRContext *context, std::function<bool(Operation *)> keep)
      : OpRewritePattern(context), keep(std::move(keep)) {}

  /// The 3-D convolutions left as they are (null: none).
  std::function<bool(Operation *)> keep;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &r) const override {
    auto inType = conv.getInput().getType();
    if (inType.getRank() != 5 || (keep && keep(conv)))
      return failure();
    if (Value y = depthOnly(r, conv)) {
      r.replaceOp(conv, y);
      return success();
    }
    // A bf16 or f16 convolution accumulates in f32 and is rounded once to
    // its type (docs/Precision.md); a sum of its taps' 2-D convolutions
    // would round each tap and every partial sum.
    if (!inType.getElementType().isF32() && !inType.getElementType().isF64())
      return failure();
    Location loc = conv.getLoc();
    ArrayRef<int64_t> in = inType.getShape(),
                      f = conv.getFilter().getType().getShape(),
                      out = conv.getType().getShape();
    ArrayRef<int64_t> s = conv.getStrides(), p = conv.getPads(),
                      d = conv.getDilations();
    int64_t n = in[0], c = in[1], h = in[3], w = in[4];
    int64_t o = f[0], cg = f[1], kd = f[2], kh = f[3], kw = f[4];
    int64_t od = out[2];
    // The input padded in depth, with depth before the channels.
    Value x = conv.getInput();
    if (p[0] != 0 || p[3] != 0)
      x = PadOp::create(r, loc, x, r.getDenseI64ArrayAttr({0, 0, p[0], 0, 0}),
                        r.getDenseI64ArrayAttr({0, 0, p[3], 0, 0}),
                        r.getF64FloatAttr(0.0));
    x = swapOneTwo(r, loc, x);
    Type e = inType.getElementType();
    auto flatType = RankedTensorType::get({n * od, c, h, w}, e);
    auto tapType = RankedTensorType::get({o, cg, kh, kw}, e);
    Value sum;
    for (int64_t t = 0; t < kd; ++t) {
      // Depths t * dilation + i * stride, i < OD: [N, OD, C, H, W].
      int64_t start = t * d[0];
      Value slice = SliceOp::create(
          r, loc, x, r.getDenseI64ArrayAttr({0, start, 0, 0, 0}),
          r.getDenseI64ArrayAttr({n, start + (od - 1) * s[0] + 1, c, h, w}),
          r.getDenseI64ArrayAttr({1, s[0], 1, 1, 1}));
      Value images = ReshapeOp::create(r, loc, flatType, slice);
      Value tap = SliceOp::create(
          r, loc, conv.getFilter(), r.getDenseI64ArrayAttr({0, 0, t, 0, 0}),
          r.getDenseI64ArrayAttr({o, cg, t + 1, kh, kw}), DenseI64ArrayAttr());
      tap = ReshapeOp::create(r, loc, tapType, tap);
      bool last = t == kd - 1;
      Value y = ConvOp::create(
          r, loc, images, tap, last ? conv.getBias() : Value(),
          r.getDenseI64ArrayAttr({s[1], s[2]}),
          r.getDenseI64ArrayAttr({p[1], p[2], p[4], p[5]}),
          r.getDenseI64ArrayAttr({d[1], d[2]}), conv.getGroupsAttr(),
          ActivationAttr::get(r.getContext(),
                              kd == 1 ? conv.getActivation() : Activation::None));
      sum = sum ? AddOp::create(r, loc, y, sum).getResult() : y;
    }
    if (kd > 1)
      sum = applyActivation(r, loc, conv.getActivation(), sum);
    auto planes = cast<RankedTensorType>(sum.getType()).getShape();
    Value split = ReshapeOp::create(
        r, loc,
        RankedTensorType::get({n, od, o, planes[2], planes[3]}, e), sum);
    r.replaceOp(conv, swapOneTwo(r, loc, split));
    return success();
  }
};

struct Conv3dAs2dPass : public tg::impl::TGConv3dAs2dBase<Conv3dAs2dPass> {
  Conv3dAs2dPass() = default;
  explicit Conv3dAs2dPass(std::function<bool(Operation *)> keep)
      : keep(std::move(keep)) {}

  std::function<bool(Operation *)> keep;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Conv3dAs2d>(&getContext(), keep);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass>
tg::createTGConv3dAs2d(std::function<bool(Operation *)> keep) {
  return std::make_unique<Conv3dAs2dPass>(std::move(keep));
}
