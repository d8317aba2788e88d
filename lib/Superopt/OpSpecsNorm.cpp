//===- OpSpecsNorm.cpp - Normalisations and their folding -----------------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of batchnorm and the macros
// that fold it into a convolution (bn_scale, bn_shift, scale_filter: the
// parameter preparation a compiler folds away; channel_affine, what a
// batchnorm is once folded), and of softmax and layernorm.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

/// batchnorm(x, scale, bias, mean, var), inference form, epsilon 1e-5.
struct BatchNormSpec : SpecBase {
  using TgOp = tg::BatchNormOp;
  static constexpr const char *summary =
      "(x - mean) / sqrt(var + eps) * scale + bias per channel "
      "(tg.batchnorm, eps 1e-5)";
  static constexpr OpVariant variants[] = {
      {"", {}, kImages | kBatchNorm, true, "inference batchnorm"}};
  static constexpr unsigned numOperands = 5;
  static constexpr std::array<RoleMask, 5> roles{
      kData, roleBit(Role::BnScale), roleBit(Role::BnBias),
      roleBit(Role::BnMean), roleBit(Role::BnVar)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferBatchNorm(std::nullopt, t[0], t[1], t[2], t[3], t[4], r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::batchNorm<D>(*in[0], *in[1], *in[2], *in[3], *in[4],
                                       kNormEpsilon));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::BatchNormOp::create(b, loc, types[0], in[0], in[1], in[2],
                                          in[3], in[4],
                                          b.getF64FloatAttr(kNormEpsilon)));
  }
  static bool import(tg::BatchNormOp bn, const ShapeTable &, ImportedOp &r) {
    if (bn.getEpsilon().convertToDouble() != kNormEpsilon)
      return false;
    r.operands = {bn.getInput(), bn.getScale(), bn.getBias(), bn.getMean(),
                  bn.getVariance()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(BatchNormSpec);

/// bn_scale(scale, var) = scale * rsqrt(var + eps): the per-channel factor
/// of a batchnorm. Emitted as tg.add, tg.rsqrt, tg.mul.
struct BnScaleSpec : SpecBase {
  using TgOp = tg::MulOp;
  static constexpr const char *name = "bn_scale";
  static constexpr const char *summary =
      "scale * rsqrt(var + eps): a batchnorm's per-channel factor "
      "(parameter preparation; tg.add, tg.rsqrt, tg.mul)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kBatchNorm,
       true,
       "batchnorm factor gamma * rsqrt(var + eps) (parameter preparation)"}};
  static constexpr unsigned numOperands = 2;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{roleBit(Role::BnScale),
                                                 roleBit(Role::BnVar)};
  static constexpr Role resultRole = Role::ChannelScale;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return sameVectors(sc, in);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    Tensor<D> eps = scalarTensor<D>(D::fromDouble(kNormEpsilon));
    Tensor<D> sum = interp::binary<D>(interp::BinaryKind::Add, *in[1], eps);
    Tensor<D> r = interp::unary<D>(interp::UnaryKind::Rsqrt, sum);
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], r));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    Value sum = tg::AddOp::create(b, loc, types[0], in[1], emitEpsilon(b, loc));
    Value r = tg::RsqrtOp::create(b, loc, types[0], sum);
    auto m = tg::MulOp::create(b, loc, types[0], in[0], r);
    markMacro(m, name);
    out.push_back(m);
  }
  static bool import(tg::MulOp m, const ShapeTable &, ImportedOp &r) {
    if (!isMacro(m, name))
      return false;
    auto rs = def<tg::RsqrtOp>(m.getRhs());
    auto add = rs ? def<tg::AddOp>(rs.getInput()) : tg::AddOp();
    auto eps = add ? def<tg::ConstantOp>(add.getRhs()) : tg::ConstantOp();
    if (!eps)
      return false;
    r.operands = {m.getLhs(), add.getLhs()};
    r.ops = {eps, add, rs, m};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(BnScaleSpec);

/// bn_shift(bias, mean, k) = bias - mean * k: a batchnorm's per-channel
/// offset once its factor k is known. Emitted as tg.mul, tg.sub.
struct BnShiftSpec : SpecBase {
  using TgOp = tg::SubOp;
  static constexpr const char *name = "bn_shift";
  static constexpr const char *summary =
      "bias - mean * k: a batchnorm's per-channel offset (parameter "
      "preparation; tg.mul, tg.sub)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kBatchNorm,
       true,
       "batchnorm offset beta - mean * k (parameter preparation)"}};
  static constexpr unsigned numOperands = 3;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{roleBit(Role::BnBias),
                                                 roleBit(Role::BnMean),
                                                 roleBit(Role::ChannelScale)};
  static constexpr Role resultRole = Role::ChannelBias;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return sameVectors(sc, in);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    Tensor<D> mk = interp::binary<D>(interp::BinaryKind::Mul, *in[1], *in[2]);
    out.push_back(interp::binary<D>(interp::BinaryKind::Sub, *in[0], mk));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    Value mk = tg::MulOp::create(b, loc, types[0], in[1], in[2]);
    auto s = tg::SubOp::create(b, loc, types[0], in[0], mk);
    markMacro(s, name);
    out.push_back(s);
  }
  static bool import(tg::SubOp s, const ShapeTable &, ImportedOp &r) {
    if (!isMacro(s, name))
      return false;
    auto mk = def<tg::MulOp>(s.getRhs());
    if (!mk)
      return false;
    r.operands = {s.getLhs(), mk.getLhs(), mk.getRhs()};
    r.ops = {mk, s};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(BnShiftSpec);

/// scale_filter(w, k) = w * k[o] per output channel o. Emitted as
/// tg.reshape (k to [O,1,1,1]) and tg.mul.
struct ScaleFilterSpec : SpecBase {
  using TgOp = tg::MulOp;
  static constexpr const char *name = "scale_filter";
  static constexpr const char *summary =
      "w * k[o]: a filter [O,I,h,w] scaled per output channel (parameter "
      "preparation; tg.reshape, tg.mul)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kFilters | kBatchNorm,
       true,
       "filter scaled per output channel (parameter preparation)"}};
  static constexpr unsigned numOperands = 2;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{kFilter,
                                                 roleBit(Role::ChannelScale)};
  static constexpr Role resultRole = Role::FoldedFilter;
  static constexpr auto propagateSplit = splitLeadingTwo;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    ArrayRef<int64_t> w = sc.shapes->get(in[0]), k = sc.shapes->get(in[1]);
    if (w.size() != 4 || k.size() != 1 || k[0] != w[0])
      return std::nullopt;
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    Tensor<D> k = interp::reshape<D>(*in[1], {in[1]->shape[0], 1, 1, 1});
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], k));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    int64_t o = rtype(in[1]).getDimSize(0);
    Value k = tg::ReshapeOp::create(
        b, loc, tensorTypeOf(b.getContext(), {o, 1, 1, 1}), in[1]);
    auto m = tg::MulOp::create(b, loc, types[0], in[0], k);
    markMacro(m, name);
    out.push_back(m);
  }
  static bool import(tg::MulOp m, const ShapeTable &, ImportedOp &r) {
    if (!isMacro(m, name))
      return false;
    auto k = def<tg::ReshapeOp>(m.getRhs());
    if (!k)
      return false;
    r.operands = {m.getLhs(), k.getInput()};
    r.ops = {k, m};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ScaleFilterSpec);

/// channel_affine(y, k, c) = y * k[ch] + c[ch] per channel of an NCHW
/// tensor: what a batchnorm is, once folded. Emitted as tg.reshape (x2),
/// tg.mul, tg.add. Used by the axioms; not enumerated by default.
struct ChannelAffineSpec : SpecBase {
  using TgOp = tg::AddOp;
  static constexpr const char *name = "channel_affine";
  static constexpr const char *summary =
      "y * k[c] + b[c] per channel c of NCHW y (tg.reshape, tg.mul, tg.add)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kImages | kBatchNorm,
       false,
       "per-channel y * k + b (axiom helper; off by default)"}};
  static constexpr unsigned numOperands = 3;
  static constexpr std::array<RoleMask, 5> roles{
      kData, roleBit(Role::ChannelScale), roleBit(Role::ChannelBias)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    ArrayRef<int64_t> y = sc.shapes->get(in[0]);
    if (y.size() != 4 || in[1] != in[2] || sc.shapes->get(in[1]).size() != 1 ||
        sc.shapes->get(in[1])[0] != y[1])
      return std::nullopt;
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    int64_t c = in[1]->shape[0];
    Tensor<D> k = interp::reshape<D>(*in[1], {c, 1, 1});
    Tensor<D> b = interp::reshape<D>(*in[2], {c, 1, 1});
    Tensor<D> yk = interp::binary<D>(interp::BinaryKind::Mul, *in[0], k);
    out.push_back(interp::binary<D>(interp::BinaryKind::Add, yk, b));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    int64_t c = rtype(in[1]).getDimSize(0);
    auto vecType = tensorTypeOf(b.getContext(), {c, 1, 1});
    Value k = tg::ReshapeOp::create(b, loc, vecType, in[1]);
    Value off = tg::ReshapeOp::create(b, loc, vecType, in[2]);
    Value yk = tg::MulOp::create(b, loc, types[0], in[0], k);
    auto a = tg::AddOp::create(b, loc, types[0], yk, off);
    markMacro(a, name);
    out.push_back(a);
  }
  static bool import(tg::AddOp a, const ShapeTable &, ImportedOp &r) {
    if (!isMacro(a, name))
      return false;
    auto yk = def<tg::MulOp>(a.getLhs());
    auto off = def<tg::ReshapeOp>(a.getRhs());
    auto k = yk ? def<tg::ReshapeOp>(yk.getRhs()) : tg::ReshapeOp();
    if (!off || !k)
      return false;
    r.operands = {yk.getLhs(), k.getInput(), off.getInput()};
    r.ops = {k, off, yk, a};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ChannelAffineSpec);

/// Whether \p axis is the last of a rank-2 tensor.
bool isLastOfMatrix(int64_t axis) { return axis == -1 || axis == 1; }

/// softmax over the last axis of a matrix.
struct SoftmaxSpec : SpecBase {
  using TgOp = tg::SoftmaxOp;
  static constexpr const char *summary =
      "softmax over the last axis of a matrix (tg.softmax)";
  static constexpr OpVariant variants[] = {
      {"", {}, kMatrices, true, "softmax over the last axis"}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::softmax<D>(*in[0], -1));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::SoftmaxOp::create(b, loc, types[0], in[0],
                                        b.getI64IntegerAttr(-1)));
  }
  static bool import(tg::SoftmaxOp s, const ShapeTable &, ImportedOp &r) {
    if (rtype(s.getInput()).getRank() != 2 ||
        !isLastOfMatrix(static_cast<int64_t>(s.getAxis())))
      return false;
    r.operands = {s.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(SoftmaxSpec);

/// layernorm(x, scale, bias) over the last axis of a matrix, epsilon 1e-5.
struct LayerNormSpec : SpecBase {
  using TgOp = tg::LayerNormOp;
  static constexpr const char *summary =
      "layer normalisation over the last axis of a matrix (tg.layernorm, "
      "eps 1e-5)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kMatrices | kLayerNorm,
       true,
       "layer normalisation over the last axis"}};
  static constexpr unsigned numOperands = 3;
  static constexpr std::array<RoleMask, 5> roles{kData, roleBit(Role::LnScale),
                                                 roleBit(Role::LnBias)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferLayerNorm(std::nullopt, t[0], t[1], t[2], -1, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(
        interp::layerNorm<D>(*in[0], *in[1], *in[2], -1, kNormEpsilon));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::LayerNormOp::create(b, loc, types[0], in[0], in[1], in[2],
                                          b.getI64IntegerAttr(-1),
                                          b.getF64FloatAttr(kNormEpsilon)));
  }
  static bool import(tg::LayerNormOp l, const ShapeTable &, ImportedOp &r) {
    if (rtype(l.getInput()).getRank() != 2 ||
        !isLastOfMatrix(static_cast<int64_t>(l.getAxis())) ||
        l.getEpsilon().convertToDouble() != kNormEpsilon)
      return false;
    r.operands = {l.getInput(), l.getScale(), l.getBias()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(LayerNormSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(normSpecs)
