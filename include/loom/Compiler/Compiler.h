//===- Compiler.h - The CPU compiler's driver -------------------*- C++ -*-===//
//
// Part of Loom. loom-compile's stages as reusable functions (as CIRCT's
// Firtool.h): prepare the tg module, form fragments, schedule each entry,
// generate its kernels, and write the artifact (docs/Artifact.md,
// docs/Compiler.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_COMPILER_H
#define LOOM_COMPILER_COMPILER_H

#include "loom/Compiler/Artifact.h"
#include "loom/Compiler/Schedule.h"
#include "loom/Support/PhaseTimer.h"
#include "loom/Support/SafeTensors.h"
#include "loom/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom::compiler {

/// The graph as given (docs/Artifact.md "The embedded source"): a module as
/// loom-compile read it, before any of its passes, printed without its
/// tg.weights attribute (loom-run --check interprets it with the artifact's
/// weights), and the names of the weights it reads.
struct GivenGraph {
  std::string text;
  std::vector<std::string> weights;
};

/// \p module as given (read only: a clone is printed).
std::shared_ptr<const GivenGraph> captureGivenGraph(mlir::ModuleOp module);

/// What an artifact embeds as its source, for loom-run --check: the graph
/// as given and the weights it reads (those the compile-time passes folded
/// away stored once more), the graph as compiled (after the passes; the
/// check then covers code generation and the runtime only), or nothing.
enum class EmbeddedSource { Given, Compiled, None };

struct CompileOptions {
  /// What the code is generated for (null: `cpu`, this machine).
  std::shared_ptr<const target::Target> target;
  /// "embedded" (in the .so) or "external" (a safetensors file beside it).
  std::string weightsStorage = "embedded";
  /// The backend list --tg-form-fragments forms fragments by
  /// (docs/Placement.md); empty: its default, conv:onednn,matmul:onednn,loomrt.
  std::string backends;
  /// When set, replaces --tg-form-fragments: adds the pass that places
  /// fragments over \p registry (loom-compile --backends=auto adds
  /// --tg-place-backends).
  std::function<void(mlir::OpPassManager &, const BackendRegistry &)>
      formFragments;
  /// The backends fragments are formed, placed and lowered with (null: the
  /// builtin ones).
  const BackendRegistry *registry = nullptr;

  /// The registry given, else the target's device's
  /// (BackendRegistry::forDevice: the CPU's builtin one, CUDA's codegen and
  /// cublas, Vulkan's codegen).
  const BackendRegistry &backendRegistry() const {
    if (registry)
      return *registry;
    const BackendRegistry *own =
        target ? BackendRegistry::forDevice(target->requirements().kind)
               : nullptr;
    return own ? *own : BackendRegistry::builtin();
  }
  /// When set, turns the manifest of one process (one device, every entry
  /// on it, a world of one rank) into the artifact's world before it is
  /// written: a partitioned module's ranks and their programs
  /// (include/loom/Pipeline/RankPrograms.h). Diagnoses its failures.
  std::function<mlir::LogicalResult(artifact::Manifest &)> world;
  /// Weights the artifact stores even where no entry reads them: the
  /// parameters a partitioned step's backward entries take as inputs.
  std::vector<std::string> parameters;
  /// Rewrite 3-D convolutions as sums of 2-D ones (--tg-conv3d-as-2d), which
  /// oneDNN and the vectorised generated convolutions run; false: they stay
  /// 3-D (linalg.conv_3d_ncdhw_fcdhw on generated code).
  bool conv3dAs2d = true;
  /// On a CPU target, take a channel concatenation apart where only
  /// convolutions read it (each convolves its operands and sums them) and
  /// pool before a concatenation instead of after it (--tg-conv-over-concat).
  bool convOverConcat = true;
  /// On a CPU target, concatenations whose operands are contiguous ranges
  /// of their result get no step: the operands are written in place
  /// (buildSchedule's concatInPlace; docs/Compiler.md).
  bool concatInPlace = true;
  /// Update state (an argument tied to a result: a decoder's cache) in place
  /// (ScheduleOptions::stateInPlace).
  bool stateInPlace = true;
  /// What the artifact embeds as its source (for loom-run --check).
  EmbeddedSource source = EmbeddedSource::Given;
  /// With EmbeddedSource::Given, the graph as given; null: the module
  /// compileToArtifact is handed, as it is before its passes. loom-compile
  /// sets it when it compiles rewritten versions of the module (--superopt,
  /// --pet), so that every version embeds the module it read.
  std::shared_ptr<const GivenGraph> given;
  /// When set, called on the module after the tg-level passes and fragment
  /// formation, before scheduling; a failure (diagnosed) stops the compile.
  /// (loom-compile's hidden --debug-plant-fault changes a folded constant
  /// there, a planted fault loom-run --check must catch: docs/Testing.md.)
  std::function<mlir::LogicalResult(mlir::ModuleOp)> afterPasses;
  /// Where to print the schedules (null: nowhere).
  llvm::raw_ostream *scheduleOut = nullptr;
  /// Where to write what each step computes, as JSON (stepSourcesJSON;
  /// null: nowhere).
  llvm::raw_ostream *stepSourcesOut = nullptr;
  /// Where to print timings of the stages (null: nowhere).
  llvm::raw_ostream *timingOut = nullptr;
  /// The timer a compile's phases nest under (loom-compile --time-phases):
  /// started and stopped by compileToArtifact, with a child per stage
  /// (fragments and kernels with one per pass, weights, object, link).
  /// Children may be nested from another thread (MLIR's timers merge them),
  /// so concurrent compiles each time under a timer of their own. A null
  /// timer (the default) times nothing.
  PhaseTimer timing;
  /// A directory to write the kernels into (empty: none): kernels.mlir as
  /// outlined, pipeline.txt the target's kernel pipeline as loom-opt spells
  /// it, kernels.lowered.mlir what that pipeline made of them.
  std::string dumpKernelsDir;
};

/// Adds the tg-level preparation (canonicalisation, batchnorm folding,
/// parameter folding with the weights \p weights) and --tg-form-fragments
/// to \p pm.
void buildFragmentPipeline(mlir::OpPassManager &pm,
                           const safetensors::File *weights,
                           const CompileOptions &options);

/// Adds to \p registry what compileToArtifact's pass pipelines for
/// \p options and \p target depend on: their dialects and the extensions
/// those bring (tg's lowering models to linalg, attached to tg's ops).
void registerCompileDependencies(mlir::DialectRegistry &registry,
                                 const CompileOptions &options,
                                 const target::Target &target);

/// Prepares \p context for compileToArtifact with \p options (or options
/// differing only in their target object) on several threads at once, each
/// with a target of its own: appends registerCompileDependencies' registry
/// to it, loads its dialects and registers the kernels' LLVM IR
/// translations, so that the compiles only read the shared context. (A pass
/// manager's run appends its pipeline's dependencies to the context: loads
/// dialects and applies the new extensions, attaching interfaces to ops;
/// done by one compile while another reads those ops, it corrupted the heap
/// of loom-compile, docs/Compiler.md.)
void prepareConcurrentCompiles(mlir::MLIRContext &context,
                               const CompileOptions &options);

/// Compiles every public function of \p module (tg ops, weights in
/// \p weights) into the artifact \p outputPath. Diagnoses every failure;
/// nothing is written when one occurs.
mlir::LogicalResult compileToArtifact(mlir::ModuleOp module,
                                      const safetensors::File *weights,
                                      const CompileOptions &options,
                                      llvm::StringRef outputPath);

} // namespace loom::compiler

#endif // LOOM_COMPILER_COMPILER_H
