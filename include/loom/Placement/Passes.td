//===- Passes.td - Backend placement ----------------------*- tablegen -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLACEMENT_PASSES_TD
#define LOOM_PLACEMENT_PASSES_TD

include "mlir/Pass/PassBase.td"

def TGPlaceBackends : Pass<"tg-place-backends", "mlir::ModuleOp"> {
  let summary = "Place every fragment on the backend that runs it fastest "
                "(Collage-style search over the backend registry)";
  let description = [{
    Every op some library backend runs (a convolution, a matrix product) is
    a *site*. Each registered backend (lib/Compiler/Backends/) offers the
    fragments it runs from there: oneDNN a convolution with its residual sum
    and activation, OpenBLAS a plain matrix product, generated code the op
    with the elementwise ops after it. An option that takes fewer ops than
    the chain leaves the rest to one generated kernel, priced as well.

    A cost model prices every option: `cost=analytic` (each backend's
    roofline estimate on `target`) or `cost=measured` (every distinct
    fragment compiled into one probe artifact, timed on this machine with
    `threads` threads, cached in `cost-db` under the machine's name, with
    a `budget` in seconds after which the rest falls back to rooflines).
    The search then picks the cheapest option per site: exactly, by
    enumerating each group of sites whose chains share an op (two
    convolutions feeding one residual add) and adding up the groups. With
    measured costs a second level (`end-to-end`) sees what per-fragment
    costs cannot (layouts kept between oneDNN steps, reorders at backend
    switches): it compiles and times the whole model under that cover, under
    every fixed backend set and with each class of identical sites moved to
    its runner-up, within the budget, and keeps the fastest.
    Fragments are then formed as placed (as `--tg-form-fragments` would,
    with the sites decided); every other op becomes generated code.

    `placement-out` writes the placement as JSON (every site: its anchor
    op, signature, backend, pattern, seconds and the alternatives);
    `placement-in` applies one without pricing anything (a mismatch with
    the model is an error at the op). `report` prints a table (`-`:
    stderr). docs/Placement.md has the details.

    ```
    loom-opt model.mlir --tg-place-backends="cost=analytic report=-"
    loom-opt model.mlir --tg-place-backends="cost=measured cost-db=costs.json placement-out=p.json"
    loom-opt model.mlir --tg-place-backends="placement-in=p.json"
    ```
  }];
  let options = [
    Option<"backends", "backends", "std::string", /*default=*/"\"all\"",
           "Backends to choose among: all, or a comma-separated list "
           "(codegen is always one)">,
    Option<"cost", "cost", "std::string", /*default=*/"\"analytic\"",
           "Cost model: analytic or measured">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Roofline target of the analytic model: cpu, h100 or h200">,
    Option<"costDb", "cost-db", "std::string", /*default=*/"\"\"",
           "JSON cost database of the measured model (required by it)">,
    Option<"budget", "budget", "double", /*default=*/"60",
           "Seconds the measurement may take">,
    Option<"threads", "threads", "int", /*default=*/"0",
           "Threads the measured fragments run on (0: all)">,
    Option<"endToEnd", "end-to-end", "bool", /*default=*/"true",
           "With cost=measured: compile and time the whole model under the "
           "cover, each fixed backend set and runner-up moves; keep the "
           "fastest">,
    Option<"placementIn", "placement-in", "std::string", /*default=*/"\"\"",
           "Apply this placement (JSON) instead of searching">,
    Option<"placementOut", "placement-out", "std::string", /*default=*/"\"\"",
           "Write the placement (JSON) here">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Print the per-fragment report to this file (-: stderr)">,
  ];
  let dependentDialects = ["::loom::tg::TGDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // LOOM_PLACEMENT_PASSES_TD
