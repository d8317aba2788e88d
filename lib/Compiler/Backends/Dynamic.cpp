//===- Dynamic.cpp - The loomrt backend: the dynamic ops as runtime steps -===//
//
// Part of Loom. tg.topk, tg.non_max_suppression, tg.nonzero, tg.attention
// and tg.update_slice on the CPU as libloomrt's own steps (loomrt.topk,
// loomrt.non_max_suppression, loomrt.nonzero, loomrt.attention,
// loomrt.update_slice; docs/Artifact.md). The attention step runs Loom's
// attention kernel (lib/Runtime/CPU/Kernels/Attention.cpp); the update of a
// slice copies the slice only, in place for state tied to its result
// (TiedArguments.h); the others run the sort-based algorithms of
// loom/Support/DynamicAlgorithms.h, the interpreter's definition. The
// generated lowering (lib/Conversion/TGToLinalg/Dynamic.cpp) scans once
// per pick, O(k * n) for a top-k and O(picks * n) for NMS: the GPU targets
// keep it, the CPU's default list gives these ops to this backend.
// tg.shard_attention is the attention step over a shard of the cache;
// tg.world_rank and tg.all_gather are the runtime's loomrt.world_rank and
// loomrt.all_gather over the context's world (docs/CacheParallel.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Support/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

/// The manifest's dtype of \p type's elements when a dynamic step computes
/// on it (f32, f64, i1, i8, i32, i64), else nullopt.
std::optional<std::string> stepDtype(Type type) {
  auto kind = tg::elemKindOf(cast<RankedTensorType>(type).getElementType());
  if (!kind)
    return std::nullopt;
  std::string name = elementTypeInfo(*kind).mlirName.str();
  for (const char *known : {"f32", "f64", "i1", "i8", "i32", "i64"})
    if (name == known)
      return name;
  return std::nullopt;
}

bool hasStaticShape(Operation *op) {
  auto isStatic = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

/// The step of \p op: base and update viewed as [outer, dim, inner] and
/// [outer, rows, inner] around the axis.
artifact::UpdateSliceStep updateSliceStep(tg::UpdateSliceOp op,
                                          const StepOperands &operands) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  artifact::UpdateSliceStep s;
  s.base = operands.buffer(op.getBase());
  s.update = operands.buffer(op.getUpdate());
  s.offsets = operands.buffer(op.getOffsets());
  s.dst = operands.buffer(op.getOutput());
  s.dtype = elementTypeInfo(*tg::elemKindOf(type.getElementType()))
                .mlirName.str();
  for (int64_t d = 0; d < axis; ++d)
    s.outer *= type.getDimSize(d);
  for (int64_t d = axis + 1; d < rank; ++d)
    s.inner *= type.getDimSize(d);
  s.dim = type.getDimSize(axis);
  s.rows = cast<RankedTensorType>(op.getUpdate().getType()).getDimSize(axis);
  s.offsetCount =
      std::max<int64_t>(1, cast<RankedTensorType>(op.getOffsets().getType())
                               .getNumElements());
  return s;
}

/// The loomrt.attention step of \p op, a tg.attention or a
/// tg.shard_attention (shapes their verifiers checked).
template <typename AttentionLike>
artifact::AttentionStep attentionStep(AttentionLike op,
                                      const StepOperands &operands) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  auto k = cast<RankedTensorType>(op.getK().getType());
  artifact::AttentionStep s;
  s.q = operands.buffer(op.getQ());
  s.k = operands.buffer(op.getK());
  s.v = operands.buffer(op.getV());
  s.dst = operands.buffer(op.getOutput());
  if (Value length = op.getLength()) {
    s.length = operands.buffer(length);
    s.lengthPerBatch = cast<RankedTensorType>(length.getType()).getRank() == 1;
  }
  s.batch = q.getDimSize(0);
  s.qHeads = q.getDimSize(1);
  s.qLen = q.getDimSize(2);
  s.headDim = q.getDimSize(3);
  s.kvHeads = k.getDimSize(1);
  s.kvLen = k.getDimSize(2);
  s.scale = op.getScale().convertToDouble();
  s.causal = op.getCausal();
  return s;
}

/// tg.shard_attention's: tg.attention's with its shard and log-sum-exp.
artifact::AttentionStep shardAttentionStep(tg::ShardAttentionOp op,
                                           const StepOperands &operands) {
  artifact::AttentionStep s = attentionStep(op, operands);
  s.shard = operands.buffer(op.getShard());
  s.lse = operands.buffer(op.getLse());
  s.shards = op.getShards();
  return s;
}

class LoomrtBackend : public Backend {
public:
  explicit LoomrtBackend(StringRef device) : kind(device.str()) {}
  StringRef name() const override { return "loomrt"; }
  StringRef summary() const override {
    return onCpu() ? "libloomrt's own steps: top-k, non-max suppression and "
                     "nonzero by sorting; fused attention; the world's rank "
                     "and gathers"
                   : "libloomrt's own steps on a GPU: the world's rank and "
                     "gathers (staged through the host)";
  }
  StringRef device() const override { return kind; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    // On a GPU the other ops have generated forms; the world's steps are
    // the runtime's on any device.
    if (!onCpu())
      return {tg::WorldRankOp::getOperationName(),
              tg::AllGatherOp::getOperationName()};
    return {tg::TopKOp::getOperationName(),
            tg::NonMaxSuppressionOp::getOperationName(),
            tg::NonZeroOp::getOperationName(),
            tg::UpdateSliceOp::getOperationName(),
            tg::AttentionOp::getOperationName(),
            tg::ShardAttentionOp::getOperationName(),
            tg::WorldRankOp::getOperationName(),
            tg::AllGatherOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override {
    if (!onCpu())
      return {"world_rank, all_gather: the runtime's, over the context's "
              "world"};
    return {"topk: f32, f64, i32, i64 (or i1, i8) input, static shape",
            "non_max_suppression: f32 boxes and scores",
            "nonzero: f32, f64, i1, i8, i32, i64 input, static shape",
            "update_slice: any element type, static shape",
            "attention: f32 q, k, v",
            "shard_attention: f32 q, k, v",
            "world_rank, all_gather: the runtime's, over the context's world"};
  }

  void collectCandidates(Operation *anchor, Available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    if (!onCpu() && !isa<tg::WorldRankOp, tg::AllGatherOp>(anchor))
      return;
    bool f32Attention = false;
    if (auto attention = dyn_cast<tg::AttentionOp>(anchor))
      f32Attention = patterns::isF32(attention.getQ().getType());
    if (auto attention = dyn_cast<tg::ShardAttentionOp>(anchor))
      f32Attention = patterns::isF32(attention.getQ().getType());
    if (isa<tg::AttentionOp, tg::ShardAttentionOp, tg::WorldRankOp,
            tg::AllGatherOp>(anchor)) {
      if (!f32Attention && !isa<tg::WorldRankOp, tg::AllGatherOp>(anchor))
        return;
      LibraryCall call;
      call.anchor = anchor;
      call.ops.push_back(anchor);
      out.push_back(std::move(call));
      return;
    }
    if (!isa<tg::TopKOp, tg::NonMaxSuppressionOp, tg::NonZeroOp,
             tg::UpdateSliceOp>(anchor) ||
        !hasStaticShape(anchor))
      return;
    if (auto nms = dyn_cast<tg::NonMaxSuppressionOp>(anchor);
        nms && !(patterns::isF32(nms.getBoxes().getType()) &&
                 patterns::isF32(nms.getScores().getType())))
      return;
    if (!isa<tg::NonMaxSuppressionOp, tg::UpdateSliceOp>(anchor) &&
        !stepDtype(anchor->getOperand(0).getType()))
      return;
    LibraryCall call;
    call.anchor = anchor;
    call.ops.push_back(anchor);
    out.push_back(std::move(call));
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto optional = [&](Value v) { return v ? operands.buffer(v) : -1; };
    if (auto update = dyn_cast<tg::UpdateSliceOp>(call.anchor)) {
      step.record = updateSliceStep(update, operands);
      return success();
    }
    if (auto attention = dyn_cast<tg::AttentionOp>(call.anchor)) {
      step.record = attentionStep(attention, operands);
      return success();
    }
    if (auto attention = dyn_cast<tg::ShardAttentionOp>(call.anchor)) {
      step.record = shardAttentionStep(attention, operands);
      return success();
    }
    if (auto rank = dyn_cast<tg::WorldRankOp>(call.anchor)) {
      artifact::WorldRankStep s;
      s.dst = operands.buffer(rank.getRank());
      s.group = {int64_t(rank.getRanks()), int64_t(rank.getStride()),
                 rank.getWorldSize()};
      step.record = s;
      return success();
    }
    if (auto gather = dyn_cast<tg::AllGatherOp>(call.anchor)) {
      auto type = cast<RankedTensorType>(gather.getInput().getType());
      artifact::AllGatherStep s;
      s.src = operands.buffer(gather.getInput());
      s.dst = operands.buffer(gather.getOutput());
      s.bytes = type.getNumElements() *
                ((type.getElementTypeBitWidth() + 7) / 8);
      s.group = {int64_t(gather.getRanks()), int64_t(gather.getStride()),
                 gather.getWorldSize()};
      s.root = gather.getRoot();
      step.record = s;
      return success();
    }
    if (auto topk = dyn_cast<tg::TopKOp>(call.anchor)) {
      auto type = cast<RankedTensorType>(topk.getInput().getType());
      int64_t rank = type.getRank();
      int64_t axis = topk.getAxis() < 0 ? topk.getAxis() + rank : topk.getAxis();
      artifact::TopKStep s;
      s.src = operands.buffer(topk.getInput());
      s.valid = optional(topk.getValid());
      s.values = operands.buffer(topk.getValues());
      s.indices = operands.buffer(topk.getIndices());
      s.count = operands.buffer(topk.getCount());
      s.dtype = *stepDtype(type);
      s.outer = s.inner = 1;
      for (int64_t d = 0; d < axis; ++d)
        s.outer *= type.getDimSize(d);
      for (int64_t d = axis + 1; d < rank; ++d)
        s.inner *= type.getDimSize(d);
      s.dim = type.getDimSize(axis);
      s.k = topk.getK();
      s.largest = topk.getLargest();
      step.record = std::move(s);
      return success();
    }
    if (auto nms = dyn_cast<tg::NonMaxSuppressionOp>(call.anchor)) {
      auto scores = cast<RankedTensorType>(nms.getScores().getType());
      artifact::NonMaxSuppressionStep s;
      s.boxes = operands.buffer(nms.getBoxes());
      s.scores = operands.buffer(nms.getScores());
      s.valid = optional(nms.getValid());
      s.selected = operands.buffer(nms.getSelected());
      s.count = operands.buffer(nms.getCount());
      s.batches = scores.getDimSize(0);
      s.classes = scores.getDimSize(1);
      s.numBoxes = scores.getDimSize(2);
      // At most every box: the same selection, and a number JSON keeps.
      s.maxOutputPerClass = std::clamp<int64_t>(
          nms.getMaxOutputBoxesPerClass(), 0, s.numBoxes);
      s.centerPointBox = nms.getCenterPointBox() == 1;
      s.iouThreshold = nms.getIouThreshold().convertToDouble();
      if (auto t = nms.getScoreThreshold())
        s.scoreThreshold = t->convertToDouble();
      step.record = std::move(s);
      return success();
    }
    auto nonzero = cast<tg::NonZeroOp>(call.anchor);
    auto type = cast<RankedTensorType>(nonzero.getInput().getType());
    artifact::NonZeroStep s;
    s.src = operands.buffer(nonzero.getInput());
    s.indices = operands.buffer(nonzero.getIndices());
    s.count = operands.buffer(nonzero.getCount());
    s.dtype = *stepDtype(type);
    s.shape = type.getShape().vec();
    step.record = std::move(s);
    return success();
  }

  /// The operands and results over the memory bandwidth, or the
  /// comparisons (n for nonzero, n log2 k for a top-k's selection, n log2 n
  /// for NMS's sort; the greedy pass is not priced) at a tenth of the peak
  /// (they branch), plus one launch. An update of a slice moves the update
  /// twice (in place, as the schedule makes it for tied state).
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    auto bytesOf = [](Type t) {
      auto tensor = cast<RankedTensorType>(t);
      return double(tensor.getNumElements()) *
             std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
    };
    if (auto update = dyn_cast<tg::UpdateSliceOp>(call.anchor))
      return (target.memBandwidth > 0
                  ? 2 * bytesOf(update.getUpdate().getType()) /
                        target.memBandwidth
                  : 0) +
             target.launchOverhead;
    double bytes = 0;
    for (Type t : call.anchor->getOperandTypes())
      bytes += bytesOf(t);
    for (Type t : call.anchor->getResultTypes())
      bytes += bytesOf(t);
    double n = double(
        cast<RankedTensorType>(call.anchor->getOperand(0).getType())
            .getNumElements());
    double compares = n;
    if (auto topk = dyn_cast<tg::TopKOp>(call.anchor))
      compares = n * std::log2(double(topk.getK()) + 2);
    else if (isa<tg::NonMaxSuppressionOp>(call.anchor))
      compares = n * std::log2(n + 2);
    double compute =
        target.peakFlops > 0 ? compares / (target.peakFlops * 0.1) : 0;
    double memory = target.memBandwidth > 0 ? bytes / target.memBandwidth : 0;
    return std::max(compute, memory) + target.launchOverhead;
  }

private:
  bool onCpu() const { return kind == "cpu"; }
  std::string kind;
};

} // namespace

std::unique_ptr<Backend> compiler::createLoomrtBackend(StringRef device) {
  return std::make_unique<LoomrtBackend>(device);
}
