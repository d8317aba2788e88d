//===- WorldOps.cpp - Facts of the ops of programs run on every rank ------===//
//
// Part of Loom. tg.world_rank, tg.all_gather and tg.shard_attention
// (TGWorldOps.td): shape rules, evaluation, work and ONNX export (none: a
// program of several ranks is not an ONNX graph). The interpreter runs one
// process: it evaluates the rank and the gather only in a world of one
// rank; a program of several runs compiled, one process a rank
// (docs/CacheParallel.md).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Interpreter/AttentionKernel.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

LogicalResult checkRanks(std::optional<Location> location, int64_t ranks,
                         StringRef name = "ranks") {
  if (ranks < 1)
    return emitOptionalError(location, name, " must be at least 1, got ",
                             ranks);
  return success();
}

/// A group of \p ranks ranks spaced \p stride apart in a world of \p
/// world ranks (0: ranks * stride): TGWorldOps.td's header. The attributes
/// of an op being built may be unset: their defaults (1, 0).
LogicalResult checkGroup(std::optional<Location> location, IntegerAttr ranksAttr,
                         IntegerAttr strideAttr, IntegerAttr worldAttr) {
  int64_t ranks = ranksAttr ? ranksAttr.getInt() : 0;
  int64_t stride = strideAttr ? strideAttr.getInt() : 1;
  int64_t world = worldAttr ? worldAttr.getInt() : 0;
  if (failed(checkRanks(location, ranks)) ||
      failed(checkRanks(location, stride, "stride")))
    return failure();
  if (world < 0 || world % (ranks * stride))
    return emitOptionalError(location, "world ", world,
                             " is not a multiple of ranks * stride = ",
                             ranks * stride, " (0: the group's)");
  return success();
}

/// The interpreter's refusal of a world of several ranks.
LogicalResult oneRankOnly(Operation *op, int64_t worldSize) {
  if (worldSize == 1)
    return success();
  return op->emitOpError("runs on a world of ")
         << worldSize
         << " ranks; the interpreter runs one: run the compiled artifact "
            "on its ranks (loom-generate --ranks, or under a launcher)";
}

LogicalResult noExport(Operation *op) {
  return op->emitOpError("has no ONNX export (a program run on several "
                         "ranks is not an ONNX graph)");
}

} // namespace

//===----------------------------------------------------------------------===//
// tg.world_rank
//===----------------------------------------------------------------------===//

LogicalResult WorldRankOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  if (failed(checkGroup(location, adaptor.getRanksAttr(),
                        adaptor.getStrideAttr(), adaptor.getWorldAttr())))
    return failure();
  inferred.push_back(RankedTensorType::get({}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult WorldRankOp::evaluate(interp::EvalFrame &frame) {
  if (failed(oneRankOnly(*this, getWorldSize())))
    return failure();
  return frame.visit(
      [&](auto &f) -> LogicalResult { return f.pushDoubles({}, {0.0}); });
}

OpWork WorldRankOp::getWork() { return streamingWork(*this, 0); }

LogicalResult WorldRankOp::exportONNX(ONNXEmitter &) { return noExport(*this); }

//===----------------------------------------------------------------------===//
// tg.all_gather
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  if (failed(checkGroup(location, adaptor.getRanksAttr(),
                        adaptor.getStrideAttr(), adaptor.getWorldAttr())))
    return failure();
  int64_t root = adaptor.getRootAttr() ? adaptor.getRootAttr().getInt() : -1;
  if (root < -1 || root >= int64_t(adaptor.getRanks()))
    return emitOptionalError(location, "root ", root,
                             " is not a rank of the group (0 .. ",
                             adaptor.getRanks() - 1, ", or -1: every rank)");
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  SmallVector<int64_t> shape = {int64_t(adaptor.getRanks())};
  llvm::append_range(shape, input.getShape());
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult AllGatherOp::evaluate(interp::EvalFrame &frame) {
  if (failed(oneRankOnly(*this, getWorldSize())))
    return failure();
  return frame.visit([&](auto &f) -> LogicalResult {
    auto out = f.in(0);
    out.shape.insert(out.shape.begin(), 1);
    return f.push(std::move(out));
  });
}

// The gathered bytes cross the links; the cost model prices the move.
OpWork AllGatherOp::getWork() { return streamingWork(*this, 0); }

LogicalResult AllGatherOp::exportONNX(ONNXEmitter &) { return noExport(*this); }

//===----------------------------------------------------------------------===//
// tg.shard_attention
//===----------------------------------------------------------------------===//

LogicalResult ShardAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(checkRanks(location, adaptor.getShards(), "shards")))
    return failure();
  // tg.attention's rules, but for causal's: a shard's Skv keys may be
  // fewer than the queries (they are positions of the whole sequence).
  if (failed(inferAttention(location, adaptor.getQ().getType(),
                            adaptor.getK().getType(), adaptor.getV().getType(),
                            adaptor.getLength().getType(),
                            adaptor.getScale().convertToDouble(),
                            /*causal=*/false, inferred)))
    return failure();
  auto q = cast<RankedTensorType>(inferred.front());
  inferred.push_back(
      RankedTensorType::get(q.getShape().drop_back(), q.getElementType()));
  return success();
}

LogicalResult ShardAttentionOp::evaluate(interp::EvalFrame &frame) {
  interp::AttentionParams p;
  p.scale = getScale().convertToDouble();
  p.causal = getCausal();
  p.shard.count = getShards();
  int64_t batch = getQ().getType().getDimSize(0);
  return frame.visit([&](auto &f) -> LogicalResult {
    using D = typename std::decay_t<decltype(f.in(0))>::Domain;
    interp::AttentionParams q = p;
    const auto &length = f.in(3);
    for (int64_t b = 0; b < batch; ++b)
      q.lengths.push_back(static_cast<int64_t>(
          D::toDouble(length.data[length.rank() == 0 ? 0 : b])));
    q.shard.index = std::clamp<int64_t>(
        static_cast<int64_t>(D::toDouble(f.in(4).data[0])), 0,
        q.shard.count - 1);
    std::vector<int64_t> lseShape = f.in(0).shape;
    lseShape.pop_back();
    std::decay_t<decltype(f.in(0))> lse(lseShape);
    auto out = interp::attention(f.in(0), f.in(1), f.in(2), q, &lse);
    if (failed(f.push(std::move(out))))
      return failure();
    return f.push(std::move(lse));
  });
}

// tg.attention's over this shard's capacity.
OpWork ShardAttentionOp::getWork() {
  return attentionWork(*this, getQ().getType(), getK().getType());
}

LogicalResult ShardAttentionOp::exportONNX(ONNXEmitter &) {
  return noExport(*this);
}
