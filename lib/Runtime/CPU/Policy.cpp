//===- Policy.cpp - The CPU device's policy -------------------------------===//
//
// Part of Loom. See Policy.h. Layer 0 of lib/Runtime/CPU: each switch is
// read here and nowhere else, with the values it takes.
//
//===----------------------------------------------------------------------===//

#include "CPU/Policy.h"
#include "Environment.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// Whether LOOM_ONEDNN_<what> keeps oneDNN's form (the value `onednn`).
bool keepsOneDnn(const char *name) {
  return environmentIs(name, "onednn", {"onednn"});
}

/// Whether a 0/1 switch is set to 0.
bool switchedOff(const char *name) {
  return environmentIs(name, "0", {"0", "1"});
}

/// LOOM_TEAM_SPIN_US: microseconds, 50 where unset or not a non-negative
/// integer (then with a warning, once per process).
std::chrono::microseconds teamSpinFromEnvironment() {
  constexpr long long kDefault = 50;
  const char *value = std::getenv("LOOM_TEAM_SPIN_US");
  if (!value)
    return std::chrono::microseconds(kDefault);
  char *end = nullptr;
  long long us = std::strtoll(value, &end, 10);
  if (end != value && *end == '\0' && us >= 0)
    return std::chrono::microseconds(us);
  static std::once_flag warned;
  std::call_once(warned, [&] {
    std::fprintf(stderr,
                 "loom: warning: LOOM_TEAM_SPIN_US='%s' is not a "
                 "number of microseconds; spinning %lld\n",
                 value, kDefault);
  });
  return std::chrono::microseconds(kDefault);
}

/// Whether the user binds OpenMP's threads: Loom then binds none.
bool openMpBindsThreads() {
  for (const char *name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (std::getenv(name))
      return true;
  return false;
}

} // namespace

bool cpu::hugePagesFromEnvironment() { return !switchedOff("LOOM_HUGE_PAGES"); }

CpuPolicy CpuPolicy::fromEnvironment(int threads) {
  CpuPolicy p;
  p.threads = threads;
  p.bindTeam = !openMpBindsThreads() && !switchedOff("LOOM_CPU_BIND");
  p.teamSpin = teamSpinFromEnvironment();
  p.hugePages = hugePagesFromEnvironment();
  p.smallStepsAlone = !switchedOff("LOOM_ONEDNN_ALONE");
  std::optional<std::string_view> layout =
      environmentChoice("LOOM_ONEDNN_LAYOUT", {"plain", "blocked"});
  p.layout = !layout              ? LayoutChoice::Planned
             : *layout == "plain" ? LayoutChoice::Plain
                                  : LayoutChoice::Blocked;
  p.winograd = !environmentIs("LOOM_ONEDNN_CONV", "direct", {"direct"});
  p.pixelProducts = !environmentIs("LOOM_ONEDNN_1X1", "conv", {"conv"});
  p.avx2Products =
      !environmentIs("LOOM_ONEDNN_PRODUCT", "matmul", {"matmul"});
  p.smallPlaneBlocked =
      !environmentIs("LOOM_ONEDNN_SMALL_PLANE", "nhwc", {"nhwc"});
  p.swishPass = !environmentIs("LOOM_ONEDNN_SWISH", "postop", {"postop"});
  p.loomPools = !keepsOneDnn("LOOM_ONEDNN_POOL");
  p.loomPointwise = !keepsOneDnn("LOOM_ONEDNN_POINTWISE");
  p.loomReorders = !keepsOneDnn("LOOM_ONEDNN_REORDER");
  p.loomGrouped = !keepsOneDnn("LOOM_ONEDNN_GROUPED");
  p.loomStem = !keepsOneDnn("LOOM_ONEDNN_STEM");
  p.loomScale = !keepsOneDnn("LOOM_ONEDNN_SCALE");
  p.loomGemv = !keepsOneDnn("LOOM_ONEDNN_GEMV");
  p.repackShared =
      !environmentIs("LOOM_ONEDNN_SHARED_WEIGHTS", "plain", {"plain"});
  return p;
}
