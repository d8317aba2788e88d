//===- Check.h - Compare an optimised module with its original --*- C++ -*-===//
//
// Part of Loom. An optimisation that changes results is a bug in a rule or
// in the matcher. This check runs both modules with the reference
// interpreter (f64, so that the comparison sees rewrites, not rounding) on
// the same random inputs and weights and reports the first result that
// differs beyond the tolerance.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_CHECK_H
#define LOOM_SEARCH_CHECK_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace loom::search {

struct CheckOptions {
  uint64_t seed = 1;
  /// |optimised - original| <= atol + rtol * max |original| per result.
  double rtol = 1e-6;
  double atol = 1e-9;
  /// Weights for tg.weight: this file; else the module's own file when it
  /// exists; else random weights (tg::writeRandomWeights) in a temporary
  /// file.
  std::string weightsFile;
};

/// Runs every function of `optimized` and its namesake in `original` and
/// compares the results; emits an error at the optimised function for the
/// first mismatch (or interpreter failure).
mlir::LogicalResult checkEquivalent(mlir::ModuleOp original,
                                    mlir::ModuleOp optimized,
                                    const CheckOptions &options);

} // namespace loom::search

#endif // LOOM_SEARCH_CHECK_H
