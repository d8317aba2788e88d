//===- CacheInPlaceMask.cpp - An exported attention kept explicit ---------===//
//
// Part of Loom. The form --tg-cache-in-place gives an exported attention
// that tg.attention cannot express (a soft cap's tanh before the mask, a
// mask computed from an attention_mask input): the exporter's own ops over
// the whole cache, the keys past each query's live length hidden by a mask
// built from past_length. Every step then reads all C positions;
// tg.attention's form reads only the live ones.
//
//===----------------------------------------------------------------------===//

#include "CacheInPlaceMatch.h"

#include "mlir/IR/IRMapping.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

/// A float constant of \p shape holding \p values.
static Value floats(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, values));
}

/// Which of the [S, C] scores (of each sequence, [B, 1, S, C], when
/// \p offset is [B]) a query sees: key j <= offset + i (causal) or
/// <= offset + S - 1.
static Value visibleKeys(OpBuilder &b, Location loc, Value offset,
                         int64_t queries, int64_t capacity, bool causal) {
  SmallVector<float> positions(capacity), last(queries);
  std::iota(positions.begin(), positions.end(), 0.0f);
  for (int64_t i = 0; i < queries; ++i)
    last[i] = float(causal ? i : queries - 1);
  auto offsetType = cast<RankedTensorType>(offset.getType());
  SmallVector<int64_t> prefix;
  if (offsetType.getRank() == 1) {
    prefix = {offsetType.getDimSize(0), 1};
    offset = ReshapeOp::create(
        b, loc, offsetType.clone(ArrayRef<int64_t>{prefix[0], 1, 1, 1}),
        offset);
  }
  auto shaped = [&](std::initializer_list<int64_t> tail) {
    SmallVector<int64_t> shape(prefix);
    shape.append(tail);
    return shape;
  };
  Value limit = AddOp::create(
      b, loc, RankedTensorType::get(shaped({queries, 1}), b.getF32Type()),
      offset, floats(b, loc, {queries, 1}, last));
  return LessEqualOp::create(
      b, loc, RankedTensorType::get(shaped({queries, capacity}), b.getI1Type()),
      floats(b, loc, {capacity}, positions), limit);
}

Value tg::explicitAttention(OpBuilder &b, const ExportedAttention &a,
                            Value keys, Value values, Value offset) {
  Operation *last = a.ops.back();
  Location loc = last->getLoc();
  auto kType = cast<RankedTensorType>(keys.getType());
  auto qType = cast<RankedTensorType>(a.query.getType());
  int64_t capacity = kType.getDimSize(2), queries = qType.getDimSize(2);
  auto scoresType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), queries, capacity},
      qType.getElementType());
  Value keysT = TransposeOp::create(
      b, loc,
      RankedTensorType::get({kType.getDimSize(0), kType.getDimSize(1),
                             kType.getDimSize(3), capacity},
                            kType.getElementType()),
      keys, b.getDenseI64ArrayAttr({0, 1, 3, 2}));
  Value scores =
      MatmulOp::create(b, a.ops[1]->getLoc(), scoresType, a.query, keysT);
  // The ops between the product and the softmax, the mask left out.
  Value was = a.ops[1]->getResult(0);
  for (Operation *op : ArrayRef(a.ops).slice(2, a.ops.size() - 4)) {
    if (op != a.mask) {
      IRMapping map;
      map.map(was, scores);
      Operation *copy = b.clone(*op, map);
      copy->getResult(0).setType(scoresType);
      scores = copy->getResult(0);
    }
    was = op->getResult(0);
  }
  Value seen = visibleKeys(b, loc, offset, queries, capacity, a.causal);
  Value hidden = floats(b, loc, {}, {std::numeric_limits<float>::lowest()});
  scores = SelectOp::create(b, loc, scoresType, seen, scores, hidden);
  Operation *softmax = a.ops[a.ops.size() - 2];
  Value p = SoftmaxOp::create(b, softmax->getLoc(), scoresType, scores,
                              b.getI64IntegerAttr(3));
  return MatmulOp::create(b, loc, last->getResult(0).getType(), p, values);
}
