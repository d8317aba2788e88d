//===- Gemv.cpp - A product of few rows by plain weights, per level -------===//
//
// Part of Loom. See Cpu.h's gemv() and docs/Runtime.md "Products of one
// row". One algorithm (GemvImpl.inc), compiled three times over a vector of
// W floats (FloatVec.h): AVX-512, AVX2 + FMA, and plain C++.
//
// The design. A decode step's products are one row (a few at a small
// batch) by weights read once from memory, so the step's time is the time
// to stream the weights: the kernel reads them as the artifact holds them
// (row-major [K][N], no packed copy beside the mapped file) in the order
// memory serves fastest. Each thread takes a contiguous share of the
// weight rows, one block of memory read in order, and sweeps its rows four
// at a time, each sweep adding four rows' contributions into a chunk of
// results kept in L1; the threads' partial sums are added after (a few
// KiB against the megabytes of weights).
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"
#include "CPU/Kernels/FloatVec.h"

#include <algorithm>
#include <vector>

using namespace loom;
using namespace loom::rt;

namespace {
/// Weight floats a thread is worth forking for (256 KiB of weights: about
/// 10 us at memory speed, against a fork's few microseconds).
constexpr int64_t kGemvWeightsPerThread = 64 * 1024;
} // namespace

#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,fma"))),  \
                             apply_to = function)
namespace loom::rt::cpu::avx512 {
#include "CPU/Kernels/GemvImpl.inc"
} // namespace loom::rt::cpu::avx512
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
namespace loom::rt::cpu::avx2 {
#include "CPU/Kernels/GemvImpl.inc"
} // namespace loom::rt::cpu::avx2
#pragma clang attribute pop

namespace loom::rt::cpu::portable {
#include "CPU/Kernels/GemvImpl.inc"
} // namespace loom::rt::cpu::portable
