//===- OpSpecsMovement.cpp - Data movement operators ----------------------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of concatenation, split and
// TASO's enlarge: the operators that move data, and the ones that keep and
// use the split information.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

/// concat{axis}(a, b).
struct ConcatSpec : SpecBase {
  using TgOp = tg::ConcatOp;
  static constexpr uint8_t attrFields = kAttrAxis;
  static constexpr const char *summary =
      "concatenation of two tensors along `axis` (tg.concat)";
  static constexpr OpVariant variants[] = {
      {"0", axisAttrs(0), 0, true, "concatenation along axis 0"},
      {"1", axisAttrs(1), 0, true, "concatenation along axis 1"},
      {"2", axisAttrs(2), kSequences, true,
       "concatenation along axis 2 (of [1,n,k] activations)"},
  };
  static constexpr bool uniformOperands = true;
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) <= a.axis || sc.shapes->rank(in[0]) > 4)
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferConcat(std::nullopt, TypeRange(t), a.axis, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::concat<D>(in, a.axis));
  }
  static void propagateSplit(const OpAttrs &a, Splits in, Shapes inShapes,
                             const ShapeTable &t,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    for (unsigned ax = 0; ax < 4; ++ax)
      r.axes[ax] = ax == unsigned(a.axis)
                       ? concatSplit(in[0]->axes[ax], in[1]->axes[ax],
                                     t.get(inShapes[0])[ax])
                       : meet(in[0]->axes[ax], in[1]->axes[ax]);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::ConcatOp::create(b, loc, types[0], in,
                                       b.getI64IntegerAttr(a.axis)));
  }
  static bool import(tg::ConcatOp c, const ShapeTable &, ImportedOp &r) {
    if (c.getInputs().size() != 2 ||
        !normalizeAxis(static_cast<int64_t>(c.getAxis()),
                       rtype(c.getOutput()).getRank(), r.attrs.axis))
      return false;
    r.operands = {c.getInputs()[0], c.getInputs()[1]};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ConcatSpec);

/// split{axis, sizes}(x) -> two pieces. In the enumeration the sizes come
/// from the split information of x (TASO): the cut is at the most recent
/// concatenation boundary.
struct SplitSpec : SpecBase {
  using TgOp = tg::SplitOp;
  static constexpr uint8_t attrFields = kAttrAxis | kAttrSizes;
  static constexpr const char *summary =
      "split along `axis` into two pieces of `sizes` (tg.split); the "
      "enumeration cuts at the last concatenation boundary (TASO)";
  static constexpr OpVariant variants[] = {
      {"0", axisAttrs(0), 0, true,
       "split along axis 0 at the last concatenation boundary"},
      {"1", axisAttrs(1), 0, true,
       "split along axis 1 at the last concatenation boundary"},
      {"2", axisAttrs(2), kSequences, true,
       "split along axis 2 at the last concatenation boundary"},
  };
  static constexpr unsigned numOperands = 1;
  static constexpr unsigned numResults = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) <= a.axis || a.sizes[0] < 1 || a.sizes[1] < 1)
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferSplit(std::nullopt, t[0], a.axis,
                            {a.sizes[0], a.sizes[1]}, r);
    });
  }
  static bool complete(OpAttrs &a, Splits in, Shapes inShapes,
                       const ShapeTable &t) {
    if (t.rank(inShapes[0]) <= a.axis)
      return false;
    const AxisSplit &s = in[0]->axes[a.axis];
    if (s.empty())
      return false;
    int64_t dim = t.get(inShapes[0])[a.axis];
    a.sizes = {s.tree[0], static_cast<int16_t>(dim - s.tree[0])};
    return true;
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    for (auto &piece :
         interp::split<D>(*in[0], a.axis, {a.sizes[0], a.sizes[1]}))
      out.push_back(std::move(piece));
  }
  static void propagateSplit(const OpAttrs &a, Splits in, Shapes,
                             const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo left = *in[0], right = *in[0];
    const AxisSplit &s = in[0]->axes[a.axis];
    left.axes[a.axis] = AxisSplit();
    right.axes[a.axis] = AxisSplit();
    if (!s.empty() && s.tree[0] == a.sizes[0]) {
      ArrayRef<int16_t> tree = s.tree;
      size_t l = subtreeSize(tree, 1);
      left.axes[a.axis].tree.assign(tree.begin() + 1, tree.begin() + 1 + l);
      right.axes[a.axis].tree.clear();
      appendShifted(right.axes[a.axis].tree, tree.drop_front(1 + l),
                    -a.sizes[0]);
    }
    out.assign({left, right});
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    auto s =
        tg::SplitOp::create(b, loc, types, in[0], b.getI64IntegerAttr(a.axis),
                            i64s(b, {a.sizes[0], a.sizes[1]}));
    out.append(s->result_begin(), s->result_end());
  }
  static bool import(tg::SplitOp s, const ShapeTable &, ImportedOp &r) {
    if (s.getSizes().size() != 2 ||
        !normalizeAxis(static_cast<int64_t>(s.getAxis()),
                       rtype(s.getInput()).getRank(), r.attrs.axis))
      return false;
    r.attrs.sizes = {static_cast<int16_t>(s.getSizes()[0]),
                     static_cast<int16_t>(s.getSizes()[1])};
    r.operands = {s.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(SplitSpec);

/// enlarge{kernel}(w): TASO's zero-padding of a filter to a larger kernel.
struct EnlargeSpec : SpecBase {
  using TgOp = tg::EnlargeOp;
  static constexpr uint8_t attrFields = kAttrKernel;
  static constexpr bool inputOperandsOnly = true;
  static constexpr const char *summary =
      "zero-pads a filter [O,I,h,w] to [O,I,KH,KW], centred (tg.enlarge); "
      "applied to filter inputs only, as in TASO";
  static constexpr OpVariant variants[] = {
      {"", kernelAttrs(3, 3), kFilters, true, "enlarge a filter input to 3x3"}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{roleBit(Role::Weight)};
  static constexpr auto propagateSplit = splitLeadingTwo;

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    ArrayRef<int64_t> s = sc.shapes->get(in[0]);
    if (s.size() != 4 || (s[2] == a.kernel[0] && s[3] == a.kernel[1]))
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferEnlarge(std::nullopt, t[0], {a.kernel[0], a.kernel[1]},
                              r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::enlarge<D>(*in[0], a.kernel[0], a.kernel[1]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::EnlargeOp::create(b, loc, types[0], in[0],
                                        i64s(b, {a.kernel[0], a.kernel[1]})));
  }
  static bool import(tg::EnlargeOp e, const ShapeTable &, ImportedOp &r) {
    if (e.getKernelSize().size() != 2)
      return false;
    r.attrs.kernel = {static_cast<int16_t>(e.getKernelSize()[0]),
                      static_cast<int16_t>(e.getKernelSize()[1])};
    r.operands = {e.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(EnlargeSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(movementSpecs)
