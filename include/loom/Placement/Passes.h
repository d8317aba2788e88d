//===- Passes.h - Backend placement as a pass -------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLACEMENT_PASSES_H
#define LOOM_PLACEMENT_PASSES_H

#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::placement {

#define GEN_PASS_DECL
#include "loom/Placement/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Placement/Passes.h.inc"

} // namespace loom::placement

#endif // LOOM_PLACEMENT_PASSES_H
