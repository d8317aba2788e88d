//===- LengthRanges.h - Integer ranges of run-time lengths ------*- C++ -*-===//
//
// Part of Loom. MLIR's integer range analysis over tg: the
// InferIntRangeInterface models of the ops that produce or combine lengths
// (external models, as the lowering and the gradients are), and the
// analysis that also joins what a tg.if's branches yield. --tg-check-bounds
// runs it (docs/Passes/TGPasses.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_LENGTHRANGES_H
#define LOOM_DIALECT_TG_TRANSFORMS_LENGTHRANGES_H

#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/IR/DialectRegistry.h"

namespace loom::tg {

/// Attaches InferIntRangeInterface to the tg ops that produce lengths
/// (the counts of tg.nonzero, tg.topk, tg.non_max_suppression), combine
/// them (tg.add, tg.sub, tg.mul, tg.min, tg.max, tg.select, the
/// comparisons, tg.cast, tg.reduce_sum) or move small integer tensors
/// (tg.constant, tg.reshape, tg.slice, tg.gather, tg.concat,
/// tg.transpose, tg.broadcast_to, tg.bound). The range of a float tensor is that of the
/// integers it holds exactly (the importer computes lengths in f64); an op
/// whose float result may not be such an integer gets no range.
void registerTGLengthRangeModels(mlir::DialectRegistry &registry);

/// IntegerRangeAnalysis, plus tg.if (not a RegionBranchOpInterface): each
/// result is the join of what the two branches yield.
class LengthRangeAnalysis : public mlir::dataflow::IntegerRangeAnalysis {
public:
  using IntegerRangeAnalysis::IntegerRangeAnalysis;

  mlir::LogicalResult visitOperation(
      mlir::Operation *op,
      llvm::ArrayRef<const mlir::dataflow::IntegerValueRangeLattice *> operands,
      llvm::ArrayRef<mlir::dataflow::IntegerValueRangeLattice *> results)
      override;
};

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_LENGTHRANGES_H
