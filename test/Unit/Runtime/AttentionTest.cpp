//===- AttentionTest.cpp - The CPU device's attention kernel --------------===//
//
// Part of Loom. lib/Runtime/CPU/Kernels/Attention.cpp: attention() against
// a straightforward reference in double (every score, a softmax with its
// maximum subtracted, the weighted sum) for many random shapes: grouped and
// plain heads, decode and prefill, causal or not, live lengths from 0 to
// the capacity, head sizes with vector tails, on one thread and on teams of
// two and three (so the keys are split and merged, and tiles are dealt
// round-robin); the floats after the result stay untouched. Every form
// this CPU runs (portable, AVX2, AVX-512: CpuKernels.h). And the shards of
// tg.shard_attention: a cache split round-robin by position over 2 to 4
// shards, each shard's output and log-sum-exp merged (as
// --tg-cache-parallel merges them) equal to the whole attention, with
// scores up to +-80.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "loom/Support/AttentionMask.h"

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
  return test::formsOf(&CpuKernelTable::attention);
}

/// The reference: for each query, its visible keys' scores in double, the
/// maximum subtracted, exp, normalised, the values summed.
std::vector<float> reference(const AttentionGeometry &g,
                             const std::vector<float> &q,
                             const std::vector<float> &k,
                             const std::vector<float> &v,
                             const std::vector<int64_t> &lives) {
  int64_t dim = g.headDim, group = g.qHeads / g.kvHeads;
  std::vector<float> out(q.size(), 0.f);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.qHeads; ++h)
      for (int64_t i = 0; i < g.qLen; ++i) {
        int64_t n = loom::attention::visibleKeys(lives[b], g.qLen, i, g.causal);
        const float *qi = &q[((b * g.qHeads + h) * g.qLen + i) * dim];
        int64_t kv = (b * g.kvHeads + h / group) * g.kvLen * dim;
        std::vector<double> s(n);
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < dim; ++d)
            dot += double(qi[d]) * k[kv + j * dim + d];
          s[j] = double(g.scale) * dot;
          m = std::max(m, s[j]);
        }
        for (int64_t j = 0; j < n; ++j)
          sum += (s[j] = std::exp(s[j] - m));
        float *o = &out[((b * g.qHeads + h) * g.qLen + i) * dim];
        for (int64_t d = 0; d < dim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < n; ++j)
            acc += s[j] * v[kv + j * dim + d];
          o[d] = n ? float(acc / sum) : 0.f;
        }
      }
  return out;
}

/// Every form on \p g with \p lives, on teams of 1, 2 and 3 threads.
void check(const AttentionGeometry &g, const std::vector<int64_t> &lives,
           std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  auto random = [&](int64_t n) {
    std::vector<float> x(n);
    for (float &e : x)
      e = u(rng);
    return x;
  };
  int64_t qn = g.batch * g.qHeads * g.qLen * g.headDim;
  int64_t kvn = g.batch * g.kvHeads * g.kvLen * g.headDim;
  std::vector<float> q = random(qn), k = random(kvn), v = random(kvn);
  // Keys past the live length are poison: reading one would show.
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.kvHeads; ++h)
      for (int64_t j = lives[b]; j < g.kvLen; ++j)
        for (int64_t d = 0; d < g.headDim; ++d) {
          int64_t at = ((b * g.kvHeads + h) * g.kvLen + j) * g.headDim + d;
          k[at] = NAN;
          v[at] = NAN;
        }
  std::vector<float> want = reference(g, q, k, v, lives);
  int before = omp_get_max_threads();
  for (const CpuKernelTable *form : forms())
    for (int threads : {1, 2, 3}) {
      std::vector<float> got(qn + 16, kGuard);
      omp_set_num_threads(threads);
      form->attention(g, q.data(), k.data(), v.data(), lives.data(),
                      got.data(), nullptr);
      omp_set_num_threads(before);
      SCOPED_TRACE(std::string(loom::artifact::cpuIsaName(form->isa)) + ", " +
                   std::to_string(threads) + " threads, batch " +
                   std::to_string(g.batch) + " heads " +
                   std::to_string(g.qHeads) + "/" + std::to_string(g.kvHeads) +
                   " qLen " + std::to_string(g.qLen) + " kvLen " +
                   std::to_string(g.kvLen) + " dim " +
                   std::to_string(g.headDim) + (g.causal ? " causal" : ""));
      for (int64_t i = 0; i < qn; ++i)
        ASSERT_NEAR(got[i], want[i], 2e-5f + 2e-5f * std::fabs(want[i]))
            << "at " << i;
      for (int64_t i = qn; i < qn + 16; ++i)
        ASSERT_EQ(got[i], kGuard) << "written past the result at " << i;
    }
}

TEST(AttentionTest, RandomShapesMatchTheReference) {
  if (forms().empty())
    GTEST_SKIP() << "no form of attention on this CPU";
  std::mt19937 rng(51);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 40; ++trial) {
    AttentionGeometry g;
    g.batch = pick(1, 3);
    g.kvHeads = pick(1, 3);
    g.qHeads = g.kvHeads * pick(1, 4);
    g.headDim = std::vector<int64_t>{1, 8, 16, 24, 40, 64, 80, 128}[pick(0, 7)];
    g.kvLen = pick(1, 700);
    bool decode = trial % 2 == 0;
    g.qLen = decode ? pick(1, 2) : pick(1, g.kvLen);
    g.causal = trial % 3 != 0 && g.qLen <= g.kvLen;
    g.scale = float(1 / std::sqrt(double(g.headDim)));
    std::vector<int64_t> lives(g.batch);
    for (int64_t &l : lives)
      l = trial % 5 == 0 ? g.kvLen : pick(0, g.kvLen);
    check(g, lives, rng);
  }
}

TEST(AttentionTest, LongDecodeSplitsKeys) {
  if (forms().empty())
    GTEST_SKIP() << "no form of attention on this CPU";
  // One tile and 8,000 live keys: split over the team and merged.
  std::mt19937 rng(7);
  AttentionGeometry g;
  g.qHeads = 4;
  g.kvHeads = 1;
  g.kvLen = 8192;
  g.headDim = 64;
  g.causal = true;
  g.scale = 0.125f;
  check(g, {8000}, rng);
  g.batch = 2;
  check(g, {8192, 3}, rng);
  // Grouped heads and a head size with vector tails, split too.
  g.batch = 1;
  g.qHeads = 6;
  g.kvHeads = 2;
  g.headDim = 40;
  g.kvLen = 5000;
  check(g, {4999}, rng);
}

/// The attention of \p g over k, v (capacity g.kvLen) computed as
/// \p shards shards, each holding positions r, r + P, ... in a cache of
/// ceil(kvLen / P) + 1 positions (the rest poison), merged by the shards'
/// log-sum-exp in double, against the reference.
void checkShards(AttentionGeometry g, const std::vector<int64_t> &lives,
                 int64_t shards, float range, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-range, range);
  auto random = [&](int64_t n) {
    std::vector<float> x(n);
    for (float &e : x)
      e = u(rng);
    return x;
  };
  int64_t dim = g.headDim, qn = g.batch * g.qHeads * g.qLen * dim;
  std::vector<float> q = random(qn);
  std::vector<float> k = random(g.batch * g.kvHeads * g.kvLen * dim);
  std::vector<float> v = random(g.batch * g.kvHeads * g.kvLen * dim);
  std::vector<float> want = reference(g, q, k, v, lives);
  AttentionGeometry local = g;
  local.kvLen = (g.kvLen + shards - 1) / shards + 1;
  local.shard.count = shards;
  int64_t rows = qn / dim;
  for (const CpuKernelTable *form : forms()) {
    std::vector<std::vector<float>> outs, lses;
    for (int64_t r = 0; r < shards; ++r) {
      local.shard.index = r;
      // Key j of the shard is position j * shards + r; the others poison.
      std::vector<float> ks(g.batch * g.kvHeads * local.kvLen * dim, NAN);
      std::vector<float> vs(ks.size(), NAN);
      for (int64_t bh = 0; bh < g.batch * g.kvHeads; ++bh) {
        int64_t live = lives[bh / g.kvHeads];
        for (int64_t j = 0; j * shards + r < live; ++j)
          for (int64_t d = 0; d < dim; ++d) {
            int64_t from = (bh * g.kvLen + j * shards + r) * dim + d;
            ks[(bh * local.kvLen + j) * dim + d] = k[from];
            vs[(bh * local.kvLen + j) * dim + d] = v[from];
          }
      }
      outs.emplace_back(qn + 16, kGuard);
      lses.emplace_back(rows + 16, kGuard);
      form->attention(local, q.data(), ks.data(), vs.data(), lives.data(),
                      outs.back().data(), lses.back().data());
      for (int64_t i = rows; i < rows + 16; ++i)
        ASSERT_EQ(lses.back()[i], kGuard) << "lse written past its end";
    }
    SCOPED_TRACE(std::string(loom::artifact::cpuIsaName(form->isa)) + ", " +
                 std::to_string(shards) + " shards, kvLen " +
                 std::to_string(g.kvLen) + ", qLen " + std::to_string(g.qLen) +
                 (g.causal ? " causal" : ""));
    for (int64_t row = 0; row < rows; ++row) {
      double m = -INFINITY;
      for (int64_t r = 0; r < shards; ++r)
        m = std::max(m, double(lses[r][row]));
      for (int64_t d = 0; d < dim; ++d) {
        double num = 0, den = 0;
        for (int64_t r = 0; r < shards; ++r) {
          double w = std::isinf(m) ? 0 : std::exp(double(lses[r][row]) - m);
          num += w * outs[r][row * dim + d];
          den += w;
        }
        float got = den > 0 ? float(num / den) : 0.f;
        float expect = want[row * dim + d];
        ASSERT_NEAR(got, expect, 5e-5f + 5e-5f * std::fabs(expect))
            << "row " << row << ", element " << d;
      }
    }
  }
}

TEST(AttentionTest, ShardsMergeToTheWhole) {
  if (forms().empty())
    GTEST_SKIP() << "no form of attention on this CPU";
  std::mt19937 rng(52);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 24; ++trial) {
    AttentionGeometry g;
    g.batch = pick(1, 2);
    g.kvHeads = pick(1, 2);
    g.qHeads = g.kvHeads * pick(1, 4);
    g.headDim = std::vector<int64_t>{8, 24, 64}[pick(0, 2)];
    g.kvLen = pick(2, 600);
    g.qLen = trial % 2 ? 1 : pick(1, std::min<int64_t>(g.kvLen, 40));
    g.causal = trial % 3 != 0;
    g.scale = float(1 / std::sqrt(double(g.headDim)));
    std::vector<int64_t> lives(g.batch);
    for (int64_t &l : lives)
      l = pick(g.causal ? g.qLen : 0, g.kvLen);
    checkShards(g, lives, 2 + trial % 3, 2.f, rng);
  }
  // Scores spanning about +-80: the merge must not overflow.
  AttentionGeometry g;
  g.qHeads = 4;
  g.kvHeads = 2;
  g.headDim = 64;
  g.kvLen = 900;
  g.qLen = 1;
  g.causal = true;
  g.scale = 1.f;
  for (int64_t shards : {2, 3, 4})
    checkShards(g, {777}, shards, 1.4f, rng);
}

} // namespace
