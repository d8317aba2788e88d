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
