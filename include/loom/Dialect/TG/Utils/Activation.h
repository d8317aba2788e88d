//===- Activation.h - tg.conv's fused activation as its own op --*- C++ -*-===//
//
// Part of Loom. Rewrites that split a convolution into several (a 3-D one
// into a sum of 2-D ones, one over a concatenation into one per operand)
// apply its fused `activation` once, to the sum, as a tg op of its own.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_UTILS_ACTIVATION_H
#define LOOM_DIALECT_TG_UTILS_ACTIVATION_H

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"

namespace loom::tg {

/// \p v with \p act applied: `v` itself for none, else a tg.relu,
/// tg.sigmoid or tg.tanh of it, built at \p b's insertion point.
mlir::Value applyActivation(mlir::OpBuilder &b, mlir::Location loc,
                            Activation act, mlir::Value v);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_UTILS_ACTIVATION_H
