//===- RowReductions.h - Row reductions inside a launch ---------*- C++ -*-===//
//
// Part of Loom. What the row-reduction class (RowReductions.cpp) and the
// row-group class (RowGroups.cpp) share: a row reduction's match, the
// launch of a workgroup per row, and a row's reduction emitted inside it
// (docs/Codegen/GPU.md, "Kernel classes").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CODEGEN_GPU_ROWREDUCTIONS_H
#define LOOM_LIB_CODEGEN_GPU_ROWREDUCTIONS_H

#include "Launches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace loom::codegen::gpu {

/// How a reduction's combiner reduces: the subgroup operation and the kind
/// whose identity starts each partial result.
struct ReductionKind {
  mlir::gpu::AllReduceOperation subgroup;
  mlir::arith::AtomicRMWKind identity;
};

/// A linalg op of the row class: its leading loops parallel (the rows), its
/// trailing loops reductions (a row), one f32 output.
struct RowReduction {
  mlir::linalg::LinalgOp op;
  llvm::SmallVector<int64_t> rowExtents, rowLoopExtents;
  int64_t rows = 1, length = 1;
  /// The payload op that combines the output with a row element, and which
  /// of its two operands is the output.
  mlir::Operation *combiner = nullptr;
  unsigned outOperand = 0;
  ReductionKind kind;
};

/// \p op as a row reduction of at least \p minLength elements per row (its
/// rows read contiguously, or anyhow with \p anyLayout), or failure when it
/// is not one.
mlir::FailureOr<RowReduction> classifyRowReduction(mlir::linalg::LinalgOp op,
                                                   int64_t minLength,
                                                   bool anyLayout);

/// The threads of a workgroup for rows of \p length elements: the next
/// power of 2, at least kMinRowThreads (a whole warp), at most the largest
/// power of 2 in \p maxThreads.
int64_t rowThreads(int64_t length, int64_t maxThreads);

/// A launch of a workgroup per row, as its body sees it: the builder's
/// insertion point is in its body, where every thread runs.
struct RowLaunch {
  mlir::gpu::LaunchOp launch;
  Grid grid;
  int64_t rows = 1, threads = 1;
  /// The thread's index in its workgroup, and the workgroup's row.
  mlir::Value tid, row;
  /// `row < rows`, built at \p b's insertion point: false in the blocks
  /// past the last row (the grid's last column), which read the last row
  /// and store nothing; null when every block has a row.
  mlir::Value activeAt(mlir::OpBuilder &b, mlir::Location loc) const;
  /// The row the workgroup reads: `row`, or the last row past it.
  mlir::Value rowRead;
  /// Workgroup memory of `threads` f32: a reduction's per-subgroup values.
  mlir::Value shared;
};

/// A launch of one workgroup of \p threads per row of \p rows, built at
/// \p b's insertion point, which is left in its body; or failure when a
/// grid of 65535 x 65535 does not hold the rows.
mlir::FailureOr<RowLaunch> beginRowLaunch(mlir::OpBuilder &b,
                                          mlir::Location loc, int64_t rows,
                                          int64_t threads);

/// \p r's reduction of the row of \p at, every thread of the workgroup
/// taking part (it ends in a barrier-separated exchange through
/// `at.shared`): thread 0 of an active workgroup combines the row's result
/// with the output element. Built at \p b's insertion point in the body.
void emitRowReduction(mlir::OpBuilder &b, const RowReduction &r,
                      const RowLaunch &at);

} // namespace loom::codegen::gpu

#endif // LOOM_LIB_CODEGEN_GPU_ROWREDUCTIONS_H
