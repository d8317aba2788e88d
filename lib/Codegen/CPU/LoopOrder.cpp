//===- LoopOrder.cpp - The innermost loop of each structured op -----------===//
//
// Part of Loom. See the description of LoomVectorizableLoopOrder in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMVECTORIZABLELOOPORDER
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

/// The element stride of \p operand along loop \p dim: the coefficient of
/// the dimension in the accessed address (nullopt: not static).
std::optional<int64_t> strideAlong(AffineMap map, MemRefType type,
                                   unsigned dim) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> zeros(map.getNumDims(),
                                getAffineConstantExpr(0, ctx));
  SmallVector<AffineExpr> unit = zeros;
  unit[dim] = getAffineConstantExpr(1, ctx);
  int64_t total = 0;
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    auto at0 = dyn_cast<AffineConstantExpr>(
        expr.replaceDimsAndSymbols(zeros, {}));
    auto at1 =
        dyn_cast<AffineConstantExpr>(expr.replaceDimsAndSymbols(unit, {}));
    if (!at0 || !at1)
      return std::nullopt;
    int64_t coefficient = at1.getValue() - at0.getValue();
    if (coefficient == 0)
      continue;
    if (ShapedType::isDynamic(strides[r]))
      return std::nullopt;
    total += coefficient * strides[r];
  }
  return total;
}

/// How well loop \p dim suits the innermost position: each operand read
/// or written at unit stride or not moving (held in a register) counts +1,
/// one it walks through with a larger stride -1.
int score(linalg::LinalgOp op, unsigned dim) {
  int total = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    std::optional<int64_t> stride =
        strideAlong(op.getMatchingIndexingMap(&operand), type, dim);
    if (stride)
      total += (*stride == 0 || *stride == 1 || *stride == -1) ? 1 : -1;
  }
  return total;
}

/// Where loops \p d and \p d + 1 appear in \p map: the result position of
/// `d` when `d + 1` is the next result and neither appears elsewhere; -1
/// when neither appears at all (a broadcast along both); nullopt otherwise.
std::optional<int> adjacentPair(AffineMap map, unsigned d) {
  int at = -1, mentions = 0;
  for (auto [p, expr] : llvm::enumerate(map.getResults())) {
    bool first = expr.isFunctionOfDim(d), second = expr.isFunctionOfDim(d + 1);
    mentions += first + second;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (dim && dim.getPosition() == d && p + 1 < map.getNumResults() &&
        map.getResult(p + 1) == getAffineDimExpr(d + 1, map.getContext()))
      at = int(p);
  }
  if (mentions == 0)
    return -1;
  if (at < 0 || mentions != 2)
    return std::nullopt;
  return at;
}

/// Whether dimensions \p p and \p p + 1 of \p type are one contiguous run.
bool contiguousAcross(MemRefType type, int p) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !ShapedType::isDynamic(strides[p]) &&
         !ShapedType::isDynamic(strides[p + 1]) &&
         !type.isDynamicDim(p + 1) &&
         strides[p] == strides[p + 1] * type.getDimSize(p + 1);
}

/// Collapses the parallel loops \p d and \p d + 1 of \p op into one where
/// every operand either walks both as one contiguous run of its buffer or
/// reads neither: an elementwise op over [N, C, H, W] with per-channel
/// parameters becomes one over [N, C, H * W], so LLVM vectorises a loop of
/// H * W iterations instead of W (a 7-wide row is too short to vectorise)
/// and computes what depends on the channel alone once per plane instead of
/// once per row. The body and each element's value are unchanged.
FailureOr<linalg::GenericOp> collapseLoops(IRRewriter &rewriter,
                                           linalg::GenericOp op, unsigned d) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[d] != utils::IteratorType::parallel ||
      iterators[d + 1] != utils::IteratorType::parallel ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return failure();
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops();
  SmallVector<AffineExpr> renumbered;
  for (unsigned i = 0; i < loops; ++i)
    renumbered.push_back(getAffineDimExpr(i <= d ? i : i - 1, ctx));
  SmallVector<int> positions;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    std::optional<int> at =
        adjacentPair(op.getMatchingIndexingMap(&operand), d);
    if (!type || !at || (*at >= 0 && !contiguousAcross(type, *at)))
      return failure();
    positions.push_back(*at);
  }
  rewriter.setInsertionPoint(op);
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  for (auto [operand, at] : llvm::zip(op->getOpOperands(), positions)) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<AffineExpr> results;
    for (auto [p, expr] : llvm::enumerate(map.getResults()))
      if (at < 0 || int(p) != at + 1)
        results.push_back(expr.replaceDims(renumbered));
    maps.push_back(AffineMap::get(loops - 1, 0, results, ctx));
    Value v = operand.get();
    if (at >= 0) {
      SmallVector<ReassociationIndices> groups;
      for (int64_t r = 0; r < cast<MemRefType>(v.getType()).getRank(); ++r)
        if (r == at + 1)
          groups.back().push_back(r);
        else
          groups.push_back({r});
      v = memref::CollapseShapeOp::create(rewriter, op.getLoc(), v, groups);
    }
    values.push_back(v);
  }
  iterators.erase(iterators.begin() + d + 1);
  unsigned inputs = op.getNumDpsInputs();
  auto collapsed = linalg::GenericOp::create(
      rewriter, op.getLoc(), TypeRange{},
      ValueRange(values).take_front(inputs),
      ValueRange(values).drop_front(inputs), maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), collapsed.getRegion(),
                              collapsed.getRegion().begin());
  rewriter.eraseOp(op);
  return collapsed;
}

/// \p op with every pair of adjacent loops collapsed that collapseLoops
/// accepts, innermost pairs first.
linalg::LinalgOp collapseContiguousLoops(IRRewriter &rewriter,
                                         linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return op;
  for (unsigned d = generic.getNumLoops() - 1; d-- > 0;)
    if (FailureOr<linalg::GenericOp> c = collapseLoops(rewriter, generic, d);
        succeeded(c))
      generic = *c;
  return generic;
}

struct VectorizableLoopOrder
    : public loom::codegen::cpu::impl::LoomVectorizableLoopOrderBase<
          VectorizableLoopOrder> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 1 &&
          !isa<linalg::FillOp, linalg::CopyOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      op = collapseContiguousLoops(rewriter, op);
      unsigned loops = op.getNumLoops();
      if (loops < 2)
        continue;
      SmallVector<int64_t> extents = op.getStaticLoopRanges();
      unsigned best = loops - 1;
      int bestScore = score(op, best);
      for (unsigned d = 0; d + 1 < loops; ++d) {
        int s = score(op, d);
        bool longer = !ShapedType::isDynamic(extents[d]) &&
                      !ShapedType::isDynamic(extents[best]) &&
                      extents[d] > extents[best];
        if (s > bestScore || (s == bestScore && longer)) {
          best = d;
          bestScore = s;
        }
      }
      if (best == loops - 1)
        continue;
      // Loop `best` moves innermost; the others keep their order.
      SmallVector<unsigned> order;
      for (unsigned d = 0; d < loops; ++d)
        if (d != best)
          order.push_back(d);
      order.push_back(best);
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        auto generalized = linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
        return signalPassFailure();
    }
  }
};

} // namespace
