//===- FuseIdioms.cpp - Exporter idioms back to single tg ops -------------===//
//
// Part of Loom. Exporters spell operators that older opsets lack as small
// graphs: LayerNormalization (opset 17) as ReduceMean, Sub, Pow, ReduceMean,
// Add, Sqrt, Div, Mul, Add; Gelu (opset 20) as Div, Erf, Add, Mul, Mul (or
// its tanh approximation as Mul, Mul, Mul, Add, Mul, Tanh, Add, Mul, Mul);
// HardSwish (opset 14) as Add, Clip, Mul, Div or Mul by HardSigmoid. After
// import these patterns turn them back into tg.layernorm, tg.gelu and
// tg.hardswish, which the cost model, the substitutions and the backends
// know as one op. A match requires the intermediate values to have no other
// users; everything else is left as imported.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

/// The value of a splat float constant (of any shape), if `v` is one.
std::optional<double> splatValue(Value v) {
  auto c = v.getDefiningOp<tg::ConstantOp>();
  if (!c)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(c.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool near(std::optional<double> v, double want) {
  return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

/// `op`'s results are used by at most `users` distinct ops.
bool usedByAtMost(Operation *op, unsigned users) {
  llvm::SmallPtrSet<Operation *, 4> seen(op->getUsers().begin(),
                                         op->getUsers().end());
  return seen.size() <= users;
}

/// The other operand of a commutative binary op whose one operand is `v`.
template <typename OpT> Value otherOperand(OpT op, Value v) {
  if (op.getLhs() == v)
    return op.getRhs();
  if (op.getRhs() == v)
    return op.getLhs();
  return {};
}

/// Trailing axes [k, rank) of a keepdims reduction, as k.
std::optional<int64_t> trailingAxis(tg::ReduceMeanOp op) {
  if (!op.getKeepdims())
    return std::nullopt;
  int64_t rank = op.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : op.getAxes())
    axes.push_back(a < 0 ? a + rank : a);
  llvm::sort(axes);
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i))
      return std::nullopt;
  return axes.empty() ? std::nullopt : std::optional<int64_t>(axes.front());
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta]
/// -> tg.layernorm. The root is the final add, mul or div.
struct FuseLayerNorm : RewritePattern {
  FuseLayerNorm(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *root,
                                PatternRewriter &rewriter) const override {
    Value beta, gamma;
    Operation *cur = root;
    // Peel `+ beta` and `* gamma`, in either operand order.
    if (auto add = dyn_cast<tg::AddOp>(cur)) {
      for (Value inner : {add.getLhs(), add.getRhs()}) {
        Operation *def = inner.getDefiningOp();
        if (def && def->hasOneUse() && isa<tg::MulOp, tg::DivOp>(def)) {
          beta = otherOperand(add, inner);
          cur = def;
          break;
        }
      }
      if (!beta)
        return failure();
    }
    if (auto mul = dyn_cast<tg::MulOp>(cur)) {
      for (Value inner : {mul.getLhs(), mul.getRhs()})
        if (auto d = inner.getDefiningOp<tg::DivOp>(); d && d->hasOneUse()) {
          gamma = otherOperand(mul, inner);
          cur = d;
          break;
        }
      if (!gamma)
        return failure();
    }
    auto div = dyn_cast<tg::DivOp>(cur);
    if (!div)
      return failure();
    auto sub = div.getLhs().getDefiningOp<tg::SubOp>();
    auto sqrt = div.getRhs().getDefiningOp<tg::SqrtOp>();
    if (!sub || !sqrt || !sqrt->hasOneUse())
      return failure();
    auto mean = sub.getRhs().getDefiningOp<tg::ReduceMeanOp>();
    Value x = sub.getLhs();
    if (!mean || mean.getInput() != x || !mean->hasOneUse())
      return failure();
    auto axis = trailingAxis(mean);
    if (!axis)
      return failure();
    auto addEps = sqrt.getInput().getDefiningOp<tg::AddOp>();
    if (!addEps || !addEps->hasOneUse())
      return failure();
    Value varValue;
    std::optional<double> eps;
    for (Value v : {addEps.getLhs(), addEps.getRhs()})
      if (auto e = splatValue(v); e && !eps)
        eps = e;
      else
        varValue = v;
    auto var = varValue ? varValue.getDefiningOp<tg::ReduceMeanOp>() : nullptr;
    if (!eps || !var || !var->hasOneUse() || trailingAxis(var) != axis ||
        var.getAxes().size() != mean.getAxes().size())
      return failure();
    Operation *sq = var.getInput().getDefiningOp();
    if (!sq || !sq->hasOneUse())
      return failure();
    Value d = sub.getResult();
    bool isSquare = false;
    if (auto pow = dyn_cast<tg::PowOp>(sq))
      isSquare = pow.getLhs() == d && near(splatValue(pow.getRhs()), 2.0);
    else if (auto m = dyn_cast<tg::MulOp>(sq))
      isSquare = m.getLhs() == d && m.getRhs() == d;
    // d feeds the square and the division, nothing else.
    if (!isSquare || !usedByAtMost(sub, 2))
      return failure();

    auto xType = cast<RankedTensorType>(x.getType());
    if (root->getResult(0).getType() != xType)
      return failure();
    auto normType = RankedTensorType::get(xType.getShape().drop_front(*axis),
                                          xType.getElementType());
    // Scale and bias of the normalised shape (broadcast if smaller).
    auto fit = [&](Value p, double fill) -> Value {
      Location loc = root->getLoc();
      if (!p)
        return tg::ConstantOp::create(
            rewriter, loc, normType,
            DenseElementsAttr::get(
                normType,
                rewriter.getFloatAttr(normType.getElementType(), fill)));
      auto type = cast<RankedTensorType>(p.getType());
      if (type == normType)
        return p;
      if (type.getElementType() != normType.getElementType() ||
          !tg::isBroadcastableTo(type.getShape(), normType.getShape()))
        return {};
      return tg::BroadcastToOp::create(rewriter, loc, normType, p);
    };
    rewriter.setInsertionPoint(root);
    Value g = fit(gamma, 1.0), b = fit(beta, 0.0);
    if (!g || !b)
      return failure();
    auto ln = tg::LayerNormOp::create(rewriter, root->getLoc(), xType, x, g, b,
                                      rewriter.getI64IntegerAttr(*axis),
                                      rewriter.getF64FloatAttr(*eps));
    rewriter.replaceOp(root, ln.getResult());
    return success();
  }
};

/// x * 0.5 * (1 + erf(x / sqrt(2))) -> tg.gelu, and its tanh approximation
/// x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) (PyTorch's
/// GELU(approximate='tanh'), x^3 as x * (x * x) or pow(x, 3)) -> tg.gelu
/// {tanh_approximation}, in any association and operand order of the two
/// outer products.
struct FuseGelu : OpRewritePattern<tg::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The operand of single-use product `v` other than a splat near `c`.
  static Value scaledBy(Value v, double c) {
    auto m = v.getDefiningOp<tg::MulOp>();
    if (!m || !m->hasOneUse())
      return {};
    for (Value o : {m.getLhs(), m.getRhs()})
      if (near(splatValue(otherOperand(m, o)), c))
        return o;
    return {};
  }

  /// v = x * (x * x), in any order, with single-use products, or pow(x, 3):
  /// x.
  static Value cubeOf(Value v) {
    if (auto pow = v.getDefiningOp<tg::PowOp>();
        pow && pow->hasOneUse() && near(splatValue(pow.getRhs()), 3.0))
      return pow.getLhs();
    auto outer = v.getDefiningOp<tg::MulOp>();
    if (!outer || !outer->hasOneUse())
      return {};
    for (Value o : {outer.getLhs(), outer.getRhs()}) {
      auto square = o.getDefiningOp<tg::MulOp>();
      Value x = otherOperand(outer, o);
      if (square && square->hasOneUse() && square.getLhs() == x &&
          square.getRhs() == x)
        return x;
    }
    return {};
  }

  /// 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)); returns x.
  static Value matchTanhTerm(Value v) {
    auto add = v.getDefiningOp<tg::AddOp>();
    if (!add || !add->hasOneUse())
      return {};
    tg::TanhOp tanh;
    for (Value o : {add.getLhs(), add.getRhs()})
      if (auto t = o.getDefiningOp<tg::TanhOp>();
          t && near(splatValue(otherOperand(add, o)), 1.0))
        tanh = t;
    if (!tanh || !tanh->hasOneUse())
      return {};
    Value scaled = scaledBy(tanh.getInput(), std::sqrt(2.0 / M_PI));
    auto inner = scaled ? scaled.getDefiningOp<tg::AddOp>() : tg::AddOp();
    if (!inner || !inner->hasOneUse())
      return {};
    for (Value o : {inner.getLhs(), inner.getRhs()}) {
      Value x = otherOperand(inner, o), cube = scaledBy(o, 0.044715);
      if (x && cube && cubeOf(cube) == x)
        return x;
    }
    return {};
  }

  /// 1 + erf(x / sqrt(2)) (or erf(x * 1/sqrt(2))); returns x.
  static Value matchErfTerm(Value v) {
    auto add = v.getDefiningOp<tg::AddOp>();
    if (!add || !add->hasOneUse())
      return {};
    tg::ErfOp erf;
    for (Value o : {add.getLhs(), add.getRhs()})
      if (auto e = o.getDefiningOp<tg::ErfOp>();
          e && near(splatValue(otherOperand(add, o)), 1.0))
        erf = e;
    if (!erf || !erf->hasOneUse())
      return {};
    Operation *scale = erf.getInput().getDefiningOp();
    if (!scale || !scale->hasOneUse())
      return {};
    if (auto d = dyn_cast<tg::DivOp>(scale);
        d && near(splatValue(d.getRhs()), std::sqrt(2.0)))
      return d.getLhs();
    if (auto m = dyn_cast<tg::MulOp>(scale))
      for (Value o : {m.getLhs(), m.getRhs()})
        if (near(splatValue(otherOperand(m, o)), M_SQRT1_2))
          return o;
    return {};
  }

  LogicalResult matchAndRewrite(tg::MulOp root,
                                PatternRewriter &rewriter) const override {
    // Flatten the product root = a * b with one of them a product too.
    SmallVector<Value, 3> factors;
    SmallVector<Operation *, 1> inner;
    for (Value v : {root.getLhs(), root.getRhs()}) {
      auto m = v.getDefiningOp<tg::MulOp>();
      if (m && m->hasOneUse() && inner.empty()) {
        factors.append({m.getLhs(), m.getRhs()});
        inner.push_back(m);
      } else {
        factors.push_back(v);
      }
    }
    if (factors.size() != 3)
      return failure();
    Value x, half, term;
    bool tanhForm = false;
    for (Value f : factors) {
      if (!half && near(splatValue(f), 0.5)) {
        half = f;
      } else if (!term && matchErfTerm(f)) {
        term = f;
      } else if (!term && matchTanhTerm(f)) {
        term = f;
        tanhForm = true;
      } else {
        x = f;
      }
    }
    if (!x || !half || !term ||
        (tanhForm ? matchTanhTerm(term) : matchErfTerm(term)) != x ||
        x.getType() != root.getType())
      return failure();
    rewriter.replaceOpWithNewOp<tg::GeluOp>(root, root.getType(), x,
                                            rewriter.getBoolAttr(tanhForm));
    return success();
  }
};

/// Hard swish as exporters spell it for opsets before HardSwish (14):
/// x * clip(x + 3, 0, 6) / 6 (Paddle, PyTorch's relu6 form), with the
/// division by 6 anywhere in the product or as a product with 1/6, and
/// x * HardSigmoid(x) (alpha 1/6, beta 0.5) -> tg.hardswish, which oneDNN
/// applies as a post-op of the convolution before it.
struct FuseHardSwish : RewritePattern {
  FuseHardSwish(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  /// v = clip(x + 3, 0, 6) with single-use intermediates: x.
  static Value relu6Plus3(Value v) {
    auto clip = v.getDefiningOp<tg::ClipOp>();
    if (!clip || !clip->hasOneUse() || clip.getMin().convertToDouble() != 0 ||
        clip.getMax().convertToDouble() != 6)
      return {};
    auto add = clip.getInput().getDefiningOp<tg::AddOp>();
    if (!add || !add->hasOneUse())
      return {};
    for (Value o : {add.getLhs(), add.getRhs()})
      if (near(splatValue(otherOperand(add, o)), 3.0))
        return o;
    return {};
  }
  /// v = clip(x + 3, 0, 6) / 6 or * (1/6): x.
  static Value hardSigmoidForm(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasOneUse())
      return {};
    if (auto div = dyn_cast<tg::DivOp>(def))
      return near(splatValue(div.getRhs()), 6.0) ? relu6Plus3(div.getLhs())
                                                 : Value();
    if (auto mul = dyn_cast<tg::MulOp>(def))
      for (Value o : {mul.getLhs(), mul.getRhs()})
        if (near(splatValue(otherOperand(mul, o)), 1.0 / 6.0))
          return relu6Plus3(o);
    if (auto hs = dyn_cast<tg::HardSigmoidOp>(def))
      return std::fabs(hs.getAlpha().convertToDouble() - 1.0 / 6.0) <= 1e-6 &&
                     hs.getBeta().convertToDouble() == 0.5
                 ? hs.getInput()
                 : Value();
    return {};
  }
  /// v = x * clip(x + 3, 0, 6): x.
  static Value timesRelu6(Value v) {
    auto mul = v.getDefiningOp<tg::MulOp>();
    if (!mul || !mul->hasOneUse())
      return {};
    for (Value o : {mul.getLhs(), mul.getRhs()})
      if (Value x = otherOperand(mul, o); x && relu6Plus3(o) == x)
        return x;
    return {};
  }

  LogicalResult matchAndRewrite(Operation *root,
                                PatternRewriter &rewriter) const override {
    Value x;
    if (auto div = dyn_cast<tg::DivOp>(root)) {
      if (near(splatValue(div.getRhs()), 6.0))
        x = timesRelu6(div.getLhs());
    } else if (auto mul = dyn_cast<tg::MulOp>(root)) {
      for (Value o : {mul.getLhs(), mul.getRhs()}) {
        Value other = otherOperand(mul, o);
        if (near(splatValue(other), 1.0 / 6.0))
          x = timesRelu6(o);
        else if (Value h = hardSigmoidForm(o); h && h == other)
          x = h;
        if (x)
          break;
      }
    }
    if (!x || x.getType() != root->getResult(0).getType())
      return failure();
    rewriter.replaceOpWithNewOp<tg::HardSwishOp>(root, x.getType(), x);
    return success();
  }
};

} // namespace

LogicalResult onnx_to_tg::fuseIdioms(Operation *scope) {
  RewritePatternSet patterns(scope->getContext());
  patterns.add<FuseLayerNorm, FuseGelu, FuseHardSwish>(scope->getContext());
  GreedyRewriteConfig config;
  config.enableFolding(false).enableConstantCSE(false);
  return applyPatternsGreedily(scope, std::move(patterns), config);
}
