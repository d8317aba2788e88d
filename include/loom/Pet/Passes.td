//===- Passes.td - PET: partially equivalent transformations -*- tablegen -*-===//
//
// Part of Loom. The pass that applies PET's partially equivalent
// transformations with their corrections (docs/Superopt/PET.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PET_PASSES_TD
#define LOOM_PET_PASSES_TD

include "mlir/Pass/PassBase.td"

def TGPet : Pass<"tg-pet", "mlir::ModuleOp"> {
  let summary = "Apply PET's split-to-batch transformation with its corrections";
  let description = [{
    PET (OSDI'21): for every `tg.conv`, `tg.avgpool` and `tg.maxpool` whose
    input's spatial dimension `dim` is at least `min-extent` long, the input
    is cut into `parts` equal pieces along `dim`, the pieces are moved into
    the batch (`fold=split-concat`: `tg.split` + `tg.concat`;
    `fold=reshape-transpose`: `tg.reshape` + `tg.transpose`), the operator
    runs once on the folded tensor and its result is moved back. That is
    equal to the original on part of the output only: the rows whose window
    crosses a cut read padding. The pass computes those rows from the
    window's index arithmetic and recomputes them with correction kernels
    (the original operator on a `tg.slice` of just the input rows they need,
    with the padding the window needs; corrections of one shape fused into
    one operator over the batch), joined with the right rows by one
    `tg.concat`.

    Before an application is kept, its regions are proved on the same
    operator at a small shape (PET's multi-linear argument, exact arithmetic
    modulo 2^61-1; `tg.maxpool` is not multi-linear and is only tested), and
    the corrected program is checked against the original with the
    reference interpreter on random inputs at the real shape (`check`). A
    failure of either leaves the operator as it was and is reported.
    `report` writes JSON: per application the op, the transformation, the
    boxes equal and corrected, the corrections, the proof and the check.

    ```
    loom-opt model.mlir --tg-pet="dim=2 parts=2 min-extent=64 report=pet.json"
    ```
  }];
  let options = [
    Option<"dim", "dim", "unsigned", /*default=*/"2",
           "The spatial input dimension cut into pieces (2: height)">,
    Option<"parts", "parts", "int64_t", /*default=*/"2",
           "Pieces moved into the batch">,
    Option<"fold", "fold", "std::string", /*default=*/"\"split-concat\"",
           "How the pieces are moved: split-concat or reshape-transpose">,
    Option<"minExtent", "min-extent", "int64_t", /*default=*/"32",
           "Transform only ops whose input dimension is at least this long">,
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Fuse corrections of one window shape into one op">,
    Option<"check", "check", "bool", /*default=*/"true",
           "Check every application against the interpreter on random inputs">,
    Option<"trials", "trials", "unsigned", /*default=*/"4",
           "Independent evaluations per proved region">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write a JSON report of the applications to this file">,
  ];
}

#endif // LOOM_PET_PASSES_TD
