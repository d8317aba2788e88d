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

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace loom::tg {

/// Attaches the lowering models to the tg ops (when the dialect loads).
void registerTGToLinalgInterfaceModels(mlir::DialectRegistry &registry);

} // namespace loom::tg

#endif // LOOM_CONVERSION_TGTOLINALG_TGTOLINALG_H
