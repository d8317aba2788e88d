//===- TrialRules.h - The fused-trial rules as checked equations -*- C++ -*-===//
//
// Part of Loom. The rules of --tg-fuse-trials (docs/Training.md, "Fusing
// trials") that the rule generator's vocabulary can state, for two trials,
// each an equation "the fused op on the trials' values, stacked as the pass
// stacks them = the trials' own results, stacked": per-trial values of shape
// S are the slices [1, S] of a concatenation on axis 0 (the leading trial
// axis), and after a convolution the trials are folded into the channels
// (axis 1). Each is checked like an axiom of the rule generator
// (AxiomChecker.h): both sides computed by the interpreter's kernels over Z3
// reals at every shape of its bounded range and proved equal for all real
// inputs. The rules the vocabulary cannot state (its matmul takes a rank-2
// right operand; it has no reductions, reshapes, strides or dilations) are
// checked against the interpreter instead (loom-run --check-trials).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_TRIALRULES_H
#define LOOM_SUPEROPT_TRIALRULES_H

#include "loom/Superopt/Axioms.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace loom::superopt {

/// The fused-trial rules, parsed, then each of `extra` (same language, for
/// checking a rule given on the command line); a name used twice is an
/// error.
llvm::Expected<std::vector<Axiom>>
trialFusionRules(llvm::ArrayRef<std::string> extra = {});

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_TRIALRULES_H
