//===- CompileTimeEval.h - Computing tg ops at compile time -----*- C++ -*-===//
//
// Part of Loom. The one way a pass computes a tg op's value at compile time
// (--tg-fold-weights, and any pass that folds an op on known operands):
// the op's EvaluableOpInterface, in the domain interp::foldDomainFor picks
// from its element types, on values each held exactly as its element type
// holds it. The contract (docs/Interpreter.md, "Compile-time evaluation"):
// a fold never changes a result the unfolded program would give.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_UTILS_COMPILETIMEEVAL_H
#define LOOM_DIALECT_TG_UTILS_COMPILETIMEEVAL_H

#include "loom/Interpreter/Precision.h"
#include "loom/Interpreter/Tensor.h"

#include "mlir/IR/Operation.h"

#include <memory>
#include <optional>
#include <vector>

namespace loom::tg {

/// A tensor known at compile time: each element the double that its
/// element type holds (interp::roundToElemKind), so f32, f16, bf16 and
/// integer values below 2^53 are exact, whatever domain computed them.
using KnownTensor = interp::Tensor<interp::F64Domain>;
using KnownTensorPtr = std::shared_ptr<const KnownTensor>;

/// The domain in which compile time computes \p op: interp::foldDomainFor
/// over the element types of its operands and results (tg.cast only
/// converts). nullopt when one of them is not a tg element type.
std::optional<interp::FoldDomain> foldDomainOf(mlir::Operation *op);

/// \p op's results on \p operands (one per operand, in order), computed by
/// its EvaluableOpInterface in foldDomainOf(op), each rounded to its
/// result's element type. Failure (diagnosed at \p op): an operand or result
/// type that is not a tg tensor type, an op without the interface, or an
/// evaluation the op refuses (it diagnoses).
mlir::FailureOr<std::vector<KnownTensorPtr>>
evaluateAtCompileTime(mlir::Operation &op,
                      llvm::ArrayRef<const KnownTensor *> operands);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_UTILS_COMPILETIMEEVAL_H
