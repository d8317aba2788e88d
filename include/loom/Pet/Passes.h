//===- Passes.h - PET's partially equivalent transformations ----*- C++ -*-===//
//
// Part of Loom. --tg-pet (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PET_PASSES_H
#define LOOM_PET_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::pet {

#define GEN_PASS_DECL
#include "loom/Pet/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Pet/Passes.h.inc"

} // namespace loom::pet

#endif // LOOM_PET_PASSES_H
