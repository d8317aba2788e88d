//===- Autodiff.h - Reverse-mode differentiation of tg functions -*- C++ -*-===//
//
// Part of Loom. From a function whose single result is a scalar loss,
// builds a function that computes the loss, the gradients and (with an
// optimizer) the updated parameters and optimizer state; everything is
// ordinary tg (docs/Training.md). The vector-Jacobian product of each op is
// its GradientOpInterface model (lib/Autodiff/<Family>.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_AUTODIFF_H
#define LOOM_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <optional>
#include <string>

namespace loom::tg {

/// Attaches the VJP of every differentiable tg op (once per context; a model
/// attached before, e.g. a planted faulty one in a test, is kept).
void registerTGGradientInterfaceModels(mlir::DialectRegistry &registry);

namespace autodiff {

/// A tg op with no vector-Jacobian product, and why.
struct NoGradient {
  llvm::StringRef op;
  llvm::StringRef reason;
};

/// The tg ops that have no GradientOpInterface model, each with the reason:
/// the one list that `--tg-autodiff` reports from and that
/// test/Unit/Dialect/TG/OpFactsTest.cpp checks (every other tg op has a
/// VJP; none of these has one).
llvm::ArrayRef<NoGradient> opsWithoutGradient();

/// The reason \p opName has no VJP, or nullopt when it is not listed.
std::optional<llvm::StringRef> noGradientReason(llvm::StringRef opName);

/// Argument attributes of a training step (and of a function whose weights
/// became arguments) that say what an argument is: a parameter (unit), an
/// optimizer state tensor (unit, zero at the start), or a hyper-parameter
/// (its nominal value, f64). The function's own inputs have none.
inline constexpr llvm::StringLiteral kParameterAttr = "tg.parameter";
inline constexpr llvm::StringLiteral kOptimizerStateAttr = "tg.optimizer_state";
inline constexpr llvm::StringLiteral kHyperParameterAttr = "tg.hyper_parameter";

enum class Optimizer { None, SGD, Adam };

struct Options {
  Optimizer optimizer = Optimizer::None;
  double learningRate = 0.01;
  double momentum = 0.0;     // SGD
  double beta1 = 0.9;        // Adam
  double beta2 = 0.999;      // Adam
  double epsilon = 1e-8;     // Adam
  double weightDecay = 0.0;  // L2, added to the gradient (both optimizers)
  /// Take the hyper-parameters (lr; momentum for SGD when not 0; beta1 and
  /// beta2 for Adam; weight_decay when not 0) as scalar f32 arguments after
  /// the parameters (kHyperParameterAttr = the value above, their nominal
  /// value) instead of constants: what --tg-fuse-trials makes per trial.
  bool hyperParameterArguments = false;
  /// Also differentiate with respect to the function's own float arguments
  /// (their gradients come first among the results; optimizer None only).
  bool wrtArguments = false;
  /// Rewrite tg.batchnorm into batch statistics (training form) first.
  bool batchnormTraining = true;
  /// Forward ops of these kinds whose results the backward pass uses are
  /// recomputed there instead of kept: "none", "elementwise" (the ops that
  /// declare TG_CheapToRecompute in TGOps.td: cheap to redo, as large as
  /// their input).
  std::string recompute = "none";
  /// Name of the new function; empty: <fn>_train_step, or <fn>_grad for
  /// optimizer None.
  std::string name;
};

/// The function named `name`, or the module's only function when `name` is
/// empty; else an error at the module that starts with `pass`.
mlir::FailureOr<mlir::func::FuncOp>
findFunction(mlir::ModuleOp module, llvm::StringRef name, llvm::StringRef pass);

/// Turns every float tg.weight of `fn` into a trailing argument (tg.name =
/// the weight's name), in order of first use; returns the names.
llvm::SmallVector<std::string> weightsToArguments(mlir::func::FuncOp fn);

/// Rewrites every tg.batchnorm of `fn` into its training form: the batch's
/// mean and biased variance over every dimension but the channel.
void batchnormToTraining(mlir::func::FuncOp fn);

/// Builds the training-step (or gradient) function of `fn` beside it in its
/// module. Arguments: fn's, then one per parameter (fn's float tg.weights,
/// in order of first use), then the optimizer state (Adam: NAME.m for every
/// parameter, then NAME.v, then `adam.step`; SGD with momentum:
/// NAME.velocity). Results: the loss, then (optimizer None) the gradient of
/// every float argument when wrtArguments, and of every parameter, or (with
/// an optimizer) the updated parameters and state, named as their inputs.
/// On failure a diagnostic has been emitted and the module is unchanged.
mlir::FailureOr<mlir::func::FuncOp> buildTrainStep(mlir::func::FuncOp fn,
                                                   const Options &options);

} // namespace autodiff
} // namespace loom::tg

#endif // LOOM_AUTODIFF_AUTODIFF_H
