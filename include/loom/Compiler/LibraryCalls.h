//===- LibraryCalls.h - Fragments that are one library call -----*- C++ -*-===//
//
// Part of Loom. The shapes of tg subgraphs that one oneDNN or OpenBLAS call
// computes, recognised in one place: the fragment formation groups ops by
// them, and the schedule builder turns a library fragment back into its
// call (docs/Artifact.md lists the calls and their operands).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_LIBRARYCALLS_H
#define LOOM_COMPILER_LIBRARYCALLS_H

#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace loom::compiler {

/// One library call: an anchor op (tg.conv2d or tg.matmul) and what is
/// fused after it.
struct LibraryCall {
  tg::Backend backend;
  /// tg.conv2d or tg.matmul.
  mlir::Operation *anchor = nullptr;
  /// A bias: the conv's own bias operand, or the [N] operand of a tg.add
  /// after a matmul. Null when there is none.
  mlir::Value bias;
  /// The other operand of a residual tg.add after a conv (oneDNN's sum
  /// post-op). Null when there is none.
  mlir::Value sum;
  /// The activation applied last: none, relu, sigmoid, tanh, gelu_erf,
  /// gelu_tanh.
  llvm::StringRef activation = "none";
  /// The ops the call computes, in order; the last one's result is the
  /// call's result.
  llvm::SmallVector<mlir::Operation *, 4> ops;
};

/// The library call that starts at \p anchor on \p backend and grows over
/// single-use consumers (bias, residual sum, activation), or nullopt when
/// \p anchor is not something \p backend computes (wrong op, element type,
/// rank). OpenBLAS takes a plain rank-2 (or rank-3 times rank-2) matmul.
/// \p available says whether a consumer may join (fragment formation
/// passes whether it is still unclaimed).
std::optional<LibraryCall> growLibraryCall(
    mlir::Operation *anchor, tg::Backend backend,
    llvm::function_ref<bool(mlir::Operation *)> available = nullptr);

/// The call a library fragment's body is (its ops are exactly one call), or
/// nullopt with no diagnostic.
std::optional<LibraryCall> matchLibraryFragment(tg::FragmentOp fragment);

} // namespace loom::compiler

#endif // LOOM_COMPILER_LIBRARYCALLS_H
