//===- TiedArguments.h - Arguments a function updates in place -*- C++ -*-===//
//
// Part of Loom. A function argument with `tg.tied_result = J` is state the
// function updates: result J is the argument's new value, of the same type,
// and a compiled entry writes it into the argument's own memory (IREE's tied
// operands, JAX's donated buffers). A KV cache of fixed capacity is such an
// argument: a decode step appends to it with tg.update_slice and returns it.
// The tg dialect verifies the attribute on every function
// (TGDialect::verifyRegionArgAttribute); loom-compile writes the tie into
// the artifact (docs/Artifact.md "State updated in place") and the runtime
// keeps such state between calls (docs/Runtime.md "State"). Interpreted, a
// tied function is an ordinary one: the result is a new value.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TIEDARGUMENTS_H
#define LOOM_DIALECT_TG_IR_TIEDARGUMENTS_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

namespace loom::tg {

constexpr llvm::StringLiteral kTiedResultAttr = "tg.tied_result";

/// The result argument \p i of \p fn is tied to, if any.
std::optional<unsigned> getTiedResult(mlir::FunctionOpInterface fn,
                                      unsigned i);
/// The argument tied to result \p j of \p fn, if any.
std::optional<unsigned> getTiedArgument(mlir::FunctionOpInterface fn,
                                        unsigned j);
/// Ties argument \p i of \p fn to result \p j.
void setTiedResult(mlir::FunctionOpInterface fn, unsigned i, unsigned j);
/// Checks the tie \p attr of argument \p i of \p op (a function): an i64
/// naming a result of the argument's type, which no other argument is tied
/// to and which has no bound (tg.bounded_dim). Diagnoses on \p op.
mlir::LogicalResult verifyTiedResult(mlir::Operation *op, unsigned i,
                                     mlir::Attribute attr);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TIEDARGUMENTS_H
