//===- CpuFeatures.cpp - What this CPU has, and the level used ------------===//
//
// Part of Loom. See CpuFeatures.h.
//
//===----------------------------------------------------------------------===//

#include "CPU/CpuFeatures.h"
#include "Environment.h"

#include <cpuid.h>

using namespace loom::rt;
namespace art = loom::artifact;

namespace {

struct CpuFeature {
  const char *name;
  unsigned leaf, subleaf;
  enum Reg { EAX, EBX, ECX, EDX } reg;
  unsigned bit;
};

/// The features LLVM may record for x86-64 targets loom-compile supports.
const CpuFeature kFeatures[] = {
    {"sse", 1, 0, CpuFeature::EDX, 25},
    {"sse2", 1, 0, CpuFeature::EDX, 26},
    {"sse3", 1, 0, CpuFeature::ECX, 0},
    {"ssse3", 1, 0, CpuFeature::ECX, 9},
    {"fma", 1, 0, CpuFeature::ECX, 12},
    {"sse4.1", 1, 0, CpuFeature::ECX, 19},
    {"sse4.2", 1, 0, CpuFeature::ECX, 20},
    {"popcnt", 1, 0, CpuFeature::ECX, 23},
    {"avx", 1, 0, CpuFeature::ECX, 28},
    {"f16c", 1, 0, CpuFeature::ECX, 29},
    {"bmi", 7, 0, CpuFeature::EBX, 3},
    {"avx2", 7, 0, CpuFeature::EBX, 5},
    {"bmi2", 7, 0, CpuFeature::EBX, 8},
    {"avx512f", 7, 0, CpuFeature::EBX, 16},
    {"avx512dq", 7, 0, CpuFeature::EBX, 17},
    {"avx512ifma", 7, 0, CpuFeature::EBX, 21},
    {"avx512cd", 7, 0, CpuFeature::EBX, 28},
    {"avx512bw", 7, 0, CpuFeature::EBX, 30},
    {"avx512vl", 7, 0, CpuFeature::EBX, 31},
    {"avx512vbmi", 7, 0, CpuFeature::ECX, 1},
    {"avx512vnni", 7, 0, CpuFeature::ECX, 11},
    {"avx512bitalg", 7, 0, CpuFeature::ECX, 12},
    {"avx512vpopcntdq", 7, 0, CpuFeature::ECX, 14},
    {"avx512fp16", 7, 0, CpuFeature::EDX, 23},
    {"avxvnni", 7, 1, CpuFeature::EAX, 4},
    {"avx512bf16", 7, 1, CpuFeature::EAX, 5},
};

const CpuFeature *findFeature(std::string_view name) {
  for (const CpuFeature &f : kFeatures)
    if (name == f.name)
      return &f;
  return nullptr;
}

/// Whether the OS saves the AVX (and AVX-512) registers (XCR0).
bool osSaves(bool avx512) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) // OSXSAVE
    return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  unsigned need = avx512 ? 0xE6 : 0x6;
  return (lo & need) == need;
}

/// Whether this CPU has \p f and, for a vector feature, the OS saves its
/// registers.
bool hasFeature(const CpuFeature &f) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2],
                         &regs[3]) ||
      !((regs[f.reg] >> f.bit) & 1))
    return false;
  std::string_view name = f.name;
  bool vector = name.rfind("avx", 0) == 0 || name == "fma" || name == "f16c";
  return !vector || osSaves(name.rfind("avx512", 0) == 0);
}

bool hasAll(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (!hasFeature(*findFeature(name)))
      return false;
  return true;
}

} // namespace

art::CpuIsa loom::rt::detectedCpuIsa() {
  static const art::CpuIsa isa = [] {
    if (hasAll({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"}))
      return art::CpuIsa::Avx512;
    if (hasAll({"avx", "avx2", "fma", "f16c"}))
      return art::CpuIsa::Avx2;
    return art::CpuIsa::Sse42;
  }();
  return isa;
}

std::optional<art::CpuIsa> loom::rt::cpuIsaCap() {
  std::optional<std::string_view> value = environmentChoice(
      art::kCpuIsaVariable,
      {art::cpuIsaName(art::CpuIsa::Sse42), art::cpuIsaName(art::CpuIsa::Avx2),
       art::cpuIsaName(art::CpuIsa::Avx512)});
  if (!value)
    return std::nullopt;
  return art::parseCpuIsa(*value);
}

art::CpuIsa loom::rt::cpuIsa() {
  static const art::CpuIsa isa = [] {
    art::CpuIsa detected = detectedCpuIsa();
    std::optional<art::CpuIsa> cap = cpuIsaCap();
    return cap && *cap < detected ? *cap : detected;
  }();
  return isa;
}

Error loom::rt::checkCpuFeatures(const std::vector<std::string> &features) {
  for (const std::string &name : features) {
    const CpuFeature *known = findFeature(name);
    if (!known)
      return makeError(LOOM_ERROR_CPU, "the artifact needs CPU feature '" +
                                           name +
                                           "', which this runtime cannot "
                                           "detect");
    if (!hasFeature(*known))
      return makeError(
          LOOM_ERROR_CPU,
          "the artifact needs " + name +
              ", which this CPU does not have; recompile with "
              "--target=cpu:<this CPU> (or --target=cpu:x86-64-v2)");
    if (!art::cpuIsaAllows(cpuIsa(), name))
      return makeError(
          LOOM_ERROR_CPU,
          "the artifact needs " + name + ", which " + art::kCpuIsaVariable +
              "=" + std::string(art::cpuIsaName(cpuIsa())) +
              " excludes; recompile under the same cap (the host target "
              "honours it) or with --target=cpu:x86-64-v3");
  }
  return Error::ok();
}
