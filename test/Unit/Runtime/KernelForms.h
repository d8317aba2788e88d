//===- KernelForms.h - The forms of a CPU kernel a unit test runs -*- C++
//-*-===//
//
// Part of Loom. What the tests of lib/Runtime/CPU/Kernels/ share: the
// kernel tables (CpuKernels.h) of every level this CPU runs that have a
// form of the kernel under test, and the guard value written past a result
// to see that nothing is written there.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_UNIT_RUNTIME_KERNELFORMS_H
#define LOOM_TEST_UNIT_RUNTIME_KERNELFORMS_H

#include "../../../lib/Runtime/CPU/CpuFeatures.h"
#include "../../../lib/Runtime/CPU/Kernels/CpuKernels.h"

#include <vector>

namespace loom::rt::cpu::test {

/// Written past a kernel's result; a float the kernels never compute.
constexpr float kGuard = -12345.0f;

/// The floats of kGuard a test writes before and after a result.
constexpr int64_t kGuardFloats = 16;

/// Fills \p v with a pattern of small exact floats: element i is
/// ((i * mul) % mod - mod / 2) / scale.
inline void fillPattern(std::vector<float> &v, int64_t mul, int64_t mod,
                        float scale) {
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(int64_t(i * mul % mod) - mod / 2) / scale;
}

/// Runs \p fn on an OpenMP team of \p threads, the calling thread's count
/// restored after.
template <typename Fn> void onTeam(int threads, const Fn &fn) {
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  fn();
  omp_set_num_threads(before);
}

/// Whether the kGuardFloats floats before and after the \p n floats of a
/// result at \p dst + kGuardFloats are all still kGuard (the first that is
/// not, in \p at, else -1).
inline bool guardsKept(const std::vector<float> &dst, int64_t n, int64_t &at) {
  for (int64_t i = 0; i < kGuardFloats; ++i)
    for (int64_t j : {i, kGuardFloats + n + i})
      if (dst[j] != kGuard) {
        at = j;
        return false;
      }
  at = -1;
  return true;
}

/// The tables of the levels this CPU runs (portable, AVX2, AVX-512) whose
/// member \p kernel is set.
template <typename Kernel>
std::vector<const CpuKernelTable *> formsOf(Kernel CpuKernelTable::*kernel) {
  std::vector<const CpuKernelTable *> out;
  for (artifact::CpuIsa isa : {artifact::CpuIsa::Sse42, artifact::CpuIsa::Avx2,
                               artifact::CpuIsa::Avx512})
    if (isa <= detectedCpuIsa() && cpuKernelsOf(isa).*kernel)
      out.push_back(&cpuKernelsOf(isa));
  return out;
}

} // namespace loom::rt::cpu::test

#endif // LOOM_TEST_UNIT_RUNTIME_KERNELFORMS_H
