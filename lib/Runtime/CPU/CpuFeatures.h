//===- CpuFeatures.h - What this CPU has, and the level used ----*- C++ -*-===//
//
// Part of Loom. The x86-64 features this CPU has (cpuid, and XCR0 for the
// vector registers the OS saves), the instruction-set level the runtime uses
// (the CPU's, capped by LOOM_CPU_ISA: loom/Artifact/CpuIsa.h), and the check
// that an artifact's code runs here. Built in every libloomrt, with or
// without the CPU libraries.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPUFEATURES_H
#define LOOM_LIB_RUNTIME_CPUFEATURES_H

#include "Model.h"
#include "loom/Artifact/CpuIsa.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

/// The highest level this CPU and its OS support, whatever LOOM_CPU_ISA
/// says.
artifact::CpuIsa detectedCpuIsa();

/// LOOM_CPU_ISA's level; nullopt when it is unset, or set to another value
/// (then with one warning naming the values it takes).
std::optional<artifact::CpuIsa> cpuIsaCap();

/// The level the runtime's kernels and oneDNN use: detectedCpuIsa(), at
/// most cpuIsaCap(). Read once per process.
artifact::CpuIsa cpuIsa();

/// Fails naming the first feature of \p features (an artifact's, spelled as
/// LLVM spells them) this CPU lacks, or that LOOM_CPU_ISA's cap excludes.
Error checkCpuFeatures(const std::vector<std::string> &features);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_CPUFEATURES_H
