//===- Attention.cpp - tg.attention as linalg; the world ops have none ----===//
//
// Part of Loom. tg.attention's generated-code form: two contractions (the
// scores, the weighted values) around a masked softmax, each a linalg op
// the GPU's kernel classes take (docs/Codegen/GPU.md, "Attention"). On the
// CPU the loomrt backend (lib/Compiler/Backends/Dynamic.cpp) gives an f32
// attention to libloomrt's attention step, whose kernel streams the live
// keys once and never materialises the score matrix (docs/Runtime.md
// "Attention"), which this form does: it is what a GPU target and an f64
// attention compile to. tg.shard_attention (the cache-parallel step) is
// the same form over a shard's keys, with each query's log-sum-exp; the
// world ops are the runtime's only: an error at the op naming why.
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

/// The run-time scalars attention's masks read: the live length (`length`:
/// `[B]`, rank 0, or null for the capacity) and, for tg.shard_attention,
/// the shard (`shard`: rank 0 i64, or null) of `shards` whose keys the
/// cache holds (key j is the sequence's position j * shards + shard).
struct Live {
  Value length, shard;
  int64_t shards = 1;
};

/// The live length of sequence b in positions, clamped to [0, positions],
/// as an index, from the optional `length` element \p raw (i64; null:
/// positions). The mask computes in index, not i64: on Vulkan, comparing a
/// loop index cast to i64 with an i64 constant gave false everywhere on
/// lavapipe (every key hidden, the result zeros), where the same in index
/// (i32 there) is right.
Value clampedIndex(OpBuilder &b, Location loc, Value raw, int64_t lo,
                   int64_t hi) {
  Value clamped = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(
          b, loc, raw,
          arith::ConstantIntOp::create(b, loc, b.getI64Type(), hi)),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), lo));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// Key \p j's position in its sequence: j, or j * shards + shard.
Value keyPosition(OpBuilder &b, Location loc, Value j, Value shard,
                  int64_t shards) {
  if (shards == 1)
    return j;
  Value count = arith::ConstantIndexOp::create(b, loc, shards);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, j, count),
                               shard);
}

/// An elementwise generic over \p type (identity map) reading \p x and the
/// run-time scalars of \p live (`length[b]` on loop 0 for `[B]`); \p fn(x,
/// L, s) gets the clamped live length L of loop 0's sequence in positions
/// (at most \p keys * shards) and the clamped shard s (0 without one).
Value withLength(
    OpBuilder &b, Location loc, RankedTensorType type, Value x,
    const Live &live, int64_t keys,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value, Value)> fn) {
  int64_t rank = type.getRank();
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (live.length) {
    inputs.push_back(live.length);
    bool perSequence =
        cast<RankedTensorType>(live.length.getType()).getRank() == 1;
    maps.push_back(project(b, rank, perSequence ? SmallVector<int64_t>{0}
                                                : SmallVector<int64_t>{}));
  }
  if (live.shard) {
    inputs.push_back(live.shard);
    maps.push_back(project(b, rank, {}));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  int64_t positions = keys * live.shards;
  return linalg::GenericOp::create(
             b, loc, type, inputs, ValueRange{init}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value length = live.length
                                  ? clampedIndex(nb, nl, args[1], 0, positions)
                                  : Value(arith::ConstantIndexOp::create(
                                        nb, nl, positions));
               Value shard =
                   live.shard
                       ? clampedIndex(nb, nl, args[live.length ? 2 : 1], 0,
                                      live.shards - 1)
                       : Value(arith::ConstantIndexOp::create(nb, nl, 0));
               linalg::YieldOp::create(nb, nl,
                                       fn(nb, nl, args[0], length, shard));
             })
      .getResult(0);
}

/// tg.attention's operands and attributes, and for tg.shard_attention the
/// shard whose keys k and v hold.
struct AttentionForm {
  Value q, k, v;
  Live live;
  bool causal = false;
  double scale = 1;
};

/// The attention of \p f as the op's definition, on a grouped view of the
/// queries q [B, Hkv, G, Sq, D] (G = Hq / Hkv; query head h = hk * G + g
/// reads key head hk), key j at position p(j) (j, or j * shards + shard):
///
///   s = scale * q . k            [B, Hkv, G, Sq, Skv]  a contraction over D
///   t = s where p(j) < n(b, i) (query i sees position p(j)), else -inf
///   m = max_j t,  e = exp(t - m) (0 where t = -inf),  z = sum_j e
///   o = e . v'                   [B, Hkv, G, Sq, D]    a contraction over Skv
///   out = o / z (0 where z = 0: a query that sees no key)
///   lse = m + log z (-inf where z = 0), when \p lse is asked for
///
/// v' is v with the keys at or past the live length zeroed, so that a
/// cache's unwritten positions (whatever they hold) never reach the result
/// through 0 * v. Both products are contractions the GPU's matrix-product
/// class tiles; the score matrix is materialised (Sq x Skv per head): the
/// generated form suits decoding and short prompts, the CPU's f32
/// attention runs as the loomrt.attention step, which never builds it.
Value attend(OpBuilder &b, Location loc, const AttentionForm &f,
             Value *lse = nullptr) {
  auto qType = cast<RankedTensorType>(f.q.getType());
  auto kType = cast<RankedTensorType>(f.k.getType());
  Type element = qType.getElementType();
  int64_t batch = qType.getDimSize(0), hq = qType.getDimSize(1),
          sq = qType.getDimSize(2), d = qType.getDimSize(3),
          hkv = kType.getDimSize(1), skv = kType.getDimSize(2);
  int64_t group = hq / hkv, shards = f.live.shards;
  bool causal = f.causal;
  double inf = std::numeric_limits<double>::infinity();

  Value q = reshapeTo(
      b, loc, f.q, RankedTensorType::get({batch, hkv, group, sq, d}, element));
  // Loops of the scores: b, hk, g, i, j, then d.
  auto scoresType =
      RankedTensorType::get({batch, hkv, group, sq, skv}, element);
  Value s = contract(b, loc, scoresType, q, project(b, 6, {0, 1, 2, 3, 5}), f.k,
                     project(b, 6, {0, 1, 4, 5}));
  Value t = withLength(
      b, loc, scoresType, s, f.live, skv,
      [&](OpBuilder &nb, Location nl, Value x, Value length, Value shard) {
        // n(b, i) = L, or causally clamp(L - Sq + i + 1, 0, L).
        Value visible = length;
        if (causal) {
          // max(L + i + 1 - Sq, 0) without a negative intermediate (index
          // compares unsigned here); at most L as i < Sq.
          Value i = linalg::IndexOp::create(nb, nl, 3);
          Value one = arith::ConstantIndexOp::create(nb, nl, 1);
          Value queries = arith::ConstantIndexOp::create(nb, nl, sq);
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value end = arith::AddIOp::create(
              nb, nl, length, arith::AddIOp::create(nb, nl, i, one));
          Value before = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::ult, end, queries);
          visible = arith::SelectOp::create(
              nb, nl, before, zero,
              arith::SubIOp::create(nb, nl, end, queries));
        }
        Value j = linalg::IndexOp::create(nb, nl, 4);
        Value seen = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::ult,
            keyPosition(nb, nl, j, shard, shards), visible);
        D::Scope scope(nb, nl, element);
        return Value(arith::SelectOp::create(nb, nl, seen,
                                             D::mul(D::fromDouble(f.scale), x),
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
  Value v = f.v;
  if (f.live.length)
    v = withLength(
        b, loc, kType, v, f.live, skv,
        [&](OpBuilder &nb, Location nl, Value x, Value length, Value shard) {
          Value j = linalg::IndexOp::create(nb, nl, 2);
          Value inside = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::ult,
              keyPosition(nb, nl, j, shard, shards), length);
          D::Scope scope(nb, nl, element);
          return Value(arith::SelectOp::create(nb, nl, inside, x, D::zero()));
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
  if (lse) {
    auto rowsType = RankedTensorType::get({batch, hkv, group, sq}, element);
    Value rows = elementwise(
        b, loc, rowsType, {m, z},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          D::Scope scope(nb, nl, element);
          Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             args[1], D::zero());
          return Value(
              arith::SelectOp::create(nb, nl, none, D::fromDouble(-inf),
                                      D::add(args[0], D::log(args[1]))));
        });
    *lse = reshapeTo(b, loc, rows,
                     RankedTensorType::get({batch, hq, sq}, element));
  }
  return reshapeTo(b, loc, out, qType);
}

Lowered lowerAttention(AttentionOp op, OpBuilder &b) {
  AttentionForm f;
  f.q = op.getQ();
  f.k = op.getK();
  f.v = op.getV();
  f.live.length = op.getLength();
  f.causal = op.getCausal();
  f.scale = op.getScale().convertToDouble();
  return SmallVector<Value>{attend(b, op.getLoc(), f)};
}

/// tg.shard_attention: tg.attention's form over the shard's keys, their
/// positions j * shards + shard, with each query's log-sum-exp.
Lowered lowerShardAttention(ShardAttentionOp op, OpBuilder &b) {
  AttentionForm f;
  f.q = op.getQ();
  f.k = op.getK();
  f.v = op.getV();
  f.live = {op.getLength(), op.getShard(), int64_t(op.getShards())};
  f.causal = op.getCausal();
  f.scale = op.getScale().convertToDouble();
  Value lse;
  Value out = attend(b, op.getLoc(), f, &lse);
  return SmallVector<Value>{out, lse};
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
