//===- WeightsObject.h - The embedded weights as an object file -*- C++ -*-===//
//
// Part of Loom. An artifact's embedded weights (docs/Artifact.md, section
// .loom_weights) go into a relocatable ELF object of their own, written
// straight from the compile's safetensors writer to the file and linked
// beside the kernels' object: the weights are never assembled in memory
// (LLVM's integrated assembler, given them with .incbin, held two copies,
// 4.3 GB for a 2.3 GB file), and the section's size is not limited to the
// assembler's 32 bits.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_WEIGHTSOBJECT_H
#define LOOM_COMPILER_WEIGHTSOBJECT_H

#include "loom/Support/SafeTensors.h"

#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace loom::compiler {

/// The symbol at the start of the section, hidden: the artifact's
/// descriptor points at it.
inline constexpr const char *kWeightsSymbol = "__loom_weights";

/// Writes to \p path a relocatable ELF object for \p triple (x86-64 or
/// AArch64, little-endian) holding \p weights' file in an allocated,
/// read-only section .loom_weights aligned to 64 bytes, with the hidden
/// global symbol kWeightsSymbol at its start. Errors: another target, or a
/// failed write (then nothing is left at \p path).
llvm::Error writeWeightsObject(const safetensors::Writer &weights,
                               const llvm::Triple &triple,
                               llvm::StringRef path);

} // namespace loom::compiler

#endif // LOOM_COMPILER_WEIGHTSOBJECT_H
