//===- Reductions.cpp - Lowering of reductions and normalisations ---------===//
//
// Part of Loom. Reductions are linalg.generic ops with reduction iterators
// into keepdims shapes (reshaped when keepdims is false); softmax,
// layer normalisation and global average pooling are reductions and
// elementwise generics in the interpreter's order of operations, and so are
// the losses softmax_cross_entropy and mse_loss (into rank-0 results);
// batchnorm is one elementwise generic over per-channel parameters.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "loom/Conversion/TGToLinalg/TGToLinalg.h"

#include <limits>

using namespace mlir;
using namespace loom;
namespace lowering = loom::tg::lowering;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

using D = LinalgDomain;

Value addF(OpBuilder &b, Location loc, Value acc, Value x) {
  return arith::AddFOp::create(b, loc, acc, x);
}
Value maxF(OpBuilder &b, Location loc, Value acc, Value x) {
  return arith::MaximumFOp::create(b, loc, acc, x);
}

SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a < 0 ? a + rank : a);
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t countOf(RankedTensorType type, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= type.getDimSize(a);
  return n;
}

/// \p v / \p n elementwise (a mean from a sum).
Value divideBy(OpBuilder &b, Location loc, Value v, double n) {
  return elementwise(b, loc, cast<RankedTensorType>(v.getType()), {v},
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       D::Scope scope(nb, nl, args[0].getType());
                       return D::div(args[0], D::fromDouble(n));
                     });
}

/// sum (or max) over \p axes, divided by the count for a mean, in the
/// result type of \p op (keepdims or not).
template <class OpT>
Lowered lowerReduce(OpT op, OpBuilder &b, bool max, bool mean) {
  Location loc = op.getLoc();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  SmallVector<int64_t> axes = normalizedAxes(op.getAxes(), inType.getRank());
  Value r = max ? reduceKeepDims(b, loc, op.getInput(), axes,
                                 -std::numeric_limits<double>::infinity(), maxF)
                : reduceKeepDims(b, loc, op.getInput(), axes, 0.0, addF);
  if (mean)
    r = divideBy(b, loc, r, double(countOf(inType, axes)));
  return SmallVector<Value>{
      reshapeTo(b, loc, r, cast<RankedTensorType>(op.getType()))};
}

Lowered lowerReduceSum(ReduceSumOp op, OpBuilder &b) {
  return lowerReduce(op, b, false, false);
}
Lowered lowerReduceMean(ReduceMeanOp op, OpBuilder &b) {
  return lowerReduce(op, b, false, true);
}
Lowered lowerReduceMax(ReduceMaxOp op, OpBuilder &b) {
  return lowerReduce(op, b, true, false);
}

Lowered lowerGlobalAvgPool(GlobalAvgPoolOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  SmallVector<int64_t> spatial =
      llvm::to_vector(llvm::seq<int64_t>(2, inType.getRank()));
  Value r = reduceKeepDims(b, loc, op.getInput(), spatial, 0.0, addF);
  return SmallVector<Value>{
      divideBy(b, loc, r, double(countOf(inType, spatial)))};
}

/// exp(x - max) from an element and its row's max.
Value shiftedExp(OpBuilder &nb, Location nl, ValueRange args) {
  D::Scope scope(nb, nl, args[0].getType());
  return D::exp(D::sub(args[0], args[1]));
}

/// The row statistics of softmax along \p axes: the max m, the
/// exponentials e = exp(x - m) (an elementwise result of x's shape) and
/// their sum, reductions into the kept dimensions.
struct SoftmaxStats {
  Value max, exps, sum;
};

SoftmaxStats softmaxStats(OpBuilder &b, Location loc, Value x,
                          ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(x.getType());
  Value m = reduceKept(b, loc, x, axes,
                       -std::numeric_limits<double>::infinity(), maxF);
  Value e = elementwiseWithStats(b, loc, type, {x}, {m}, axes, shiftedExp);
  return {m, e, reduceKept(b, loc, e, axes, 0.0, addF)};
}

int64_t softmaxAxis(SoftmaxOp op) {
  int64_t axis = int64_t(op.getAxis()); // I64Attr reads back as uint64_t
  return axis < 0 ? axis + cast<RankedTensorType>(op.getType()).getRank()
                  : axis;
}

/// exp(x - max) * (1 / sum(exp(x - max))) along the axis; the row's max
/// and sum are reductions into the kept dimensions, read per element. The
/// exponential is recomputed in the output: elementwise fusion makes the
/// sum and the output one generic each (see
/// lowerSoftmaxStoringExponentials for the form that stores it).
Lowered lowerSoftmax(SoftmaxOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> axes = {softmaxAxis(op)};
  Value x = op.getInput();
  SoftmaxStats stats = softmaxStats(b, loc, x, axes);
  return SmallVector<Value>{elementwiseWithStats(
      b, loc, type, {x}, {stats.max, stats.sum}, axes,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        D::Scope scope(nb, nl, args[0].getType());
        return D::div(shiftedExp(nb, nl, args.take_front(2)), args[2]);
      })};
}

/// The row max m and sum s of exp(x - m) as in softmax, then one reduction
/// over the rows of log(s) - (x[n, labels[n]] - m), divided by N. The label
/// is clamped into [0, C) (the interpreter reports one outside): generated
/// code cannot report it, and the read stays inside the logits.
Lowered lowerSoftmaxCrossEntropy(SoftmaxCrossEntropyOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  Value x = op.getLogits();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  SoftmaxStats stats = softmaxStats(b, loc, x, {1});
  Value m = stats.max, s = stats.sum;
  auto outType = cast<RankedTensorType>(op.getType());
  AffineMap row = b.getMultiDimIdentityMap(1);
  SmallVector<AffineMap> maps = {row, row, row,
                                 AffineMap::get(1, 0, {}, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{m, s, op.getLabels()},
      ValueRange{filled(b, loc, outType, 0.0)}, maps,
      {utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type it = args[2].getType();
        auto cst = [&](int64_t v) {
          return arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(it, v));
        };
        Value label = arith::MaxSIOp::create(
            nb, nl, cst(0),
            arith::MinSIOp::create(nb, nl, args[2], cst(c - 1)));
        Value at = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), label);
        Value picked = tensor::ExtractOp::create(
            nb, nl, x, ValueRange{linalg::IndexOp::create(nb, nl, 0), at});
        D::Scope scope(nb, nl, args[0].getType());
        linalg::YieldOp::create(
            nb, nl,
            D::add(args[3], D::sub(D::log(args[1]), D::sub(picked, args[0]))));
      });
  return SmallVector<Value>{divideBy(b, loc, generic.getResult(0), double(n))};
}

/// The sum over every dimension of (lhs - rhs)^2, divided by the count.
Lowered lowerMseLoss(MseLossOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getLhs().getType());
  Value sq = elementwise(b, loc, type, {op.getLhs(), op.getRhs()},
                         [&](OpBuilder &nb, Location nl, ValueRange args) {
                           D::Scope scope(nb, nl, args[0].getType());
                           Value d = D::sub(args[0], args[1]);
                           return D::mul(d, d);
                         });
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  Value sum = reduceKept(b, loc, sq, axes, 0.0, addF);
  return SmallVector<Value>{
      divideBy(b, loc, sum, double(type.getNumElements()))};
}

/// (x - mean) * (1 / sqrt(var + eps)) * scale + bias over x.shape[axis:];
/// mean and variance are reductions into the kept dimensions.
Lowered lowerLayerNorm(LayerNormOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  int64_t axis = int64_t(op.getAxis()); // I64Attr reads back as uint64_t
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  double n = double(countOf(type, axes));
  double eps = op.getEpsilon().convertToDouble();
  Value x = op.getInput();
  Value mean = divideBy(b, loc, reduceKept(b, loc, x, axes, 0.0, addF), n);
  auto deviation = [&](OpBuilder &nb, Location nl, ValueRange args) {
    D::Scope scope(nb, nl, args[0].getType());
    return D::sub(args[0], args[1]);
  };
  Value sq = elementwiseWithStats(
      b, loc, type, {x}, {mean}, axes,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value dev = deviation(nb, nl, args);
        D::Scope scope(nb, nl, args[0].getType());
        return D::mul(dev, dev);
      });
  Value sqSum = reduceKept(b, loc, sq, axes, 0.0, addF);
  Value inv = elementwise(
      b, loc, cast<RankedTensorType>(sqSum.getType()), {sqSum},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        D::Scope scope(nb, nl, args[0].getType());
        Value var = D::div(args[0], D::fromDouble(n));
        return D::div(D::one(), D::sqrt(D::add(var, D::fromDouble(eps))));
      });
  return SmallVector<Value>{elementwiseWithStats(
      b, loc, type, {x, op.getScale(), op.getBias()}, {mean, inv}, axes,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value dev = deviation(nb, nl, {args[0], args[3]});
        D::Scope scope(nb, nl, args[0].getType());
        return D::add(D::mul(D::mul(dev, args[4]), args[1]), args[2]);
      })};
}

/// (x - mean) * (scale / sqrt(var + eps)) + bias per channel (dimension
/// 1): the factor depends on the channel only, so LLVM hoists it out of the
/// loop along a row and each element costs a subtraction and a multiply-add,
/// not a division (DenseNet-121's 62 pre-activation batch norms, which fold
/// into no convolution). The interpreter divides first: the results differ
/// by rounding.
Lowered lowerBatchNorm(BatchNormOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  // [C] -> [C, 1, ..., 1] so that it broadcasts over dimension 1.
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = type.getDimSize(1);
  auto paramType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<Value> inputs = {op.getInput()};
  for (Value p : {op.getMean(), op.getVariance(), op.getScale(), op.getBias()})
    inputs.push_back(reshapeTo(b, loc, p, paramType));
  double eps = op.getEpsilon().convertToDouble();
  return SmallVector<Value>{elementwise(
      b, loc, type, inputs, [&](OpBuilder &nb, Location nl, ValueRange args) {
        D::Scope scope(nb, nl, args[0].getType());
        Value stddev = D::sqrt(D::add(args[2], D::fromDouble(eps)));
        return D::add(
            D::mul(D::sub(args[0], args[1]), D::div(args[3], stddev)),
            args[4]);
      })};
}

} // namespace

void lowering::attachReductionModels(MLIRContext *context) {
  attach<ReduceSumOp, lowerReduceSum>(context);
  attach<ReduceMeanOp, lowerReduceMean>(context);
  attach<ReduceMaxOp, lowerReduceMax>(context);
  attach<GlobalAvgPoolOp, lowerGlobalAvgPool>(context);
  attach<SoftmaxOp, lowerSoftmax>(context);
  attach<SoftmaxCrossEntropyOp, lowerSoftmaxCrossEntropy>(context);
  attach<MseLossOp, lowerMseLoss>(context);
  attach<LayerNormOp, lowerLayerNorm>(context);
  attach<BatchNormOp, lowerBatchNorm>(context);
}

/// e * (1 / sum(e)) along the axis with e = exp(x - max) computed once:
/// the sum and the output both read e, so linalg's elementwise fusion
/// (which fuses a producer of one use) leaves it one result the kernel
/// stores instead of each consumer recomputing the exponential. The
/// reciprocal depends on the row alone (hoisted out of the row's loop):
/// one division a row, a multiplication an element.
Lowered loom::tg::lowerSoftmaxStoringExponentials(SoftmaxOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> axes = {softmaxAxis(op)};
  SoftmaxStats stats = softmaxStats(b, loc, op.getInput(), axes);
  return SmallVector<Value>{
      elementwiseWithStats(b, loc, type, {stats.exps}, {stats.sum}, axes,
                           [&](OpBuilder &nb, Location nl, ValueRange args) {
                             D::Scope scope(nb, nl, args[0].getType());
                             return D::mul(args[0], D::div(D::one(), args[1]));
                           })};
}
