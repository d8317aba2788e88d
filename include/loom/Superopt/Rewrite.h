//===- Rewrite.h - Deriving candidate rules by rewriting --------*- C++ -*-===//
//
// Part of Loom. Ruler's implication check, next to the prover's: the rules
// kept so far become rewrites, and a candidate rule follows from them when
// rewriting both of its sides in a small e-graph puts each source output in
// the class of its target output.
//
// The rewrites are typed exactly as the prover's rule equations are
// (Prover::ruleEquations): each output equation "source#i = target#i" of a
// proved rule holds for all tensors of its inputs' shapes, so an e-node is an
// operator at given attributes *and operand shapes* (the prover's function
// symbol), and a pattern variable matches only a class of its own shape.
// Every merge is then an instance of a proved equation, and a derivation is
// a proof: a rule dropped because it is derived follows from the kept ones.
// An equation is used left to right and right to left, wherever the side
// rewritten is not a bare variable and binds every variable of the other.
//
// The check is bounded (iterations and e-nodes): a candidate it does not
// derive may still be implied, so callers fall back to the prover.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_REWRITE_H
#define LOOM_SUPEROPT_REWRITE_H

#include "loom/Superopt/Graph.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace loom::superopt {

struct DeriveOptions {
  /// Rounds of matching every rewrite, then applying the matches.
  unsigned maxIterations = 4;
  /// The e-graph stops growing at this many e-nodes.
  unsigned maxNodes = 2000;
};

/// Proved rules as typed rewrites, and the e-graph check that a candidate
/// follows from them.
class RewriteBase {
public:
  explicit RewriteBase(Universe &u);
  ~RewriteBase();
  RewriteBase(const RewriteBase &) = delete;
  RewriteBase &operator=(const RewriteBase &) = delete;

  /// Adds the output equations of the proved rule \p source = \p target
  /// (typed in the universe) as rewrites, in the directions that can be
  /// applied. Not thread-safe.
  void addRule(const Graph &source, const Graph &target);
  /// The number of rewrites (equation directions).
  size_t size() const;

  /// Whether rewriting derives output i of \p source = output i of \p
  /// target for every i within \p options' bounds. Only reads the base:
  /// threads may call it at once (while no rule is being added).
  bool derives(const Graph &source, const Graph &target,
               const DeriveOptions &options = {}) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_REWRITE_H
