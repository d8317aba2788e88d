//===- OpFacts.h - Helpers shared by the facts of the tg ops ----*- C++ -*-===//
//
// Part of Loom. Private to lib/Dialect/TG/IR: the pieces that several op
// families use to implement TGInterfaces.td (and that the family classes of
// TGOps.td call from their generated definitions).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_TG_IR_OPFACTS_H
#define LOOM_LIB_DIALECT_TG_IR_OPFACTS_H

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Kernels.h"

#include <array>
#include <vector>

namespace loom::tg {

/// Evaluates an elementwise unary op with the interpreter kernel \p kind.
mlir::LogicalResult evaluateUnary(interp::EvalFrame &frame,
                                  interp::UnaryKind kind,
                                  interp::UnaryParams params = {});
/// Evaluates an elementwise binary op (numpy broadcasting).
mlir::LogicalResult evaluateBinary(interp::EvalFrame &frame,
                                   interp::BinaryKind kind);

/// Evaluates a comparison (numpy broadcasting, 1 or 0).
mlir::LogicalResult evaluateCompare(interp::EvalFrame &frame,
                                    interp::CompareKind kind);

/// The static shape of a tensor type.
inline std::vector<int64_t> shapeOf(mlir::Type type) {
  auto shape = mlir::cast<mlir::ShapedType>(type).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// Number of elements of a static tensor type (0 for anything else).
double numElementsOf(mlir::Type type);

/// An axis the verifier checked to be in [-rank, rank), in [0, rank).
inline int64_t axisOf(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// The work of the ops of \p block (nested regions included): the sum of
/// their works (tg.if's regions, tg.scan's step).
OpWork blockWork(mlir::Block &block);

/// The work of tg.attention and tg.shard_attention (q [B, Hq, Sq, D], k
/// [B, Hkv, Skv, D]): two products of Sq x Skv x D multiply-adds per query
/// head and an exp per score, at the capacity Skv (the static bound of the
/// live keys). AttentionOps.cpp.
OpWork attentionWork(mlir::Operation *op, mlir::RankedTensorType q,
                     mlir::RankedTensorType k);

} // namespace loom::tg

#endif // LOOM_LIB_DIALECT_TG_IR_OPFACTS_H
