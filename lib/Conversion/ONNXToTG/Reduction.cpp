//===- Reduction.cpp - ONNX reductions to tg ------------------------------===//
//
// Part of Loom. ReduceSum, ReduceMean and ReduceMax map onto tg; ReduceMin,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp are
// short decompositions around them (as the ONNX reference computes them).
// Axes come from the attribute (older opsets) or from the second input
// (ReduceSum since opset 13, all of them since 18), which must be known at
// import time; no axes means all of them unless noop_with_empty_axes.
// ReduceProd, which tg has no op for, multiplies halves: per reduced axis,
// the first half of the extent times the second (an odd extent's last slice
// carried along), until one slice is left. Every reduction of values known
// at import time is evaluated by the importer. ArgMax and ArgMin select
// among the indices where the values equal their extreme. Integer inputs
// go through f64 (exact below 2^53), but for ReduceLogSum and
// ReduceLogSumExp.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

enum class Reduce {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp
};

/// Evaluates the reduction on a known tensor.
HostTensor foldReduce(Reduce kind, const HostTensor &t,
                      llvm::ArrayRef<int64_t> axes, bool keepDims) {
  int64_t rank = t.shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes)
    reduced[a] = true;
  std::vector<int64_t> kept = t.shape;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      kept[d] = 1;
  int64_t outN = onnxutil::numElementsOf(kept);
  double init = kind == Reduce::Max    ? -INFINITY
                : kind == Reduce::Min  ? INFINITY
                : kind == Reduce::Prod ? 1
                                       : 0;
  std::vector<double> acc(outN, init);
  std::vector<int64_t> iacc(outN, kind == Reduce::Prod ? 1 : 0);
  std::vector<int64_t> count(outN, 0);
  std::vector<int64_t> idx(rank, 0);
  bool intMath = !t.isFloat();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      o = o * kept[d] + (reduced[d] ? 0 : idx[d]);
    double v = t.asDouble(i);
    ++count[o];
    switch (kind) {
    case Reduce::Sum:
    case Reduce::Mean:
    case Reduce::LogSum:
      acc[o] += v;
      iacc[o] += intMath ? t.ints[i] : 0;
      break;
    case Reduce::Max:
      acc[o] = std::isnan(v) ? v : std::max(acc[o], v);
      break;
    case Reduce::Min:
      acc[o] = std::isnan(v) ? v : std::min(acc[o], v);
      break;
    case Reduce::Prod:
      acc[o] *= v;
      iacc[o] *= intMath ? t.ints[i] : 1;
      break;
    case Reduce::SumSquare:
    case Reduce::L2:
      acc[o] += v * v;
      break;
    case Reduce::L1:
      acc[o] += std::fabs(v);
      break;
    case Reduce::LogSumExp:
      acc[o] += std::exp(v);
      break;
    }
    for (int64_t d = rank; d-- > 0;) {
      if (++idx[d] < t.shape[d])
        break;
      idx[d] = 0;
    }
  }
  HostTensor out;
  out.dataType = t.dataType;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d] || keepDims)
      out.shape.push_back(kept[d]);
  for (int64_t o = 0; o < outN; ++o) {
    double v = acc[o];
    if (kind == Reduce::Mean)
      v /= static_cast<double>(count[o]);
    else if (kind == Reduce::L2)
      v = std::sqrt(v);
    else if (kind == Reduce::LogSum || kind == Reduce::LogSumExp)
      v = std::log(v);
    if (out.isFloat())
      out.floats.push_back(v);
    else if (intMath && (kind == Reduce::Sum || kind == Reduce::Prod))
      out.ints.push_back(iacc[o]);
    else
      out.ints.push_back(static_cast<int64_t>(v));
  }
  onnxutil::roundToDataType(out);
  return out;
}

/// The product of \p x over \p axes, by halving each axis: the first half
/// of the extent times the second, an odd extent's last slice concatenated
/// to the product, until one slice is left (about 2 log2(extent) ops).
FailureOr<Value> productOver(NodeContext &ctx, Value x,
                             ArrayRef<int64_t> axes, bool keepDims) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> kept(type.getShape()), dropped;
  bool empty = false;
  for (int64_t a : axes) {
    empty |= kept[a] == 0;
    kept[a] = 1;
  }
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      dropped.push_back(kept[d]);
  // An extent of 0 has the product 1.
  if (empty)
    x = ctx.splat(RankedTensorType::get(kept, type.getElementType()), 1.0);
  auto slice = [&](Value v, int64_t axis, int64_t from, int64_t to) {
    SmallVector<int64_t> limits(cast<RankedTensorType>(v.getType()).getShape());
    SmallVector<int64_t> starts(limits.size(), 0);
    starts[axis] = from;
    limits[axis] = to;
    return ctx.create<tg::SliceOp>(v, {ctx.arrayAttr("starts", starts),
                                       ctx.arrayAttr("limits", limits)});
  };
  for (int64_t axis : axes) {
    for (int64_t n = cast<RankedTensorType>(x.getType()).getDimSize(axis);
         n > 1; n = (n + 1) / 2) {
      int64_t half = n / 2;
      auto lo = slice(x, axis, 0, half), hi = slice(x, axis, half, 2 * half);
      if (failed(lo) || failed(hi))
        return failure();
      auto product = ctx.create<tg::MulOp>({*lo, *hi});
      if (failed(product))
        return failure();
      if (n % 2) {
        auto last = slice(x, axis, n - 1, n);
        if (failed(last))
          return failure();
        product = ctx.create<tg::ConcatOp>({*product, *last},
                                           {ctx.i64Attr("axis", axis)});
        if (failed(product))
          return failure();
      }
      x = *product;
    }
  }
  if (keepDims)
    return x;
  return ctx.reshape(x, dropped);
}

LogicalResult importReduce(NodeContext &ctx, Reduce kind) {
  int64_t rank = ctx.inputRank(0);
  // Axes: the input (when given) or the attribute.
  SmallVector<int64_t> axes;
  if (ctx.hasInput(1)) {
    auto given = ctx.constantInts(1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  } else if (auto attr = ctx.getInts("axes")) {
    axes = *attr;
  }
  bool keepDims = ctx.getInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (ctx.getInt("noop_with_empty_axes", 0)) {
      if (const HostTensor *t = ctx.constant(0)) {
        ctx.setOutput(0, *t);
        return success();
      }
      auto x = ctx.input(0);
      if (failed(x))
        return failure();
      ctx.setOutput(0, *x);
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  for (int64_t &a : axes) {
    auto n = ctx.normalizeAxis(a, rank, "reduction axis");
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return ctx.fail("reduction axes repeat");

  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, foldReduce(kind, *t, axes, keepDims));
    return success();
  }
  // Integer reductions (a count of a mask, PyTorch's `(x > 0).sum()`) go
  // through f64 as integer arithmetic does (exact below 2^53) and are cast
  // back, truncating as the fold does: a mean is the sum divided by the
  // count, truncated toward zero, and L2 the square root truncated.
  bool integer = !ctx.isFloatInput(0);
  if (integer && (kind == Reduce::LogSum || kind == Reduce::LogSumExp))
    return ctx.fail(onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    " ReduceLogSum and ReduceLogSumExp of values not known "
                    "at import time are not supported (a logarithm of "
                    "integers is no integer)");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Type elementType = cast<RankedTensorType>(x->getType()).getElementType();
  if (integer)
    x = ctx.convert(*x, Float64Type::get(ctx.context()));
  if (failed(x))
    return failure();
  // A scalar is reduced as a vector of one element (its sum of squares is
  // its square, its L1 norm its magnitude).
  if (rank == 0) {
    x = ctx.reshape(*x, {1});
    if (failed(x))
      return failure();
    axes = {0};
    keepDims = false;
  }
  auto un = [&](auto tag, FailureOr<Value> v) -> FailureOr<Value> {
    using OpT = decltype(tag);
    if (failed(v))
      return failure();
    return ctx.createTyped<OpT>(v->getType(), *v);
  };
  auto red = [&](auto tag, FailureOr<Value> v) -> FailureOr<Value> {
    using OpT = decltype(tag);
    if (failed(v))
      return failure();
    return ctx.create<OpT>(
        *v, {ctx.arrayAttr("axes", axes), ctx.boolAttr("keepdims", keepDims)});
  };
  auto square = [&](Value v) { return ctx.create<tg::MulOp>({v, v}); };
  FailureOr<Value> y = failure();
  switch (kind) {
  case Reduce::Sum:
    y = red(tg::ReduceSumOp(), *x);
    break;
  case Reduce::Mean:
    y = red(tg::ReduceMeanOp(), *x);
    break;
  case Reduce::Max:
    y = red(tg::ReduceMaxOp(), *x);
    break;
  case Reduce::Min:
    y = un(tg::NegOp(), red(tg::ReduceMaxOp(), un(tg::NegOp(), *x)));
    break;
  case Reduce::SumSquare:
    y = red(tg::ReduceSumOp(), square(*x));
    break;
  case Reduce::L1: {
    auto neg = un(tg::NegOp(), *x);
    if (failed(neg))
      return failure();
    y = red(tg::ReduceSumOp(), ctx.create<tg::MaxOp>({*x, *neg}));
    break;
  }
  case Reduce::L2:
    y = un(tg::SqrtOp(), red(tg::ReduceSumOp(), square(*x)));
    break;
  case Reduce::LogSum:
    y = un(tg::LogOp(), red(tg::ReduceSumOp(), *x));
    break;
  case Reduce::LogSumExp:
    y = un(tg::LogOp(), red(tg::ReduceSumOp(), un(tg::ExpOp(), *x)));
    break;
  case Reduce::Prod:
    y = productOver(ctx, *x, axes, keepDims);
    break;
  }
  if (failed(y))
    return failure();
  if (integer)
    y = ctx.convert(*y, elementType);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// ArgMax / ArgMin of a known tensor along `axis` (first or last of equal
/// extremes).
HostTensor foldArg(const HostTensor &t, int64_t axis, bool isMax, bool last,
                   bool keepDims) {
  int64_t rank = t.shape.size(), extent = t.shape[axis];
  int64_t inner = 1, outer = 1;
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= t.shape[d];
  for (int64_t d = 0; d < axis; ++d)
    outer *= t.shape[d];
  HostTensor out;
  out.dataType = onnx::TensorProto::INT64;
  out.shape = t.shape;
  if (keepDims)
    out.shape[axis] = 1;
  else
    out.shape.erase(out.shape.begin() + axis);
  auto at = [&](int64_t i) {
    return t.isFloat() ? t.floats[i] : static_cast<double>(t.ints[i]);
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < extent; ++k) {
        double v = at((o * extent + k) * inner + i);
        double b = at((o * extent + best) * inner + i);
        bool better = isMax ? v > b : v < b;
        if (better || (last && v == b))
          best = k;
      }
      out.ints.push_back(best);
    }
  return out;
}

/// ArgMax and ArgMin. On run-time values: the extreme along the axis
/// (ArgMin as the maximum of -x), the positions equal to it, and the least
/// (or, with select_last_index, the greatest) of their indices, as a
/// maximum over the indices where equal and -1 or -extent elsewhere. The
/// indices are exact in f32 up to 2^24 and computed in f64 beyond; integer
/// inputs are compared in f64.
} // namespace

FailureOr<Value> onnx_to_tg::extremeIndex(NodeContext &ctx, Value x,
                                          int64_t axis, bool isMax,
                                          bool last) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), extent = type.getDimSize(axis);
  OpChain b{ctx, type.getElementType()};
  FailureOr<Value> v = isMax ? FailureOr<Value>(x) : b.un<tg::NegOp>(x);
  auto best = b.reduce<tg::ReduceMaxOp>(v, {axis});
  auto equal = b.bin<tg::EqualOp>(v, best);

  HostTensor iota;
  iota.dataType = extent <= (int64_t(1) << 24) ? onnx::TensorProto::FLOAT
                                               : onnx::TensorProto::DOUBLE;
  iota.shape.assign(rank, 1);
  iota.shape[axis] = extent;
  // Last: the greatest index where equal. First: the greatest of -index.
  for (int64_t k = 0; k < extent; ++k)
    iota.floats.push_back(last ? double(k) : -double(k));
  auto indices = ctx.materialize(iota, "arg_indices");
  if (failed(indices))
    return failure();
  OpChain wide{ctx, cast<RankedTensorType>(indices->getType()).getElementType()};
  auto candidates = wide.select(equal, *indices,
                                wide.c(last ? -1.0 : -double(extent)));
  auto picked = wide.reduce<tg::ReduceMaxOp>(candidates, {axis});
  return last ? picked : wide.un<tg::NegOp>(picked);
}

namespace {

LogicalResult importArg(NodeContext &ctx, bool isMax) {
  if (ctx.numInputs() != 1 || !ctx.hasInput(0))
    return ctx.fail("needs one input");
  int64_t rank = ctx.inputRank(0);
  if (rank == 0)
    return ctx.fail("input must have rank at least 1");
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "axis");
  if (failed(axis))
    return failure();
  bool keepDims = ctx.getInt("keepdims", 1) != 0;
  bool last = ctx.getInt("select_last_index", 0) != 0;
  int64_t extent = ctx.inputShape(0)[*axis];
  if (extent < 1)
    return ctx.fail("the axis is empty");
  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, foldArg(*t, *axis, isMax, last, keepDims));
    return success();
  }
  // Integers (token ids: a CLIP text tower pools at `ids.argmax(-1)`) are
  // compared in f64, exact below 2^53 as the integer arithmetic is.
  auto x = ctx.input(0);
  if (succeeded(x) && !ctx.isFloatInput(0))
    x = ctx.convert(*x, ctx.builder().getF64Type());
  if (failed(x))
    return failure();
  auto picked = extremeIndex(ctx, *x, *axis, isMax, last);
  if (failed(picked))
    return failure();
  OpChain wide{ctx, cast<RankedTensorType>(picked->getType()).getElementType()};
  auto y = wide.cast(*picked, ctx.builder().getI64Type());
  if (succeeded(y) && !keepDims) {
    SmallVector<int64_t> shape(ctx.inputShape(0));
    shape.erase(shape.begin() + *axis);
    y = ctx.reshape(*y, shape);
  }
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populateReductionHandlers(HandlerTable &table) {
  table["ReduceSum"] = [](NodeContext &c) {
    return importReduce(c, Reduce::Sum);
  };
  table["ReduceMean"] = [](NodeContext &c) {
    return importReduce(c, Reduce::Mean);
  };
  table["ReduceMax"] = [](NodeContext &c) {
    return importReduce(c, Reduce::Max);
  };
  table["ReduceMin"] = [](NodeContext &c) {
    return importReduce(c, Reduce::Min);
  };
  table["ReduceProd"] = [](NodeContext &c) {
    return importReduce(c, Reduce::Prod);
  };
  table["ReduceSumSquare"] = [](NodeContext &c) {
    return importReduce(c, Reduce::SumSquare);
  };
  table["ReduceL1"] = [](NodeContext &c) {
    return importReduce(c, Reduce::L1);
  };
  table["ReduceL2"] = [](NodeContext &c) {
    return importReduce(c, Reduce::L2);
  };
  table["ReduceLogSum"] = [](NodeContext &c) {
    return importReduce(c, Reduce::LogSum);
  };
  table["ReduceLogSumExp"] = [](NodeContext &c) {
    return importReduce(c, Reduce::LogSumExp);
  };
  table["ArgMax"] = [](NodeContext &c) { return importArg(c, true); };
  table["ArgMin"] = [](NodeContext &c) { return importArg(c, false); };
}
