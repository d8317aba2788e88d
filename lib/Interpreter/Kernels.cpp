//===- Kernels.cpp - Semantics of the tg operators ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every kernel is written once as a template over the number domain D (in
// include/loom/Interpreter/KernelsImpl.h) and explicitly instantiated here for
// F32Domain, F64Domain and ModPDomain. Only the primitives of Domain.h differ
// between domains; all derived operations (relu, sigmoid, gelu, means,
// normalisations, ...) are expressed in terms of them. This file also holds
// the non-template part: thread settings.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/KernelsImpl.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <thread>

using namespace loom;
using namespace loom::interp;

//===----------------------------------------------------------------------===//
// Threading
//===----------------------------------------------------------------------===//

static std::atomic<unsigned> numThreadsSetting{0};

void interp::setNumThreads(unsigned n) { numThreadsSetting.store(n); }

unsigned interp::getNumThreads() {
  if (unsigned n = numThreadsSetting.load())
    return n;
  if (const char *env = std::getenv("LOOM_NUM_THREADS")) {
    long v = std::strtol(env, nullptr, 10);
    if (v > 0)
      return static_cast<unsigned>(std::min<long>(v, 256));
  }
  unsigned hw = std::thread::hardware_concurrency();
  return std::max(1u, std::min(hw, 8u));
}

LOOM_INSTANTIATE_KERNELS(F32Domain)
LOOM_INSTANTIATE_KERNELS(F64Domain)
LOOM_INSTANTIATE_KERNELS(ModPDomain)
LOOM_INSTANTIATE_ORDERED_KERNELS(F32Domain)
LOOM_INSTANTIATE_ORDERED_KERNELS(F64Domain)
LOOM_INSTANTIATE_ORDERED_KERNELS(ModPDomain)
