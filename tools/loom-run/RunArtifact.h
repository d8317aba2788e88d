//===- RunArtifact.h - loom-run on a compiled artifact ----------*- C++ -*-===//
//
// Part of Loom. See RunArtifact.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H
#define LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace loom::run {

struct ArtifactRunOptions {
  std::string path, entry, inputsFile, outputsFile, compareFile, weightsFile;
  uint64_t seed = 0;
  unsigned repeat = 1, threads = 0, printValues = 0;
  bool check = false;
  double tolerance = 1e-4;
};

/// Whether \p path starts like an ELF file (an artifact, or not Loom's).
bool isArtifact(llvm::StringRef path);

/// Runs an artifact; the exit status of loom-run.
int runArtifact(const ArtifactRunOptions &options);

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_RUNARTIFACT_H
