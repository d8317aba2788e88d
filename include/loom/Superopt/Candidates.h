//===- Candidates.h - Candidate rules and their pruning ---------*- C++ -*-===//
//
// Part of Loom. Turns fingerprint classes into candidate rules and removes,
// before any proof is attempted, those that are implied by smaller rules or
// duplicate others. Each class is paired as a star around its cheapest
// member (the representative): every other member G gives the candidate
// G -> representative. Equality is transitive, so these pairs imply every
// equality of the class.
//
// Pruning stages, in order (each counted):
//   1. common subgraph (TASO): source and target contain the same operator
//      applied to the same inputs; when replacing it by a fresh input keeps
//      the fingerprints equal, the rule is an instance of a smaller one.
//      (TASO drops such pairs unconditionally, and so loses e.g.
//      relu(relu(x)) = relu(x); here the generalisation is checked.)
//   2. congruence: both sides apply the same operator to operands that are
//      pairwise equal (by fingerprint), so the rule follows from the smaller
//      rules on the operands.
//   3. renaming: equal to an earlier candidate up to a renaming of
//      interchangeable inputs and up to orientation.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_CANDIDATES_H
#define LOOM_SUPEROPT_CANDIDATES_H

#include "loom/Superopt/Enumerator.h"

#include <functional>
#include <string>
#include <vector>

namespace loom::superopt {

/// A candidate rule: source and target graphs over the universe's inputs
/// whose outputs correspond position by position.
struct Candidate {
  Graph source, target;
};

struct PruneStats {
  uint64_t pairs = 0;
  uint64_t commonSubgraph = 0;
  uint64_t congruence = 0;
  uint64_t renaming = 0;
  uint64_t kept = 0;
  double seconds = 0;
};

/// Builds the candidates of \p e and prunes them, classes on \p threads
/// threads (the result does not depend on them). \p progress, if set, is
/// called now and then with the number of classes done.
std::vector<Candidate>
makeCandidates(Universe &u, const Enumeration &e, PruneStats &stats,
               unsigned threads = 1,
               std::function<void(uint64_t classesDone)> progress = nullptr);

/// The cost of \p g, the sum of its operators' (costOf); zero if \p g does
/// not type-check. A class's representative has the fewest FLOPs, then
/// operators, then bytes.
OpCost graphCost(Universe &u, const Graph &g);

/// A hash of the pair (a, b) invariant under renaming interchangeable inputs
/// and under swapping a and b.
uint64_t canonicalPairKey(const Universe &u, const Graph &a, const Graph &b);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_CANDIDATES_H
