//===- BoundedResults.h - Function results of data-dependent length -*- C++ -*-===//
//
// Part of Loom. A function result padded to a static bound along one
// dimension names, in its result attributes, that dimension
// (`tg.bounded_dim`) and the result holding its run-time length
// (`tg.length_result`, a rank-0 i64 result). The ONNX importer writes them
// for graph outputs of data-dependent length; loom-run (on the
// interpreter) and loom-compile (into the artifact's `bound` of an output,
// docs/Artifact.md) read them. docs/ONNX/Import.md "Bounded dynamic
// shapes".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_BOUNDEDRESULTS_H
#define LOOM_DIALECT_TG_IR_BOUNDEDRESULTS_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

namespace loom::tg {

constexpr llvm::StringLiteral kBoundedDimAttr = "tg.bounded_dim";
constexpr llvm::StringLiteral kLengthResultAttr = "tg.length_result";

/// Which dimension of a result is padded and which result holds its length.
struct ResultBound {
  int64_t dim = 0;
  unsigned lengthResult = 0;
};

/// The bound of result \p i of \p fn, if it has one.
std::optional<ResultBound> getResultBound(mlir::FunctionOpInterface fn,
                                          unsigned i);
/// Records that result \p i of \p fn is padded as \p bound says.
void setResultBound(mlir::FunctionOpInterface fn, unsigned i,
                    ResultBound bound);
/// Checks every result bound of \p fn: the dimension exists, the length
/// result is another result, a rank-0 i64 tensor without a bound of its own,
/// and both attributes are given together. Diagnoses on \p fn.
mlir::LogicalResult verifyResultBounds(mlir::FunctionOpInterface fn);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_BOUNDEDRESULTS_H
