//===- ViewBase.h - The buffer a memref view is of --------------*- C++ -*-===//
//
// Part of Loom. Shared by the passes that reason about which buffers a
// kernel's ops touch (loom-forall-to-range, loom-team-kernels).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_CPU_VIEWBASE_H
#define LOOM_LIB_CODEGEN_CPU_VIEWBASE_H

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace loom::codegen::cpu {

/// The memref \p v is a view of: a function argument or an allocation.
inline mlir::Value baseOf(mlir::Value v) {
  while (auto view = v.getDefiningOp<mlir::ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

} // namespace loom::codegen::cpu

#endif // LOOM_LIB_CODEGEN_CPU_VIEWBASE_H
