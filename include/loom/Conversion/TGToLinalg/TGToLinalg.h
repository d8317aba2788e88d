//===- TGToLinalg.h - How tg ops become linalg --------------------*- C++ -*-===//
//
// Part of Loom. The external models of tg::LinalgLoweringOpInterface: each
// tg op that generated code computes, as linalg/tensor/arith/math ops on
// tensors with the interpreter's semantics (the elementwise formulas are
// ScalarFunctions.h itself, instantiated over a domain that builds IR).
// docs/Compiler.md lists the strategy per op.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_TGTOLINALG_TGTOLINALG_H
#define LOOM_CONVERSION_TGTOLINALG_TGTOLINALG_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

namespace mlir {
class DialectRegistry;
class OpBuilder;
class Value;
} // namespace mlir

namespace loom::tg {

class SoftmaxOp;

/// Attaches the lowering models to the tg ops (when the dialect loads).
void registerTGToLinalgInterfaceModels(mlir::DialectRegistry &registry);

/// tg.softmax with each exponential computed once: exp(x - max) is one
/// result that the row's sum and the output e * (1 / sum) both read
/// (convert-tg-to-linalg's `softmax-stores-exponentials`, the CPU
/// pipeline's choice). The op's model recomputes the exponential in the
/// output instead, which keeps the sum and the output one fused generic
/// each (the GPU pipeline's launches).
llvm::FailureOr<llvm::SmallVector<mlir::Value>>
lowerSoftmaxStoringExponentials(SoftmaxOp op, mlir::OpBuilder &b);

} // namespace loom::tg

#endif // LOOM_CONVERSION_TGTOLINALG_TGTOLINALG_H
