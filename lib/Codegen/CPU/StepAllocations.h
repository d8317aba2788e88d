//===- StepAllocations.h - One allocation for all steps of a loop -*- C++ -*-===//
//
// Part of Loom. Shared by the passes that make a kernel's loops
// (loom-forall-to-range, loom-team-kernels).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_CPU_STEPALLOCATIONS_H
#define LOOM_LIB_CODEGEN_CPU_STEPALLOCATIONS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace loom::codegen::cpu {

/// Moves each allocation at the top level of \p loop's body whose
/// deallocations are in the body too (a temporary of one step) before the
/// loop, and those deallocations after it: one allocation for all steps.
/// Valid for any sequential loop: a step's temporary starts undefined and
/// is dead after its deallocation, so every step may reuse the same one.
inline void hoistStepAllocations(mlir::scf::ForOp loop) {
  for (auto alloc : llvm::make_early_inc_range(
           loop.getBody()->getOps<mlir::memref::AllocOp>())) {
    if (!alloc.getType().hasStaticShape() || !alloc->getOperands().empty())
      continue;
    llvm::SmallVector<mlir::Operation *> frees;
    bool local = true;
    for (mlir::Operation *user : alloc->getUsers())
      if (mlir::isa<mlir::memref::DeallocOp>(user)) {
        local &= user->getBlock() == loop.getBody();
        frees.push_back(user);
      }
    if (!local || frees.size() != 1)
      continue;
    alloc->moveBefore(loop);
    frees.front()->moveAfter(loop);
  }
}

} // namespace loom::codegen::cpu

#endif // LOOM_LIB_CODEGEN_CPU_STEPALLOCATIONS_H
