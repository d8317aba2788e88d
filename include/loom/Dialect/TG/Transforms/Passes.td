//===- Passes.td - tg transformation passes ----------------*- tablegen -*-===//
//
// Part of Loom. Passes are grouped under banners and kept alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

def TGCheckWeights : Pass<"tg-check-weights", "mlir::ModuleOp"> {
  let summary = "Check every tg.weight against the module's safetensors file";
  let description = [{
    Opens the safetensors file named by the module attribute `tg.weights`
    (relative to the directory of the module's source file) or by the
    `weights-file` option, and checks that every `tg.weight` names a tensor
    of the file with the dtype and shape of its result type. Each mismatch is
    an error at the `tg.weight` op; the IR is not changed.

    ```
    loom-opt model.mlir --tg-check-weights
    loom-opt model.mlir --tg-check-weights=weights-file=other.safetensors
    ```
  }];
  let options = [
    Option<"weightsFile", "weights-file", "std::string", /*default=*/"",
           "Safetensors file to check against (default: the module's "
           "tg.weights attribute)">
  ];
}

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
