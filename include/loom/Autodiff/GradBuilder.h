//===- GradBuilder.h - tg ops for writing vector-Jacobian products -*- C++ -*-===//
//
// Part of Loom. The VJPs of lib/Autodiff (and of any op added later) are written with tg ops only, so a
// backward graph is ordinary tg. GradBuilder wraps an OpBuilder and a
// location with the few composite steps every family needs: scalars,
// zeros, the sum of a broadcast gradient back to an operand's shape,
// padding that may crop, and the two convolution adjoints.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_GRADBUILDER_H
#define LOOM_AUTODIFF_GRADBUILDER_H

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"

namespace loom::tg::autodiff {

using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
using VJP = llvm::FailureOr<llvm::SmallVector<Value>>;

class GradBuilder {
public:
  GradBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  static RankedTensorType typeOf(Value v) {
    return mlir::cast<RankedTensorType>(v.getType());
  }

  /// A rank-0 constant of `elementType`.
  Value scalar(double v, Type elementType);
  /// A rank-0 constant of `like`'s element type.
  Value scalarLike(double v, Value like) {
    return scalar(v, typeOf(like).getElementType());
  }
  /// A splat constant of `type`.
  Value splat(double v, RankedTensorType type);
  Value zerosLike(Value v) { return splat(0, typeOf(v)); }
  /// An i64 constant holding `values` with `shape`.
  Value indices(llvm::ArrayRef<int64_t> values, llvm::ArrayRef<int64_t> shape);

  Value add(Value a, Value c) { return AddOp::create(b, loc, a, c); }
  Value sub(Value a, Value c) { return SubOp::create(b, loc, a, c); }
  Value mul(Value a, Value c) { return MulOp::create(b, loc, a, c); }
  Value div(Value a, Value c) { return DivOp::create(b, loc, a, c); }
  Value neg(Value a) { return NegOp::create(b, loc, a); }
  Value scale(Value a, double s) { return mul(a, scalarLike(s, a)); }
  Value exp(Value a) { return ExpOp::create(b, loc, a); }
  Value log(Value a) { return LogOp::create(b, loc, a); }
  Value rsqrt(Value a) { return RsqrtOp::create(b, loc, a); }
  Value sqrt(Value a) { return SqrtOp::create(b, loc, a); }
  Value tanh(Value a) { return TanhOp::create(b, loc, a); }
  Value erf(Value a) { return ErfOp::create(b, loc, a); }
  Value sigmoid(Value a) { return SigmoidOp::create(b, loc, a); }
  Value pow(Value a, Value c) { return PowOp::create(b, loc, a, c); }
  Value matmul(Value a, Value c) { return MatmulOp::create(b, loc, a, c); }
  Value softmax(Value a, int64_t axis) {
    return SoftmaxOp::create(b, loc, a, axis);
  }

  /// `cond ? a : c` elementwise (numpy broadcasting).
  Value select(Value cond, Value a, Value c) {
    return SelectOp::create(b, loc, cond, a, c);
  }
  Value greater(Value a, Value c) { return GreaterOp::create(b, loc, a, c); }
  Value less(Value a, Value c) { return LessOp::create(b, loc, a, c); }
  Value greaterEqual(Value a, Value c) {
    return GreaterEqualOp::create(b, loc, a, c);
  }
  Value equal(Value a, Value c) { return EqualOp::create(b, loc, a, c); }
  /// `cond ? g : 0`.
  Value mask(Value cond, Value g) {
    return select(cond, g, scalarLike(0, g));
  }
  /// An i1 tensor as 0/1 of `elementType`.
  Value toFloat(Value cond, Type elementType);

  /// one_hot[..., k] = (labels[...] == k), as `elementType`, for k in
  /// [0, classes): shape labels.shape + [classes].
  Value oneHot(Value labels, int64_t classes, Type elementType);
  Value reshape(Value v, llvm::ArrayRef<int64_t> shape);
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm) {
    return TransposeOp::create(b, loc, v, perm);
  }
  Value broadcastTo(Value v, RankedTensorType type);
  Value reduceSum(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceSumOp::create(b, loc, v, axes, keepdims);
  }
  Value reduceMean(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceMeanOp::create(b, loc, v, axes, keepdims);
  }
  Value slice(Value v, llvm::ArrayRef<int64_t> starts,
              llvm::ArrayRef<int64_t> limits);
  /// Pads dimension i by low[i] / high[i] zeros; a negative amount crops.
  Value padOrCrop(Value v, llvm::ArrayRef<int64_t> low,
                  llvm::ArrayRef<int64_t> high);
  /// Puts `strides[i] - 1` zeros after every element of dimension i (the
  /// last element too), by reshaping to [.., n, 1, ..] and padding.
  Value interleaveZeros(Value v, llvm::ArrayRef<int64_t> strides);
  /// Reverses dimension `axis` (a gather with constant indices).
  Value reverse(Value v, int64_t axis);

  /// The gradient `g` of a value broadcast (numpy rules) from `target`'s
  /// shape, summed back to that shape.
  Value sumTo(Value g, RankedTensorType target);

  /// The convolution adjoints. `dz` is the gradient of the convolution's
  /// result before its activation.
  Value conv2dInputGrad(Value dz, Value filter, RankedTensorType inputType,
                        llvm::ArrayRef<int64_t> strides,
                        llvm::ArrayRef<int64_t> pads,
                        llvm::ArrayRef<int64_t> dilations, int64_t groups);
  Value conv2dFilterGrad(Value dz, Value input, RankedTensorType filterType,
                         llvm::ArrayRef<int64_t> strides,
                         llvm::ArrayRef<int64_t> pads,
                         llvm::ArrayRef<int64_t> dilations, int64_t groups);

  /// sum_i sum(values[i] * weights[i]) as a rank-0 tensor of `scalar`'s
  /// element type: the scalar whose gradient is the vector-Jacobian product
  /// with the cotangents `weights` (gradient checks, stage backwards, the
  /// pipeline executor's reference). Null when `values` is empty.
  Value weightedSum(ValueRange values, ValueRange weights,
                    RankedTensorType scalar);

  /// The gradient through a fused activation, from the activation's output.
  Value activationGrad(Activation activation, Value output, Value grad);

private:
  OpBuilder &b;
  Location loc;
};

/// Attachment of each family's models (one per file). A model is attached
/// only to an op that has none yet, so a test can plant a faulty one first.
void attachElementwiseGradients(mlir::MLIRContext *context);
void attachLinearGradients(mlir::MLIRContext *context);
void attachMovementGradients(mlir::MLIRContext *context);
void attachReductionGradients(mlir::MLIRContext *context);

/// The external model of one op: `vjp(op, g, resultGrads, needed)`.
template <class OpT, VJP (*Fn)(OpT, GradBuilder &, ValueRange,
                               llvm::ArrayRef<bool>)>
struct GradientModel
    : GradientOpInterface::ExternalModel<GradientModel<OpT, Fn>, OpT> {
  VJP buildVJP(mlir::Operation *op, OpBuilder &b, ValueRange resultGrads,
               llvm::ArrayRef<bool> needed) const {
    GradBuilder g(b, op->getLoc());
    return Fn(mlir::cast<OpT>(op), g, resultGrads, needed);
  }
};

template <class OpT, VJP (*Fn)(OpT, GradBuilder &, ValueRange,
                               llvm::ArrayRef<bool>)>
void attachGradient(mlir::MLIRContext *context) {
  auto name = mlir::RegisteredOperationName::lookup(OpT::getOperationName(),
                                                    context);
  if (name && name->template hasInterface<GradientOpInterface>())
    return;
  OpT::template attachInterface<GradientModel<OpT, Fn>>(*context);
}

/// One result per operand, all null: the start of a VJP.
inline llvm::SmallVector<Value> noGradients(mlir::Operation *op) {
  return llvm::SmallVector<Value>(op->getNumOperands(), Value());
}

} // namespace loom::tg::autodiff

#endif // LOOM_AUTODIFF_GRADBUILDER_H
