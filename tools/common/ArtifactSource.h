//===- ArtifactSource.h - An artifact's source, interpreted ----*- C++ -*-===//
//
// Part of Loom. The tg module an artifact embeds (loom_model_source,
// docs/Artifact.md "The embedded source"), parsed, and the reference
// interpreter running its functions with the artifact's own weights: what
// loom-run --check and loom-generate --check compare the artifact with.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_COMMON_ARTIFACTSOURCE_H
#define LOOM_TOOLS_COMMON_ARTIFACTSOURCE_H

#include "loom-c/Runtime.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <vector>

namespace loom::tools {

/// The artifact's embedded source, parsed.
struct ArtifactSource {
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  /// The module's function \p name, or null.
  mlir::func::FuncOp function(llvm::StringRef name) {
    return module->lookupSymbol<mlir::func::FuncOp>(name);
  }
};

/// The embedded source of \p model, parsed; null when the artifact embeds
/// none (compiled with --source none) or it does not parse.
std::unique_ptr<ArtifactSource> parseArtifactSource(const loom_model *model);

using RefTensor = interp::Tensor<interp::F32Domain>;

/// The interpreter on \p source with \p model's weights, which it writes
/// to a temporary file for its whole life (the interpreter reads weights
/// from a file). One object runs any number of functions, any number of
/// times.
class SourceInterpreter {
public:
  static llvm::Expected<std::unique_ptr<SourceInterpreter>>
  create(const loom_model *model, ArtifactSource &source);
  ~SourceInterpreter();

  mlir::FailureOr<std::vector<RefTensor>> run(mlir::func::FuncOp fn,
                                              llvm::ArrayRef<RefTensor> args);

private:
  SourceInterpreter() = default;
  llvm::SmallString<128> weightsPath;
  std::unique_ptr<interp::Interpreter<interp::F32Domain>> interpreter;
};

} // namespace loom::tools

#endif // LOOM_TOOLS_COMMON_ARTIFACTSOURCE_H
