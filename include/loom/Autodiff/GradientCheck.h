//===- GradientCheck.h - Autodiff against finite differences ----*- C++ -*-===//
//
// Part of Loom. `loom-run --check-gradients` and the suite's gradient tests:
// the gradient --tg-autodiff builds for a scalar function, evaluated by the
// reference interpreter in f64, against central finite differences of the
// function itself.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_GRADIENTCHECK_H
#define LOOM_AUTODIFF_GRADIENTCHECK_H

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace loom::tg::autodiff {

struct GradientCheckOptions {
  /// Elements checked per tensor (all of a smaller tensor; a seeded random
  /// sample of a larger one).
  int64_t samplesPerTensor = 64;
  /// Tensors checked (0: all; else a seeded random choice of this many,
  /// always with the first and the last: a deep model's earliest weights
  /// take their gradient through every VJP on the way).
  int64_t tensors = 0;
  uint64_t seed = 0;
  /// The difference step, relative: h = step * max(1, |x|).
  double step = 1e-5;
  /// Check tg.batchnorm in its training form (batch statistics), as a
  /// training step computes it, instead of as written.
  bool batchnormTraining = false;
  /// Safetensors file of the tg.weights (default: the module's tg.weights).
  std::string weightsFile;
};

struct TensorGradientCheck {
  std::string name;      // tg.name of the argument or the weight's name
  int64_t elements = 0;  // of the tensor
  int64_t checked = 0;   // elements compared
  double largestGradient = 0; // max |finite difference| over those
  double largestError = 0;    // max |autodiff - finite difference|
  /// 1e-3 of the largest |finite difference| over all tensors checked: the
  /// scale below which a tensor's gradient counts as zero (the key bias of
  /// attention has a gradient that is exactly zero; its differences are
  /// rounding noise).
  double floor = 1e-12;
  /// largestError / max(largestGradient, floor).
  double relativeError() const;
};

/// Checks the gradient of `fn` with respect to every float argument and
/// every float tg.weight, on `args` (one per argument). A function with
/// other results than one scalar float is checked through the scalar
/// sum_i sum(result_i * c_i) with fixed random c_i: one vector-Jacobian
/// product with a random vector. On failure a diagnostic has been emitted. `fn`'s module is
/// not changed (the work is done on a copy).
mlir::FailureOr<std::vector<TensorGradientCheck>>
checkGradients(mlir::func::FuncOp fn,
               llvm::ArrayRef<interp::Tensor<interp::F64Domain>> args,
               const GradientCheckOptions &options);

} // namespace loom::tg::autodiff

#endif // LOOM_AUTODIFF_GRADIENTCHECK_H
