//===- OpSpecsBatched.cpp - Batched products, reshapes, reductions --------===//
//
// Part of Loom. The specs (OpSpecSupport.h) of the operators that the rules
// of --tg-fuse-trials (TrialRules.cpp) need beyond the matrix and image
// operators: the batched product with a rank-3 right operand, reshape, the
// reductions over one axis, and the two fixed transposes the fused trials
// use (a batch of matrices, and the batch and channels of an image). None
// is in `--ops default`: the enumeration only meets them when --ops names
// them.
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

namespace {

/// bmatmul(a, b): [B,M,K] x [B,K,N] -> [B,M,N], or a shared left operand
/// [M,K] x [B,K,N] -> [B,M,N]: tg.matmul with a rank-3 right operand (the
/// rank-2 one is `matmul`).
struct BatchMatmulSpec : SpecBase {
  using TgOp = tg::MatmulOp;
  static constexpr const char *name = "bmatmul";
  static constexpr const char *summary =
      "batched matrix product [B,M,K] x [B,K,N] -> [B,M,N], or [M,K] x "
      "[B,K,N] (tg.matmul with a rank-3 right operand)";
  static constexpr OpVariant variants[] = {
      {"", {}, kSequences, false,
       "batched product of [1,n,k] activations (not in default)"}};
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    int64_t lhsRank = sc.shapes->rank(in[0]);
    if ((lhsRank != 2 && lhsRank != 3) || sc.shapes->rank(in[1]) != 3)
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
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::MatmulOp::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(tg::MatmulOp m, const ShapeTable &, ImportedOp &r) {
    int64_t lhsRank = rtype(m.getLhs()).getRank();
    if ((lhsRank != 2 && lhsRank != 3) || rtype(m.getRhs()).getRank() != 3)
      return false;
    r.operands = {m.getLhs(), m.getRhs()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(BatchMatmulSpec);

/// reshape{shape}(x): the same elements in row-major order under `shape`.
struct ReshapeSpec : SpecBase {
  using TgOp = tg::ReshapeOp;
  static constexpr uint8_t attrFields = kAttrShape;
  static constexpr const char *summary =
      "the same elements, row-major, under the shape `shape` (tg.reshape)";
  static constexpr OpVariant variants[] = {
      {"",
       {},
       kMatrices,
       false,
       "a 2x4 matrix as 4x2 (not in default)",
       {2, {kUniverseFeatures, kUniverseRows}}}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    auto count = [](ArrayRef<int64_t> s) {
      int64_t n = 1;
      for (int64_t d : s)
        n *= d;
      return n;
    };
    ArrayRef<int64_t> to = sc.shapes->get(a.shape);
    if (to.size() > 4 || count(to) != count(sc.shapes->get(in[0])))
      return std::nullopt;
    return sameShape(a.shape);
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &t, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::reshape<D>(*in[0], t.get(a.shape)));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::ReshapeOp::create(b, loc, types[0], in[0]));
  }
  static bool import(tg::ReshapeOp op, const ShapeTable &t, ImportedOp &r) {
    std::optional<ShapeId> s = t.lookup(rtype(op.getOutput()).getShape());
    if (!s)
      return false;
    r.attrs.shape = *s;
    r.operands = {op.getInput()};
    return true;
  }
};
LOOM_SUPEROPT_SPEC(ReshapeSpec);

/// reduce_sum / reduce_mean / reduce_max{axis}(x): over one axis, the
/// reduced dimension dropped (keepdims false).
template <interp::ReduceKind K, class OpTy> struct ReduceSpec : SpecBase {
  using TgOp = OpTy;
  static constexpr uint8_t attrFields = kAttrAxis;
  static constexpr const char *summary =
      "reduction over one axis, the axis dropped (tg.reduce_*, keepdims "
      "false)";
  static constexpr OpVariant variants[] = {
      {"0", axisAttrs(0), kMatrices, false,
       "reduction over axis 0 (not in default)"},
      {"1", axisAttrs(1), kMatrices, false,
       "reduction over axis 1 (not in default)"}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (a.axis < 0 || a.axis >= sc.shapes->rank(in[0]))
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferReduce(std::nullopt, t[0], {int64_t(a.axis)}, false, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::reduce<D>(K, *in[0], {int64_t(a.axis)}, false));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(OpTy::create(b, loc, types[0], in[0],
                               i64s(b, {int64_t(a.axis)}),
                               b.getBoolAttr(false)));
  }
  static bool import(OpTy op, const ShapeTable &, ImportedOp &r) {
    if (op.getKeepdims() || op.getAxes().size() != 1 ||
        !normalizeAxis(op.getAxes()[0], rtype(op.getInput()).getRank(),
                       r.attrs.axis))
      return false;
    r.operands = {op.getInput()};
    return true;
  }
};
using ReduceSumSpec = ReduceSpec<interp::ReduceKind::Sum, tg::ReduceSumOp>;
LOOM_SUPEROPT_SPEC(ReduceSumSpec);
using ReduceMeanSpec = ReduceSpec<interp::ReduceKind::Mean, tg::ReduceMeanOp>;
LOOM_SUPEROPT_SPEC(ReduceMeanSpec);
using ReduceMaxSpec = ReduceSpec<interp::ReduceKind::Max, tg::ReduceMaxOp>;
LOOM_SUPEROPT_SPEC(ReduceMaxSpec);

/// A transpose by one fixed permutation \p P of a rank-P.size() tensor.
template <class Name, int64_t... P> struct FixedTransposeSpec : SpecBase {
  using TgOp = tg::TransposeOp;
  static constexpr const char *name = Name::name;
  static constexpr const char *summary = Name::summary;
  static constexpr OpVariant variants[] = {
      {"", {}, Name::inputs, false, Name::description}};
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kAny};
  static constexpr std::array<int64_t, sizeof...(P)> perm{P...};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != int64_t(perm.size()))
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferTranspose(std::nullopt, t[0], perm, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in,
                   Results<D> &out) {
    out.push_back(interp::transpose<D>(*in[0], perm));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(
        tg::TransposeOp::create(b, loc, types[0], in[0], i64s(b, perm)));
  }
  static bool import(tg::TransposeOp t, const ShapeTable &, ImportedOp &r) {
    if (t.getPerm() != ArrayRef<int64_t>(perm))
      return false;
    r.operands = {t.getInput()};
    return true;
  }
};

struct TransposeBatchName {
  static constexpr const char *name = "transpose_batch";
  static constexpr const char *summary =
      "transpose of each matrix of a batch, perm [0, 2, 1] (tg.transpose)";
  static constexpr unsigned inputs = kSequences;
  static constexpr const char *description =
      "transpose of [1,n,k] activations' matrices (not in default)";
};
using TransposeBatchSpec = FixedTransposeSpec<TransposeBatchName, 0, 2, 1>;
LOOM_SUPEROPT_SPEC(TransposeBatchSpec);

struct TransposeNCName {
  static constexpr const char *name = "transpose_nc";
  static constexpr const char *summary =
      "an image's batch and channels swapped, perm [1, 0, 2, 3] "
      "(tg.transpose; the filter gradient's)";
  static constexpr unsigned inputs = kImages;
  static constexpr const char *description =
      "an image's batch and channels swapped (not in default)";
};
using TransposeNCSpec = FixedTransposeSpec<TransposeNCName, 1, 0, 2, 3>;
LOOM_SUPEROPT_SPEC(TransposeNCSpec);

} // namespace

LOOM_SUPEROPT_SPEC_FILE(batchedSpecs)
