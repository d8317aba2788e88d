//===- WinogradConv.cpp - 3x3 convolutions by Winograd on nChw8c (AVX2) ---===//
//
// Part of Loom. See Cpu.h. With AVX-512 oneDNN 2.6 runs a 3x3 convolution
// of stride 1 by Winograd's algorithm (`jit_fp32_wino_2x3:avx512_core`,
// `jit_wino_4x3` from batch 2); on AVX2 it has no Winograd kernel and runs
// `jit:avx2` direct, at about 90% of this machine's AVX2 peak, so capped to
// AVX2 ResNet-18 took 1.45x its uncapped time on Zen 4, whose AVX-512 is no
// wider than AVX2 (docs/Runtime.md, "Winograd convolutions on AVX2"). Here
// F(M x M, 3x3) between nChw8c buffers, M = 2 (16 products for 4 outputs)
// or 4 (36 for 16), alpha = M + 2, in three phases over the team:
//
//  1. Each alpha x alpha input tile (output tiles of M x M, their windows
//     overlapping by 2) of every 8-channel block becomes V = B' d B: alpha^2
//     vectors of 8 channels, stored as alpha^2 matrices
//     V[xi][tile][channel].
//  2. For each position xi, the product M[xi] = V[xi] x U[xi] over the
//     input channels, U = G g G' the weights transformed once at load
//     ([alpha^2][outChannels / 16][channels][16]): a tile of 6 rows by 16
//     output channels (12 accumulators, two weight vectors, a broadcast),
//     the panel of U in L1 while the rows run over it.
//  3. Each tile's alpha^2 vectors of M of an output block become its M x M
//     outputs Y = A' M A, plus the bias and the addend, clamped, stored
//     where they lie inside the output.
//
// The phases run on chunks of tiles whose V and M (4 MB) stay in the
// last-level cache, in scratch memory of the calling thread kept between
// runs.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <array>
#include <immintrin.h>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// The channels of a block: one AVX2 vector.
constexpr int64_t kBlock = 8;
/// The output channels of a panel of U (two vectors), and the rows of a
/// product's tile.
constexpr int64_t kPanel = 16;
constexpr int kRows = 6;

/// The sizes of one convolution's transformed operands, and the chunk of
/// tiles the phases run on.
struct Shape {
  int64_t tile;                  ///< outputs a tile has per side (m)
  int64_t alpha;                 ///< inputs a tile reads per side (m + 2)
  int64_t positions;             ///< alpha x alpha
  int64_t tilesH, tilesW, tiles; ///< output tiles: per row, column, all
                                 ///< images
  int64_t outPadded;             ///< outChannels rounded up to kPanel
  int64_t first = 0, count = 0;  ///< the chunk: tiles [first, first + count)
};

Shape shapeOf(const DenseConvGeometry &g, int tile) {
  Shape s;
  s.tile = tile;
  s.alpha = tile + 2;
  s.positions = s.alpha * s.alpha;
  s.tilesH = (g.oh + tile - 1) / tile;
  s.tilesW = (g.ow + tile - 1) / tile;
  s.tiles = g.batch * s.tilesH * s.tilesW;
  s.outPadded = (g.outChannels + kPanel - 1) / kPanel * kPanel;
  return s;
}

/// c * x + y.
__attribute__((target("avx2,fma"), always_inline)) inline __m256
mulAdd(float c, __m256 x, __m256 y) {
  return _mm256_fmadd_ps(_mm256_set1_ps(c), x, y);
}

/// Winograd's transforms of F(M x M, 3 x 3) (Lavin and Gray's matrices),
/// each applied to one side of a tile: the input's B' (alpha points to
/// alpha), the output's A' (alpha points to M) and the filter's G (3 points
/// to alpha, in double, once at load).
template <int M> struct Transforms;

template <> struct Transforms<2> {
  static constexpr int kAlpha = 4;
  /// t0 = x0 - x2, t1 = x1 + x2, t2 = x2 - x1, t3 = x1 - x3.
  __attribute__((target("avx2,fma"), always_inline)) static void
  input(const __m256 *x, __m256 *t) {
    t[0] = _mm256_sub_ps(x[0], x[2]);
    t[1] = _mm256_add_ps(x[1], x[2]);
    t[2] = _mm256_sub_ps(x[2], x[1]);
    t[3] = _mm256_sub_ps(x[1], x[3]);
  }
  /// y0 = m0 + m1 + m2, y1 = m1 - m2 - m3.
  __attribute__((target("avx2,fma"), always_inline)) static void
  output(const __m256 *m, __m256 *y) {
    y[0] = _mm256_add_ps(_mm256_add_ps(m[0], m[1]), m[2]);
    y[1] = _mm256_sub_ps(_mm256_sub_ps(m[1], m[2]), m[3]);
  }
  static constexpr double kG[4][3] = {
      {1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
};

template <> struct Transforms<4> {
  static constexpr int kAlpha = 6;
  /// t0 = 4 x0 - 5 x2 + x4, t1 = -4 (x1 + x2) + x3 + x4,
  /// t2 = 4 (x1 - x2) - x3 + x4, t3 = 2 (x3 - x1) - x2 + x4,
  /// t4 = 2 (x1 - x3) - x2 + x4, t5 = 4 x1 - 5 x3 + x5.
  __attribute__((target("avx2,fma"), always_inline)) static void
  input(const __m256 *x, __m256 *t) {
    __m256 x34 = _mm256_add_ps(x[3], x[4]), x4m3 = _mm256_sub_ps(x[4], x[3]);
    __m256 x4m2 = _mm256_sub_ps(x[4], x[2]);
    t[0] = mulAdd(4.f, x[0], mulAdd(-5.f, x[2], x[4]));
    t[1] = mulAdd(-4.f, _mm256_add_ps(x[1], x[2]), x34);
    t[2] = mulAdd(4.f, _mm256_sub_ps(x[1], x[2]), x4m3);
    t[3] = mulAdd(2.f, _mm256_sub_ps(x[3], x[1]), x4m2);
    t[4] = mulAdd(2.f, _mm256_sub_ps(x[1], x[3]), x4m2);
    t[5] = mulAdd(4.f, x[1], mulAdd(-5.f, x[3], x[5]));
  }
  /// y0 = m0 + (m1 + m2) + (m3 + m4), y1 = (m1 - m2) + 2 (m3 - m4),
  /// y2 = (m1 + m2) + 4 (m3 + m4), y3 = (m1 - m2) + 8 (m3 - m4) + m5.
  __attribute__((target("avx2,fma"), always_inline)) static void
  output(const __m256 *m, __m256 *y) {
    __m256 s12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
    __m256 s34 = _mm256_add_ps(m[3], m[4]), d34 = _mm256_sub_ps(m[3], m[4]);
    y[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
    y[1] = mulAdd(2.f, d34, d12);
    y[2] = mulAdd(4.f, s34, s12);
    y[3] = _mm256_add_ps(mulAdd(8.f, d34, d12), m[5]);
  }
  static constexpr double kG[6][3] = {{1. / 4, 0, 0},
                                      {-1. / 6, -1. / 6, -1. / 6},
                                      {-1. / 6, 1. / 6, -1. / 6},
                                      {1. / 24, 1. / 12, 1. / 6},
                                      {1. / 24, -1. / 12, 1. / 6},
                                      {0, 0, 1}};
};

/// Phase 1 for the chunk's tiles [begin, end): V[xi][tile][channel].
template <int M>
__attribute__((target("avx2,fma"))) void
transformInput(const DenseConvGeometry &g, const Shape &sh, const float *src,
               float *v, int64_t begin, int64_t end) {
  constexpr int A = Transforms<M>::kAlpha;
  int64_t blocks = g.channels / kBlock, plane = sh.count * g.channels;
  for (int64_t i = begin; i < end; ++i) {
    int64_t tile = sh.first + i, n = tile / (sh.tilesH * sh.tilesW);
    int64_t ty = tile / sh.tilesW % sh.tilesH, tx = tile % sh.tilesW;
    int64_t y0 = M * ty - g.padTop, x0 = M * tx - g.padLeft;
    for (int64_t b = 0; b < blocks; ++b) {
      const float *image = src + (n * blocks + b) * g.h * g.w * kBlock;
      __m256 rows[A][A];
      for (int r = 0; r < A; ++r) {
        __m256 d[A];
        int64_t y = y0 + r;
        for (int j = 0; j < A; ++j) {
          int64_t x = x0 + j;
          d[j] = y >= 0 && y < g.h && x >= 0 && x < g.w
                     ? _mm256_loadu_ps(image + (y * g.w + x) * kBlock)
                     : _mm256_setzero_ps();
        }
        Transforms<M>::input(d, rows[r]);
      }
      float *out = v + i * g.channels + b * kBlock;
      for (int j = 0; j < A; ++j) {
        __m256 column[A], t[A];
        for (int r = 0; r < A; ++r)
          column[r] = rows[r][j];
        Transforms<M>::input(column, t);
        for (int r = 0; r < A; ++r)
          _mm256_storeu_ps(out + (r * A + j) * plane, t[r]);
      }
    }
  }
}

/// R rows of M[xi] by one panel: the sums over the channels of V's rows
/// (\p v, \p ld floats apart) times the panel (\p u: [channels][16]).
template <int R>
__attribute__((target("avx2,fma"))) void
product(const float *v, int64_t ld, const float *u, int64_t channels, float *m,
        int64_t mld) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t c = 0; c < channels; ++c) {
    __m256 w0 = _mm256_load_ps(u + c * kPanel);
    __m256 w1 = _mm256_load_ps(u + c * kPanel + kBlock);
    for (int r = 0; r < R; ++r) {
      __m256 x = _mm256_broadcast_ss(v + r * ld + c);
      acc[r][0] = _mm256_fmadd_ps(x, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, w1, acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(m + r * mld, acc[r][0]);
    _mm256_storeu_ps(m + r * mld + kBlock, acc[r][1]);
  }
}

using ProductFn = void (*)(const float *, int64_t, const float *, int64_t,
                           float *, int64_t);
constexpr std::array<ProductFn, kRows> kProducts = {
    product<1>, product<2>, product<3>, product<4>, product<5>, product<6>};

/// Phase 2 for the items [begin, end) of position xi by panel: every row
/// of M[xi] by the panel.
void multiply(const DenseConvGeometry &g, const Shape &sh, const float *v,
              const float *u, float *m, int64_t begin, int64_t end) {
  int64_t panels = sh.outPadded / kPanel;
  for (int64_t item = begin; item < end; ++item) {
    int64_t xi = item / panels, p = item % panels;
    const float *vx = v + xi * sh.count * g.channels;
    const float *panel = u + (xi * panels + p) * g.channels * kPanel;
    float *mx = m + xi * sh.count * sh.outPadded + p * kPanel;
    for (int64_t row = 0; row < sh.count; row += kRows) {
      int64_t rows = std::min<int64_t>(kRows, sh.count - row);
      kProducts[rows - 1](vx + row * g.channels, g.channels, panel, g.channels,
                          mx + row * sh.outPadded, sh.outPadded);
    }
  }
}

/// Phase 3 for the chunk's tiles [begin, end): dst's M x M pixels of each.
template <int M>
__attribute__((target("avx2,fma"))) void
transformOutput(const DenseConvGeometry &g, const Shape &sh, const float *m,
                const PointwiseEpilogue &e, float *dst, int64_t begin,
                int64_t end) {
  constexpr int A = Transforms<M>::kAlpha;
  int64_t blocks = g.outChannels / kBlock, plane = sh.count * sh.outPadded;
  bool clampLo = e.lo != -__builtin_inff(), clampHi = e.hi != __builtin_inff();
  __m256 lo = _mm256_set1_ps(e.lo), hi = _mm256_set1_ps(e.hi);
  for (int64_t i = begin; i < end; ++i) {
    int64_t tile = sh.first + i, n = tile / (sh.tilesH * sh.tilesW);
    int64_t ty = tile / sh.tilesW % sh.tilesH, tx = tile % sh.tilesW;
    for (int64_t b = 0; b < blocks; ++b) {
      const float *in = m + i * sh.outPadded + b * kBlock;
      __m256 rows[A][M];
      for (int r = 0; r < A; ++r) {
        __m256 x[A];
        for (int j = 0; j < A; ++j)
          x[j] = _mm256_loadu_ps(in + (r * A + j) * plane);
        Transforms<M>::output(x, rows[r]);
      }
      __m256 bias =
          e.bias ? _mm256_loadu_ps(e.bias + b * kBlock) : _mm256_setzero_ps();
      int64_t at = (n * blocks + b) * g.oh * g.ow;
      for (int j = 0; j < M; ++j) {
        __m256 column[A], y[M];
        for (int r = 0; r < A; ++r)
          column[r] = rows[r][j];
        Transforms<M>::output(column, y);
        int64_t ox = M * tx + j;
        for (int r = 0; r < M; ++r) {
          int64_t oy = M * ty + r;
          if (oy >= g.oh || ox >= g.ow)
            continue;
          int64_t pixel = (at + oy * g.ow + ox) * kBlock;
          __m256 o = _mm256_add_ps(y[r], bias);
          if (e.sum)
            o = _mm256_add_ps(o, _mm256_loadu_ps(e.sum + pixel));
          if (clampLo)
            o = _mm256_max_ps(o, lo);
          if (clampHi)
            o = _mm256_min_ps(o, hi);
          _mm256_storeu_ps(dst + pixel, o);
        }
      }
    }
  }
}

/// U = G g G' of every filter for F(M x M, 3 x 3), in double, into
/// [alpha^2][outPadded / 16][channels][16] (the padding zero).
template <int M>
AlignedFloats packFor(const DenseConvGeometry &g, const float *oihw) {
  constexpr int A = Transforms<M>::kAlpha;
  const auto &G = Transforms<M>::kG;
  Shape sh = shapeOf(g, M);
  int64_t panels = sh.outPadded / kPanel;
  AlignedFloats packed(sh.positions * sh.outPadded * g.channels, 0.f);
  for (int64_t o = 0; o < g.outChannels; ++o)
    for (int64_t c = 0; c < g.channels; ++c) {
      const float *k = oihw + (o * g.channels + c) * 9;
      double gk[A][3];
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < 3; ++j)
          gk[i][j] = G[i][0] * k[j] + G[i][1] * k[3 + j] + G[i][2] * k[6 + j];
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) {
          double u =
              gk[i][0] * G[j][0] + gk[i][1] * G[j][1] + gk[i][2] * G[j][2];
          int64_t xi = i * A + j;
          packed[((xi * panels + o / kPanel) * g.channels + c) * kPanel +
                 o % kPanel] = float(u);
        }
    }
  return packed;
}

/// The calling thread's scratch for V and M, kept between runs (a step
/// may run on several streams at once: one scratch a calling thread).
float *scratch(int64_t floats) {
  thread_local AlignedFloats buffer;
  if (int64_t(buffer.size()) < floats)
    buffer.resize(floats);
  return buffer.data();
}

/// The bytes of V and M for one chunk of tiles: the three phases run a
/// chunk at a time, so that what the first writes and the third reads stays
/// in the last-level cache (at batch 8 ResNet-18's first stage needs 51 MB
/// of them in all).
constexpr int64_t kChunkBytes = 4 << 20;

/// The multiply-adds of 8 lanes a thread below which a phase does not
/// fork (SqueezeExcite.cpp's figure for a fork and join of the team).
constexpr int64_t kFmasPerThread = 32768;

} // namespace

AlignedFloats cpu::packWinogradWeights(const DenseConvGeometry &g, int tile,
                                       const float *oihw) {
  return tile == 4 ? packFor<4>(g, oihw) : packFor<2>(g, oihw);
}

namespace {

/// convolveWinograd8 with F(M x M, 3 x 3).
template <int M>
void convolveTiles(const DenseConvGeometry &g, const float *src,
                   const float *packed, const PointwiseEpilogue &e,
                   float *dst) {
  Shape sh = shapeOf(g, M);
  int64_t rowFloats = sh.positions * (g.channels + sh.outPadded);
  int64_t chunk =
      std::clamp<int64_t>(kChunkBytes / (rowFloats * 4), kRows, sh.tiles);
  float *v = scratch(chunk * rowFloats);
  int64_t panels = sh.outPadded / kPanel;
  for (sh.first = 0; sh.first < sh.tiles; sh.first += chunk) {
    sh.count = std::min(chunk, sh.tiles - sh.first);
    float *m = v + sh.positions * sh.count * g.channels;
    int64_t fmas = sh.positions * sh.count * g.channels * panels * 2;
    int64_t threads = threadsFor(sh.count, fmas, kFmasPerThread);
    forkShares(sh.count, threads, [&](int64_t begin, int64_t end) {
      transformInput<M>(g, sh, src, v, begin, end);
    });
    forkShares(sh.positions * panels, threads, [&](int64_t begin, int64_t end) {
      multiply(g, sh, v, packed, m, begin, end);
    });
    forkShares(sh.count, threads, [&](int64_t begin, int64_t end) {
      transformOutput<M>(g, sh, m, e, dst, begin, end);
    });
  }
}

} // namespace

void cpu::avx2::convolveWinograd8(const DenseConvGeometry &g, int tile,
                                  const float *src, const float *packed,
                                  const PointwiseEpilogue &e, float *dst) {
  if (tile == 4)
    return convolveTiles<4>(g, src, packed, e, dst);
  convolveTiles<2>(g, src, packed, e, dst);
}
