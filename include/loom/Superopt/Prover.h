//===- Prover.h - Proving candidate rules from the axioms -------*- C++ -*-===//
//
// Part of Loom. TASO's verification, with one change that makes it sound:
// tensors are uninterpreted, but *typed*. Each concrete shape is its own Z3
// sort, each operator at given attributes and operand shapes its own
// uninterpreted function between those sorts, and each axiom is asserted,
// universally quantified, at every combination of shapes (of the universe)
// where its left side is well-typed. An ill-typed term cannot be written, so
// no axiom is ever applied where it does not hold, and the real tensors of
// each shape form a model of every asserted formula (that is what the
// axiom checker establishes, up to its bound): a proof is a proof.
//
// A candidate is proved when Z3 shows, from the axioms, that each source
// output equals its target output (the negation is unsatisfiable). The axioms
// in the unsat core are reported as those the proof used. Z3 runs with a
// deterministic resource limit (rlimit) and a wall-clock timeout as a
// backstop; running out of either is reported as a timeout, never as a
// proof, and "unknown" (E-matching saturated without a proof) is reported
// as unproved.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_PROVER_H
#define LOOM_SUPEROPT_PROVER_H

#include "loom/Superopt/Axioms.h"
#include "loom/Superopt/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::superopt {

/// Every axiom instance at the shapes of a universe, indexed for selection.
class AxiomBase {
public:
  /// Instantiates \p axioms (indices into \p all) at the shapes \p shapes.
  AxiomBase(Universe &u, const std::vector<Axiom> &all,
            llvm::ArrayRef<unsigned> axioms, llvm::ArrayRef<ShapeId> shapes);

  const std::vector<Axiom> &axioms() const { return all; }
  const std::vector<AxiomInstance> &instances() const { return insts; }
  /// Shapes of the variables, and of every subterm of each side.
  struct Footprint {
    llvm::SmallVector<ShapeId, 6> vars, lhs, rhs;
  };
  const std::vector<Footprint> &footprints() const { return prints; }

private:
  const std::vector<Axiom> &all;
  std::vector<AxiomInstance> insts;
  std::vector<Footprint> prints;
};

struct ProverOptions {
  /// Wall-clock limit per candidate (ms).
  unsigned timeoutMs = 10000;
  /// Z3 resource limit per candidate (deterministic).
  unsigned rlimit = 3000000;
};

enum class ProofStatus { Proved, Unproved, Timeout };

struct ProofResult {
  ProofStatus status = ProofStatus::Unproved;
  /// Names of the axioms of the unsat core (sorted).
  std::vector<std::string> axioms;
  std::string reason;
  double seconds = 0;
};

/// Proves candidates; one per thread (it owns a Z3 context).
class Prover {
public:
  Prover(Universe &u, const AxiomBase &base, ProverOptions options);
  ~Prover();

  /// Proves that output i of \p source equals output i of \p target.
  ProofResult prove(const Graph &source, const Graph &target);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_PROVER_H
