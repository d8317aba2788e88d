//===- AxiomChecker.h - Bounded symbolic proofs of the axioms ---*- C++ -*-===//
//
// Part of Loom. Checks each axiom the way the prover cannot: by computing
// both sides element by element over real-valued symbolic inputs (Z3Domain,
// the interpreter's own kernels) at every concrete shape up to the axiom's
// bound, and proving each element pair equal with Z3. A wrong axiom yields a
// counterexample: real inputs and the element where the two sides differ.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_AXIOMCHECKER_H
#define LOOM_SUPEROPT_AXIOMCHECKER_H

#include "loom/Superopt/Axioms.h"

#include <string>
#include <vector>

namespace loom::superopt {

struct AxiomCheckOptions {
  unsigned threads = 2;
  /// Z3 time limit per shape instance (ms).
  unsigned timeoutMs = 20000;
};

struct AxiomCheckResult {
  std::string name;
  /// Shape instances checked.
  unsigned instances = 0;
  bool proved = true;
  /// For a failed axiom: the instance's shapes and the counterexample (or
  /// why Z3 could not decide).
  std::string failure;
  double seconds = 0;
};

/// Checks \p axioms (indices into \p all) over their bounded shape ranges.
std::vector<AxiomCheckResult>
checkAxioms(const std::vector<Axiom> &all, llvm::ArrayRef<unsigned> axioms,
            Universe &u, const AxiomCheckOptions &options);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_AXIOMCHECKER_H
