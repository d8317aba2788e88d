//===- Passes.td - The CPU compiler's passes ---------------*- tablegen -*-===//
//
// Part of Loom. The stages of `loom-compile` that are passes, so that
// loom-opt can run and show each one. Grouped under banners, alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_PASSES_TD
#define LOOM_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fragments
//===----------------------------------------------------------------------===//

def TGFormFragments : Pass<"tg-form-fragments", "mlir::func::FuncOp"> {
  let summary = "Group every computing tg op into a tg.fragment placed on a backend";
  let description = [{
    Partitions the ops of each function into `tg.fragment` ops, each of which
    the CPU compiler turns into one step of the schedule:

    * library fragments: `tg.conv2d` on oneDNN, with a following residual
      `tg.add` (oneDNN's sum post-op) and activation fused; `tg.matmul` on
      oneDNN with a following bias `tg.add` and activation fused, or on
      OpenBLAS (plain sgemm); pools, channel concats and the adds between
      convolutions on oneDNN with the convolutions (it runs them in the
      convolutions' layout, so a chain of convolutions through them is not
      reordered to NCHW at each); chosen per op kind by the options, or by a
      fixed backend set in priority order (`backends=openblas,onednn`);
      `--tg-place-backends` chooses by a search instead;
    * codegen fragments: every other computing op, with single-use
      elementwise producers fused in (prologue) and elementwise consumers
      fused after (epilogue); at most one op of a fragment is not
      elementwise.

    `tg.weight`, `tg.reshape` (metadata) and large `tg.constant`s stay
    outside and enter fragments as inputs; small constants are copied into
    the fragments that use them. The pass is idempotent: ops already in
    fragments are left alone.

    ```
    loom-opt model.mlir --tg-form-fragments
    loom-opt model.mlir --tg-form-fragments="conv-backend=codegen matmul-backend=openblas"
    ```
  }];
  let options = [
    Option<"convBackend", "conv-backend", "std::string", /*default=*/"\"onednn\"",
           "Backend of tg.conv2d (and of pools, channel concats and the "
           "adds between convolutions, which oneDNN runs in its "
           "convolutions' layout): onednn or codegen">,
    Option<"matmulBackend", "matmul-backend", "std::string",
           /*default=*/"\"onednn\"",
           "Backend of tg.matmul: onednn, openblas or codegen">,
    Option<"backends", "backends", "std::string", /*default=*/"\"\"",
           "A fixed backend set, in priority order (comma-separated): each "
           "op goes to the first library backend that runs it, else to "
           "generated code; overrides conv-backend and matmul-backend">,
  ];
  let dependentDialects = ["::loom::tg::TGDialect"];
}

#endif // LOOM_COMPILER_PASSES_TD
