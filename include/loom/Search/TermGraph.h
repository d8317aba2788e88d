//===- TermGraph.h - Compact tensor graphs for the search -------*- C++ -*-===//
//
// Part of Loom. The search engines do not rewrite MLIR ops: they work on a
// compact term graph, converted from a func.func once at the start and back
// once at the end. A node is an interned op (OpId), its operands (node and
// result number) and its result types; function arguments are nodes of the
// pseudo op `arg#i`. A canonical graph holds only nodes that reach an
// output, in a deterministic topological order, without duplicates (common
// subexpressions are merged), with a structural hash per node and for the
// whole graph, so that a search recognises a graph it has seen before.
//
// Weights and constants, and every node computed from them alone, are
// "foldable": known before the model runs (a compiler computes them once,
// as TASO assumes), so they cost no run time. The cost of a graph is the
// sum of the costs of its other nodes, plus the price of storing the
// folded constants: each distinct foldable value a run-time op reads costs
// its bytes times SearchContext::getStoredBytePrice(), once however many
// ops read it (what the compiled model stores, folds and loads).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_TERMGRAPH_H
#define LOOM_SEARCH_TERMGRAPH_H

#include "loom/Search/SearchContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::search {

/// Result `result` of node `node`.
struct ValueRef {
  uint32_t node = 0;
  uint32_t result = 0;
  bool operator==(const ValueRef &o) const {
    return node == o.node && result == o.result;
  }
  bool operator!=(const ValueRef &o) const { return !(*this == o); }
};

struct TermNode {
  OpId op = 0;
  llvm::SmallVector<ValueRef, 2> operands;
  llvm::SmallVector<mlir::Type, 1> types;
  /// Where the op came from (its MLIR location, or the location of the
  /// rewrite that created it). Not part of the node's identity.
  mlir::LocationAttr loc;
  /// The op's cost (OpEval::cost) and whether it is foldable.
  double cost = 0;
  bool foldable = false;
  uint64_t hash = 0;
};

/// Bytes of the statically shaped tensors of `types` (0 for others).
double bytesOf(llvm::ArrayRef<mlir::Type> types);

class TermGraph {
public:
  std::vector<TermNode> nodes;
  llvm::SmallVector<ValueRef, 2> outputs;
  /// Valid after canonicalize().
  uint64_t hash = 0;
  double cost = 0;

  /// Imports the body of `fn`: one block of region-free ops ending in
  /// func.return. Returns failure, with a reason in `why`, otherwise.
  static mlir::FailureOr<TermGraph>
  fromFunc(SearchContext &sc, mlir::func::FuncOp fn, std::string &why);

  /// Replaces the body of `fn` (same signature) with this graph.
  void toFunc(SearchContext &sc, mlir::func::FuncOp fn) const;

  /// Removes nodes that reach no output, orders the rest topologically
  /// (depth-first from the outputs, operands in order), merges duplicate
  /// nodes, and recomputes hashes, foldability and the cost. Fails when the
  /// graph has a cycle.
  mlir::LogicalResult canonicalize(SearchContext &sc);

  mlir::Type typeOf(ValueRef v) const { return nodes[v.node].types[v.result]; }
  /// The bytes of the folded constants the graph stores (above): each
  /// distinct foldable value an op computed at run time reads. Valid after
  /// canonicalize().
  double storedBytes() const;
  size_t size() const { return nodes.size(); }
  /// Nodes that are real ops (not arguments).
  size_t numOps(const SearchContext &sc) const;
};

} // namespace loom::search

#endif // LOOM_SEARCH_TERMGRAPH_H
