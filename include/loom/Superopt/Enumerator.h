//===- Enumerator.h - Enumeration and fingerprinting of graphs --*- C++ -*-===//
//
// Part of Loom. Enumerates every graph of up to K operators over a Universe
// (whose parameter expressions, see ParamExpr, are offered as operands on
// top of K, up to P ops per graph), fingerprints each on the
// universe's fixed random inputs in the exact domain ModPDomain, and groups
// graphs whose output fingerprints agree into classes: the candidate rules.
//
// The enumeration builds graphs by depth-first search, one node at a time,
// and visits every graph once:
//   * nodes are identified by a structural signature (operator, attributes,
//     operand signatures; sorted for commutative ops), and a graph is built
//     only in its canonical order (the order in which repeatedly taking the
//     available node of least signature lists it), checked in O(1) per step;
//   * a node that recomputes an existing tensor (same fingerprint as an
//     input or an earlier value) ends the branch: the graph is recorded (it
//     is the source of a redundancy-eliminating rule) but never extended;
//   * only connected graphs are recorded, and branches that can no longer
//     become connected within the budget are cut;
//   * a graph with several outputs whose cones share no node is recorded
//     only when every node reads graph inputs alone (TASO's "two ops
//     sharing an input", the only such cones a small budget can merge), and
//     graphs have at most maxOutputs outputs.
// Each operator result is evaluated once per distinct signature (memoised).
//
// Threads split the search by its first node: each top-level candidate is a
// unit, taken in turn by workers with memos of their own, and the units'
// graphs are merged in unit order, so the Enumeration (trie, classes and
// their member order, identities) and every count but `evaluations` are
// those of one thread.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_ENUMERATOR_H
#define LOOM_SUPEROPT_ENUMERATOR_H

#include "loom/Superopt/Graph.h"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace loom::superopt {

struct EnumerateOptions {
  /// Largest number of operators in a graph (K), not counting the
  /// parameter expressions it uses (bounded by the universe's P).
  unsigned maxOps = 3;
  /// Largest number of outputs of a recorded graph (at most 4).
  unsigned maxOutputs = 2;
  /// Threads searching in parallel (the result does not depend on them).
  unsigned threads = 1;
  /// Called now and then with the number of graphs visited so far.
  std::function<void(uint64_t visited, uint64_t recorded)> progress;
};

struct EnumerateStats {
  /// Graphs the search built (including disconnected prefixes).
  uint64_t visited = 0;
  /// Connected graphs recorded with their fingerprints.
  uint64_t enumerated = 0;
  /// Recorded graphs that recompute an existing tensor (not extended).
  uint64_t redundant = 0;
  /// Operator evaluations in ModPDomain (memo misses; each thread has its
  /// own memo, so this count alone depends on the threads).
  uint64_t evaluations = 0;
  /// Fingerprint classes holding at least two graphs.
  uint64_t classes = 0;
  /// Graphs in those classes.
  uint64_t classMembers = 0;
  double seconds = 0;
  /// Time spent evaluating, summed over the threads.
  double fingerprintSeconds = 0;
};

/// The recorded graphs, as a trie of nodes, and the classes.
class Enumeration {
public:
  /// One node of the trie: an op application appended to its parent graph.
  struct TrieNode {
    uint32_t parent; ///< ~0u for the first node of a graph
    uint8_t def;     ///< index into Universe::ops()
    uint8_t numOperands;
    std::array<uint8_t, 5> operands;
    /// For the graph ending here, the outputs in fingerprint order: the
    /// output at position p of that order is output (bits 2p..2p+1 xor p)
    /// in value order (0 when the values are in fingerprint order).
    uint8_t outputOrder;
    std::array<int16_t, 2> sizes;
  };
  /// A class member: a trie node (a graph), or, with kIdentity set, an
  /// identity graph (no node) whose outputs are inputs.
  static constexpr uint32_t kIdentity = 0x80000000u;

  std::vector<TrieNode> trie;
  std::vector<std::vector<uint8_t>> identities;
  /// Fingerprint classes with at least two members.
  std::vector<std::vector<uint32_t>> classes;

  /// The graph of a class member, with its outputs (unconsumed results; for
  /// an identity, the inputs) ordered by fingerprint, so that the outputs of
  /// two members of a class correspond position by position.
  Graph unpack(const Universe &u, uint32_t member) const;
};

/// Runs the enumeration.
Enumeration enumerate(Universe &u, const EnumerateOptions &options,
                      EnumerateStats &stats);

/// The ModPDomain fingerprint of a tensor (shape and elements).
uint64_t fingerprintOf(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<uint64_t> data);

/// Output fingerprints of \p g on the universe's fingerprint inputs.
llvm::SmallVector<uint64_t, 4> fingerprintGraph(const Universe &u,
                                                const Graph &g);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_ENUMERATOR_H
