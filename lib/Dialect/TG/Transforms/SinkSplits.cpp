//===- SinkSplits.cpp - The same op on every piece of a split, once -------===//
//
// Part of Loom. See TGSinkSplits in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGSINKSPLITS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// How one operand (other than the piece) of the ops after a split becomes
/// the operand of the op before it.
enum class Merge {
  /// The same value in every piece, broadcast along the split axis.
  Shared,
  /// A parameter per piece, as large as the piece along \p axis: the
  /// pieces' parameters concatenated along it.
  Concatenated,
};

/// How operand \p k of \p users (each of whose operand \p piece is its
/// piece of a split along \p axis of a rank-\p rank tensor) merges, with
/// the axis of the operand it concatenates along; nullopt when it does not.
std::optional<std::pair<Merge, int64_t>>
mergeOf(ArrayRef<Operation *> users, unsigned k, unsigned piece,
        int64_t axis, int64_t rank, bool perChannel) {
  Value first = users.front()->getOperand(k);
  if (perChannel) // batchnorm: [C] parameters of a channel split
    return llvm::all_of(users,
                        [&](Operation *u) {
                          return isParameter(u->getOperand(k));
                        })
               ? std::optional(std::make_pair(Merge::Concatenated, 0))
               : std::nullopt;
  auto type = dyn_cast<RankedTensorType>(first.getType());
  if (!type || type.getRank() > rank)
    return std::nullopt;
  int64_t at = axis - (rank - type.getRank()); // numpy broadcasting
  if (at < 0 || type.getDimSize(at) == 1)
    return llvm::all_of(users,
                        [&](Operation *u) { return u->getOperand(k) == first; })
               ? std::optional(std::make_pair(Merge::Shared, at))
               : std::nullopt;
  for (Operation *u : users) {
    Value v = u->getOperand(k);
    auto t = dyn_cast<RankedTensorType>(v.getType());
    auto pieceType = cast<RankedTensorType>(u->getOperand(piece).getType());
    if (!t || t.getRank() != type.getRank() || !isParameter(v) ||
        t.getDimSize(at) != pieceType.getDimSize(axis))
      return std::nullopt;
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != at && t.getDimSize(d) != type.getDimSize(d))
        return std::nullopt; // the parameters' shapes differ elsewhere

  }
  return std::make_pair(Merge::Concatenated, at);
}

/// \p v usable before \p point: \p v itself when it is defined before it,
/// else its defining ops (parameters: pure, without regions) cloned there.
Value before(Value v, Operation *point, PatternRewriter &rewriter,
             IRMapping &cloned) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return v;
  if (Value known = cloned.lookupOrNull(v))
    return known;
  for (Value operand : def->getOperands())
    cloned.map(operand, before(operand, point, rewriter, cloned));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(point);
  Operation *copy = rewriter.clone(*def, cloned);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

struct SinkSplit : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SplitOp split,
                                PatternRewriter &rewriter) const override {
    SmallVector<Operation *> users;
    for (Value piece : split.getResults()) {
      if (!piece.hasOneUse())
        return failure();
      users.push_back(*piece.getUsers().begin());
    }
    Operation *first = users.front();
    auto type = cast<RankedTensorType>(split.getInput().getType());
    int64_t rank = type.getRank(), axis = split.getAxis();
    if (axis < 0)
      axis += rank;
    bool perChannel = isa<BatchNormOp>(first);
    if (!(first->hasTrait<Elementwise>() || (perChannel && axis == 1)) ||
        first->getNumResults() != 1 || first->getNumRegions() != 0)
      return failure();
    unsigned piece = split.getResult(0).getUses().begin()->getOperandNumber();
    for (auto [i, u] : llvm::enumerate(users)) {
      Value mine = split.getResult(i);
      if (u->getName() != first->getName() ||
          u->getAttrDictionary() != first->getAttrDictionary() ||
          u->getBlock() != split->getBlock() ||
          u->getNumOperands() != first->getNumOperands() ||
          u->getOperand(piece) != mine ||
          llvm::count(u->getOperands(), mine) != 1 ||
          cast<RankedTensorType>(u->getResult(0).getType()).getShape() !=
              cast<RankedTensorType>(mine.getType()).getShape())
        return failure();
    }
    // Each other operand, merged.
    SmallVector<std::pair<Merge, int64_t>> merges(first->getNumOperands());
    for (unsigned k = 0; k < first->getNumOperands(); ++k) {
      if (k == piece)
        continue;
      auto m = mergeOf(users, k, piece, axis, rank, perChannel);
      if (!m)
        return failure();
      merges[k] = *m;
    }
    // Built before the first user, where every piece's op can go (the
    // parameters defined after that point are cloned before it).
    Operation *point = *llvm::min_element(users, [](Operation *a,
                                                    Operation *b) {
      return a->isBeforeInBlock(b);
    });
    rewriter.setInsertionPoint(point);
    IRMapping cloned;
    SmallVector<Value> operands;
    for (unsigned k = 0; k < first->getNumOperands(); ++k) {
      if (k == piece) {
        operands.push_back(split.getInput());
        continue;
      }
      if (merges[k].first == Merge::Shared) {
        operands.push_back(before(first->getOperand(k), point, rewriter,
                                  cloned));
        continue;
      }
      SmallVector<Value> parts;
      for (Operation *u : users)
        parts.push_back(before(u->getOperand(k), point, rewriter, cloned));
      operands.push_back(
          ConcatOp::create(rewriter, split.getLoc(), parts, merges[k].second)
              .getResult());
    }
    auto resultType = RankedTensorType::get(
        type.getShape(),
        cast<RankedTensorType>(first->getResult(0).getType()).getElementType());
    OperationState state(first->getLoc(), first->getName(), operands,
                         {resultType}, first->getAttrs());
    Operation *whole = rewriter.create(state);
    auto after = SplitOp::create(rewriter, split.getLoc(), whole->getResult(0),
                                 axis, split.getSizes());
    for (auto [u, result] : llvm::zip(users, after.getResults()))
      rewriter.replaceOp(u, result);
    rewriter.eraseOp(split);
    return success();
  }
};

struct SinkSplits : public tg::impl::TGSinkSplitsBase<SinkSplits> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkSplit>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
