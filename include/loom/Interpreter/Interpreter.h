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
int64_t checkedNumElements(llvm::ArrayRef<int64_t> shape);

} // namespace loom::interp

#endif // LOOM_INTERPRETER_INTERPRETER_H
