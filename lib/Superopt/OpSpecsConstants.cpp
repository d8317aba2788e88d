//===- OpSpecsConstants.cpp - The generator's constant tensors ------------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of TASO's constant tensors: the
// identity matrix, the identity filter, the tensor of ones and the
// depthwise averaging filter. Each is a tg.constant marked with its name
// (loom.const), so that rules files read back as the constant they are.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

constexpr int64_t kC = kUniverseChannels;

/// A constant tensor of shape attrs.shape. \p C provides `valid(shape)` and
/// `element(shape, index)`, element \p index (row-major) as (numerator,
/// denominator).
template <class C> struct ConstSpec : SpecBase {
  using TgOp = tg::ConstantOp;
  static constexpr uint8_t attrFields = kAttrShape;
  static constexpr unsigned numOperands = 0;
  static constexpr std::array<RoleMask, 5> roles{};
  static constexpr Role resultRole = Role::Constant;

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes) {
    if (!C::valid(sc.shapes->get(a.shape)))
      return std::nullopt;
    return sameShape(a.shape);
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &t, Operands<D>,
                   Results<D> &out) {
    ArrayRef<int64_t> shape = t.get(a.shape);
    Tensor<D> v(std::vector<int64_t>(shape.begin(), shape.end()));
    for (int64_t i = 0; i < v.numElements(); ++i) {
      auto [n, d] = C::element(shape, i);
      v.data[i] = d == 1 ? D::fromInt(n) : D::div(D::fromInt(n), D::fromInt(d));
    }
    out.push_back(std::move(v));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    auto type = cast<RankedTensorType>(types[0]);
    SmallVector<float> values;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      auto [n, d] = C::element(type.getShape(), i);
      values.push_back(static_cast<float>(static_cast<double>(n) / d));
    }
    auto c = tg::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
    c->setAttr(kConstAttr, b.getStringAttr(C::name));
    out.push_back(c);
  }
  static bool import(tg::ConstantOp c, const ShapeTable &t, ImportedOp &r) {
    auto which = c->getAttrOfType<StringAttr>(kConstAttr);
    if (!which || which.getValue() != C::name)
      return false;
    std::optional<ShapeId> s =
        t.lookup(cast<RankedTensorType>(c.getType()).getShape());
    if (!s)
      return false;
    r.attrs.shape = *s;
    return true;
  }
};

struct ConstImmSpec : ConstSpec<ConstImmSpec> {
  static constexpr const char *name = "const_imm";
  static constexpr const char *summary = "identity matrix [n,n] (TASO)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kMatrices,
       true,
       "4x4 identity matrix",
       {2, {kUniverseFeatures, kUniverseFeatures}}}};
  static bool valid(ArrayRef<int64_t> s) {
    return s.size() == 2 && s[0] == s[1];
  }
  static std::pair<int64_t, int64_t> element(ArrayRef<int64_t> s,
                                             int64_t index) {
    return {index / s[1] == index % s[1] ? 1 : 0, 1};
  }
};
LOOM_SUPEROPT_SPEC(ConstImmSpec);

struct ConstIConvSpec : ConstSpec<ConstIConvSpec> {
  static constexpr const char *name = "const_iconv";
  static constexpr const char *summary =
      "identity filter [C,C,k,k]: 1 at (c, c, centre) (TASO)";
  static constexpr OpVariant variants[] = {{"",
                                            {},
                                            kImages | kFilters,
                                            true,
                                            "4x4x3x3 identity filter",
                                            {4, {kC, kC, 3, 3}}}};
  static bool valid(ArrayRef<int64_t> s) {
    return s.size() == 4 && s[0] == s[1] && s[2] % 2 == 1 && s[3] % 2 == 1;
  }
  static std::pair<int64_t, int64_t> element(ArrayRef<int64_t> s,
                                             int64_t index) {
    int64_t kw = index % s[3], kh = (index / s[3]) % s[2];
    int64_t i = (index / (s[3] * s[2])) % s[1],
            o = index / (s[3] * s[2] * s[1]);
    return {o == i && kh == s[2] / 2 && kw == s[3] / 2 ? 1 : 0, 1};
  }
};
LOOM_SUPEROPT_SPEC(ConstIConvSpec);

struct ConstOneSpec : ConstSpec<ConstOneSpec> {
  static constexpr const char *name = "const_one";
  static constexpr const char *summary = "tensor of ones (TASO)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kImages,
       true,
       "1x4x5x5 ones",
       {4, {1, kC, kUniverseSpatial, kUniverseSpatial}}}};
  static bool valid(ArrayRef<int64_t>) { return true; }
  static std::pair<int64_t, int64_t> element(ArrayRef<int64_t>, int64_t) {
    return {1, 1};
  }
};
LOOM_SUPEROPT_SPEC(ConstOneSpec);

struct ConstPoolSpec : ConstSpec<ConstPoolSpec> {
  static constexpr const char *name = "const_pool";
  static constexpr const char *summary =
      "depthwise averaging filter [C,1,kh,kw] filled with 1/(kh*kw) (TASO)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kImages,
       true,
       "4x1x3x3 depthwise averaging filter",
       {4, {kC, 1, 3, 3}}}};
  static bool valid(ArrayRef<int64_t> s) { return s.size() == 4 && s[1] == 1; }
  static std::pair<int64_t, int64_t> element(ArrayRef<int64_t> s, int64_t) {
    return {1, s[2] * s[3]};
  }
};
LOOM_SUPEROPT_SPEC(ConstPoolSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(constantSpecs)
