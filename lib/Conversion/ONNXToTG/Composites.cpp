//===- Composites.cpp - Hardmax, CumSum, OneHot, IsNaN, IsInf -------------===//
//
// Part of Loom. ONNX operators that tg spells with a few of its ops:
//
// - Hardmax: 1 where the index of the first largest element along the axis
//   is (extremeIndex, shared with ArgMax), 0 elsewhere; before opset 13
//   along the input flattened to 2-D at the axis;
// - CumSum: a product with a triangular matrix of ones along the axis
//   (upper for the running sum, strictly upper when exclusive, lower when
//   reversed), integers through f64 (exact below 2^53); axes longer than
//   kMaxCumSumExtent are refused (the matrix has extent^2 elements);
// - OneHot: a comparison of the (wrapped) indices with 0..depth-1, choosing
//   between the on and off values;
// - IsNaN: x != x; IsInf: x == +inf or x == -inf, as the attributes ask.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

namespace {

constexpr int64_t kMaxCumSumExtent = 4096;

/// The permutation moving `axis` to the end, and its inverse.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>> axisLast(int64_t rank,
                                                               int64_t axis) {
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return {perm, inverse};
}

LogicalResult importHardmax(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  if (rank == 0)
    return ctx.fail("input must have rank at least 1");
  bool flatten = ctx.opset() < 13;
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", flatten ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Value v = *x;
  int64_t along = *axis;
  if (flatten) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= shape[d];
    auto flat = ctx.reshape(v, {outer, inner});
    if (failed(flat))
      return failure();
    v = *flat;
    along = 1;
  }
  auto vType = cast<RankedTensorType>(v.getType());
  int64_t extent = vType.getDimSize(along);
  if (extent < 1)
    return ctx.fail("the axis is empty");
  auto first = extremeIndex(ctx, v, along, /*isMax=*/true, /*last=*/false);
  if (failed(first))
    return failure();
  Type wideType = cast<RankedTensorType>(first->getType()).getElementType();
  HostTensor iota;
  iota.dataType = wideType.isF32() ? TP::FLOAT : TP::DOUBLE;
  iota.shape.assign(vType.getRank(), 1);
  iota.shape[along] = extent;
  for (int64_t k = 0; k < extent; ++k)
    iota.floats.push_back(double(k));
  auto positions = ctx.materialize(iota, "hardmax_positions");
  if (failed(positions))
    return failure();
  OpChain b{ctx, vType.getElementType()};
  auto y = b.select(ctx.create<tg::EqualOp>({*positions, *first}), b.c(1),
                    b.c(0));
  if (failed(y))
    return failure();
  auto out = ctx.reshape(*y, shape);
  if (failed(out))
    return failure();
  ctx.setOutput(0, *out);
  return success();
}

LogicalResult importCumSum(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  if (rank == 0)
    return ctx.fail("input must have rank at least 1");
  auto axisValue = ctx.constantInts(1, "axis");
  if (failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return ctx.fail("axis must have one element");
  auto axis = ctx.normalizeAxis(axisValue->front(), rank);
  if (failed(axis))
    return failure();
  int64_t n = shape[*axis];
  if (n > kMaxCumSumExtent)
    return ctx.fail("a cumulative sum along an axis of " + Twine(n) +
                    " elements is not supported (at most " +
                    Twine(kMaxCumSumExtent) +
                    ": it is a product with an n x n triangular matrix)");
  bool exclusive = ctx.getInt("exclusive", 0) != 0;
  bool reverse = ctx.getInt("reverse", 0) != 0;
  Type e = cast<RankedTensorType>(x->getType()).getElementType();
  Type f = isa<FloatType>(e) ? e : Float64Type::get(ctx.context());
  // y[j] = sum over i of x[i] * t[i][j].
  HostTensor t;
  t.dataType = isa<FloatType>(e) ? ctx.inputDataType(0) : TP::DOUBLE;
  t.shape = {n, n};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      t.floats.push_back(reverse ? (exclusive ? i > j : i >= j)
                                 : (exclusive ? i < j : i <= j));
  auto triangle = ctx.materialize(t, "cumsum_triangle");
  if (failed(triangle))
    return failure();
  auto [perm, inverse] = axisLast(rank, *axis);
  FailureOr<Value> v = *x;
  if (*axis != rank - 1)
    v = ctx.transpose(*v, perm);
  if (failed(v))
    return failure();
  SmallVector<int64_t> moved(cast<RankedTensorType>(v->getType()).getShape());
  int64_t rows = n == 0 ? 0 : onnxutil::numElementsOf(shape) / n;
  OpChain b{ctx, f};
  auto flat = ctx.reshape(*v, {rows, n});
  if (failed(flat))
    return failure();
  auto wide = b.cast(*flat, f);
  if (failed(wide))
    return failure();
  auto sums = ctx.create<tg::MatmulOp>({*wide, *triangle});
  if (failed(sums))
    return failure();
  auto back = ctx.reshape(*sums, moved);
  if (succeeded(back) && *axis != rank - 1)
    back = ctx.transpose(*back, inverse);
  auto y = b.cast(back, e);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importOneHot(NodeContext &ctx) {
  auto indices = ctx.input(0);
  if (failed(indices))
    return failure();
  auto depthValue = ctx.constantDoubles(1, "depth");
  if (failed(depthValue))
    return failure();
  if (depthValue->size() != 1 || (*depthValue)[0] < 1)
    return ctx.fail("depth must be one positive number");
  int64_t depth = static_cast<int64_t>((*depthValue)[0]);
  if (failed(ctx.requireKnown(2, "values")))
    return failure();
  const HostTensor *values = ctx.known(2);
  if (values->numElements() != 2)
    return ctx.fail("values must hold [off, on]");
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank + 1);
  if (failed(axis))
    return failure();
  Type f64 = Float64Type::get(ctx.context());
  OpChain w{ctx, f64};
  // Negative indices count from depth; others out of [0, depth) match none.
  auto idx = w.cast(*indices, f64);
  auto wrapped = w.select(ctx.create<tg::LessOp>({*idx, w.c(0)}),
                          w.bin<tg::AddOp>(idx, w.c(double(depth))), idx);
  SmallVector<int64_t> unsq(shape);
  unsq.insert(unsq.begin() + *axis, 1);
  if (failed(wrapped))
    return failure();
  auto column = ctx.reshape(*wrapped, unsq);
  HostTensor iota;
  iota.dataType = TP::DOUBLE;
  iota.shape.assign(rank + 1, 1);
  iota.shape[*axis] = depth;
  for (int64_t k = 0; k < depth; ++k)
    iota.floats.push_back(double(k));
  auto positions = ctx.materialize(iota, "onehot_positions");
  if (failed(column) || failed(positions))
    return failure();
  Type e = onnxutil::getTGElementType(ctx.context(), values->dataType);
  if (!e)
    return ctx.fail("element type " +
                    onnxutil::dataTypeName(values->dataType) +
                    " is not supported");
  OpChain b{ctx, e};
  auto y = b.select(ctx.create<tg::EqualOp>({*column, *positions}),
                    b.c(values->asDouble(1)), b.c(values->asDouble(0)));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// IsNaN, or IsInf (the infinities its attributes detect).
LogicalResult importIsSpecial(NodeContext &ctx, bool nan) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Type e = cast<RankedTensorType>(x->getType()).getElementType();
  OpChain b{ctx, e};
  OpChain flag{ctx, ctx.builder().getI1Type()};
  if (nan) {
    auto y = flag.select(ctx.create<tg::EqualOp>({*x, *x}), flag.c(0),
                         flag.c(1));
    if (failed(y))
      return failure();
    ctx.setOutput(0, *y);
    return success();
  }
  double inf = std::numeric_limits<double>::infinity();
  FailureOr<Value> y = ctx.splat(
      RankedTensorType::get(ctx.inputShape(0), ctx.builder().getI1Type()), 0);
  if (ctx.getInt("detect_positive", 1))
    y = flag.select(ctx.create<tg::EqualOp>({*x, b.c(inf)}), flag.c(1), y);
  if (ctx.getInt("detect_negative", 1))
    y = flag.select(ctx.create<tg::EqualOp>({*x, b.c(-inf)}), flag.c(1), y);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populateCompositeHandlers(HandlerTable &table) {
  table["Hardmax"] = importHardmax;
  table["CumSum"] = importCumSum;
  table["OneHot"] = importOneHot;
  table["IsNaN"] = [](NodeContext &c) { return importIsSpecial(c, true); };
  table["IsInf"] = [](NodeContext &c) { return importIsSpecial(c, false); };
}
