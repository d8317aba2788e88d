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

//===----------------------------------------------------------------------===//
// Optimisations
//===----------------------------------------------------------------------===//

def TGFoldBatchNorm : Pass<"tg-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batchnorm into the convolution before it";
  let description = [{
    Rewrites `batchnorm(conv2d(x, W, b), gamma, beta, mean, var)`, when the
    convolution's result has no other use, has no fused activation and the
    batchnorm parameters are weights or constants, into
    `conv2d(x, W * k, (b - mean) * k + beta)` with
    `k = gamma * rsqrt(var + epsilon)` per output channel, written as tg ops
    on the parameters; `--tg-fold-weights` then computes them at compile
    time. Exact in real arithmetic; the float result differs from the
    unfolded graph by rounding only.

    ```
    loom-opt model.mlir --tg-fold-batchnorm --tg-fold-weights
    ```
  }];
}

def TGFoldWeights : Pass<"tg-fold-weights", "mlir::ModuleOp"> {
  let summary = "Compute every op whose operands are weights or constants";
  let description = [{
    Evaluates, with the reference interpreter's kernels in f64, every tg op
    whose operands are all `tg.weight`s, `tg.constant`s or results of such
    ops, and replaces it by a `tg.constant` of its result (rounded once to
    its element type): parameter preparation (transposed weight matrices,
    folded batchnorm, reshaped biases) then costs nothing at run time.
    Weights are read from the module's `tg.weights` file or `weights-file`.
    Results larger than `max-elements` are left alone.

    ```
    loom-opt model.mlir --tg-fold-weights
    ```
  }];
  let options = [
    Option<"weightsFile", "weights-file", "std::string", /*default=*/"",
           "Safetensors file of the weights (default: the module's "
           "tg.weights attribute)">,
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"(1 << 26)",
           "Largest result folded, in elements">,
  ];
}

def TGSuperopt : Pass<"tg-superopt", "mlir::ModuleOp"> {
  let summary = "Rewrite tg graphs with verified substitutions, searched by cost";
  let description = [{
    Loads graph substitutions (a rules file written by `loom-rulegen`: each
    rule a pair of `tg` graphs proved equal by Z3) and searches, for every
    function, for the cheapest equivalent graph under a cost model:

    * `search=backtrack`: TASO's cost-based backtracking search (a priority
      queue of graphs, relaxation factor `alpha`, `budget` graphs expanded,
      graph hashing, a cap on graph growth);
    * `search=eqsat`: equality saturation over an e-graph (TENSAT), bounded
      by `max-nodes`, `max-iters` and `time-limit`, then extraction: greedy,
      local search from it (the default), or exact (`extract=ilp`: an ILP
      solved by Z3 with acyclicity
      constraints, the greedy choice as fallback). Matching is semi-naive;
      `rounds` of saturation and extraction each start from the graph the
      previous one extracted (docs/Superopt/Search.md).

    Rules are matched at real shapes by unifying their witness dimensions
    with the graph's (docs/Superopt/Search.md). Weights and everything
    computed from weights alone cost nothing (computed once, ahead of time).
    A function is rewritten only when a cheaper graph was found. `report`
    writes JSON (cost_before, cost_after, seconds, rules_applied per rule,
    search statistics). `check=true` runs the original and the optimised
    module with the reference interpreter on random inputs (and the module's
    weights, or random ones) and fails when they differ: a rule or the
    matcher is unsound. Without `rules=`, the default rule set is used.

    ```
    loom-opt model.mlir --tg-superopt="rules=rules.mlir search=eqsat target=h100 report=r.json"
    loom-opt model.mlir --tg-superopt="rules=rules.mlir search=backtrack budget=200 check=true"
    ```
  }];
  let options = [
    Option<"rules", "rules", "std::string", /*default=*/"",
           "Rules file (default: the generator's default rule set)">,
    Option<"search", "search", "std::string", /*default=*/"\"backtrack\"",
           "Search engine: backtrack or eqsat">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Cost model: cpu, h100, h200 or measured">,
    Option<"costDb", "cost-db", "std::string", /*default=*/"",
           "Cost database for target=measured (created if absent)">,
    Option<"budget", "budget", "unsigned", /*default=*/"1000",
           "backtrack: graphs expanded at most">,
    Option<"alpha", "alpha", "double", /*default=*/"1.05",
           "backtrack: queue graphs cheaper than alpha * best cost">,
    Option<"maxGrowth", "max-growth", "double", /*default=*/"2.0",
           "backtrack: at most this many times the input's ops">,
    Option<"maxNodes", "max-nodes", "unsigned", /*default=*/"20000",
           "eqsat: e-node limit">,
    Option<"maxIters", "max-iters", "unsigned", /*default=*/"30",
           "eqsat: iteration limit">,
    Option<"multiIters", "multi-iters", "unsigned", /*default=*/"2",
           "eqsat: apply multi-pattern rules in the first N iterations">,
    Option<"rounds", "rounds", "unsigned", /*default=*/"10",
           "eqsat: rounds of saturation and extraction, each seeded with the "
           "previous round's graph (ends at the first that finds nothing "
           "cheaper)">,
    Option<"seminaive", "seminaive", "bool", /*default=*/"true",
           "eqsat: after a rule's first full match, match it only at roots "
           "with new nodes or merged classes below them">,
    Option<"extract", "extract", "std::string", /*default=*/"\"local\"",
           "eqsat: extraction, local (greedy + local search), ilp (local, "
           "then the exact ILP) or greedy">,
    Option<"ilpTimeLimit", "ilp-time-limit", "double", /*default=*/"2",
           "eqsat: seconds for the ILP before the greedy fallback">,
    Option<"ilpMaxNodes", "ilp-max-nodes", "unsigned", /*default=*/"2000",
           "eqsat: run the ILP only on e-graphs of at most this many e-nodes "
           "(larger ones: greedy + local search)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"25",
           "Seconds per function for the search">,
    Option<"directions", "directions", "std::string", /*default=*/"\"both\"",
           "Apply rules forward only, or both ways">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write a JSON report to this file">,
    Option<"check", "check", "bool", /*default=*/"false",
           "Compare the optimised module with the original by interpreting "
           "both on random inputs; fail on a difference">,
    Option<"checkSeed", "check-seed", "uint64_t", /*default=*/"1",
           "Seed of the check's random inputs and weights">,
    Option<"checkRtol", "check-rtol", "double", /*default=*/"1e-6",
           "Tolerance of the check, relative to the largest result element">,
    Option<"progress", "progress", "bool", /*default=*/"true",
           "Print progress of long searches to stderr">,
    Option<"progressAfter", "progress-after", "double", /*default=*/"2",
           "Seconds a search runs before its first progress line (then one "
           "line every 2 s)">
  ];
}

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
