//===- WinogradConvTest.cpp - 3x3 convolutions by Winograd on nChw8c ------===//
//
// Part of Loom. lib/Runtime/CPU/Kernels/WinogradConv.cpp: every form of
// convolveWinograd8 this CPU runs, with output tiles of 2x2 and of 4x4,
// against a scalar direct convolution
// (double sums) between nChw8c buffers: planes of odd and even sizes (a
// last tile half outside the output), 1x1 and 2x2 planes, more tiles than
// one chunk of the transformed operands holds, padding 0, 1
// and 2, 8 to 72 channels in and out (an odd number of 8-channel blocks:
// a half-empty panel of 16), batch 1 and 3, with and without a bias, an
// addend apart and in place, no clamp, a ReLU and a clip; on one thread
// and on teams of two and three. The floats around the result stay
// untouched. Compiled in from lib/Runtime (no oneDNN needed).
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

std::vector<const CpuKernelTable *> forms() {
  return formsOf(&CpuKernelTable::convolveWinograd8);
}

/// A 3x3 convolution of stride 1 with padding \p pad on every side.
DenseConvGeometry geometry(int64_t batch, int64_t c, int64_t h, int64_t w,
                           int64_t o, int64_t pad) {
  DenseConvGeometry g;
  g.batch = batch, g.channels = c, g.h = h, g.w = w, g.outChannels = o;
  g.kh = g.kw = 3;
  g.oh = h + 2 * pad - 2, g.ow = w + 2 * pad - 2;
  g.padTop = g.padLeft = pad;
  return g;
}

/// The offset of channel \p c of pixel (y, x) of image \p n in an nChw8c
/// buffer of \p channels channels on an \p h x \p w plane.
int64_t blockedAt(int64_t n, int64_t c, int64_t y, int64_t x, int64_t channels,
                  int64_t h, int64_t w) {
  return (((n * (channels / 8) + c / 8) * h + y) * w + x) * 8 + c % 8;
}

enum class Addend { None, Apart, InPlace };

/// \p t's convolveWinograd8 of \p g on a team of \p threads against the
/// scalar sums.
void check(const CpuKernelTable &t, int tile, const DenseConvGeometry &g,
           bool withBias, Addend addend, float lo, float hi, int threads) {
  std::vector<float> src(g.batch * g.channels * g.h * g.w);
  std::vector<float> w(g.outChannels * g.channels * 9), bias(g.outChannels);
  fillPattern(src, 7919, 97, 16.f);
  fillPattern(w, 104729, 89, 32.f);
  fillPattern(bias, 1, 7, 4.f);
  int64_t n = g.batch * g.oh * g.ow * g.outChannels;
  std::vector<float> sum(n);
  for (int64_t i = 0; i < n; ++i)
    sum[i] = float(int64_t(i * 31 % 13) - 6) / 8.f;
  std::vector<float> dst(n + 2 * kGuardFloats, kGuard);
  if (addend == Addend::InPlace)
    std::copy(sum.begin(), sum.end(), dst.begin() + kGuardFloats);
  PointwiseEpilogue e;
  e.bias = withBias ? bias.data() : nullptr;
  e.sum = addend == Addend::Apart     ? sum.data()
          : addend == Addend::InPlace ? dst.data() + kGuardFloats
                                      : nullptr;
  e.lo = lo, e.hi = hi;
  AlignedFloats packed = packWinogradWeights(g, tile, w.data());
  onTeam(threads, [&] {
    t.convolveWinograd8(g, tile, src.data(), packed.data(), e,
                        dst.data() + kGuardFloats);
  });
  int64_t wrote;
  ASSERT_TRUE(guardsKept(dst, n, wrote))
      << "written outside the result at " << wrote;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t o = 0; o < g.outChannels; ++o) {
          int64_t at = blockedAt(b, o, y, x, g.outChannels, g.oh, g.ow);
          double r = withBias ? bias[o] : 0.0;
          if (addend != Addend::None)
            r += sum[at];
          double size = std::fabs(r);
          for (int64_t c = 0; c < g.channels; ++c)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                int64_t iy = y - g.padTop + i, ix = x - g.padLeft + j;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                  continue;
                double p =
                    double(src[blockedAt(b, c, iy, ix, g.channels, g.h, g.w)]) *
                    w[((o * g.channels + c) * 3 + i) * 3 + j];
                r += p;
                size += std::fabs(p);
              }
          r = std::min<double>(std::max<double>(r, lo), hi);
          ASSERT_NEAR(dst[kGuardFloats + at], r, 1e-5 * (size + 1))
              << loom::artifact::cpuIsaName(t.isa) << ", tiles of " << tile
              << ": image " << b << " pixel " << y << "," << x << " channel "
              << o << " of " << g.channels << " -> " << g.outChannels << " pad "
              << g.padTop << " at " << g.h << "x" << g.w << ", " << threads
              << " thread(s)";
        }
}

constexpr float kInf = __builtin_inff();

TEST(WinogradConv, MatchesScalarConvolution) {
  if (forms().empty())
    GTEST_SKIP() << "no form of convolveWinograd8 on this CPU (no AVX2)";
  for (const CpuKernelTable *t : forms())
    for (int tile : {2, 4}) {
      // ResNet's shape (a residual sum and a ReLU) at odd and even planes, on
      // teams of one to three.
      for (int threads : {1, 2, 3}) {
        check(*t, tile, geometry(1, 64, 15, 15, 64, 1), true, Addend::Apart,
              0.f, kInf, threads);
        check(*t, tile, geometry(2, 32, 12, 9, 48, 1), true, Addend::InPlace,
              0.f, kInf, threads);
      }
      // Channels in and out by 8 (half-empty panels of 16), no bias.
      for (int64_t c : {8, 24, 72})
        for (int64_t o : {8, 16, 40})
          check(*t, tile, geometry(1, c, 7, 10, o, 1), c == 24, Addend::None,
                -kInf, kInf, 2);
      // Padding 0 and 2, planes of 1x1 and 2x2 outputs, batch 3.
      check(*t, tile, geometry(1, 16, 9, 8, 16, 0), true, Addend::None, 0.f,
            kInf, 2);
      check(*t, tile, geometry(1, 16, 6, 7, 24, 2), true, Addend::Apart, -kInf,
            kInf, 2);
      check(*t, tile, geometry(3, 8, 3, 3, 8, 0), true, Addend::None, -kInf,
            kInf, 2);
      check(*t, tile, geometry(1, 16, 1, 2, 16, 1), false, Addend::InPlace,
            -kInf, kInf, 1);
      // More tiles than a chunk of V and M holds (8 -> 8 channels: 2,730
      // tiles of 2x2 a chunk, 1,213 of 4x4), a ReLU.
      check(*t, tile, geometry(3, 8, 96, 96, 8, 1), true, Addend::Apart, 0.f,
            kInf, 2);
      // A clip.
      check(*t, tile, geometry(1, 16, 11, 5, 32, 1), true, Addend::None, -1.f,
            6.f, 2);
    }
}

} // namespace
