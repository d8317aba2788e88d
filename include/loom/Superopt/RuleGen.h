//===- RuleGen.h - The rule generator pipeline ------------------*- C++ -*-===//
//
// Part of Loom. The whole of loom-rulegen as a library call, so that the
// tool, the benchmark and the tests run the same code:
//
//   axioms   check every axiom by bounded symbolic evaluation (in a thread
//            beside the enumeration); a wrong axiom stops the run
//   enumerate every graph up to K ops (+ P parameter ops), fingerprinted
//   prune    candidate pairs from equal fingerprints, minus those implied
//            by smaller rules or equal up to renaming
//   verify   a numeric check that finds counterexamples (rejected), then
//            Z3 proofs from the axioms (threads); a candidate with a side
//            of more than 3 ops is first derived, if it can be, by
//            rewriting with the smaller rules kept (Rewrite.h)
//   imply    smallest first, verified rules that follow from the rules
//            kept before them are dropped (Z3 for small rules, rewriting
//            for larger ones)
//   emit     the proved rules, sorted, as a rules module
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_RULEGEN_H
#define LOOM_SUPEROPT_RULEGEN_H

#include "loom/Superopt/AxiomChecker.h"
#include "loom/Superopt/Candidates.h"
#include "loom/Superopt/Prover.h"
#include "loom/Superopt/Rewrite.h"
#include "loom/Superopt/RuleSet.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace loom::superopt {

struct RuleGenOptions {
  std::string ops = "default";
  unsigned maxOps = 3;
  unsigned maxParamOps = 3;
  unsigned maxOutputs = 2;
  uint64_t seed = 1;
  unsigned threads = 2;
  /// Wall-clock backstop per candidate proof (ms).
  unsigned timeoutMs = 20000;
  /// Deterministic Z3 resource limit per candidate proof.
  unsigned rlimit = 3000000;
  /// Check the axioms by bounded symbolic evaluation first.
  bool checkAxioms = true;
  /// Restate proved rules at witness shapes with independent dimensions
  /// (Generalize.h).
  bool generalize = true;
  /// Candidates with a side of more than 3 ops: derive them by rewriting
  /// with the smaller rules kept before verifying them, and prune them by
  /// rewriting (Rewrite.h); false: verify and prune them with Z3 alone.
  bool rewriteImplication = true;
  DeriveOptions derive;
  /// Log every rule kept at its shapes because generalising it failed.
  bool showFailures = false;
  /// More axioms, in the axiom language ("name: lhs = rhs where ...").
  std::vector<std::string> extraAxioms;
  /// Progress and summary; null for silence.
  llvm::raw_ostream *log = nullptr;
};

struct StageSeconds {
  double axioms = 0, enumerate = 0, fingerprint = 0, prune = 0, verify = 0,
         implication = 0, generalize = 0, emit = 0, total = 0;
};

struct RuleGenStats {
  EnumerateStats enumeration;
  PruneStats prune;
  uint64_t verified = 0, rejected = 0, unproved = 0, timeouts = 0;
  /// Of the verified, larger candidates derived by rewriting with the
  /// smaller rules kept instead of proved from the axioms (they are also
  /// counted as implied).
  uint64_t verifiedByRewriting = 0;
  /// Verified rules that follow from smaller kept rules (pruned).
  uint64_t implied = 0;
  /// Of those, the ones derived by rewriting (no proof needed).
  uint64_t impliedByRewriting = 0;
  /// Final rules restated at more general witness shapes / already as
  /// general as their typing allows / kept at their shapes because the
  /// general statement was not re-proved.
  uint64_t generalized = 0, alreadyGeneral = 0, notReproved = 0,
           notProvableAlone = 0;
  /// Rules dropped at emission because generalisation made them identical
  /// to an earlier one (up to input names and roles).
  uint64_t duplicates = 0;
  uint64_t finalRules = 0;
  unsigned axioms = 0, axiomInstancesChecked = 0, axiomInstances = 0;
  StageSeconds seconds;
  /// Proved rules using each axiom.
  std::map<std::string, unsigned> axiomUses;
};

/// A candidate that was not proved.
struct Failure {
  std::string source, target;
  /// "rejected", "timeout" or "unproved".
  std::string status;
  std::string detail;
};

struct RuleGenResult {
  mlir::OwningOpRef<mlir::ModuleOp> rules;
  RuleGenStats stats;
  std::vector<AxiomCheckResult> axiomChecks;
  std::vector<Failure> failures;
};

/// Runs the generator. Errors: a bad option or op name, an axiom that does
/// not parse, an axiom that the bounded check refutes (with its
/// counterexample).
llvm::Expected<RuleGenResult> generateRules(mlir::MLIRContext *context,
                                            const RuleGenOptions &options);

/// Writes the statistics as JSON.
void writeStatsJson(llvm::raw_ostream &os, const RuleGenOptions &options,
                    const RuleGenStats &stats);

/// Looks for inputs on which \p a and \p b differ, evaluating both in
/// doubles on \p trials random inputs (uniform in [-1, 1), shifted by -1, 0
/// or +1 per input after the first trial; non-negative for variances).
/// Returns a description of the difference, or nothing if none was found.
std::optional<std::string> numericCounterexample(const Universe &u,
                                                 const Graph &a, const Graph &b,
                                                 uint64_t seed,
                                                 unsigned trials = 8);

/// The result of re-verifying one rule of a rules file.
struct RuleVerdict {
  std::string name;
  std::string status; ///< "proved", "rejected", "timeout", "unproved"
  std::vector<std::string> axioms;
  std::string detail;
};

/// Proves and numerically checks every rule of \p rules from the built-in
/// (plus \p extraAxioms) axioms; fails (with a diagnostic) on a malformed
/// file.
mlir::FailureOr<std::vector<RuleVerdict>>
verifyRules(mlir::ModuleOp rules, const RuleGenOptions &options);

/// The built-in axioms plus \p extra (parsed).
llvm::Expected<std::vector<Axiom>>
axiomsWith(llvm::ArrayRef<std::string> extra);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_RULEGEN_H
