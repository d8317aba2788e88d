//===- TypeInference.h - Shape rules of the tg operators --------*- C++ -*-===//
//
// Part of Loom. The shape and attribute rules of every `tg` operator, in one
// place (as StableHLO's TypeInference.cpp). Each function checks its inputs,
// emits a diagnostic at `location` when they are invalid, and otherwise
// appends the result type(s) to `inferred`. The ops' `inferReturnTypes` call
// these, so the verifier and every builder share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TYPEINFERENCE_H
#define LOOM_DIALECT_TG_IR_TYPEINFERENCE_H

#include "loom/Support/Shapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace loom::tg {

using mlir::LogicalResult;
using Loc = std::optional<mlir::Location>;
using Inferred = llvm::SmallVectorImpl<mlir::Type>;

/// The broadcast rule (loom/Support/Shapes.h), in this namespace too.
using loom::broadcastShapes;
using loom::isBroadcastableTo;

/// Maps `axis` in [-rank, rank) to [0, rank); emits an error otherwise.
mlir::FailureOr<int64_t> normalizeAxis(Loc location, int64_t axis,
                                       int64_t rank, llvm::StringRef what);

LogicalResult inferBroadcastBinary(Loc location, mlir::Type lhs, mlir::Type rhs,
                                   Inferred &inferred);
/// Comparisons: the broadcast shape of same-element-type operands, i1.
LogicalResult inferCompare(Loc location, mlir::Type lhs, mlir::Type rhs,
                           Inferred &inferred);
/// Select: `cond` (i1), `a` and `b` (one element type) broadcast together.
LogicalResult inferSelect(Loc location, mlir::Type cond, mlir::Type a,
                          mlir::Type b, Inferred &inferred);
LogicalResult inferMatmul(Loc location, mlir::Type lhs, mlir::Type rhs,
                          Inferred &inferred);
/// conv: channels-first input of rank 3 to 5 (1 to 3 spatial dimensions),
/// filter of the same rank, `strides` and `dilations` one entry per
/// spatial dimension, `pads` two (all begins, then all ends).
LogicalResult inferConv(Loc location, mlir::Type input, mlir::Type filter,
                        mlir::Type bias, llvm::ArrayRef<int64_t> strides,
                        llvm::ArrayRef<int64_t> pads,
                        llvm::ArrayRef<int64_t> dilations, int64_t groups,
                        Inferred &inferred);
/// maxpool, avgpool: the window attributes sized as conv's.
LogicalResult inferPool(Loc location, mlir::Type input,
                        llvm::ArrayRef<int64_t> kernelSize,
                        llvm::ArrayRef<int64_t> strides,
                        llvm::ArrayRef<int64_t> pads, Inferred &inferred);
/// maxpool_grad: `gradOutput` has maxpool's result type for `input` and
/// the window; the result has the input's type.
LogicalResult inferMaxPoolGrad(Loc location, mlir::Type input,
                                 mlir::Type gradOutput,
                                 llvm::ArrayRef<int64_t> kernelSize,
                                 llvm::ArrayRef<int64_t> strides,
                                 llvm::ArrayRef<int64_t> pads,
                                 Inferred &inferred);
/// softmax_cross_entropy: logits [N, C] (N, C >= 1), labels [N]; a rank-0
/// result of the logits' element type.
LogicalResult inferSoftmaxCrossEntropy(Loc location, mlir::Type logits,
                                       mlir::Type labels, Inferred &inferred);
/// mse_loss: operands of one non-empty type; a rank-0 result of its element
/// type.
LogicalResult inferMseLoss(Loc location, mlir::Type lhs, mlir::Type rhs,
                           Inferred &inferred);
LogicalResult inferGlobalAvgPool(Loc location, mlir::Type input,
                                 Inferred &inferred);
LogicalResult inferTranspose(Loc location, mlir::Type input,
                             llvm::ArrayRef<int64_t> perm, Inferred &inferred);
LogicalResult inferConcat(Loc location, mlir::TypeRange inputs, int64_t axis,
                          Inferred &inferred);
LogicalResult inferSplit(Loc location, mlir::Type input, int64_t axis,
                         llvm::ArrayRef<int64_t> sizes, Inferred &inferred);
LogicalResult inferSlice(Loc location, mlir::Type input,
                         llvm::ArrayRef<int64_t> starts,
                         llvm::ArrayRef<int64_t> limits,
                         std::optional<llvm::ArrayRef<int64_t>> strides,
                         Inferred &inferred);
LogicalResult inferPad(Loc location, mlir::Type input,
                       llvm::ArrayRef<int64_t> low,
                       llvm::ArrayRef<int64_t> high, Inferred &inferred);
LogicalResult inferEnlarge(Loc location, mlir::Type input,
                           llvm::ArrayRef<int64_t> kernelSize,
                           Inferred &inferred);
LogicalResult inferGather(Loc location, mlir::Type data, mlir::Type indices,
                          int64_t axis, Inferred &inferred);
/// scatter_add: `axis` in [-r, r) for the gathered data's rank
/// r = rank(updates) - rank(indices) + 1.
LogicalResult inferScatterAdd(Loc location, mlir::Type updates,
                              mlir::Type indices, int64_t axis,
                              int64_t dimSize, Inferred &inferred);
/// update_slice: `update` of `base`'s rank and element type, equal to it
/// except on `axis` (in [-r, r)), where it is at most as large; `offsets`
/// rank 0, or `[base.shape[0]]` for an axis past 0. The result is `base`'s
/// type.
LogicalResult inferUpdateSlice(Loc location, mlir::Type base,
                               mlir::Type update, mlir::Type offsets,
                               int64_t axis, Inferred &inferred);
LogicalResult inferResize(Loc location, mlir::Type input,
                          llvm::ArrayRef<int64_t> sizes,
                          std::optional<llvm::ArrayRef<double>> scales,
                          Inferred &inferred);
LogicalResult inferReduce(Loc location, mlir::Type input,
                          llvm::ArrayRef<int64_t> axes, bool keepDims,
                          Inferred &inferred);
LogicalResult inferSoftmax(Loc location, mlir::Type input, int64_t axis,
                           Inferred &inferred);
/// attention: q [B, Hq, Sq, D], k and v [B, Hkv, Skv, D] of q's element
/// type with Hq a multiple of Hkv, length (null: none) i64 [B] or rank 0,
/// a finite scale, causal only with Sq <= Skv; the result has q's type.
LogicalResult inferAttention(Loc location, mlir::Type q, mlir::Type k,
                             mlir::Type v, mlir::Type length, double scale,
                             bool causal, Inferred &inferred);
LogicalResult inferLayerNorm(Loc location, mlir::Type input, mlir::Type scale,
                             mlir::Type bias, int64_t axis, Inferred &inferred);
LogicalResult inferBatchNorm(Loc location, mlir::Type input, mlir::Type scale,
                             mlir::Type bias, mlir::Type mean,
                             mlir::Type variance, Inferred &inferred);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TYPEINFERENCE_H
