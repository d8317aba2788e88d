//===- CacheParallel.cpp - A decoder program sharded by cache position ----===//
//
// Part of Loom. --tg-cache-parallel="ranks=P" (docs/CacheParallel.md): every
// rank of a world of P runs the whole decoder program on replicated
// weights, but holds only one shard of every key/value cache: positions
// r, r + P, r + 2P, ... of each sequence (round-robin), in a cache of
// C / P + 1 positions (C a multiple of P). Each rank
//
//   - writes, of a call's S new keys and values, those of the positions it
//     owns, at their places in its shard (a gather of the S rows, one
//     tg.update_slice at a per-sequence offset: the rows it owns are
//     consecutive in its shard);
//   - attends over its shard (tg.shard_attention: the output and the
//     log-sum-exp of its keys' scores);
//   - gathers every rank's (output, log-sum-exp) (one tg.all_gather a
//     layer) and merges them by their log-sum-exp, the softmax of the union
//     exactly, the same on every rank (each rank merges the same gathered
//     values in rank order);
//
// and the program goes on replicated. The gather of the written rows is
// padded to ceil(S / P) rows; the padding lands on positions past the live
// length (overwritten before any query sees them), the extra position of
// the shard taking what would pass its end.
//
// A function that already runs on a world of W ranks (its tg.world_rank and
// tg.all_gather ops', e.g. a tensor-parallel rank's after
// --tg-tensor-parallel) runs on a world of P x W after it: world rank w is
// cache shard w / W of inner rank w % W. Its own collectives keep their
// groups in the larger world; the shards' are groups of stride W; a
// function of one rank r of W (tg.runs_on_rank) runs on every world rank
// w with w % W == r (tg.rank_period = W).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/CacheParallel.h"

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Dialect/TG/Transforms/TensorParallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>
#include <map>
#include <tuple>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// Builds the rank-dependent arithmetic of one function.
class ShardBuilder {
public:
  ShardBuilder(OpBuilder &b, Location loc, int64_t ranks, int64_t inner)
      : b(b), loc(loc), ranks(ranks), inner(inner) {}

  Type f32() { return b.getF32Type(); }
  Type i64() { return b.getI64Type(); }

  Value constant(ArrayRef<float> values, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, f32());
    return ConstantOp::create(b, loc, type,
                              DenseElementsAttr::get(type, values));
  }
  Value scalar(float v) { return constant({v}, {}); }
  Value cast(Value x, Type element) {
    auto type = cast_(x).clone(element);
    return CastOp::create(b, loc, type, x);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return ReshapeOp::create(b, loc, cast_(x).clone(shape), x);
  }
  Value clip(Value x, double lo, double hi) {
    return ClipOp::create(b, loc, x.getType(), x, b.getF64FloatAttr(lo),
                          b.getF64FloatAttr(hi));
  }
  Value add(Value l, Value r) { return AddOp::create(b, loc, l, r); }
  Value sub(Value l, Value r) { return SubOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return MulOp::create(b, loc, l, r); }
  Value div(Value l, Value r) { return DivOp::create(b, loc, l, r); }
  Value max(Value l, Value r) { return MaxOp::create(b, loc, l, r); }
  Value min(Value l, Value r) { return MinOp::create(b, loc, l, r); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }

  /// This rank, as f32 (tg.world_rank, once per function).
  Value rankF32() {
    if (!rank) {
      // The shards' group spans the world: `world` is its default.
      Value r = WorldRankOp::create(b, loc, uint64_t(ranks), uint64_t(inner));
      rankI64 = r;
      rank = cast(r, f32());
    }
    return rank;
  }
  Value rankI64Value() {
    rankF32();
    return rankI64;
  }
  /// The gather of \p x over this rank's cache shards.
  Value allGather(Value x) {
    return AllGatherOp::create(b, loc, x, uint64_t(ranks), uint64_t(inner));
  }

  OpBuilder &b;
  Location loc;
  /// The cache shards P, and the world each shard's ranks form (W).
  int64_t ranks, inner;

private:
  static RankedTensorType cast_(Value v) {
    return mlir::cast<RankedTensorType>(v.getType());
  }
  Value rank, rankI64;
};

/// Where a call's S new rows go in this rank's shard, for one offsets
/// value: the shard's offset (i64, the offsets' shape) and, per sequence,
/// which of the S rows it writes (f32 [B or 1, n], n = ceil(S / P)).
struct ShardWrite {
  Value offset, rows;
};

/// The write of rows at global offsets \p offsets (clamped to [0, C - S] as
/// tg.update_slice clamps them): the first position this rank owns at or
/// after o is lo * P + r, lo = ceil((o - r) / P) (its index in the shard);
/// it is row t0 = lo * P + r - o of the call, and the rank's rows are t0,
/// t0 + P, ... (clamped to S - 1: the padding).
ShardWrite shardWrite(ShardBuilder &sb, Value offsets, int64_t capacity,
                      int64_t rows) {
  int64_t p = sb.ranks, n = (rows + p - 1) / p;
  auto type = mlir::cast<RankedTensorType>(offsets.getType());
  Value o = sb.clip(sb.cast(offsets, sb.f32()), 0, double(capacity - rows));
  Value a = sb.add(sb.sub(o, sb.rankF32()), sb.scalar(float(p - 1)));
  // a >= 0, so C's fmod is the floor's remainder, and (a - a mod P) / P is
  // exact (integers below 2^24).
  Value rem = ModOp::create(sb.b, sb.loc, a, sb.scalar(float(p)),
                            sb.b.getBoolAttr(true));
  Value lo = sb.div(sb.sub(a, rem), sb.scalar(float(p)));
  Value t0 = sb.sub(sb.add(sb.mul(lo, sb.scalar(float(p))), sb.rankF32()), o);
  int64_t batch = type.getRank() == 0 ? 1 : type.getDimSize(0);
  SmallVector<float> steps;
  for (int64_t k = 0; k < n; ++k)
    steps.push_back(float(k * p));
  Value at = sb.add(sb.reshape(t0, {batch, 1}), sb.constant(steps, {1, n}));
  ShardWrite w;
  w.rows = sb.clip(at, 0, double(rows - 1));
  w.offset = sb.cast(lo, sb.i64());
  return w;
}

/// Rows \p rows (f32 [B or 1, n]) of \p update [B, H, S, D] along its axis
/// 2: [B, H, n, D], one gather of update seen as [B * H * S, D].
Value gatherRows(ShardBuilder &sb, Value update, Value rows) {
  auto type = mlir::cast<RankedTensorType>(update.getType());
  int64_t batch = type.getDimSize(0), heads = type.getDimSize(1);
  int64_t s = type.getDimSize(2), d = type.getDimSize(3);
  int64_t n = mlir::cast<RankedTensorType>(rows.getType()).getDimSize(1);
  int64_t rowBatch = mlir::cast<RankedTensorType>(rows.getType()).getDimSize(0);
  SmallVector<float> starts;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      starts.push_back(float((b * heads + h) * s));
  Value flat = sb.add(sb.constant(starts, {batch, heads, 1}),
                      sb.reshape(rows, {rowBatch, 1, n}));
  Value table = sb.reshape(update, {batch * heads * s, d});
  return GatherOp::create(sb.b, sb.loc, table, sb.cast(flat, sb.i64()),
                          sb.b.getI64IntegerAttr(0));
}

/// The merge of every rank's (output, lse) gathered as [P, B, H, S, D + 1]
/// (the lse last): sum_p w_p out_p / sum_p w_p, w_p = exp(lse_p - m), m the
/// largest lse (at least float's lowest, so that a query no rank has a key
/// for gets 0, as tg.attention gives it).
Value mergeShards(ShardBuilder &sb, Value gathered, RankedTensorType outType) {
  auto type = mlir::cast<RankedTensorType>(gathered.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t d = shape.back() - 1;
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
  limits.back() = d;
  auto slice = [&](ArrayRef<int64_t> from, ArrayRef<int64_t> to) -> Value {
    SmallVector<Type, 1> inferred;
    (void)inferSlice(sb.loc, gathered.getType(), from, to, std::nullopt,
                     inferred);
    return SliceOp::create(sb.b, sb.loc, inferred[0], gathered,
                           sb.b.getDenseI64ArrayAttr(from),
                           sb.b.getDenseI64ArrayAttr(to), DenseI64ArrayAttr());
  };
  Value outs = slice(starts, limits);
  SmallVector<int64_t> lseStarts(shape.size(), 0);
  lseStarts.back() = d;
  Value lses = slice(lseStarts, shape);
  auto axis0 = sb.b.getDenseI64ArrayAttr({0});
  Value m = ReduceMaxOp::create(sb.b, sb.loc, lses, axis0, sb.b.getBoolAttr(true));
  m = sb.max(m, sb.scalar(std::numeric_limits<float>::lowest()));
  Value w = sb.exp(sb.sub(lses, m));
  Value num = ReduceSumOp::create(sb.b, sb.loc, sb.mul(w, outs), axis0,
                                  sb.b.getBoolAttr(false));
  Value den = ReduceSumOp::create(sb.b, sb.loc, w, axis0,
                                  sb.b.getBoolAttr(false));
  Value merged = sb.div(num, sb.max(den, sb.scalar(1.0f)));
  return sb.reshape(merged, outType.getShape());
}

/// A tied cache argument's update: `update_slice(cache, new, offsets)`
/// along axis 2 of a [B, H, C, D] cache.
struct CacheUpdate {
  BlockArgument cache;
  UpdateSliceOp update;
};

/// The update of the tied cache \p v is (an update_slice of a tied rank-4
/// argument along axis 2 whose only reader it is), or failure with an
/// error at \p at.
FailureOr<CacheUpdate> cacheUpdateOf(Value v, Operation *at, StringRef role) {
  auto update = v.getDefiningOp<UpdateSliceOp>();
  auto cache = update ? dyn_cast<BlockArgument>(update.getBase()) : nullptr;
  auto fn = cache ? dyn_cast<func::FuncOp>(cache.getOwner()->getParentOp())
                  : nullptr;
  if (!fn || !getTiedResult(fn, cache.getArgNumber()) ||
      update.getType().getRank() != 4 ||
      (int64_t(update.getAxis()) != 2 && int64_t(update.getAxis()) != -2) ||
      !cache.hasOneUse() ||
      llvm::any_of(update->getUsers(), [](Operation *user) {
        return !isa<AttentionOp, func::ReturnOp>(user);
      })) {
    at->emitError("--tg-cache-parallel: the attention's ")
        << role
        << " are not a tied cache [B, heads, C, D] updated once along axis "
           "2 (tg.update_slice of a tg.tied_result argument read by nothing "
           "else, read by attentions and returned), the form of a decoder "
           "program (docs/Decoding.md)";
    return failure();
  }
  return CacheUpdate{cache, update};
}

struct TGCacheParallelPass
    : PassWrapper<TGCacheParallelPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TGCacheParallelPass)

  TGCacheParallelPass() = default;
  TGCacheParallelPass(const TGCacheParallelPass &other) : PassWrapper(other) {}
  explicit TGCacheParallelPass(int64_t p) { ranks = p; }

  StringRef getArgument() const override { return "tg-cache-parallel"; }
  StringRef getDescription() const override {
    return "Shard a decoder program's key/value caches by position over a "
           "world of ranks (round-robin), each rank attending over its shard "
           "and the partial attentions merged by their log-sum-exp";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<TGDialect>();
  }

  void runOnOperation() override;

  Option<int64_t> ranks{*this, "ranks",
                        llvm::cl::desc("The world's ranks P (at least 2)"),
                        llvm::cl::init(0)};
};

void TGCacheParallelPass::runOnOperation() {
  func::FuncOp fn = getOperation();
  if (ranks < 2 || ranks > 4096) {
    fn.emitError("--tg-cache-parallel needs ranks=P with P in 2..4096, got ")
        << ranks.getValue();
    return signalPassFailure();
  }
  // Every function runs on the larger world, attentions or not.
  FailureOr<int64_t> inner = enlargeWorld(fn, ranks, "--tg-cache-parallel");
  if (failed(inner))
    return signalPassFailure();
  SmallVector<AttentionOp> attentions;
  fn.walk([&](AttentionOp op) { attentions.push_back(op); });
  if (attentions.empty())
    return;
  // Every attention's keys and values: tied caches updated once.
  llvm::MapVector<Operation *, CacheUpdate> updates;
  for (AttentionOp op : attentions)
    for (auto [v, role] : {std::pair<Value, StringRef>{op.getK(), "keys"},
                           {op.getV(), "values"}}) {
      FailureOr<CacheUpdate> u = cacheUpdateOf(v, op, role);
      if (failed(u))
        return signalPassFailure();
      updates[u->update] = *u;
      // The shard holds C / P positions and one for writes past them, so
      // that the capacity C = P * (shard - 1) stays in the signature.
      int64_t capacity =
          mlir::cast<RankedTensorType>(u->cache.getType()).getDimSize(2);
      if (capacity % ranks) {
        op.emitError("--tg-cache-parallel: the cache capacity ")
            << capacity << " is not a multiple of ranks="
            << ranks.getValue();
        return signalPassFailure();
      }
    }
  OpBuilder b(fn.getContext());
  b.setInsertionPointToStart(&fn.getBody().front());
  ShardBuilder sb(b, fn.getLoc(), ranks, *inner);
  sb.rankF32();
  // The shards: C / P + 1 positions each. The keys' and values'
  // updates of a layer (and every layer's) share their offsets: one write
  // plan per (offsets, capacity, rows).
  llvm::DenseMap<Operation *, Value> sharded;
  std::map<std::tuple<void *, int64_t, int64_t>, ShardWrite> writes;
  for (auto &[op, u] : updates) {
    auto type = mlir::cast<RankedTensorType>(u.cache.getType());
    int64_t capacity = type.getDimSize(2);
    int64_t local = capacity / ranks + 1;
    auto shardType = type.clone(
        {type.getDimSize(0), type.getDimSize(1), local, type.getDimSize(3)});
    u.cache.setType(shardType);
    b.setInsertionPoint(u.update);
    sb.loc = u.update.getLoc();
    Value update = u.update.getUpdate();
    int64_t rows = mlir::cast<RankedTensorType>(update.getType()).getDimSize(2);
    Value offsets = u.update.getOffsets();
    auto key = std::make_tuple(offsets.getAsOpaquePointer(), capacity, rows);
    if (!writes.count(key)) {
      // After the offsets' definition, before its first update.
      if (Operation *def = offsets.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointAfter(sb.rankI64Value().getDefiningOp()
                                     ->getNextNode());
      writes[key] = shardWrite(sb, offsets, capacity, rows);
      b.setInsertionPoint(u.update);
    }
    ShardWrite w = writes[key];
    Value written = UpdateSliceOp::create(b, sb.loc, u.cache,
                                          gatherRows(sb, update, w.rows),
                                          w.offset, b.getI64IntegerAttr(2));
    sharded[op] = written;
  }
  for (AttentionOp op : attentions) {
    b.setInsertionPoint(op);
    sb.loc = op.getLoc();
    auto kType = mlir::cast<RankedTensorType>(op.getK().getType());
    int64_t capacity = kType.getDimSize(2);
    // tg.attention's live length, clamped to the capacity as it clamps it.
    Value length = op.getLength();
    Value live =
        length ? sb.cast(sb.clip(sb.cast(length, sb.f32()), 0, double(capacity)),
                         sb.i64())
               : sb.cast(sb.scalar(float(capacity)), sb.i64());
    auto shard = ShardAttentionOp::create(
        b, sb.loc, op.getQ(), sharded[op.getK().getDefiningOp()],
        sharded[op.getV().getDefiningOp()], live, sb.rankI64Value(),
        op.getScaleAttr(), op.getCausalAttr(), b.getI64IntegerAttr(ranks));
    auto outType = mlir::cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> lseShape(outType.getShape());
    lseShape.back() = 1;
    Value both = ConcatOp::create(
        b, sb.loc,
        ValueRange{shard.getOutput(), sb.reshape(shard.getLse(), lseShape)},
        b.getI64IntegerAttr(3));
    Value gathered = sb.allGather(both);
    op.getResult().replaceAllUsesWith(mergeShards(sb, gathered, outType));
    op.erase();
  }
  // The tied results are the shards' updates.
  for (auto &[op, u] : updates) {
    op->getResult(0).replaceAllUsesWith(sharded[op]);
    op->erase();
  }
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  fn.setType(FunctionType::get(fn.getContext(),
                               fn.getBody().front().getArgumentTypes(),
                               ret.getOperandTypes()));
}

} // namespace

std::unique_ptr<Pass> tg::createTGCacheParallelPass(int64_t ranks) {
  return std::make_unique<TGCacheParallelPass>(ranks);
}

LogicalResult tg::shardCaches(ModuleOp module, int64_t ranks) {
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createTGCacheParallelPass(ranks));
  return pm.run(module);
}

void tg::registerTGCacheParallelPass() {
  PassRegistration<TGCacheParallelPass>();
}
