//===- CpuKernelsTest.cpp - The CPU kernels' table, level by level --------===//
//
// Part of Loom. include/loom/Artifact/CpuIsa.h (the levels and what a cap
// allows) and lib/Runtime/CPU/Kernels/CpuKernels.h (one table of hand-written kernels
// per level): every form of a kernel that this CPU can run is checked
// against a scalar reference, and the forms of the levels against each other
// bit for bit (they add the same products in the same order), so that a
// machine capped with LOOM_CPU_ISA computes what one without the higher
// level computes. A level this CPU lacks is skipped, saying so.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/CPU/Kernels/CpuKernels.h"
#include "../../../lib/Runtime/CPU/CpuFeatures.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;
using loom::artifact::CpuIsa;

namespace {

TEST(CpuIsaTest, NamesAndFeatures) {
  for (CpuIsa isa : {CpuIsa::Sse42, CpuIsa::Avx2, CpuIsa::Avx512})
    EXPECT_EQ(loom::artifact::parseCpuIsa(loom::artifact::cpuIsaName(isa)),
              isa);
  EXPECT_FALSE(loom::artifact::parseCpuIsa("avx512f"));
  EXPECT_FALSE(loom::artifact::parseCpuIsa(""));
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("avx512f"), CpuIsa::Avx512);
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("avx512bf16"), CpuIsa::Avx512);
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("avx2"), CpuIsa::Avx2);
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("fma"), CpuIsa::Avx2);
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("avxvnni"), CpuIsa::Avx2);
  EXPECT_EQ(loom::artifact::cpuIsaOfFeature("sse4.2"), CpuIsa::Sse42);
  EXPECT_TRUE(loom::artifact::cpuIsaAllows(CpuIsa::Avx2, "fma"));
  EXPECT_FALSE(loom::artifact::cpuIsaAllows(CpuIsa::Avx2, "avx512vl"));
  EXPECT_FALSE(loom::artifact::cpuIsaAllows(CpuIsa::Sse42, "avx"));
  EXPECT_LE(cpuIsa(), detectedCpuIsa());
  EXPECT_EQ(cpuKernels().isa, cpuIsa());
}

/// The levels this CPU runs that have a form of the kernel \p has says.
template <typename Has> std::vector<CpuIsa> levelsWith(Has has) {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::Sse42, CpuIsa::Avx2, CpuIsa::Avx512})
    if (isa <= detectedCpuIsa() && has(cpuKernelsOf(isa)))
      out.push_back(isa);
  return out;
}

/// A float of a fixed pseudo-random sequence in [-1, 1).
float value(int64_t i) {
  uint32_t h = uint32_t(i) * 2654435761u;
  h ^= h >> 15;
  return float(h % 2048) / 1024.0f - 1.0f;
}

/// Runs \p fn on a team of \p threads.
template <typename Fn> void onTeam(int threads, Fn fn) {
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  fn();
  omp_set_num_threads(before);
}

struct PointwiseCase {
  int64_t pixels, in, out;
  bool bias, sum, relu, planar;
};

/// The pointwise product of \p c by the table \p t's form on \p threads.
std::vector<float> runPointwise(const CpuKernelTable &t, const PointwiseCase &c,
                                int threads) {
  std::vector<float> weights(c.out * c.in), src(c.pixels * c.in), bias(c.out),
      sum(c.pixels * c.out), dst(c.pixels * c.out, 7.0f);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = value(int64_t(i) + 1);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = value(int64_t(i) + 100003);
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = value(int64_t(i) + 7);
  for (size_t i = 0; i < sum.size(); ++i)
    sum[i] = value(int64_t(i) + 31);
  PointwiseWeights w(weights.data(), c.out, c.in);
  PointwiseEpilogue e;
  e.bias = c.bias ? bias.data() : nullptr;
  e.sum = c.sum ? sum.data() : nullptr;
  if (c.relu)
    e.lo = 0;
  e.planar = c.planar;
  onTeam(threads, [&] {
    t.pointwiseChannelsLast(w, c.pixels, src.data(), e, dst.data());
  });
  // The reference, in double.
  for (int64_t p = 0; p < c.pixels; ++p)
    for (int64_t o = 0; o < c.out; ++o) {
      double x = c.bias ? bias[o] : 0;
      for (int64_t k = 0; k < c.in; ++k)
        x += double(src[p * c.in + k]) * weights[o * c.in + k];
      if (c.sum)
        x += sum[p * c.out + o];
      if (c.relu)
        x = std::max(x, 0.0);
      float got = c.planar ? dst[o * c.pixels + p] : dst[p * c.out + o];
      EXPECT_NEAR(got, x, 1e-4 * (1 + c.in))
          << "level " << loom::artifact::cpuIsaName(t.isa) << " pixel " << p
          << " channel " << o << " of " << c.pixels << "x" << c.in << "->"
          << c.out;
    }
  return dst;
}

TEST(CpuKernelsTest, PointwiseFormsAgree) {
  auto levels = levelsWith(
      [](const CpuKernelTable &t) { return t.pointwiseChannelsLast; });
  if (levels.empty())
    GTEST_SKIP() << "no level this CPU runs has a pointwise kernel";
  std::vector<PointwiseCase> cases;
  for (int64_t pixels : {1, 5, 6, 7, 49})
    for (int64_t in : {3, 161, 333})
      for (int64_t out : {1, 8, 15, 17, 40, 100})
        cases.push_back(
            {pixels, in, out, out % 2 == 1, pixels == 7, out == 40, false});
  cases.push_back({49, 64, 40, true, false, true, true});
  cases.push_back({3, 32, 9, true, false, false, true});
  for (const PointwiseCase &c : cases)
    for (int threads : {1, 2}) {
      std::vector<float> first =
          runPointwise(cpuKernelsOf(levels[0]), c, threads);
      for (size_t l = 1; l < levels.size(); ++l) {
        std::vector<float> other =
            runPointwise(cpuKernelsOf(levels[l]), c, threads);
        ASSERT_EQ(std::memcmp(first.data(), other.data(),
                              first.size() * sizeof(float)),
                  0)
            << loom::artifact::cpuIsaName(levels[0]) << " and "
            << loom::artifact::cpuIsaName(levels[l]) << " differ on "
            << c.pixels << "x" << c.in << "->" << c.out;
      }
    }
}

TEST(CpuKernelsTest, SwishFormsAgree) {
  auto levels =
      levelsWith([](const CpuKernelTable &t) { return t.swishInPlace; });
  if (levels.empty())
    GTEST_SKIP() << "no level this CPU runs has the SiLU pass";
  for (int64_t n : {1, 7, 8, 15, 16, 17, 100, 40000}) {
    std::vector<float> input(n);
    const float edges[] = {1e30f, -1e30f, 88.8f,  -88.8f,  87.5f, -87.5f,
                           20.f,  -20.f,  1e-20f, -1e-20f, 0.f,   -0.f};
    for (int64_t i = 0; i < n; ++i)
      input[i] = i < 12 ? edges[i] : value(i) * 30;
    std::vector<float> first;
    for (CpuIsa isa : levels) {
      std::vector<float> x = input;
      onTeam(2, [&] { cpuKernelsOf(isa).swishInPlace(x.data(), n); });
      for (int64_t i = 0; i < n; ++i) {
        double v = input[i], want = v / (1 + std::exp(-v));
        EXPECT_NEAR(x[i], want, 1e-6 * (1 + std::fabs(want)))
            << cpuIsaName(isa) << " at " << v;
      }
      if (first.empty())
        first = x;
      else
        ASSERT_EQ(std::memcmp(first.data(), x.data(), n * sizeof(float)), 0)
            << "the levels' SiLU differ (n " << n << ")";
    }
  }
}

} // namespace
