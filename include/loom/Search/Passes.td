//===- Passes.td - Graph superoptimisation passes ----------*- tablegen -*-===//
//
// Part of Loom. The search for cheaper equivalent graphs under verified
// rules (LoomSearch: TASO's backtracking, equality saturation, Z3's ILP
// extraction). It lives here, not beside the tg transforms, so that only the
// tools that run it (loom-opt, loom-compile --superopt) link the e-graph
// engine and Z3.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_PASSES_TD
#define LOOM_SEARCH_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    Option<"ruleIndex", "rule-index", "bool", /*default=*/"true",
           "Match only the rules whose source's op classes the graph has "
           "(false: every rule; the same results, slower)">,
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
    Option<"batchProducts", "batch-products", "bool", /*default=*/"false",
           "After the search, batch independent products of equal shapes "
           "(an activation times a parameter each) into one batched product "
           "where the cost model prices it cheaper">,
    Option<"storedBytePrice", "stored-byte-price", "double",
           /*default=*/"::loom::search::kStoredBytePrice",
           "Seconds the cost charges per byte of each distinct folded "
           "constant the graph stores (weights, and values computed from "
           "them alone, read by ops that run; 0: free)">,
    Option<"progress", "progress", "bool", /*default=*/"true",
           "Print progress of long searches to stderr">,
    Option<"progressAfter", "progress-after", "double", /*default=*/"2",
           "Seconds a search runs before its first progress line (then one "
           "line every 2 s)">
  ];
}

#endif // LOOM_SEARCH_PASSES_TD
