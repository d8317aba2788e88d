//===- Policy.h - The CPU device's policy -----------------------*- C++ -*-===//
//
// Part of Loom. Layer 0 of lib/Runtime/CPU (it includes nothing of CPU/):
// every choice of the CPU device that a user can switch, in one object
// parsed once, when the device is created, from its options and the
// environment (docs/Runtime.md, "Switches in the environment"): its
// threads, their binding and spinning, huge pages for packed weights, and
// the form and layout switches (LOOM_ONEDNN_*) that keep a step on oneDNN
// to compare. The layout planner, the forms, the steps and the device read
// the policy, never the environment. Read per device rather than once per
// process: a device's choices are then fixed by the time it prepares a
// step, and a process that sets a switch before loading a second model
// (tests, benchmarks) gets what it set; the warnings for a bad value stay
// once per variable and process (Environment.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_POLICY_H
#define LOOM_LIB_RUNTIME_CPU_POLICY_H

#include <chrono>

namespace loom::rt::cpu {

/// Where activation buffers keep their layout (LOOM_ONEDNN_LAYOUT).
enum class LayoutChoice {
  /// The layout plan (the default).
  Planned,
  /// `plain`: every buffer NCHW, no plan.
  Plain,
  /// `blocked`: convolutions ask for nChw16c.
  Blocked,
};

/// The CPU device's switchable choices. Each default is the runtime's own
/// choice; a switch in the environment turns one off to compare, and
/// leaves results unchanged. A value a variable does not take is ignored
/// with a warning (environmentChoice).
struct CpuPolicy {
  /// The team's threads (DeviceOptions::threads; 0 there: OpenMP's default
  /// when the device is created).
  int threads = 1;
  /// The team bound to CPUs (LOOM_CPU_BIND=0, or OpenMP's own binding
  /// through OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY: false).
  bool bindTeam = true;
  /// How long a team thread spins at a barrier before it sleeps
  /// (LOOM_TEAM_SPIN_US, 50 by default).
  std::chrono::microseconds teamSpin{50};
  /// Weights packed at load of 2 MiB and more on huge pages
  /// (LOOM_HUGE_PAGES=0: false).
  bool hugePages = true;
  /// Small oneDNN steps on the calling thread alone (LOOM_ONEDNN_ALONE=0:
  /// false, every step on the team).
  bool smallStepsAlone = true;

  /// LOOM_ONEDNN_LAYOUT.
  LayoutChoice layout = LayoutChoice::Planned;
  /// Winograd steps run Winograd's algorithm where oneDNN has it
  /// (LOOM_ONEDNN_CONV=direct: false).
  bool winograd = true;
  /// 1x1 convolutions on plain sources become pixel products
  /// (LOOM_ONEDNN_1X1=conv: false).
  bool pixelProducts = true;
  /// On AVX2, products run as the forms measured faster there than
  /// oneDNN's matmul primitive: a product by constant weights as a 1x1
  /// convolution over its rows (Forms/Matmul.cpp, rowsAsPixelsPay), a 1x1
  /// convolution between plain buffers as sgemm of the planes
  /// (Forms/Conv.cpp, planeProductPays), a dilated convolution that reads
  /// mostly padding as sgemm per tap (tapProductsPay)
  /// (LOOM_ONEDNN_PRODUCT=matmul: false).
  bool avx2Products = true;
  /// Small-plane convolutions compute in nChw16c (LOOM_ONEDNN_SMALL_PLANE=
  /// nhwc: false).
  bool smallPlaneBlocked = true;
  /// A convolution's SiLU runs as a pass after it (LOOM_ONEDNN_SWISH=
  /// postop: false, oneDNN's post-op).
  bool swishPass = true;
  /// Loom's kernels where they were measured faster than oneDNN; each
  /// false with its LOOM_ONEDNN_<NAME>=onednn.
  bool loomPools = true;     ///< LOOM_ONEDNN_POOL
  bool loomPointwise = true; ///< LOOM_ONEDNN_POINTWISE
  bool loomReorders = true;  ///< LOOM_ONEDNN_REORDER
  bool loomGrouped = true;   ///< LOOM_ONEDNN_GROUPED
  bool loomStem = true;      ///< LOOM_ONEDNN_STEM
  bool loomScale = true;     ///< LOOM_ONEDNN_SCALE
  bool loomGemv = true;      ///< LOOM_ONEDNN_GEMV
  /// A product of many rows by constant weights that several entries read
  /// (a decoder's prefill) packs them per run into scratch memory for its
  /// primitive (LOOM_ONEDNN_SHARED_WEIGHTS=plain: false, the primitive
  /// reads them as the artifact holds them).
  bool repackShared = true;

  /// The policy of a device of \p threads threads (already resolved: at
  /// least 1) under the process's environment.
  static CpuPolicy fromEnvironment(int threads);
};

/// LOOM_HUGE_PAGES as fromEnvironment reads it: for the packed weights of
/// kernels run without a device (unit tests, benchmarks).
bool hugePagesFromEnvironment();

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_POLICY_H
