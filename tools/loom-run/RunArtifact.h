//===- RunArtifact.h - loom-run on a compiled artifact ----------*- C++ -*-===//
//
// Part of Loom. See RunArtifact.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H
#define LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H

#include "loom-c/Runtime.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace loom::run {

struct ArtifactRunOptions {
  std::string path, entry, inputsFile, outputsFile, compareFile, weightsFile;
  /// The device selector (loom_model_options.device); empty: the default.
  std::string device;
  uint64_t seed = 0;
  /// Untimed runs before the `repeat` timed ones.
  unsigned warmup = 0;
  unsigned repeat = 1, threads = 0, printValues = 0;
  bool check = false;
  double tolerance = 1e-4;
  /// A multi-rank artifact: the partitioned module it was compiled from,
  /// for --check (the reference executor's run); every wait's deadline.
  std::string reference;
  double timeout = 60;
  /// A multi-rank artifact: write the step profile here (empty: none).
  std::string stepProfile;
  /// Print the plan the runtime made at load (loom_entry_plan) of the
  /// entry (every entry when none is named), and run nothing.
  bool printPlan = false;
  /// State updated in place (an output tied to an input): carry it from
  /// run to run instead of starting every run from the given inputs.
  bool keepState = false;
};

/// What loom-run makes of a file, from its first bytes, whatever its name
/// (docs/tools/loom-run.md): an ELF file is an artifact (libloomrt then
/// refuses one that is not Loom's); MLIR bytecode, or text (valid UTF-8
/// with no control characters but tab, newline, carriage return and form
/// feed), is MLIR for the interpreter; anything else is foreign.
enum class InputKind { MLIR, Artifact, Foreign };

/// The kind of \p path ("-": MLIR from stdin; a file that cannot be read is
/// left to the MLIR parser, which reports it). For Foreign, \p why says
/// what the file is not.
InputKind classifyInput(llvm::StringRef path, std::string &why);

/// Runs an artifact; the exit status of loom-run.
int runArtifact(const ArtifactRunOptions &options);

/// Runs the pipelined step of a multi-rank artifact (RunStep.cpp); the
/// exit status of loom-run.
int runStep(const ArtifactRunOptions &options, loom_model *model);

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H
