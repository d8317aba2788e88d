//===- Interpreter.h - Reference interpreter for tg -------------*- C++ -*-===//
//
// Part of Loom. Evaluates a func.func of tg ops on the CPU, generic over the
// number domain (F32Domain, F64Domain, ModPDomain). It is the oracle every
// later part of Loom is checked against. The semantics of each op live in
// Kernels.h; this layer reads attributes, loads weights, manages values and
// reports run-time errors as diagnostics at the failing op.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_INTERPRETER_H
#define LOOM_INTERPRETER_INTERPRETER_H

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Tensor.h"
#include "loom/Support/Shapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::interp {

struct InterpreterOptions {
  /// Safetensors file for tg.weight; empty: the module's `tg.weights`.
  std::string weightsFile;
  /// Largest tensor (in elements) the interpreter will allocate; a bigger
  /// result is a diagnostic, not an out-of-memory crash.
  int64_t maxElements = int64_t(1) << 28;
  /// Largest call depth of func.call chains.
  unsigned maxCallDepth = 64;
  /// Record time per op name.
  bool profile = false;
};

/// Time spent in one kind of op.
struct OpProfile {
  int64_t count = 0;
  double seconds = 0;
};

template <class D> class Interpreter {
public:
  Interpreter(mlir::ModuleOp module, InterpreterOptions options = {});
  ~Interpreter();

  /// Runs `fn` on `args` (one tensor per argument, shapes must match the
  /// signature). On failure a diagnostic has been emitted.
  mlir::FailureOr<std::vector<Tensor<D>>> run(mlir::func::FuncOp fn,
                                             llvm::ArrayRef<Tensor<D>> args);

  /// Per op name, when options.profile is set.
  const llvm::StringMap<OpProfile> &profile() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

extern template class Interpreter<F32Domain>;
extern template class Interpreter<F64Domain>;
extern template class Interpreter<ModPDomain>;

/// Number of elements of a shape, or -1 on overflow or a negative dim.
using loom::checkedNumElements;

/// Upper bound of random integer values for function argument \p arg: 2
/// for i1; the smallest gathered axis when it indexes tg.gather ops; else 10.
int64_t randomIntegerBound(mlir::BlockArgument arg);

/// A random value for function argument \p arg (a statically shaped
/// tensor) drawn from \p seed and the argument's position: integers
/// uniform in [0, randomIntegerBound(arg)), floats as Tensor::random. What
/// loom-run feeds a function without --inputs, and what tg-superopt's
/// check=true compares on.
template <class D>
Tensor<D> randomArgument(mlir::BlockArgument arg, uint64_t seed) {
  auto type = mlir::cast<mlir::RankedTensorType>(arg.getType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  uint64_t state = seed + 7919 * (arg.getArgNumber() + 1);
  if (!type.getElementType().isInteger())
    return Tensor<D>::random(shape, state);
  int64_t bound = randomIntegerBound(arg);
  std::vector<double> values(type.getNumElements());
  for (double &v : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = double((state >> 33) % uint64_t(bound));
  }
  return Tensor<D>::fromDoubles(shape, values);
}

} // namespace loom::interp

#endif // LOOM_INTERPRETER_INTERPRETER_H
