//===- CompiledRun.h - A conformance case through loom-compile --*- C++ -*-===//
//
// Part of Loom. The compiled column of loom-onnx-conformance: an imported
// case compiled to an artifact by the CPU compiler (as loom-compile does)
// and run by libloomrt (as loom-run does).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_CONFORMANCE_COMPILEDRUN_H
#define LOOM_TOOLS_CONFORMANCE_COMPILEDRUN_H

#include "loom/Conversion/ONNXToTG/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace loom::conformance {

/// One result of a compiled run, as doubles.
struct CompiledOutput {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// Compiles \p module (its weights in \p weightsPath) into an artifact in a
/// temporary directory, loads it with libloomrt on one thread, and runs its
/// entry on \p inputs. \p backendSet is a fixed backend set as
/// loom-compile --backends takes it (empty: the default backends);
/// \p targetSpelling the target as loom-compile --target spells it (empty:
/// `cpu`, this machine; an unknown one is an error). A compile failure is
/// an error whose message is "compile failed" (the diagnostics went to the
/// context's handler).
llvm::Expected<std::vector<CompiledOutput>>
compileAndRun(mlir::ModuleOp module, llvm::StringRef weightsPath,
              const std::vector<ONNXTensor> &inputs,
              llvm::StringRef backendSet = "",
              llvm::StringRef targetSpelling = "");

} // namespace loom::conformance

#endif // LOOM_TOOLS_CONFORMANCE_COMPILEDRUN_H
