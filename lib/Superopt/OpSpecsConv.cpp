//===- OpSpecsConv.cpp - Convolution and pooling operators ----------------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of the convolution and of max
// and average pooling: stride 1, same padding, as TASO's.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

/// conv{relu, bias}(x, w[, c]): stride 1, "same" padding for the (odd)
/// kernel, groups = channels(x) / channels(w), optional bias and fused relu.
struct ConvSpec : SpecBase {
  using TgOp = tg::ConvOp;
  static constexpr uint8_t attrFields = kAttrRelu | kAttrBias;
  static constexpr const char *summary =
      "2-D convolution, stride 1, same padding, groups = C / filter C, "
      "optional bias operand and fused relu (tg.conv)";
  static constexpr OpVariant variants[] = {
      {"", convAttrs(false, false), kImages | kFilters, true,
       "convolution (stride 1, same padding; 3x3, 1x3, 3x1, 1x1, depthwise)"},
      {"_relu", convAttrs(true, false), kImages | kFilters, true,
       "convolution with fused relu"},
      {"_bias", convAttrs(false, true), kImages | kFilters | kBatchNorm, true,
       "convolution with a bias operand (from bn_shift)"},
      {"_bias_relu", convAttrs(true, true), kImages | kFilters | kBatchNorm,
       true, "convolution with bias and fused relu"},
  };
  static constexpr unsigned numOperands = 2; // 3 with a bias
  static constexpr std::array<RoleMask, 5> roles{
      kData, kFilter | roleBit(Role::FoldedFilter), roleBit(Role::ChannelBias)};

  /// A bias comes with a batchnorm's folded filter (the enumeration has no
  /// other bias), and only then.
  static bool accepts(const OpAttrs &a, ArrayRef<Role> roles) {
    return (roles.size() > 1 && roles[1] == Role::FoldedFilter) == a.bias;
  }
  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (in.size() != (a.bias ? 3u : 2u))
      return std::nullopt;
    ArrayRef<int64_t> x = sc.shapes->get(in[0]), w = sc.shapes->get(in[1]);
    if (x.size() != 4 || w.size() != 4 || w[2] % 2 == 0 || w[3] % 2 == 0 ||
        w[1] == 0 || x[1] % w[1] != 0)
      return std::nullopt;
    int64_t groups = x[1] / w[1];
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferConv(std::nullopt, t[0], t[1], a.bias ? t[2] : Type(),
                             {1, 1}, pads, {1, 1}, groups, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    interp::ConvParams p;
    ArrayRef<int64_t> w = in[1]->shape;
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    p.pads = pads;
    p.groups = in[0]->shape[1] / w[1];
    p.activation = a.relu ? Activation::Relu : Activation::None;
    out.push_back(
        interp::conv<D>(*in[0], *in[1], a.bias ? in[2] : nullptr, p));
  }
  static void propagateSplit(const OpAttrs &, Splits in, Shapes,
                             const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    r.axes[0] = in[0]->axes[0];
    r.axes[1] = in[1]->axes[0];
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    ArrayRef<int64_t> x = rtype(in[0]).getShape(), w = rtype(in[1]).getShape();
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    int64_t groups = x[1] / w[1];
    out.push_back(tg::ConvOp::create(
        b, loc, types[0], in[0], in[1], a.bias ? in[2] : Value(),
        i64s(b, {1, 1}), i64s(b, pads), i64s(b, {1, 1}),
        b.getI64IntegerAttr(groups),
        tg::ActivationAttr::get(b.getContext(), a.relu
                                                    ? tg::Activation::Relu
                                                    : tg::Activation::None)));
  }
  static bool import(tg::ConvOp c, const ShapeTable &, ImportedOp &r) {
    ArrayRef<int64_t> x = rtype(c.getInput()).getShape();
    ArrayRef<int64_t> w = rtype(c.getFilter()).getShape();
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    if (c.getStrides() != ArrayRef<int64_t>{1, 1} ||
        c.getDilations() != ArrayRef<int64_t>{1, 1} ||
        c.getPads() != ArrayRef<int64_t>(pads) || w[2] % 2 == 0 ||
        w[3] % 2 == 0 || static_cast<int64_t>(c.getGroups()) * w[1] != x[1])
      return false;
    if (c.getActivation() != tg::Activation::None &&
        c.getActivation() != tg::Activation::Relu)
      return false;
    r.attrs.relu = c.getActivation() == tg::Activation::Relu;
    r.attrs.bias = static_cast<bool>(c.getBias());
    r.operands = {c.getInput(), c.getFilter()};
    if (c.getBias())
      r.operands.push_back(c.getBias());
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ConvSpec);

/// max / average pooling{kernel}: stride 1, same padding; the average counts
/// padding (count_include_pad), so that it equals a convolution with a
/// constant filter, as TASO's pooling does.
template <class OpTy> struct PoolSpec : SpecBase {
  using TgOp = OpTy;
  static constexpr uint8_t attrFields = kAttrKernel;
  static constexpr bool isMax = std::is_same_v<OpTy, tg::MaxPoolOp>;
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};
  static constexpr auto propagateSplit = splitLeadingTwo;

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) != 4 || a.kernel[0] % 2 == 0 ||
        a.kernel[1] % 2 == 0)
      return std::nullopt;
    std::array<int64_t, 4> pads = samePads(a.kernel[0], a.kernel[1]);
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferPool2d(std::nullopt, t[0], {a.kernel[0], a.kernel[1]},
                             {1, 1}, pads, r);
    });
  }
  static interp::PoolParams params(const OpAttrs &a) {
    interp::PoolParams p;
    p.kernel = {a.kernel[0], a.kernel[1]};
    p.pads = samePads(a.kernel[0], a.kernel[1]);
    p.countIncludePad = true;
    return p;
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    if constexpr (isMax)
      out.push_back(interp::maxPool<D>(*in[0], params(a)));
    else
      out.push_back(interp::avgPool<D>(*in[0], params(a)));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    auto kernel = i64s(b, {a.kernel[0], a.kernel[1]});
    auto pads = i64s(b, samePads(a.kernel[0], a.kernel[1]));
    if constexpr (isMax)
      out.push_back(tg::MaxPoolOp::create(b, loc, types[0], in[0], kernel,
                                            i64s(b, {1, 1}), pads));
    else
      out.push_back(tg::AvgPoolOp::create(b, loc, types[0], in[0], kernel,
                                            i64s(b, {1, 1}), pads,
                                            b.getBoolAttr(true)));
  }
  static bool import(OpTy p, const ShapeTable &, ImportedOp &r) {
    if constexpr (!isMax)
      if (!p.getCountIncludePad())
        return false;
    ArrayRef<int64_t> k = p.getKernelSize();
    if (k.size() != 2 || k[0] % 2 == 0 || k[1] % 2 == 0 ||
        p.getStrides() != ArrayRef<int64_t>{1, 1} ||
        p.getPads() != ArrayRef<int64_t>(samePads(k[0], k[1])))
      return false;
    r.attrs.kernel = {static_cast<int16_t>(k[0]), static_cast<int16_t>(k[1])};
    r.operands = {p.getInput()};
    return true;
  }
};

struct MaxPoolSpec : PoolSpec<tg::MaxPoolOp> {
  static constexpr const char *summary =
      "max pooling, stride 1, same padding (tg.maxpool)";
  static constexpr OpVariant variants[] = {
      {"", kernelAttrs(3, 3), kImages, true,
       "3x3 max pooling, stride 1, same padding"}};
};
LOOM_SUPEROPT_SPEC(MaxPoolSpec);

struct AvgPoolSpec : PoolSpec<tg::AvgPoolOp> {
  static constexpr const char *summary =
      "average pooling, stride 1, same padding, count_include_pad "
      "(tg.avgpool)";
  static constexpr OpVariant variants[] = {
      {"", kernelAttrs(3, 3), kImages, true,
       "3x3 average pooling, stride 1, same padding, count_include_pad"}};
};
LOOM_SUPEROPT_SPEC(AvgPoolSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(convSpecs)
