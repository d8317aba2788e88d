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

#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::superopt {

/// A key naming the Z3 function symbol of an operator application.
uint64_t symbolKey(OpKind kind, const OpAttrs &attrs,
                   llvm::ArrayRef<ShapeId> operands, unsigned result,
                   const ShapeTable &shapes);

/// Equations the prover may use: the instances of the axioms at the shapes
/// of a universe, and (for pruning) verified rules. Indexed for selection.
class AxiomBase {
public:
  /// An empty base (see addAxiom / addInstance).
  AxiomBase() = default;
  /// Instantiates \p axioms (indices into \p all) at the shapes \p shapes.
  AxiomBase(Universe &u, const std::vector<Axiom> &all,
            llvm::ArrayRef<unsigned> axioms, llvm::ArrayRef<ShapeId> shapes);

  /// Names an axiom (or rule) with variables \p vars; returns its index.
  unsigned addAxiom(std::string name, std::vector<std::string> vars);
  /// Adds an instance of axiom inst.axiom.
  void addInstance(AxiomInstance inst, const ShapeTable &shapes);

  llvm::ArrayRef<std::string> axiomNames() const { return names; }
  const std::vector<std::string> &varsOf(unsigned axiom) const {
    return vars[axiom];
  }
  const std::vector<AxiomInstance> &instances() const { return insts; }
  /// The function symbols (operator, attributes, operand shapes, result)
  /// of each side. An instance can only take part in a proof once the terms
  /// of one side exist, so the prover selects it when the symbols of one
  /// side are all in use.
  struct Footprint {
    llvm::SmallVector<uint64_t, 6> lhs, rhs;
  };
  const std::vector<Footprint> &footprints() const { return prints; }
  /// Instance sides (2 * instance + side) by their first symbol.
  llvm::ArrayRef<uint32_t> sidesStartingWith(uint64_t symbol) const {
    auto it = index.find(symbol);
    if (it == index.end())
      return {};
    return it->second;
  }

private:
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> vars;
  std::vector<AxiomInstance> insts;
  std::vector<Footprint> prints;
  llvm::DenseMap<uint64_t, std::vector<uint32_t>> index;
};

struct ProverOptions {
  /// Wall-clock limit per candidate (ms).
  unsigned timeoutMs = 10000;
  /// Z3 resource limit per candidate (deterministic).
  unsigned rlimit = 3000000;
  /// Rounds of instance selection tried after the first (each adds the
  /// instances the previous ones' terms cover); 0 tries the candidate's own
  /// terms only.
  unsigned extraRounds = 2;
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
  /// Proofs share one Z3 solver (each in its own scope) until the next
  /// startBatch(); a proof's outcome can depend on the proofs before it in
  /// its batch, so callers that want results independent of threads give
  /// each thread whole, fixed batches.
  ProofResult prove(const Graph &source, const Graph &target);
  /// Starts a new batch (a fresh solver).
  void startBatch();

  /// The equations "source output i = target output i" of a rule, as
  /// instances over the inputs the rule uses (universally quantified), for
  /// adding a rule to a base.
  static std::vector<AxiomInstance> ruleEquations(Universe &u,
                                                  const Graph &source,
                                                  const Graph &target,
                                                  unsigned axiom);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Proves \p source = \p target over \p u from \p axioms instantiated at
/// every shape \p u knows: first with the axioms named \p firstTry (those of
/// an earlier proof: a small base, a quick proof), then, if that fails, with
/// all of them.
ProofResult proveFromAxioms(Universe &u, const Graph &source,
                            const Graph &target,
                            const std::vector<Axiom> &axioms,
                            llvm::ArrayRef<std::string> firstTry,
                            const ProverOptions &options);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_PROVER_H
