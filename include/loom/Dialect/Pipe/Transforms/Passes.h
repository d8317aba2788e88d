//===- Passes.h - pipe passes -----------------------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_H

#include "loom/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::pipe {

#define GEN_PASS_DECL
#include "loom/Dialect/Pipe/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Pipe/Transforms/Passes.h.inc"

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_H
