//===- Passes.h - Conversion passes -----------------------------*- C++ -*-===//
//
// Part of Loom. The passes of Passes.td: `createConvertTGToLinalg()`, ...,
// and registerConversionPasses() for tools.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_PASSES_H
#define LOOM_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom {

#define GEN_PASS_DECL
#include "loom/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Conversion/Passes.h.inc"

} // namespace loom

#endif // LOOM_CONVERSION_PASSES_H
