//===- Artifact.h - Writing the CPU artifact --------------------*- C++ -*-===//
//
// Part of Loom. Turns compiled kernels (an LLVM module), the manifest, the
// weights and the source module into one shared object as docs/Artifact.md
// specifies: sections .loom_manifest, .loom_weights, .loom_source, the
// kernel table and the exported loom_artifact_v1 descriptor, compiled by
// LLVM's TargetMachine and linked with ld.lld.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_ARTIFACT_H
#define LOOM_COMPILER_ARTIFACT_H

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::compiler {

/// The machine the artifact's code is generated for.
struct TargetSpec {
  /// A CPU name LLVM knows (znver3, skylake-avx512, x86-64-v3, ...); empty or
  /// "native" means the host's CPU and features.
  std::string cpu;
};

/// An LLVM target machine for \p spec (x86-64 Linux, PIC, -O3).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetSpec &spec);

/// The ISA features \p tm's code may use that a CPU can lack (avx2, fma,
/// avx512f, ...), with the spellings of __builtin_cpu_supports: what the
/// runtime checks before loading the code.
std::vector<std::string> requiredFeatures(const llvm::TargetMachine &tm);

/// What goes into the artifact.
struct ArtifactContents {
  /// The manifest JSON text.
  std::string manifest;
  /// The tg module the artifact comes from (MLIR text).
  std::string source;
  /// Safetensors bytes to embed; empty when the weights are external or
  /// there are none.
  std::string embeddedWeights;
  /// The kernels: functions `void name(void *const *, int64_t, int64_t)`
  /// (may be null when there are none), and their names in table order.
  std::unique_ptr<llvm::Module> kernels;
  std::vector<std::string> kernelNames;
};

/// Writes the artifact to \p outputPath. \p context owns contents.kernels'
/// types. Errors name the step that failed (object emission, linking).
llvm::Error writeArtifact(ArtifactContents &contents,
                          llvm::LLVMContext &context, llvm::TargetMachine &tm,
                          llvm::StringRef outputPath);

} // namespace loom::compiler

#endif // LOOM_COMPILER_ARTIFACT_H
