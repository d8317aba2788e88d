//===- LinearOps.cpp - Facts of tg.matmul and tg.conv -------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "loom/Dialect/TG/IR/TGActivation.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// tg.matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferMatmul(location, adaptor.getLhs().getType(),
                     adaptor.getRhs().getType(), inferred);
}

LogicalResult MatmulOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::matmul(f.in(0), f.in(1))); });
}

OpWork MatmulOp::getWork() {
  // A multiply-add per result element and step of the contraction.
  int64_t k = getLhs().getType().getShape().back();
  return streamingWork(*this, 2.0 * double(k));
}

LogicalResult MatmulOp::exportONNX(ONNXEmitter &e) {
  return e.direct("MatMul");
}

//===----------------------------------------------------------------------===//
// tg.conv
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Type bias = adaptor.getBias() ? adaptor.getBias().getType() : Type();
  return inferConv(location, adaptor.getInput().getType(),
                     adaptor.getFilter().getType(), bias, adaptor.getStrides(),
                     adaptor.getPads(), adaptor.getDilations(),
                     adaptor.getGroups(), inferred);
}

namespace {
/// A zero padding a convolution's input is made of: `low` and `high` per
/// dimension of that input; the tg.pad; and where a reshape that only
/// inserts or drops unit dimensions follows the pad, the type of the
/// unpadded value so reshaped.
struct ZeroPad {
  SmallVector<int64_t> low, high;
  PadOp pad;
  RankedTensorType reshaped;
};

/// Where each dimension of \p from lands in \p to when the two differ only
/// in dimensions of size 1, -1 for a dropped one; nullopt otherwise.
std::optional<SmallVector<int64_t>> unitDimsMap(ArrayRef<int64_t> from,
                                                ArrayRef<int64_t> to) {
  SmallVector<int64_t> map;
  size_t j = 0;
  for (int64_t d : from) {
    while (j < to.size() && to[j] == 1 && d != 1)
      ++j;
    if (j < to.size() && to[j] == d) {
      map.push_back(int64_t(j++));
      continue;
    }
    if (d != 1)
      return std::nullopt;
    map.push_back(-1);
  }
  for (; j < to.size(); ++j)
    if (to[j] != 1)
      return std::nullopt;
  return map;
}

/// The zero padding that makes \p v: a tg.pad with value 0, or one seen
/// through a reshape that only inserts or drops unit dimensions (the
/// importer's 1-D convolution is a 2-D one of height 1).
std::optional<ZeroPad> zeroPadOf(Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  auto pad = (reshape ? reshape.getInput() : v).getDefiningOp<PadOp>();
  if (!pad || pad.getValue().convertToDouble() != 0.0)
    return std::nullopt;
  if (!reshape)
    return ZeroPad{SmallVector<int64_t>(pad.getLow()),
                   SmallVector<int64_t>(pad.getHigh()), pad, nullptr};
  auto shape = cast<RankedTensorType>(reshape.getType()).getShape();
  std::optional<SmallVector<int64_t>> map =
      unitDimsMap(pad.getType().getShape(), shape);
  if (!map)
    return std::nullopt;
  ZeroPad z{SmallVector<int64_t>(shape.size(), 0),
            SmallVector<int64_t>(shape.size(), 0), pad, nullptr};
  SmallVector<int64_t> unpadded(shape);
  for (auto [i, j] : llvm::enumerate(*map)) {
    int64_t low = pad.getLow()[i], high = pad.getHigh()[i];
    if (j < 0 && (low || high))
      return std::nullopt;
    if (j < 0)
      continue;
    z.low[j] = low;
    z.high[j] = high;
    unpadded[j] -= low + high;
  }
  z.reshaped = RankedTensorType::get(unpadded, pad.getType().getElementType());
  return z;
}

/// conv(pad(x, low, high, 0), w) -> conv(x, w) with pads + (low, high) when
/// the pad adds zeros on the spatial dimensions only (PyTorch's F.pad before
/// a causal or dilated 1-D convolution): the convolution's own padding is
/// zeros too. The pad stays for its other users.
struct FoldZeroPadIntoConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ZeroPad> z = zeroPadOf(op.getInput());
    size_t k = op.getInput().getType().getRank() - 2;
    if (!z || z->low[0] || z->low[1] || z->high[0] || z->high[1] ||
        op.getPads().size() != 2 * k)
      return failure();
    SmallVector<int64_t> pads(op.getPads());
    for (size_t i = 0; i < k; ++i) {
      pads[i] += z->low[2 + i];
      pads[k + i] += z->high[2 + i];
    }
    Value input = z->pad.getInput();
    if (z->reshaped)
      input = ReshapeOp::create(rewriter, op.getLoc(), z->reshaped, input);
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(input);
      op.setPads(pads);
    });
    return success();
  }
};
} // namespace

void ConvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldZeroPadIntoConv>(context);
}

LogicalResult ConvOp::evaluate(interp::EvalFrame &frame) {
  interp::ConvParams p;
  p.strides = getStrides().vec();
  p.pads = getPads().vec();
  p.dilations = getDilations().vec();
  p.groups = getGroups();
  p.activation = toActivation(getActivation());
  return frame.visit([&](auto &f) {
    return f.push(
        interp::conv(f.in(0), f.in(1), getBias() ? &f.in(2) : nullptr, p));
  });
}

OpWork ConvOp::getWork() {
  // A multiply-add per filter tap and result element, then the bias and the
  // activation per result element.
  auto filter = getFilter().getType().getShape();
  double perOutput = 2.0;
  for (int64_t d : filter.drop_front())
    perOutput *= double(d);
  if (getBias())
    perOutput += 1;
  if (getActivation() == tg::Activation::Relu)
    perOutput += 1;
  else if (getActivation() != tg::Activation::None)
    perOutput += kTranscendentalFlops;
  return streamingWork(*this, perOutput);
}

LogicalResult ConvOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> ins{e.input(0), e.input(1)};
  if (getBias())
    ins.push_back(e.input(2));
  bool act = getActivation() != tg::Activation::None;
  std::string conv = act ? e.fresh("_conv") : e.output();
  e.node("Conv", ins, {conv})
      .attr("kernel_shape", getFilter().getType().getShape().drop_front(2))
      .attr("strides", getStrides())
      .attr("pads", getPads())
      .attr("dilations", getDilations())
      .attr("group", int64_t(getGroups()));
  if (act) {
    StringRef kind = getActivation() == tg::Activation::Relu      ? "Relu"
                     : getActivation() == tg::Activation::Sigmoid ? "Sigmoid"
                                                              : "Tanh";
    e.node(kind, {conv}, {e.output()});
  }
  return success();
}
