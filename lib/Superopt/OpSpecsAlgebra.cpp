//===- OpSpecsAlgebra.cpp - Matrix and elementwise operators --------------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of matmul, the elementwise
// operators (add, mul, smul, relu) and the matrix transpose.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// matmul(a, b): [M, K] x [K, N] -> [M, N], or a rank-3 left operand.
struct MatmulSpec : SpecBase {
  using TgOp = tg::MatmulOp;
  static constexpr const char *summary =
      "matrix product [M,K] x [K,N] -> [M,N], or [B,M,K] x [K,N] -> "
      "[B,M,N] (tg.matmul)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kMatrices | kSequences,
       true,
       "matrix product (also [1,n,k] activations times [k,m] weights)"}};
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    int64_t lhsRank = sc.shapes->rank(in[0]);
    if ((lhsRank != 2 && lhsRank != 3) || sc.shapes->rank(in[1]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferMatmul(std::nullopt, t[0], t[1], r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::matmul<D>(*in[0], *in[1]));
  }
  static void propagateSplit(const OpAttrs &, Splits in, Shapes inShapes,
                             const ShapeTable &t,
                             SmallVectorImpl<SplitInfo> &out) {
    // The result keeps the leading axes of the left operand and the columns
    // of the right one.
    SplitInfo r;
    unsigned lhsRank = t.rank(inShapes[0]);
    for (unsigned a = 0; a + 1 < lhsRank; ++a)
      r.axes[a] = in[0]->axes[a];
    r.axes[lhsRank - 1] = in[1]->axes[1];
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::MatmulOp::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(tg::MatmulOp m, const ShapeTable &, ImportedOp &r) {
    int64_t lhsRank = rtype(m.getLhs()).getRank();
    if ((lhsRank != 2 && lhsRank != 3) || rtype(m.getRhs()).getRank() != 2)
      return false;
    r.operands = {m.getLhs(), m.getRhs()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(MatmulSpec);

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// add / mul of two tensors of the same shape (no broadcasting).
template <interp::BinaryKind B, class OpTy, RoleMask R>
struct ElementwiseSpec : SpecBase {
  using TgOp = OpTy;
  static constexpr bool commutative = true;
  static constexpr bool uniformOperands = true;
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{R, R};
  static constexpr auto propagateSplit = splitElementwise;

  static Inferred infer(SpecContext &, const OpAttrs &, Shapes in) {
    if (in[0] != in[1])
      return std::nullopt;
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::binary<D>(B, *in[0], *in[1]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(OpTy::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(OpTy e, const ShapeTable &, ImportedOp &r) {
    if (e->hasAttr(kMacroAttr) || e.getLhs().getType() != e.getRhs().getType())
      return false;
    r.operands = {e.getLhs(), e.getRhs()};
    return true;
  }
};

struct AddSpec : ElementwiseSpec<interp::BinaryKind::Add, tg::AddOp, kAny> {
  static constexpr const char *summary =
      "elementwise sum of two tensors of one shape (tg.add)";
  static constexpr OpVariant variants[] = {
      {"", {}, 0, true, "elementwise sum"}};
};
LOOM_SUPEROPT_SPEC(AddSpec);

/// Products of weights are not enumerated (no model computes them).
struct MulSpec
    : ElementwiseSpec<interp::BinaryKind::Mul, tg::MulOp, kDataOrConst> {
  static constexpr const char *summary =
      "elementwise product of two tensors of one shape (tg.mul)";
  static constexpr OpVariant variants[] = {
      {"", {}, 0, true, "elementwise product"}};
};
LOOM_SUPEROPT_SPEC(MulSpec);

/// smul(x, s): x times a rank-0 scalar (tg.mul with broadcasting).
struct SMulSpec : SpecBase {
  using TgOp = tg::MulOp;
  static constexpr const char *name = "smul";
  static constexpr const char *summary =
      "scalar multiplication x * s, s of rank 0 (tg.mul, broadcast)";
  static constexpr OpVariant variants[] = {
      {"", {}, kScalar, true, "scalar multiplication"}};
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, roleBit(Role::Scalar)};
  static constexpr auto propagateSplit = splitCopy;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) < 1 || sc.shapes->rank(in[1]) != 0)
      return std::nullopt;
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], *in[1]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::MulOp::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(tg::MulOp m, const ShapeTable &, ImportedOp &r) {
    if (m->hasAttr(kMacroAttr) || rtype(m.getRhs()).getRank() != 0 ||
        rtype(m.getLhs()).getRank() == 0)
      return false;
    r.operands = {m.getLhs(), m.getRhs()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(SMulSpec);

/// relu(x) = max(x, 0).
struct ReluSpec : SpecBase {
  using TgOp = tg::ReluOp;
  static constexpr const char *summary = "max(x, 0) elementwise (tg.relu)";
  static constexpr OpVariant variants[] = {{"", {}, 0, true, "relu"}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};
  static constexpr auto propagateSplit = splitCopy;

  static Inferred infer(SpecContext &, const OpAttrs &, Shapes in) {
    return sameShape(in[0]);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::unary<D>(interp::UnaryKind::Relu, *in[0]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::ReluOp::create(b, loc, types[0], in[0]));
  }
  static bool import(tg::ReluOp u, const ShapeTable &, ImportedOp &r) {
    r.operands = {u.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ReluSpec);

//===----------------------------------------------------------------------===//
// Matrix transpose
//===----------------------------------------------------------------------===//

/// transpose(x) of a matrix (perm [1, 0]).
struct TransposeSpec : SpecBase {
  using TgOp = tg::TransposeOp;
  static constexpr const char *summary =
      "matrix transpose, perm [1, 0] (tg.transpose)";
  static constexpr OpVariant variants[] = {
      {"", {}, kMatrices, true, "matrix transpose"}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferTranspose(std::nullopt, t[0], {1, 0}, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::transpose<D>(*in[0], {1, 0}));
  }
  static void propagateSplit(const OpAttrs &, Splits in, Shapes,
                             const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    r.axes[0] = in[0]->axes[1];
    r.axes[1] = in[0]->axes[0];
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(
        tg::TransposeOp::create(b, loc, types[0], in[0], i64s(b, {1, 0})));
  }
  static bool import(tg::TransposeOp t, const ShapeTable &, ImportedOp &r) {
    if (t.getPerm() != ArrayRef<int64_t>{1, 0})
      return false;
    r.operands = {t.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(TransposeSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(algebraSpecs)
