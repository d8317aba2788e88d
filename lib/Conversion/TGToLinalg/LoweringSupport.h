//===- LoweringSupport.h - Building blocks of the tg lowering ---*- C++ -*-===//
//
// Part of Loom. Helpers shared by the lowering models (TGToLinalg.h):
// elementwise generics with numpy broadcasting, reductions, constants, and
// LinalgDomain, the number domain of ScalarFunctions.h whose values are SSA
// values of f32 built at an insertion point (so the generated code computes
// the interpreter's formulas, written once).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_TGTOLINALG_LOWERINGSUPPORT_H
#define LOOM_LIB_CONVERSION_TGTOLINALG_LOWERINGSUPPORT_H

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace loom::tg::lowering {

using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
using Lowered = llvm::FailureOr<llvm::SmallVector<Value>>;

/// A number domain (interp/Domain.h) over float SSA values: each primitive
/// builds an arith or math op at the current insertion point.
struct LinalgDomain {
  using T = Value;
  static thread_local OpBuilder *builder;
  static thread_local const Location *loc;
  /// The float type the primitives compute in: that of their constants.
  static thread_local Type element;

  /// Sets the insertion point and the float type of the primitives for its
  /// lifetime.
  struct Scope {
    OpBuilder *savedBuilder;
    const Location *savedLoc;
    Type savedElement;
    Scope(OpBuilder &b, const Location &l, Type elementType)
        : savedBuilder(builder), savedLoc(loc), savedElement(element) {
      builder = &b;
      loc = &l;
      element = elementType;
    }
    ~Scope() {
      builder = savedBuilder;
      loc = savedLoc;
      element = savedElement;
    }
  };

  static Value fromDouble(double v);
  static Value zero() { return fromDouble(0); }
  static Value one() { return fromDouble(1); }
  static Value fromInt(int64_t v) { return fromDouble(double(v)); }
  static Value add(Value a, Value b);
  static Value sub(Value a, Value b);
  static Value mul(Value a, Value b);
  static Value div(Value a, Value b);
  static Value neg(Value a);
  static Value max(Value a, Value b);
  static Value min(Value a, Value b);
  static Value exp(Value a);
  static Value log(Value a);
  static Value sqrt(Value a);
  static Value tanh(Value a);
  static Value erf(Value a);
  /// An f32 \p a rounded to TF32: `arith.truncf` to tf32 and `arith.extf`
  /// back, the pair the GPU's tiled classes read as a tensor core's operand
  /// format and loom-expand-tf32-roundings computes on the bits.
  static Value roundTF32(Value a);
  static Value pow(Value a, Value b);
  static Value fmod(Value a, Value b);
};

/// The scalar body of an elementwise generic: block arguments in, result out.
using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A linalg.generic computing `result[i] = fn(inputs[i]...)` where each
/// input broadcasts to \p resultType numpy-style (aligned right, size-1
/// dimensions stretched).
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ScalarFn fn);

/// As elementwise, with \p stats after \p inputs: tensors of the kept
/// dimensions of a reduction along \p axes (reduceKept's results), each
/// read at the element's kept coordinates (a row's mean, max or sum).
Value elementwiseWithStats(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ValueRange stats, llvm::ArrayRef<int64_t> axes,
                           ScalarFn fn);

/// A linalg.generic `out += lhs * rhs` over the loops of \p maps (lhs's,
/// rhs's, the result's) and \p iterators, into a zero-filled tensor of
/// \p type: the contractions of products, convolutions and attention, the
/// payload the GPU's matrix-product class matches (docs/Codegen/GPU.md).
/// Operands narrower than \p type's element type (f16 or bf16 into an f32
/// accumulator: accumulatorType) are extended in the payload.
Value multiplyAccumulate(OpBuilder &b, Location loc, RankedTensorType type,
                         Value lhs, Value rhs,
                         llvm::ArrayRef<mlir::AffineMap> maps,
                         llvm::ArrayRef<mlir::utils::IteratorType> iterators);
/// The type a product or convolution of result type \p type accumulates
/// in: f32 for f16 and bf16 results (docs/Precision.md: a narrow product
/// accumulates in f32 and is rounded once to its type), \p type otherwise.
RankedTensorType accumulatorType(RankedTensorType type);
/// \p value converted elementwise to the element type of \p type (the
/// interpreter's tg.cast: one rounding); \p value itself when it has it.
Value convertedTo(OpBuilder &b, Location loc, Value value,
                  RankedTensorType type);
/// The scalar of tg.cast: floats round to the target format, floats to
/// integers truncate toward zero, anything to i1 is `!= 0`.
Value castScalar(OpBuilder &b, Location loc, Value x, Type to);
/// An empty tensor of \p type filled with \p value.
Value filled(OpBuilder &b, Location loc, RankedTensorType type, double value);

/// Reduces \p input over \p axes (sorted, unique) into a tensor of the
/// input's shape with those dimensions of size 1 (keepdims), starting from
/// \p init and combining with \p combine(acc, x).
Value reduceKeepDims(OpBuilder &b, Location loc, Value input,
                     llvm::ArrayRef<int64_t> axes, double init,
                     llvm::function_ref<Value(OpBuilder &, Location, Value,
                                              Value)>
                         combine);

/// As reduceKeepDims, into the kept dimensions only (no size-1 ones): what
/// elementwiseWithStats reads without a reshape, so that tiling a
/// normalisation by rows fuses its reductions into each row.
Value reduceKept(OpBuilder &b, Location loc, Value input,
                 llvm::ArrayRef<int64_t> axes, double init,
                 llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>
                     combine);

/// A gather-style index (i32 or i64): negative ones count from the end of
/// an axis of size \p dim (Movement.cpp).
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t dim);

/// tg.scatter_add as a loop over the updates, each added at its index
/// (Dynamic.cpp): one visit per update, sequential (Movement.cpp's
/// lowerScatterAdd chooses it for large scatters).
Lowered lowerScatterAddLoop(ScatterAddOp op, OpBuilder &b);

/// \p value reshaped to \p type (same number of elements), through a
/// collapse to one dimension and an expansion.
Value reshapeTo(OpBuilder &b, Location loc, Value value, RankedTensorType type);

/// The f32 constant \p v.
Value f32(OpBuilder &b, Location loc, double v);

/// Attachment of each family's models (one per file).
void attachAttentionModels(mlir::MLIRContext *context);
void attachDynamicModels(mlir::MLIRContext *context);
void attachElementwiseModels(mlir::MLIRContext *context);
void attachLinearModels(mlir::MLIRContext *context);
void attachLoopModels(mlir::MLIRContext *context);
void attachMovementModels(mlir::MLIRContext *context);
void attachReductionModels(mlir::MLIRContext *context);

/// The external model of every op of a family: `lower(op, b)` does the work.
template <class OpT, Lowered (*Lower)(OpT, OpBuilder &)>
struct Model : LinalgLoweringOpInterface::ExternalModel<Model<OpT, Lower>, OpT> {
  Lowered lowerToLinalg(mlir::Operation *op, OpBuilder &b) const {
    return Lower(mlir::cast<OpT>(op), b);
  }
};

template <class OpT, Lowered (*Lower)(OpT, OpBuilder &)>
void attach(mlir::MLIRContext *context) {
  OpT::template attachInterface<Model<OpT, Lower>>(*context);
}

} // namespace loom::tg::lowering

#endif // LOOM_LIB_CONVERSION_TGTOLINALG_LOWERINGSUPPORT_H
