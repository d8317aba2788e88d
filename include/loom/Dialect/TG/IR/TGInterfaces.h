//===- TGInterfaces.h - The facts every tg op provides ----------*- C++ -*-===//
//
// Part of Loom. See TGInterfaces.td.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGINTERFACES_H
#define LOOM_DIALECT_TG_IR_TGINTERFACES_H

#include "loom/Dialect/TG/IR/ONNXEmitter.h"
#include "loom/Interpreter/EvalFrame.h"

#include "mlir/IR/OpDefinition.h"

namespace loom::tg {

/// What one op does: floating-point operations (a multiply-add counts 2)
/// and bytes read and written, assuming every operand is read once and
/// every result written once. `kernel` is false for ops that launch no
/// kernel (constants, weights, reshapes: metadata only).
struct OpWork {
  double flops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
  bool kernel = true;
  double bytes() const { return bytesRead + bytesWritten; }
};

/// FLOPs charged per element for exp/log/tanh/erf-based functions.
constexpr double kTranscendentalFlops = 8;

/// The work of \p op when it reads every operand and writes every result
/// once and does \p flopsPerResultElement per result element.
OpWork streamingWork(mlir::Operation *op, double flopsPerResultElement);
/// No kernel, no bytes (constants, weights, reshape, split).
OpWork metadataWork();

} // namespace loom::tg

#include "loom/Dialect/TG/IR/TGInterfaces.h.inc"

#endif // LOOM_DIALECT_TG_IR_TGINTERFACES_H
