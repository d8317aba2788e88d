//===- Passes.h - tg transformation passes ----------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_TG_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::tg {

#define GEN_PASS_DECL
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/TG/Transforms/Passes.h.inc"

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_H
