//===- Attention.cpp - tg.attention as linalg; the world ops have none ----===//
//
// Part of Loom. tg.attention's generated-code form: two contractions (the
// scores, the weighted values) around a masked softmax, each a linalg op
// the GPU's kernel classes take (docs/Codegen/GPU.md, "Attention"). On the
// CPU the loomrt backend (lib/Compiler/Backends/Dynamic.cpp) gives an f32
// attention to libloomrt's attention step, whose kernel streams the live
// keys once and never materialises the score matrix (docs/Runtime.md
// "Attention"), which this form does: it is what a GPU target and an f64
// attention compile to. tg.shard_attention (the cache-parallel step) and
// the world ops are the runtime's only: an error at the op naming why.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include <limits>

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

using D = LinalgDomain;

/// The identity map of \p rank loops restricted to \p dims.
AffineMap project(OpBuilder &b, int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// A contraction `out[p...] += a[...] * b[...]` over \p rank loops, the
/// last a reduction, into a zero-filled tensor of \p type: the form the
/// matrix-product classes take (docs/Codegen/GPU.md, "Kernel classes").
Value contract(OpBuilder &b, Location loc, RankedTensorType type, Value lhs,
               AffineMap lhsMap, Value rhs, AffineMap rhsMap) {
  int64_t rank = type.getRank() + 1;
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  SmallVector<AffineMap> maps = {
      lhsMap, rhsMap,
      project(b, rank, llvm::to_vector(llvm::seq<int64_t>(0, rank - 1)))};
  return multiplyAccumulate(b, loc, type, lhs, rhs, maps, iterators);
}

/// The live key length of sequence b, clamped to [0, keys], as an index,
/// from the optional `length` element \p raw (i64; null: keys). The mask
/// computes in index, not i64: on Vulkan, comparing a loop index cast to i64
/// with an i64 constant gave false everywhere on lavapipe (every key hidden,
/// the result zeros), where the same in index (i32 there) is right.
Value liveLength(OpBuilder &b, Location loc, Value raw, int64_t keys) {
  Value cap = arith::ConstantIndexOp::create(b, loc, keys);
  if (!raw)
    return cap;
  Value clamped = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(
          b, loc, raw,
          arith::ConstantIntOp::create(b, loc, b.getI64Type(), keys)),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// An elementwise generic over \p type (identity map) reading \p x and, where
/// \p length is non-null, `length[b]` (\p lengthDims: {0} for `[B]`, {} for
/// rank 0); \p fn(x, L) gets the clamped live length L of loop 0's sequence.
Value withLength(OpBuilder &b, Location loc, RankedTensorType type, Value x,
                 Value length, int64_t keys,
                 llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>
                     fn) {
  int64_t rank = type.getRank();
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (length) {
    inputs.push_back(length);
    bool perSequence = cast<RankedTensorType>(length.getType()).getRank() == 1;
    maps.push_back(project(b, rank, perSequence ? SmallVector<int64_t>{0}
                                                : SmallVector<int64_t>{}));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  return linalg::GenericOp::create(
             b, loc, type, inputs, ValueRange{init}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value live = liveLength(nb, nl, length ? args[1] : Value(),
                                       keys);
               linalg::YieldOp::create(nb, nl, fn(nb, nl, args[0], live));
             })
      .getResult(0);
}

/// tg.attention as the op's definition, on a grouped view of the queries
/// q [B, Hkv, G, Sq, D] (G = Hq / Hkv; query head h = hk * G + g reads key
/// head hk):
///
///   s = scale * q . k            [B, Hkv, G, Sq, Skv]  a contraction over D
///   t = s where key j is visible to query i (j < n(b, i)), else -inf
///   m = max_j t,  e = exp(t - m) (0 where t = -inf),  z = sum_j e
///   o = e . v'                   [B, Hkv, G, Sq, D]    a contraction over Skv
///   out = o / z (0 where z = 0: a query that sees no key)
///
/// v' is v with the positions at or past the live length zeroed, so that
/// a cache's unwritten positions (whatever they hold) never reach the
/// result through 0 * v. Both products are contractions the GPU's matrix-
/// product class tiles; the score matrix is materialised (Sq x Skv per
/// head): the generated form suits decoding and short prompts, the CPU's
/// f32 attention runs as the loomrt.attention step, which never builds it.
Lowered lowerAttention(AttentionOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto qType = cast<RankedTensorType>(op.getQ().getType());
  auto kType = cast<RankedTensorType>(op.getK().getType());
  Type element = qType.getElementType();
  int64_t batch = qType.getDimSize(0), hq = qType.getDimSize(1),
          sq = qType.getDimSize(2), d = qType.getDimSize(3),
          hkv = kType.getDimSize(1), skv = kType.getDimSize(2);
  int64_t group = hq / hkv;
  Value length = op.getLength();
  bool causal = op.getCausal();
  double scale = op.getScale().convertToDouble();
  double inf = std::numeric_limits<double>::infinity();

  Value q = reshapeTo(
      b, loc, op.getQ(),
      RankedTensorType::get({batch, hkv, group, sq, d}, element));
  // Loops of the scores: b, hk, g, i, j, then d.
  auto scoresType =
      RankedTensorType::get({batch, hkv, group, sq, skv}, element);
  Value s = contract(b, loc, scoresType, q, project(b, 6, {0, 1, 2, 3, 5}),
                     op.getK(), project(b, 6, {0, 1, 4, 5}));
  Value t = withLength(
      b, loc, scoresType, s, length, skv,
      [&](OpBuilder &nb, Location nl, Value x, Value live) {
        // n(b, i) = L, or causally clamp(L - Sq + i + 1, 0, L).
        Value visible = live;
        if (causal) {
          // max(L + i + 1 - Sq, 0) without a negative intermediate (index
          // compares unsigned here); at most L as i < Sq.
          Value i = linalg::IndexOp::create(nb, nl, 3);
          Value one = arith::ConstantIndexOp::create(nb, nl, 1);
          Value queries = arith::ConstantIndexOp::create(nb, nl, sq);
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value end = arith::AddIOp::create(
              nb, nl, live, arith::AddIOp::create(nb, nl, i, one));
          Value before = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::ult, end, queries);
          visible = arith::SelectOp::create(
              nb, nl, before, zero,
              arith::SubIOp::create(nb, nl, end, queries));
        }
        Value j = linalg::IndexOp::create(nb, nl, 4);
        Value seen = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                           j, visible);
        D::Scope scope(nb, nl, element);
        return Value(arith::SelectOp::create(
            nb, nl, seen, D::mul(D::fromDouble(scale), x),
            D::fromDouble(-inf)));
      });
  SmallVector<int64_t> keys = {4};
  Value m = reduceKept(b, loc, t, keys, -inf,
                       [](OpBuilder &nb, Location nl, Value acc, Value x) {
                         return Value(
                             arith::MaximumFOp::create(nb, nl, acc, x));
                       });
  Value e = elementwiseWithStats(
      b, loc, scoresType, {t}, {m}, keys,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        D::Scope scope(nb, nl, element);
        Value hidden = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             args[0], D::fromDouble(-inf));
        return Value(arith::SelectOp::create(
            nb, nl, hidden, D::zero(), D::exp(D::sub(args[0], args[1]))));
      });
  Value z = reduceKept(b, loc, e, keys, 0.0,
                       [](OpBuilder &nb, Location nl, Value acc, Value x) {
                         return Value(arith::AddFOp::create(nb, nl, acc, x));
                       });
  Value v = op.getV();
  if (length)
    v = withLength(b, loc, kType, v, length, skv,
                   [&](OpBuilder &nb, Location nl, Value x, Value live) {
                     Value j = linalg::IndexOp::create(nb, nl, 2);
                     Value inside = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::ult, j, live);
                     D::Scope scope(nb, nl, element);
                     return Value(
                         arith::SelectOp::create(nb, nl, inside, x, D::zero()));
                   });
  // Loops of the output: b, hk, g, i, d, then j.
  auto outType = RankedTensorType::get({batch, hkv, group, sq, d}, element);
  Value o = contract(b, loc, outType, e, project(b, 6, {0, 1, 2, 3, 5}), v,
                     project(b, 6, {0, 1, 5, 4}));
  Value out = elementwiseWithStats(
      b, loc, outType, {o}, {z}, keys,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        D::Scope scope(nb, nl, element);
        Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                           args[1], D::zero());
        return Value(arith::SelectOp::create(nb, nl, none, D::zero(),
                                             D::div(args[0], args[1])));
      });
  return SmallVector<Value>{reshapeTo(b, loc, out, qType)};
}

Lowered lowerShardAttention(ShardAttentionOp op, OpBuilder &) {
  return op.emitOpError(
      "has no generated-code form: on the CPU it runs as libloomrt's "
      "loomrt.attention step (f32 operands, the loomrt backend)");
}

// The rank and the gather are the runtime's (loomrt.world_rank,
// loomrt.all_gather over the context's world): no kernel computes them.
Lowered lowerWorldRank(WorldRankOp op, OpBuilder &) {
  return op.emitOpError("has no generated-code form: it is the runtime's "
                        "loomrt.world_rank step");
}

Lowered lowerAllGather(AllGatherOp op, OpBuilder &) {
  return op.emitOpError("has no generated-code form: it is the runtime's "
                        "loomrt.all_gather step");
}

} // namespace

void lowering::attachAttentionModels(MLIRContext *context) {
  attach<AttentionOp, lowerAttention>(context);
  attach<ShardAttentionOp, lowerShardAttention>(context);
  attach<WorldRankOp, lowerWorldRank>(context);
  attach<AllGatherOp, lowerAllGather>(context);
}
