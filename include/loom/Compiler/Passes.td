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

    * library fragments: `tg.conv` on oneDNN, with a following residual
      `tg.add` (oneDNN's sum post-op) and activation fused; `tg.matmul` on
      oneDNN with a following bias `tg.add` and activation fused, or on
      OpenBLAS (plain sgemm); pools, channel concats and the adds between
      convolutions on oneDNN with the convolutions (it runs them in the
      convolutions' layout, so a chain of convolutions through them is not
      reordered to NCHW at each); chosen by a backend list (`backends`,
      docs/Placement.md): entries in priority order, each a registered
      backend for every op it runs (`openblas,onednn`) or for one class of
      ops (`conv:onednn,matmul:openblas`; classes `conv` — convolutions,
      pools, channel concats and adds — and `matmul`); an op goes to the
      first entry whose class holds it and whose backend runs it, and an
      entry of the code generator stops there. `conv-backend=X
      matmul-backend=Y` is a spelling of `backends=conv:X,matmul:Y`.
      `--tg-place-backends` chooses by a search instead;
    * generated fragments (the registry's code generator, `codegen`): every
      other computing op, with single-use elementwise producers fused in
      (prologue) and elementwise consumers fused after (epilogue); a cast
      from f32 to bf16 or f16 (--precision's input to a product) joins the
      group computing its operand even where that value has other users,
      the fragment then yielding both, when it still comes before them;
      on a GPU target (the code generator's `productsTakeTransposes`), a
      transpose whose only reader is a matrix product, directly or through
      elementwise ops, and a transpose of a product's result that only it
      reads join the product's fragment (its kernel reads the operand and
      writes the result through the permutation: docs/Codegen/GPU.md,
      "Transposes taken by products"); gathers
      count as elementwise here (each result element from the index at its
      own position: RoiAlign's weighted taps, their sum and their mean are
      one fragment); at most one op of a fragment is not elementwise,
      except that independent
      recurrences (`tg.scan` ops in generated fragments, neither reading
      what the other's fragment computes, and the joined fragment still
      before every user of its results: the two directions of a
      bidirectional layer) share one fragment, whose kernel runs each on a
      thread of its own (`loom-forall-to-range`'s tasks).

    `tg.weight`, `tg.reshape` (metadata) and large `tg.constant`s stay
    outside and enter fragments as inputs; small constants are copied into
    the fragments that use them. The pass is idempotent: ops already in
    fragments are left alone.

    ```
    loom-opt model.mlir --tg-form-fragments
    loom-opt model.mlir --tg-form-fragments="backends=conv:codegen,matmul:openblas"
    loom-opt model.mlir --tg-form-fragments="conv-backend=codegen matmul-backend=openblas"
    ```
  }];
  let options = [
    Option<"convBackend", "conv-backend", "std::string", /*default=*/"\"\"",
           "Spells the entry conv:<name>, put before the default list">,
    Option<"matmulBackend", "matmul-backend", "std::string",
           /*default=*/"\"\"",
           "Spells the entry matmul:<name>, put before the default list">,
    Option<"backends", "backends", "std::string", /*default=*/"\"\"",
           "The backend list, in priority order (comma-separated NAME or "
           "CLASS:NAME entries, docs/Placement.md); default: the "
           "registry's, conv:onednn,matmul:onednn,loomrt">,
  ];
  let dependentDialects = ["::loom::tg::TGDialect"];
}

#endif // LOOM_COMPILER_PASSES_TD
