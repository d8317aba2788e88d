//===- StemConvTest.cpp - The CPU device's stem convolution ---------------===//
//
// Part of Loom. lib/Runtime/CPU/Kernels/StemConv.cpp: convolveStem against a scalar
// convolution (double sums) from NCHW into NHWC, for 1 to 4 input
// channels, 1x1 to 7x7 filters (and 1x3, 3x1), strides 1 to 3, no padding
// to more than the filter's half, planes of odd sizes (a row with no
// interior pixel, rows whose taps leave the input), output channels from 1
// to 80 (tails of every vector count), batch 1 and 2, with and without a
// bias, every post-op; on one thread and on teams of two and three. The
// floats around the result stay untouched. Compiled in from lib/Runtime
// (no oneDNN needed); skipped on a CPU without AVX-512.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace loom::rt::cpu;
using namespace loom::rt::cpu::test;

namespace {

float activate(const StemPostOp &p, double x) {
  switch (p.kind) {
  case StemPostOp::Kind::None:
    return float(x);
  case StemPostOp::Kind::Relu:
    return float(std::max(0.0, x));
  case StemPostOp::Kind::Clip:
    return float(std::min<double>(std::max<double>(x, p.lo), p.hi));
  case StemPostOp::Kind::HardSwish:
    return float(x * std::min(std::max(x + 3, 0.0), 6.0) / 6);
  }
  return 0;
}

/// convolveStem of \p g on a team of \p threads against the scalar sum.
void check(const DenseConvGeometry &g, bool withBias, const StemPostOp &post,
           int threads) {
  std::vector<float> src(g.batch * g.channels * g.h * g.w);
  std::vector<float> w(g.outChannels * g.channels * g.kh * g.kw),
      bias(g.outChannels);
  fillPattern(src, 7919, 97, 16.f);
  fillPattern(w, 104729, 89, 32.f);
  fillPattern(bias, 1, 7, 4.f);
  int64_t n = g.batch * g.oh * g.ow * g.outChannels;
  std::vector<float> dst(n + 2 * kGuardFloats, kGuard);
  std::vector<float> packed = packStemWeights(g, w.data());
  onTeam(threads, [&] {
    convolveStem(g, src.data(), packed.data(), withBias ? bias.data() : nullptr,
                 post, dst.data() + kGuardFloats);
  });
  int64_t wrote;
  ASSERT_TRUE(guardsKept(dst, n, wrote))
      << "written outside the result at " << wrote;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t o = 0; o < g.outChannels; ++o) {
          double sum = withBias ? bias[o] : 0.0, size = std::fabs(sum);
          for (int64_t c = 0; c < g.channels; ++c)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                int64_t iy = y * g.sh - g.padTop + i,
                        ix = x * g.sw - g.padLeft + j;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                  continue;
                double t =
                    double(src[((b * g.channels + c) * g.h + iy) * g.w + ix]) *
                    w[((o * g.channels + c) * g.kh + i) * g.kw + j];
                sum += t;
                size += std::fabs(t);
              }
          float got = dst[kGuardFloats +
                          ((b * g.oh + y) * g.ow + x) * g.outChannels + o];
          ASSERT_NEAR(got, activate(post, sum), 1e-5 * (size + 1))
              << "image " << b << " pixel " << y << "," << x << " channel " << o
              << " of " << g.channels << " -> " << g.outChannels << " " << g.kh
              << "x" << g.kw << " stride " << g.sh << "," << g.sw << " pads "
              << g.padTop << "," << g.padLeft << " at " << g.h << "x" << g.w
              << ", " << threads << " thread(s)";
        }
}

/// The geometry of a convolution with padding \p padTop, \p padLeft on
/// both sides of each axis.
DenseConvGeometry geometry(int64_t batch, int64_t c, int64_t h, int64_t w,
                           int64_t o, int64_t kh, int64_t kw, int64_t sh,
                           int64_t sw, int64_t padTop, int64_t padLeft) {
  return {batch,
          c,
          h,
          w,
          o,
          (h + 2 * padTop - kh) / sh + 1,
          (w + 2 * padLeft - kw) / sw + 1,
          kh,
          kw,
          sh,
          sw,
          padTop,
          padLeft};
}

TEST(StemConv, MatchesScalarConvolution) {
  if (!hasStemConvKernel())
    GTEST_SKIP() << "no AVX-512";
  using Kind = StemPostOp::Kind;
  const StemPostOp relu{Kind::Relu}, none{};
  // A CNN's stem (3 -> 40, 3x3 stride 2 pad 1) at odd planes, ResNet's 7x7.
  for (int threads : {1, 2, 3}) {
    check(geometry(1, 3, 23, 37, 40, 3, 3, 2, 2, 1, 1), true, relu, threads);
    check(geometry(2, 3, 19, 17, 64, 7, 7, 2, 2, 3, 3), true, relu, threads);
  }
  // Every input channel count, vector count and tail of output channels.
  for (int64_t c = 1; c <= 4; ++c)
    for (int64_t o : {1, 7, 16, 24, 33, 48, 63, 64, 65, 80})
      check(geometry(1, c, 11, 29, o, 3, 3, 1, 1, 1, 1), c % 2 == 1, relu, 2);
  // Filters and strides: 1x1, 1x3, 3x1, 5x5 stride 3, no padding; a plane
  // narrower than the filter (no interior pixel) and padding past it.
  check(geometry(1, 3, 9, 14, 24, 1, 1, 1, 1, 0, 0), true, none, 1);
  check(geometry(1, 2, 9, 14, 24, 1, 3, 1, 2, 0, 1), true, none, 2);
  check(geometry(1, 2, 9, 14, 24, 3, 1, 2, 1, 1, 0), false, none, 2);
  check(geometry(2, 3, 20, 31, 32, 5, 5, 3, 3, 2, 2), true, relu, 2);
  check(geometry(1, 3, 13, 16, 32, 3, 3, 2, 2, 0, 0), true, relu, 1);
  check(geometry(1, 1, 5, 3, 20, 7, 7, 1, 1, 3, 3), true, relu, 2);
  check(geometry(1, 3, 6, 6, 20, 3, 3, 1, 1, 2, 2), true, none, 1);
  // Every post-op.
  for (StemPostOp post :
       {none, relu, StemPostOp{Kind::Clip, 0.f, 6.f},
        StemPostOp{Kind::Clip, -0.5f, 0.25f}, StemPostOp{Kind::HardSwish}})
    check(geometry(1, 3, 15, 15, 40, 3, 3, 2, 2, 1, 1), true, post, 2);
}

} // namespace
