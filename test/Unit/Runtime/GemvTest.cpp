//===- GemvTest.cpp - The CPU device's product of few rows ----------------===//
//
// Part of Loom. lib/Runtime/CPU/Kernels/Gemv.cpp: gemv() against a
// reference in double for random shapes: one to kGemvMaxRows rows, weight
// rows that are and are not a multiple of the kernel's sweep, columns with
// vector tails and past its column chunk, with and without the bias and
// the ReLU (a NaN kept, as oneDNN's ReLU keeps it), on one thread and on
// teams of two and three (the weight rows split, the partial sums added);
// the floats after the result stay untouched. Every form this CPU runs
// (portable, AVX2, AVX-512: CpuKernels.h).
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;
using loom::artifact::CpuIsa;

namespace {

using test::kGuard;

std::vector<const CpuKernelTable *> forms() {
  return test::formsOf(&CpuKernelTable::gemv);
}

/// Every form on shape \p s, on teams of 1, 2 and 3 threads.
void check(const GemvShape &s, bool withBias, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto random = [&](int64_t n) {
    std::vector<float> x(n);
    for (float &e : x)
      e = u(rng);
    return x;
  };
  std::vector<float> src = random(s.rows * s.k), w = random(s.k * s.n),
                     bias = random(s.n);
  // A NaN in the first source row: its outputs stay NaN through the ReLU.
  if (s.relu)
    src[0] = NAN;
  std::vector<double> want(s.rows * s.n);
  for (int64_t m = 0; m < s.rows; ++m)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = withBias ? bias[j] : 0;
      for (int64_t k = 0; k < s.k; ++k)
        acc += double(src[m * s.k + k]) * w[k * s.n + j];
      want[m * s.n + j] = s.relu && acc < 0 ? 0 : acc;
    }
  int before = omp_get_max_threads();
  for (const CpuKernelTable *form : forms())
    for (int threads : {1, 2, 3}) {
      std::vector<float> got(s.rows * s.n + 16, kGuard);
      omp_set_num_threads(threads);
      form->gemv(s, src.data(), w.data(), withBias ? bias.data() : nullptr,
                 got.data());
      omp_set_num_threads(before);
      SCOPED_TRACE(std::string(loom::artifact::cpuIsaName(form->isa)) + ", " +
                   std::to_string(threads) + " threads, rows " +
                   std::to_string(s.rows) + " k " + std::to_string(s.k) +
                   " n " + std::to_string(s.n) + (s.relu ? " relu" : "") +
                   (withBias ? " bias" : ""));
      for (int64_t i = 0; i < s.rows * s.n; ++i) {
        if (std::isnan(want[i])) {
          ASSERT_TRUE(std::isnan(got[i])) << "at " << i;
          continue;
        }
        ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-5 * std::fabs(want[i]))
            << "at " << i;
      }
      for (int64_t i = s.rows * s.n; i < s.rows * s.n + 16; ++i)
        ASSERT_EQ(got[i], kGuard) << "written past the result at " << i;
    }
}

TEST(GemvTest, RandomShapesMatchTheReference) {
  if (forms().empty())
    GTEST_SKIP() << "no form of gemv on this CPU";
  std::mt19937 rng(51);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 30; ++trial) {
    GemvShape s;
    // Past the kernel's column chunk (4,096 for one row, 2,048 for more)
    // now and then, with one row and with more.
    bool wide = trial % 7 == 0;
    s.rows = wide && trial % 14 == 0 ? 1 : pick(wide ? 2 : 1, kGemvMaxRows);
    s.k = pick(1, 700);
    s.n = wide ? pick(4090, 8300) : pick(1, 300);
    s.relu = trial % 3 == 0;
    check(s, trial % 2 == 0, rng);
  }
}

TEST(GemvTest, ManyWeightsForkTheTeam) {
  if (forms().empty())
    GTEST_SKIP() << "no form of gemv on this CPU";
  // Enough weights that two and three threads each take a share.
  std::mt19937 rng(52);
  GemvShape s;
  s.rows = 1;
  s.k = 771;
  s.n = 2305;
  check(s, true, rng);
  s.rows = 3;
  s.relu = true;
  check(s, false, rng);
}

} // namespace
