//===- Generalize.h - Witness shapes with independent dimensions -*- C++ -*-===//
//
// Part of Loom. The enumeration runs on a few fixed shapes (x:[2,4],
// w:[4,4], images [1,4,5,5], filters [4,4,3,3]), so the rules it proves are
// stated at witness shapes where unrelated dimensions happen to be equal
// (rows of w and columns of w; channels and features). The search engine's
// matcher keeps every equality of witness dimensions (docs/Superopt/
// Search.md), so such a rule would only apply to square weights.
//
// Generalisation restates a proved rule at witness shapes where every
// dimension that the rule's typing does not tie to another gets its own
// value:
//
//   1. the dimensions of the inputs the rule uses are grouped by value
//      (values 1 and 3 -- batch, kernel sizes -- stay fixed);
//   2. a group is split while some part of it can take a fresh value and
//      both sides still type-check with equal result shapes (split sizes are
//      recomputed from the concatenation boundaries);
//   3. the groups get distinct odd values (odd numbers are sum-free, so a
//      concatenated dimension never equals a group's value by accident);
//   4. the restated rule is proved again from the axioms at its new shapes
//      and checked numerically, over a universe of just its inputs (as
//      `loom-rulegen --verify-rules` does); if either fails, the rule keeps
//      its original shapes -- if it is provable on its own there.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_GENERALIZE_H
#define LOOM_SUPEROPT_GENERALIZE_H

#include "loom/Superopt/Axioms.h"
#include "loom/Superopt/Graph.h"
#include "loom/Superopt/Prover.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace loom::superopt {

/// A rule restated at new witness shapes, over its own universe (the inputs
/// the rule uses, in the original order).
struct GeneralizedRule {
  std::shared_ptr<Universe> universe;
  Graph source, target;
  /// Axioms of the new proof.
  std::vector<std::string> axioms;
};

enum class GeneralizeOutcome {
  /// Restated at shapes with more independent dimensions, and re-proved.
  Generalized,
  /// The rule's dimensions are already as independent as its typing allows
  /// (or it has a constant of fixed shape).
  AlreadyGeneral,
  /// A more general statement type-checks but was not re-proved (or the
  /// numeric check failed): the original is kept.
  NotReproved,
  /// Not provable over a universe of its own inputs, at any of the shapes
  /// (it was proved in the generator's universe, whose other shapes give
  /// the prover more axiom instances): dropped, so that every rule of a
  /// rules file re-verifies on its own.
  NotProvableAlone,
};

struct GeneralizeResult {
  GeneralizeOutcome outcome = GeneralizeOutcome::AlreadyGeneral;
  std::optional<GeneralizedRule> rule;
  std::string reason;
};

/// Generalises the rule \p source = \p target over universe \p u (see the
/// file comment). \p axioms are every axiom, \p coreAxioms the names of
/// those the original proof used (tried first); proofs use \p prover. The
/// probing interns shapes in \p u: with threads, pass a mutex that guards
/// \p u (held while probing; the re-proof runs on a universe of its own).
GeneralizeResult generalizeRule(Universe &u, const Graph &source,
                                const Graph &target,
                                const std::vector<Axiom> &axioms,
                                const std::vector<std::string> &coreAxioms,
                                const ProverOptions &prover, uint64_t seed,
                                std::mutex *universeMutex = nullptr);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_GENERALIZE_H
