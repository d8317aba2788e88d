//===- Artifact.h - Writing the CPU artifact --------------------*- C++ -*-===//
//
// Part of Loom. Turns compiled kernels (an LLVM module), the manifest, the
// weights and the source module into one shared object as docs/Artifact.md
// specifies: sections .loom_manifest, .loom_weights, .loom_source, a GPU
// device's .loom_image_<device>, the kernel table and the exported
// loom_artifact_v1 descriptor, compiled by LLVM's TargetMachine and linked with
// the weights' own object (WeightsObject.h), ld.lld and compiler-rt's
// builtins; it imports only what
// include/loom/Artifact/Imports.def lists (ArtifactImports.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_ARTIFACT_H
#define LOOM_COMPILER_ARTIFACT_H

#include "loom/Support/SafeTensors.h"

#include "mlir/Support/Timing.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::compiler {

/// What goes into the artifact.
struct ArtifactContents {
  /// The manifest JSON text.
  std::string manifest;
  /// The tg module the artifact comes from (MLIR text).
  std::string source;
  /// The safetensors file to embed (written from where its tensors are,
  /// WeightsObject.h); null when the weights are external or there are
  /// none.
  const safetensors::Writer *embeddedWeights = nullptr;
  /// The kernels: functions `void name(void *const *, int64_t, int64_t)`
  /// (may be null when there are none), and their names in table order.
  std::unique_ptr<llvm::Module> kernels;
  std::vector<std::string> kernelNames;
  /// A GPU device's image (docs/Artifact.md) and the ELF section it goes
  /// into (`.loom_image_<device>`); empty when the device has none.
  std::string image, imageSection;
  /// The device features the image requires (EmittedKernels::imageFeatures).
  std::vector<std::string> imageFeatures;
};

/// Writes the artifact to \p outputPath, its code compiled by \p tm (the
/// target's host machine, include/loom/Target/Target.h). \p context owns
/// contents.kernels' types. Errors name the step that failed (object
/// emission, linking, an import no runtime provides: nothing is written). Its phases (the LLVM optimisation of the kernels,
/// object emission, linking) nest under \p timing (a null timer: untimed).
llvm::Error writeArtifact(ArtifactContents &contents,
                          llvm::LLVMContext &context, llvm::TargetMachine &tm,
                          llvm::StringRef outputPath,
                          mlir::Timer timing = {});

} // namespace loom::compiler

#endif // LOOM_COMPILER_ARTIFACT_H
