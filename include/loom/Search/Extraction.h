//===- Extraction.h - The cheapest graph in an e-graph ----------*- C++ -*-===//
//
// Part of Loom. Two extractors choose one e-node per needed e-class:
//
//  * greedy (egg's): the cheapest node of each class by tree cost (the
//    node's cost plus its children classes' costs), ties broken by depth so
//    that the choice is always acyclic. Fast; it counts a shared subgraph
//    once per use, so it can miss choices that pay off through sharing.
//  * exact (TENSAT's ILP), solved by Z3 as weighted MaxSAT: a boolean per
//    class and per node, "a chosen class chooses a node, a chosen node
//    chooses its children", at most one node per class, and the sum of the
//    chosen nodes' costs minimised; the DAG cost, so sharing is counted
//    once. Acyclicity: an integer level per class in a cycle of the e-graph
//    (found by Tarjan's SCCs) with "a chosen node's class is above its
//    children's" inside the cycle, so the result is never cyclic. Nodes in
//    every solution (forced from the roots) are constants, not soft
//    constraints. Z3's maxres gets half of the time limit, then wmax the
//    rest; on timeout the best model found is used when it is complete, and
//    the caller keeps the greedy choice when it is cheaper.
//
// A class computed from weights alone can only choose nodes computed from
// weights alone, which cost no run time; such a class that a chosen node
// computed at run time reads is stored, and costs its bytes' price once
// (TermGraph.h): in the greedy tree cost once per use, in the local search
// and the ILP (a boolean per priced class, implied by each chosen run-time
// node reading it) once.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_EXTRACTION_H
#define LOOM_SEARCH_EXTRACTION_H

#include "loom/Search/EGraph.h"

namespace loom::search {

struct Extraction {
  bool ok = false;
  /// The extracted graph (canonical; its cost is the DAG cost).
  TermGraph graph;
  /// `greedy`, or the ILP's outcome: `optimal`, `timeout`, `failed`.
  std::string status;
  double seconds = 0;
  /// Rule applications whose nodes the graph uses.
  std::vector<int32_t> origins;
  /// The node chosen for each class (-1: none).
  std::vector<int32_t> choice;
  /// ILP size.
  size_t variables = 0, cycleClasses = 0;
};

Extraction extractGreedy(const EGraph &eg, llvm::ArrayRef<ClassId> roots);
/// Improves a complete choice by local search under the DAG cost (sharing
/// counted once): switching one class to another of its nodes, and
/// switching together every class that holds a result of one multi-result
/// node (what a multi-output rule produced: three projections merged into
/// one matmul pay off only together). Greedy's blind spot, closed cheaply;
/// not exact. Stops at a local optimum or after `timeLimit` seconds.
Extraction improveChoice(const EGraph &eg, llvm::ArrayRef<ClassId> roots,
                         const Extraction &start, double timeLimit);

/// `upperBound`: a cost known to be achievable (prunes the search).
Extraction extractILP(const EGraph &eg, llvm::ArrayRef<ClassId> roots,
                      double timeLimit, double upperBound);

/// Builds the term graph of a choice (one node per class, -1 for none);
/// fails when the choice misses a needed class or is cyclic.
mlir::FailureOr<TermGraph> buildChoice(const EGraph &eg,
                                       llvm::ArrayRef<ClassId> roots,
                                       llvm::ArrayRef<int32_t> choice,
                                       std::vector<int32_t> *origins);

} // namespace loom::search

#endif // LOOM_SEARCH_EXTRACTION_H
