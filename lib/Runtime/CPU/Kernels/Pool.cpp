//===- Pool.cpp - Max and average pooling on channels-last buffers --------===//
//
// Part of Loom. See Cpu.h. oneDNN 2.6's jit max pooling (pooling_v2,
// jit:avx512_core) on NHWC buffers took 1.6-1.7x what ONNX Runtime's NCHWc
// pooling does in GoogLeNet and Inception-v3, and 1.3-2.2x what this kernel
// does; its unpadded averages (DenseNet's transitions) 3-4.5x ONNX
// Runtime's (docs/Runtime.md, "Pooling on channels-last buffers"). A buffer
// whose pixels hold their channels contiguously (NHWC: all C of them;
// nChw16c / nChw8c: a block of 16 or 8, the blocks outermost after the
// batch) is pooled here: every output pixel is the max or the average of
// its window's pixels, sixteen channels a vector, 8 or 4 vectors of one
// pixel or one vector of 4 pixels in flight (independent chains), the
// output rows (and, where there are few, the channels) split over OpenMP's
// team. The AVX2 form does the same eight channels a vector (nChw8c, AVX2
// oneDNN's blocked layout, one vector a pixel). Pools over plain planes
// (every window inside, column stride 1 or 2) take sixteen (AVX2: eight)
// outputs of a row a vector.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <cfloat>
#include <immintrin.h>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// The window of output pixel \p o along one dimension: [begin, end) of
/// the input, clipped to it.
struct Span {
  int64_t begin, end;
};
Span window(int64_t o, int64_t stride, int64_t pad, int64_t kernel,
            int64_t in) {
  int64_t b = o * stride - pad;
  return {std::max<int64_t>(b, 0), std::min(b + kernel, in)};
}

/// P output pixels of one row (windows \p ys x \p xs[p]), N vectors of
/// channels each at \p src and \p dst (the last under \p tail): P * N
/// independent chains of max, or of sums divided by the window's pixels
/// inside the input (\p g.average). A window without a pixel inside the
/// input (none in oneDNN's shapes) gives 0.
template <int P, int N, bool Average>
__attribute__((target("avx512f"))) void
pixels(const PoolGeometry &g, const float *src, float *dst, Span ys,
       const Span *xs, __mmask16 tail) {
  __m512 acc[P][N];
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < N; ++v)
      acc[p][v] = _mm512_set1_ps(
          !Average && ys.end > ys.begin && xs[p].end > xs[p].begin ? -FLT_MAX
                                                                   : 0.f);
  for (int64_t iy = ys.begin; iy < ys.end; ++iy)
    for (int p = 0; p < P; ++p)
      for (int64_t ix = xs[p].begin; ix < xs[p].end; ++ix) {
        const float *in = src + (iy * g.w + ix) * g.channels;
        for (int v = 0; v < N; ++v) {
          __mmask16 m = v == N - 1 ? tail : __mmask16(0xffff);
          __m512 x = _mm512_maskz_loadu_ps(m, in + 16 * v);
          acc[p][v] = Average ? _mm512_add_ps(acc[p][v], x)
                              : _mm512_max_ps(acc[p][v], x);
        }
      }
  for (int p = 0; p < P; ++p) {
    int64_t count = (ys.end - ys.begin) * (xs[p].end - xs[p].begin);
    __m512 scale = _mm512_set1_ps(count > 0 ? 1.f / float(count) : 0.f);
    for (int v = 0; v < N; ++v)
      _mm512_mask_storeu_ps(
          dst + p * g.channels + 16 * v, v == N - 1 ? tail : __mmask16(0xffff),
          Average ? _mm512_mul_ps(acc[p][v], scale) : acc[p][v]);
  }
}

/// pixels<P, N, Average> for \p g.average.
template <int P, int N>
void pixels(const PoolGeometry &g, const float *src, float *dst, Span ys,
            const Span *xs, __mmask16 tail) {
  if (g.average)
    pixels<P, N, true>(g, src, dst, ys, xs, tail);
  else
    pixels<P, N, false>(g, src, dst, ys, xs, tail);
}

/// Output row \p y of outer index \p n, channels [c0, c1): 128 and then 64
/// channels of one pixel at a time, the rest a vector of four pixels at a
/// time (a blocked layout's 16 or 8 channels: its only vector). \p xs holds
/// the row's column windows.
__attribute__((target("avx512f"))) void
poolRow(const PoolGeometry &g, const float *src, float *dst, int64_t n,
        int64_t y, int64_t c0, int64_t c1, const std::vector<Span> &xs) {
  const float *in = src + n * g.h * g.w * g.channels;
  float *out = dst + (n * g.oh + y) * g.ow * g.channels;
  Span ys = window(y, g.sh, g.padTop, g.kh, g.h);
  int64_t c = c0;
  for (; c + 128 <= c1; c += 128)
    for (int64_t x = 0; x < g.ow; ++x)
      pixels<1, 8>(g, in + c, out + x * g.channels + c, ys, &xs[x], 0xffff);
  for (; c + 64 <= c1; c += 64)
    for (int64_t x = 0; x < g.ow; ++x)
      pixels<1, 4>(g, in + c, out + x * g.channels + c, ys, &xs[x], 0xffff);
  for (; c < c1; c += 16) {
    __mmask16 tail =
        c + 16 <= c1 ? __mmask16(0xffff) : __mmask16((1u << (c1 - c)) - 1);
    int64_t x = 0;
    for (; x + 4 <= g.ow; x += 4)
      pixels<4, 1>(g, in + c, out + x * g.channels + c, ys, &xs[x], tail);
    for (; x < g.ow; ++x)
      pixels<1, 1>(g, in + c, out + x * g.channels + c, ys, &xs[x], tail);
  }
}

/// The lanes of eight below \p rest, as AVX2's masked loads and stores
/// take them (a lane's sign bit).
__attribute__((target("avx2"), always_inline)) inline __m256i
firstLanes8(int64_t rest) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(rest, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// pixels with AVX2: N vectors of eight channels (the last under \p tail).
template <int P, int N, bool Average>
__attribute__((target("avx2"))) void
pixels256(const PoolGeometry &g, const float *src, float *dst, Span ys,
          const Span *xs, __m256i tail) {
  __m256 acc[P][N];
  // A whole last vector loads and stores with plain moves: on AMD's Zen a
  // masked store (vmaskmovps) is microcoded, many times a plain one's cost.
  bool whole = _mm256_movemask_ps(_mm256_castsi256_ps(tail)) == 0xff;
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < N; ++v)
      acc[p][v] = _mm256_set1_ps(
          !Average && ys.end > ys.begin && xs[p].end > xs[p].begin ? -FLT_MAX
                                                                   : 0.f);
  for (int64_t iy = ys.begin; iy < ys.end; ++iy)
    for (int p = 0; p < P; ++p)
      for (int64_t ix = xs[p].begin; ix < xs[p].end; ++ix) {
        const float *in = src + (iy * g.w + ix) * g.channels;
        for (int v = 0; v < N; ++v) {
          __m256 x = v < N - 1 || whole ? _mm256_loadu_ps(in + 8 * v)
                                         : _mm256_maskload_ps(in + 8 * v, tail);
          acc[p][v] = Average ? _mm256_add_ps(acc[p][v], x)
                              : _mm256_max_ps(acc[p][v], x);
        }
      }
  for (int p = 0; p < P; ++p) {
    int64_t count = (ys.end - ys.begin) * (xs[p].end - xs[p].begin);
    __m256 scale = _mm256_set1_ps(count > 0 ? 1.f / float(count) : 0.f);
    for (int v = 0; v < N; ++v) {
      __m256 x = Average ? _mm256_mul_ps(acc[p][v], scale) : acc[p][v];
      if (v < N - 1 || whole)
        _mm256_storeu_ps(dst + p * g.channels + 8 * v, x);
      else
        _mm256_maskstore_ps(dst + p * g.channels + 8 * v, tail, x);
    }
  }
}

/// pixels256<P, N, Average> for \p g.average.
template <int P, int N>
__attribute__((target("avx2"))) void
pixels256(const PoolGeometry &g, const float *src, float *dst, Span ys,
          const Span *xs, __m256i tail) {
  if (g.average)
    pixels256<P, N, true>(g, src, dst, ys, xs, tail);
  else
    pixels256<P, N, false>(g, src, dst, ys, xs, tail);
}

/// poolRow with AVX2: 64 and then 32 channels of one pixel at a time, the
/// rest a vector of eight channels of four pixels at a time (a blocked
/// layout's 8 channels: its only vector).
__attribute__((target("avx2"))) void
poolRow256(const PoolGeometry &g, const float *src, float *dst, int64_t n,
           int64_t y, int64_t c0, int64_t c1, const std::vector<Span> &xs) {
  const float *in = src + n * g.h * g.w * g.channels;
  float *out = dst + (n * g.oh + y) * g.ow * g.channels;
  Span ys = window(y, g.sh, g.padTop, g.kh, g.h);
  const __m256i all = _mm256_set1_epi32(-1);
  int64_t c = c0;
  for (; c + 64 <= c1; c += 64)
    for (int64_t x = 0; x < g.ow; ++x)
      pixels256<1, 8>(g, in + c, out + x * g.channels + c, ys, &xs[x], all);
  for (; c + 32 <= c1; c += 32)
    for (int64_t x = 0; x < g.ow; ++x)
      pixels256<1, 4>(g, in + c, out + x * g.channels + c, ys, &xs[x], all);
  for (; c < c1; c += 8) {
    __m256i tail = firstLanes8(c1 - c);
    int64_t x = 0;
    for (; x + 4 <= g.ow; x += 4)
      pixels256<4, 1>(g, in + c, out + x * g.channels + c, ys, &xs[x], tail);
    for (; x < g.ow; ++x)
      pixels256<1, 1>(g, in + c, out + x * g.channels + c, ys, &xs[x], tail);
  }
}

/// Output row y of outer index n, channels [c0, c1), the row's column
/// windows xs: poolRow of a level.
using PoolRow = void (*)(const PoolGeometry &g, const float *src, float *dst,
                         int64_t n, int64_t y, int64_t c0, int64_t c1,
                         const std::vector<Span> &xs);

/// The work: output rows (an outer index and an output row) times channel
/// slices of sliceFloats, numbered row-major, each by \p row.
struct PoolCall {
  const PoolGeometry *g;
  const float *src;
  float *dst;
  int64_t slices, sliceFloats;
  PoolRow row;
};

int64_t items(const PoolCall &call) {
  return call.g->outer * call.g->oh * call.slices;
}

/// Items [begin, end) of \p call.
void poolRange(const PoolCall &call, int64_t begin, int64_t end) {
  const PoolGeometry &g = *call.g;
  std::vector<Span> xs(g.ow);
  for (int64_t x = 0; x < g.ow; ++x)
    xs[x] = window(x, g.sw, g.padLeft, g.kw, g.w);
  for (int64_t i = begin; i < end; ++i) {
    int64_t row = i / call.slices, slice = i % call.slices;
    int64_t c0 = slice * call.sliceFloats;
    int64_t c1 = std::min(g.channels, c0 + call.sliceFloats);
    call.row(g, call.src, call.dst, row / g.oh, row % g.oh, c0, c1, xs);
  }
}

/// Sixteen (under \p m: fewer) consecutive outputs of a plain plane's
/// row, window columns starting at \p in (the first output's window) with
/// stride \p sw of 1 or 2: the values at in[sw * i + kx] for each kx of the
/// window, folded into \p acc. Stride 2 loads 32 floats and keeps the even
/// ones (a permute of two vectors).
template <bool Average>
__attribute__((target("avx512f"))) __m512
planeTaps(__m512 acc, const float *in, int64_t kw, int64_t sw, __mmask16 m,
          int64_t lanes) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                         22, 24, 26, 28, 30);
  // Stride 2: the last output reads float 2 * (lanes - 1) + kx.
  int64_t span = 2 * (lanes - 1) + 1;
  __mmask16 lo = __mmask16(span >= 16 ? 0xffff : (1u << span) - 1);
  __mmask16 hi = __mmask16(span <= 16   ? 0
                           : span >= 32 ? 0xffff
                                        : (1u << (span - 16)) - 1);
  for (int64_t kx = 0; kx < kw; ++kx) {
    __m512 x;
    if (sw == 1) {
      x = _mm512_maskz_loadu_ps(m, in + kx);
    } else {
      __m512 a = _mm512_maskz_loadu_ps(lo, in + kx);
      __m512 b = _mm512_maskz_loadu_ps(hi, in + kx + 16);
      x = _mm512_permutex2var_ps(a, even, b);
    }
    acc = Average ? _mm512_add_ps(acc, x) : _mm512_max_ps(acc, x);
  }
  return acc;
}

/// Output rows [begin, end) (a plane and a row, numbered row-major) of a
/// pool over plain planes, every window inside the plane.
template <bool Average>
__attribute__((target("avx512f"))) void planeRows(const PoolGeometry &g,
                                                  const float *src, float *dst,
                                                  int64_t begin, int64_t end) {
  __m512 scale = _mm512_set1_ps(1.f / float(g.kh * g.kw));
  for (int64_t r = begin; r < end; ++r) {
    int64_t plane = r / g.oh, y = r % g.oh;
    const float *in = src + plane * g.h * g.w + y * g.sh * g.w;
    float *out = dst + r * g.ow;
    for (int64_t x = 0; x < g.ow; x += 16) {
      int64_t lanes = std::min<int64_t>(16, g.ow - x);
      __mmask16 m = __mmask16(lanes == 16 ? 0xffff : (1u << lanes) - 1);
      __m512 acc = _mm512_set1_ps(Average ? 0.f : -FLT_MAX);
      for (int64_t ky = 0; ky < g.kh; ++ky)
        acc = planeTaps<Average>(acc, in + ky * g.w + x * g.sw, g.kw, g.sw, m,
                                 lanes);
      _mm512_mask_storeu_ps(out + x, m,
                            Average ? _mm512_mul_ps(acc, scale) : acc);
    }
  }
}

/// planeTaps with AVX2: eight (\p lanes; the first under \p m) outputs.
/// Stride 2 loads sixteen floats and keeps the even ones (a shuffle within
/// each 128-bit half, then the halves' 64-bit pairs put in order).
template <bool Average>
__attribute__((target("avx2"))) __m256 planeTaps256(__m256 acc,
                                                    const float *in,
                                                    int64_t kw, int64_t sw,
                                                    __m256i m, int64_t lanes) {
  int64_t span = 2 * (lanes - 1) + 1;
  __m256i lo = firstLanes8(span), hi = firstLanes8(span - 8);
  for (int64_t kx = 0; kx < kw; ++kx) {
    __m256 x;
    if (sw == 1) {
      x = lanes == 8 ? _mm256_loadu_ps(in + kx) : _mm256_maskload_ps(in + kx, m);
    } else {
      __m256 a = span >= 8 ? _mm256_loadu_ps(in + kx)
                           : _mm256_maskload_ps(in + kx, lo);
      __m256 b = _mm256_maskload_ps(in + kx + 8, hi);
      // a0 a2 b0 b2 | a4 a6 b4 b6 -> a0 a2 a4 a6 b0 b2 b4 b6.
      __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
      x = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even),
                                                 _MM_SHUFFLE(3, 1, 2, 0)));
    }
    acc = Average ? _mm256_add_ps(acc, x) : _mm256_max_ps(acc, x);
  }
  return acc;
}

/// planeRows with AVX2: eight outputs a vector.
template <bool Average>
__attribute__((target("avx2"))) void planeRows256(const PoolGeometry &g,
                                                  const float *src, float *dst,
                                                  int64_t begin, int64_t end) {
  __m256 scale = _mm256_set1_ps(1.f / float(g.kh * g.kw));
  for (int64_t r = begin; r < end; ++r) {
    int64_t plane = r / g.oh, y = r % g.oh;
    const float *in = src + plane * g.h * g.w + y * g.sh * g.w;
    float *out = dst + r * g.ow;
    for (int64_t x = 0; x < g.ow; x += 8) {
      int64_t lanes = std::min<int64_t>(8, g.ow - x);
      __m256i m = firstLanes8(lanes);
      __m256 acc = _mm256_set1_ps(Average ? 0.f : -FLT_MAX);
      for (int64_t ky = 0; ky < g.kh; ++ky)
        acc = planeTaps256<Average>(acc, in + ky * g.w + x * g.sw, g.kw, g.sw,
                                    m, lanes);
      __m256 y = Average ? _mm256_mul_ps(acc, scale) : acc;
      if (lanes == 8)
        _mm256_storeu_ps(out + x, y); // (a masked store is microcoded on Zen)
      else
        _mm256_maskstore_ps(out + x, m, y);
    }
  }
}

/// The window taps (floats read) per thread below which the pool does not
/// fork: a fork and join of the two-thread team cost about what 32768
/// taps do (docs/Runtime.md, "Pooling on channels-last buffers").
constexpr int64_t kPoolTapsPerThread = 32768;

} // namespace

namespace {

/// poolChannelsLast with \p poolRow's vectors.
void poolWith(const PoolGeometry &g, const float *src, float *dst,
              PoolRow poolRow) {
  int64_t taps = g.outer * g.oh * g.ow * g.channels * g.kh * g.kw;
  int64_t threads = threadsFor(taps, taps, kPoolTapsPerThread);
  // Rows are the unit of work; where there are fewer than four a thread,
  // the channels are split too, in whole vectors.
  PoolCall call{&g, src, dst, 1, g.channels, poolRow};
  int64_t rows = g.outer * g.oh, vectors = (g.channels + 15) / 16;
  if (rows < 4 * threads) {
    call.slices = std::min(vectors, (4 * threads + rows - 1) / rows);
    call.sliceFloats = (vectors + call.slices - 1) / call.slices * 16;
    call.slices = (g.channels + call.sliceFloats - 1) / call.sliceFloats;
  }
  forkShares(items(call), threads,
             [&](int64_t begin, int64_t end) { poolRange(call, begin, end); });
}

} // namespace

void cpu::avx512::poolChannelsLast(const PoolGeometry &g, const float *src,
                                   float *dst) {
  poolWith(g, src, dst, poolRow);
}

void cpu::avx2::poolChannelsLast(const PoolGeometry &g, const float *src,
                                 float *dst) {
  poolWith(g, src, dst, poolRow256);
}

namespace {

/// A plane row function: planeRows<Average> of a level.
using PlaneRows = void (*)(const PoolGeometry &g, const float *src,
                           float *dst, int64_t begin, int64_t end);

/// poolPlanes with \p rows (max) or \p averages: the output rows split
/// over the team.
void planesWith(const PoolGeometry &g, const float *src, float *dst,
                PlaneRows rows, PlaneRows averages) {
  int64_t count = g.outer * g.oh;
  int64_t taps = count * g.ow * g.kh * g.kw;
  int64_t threads = threadsFor(count, taps, kPoolTapsPerThread);
  PlaneRows run = g.average ? averages : rows;
  forkShares(count, threads, [&](int64_t begin, int64_t end) {
    run(g, src, dst, begin, end);
  });
}

} // namespace

void cpu::avx512::poolPlanes(const PoolGeometry &g, const float *src,
                             float *dst) {
  planesWith(g, src, dst, planeRows<false>, planeRows<true>);
}

void cpu::avx2::poolPlanes(const PoolGeometry &g, const float *src,
                           float *dst) {
  planesWith(g, src, dst, planeRows256<false>, planeRows256<true>);
}
