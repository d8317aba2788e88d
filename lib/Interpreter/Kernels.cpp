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
// the non-template parts: thread settings and broadcastShapes.
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

std::vector<int64_t> interp::broadcastShapes(llvm::ArrayRef<int64_t> a,
                                             llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    assert((da == db || da == 1 || db == 1) &&
           "shapes are not broadcast-compatible");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

LOOM_INSTANTIATE_KERNELS(F32Domain)
LOOM_INSTANTIATE_KERNELS(F64Domain)
LOOM_INSTANTIATE_KERNELS(ModPDomain)
