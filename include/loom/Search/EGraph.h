//===- EGraph.h - An e-graph over tg, and equality saturation ---*- C++ -*-===//
//
// Part of Loom. TENSAT (MLSys'21): instead of exploring graphs one rewrite
// at a time, keep every equivalent form at once in an e-graph and extract
// the cheapest graph at the end.
//
// An e-class holds equivalent tensor values; an e-node is an interned op
// over e-classes. A multi-result op (tg.split) is one e-node in a "tuple"
// e-class whose results are projection e-nodes `proj#i`, each in the e-class
// of that result, so rules that match or produce splits, and multi-output
// rules, work as for single results. Congruence closure is restored by an
// egg-style deferred rebuild. Saturation applies every rule (multi-pattern
// rules included, for the first few iterations, as TENSAT does) until no
// rewrite changes the e-graph, or a bound on nodes, iterations or time is
// reached; rules that match too often are banned for a while (egg's backoff
// scheduler). Extraction is in Extraction.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_EGRAPH_H
#define LOOM_SEARCH_EGRAPH_H

#include "loom/Search/Matcher.h"
#include "loom/Search/Outcome.h"
#include "loom/Search/Rule.h"
#include "loom/Search/TermGraph.h"

#include "llvm/ADT/DenseMap.h"

#include <unordered_map>

namespace loom::search {

using ClassId = uint32_t;

struct ENode {
  OpId op = 0;
  llvm::SmallVector<ClassId, 2> children;
  ClassId cls = 0;
  /// The rule application that created the node (-1: the input graph).
  int32_t origin = -1;
  double cost = 0;
  uint64_t hash = 0;
  /// The epoch (EGraph::setEpoch) in which the node was created.
  uint32_t stamp = 0;
  bool dead = false;
};

struct EClass {
  llvm::SmallVector<uint32_t, 2> nodes;
  llvm::SmallVector<uint32_t, 4> parents;
  /// One type for a tensor class; one per result for a tuple class.
  llvm::SmallVector<mlir::Type, 1> types;
  mlir::LocationAttr loc;
  /// The last epoch in which the class was created or gained nodes by a
  /// merge (semi-naive matching, Saturation.cpp).
  uint32_t stamp = 0;
  bool tuple = false;
  bool foldable = false;
};

class EGraph {
public:
  explicit EGraph(SearchContext &sc) : sc(sc) {}

  /// Adds (or finds) an e-node. For a multi-result op, returns the tuple
  /// class (use result()); else the node's class.
  ClassId add(OpId op, llvm::ArrayRef<ClassId> children,
              llvm::ArrayRef<mlir::Type> types, double cost,
              mlir::LocationAttr loc, int32_t origin);
  /// The class of result `i` of node `n`.
  ClassId result(uint32_t n, unsigned i) const;
  /// Adds a term graph; returns the classes of its outputs.
  llvm::SmallVector<ClassId, 2> addGraph(const TermGraph &g);
  /// The choice (e-node per class, -1 elsewhere) that extracts `g`, a graph
  /// added with addGraph, from this e-graph as it is now; empty if a node
  /// of `g` is no longer found.
  std::vector<int32_t> choiceOf(const TermGraph &g) const;

  ClassId find(ClassId c) const;
  /// Merges two classes (of equal types); true when they were distinct.
  bool merge(ClassId a, ClassId b);
  /// Restores congruence after merges; recomputes foldability.
  void rebuild();

  /// The class of result `i` of the tuple class `tuple`.
  ClassId projClass(ClassId tuple, unsigned i) const;
  /// Whether node `n` computes on weights and constants only (free).
  bool isFoldable(uint32_t n) const;

  const ENode &node(uint32_t n) const { return nodes[n]; }
  const EClass &eclass(ClassId c) const { return classes[find(c)]; }
  size_t numNodes() const { return nodes.size() - numDead; }
  size_t numClasses() const { return numLiveClasses; }
  size_t numNodeSlots() const { return nodes.size(); }
  size_t numClassSlots() const { return classes.size(); }
  SearchContext &context() const { return sc; }

  /// Changes made from now on (new nodes and classes, merges) are stamped
  /// with `e`.
  void setEpoch(uint32_t e) { epoch = e; }
  /// For every class slot (canonical classes only), the latest stamp of the
  /// class and of the classes below it: level 0 is the class's own stamp,
  /// level k adds the level k-1 stamps of its live nodes' children. A match
  /// whose root node and children's level-L stamps predate an epoch was
  /// already there, whole, in that epoch (L: the class levels the pattern
  /// reaches below the root's children).
  std::vector<std::vector<uint32_t>> deepStamps(unsigned levels) const;

  /// Live nodes of a shape class (for the matcher's root steps).
  const std::vector<uint32_t> *nodesOfClass(uint32_t shapeClass) const {
    auto it = byShapeClass.find(shapeClass);
    return it == byShapeClass.end() ? nullptr : &it->second;
  }

private:
  uint64_t keyHash(OpId op, llvm::ArrayRef<ClassId> children) const;
  void canonicalizeNode(ENode &n) const;
  std::optional<uint32_t> lookup(const ENode &n) const;
  void insertKey(uint32_t n);
  void eraseKey(uint32_t n);
  void repair(ClassId c);

  SearchContext &sc;
  std::vector<ENode> nodes;
  std::vector<EClass> classes;
  mutable std::vector<ClassId> parent;
  std::unordered_map<uint64_t, llvm::SmallVector<uint32_t, 1>> hashcons;
  std::unordered_map<uint32_t, std::vector<uint32_t>> byShapeClass;
  std::vector<ClassId> pending;
  size_t numDead = 0;
  size_t numLiveClasses = 0;
  uint32_t epoch = 0;
};

/// The e-graph view of the matcher (Matcher.h).
class EGraphView {
public:
  using Value = ClassId;
  explicit EGraphView(const EGraph &eg) : eg(eg) {}
  mlir::Type typeOf(ClassId c) const { return eg.eclass(c).types[0]; }
  bool same(ClassId a, ClassId b) const { return eg.find(a) == eg.find(b); }
  OpId opOf(uint32_t n) const { return eg.node(n).op; }
  unsigned numOperands(uint32_t n) const { return eg.node(n).children.size(); }
  ClassId operand(uint32_t n, unsigned i) const {
    return eg.find(eg.node(n).children[i]);
  }
  ClassId result(uint32_t n, unsigned i) const { return eg.result(n, i); }
  bool hasNodeOfClass(uint32_t cls) const {
    if (const std::vector<uint32_t> *list = eg.nodesOfClass(cls))
      for (uint32_t n : *list)
        if (!eg.node(n).dead)
          return true;
    return false;
  }
  template <class F> void forEachNodeOfClass(uint32_t cls, F f) const {
    if (const std::vector<uint32_t> *list = eg.nodesOfClass(cls))
      for (size_t k = 0, e = list->size(); k < e; ++k)
        if (!eg.node((*list)[k]).dead && !f((*list)[k]))
          return;
  }
  template <class F> void forEachDefiner(ClassId c, F f) const;
  template <class F> void forEachUser(ClassId c, F f) const {
    const EClass &ec = eg.eclass(c);
    for (uint32_t p : ec.parents) {
      const ENode &n = eg.node(p);
      if (n.dead || eg.context().op(n.op).isProj())
        continue;
      if (!f(p))
        return;
    }
  }

private:
  const EGraph &eg;
};

template <class F> void EGraphView::forEachDefiner(ClassId c, F f) const {
  const EClass &ec = eg.eclass(c);
  for (uint32_t n : ec.nodes) {
    const ENode &node = eg.node(n);
    if (node.dead)
      continue;
    const OpInfo &info = eg.context().op(node.op);
    if (!info.isProj()) {
      if (!f(n, 0u))
        return;
      continue;
    }
    const EClass &tuple = eg.eclass(node.children[0]);
    for (uint32_t m : tuple.nodes)
      if (!eg.node(m).dead && !f(m, info.index))
        return;
  }
}

struct EqsatOptions {
  /// Match only the rules whose source's op classes the e-graph has
  /// (RuleIndex); false matches every rule (same results, slower).
  bool ruleIndex = true;
  size_t maxNodes = 20000;
  unsigned maxIterations = 30;
  double timeLimit = 20;
  /// Multi-pattern rules are applied in the first this-many iterations.
  unsigned multiPatternIterations = 2;
  /// Backoff scheduler: a rule with more matches than this (doubled per
  /// previous ban) in one iteration is banned for banLength iterations
  /// (doubled likewise).
  size_t matchLimit = 2000;
  unsigned banLength = 3;
  /// Semi-naive matching: a rule matched in full in an earlier iteration is
  /// matched again only at root nodes with something new below them
  /// (Saturation.cpp). Off: every rule is matched everywhere each iteration.
  bool seminaive = true;
  /// Extraction: greedy, local (greedy + local search under the DAG cost; the
  /// default: on the zoo it matched the ILP everywhere, at a fraction of the
  /// time, docs/benchmarks/superopt.md) or ilp (local, then the exact ILP).
  std::string extraction = "local";
  /// Rounds of saturation and extraction, each seeded with the graph the
  /// previous one extracted; the search ends at the first round that finds
  /// nothing cheaper.
  unsigned rounds = 10;
  double ilpTimeLimit = 2;
  /// The ILP runs only on e-graphs of at most this many e-nodes: beyond
  /// about 2,000 Z3 does not finish in seconds (docs/benchmarks/superopt.md)
  /// and greedy + local search is what is returned anyway.
  unsigned ilpMaxNodes = 2000;
  Progress *progress = nullptr;
};

Outcome equalitySaturation(SearchContext &sc, const RuleSet &rules,
                           const TermGraph &input, const EqsatOptions &options);

} // namespace loom::search

#endif // LOOM_SEARCH_EGRAPH_H
