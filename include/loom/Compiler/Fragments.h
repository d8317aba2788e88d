//===- Fragments.h - Grouping tg ops into fragments -------------*- C++ -*-===//
//
// Part of Loom. The grouping both --tg-form-fragments (fixed backends per
// op kind) and --tg-place-backends (a search) end with: the fragments a
// chooser picks at each anchor, then generated-code fragments for every
// other computing op with elementwise producers and consumers fused in.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_FRAGMENTS_H
#define LOOM_COMPILER_FRAGMENTS_H

#include "loom/Compiler/Backend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace loom::compiler {

/// The fragment to form at \p anchor (whose ops are all \p available), or
/// nullopt to leave \p anchor to generated code's own grouping.
using FragmentChooser = llvm::function_ref<std::optional<LibraryCall>(
    mlir::Operation *anchor, Available available)>;

/// Ops that stay outside fragments: parameters, metadata, fragments, ops of
/// other dialects, and ops already inside a fragment.
bool staysOutside(mlir::Operation *op);

/// Replaces the computing ops of \p fn by tg.fragment ops: first, in block
/// order, the fragment \p choose picks at each op (library or generated),
/// then fragments of \p registry's code generator for the rest. Ops
/// already in fragments stay. Fails (diagnosed) when the registry has no
/// code generator.
mlir::LogicalResult formFragments(mlir::func::FuncOp fn,
                                  FragmentChooser choose,
                                  const BackendRegistry &registry);

} // namespace loom::compiler

#endif // LOOM_COMPILER_FRAGMENTS_H
