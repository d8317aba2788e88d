//===- Backtracking.h - TASO's cost-based backtracking search ---*- C++ -*-===//
//
// Part of Loom. TASO (SOSP'19, Algorithm 2): a priority queue of graphs
// ordered by cost; each step takes the cheapest graph, applies every rule
// at every match, and queues the new graphs whose cost is below alpha times
// the best cost seen (alpha > 1 lets the search pass through slightly worse
// graphs), skipping graphs seen before (structural hash) and graphs that
// grew beyond a cap. It stops after `budget` graphs, at a time limit, or
// when the queue is empty.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_BACKTRACKING_H
#define LOOM_SEARCH_BACKTRACKING_H

#include "loom/Search/Matcher.h"
#include "loom/Search/Outcome.h"
#include "loom/Search/Rule.h"
#include "loom/Search/TermGraph.h"

#include "llvm/ADT/DenseMap.h"

namespace loom::search {

struct BacktrackOptions {
  double alpha = 1.05;
  /// Graphs taken from the queue and expanded.
  unsigned budget = 1000;
  double timeLimit = 60;
  /// A new graph may have at most this many times the ops of the input.
  double maxGrowth = 2.0;
  /// The queue keeps at most this many graphs (the cheapest).
  size_t queueCap = 2000;
  /// Match only the rules whose source's op classes the graph has
  /// (RuleIndex); false matches every rule (same results, slower).
  bool ruleIndex = true;
  Progress *progress = nullptr;
};

Outcome backtrackingSearch(SearchContext &sc, const RuleSet &rules,
                           const TermGraph &input,
                           const BacktrackOptions &options);

/// The term-graph view of the matcher (Matcher.h).
class TermGraphView {
public:
  using Value = ValueRef;
  TermGraphView(const SearchContext &sc, const TermGraph &g);

  mlir::Type typeOf(ValueRef v) const { return g.typeOf(v); }
  bool same(ValueRef a, ValueRef b) const { return a == b; }
  OpId opOf(uint32_t n) const { return g.nodes[n].op; }
  unsigned numOperands(uint32_t n) const { return g.nodes[n].operands.size(); }
  ValueRef operand(uint32_t n, unsigned i) const {
    return g.nodes[n].operands[i];
  }
  ValueRef result(uint32_t n, unsigned i) const { return ValueRef{n, i}; }
  bool hasNodeOfClass(uint32_t cls) const { return byClass.count(cls); }
  template <class F> void forEachNodeOfClass(uint32_t cls, F f) const {
    auto it = byClass.find(cls);
    if (it == byClass.end())
      return;
    for (uint32_t n : it->second)
      if (!f(n))
        return;
  }
  template <class F> void forEachDefiner(ValueRef v, F f) const {
    f(v.node, v.result);
  }
  template <class F> void forEachUser(ValueRef v, F f) const {
    for (uint32_t u : users[v.node])
      if (!f(u))
        return;
  }

private:
  const TermGraph &g;
  llvm::DenseMap<uint32_t, llvm::SmallVector<uint32_t, 4>> byClass;
  std::vector<llvm::SmallVector<uint32_t, 2>> users;
};

/// Applies an instantiated rule at a match: adds the target's ops, sends the
/// uses of the matched outputs to the target's outputs, and canonicalises.
/// Fails when the result would have a cycle.
mlir::FailureOr<TermGraph> applyRewrite(SearchContext &sc, const TermGraph &g,
                                        const Match<ValueRef> &match,
                                        const Instance &inst);

} // namespace loom::search

#endif // LOOM_SEARCH_BACKTRACKING_H
