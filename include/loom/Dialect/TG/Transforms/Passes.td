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

//===----------------------------------------------------------------------===//
// Analyses
//===----------------------------------------------------------------------===//

def TGEstimateCost : Pass<"tg-estimate-cost", "mlir::ModuleOp"> {
  let summary = "Estimate the run time of every function with a cost model";
  let description = [{
    Computes, for every function of the module, the FLOPs, bytes and
    estimated seconds of each tg op with the chosen cost model, and writes a
    JSON report (`report=FILE`) and/or a table on stderr (`print=true`). The
    IR is not changed.

    Targets: `cpu` (a roofline calibrated on this machine by a short
    micro-benchmark of the interpreter's kernels), `h100`, `h200` (datasheet
    rooflines), `measured` (each distinct op timed once with the reference
    interpreter and cached in `cost-db=FILE`).

    ```
    loom-opt model.mlir --tg-estimate-cost="target=h100 report=cost.json"
    loom-opt model.mlir --tg-estimate-cost="target=measured cost-db=costs.json print=true"
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Cost model: cpu, h100, h200 or measured">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write a JSON report to this file">,
    Option<"costDb", "cost-db", "std::string", /*default=*/"",
           "Cost database for target=measured (created if absent)">,
    Option<"print", "print", "bool", /*default=*/"false",
           "Print a per-op-kind table to stderr">
  ];
}

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
