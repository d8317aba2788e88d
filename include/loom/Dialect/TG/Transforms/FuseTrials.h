//===- FuseTrials.h - N training trials as one function ---------*- C++ -*-===//
//
// Part of Loom. --tg-fuse-trials (Hydro's inter-trial fusion): from a
// training step, or any function whose parameters are arguments, one
// function that computes N independent trials at once. Every per-trial value
// gains a leading trial dimension and each op is rewritten into its fused
// form (docs/Training.md, "Fusing trials"). checkFusedTrials runs the fused
// function against N separate runs on the reference interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_FUSETRIALS_H
#define LOOM_DIALECT_TG_TRANSFORMS_FUSETRIALS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace loom::tg {

struct FuseTrialsOptions {
  /// N: the trials computed by the fused function.
  int64_t trials = 2;
  /// Give the function's own inputs (the arguments that are neither
  /// parameter, optimizer state nor hyper-parameter) a trial dimension too;
  /// by default every trial sees the same inputs.
  bool perTrialInputs = false;
  /// Compute each convolution with a per-trial operand as N dense
  /// convolutions, one per trial, on the trial's contiguous slice of the
  /// [N, ...] form (a filter gradient's transpose with it), instead of one
  /// grouped convolution with the trials folded into the channels.
  bool perTrialConvolutions = false;
  /// Name of the new function (default: <function>_trials).
  std::string name;
  /// Test only: fuse tg.softmax over the original axis, not the shifted one
  /// (a wrong rule of the right type), so that the suite can check that
  /// checkFusedTrials catches a wrong rule.
  bool plantWrongRule = false;
};

/// Whether argument `index` of `fn` gains the trial dimension: parameters,
/// optimizer state and hyper-parameters (the argument attributes of
/// loom/Autodiff/Autodiff.h) always, the other arguments with
/// `perTrialInputs`.
bool isPerTrialArgument(mlir::func::FuncOp fn, unsigned index,
                        bool perTrialInputs);

/// Adds the fused function beside `fn` (whose float tg.weights are first
/// turned into parameter arguments) and returns it. Its arguments and
/// results are `fn`'s, with [N, ...] for each per-trial argument and every
/// result. An op with a per-trial operand and no fused form is an error at
/// that op; on failure nothing is added.
mlir::FailureOr<mlir::func::FuncOp> fuseTrials(mlir::func::FuncOp fn,
                                               const FuseTrialsOptions &options);

struct FusedTrialsCheckOptions {
  FuseTrialsOptions fuse;
  /// Steps run, each result fed back as the next step's argument of the same
  /// tg.name (a training step's parameters and state).
  int64_t steps = 10;
  uint64_t seed = 0;
};

/// One result of the fused function against the N separate runs.
struct FusedTrialsResult {
  std::string name;
  double largest = 0; // max |separate| over every trial
  double error = 0;   // max |fused - separate| over every trial
  /// error / max(largest, 1e-30).
  double relativeError() const;
};

/// Runs the fused function of `fn` and N separate runs of `fn` for
/// `options.steps` steps in f64 on the reference interpreter, from the same
/// random start: parameters and inputs random (seeded), optimizer state
/// zero, hyper-parameters different per trial (trial t's is the nominal
/// value times 1 - 0.5 t / N). Returns the comparison of the last step's
/// results; on failure a diagnostic has been emitted. `fn`'s module is not
/// changed (the work is done on a copy).
mlir::FailureOr<std::vector<FusedTrialsResult>>
checkFusedTrials(mlir::func::FuncOp fn, const FusedTrialsCheckOptions &options);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_FUSETRIALS_H
