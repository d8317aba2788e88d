//===- KernelOutlining.h - Fragments as kernel functions --------*- C++ -*-===//
//
// Part of Loom. The first step of code generation, the same for every
// target: each codegen step of a schedule becomes one `func.func` named
// after the step's kernel, holding its fragment's body on tg tensors. The
// target's kernel pipeline (include/loom/Target/Target.h) takes it from
// there; `loom-compile --dump-kernels=DIR` writes the module it gets.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_KERNELOUTLINING_H
#define LOOM_COMPILER_KERNELOUTLINING_H

#include "loom/Compiler/Schedule.h"

#include "mlir/IR/BuiltinOps.h"

namespace loom::compiler {

/// Builds a module with one function per codegen step of \p entry (its
/// fragment's body, named after the step's kernel), on tensors.
mlir::OwningOpRef<mlir::ModuleOp> outlineKernels(const EntrySchedule &entry,
                                                 mlir::MLIRContext *context);

} // namespace loom::compiler

#endif // LOOM_COMPILER_KERNELOUTLINING_H
