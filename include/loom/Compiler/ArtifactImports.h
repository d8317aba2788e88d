//===- ArtifactImports.h - What an artifact may import ----------*- C++ -*-===//
//
// Part of Loom. The check that an artifact loads: every undefined symbol of
// its shared object is one the runtime's process provides, the list of
// include/loom/Artifact/Imports.def (docs/Artifact.md, "What an artifact
// imports"). writeArtifact runs it on what ld.lld wrote, so an artifact that
// dlopen would refuse (`undefined symbol: __truncsfbf2`) is never written.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_ARTIFACTIMPORTS_H
#define LOOM_COMPILER_ARTIFACTIMPORTS_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <string>
#include <vector>

namespace loom::compiler {

/// Whether an artifact may import \p symbol (Imports.def).
bool isArtifactImport(llvm::StringRef symbol);

/// The undefined symbols of the dynamic symbol table of the ELF shared
/// object \p object, sorted, each once; an error when \p object is not an
/// ELF file LLVM reads.
llvm::Expected<std::vector<std::string>>
undefinedDynamicSymbols(llvm::MemoryBufferRef object);

/// Success when every undefined dynamic symbol of \p object is an artifact
/// import; else an error naming each that is not.
llvm::Error checkArtifactImports(llvm::MemoryBufferRef object);

} // namespace loom::compiler

#endif // LOOM_COMPILER_ARTIFACTIMPORTS_H
