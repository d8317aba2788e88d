//===- CpuIsa.h - x86-64 instruction-set levels and their cap ---*- C++ -*-===//
//
// Part of Loom. The levels of x86-64 vector instructions that Loom's CPU code
// is written for, defined once for the compiler (the host target's
// features, lib/Target/CPUTarget.cpp) and the runtime (the table of
// hand-written kernels, lib/Runtime/CPU/Kernels/CpuKernels.cpp, and the features an
// artifact may need, lib/Runtime/CPU/CpuFeatures.cpp); header-only, as
// libloomrt has no LLVM.
//
// LOOM_CPU_ISA caps the level both use, so that an AVX-512 machine runs the
// paths an AVX2 one runs (docs/Runtime.md, "CPU instruction sets"): the
// host target compiles without AVX-512, the runtime's kernel table holds the
// AVX2 forms, oneDNN is capped alike, and an artifact that needs a feature
// above the cap is refused as on a CPU without it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ARTIFACT_CPUISA_H
#define LOOM_ARTIFACT_CPUISA_H

#include <optional>
#include <string_view>

namespace loom::artifact {

/// The levels, in order: each includes the ones before it.
enum class CpuIsa {
  /// x86-64-v2: SSE4.2, POPCNT; no AVX.
  Sse42,
  /// x86-64-v3: AVX, AVX2, FMA, F16C, BMI1/2.
  Avx2,
  /// x86-64-v4: AVX-512 F, BW, DQ, VL (and the AVX-512 extensions the CPU
  /// has).
  Avx512,
};

/// The environment variable that caps the level.
inline constexpr const char *kCpuIsaVariable = "LOOM_CPU_ISA";

/// The name of \p isa as LOOM_CPU_ISA spells it.
inline constexpr std::string_view cpuIsaName(CpuIsa isa) {
  switch (isa) {
  case CpuIsa::Sse42:
    return "sse4.2";
  case CpuIsa::Avx2:
    return "avx2";
  case CpuIsa::Avx512:
    return "avx512";
  }
  return "?";
}

/// The values LOOM_CPU_ISA takes, for messages.
inline constexpr const char *kCpuIsaValues = "sse4.2, avx2, avx512";

/// The level named \p name (cpuIsaName), or nullopt.
inline std::optional<CpuIsa> parseCpuIsa(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::Sse42, CpuIsa::Avx2, CpuIsa::Avx512})
    if (cpuIsaName(isa) == name)
      return isa;
  return std::nullopt;
}

/// The least level that has the ISA feature \p feature (spelled as LLVM and
/// __builtin_cpu_supports spell it: avx2, fma, avx512f, avx512bf16, ...):
/// AVX-512 and AMX features need Avx512, the other AVX-encoded ones (avx,
/// avx2, fma, f16c, bmi, bmi2, avxvnni, ...) Avx2, the rest (sse4.2,
/// popcnt, ...) none above the baseline.
inline CpuIsa cpuIsaOfFeature(std::string_view feature) {
  auto startsWith = [&](std::string_view prefix) {
    return feature.substr(0, prefix.size()) == prefix;
  };
  if (startsWith("avx512") || startsWith("avx10") || startsWith("amx") ||
      feature == "evex512")
    return CpuIsa::Avx512;
  if (startsWith("avx") || feature == "fma" || feature == "f16c" ||
      feature == "bmi" || feature == "bmi2" || feature == "vaes" ||
      feature == "vpclmulqdq" || feature == "gfni" || feature == "lzcnt" ||
      feature == "movbe")
    return CpuIsa::Avx2;
  return CpuIsa::Sse42;
}

/// Whether a CPU capped at \p cap may use \p feature.
inline bool cpuIsaAllows(CpuIsa cap, std::string_view feature) {
  return cpuIsaOfFeature(feature) <= cap;
}

} // namespace loom::artifact

#endif // LOOM_ARTIFACT_CPUISA_H
