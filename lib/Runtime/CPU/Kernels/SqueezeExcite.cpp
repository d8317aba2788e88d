//===- SqueezeExcite.cpp - Global average pool and channel scaling --------===//
//
// Part of Loom. See Cpu.h. A squeeze-and-excitation block averages its input
// over every pixel (a global average pool) and, after two small
// convolutions, multiplies the input by the result, one factor a channel.
// Between NHWC buffers oneDNN 2.6 ran both on a plane's channel blocks,
// each thread reading its blocks of every pixel, half of them from the
// other core's cache (the convolution before had written the pixels in
// halves); in EfficientNet-B0 its pool of 1x32x112x112 took 2.6x what
// ONNX Runtime's does (docs/Runtime.md, "Squeeze-and-excitation on
// channels-last buffers"). Here the threads split the pixels, as the
// convolution's SiLU pass does, so each reads what it wrote; the pool sums
// its pixels with eight independent chains of sixteen channels (AVX2: of
// eight) and the calling thread adds the threads' partial sums.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <immintrin.h>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// The mask of the last of a run of channels ending \p rest after its
/// vector's start (rest >= 16: the full vector).
__mmask16 tailMask(int64_t rest) {
  return rest >= 16 ? __mmask16(0xffff) : __mmask16((1u << rest) - 1);
}

/// Sums \p count pixels of \p stride floats from \p in, V vectors of
/// channels each (the last under \p tail), into \p out: U pixels in flight
/// so that U * V >= 8 chains are independent.
template <int V>
__attribute__((target("avx512f"))) void
sumVectors(const float *in, int64_t count, int64_t stride, float *out,
           __mmask16 tail) {
  constexpr int U = (8 + V - 1) / V;
  __m512 acc[U][V];
  for (int u = 0; u < U; ++u)
    for (int v = 0; v < V; ++v)
      acc[u][v] = _mm512_setzero_ps();
  auto mask = [&](int v) { return v == V - 1 ? tail : __mmask16(0xffff); };
  int64_t p = 0;
  for (; p + U <= count; p += U)
    for (int u = 0; u < U; ++u)
      for (int v = 0; v < V; ++v)
        acc[u][v] = _mm512_add_ps(
            acc[u][v],
            _mm512_maskz_loadu_ps(mask(v), in + (p + u) * stride + 16 * v));
  for (; p < count; ++p)
    for (int v = 0; v < V; ++v)
      acc[0][v] = _mm512_add_ps(
          acc[0][v], _mm512_maskz_loadu_ps(mask(v), in + p * stride + 16 * v));
  for (int v = 0; v < V; ++v) {
    for (int u = 1; u < U; ++u)
      acc[0][v] = _mm512_add_ps(acc[0][v], acc[u][v]);
    _mm512_mask_storeu_ps(out + 16 * v, mask(v), acc[0][v]);
  }
}

/// sumVectors<V> by V - 1.
using SumVectors = void (*)(const float *, int64_t, int64_t, float *,
                            __mmask16);
constexpr SumVectors kSumVectors[8] = {
    sumVectors<1>, sumVectors<2>, sumVectors<3>, sumVectors<4>,
    sumVectors<5>, sumVectors<6>, sumVectors<7>, sumVectors<8>};

/// Sums \p count pixels of \p g.channels floats from \p in into \p out,
/// 128 channels (or the rest) at a time.
void sumPixels(const ChannelsLastPlanes &g, const float *in, int64_t count,
               float *out) {
  for (int64_t c = 0; c < g.channels; c += 128) {
    int64_t rest = std::min<int64_t>(128, g.channels - c);
    int64_t vectors = (rest + 15) / 16;
    kSumVectors[vectors - 1](in + c, count, g.channels, out + c,
                             tailMask(rest - (vectors - 1) * 16));
  }
}

/// The lanes of eight below \p rest, as AVX2's masked loads and stores
/// take them (a lane's sign bit).
__attribute__((target("avx2"), always_inline)) inline __m256i
tailLanes8(int64_t rest) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(rest, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// sumPixels with AVX2: 32 channels (or the rest) at a time, two pixels in
/// flight so that eight chains of eight channels are independent.
__attribute__((target("avx2"))) void sumPixels256(const ChannelsLastPlanes &g,
                                                  const float *in,
                                                  int64_t count, float *out) {
  for (int64_t c = 0; c < g.channels; c += 32) {
    int64_t rest = std::min<int64_t>(32, g.channels - c);
    __m256i m[4];
    for (int v = 0; v < 4; ++v)
      m[v] = tailLanes8(rest - 8 * v);
    __m256 acc[2][4];
    for (int u = 0; u < 2; ++u)
      for (int v = 0; v < 4; ++v)
        acc[u][v] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 2 <= count; p += 2)
      for (int u = 0; u < 2; ++u)
        for (int v = 0; v < 4 && 8 * v < rest; ++v)
          acc[u][v] = _mm256_add_ps(
              acc[u][v],
              _mm256_maskload_ps(in + (p + u) * g.channels + c + 8 * v, m[v]));
    for (; p < count; ++p)
      for (int v = 0; v < 4 && 8 * v < rest; ++v)
        acc[0][v] = _mm256_add_ps(
            acc[0][v],
            _mm256_maskload_ps(in + p * g.channels + c + 8 * v, m[v]));
    for (int v = 0; v < 4 && 8 * v < rest; ++v)
      _mm256_maskstore_ps(out + c + 8 * v, m[v],
                          _mm256_add_ps(acc[0][v], acc[1][v]));
  }
}

/// Rows [begin, end) of [outer * pixels] for thread \p t of \p threads:
/// contiguous, as equal as whole rows make them.
struct Rows {
  int64_t begin, end;
};
Rows rowsOf(const ChannelsLastPlanes &g, int64_t t, int64_t threads) {
  int64_t total = g.outer * g.pixels;
  return {total * t / threads, total * (t + 1) / threads};
}

/// Writes to \p out ([channels]) the sums of \p count pixels of
/// \p g.channels floats from \p in.
using SumPixels = void (*)(const ChannelsLastPlanes &g, const float *in,
                           int64_t count, float *out);

/// Sums rows \p r of \p g at \p src into \p partial ([outer][channels]).
void sumRows(const ChannelsLastPlanes &g, const float *src, Rows r,
             float *partial, SumPixels sum) {
  for (int64_t i = r.begin; i < r.end;) {
    int64_t n = i / g.pixels;
    int64_t last = std::min(r.end, (n + 1) * g.pixels);
    sum(g, src + i * g.channels, last - i, partial + n * g.channels);
    i = last;
  }
}

struct ScaleCall;

/// dst = src * factor (+ shift) (ReLU) over pixels [begin, end) of group
/// o, whose factors start at k and shift at b (or null).
using ScalePixels = void (*)(const ScaleCall &, int64_t o, int64_t begin,
                             int64_t end, const float *k, const float *b);

/// A channel scaling's work, with scalePixels of a level by [shift][relu].
struct ScaleCall {
  const ChannelsLastPlanes *g;
  int64_t groups;
  const float *src;
  ChannelScale scale;
  float *dst;
  const ScalePixels (*scalePixels)[2];
};

/// y[c..] = x[c..] * k[c..] (+ b[c..]) (ReLU), the lanes of \p m.
template <bool Shift, bool Relu>
__attribute__((target("avx512f"), always_inline)) inline void
scaleVector(const float *x, float *y, const float *k, const float *b, int64_t c,
            __mmask16 m) {
  __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + c),
                           _mm512_maskz_loadu_ps(m, k + c));
  if constexpr (Shift)
    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, b + c));
  if constexpr (Relu)
    v = _mm512_max_ps(v, _mm512_setzero_ps());
  _mm512_mask_storeu_ps(y + c, m, v);
}

/// dst = src * factor (+ shift) (ReLU) over pixels [begin, end) of group
/// \p o, whose factors start at \p k and shift at \p b (or null).
template <bool Shift, bool Relu>
__attribute__((target("avx512f"))) void
scalePixels(const ScaleCall &call, int64_t o, int64_t begin, int64_t end,
            const float *k, const float *b) {
  const ChannelsLastPlanes &g = *call.g;
  int64_t full = g.channels / 16 * 16;
  __mmask16 tail = tailMask(g.channels - full);
  for (int64_t p = begin; p < end; ++p) {
    const float *x = call.src + (o * g.pixels + p) * g.channels;
    float *y = call.dst + (o * g.pixels + p) * g.channels;
    for (int64_t c = 0; c < full; c += 16)
      scaleVector<Shift, Relu>(x, y, k, b, c, __mmask16(0xffff));
    if (full < g.channels)
      scaleVector<Shift, Relu>(x, y, k, b, full, tail);
  }
}

/// scaleVector with AVX2: eight channels, the lanes of \p m.
template <bool Shift, bool Relu>
__attribute__((target("avx2"), always_inline)) inline void
scaleVector256(const float *x, float *y, const float *k, const float *b,
               int64_t c, __m256i m) {
  __m256 v =
      _mm256_mul_ps(_mm256_maskload_ps(x + c, m), _mm256_maskload_ps(k + c, m));
  if constexpr (Shift)
    v = _mm256_add_ps(v, _mm256_maskload_ps(b + c, m));
  if constexpr (Relu)
    v = _mm256_max_ps(v, _mm256_setzero_ps());
  _mm256_maskstore_ps(y + c, m, v);
}

/// scalePixels with AVX2, eight channels a vector.
template <bool Shift, bool Relu>
__attribute__((target("avx2"))) void
scalePixels256(const ScaleCall &call, int64_t o, int64_t begin, int64_t end,
               const float *k, const float *b) {
  const ChannelsLastPlanes &g = *call.g;
  int64_t full = g.channels / 8 * 8;
  __m256i tail = tailLanes8(g.channels - full);
  __m256i all = _mm256_set1_epi32(-1);
  for (int64_t p = begin; p < end; ++p) {
    const float *x = call.src + (o * g.pixels + p) * g.channels;
    float *y = call.dst + (o * g.pixels + p) * g.channels;
    for (int64_t c = 0; c < full; c += 8)
      scaleVector256<Shift, Relu>(x, y, k, b, c, all);
    if (full < g.channels)
      scaleVector256<Shift, Relu>(x, y, k, b, full, tail);
  }
}

/// scalePixels by (shift, relu), of each level.
constexpr ScalePixels kScalePixels[2][2] = {
    {scalePixels<false, false>, scalePixels<false, true>},
    {scalePixels<true, false>, scalePixels<true, true>}};
constexpr ScalePixels kScalePixels256[2][2] = {
    {scalePixels256<false, false>, scalePixels256<false, true>},
    {scalePixels256<true, false>, scalePixels256<true, true>}};

/// The scaling over rows \p r ([outer * pixels]), a group's pixels at a time.
void scaleRows(const ScaleCall &call, Rows r) {
  const ChannelsLastPlanes &g = *call.g;
  const ChannelScale &s = call.scale;
  ScalePixels run = call.scalePixels[s.shift != nullptr][s.relu];
  for (int64_t i = r.begin; i < r.end;) {
    int64_t o = i / g.pixels, last = std::min(r.end, (o + 1) * g.pixels);
    int64_t image = o / call.groups, within = o % call.groups * g.channels;
    run(call, o, i - o * g.pixels, last - o * g.pixels,
        s.scale + image * s.scaleImage + within,
        s.shift ? s.shift + image * s.shiftImage + within : nullptr);
    i = last;
  }
}

/// The floats a thread below which a pool or a scaling does not fork: a
/// fork and join of the two-thread team cost about what summing 32768 or
/// scaling 16384 floats does (docs/Runtime.md, "Squeeze-and-excitation on
/// channels-last buffers").
constexpr int64_t kPoolFloatsPerThread = 32768;
constexpr int64_t kScaleFloatsPerThread = 16384;

int64_t teamFor(const ChannelsLastPlanes &g, int64_t perThread) {
  return threadsFor(g.outer * g.pixels, g.outer * g.pixels * g.channels,
                    perThread);
}

} // namespace

namespace {

/// globalAveragePoolChannelsLast with \p sum's vectors.
void averagePool(const ChannelsLastPlanes &g, const float *src, float *dst,
                 SumPixels sum) {
  int64_t threads = teamFor(g, kPoolFloatsPerThread);
  int64_t sums = g.outer * g.channels;
  float scale = 1.0f / float(g.pixels);
  if (threads <= 1) {
    sumRows(g, src, {0, g.outer * g.pixels}, dst, sum);
    for (int64_t i = 0; i < sums; ++i)
      dst[i] *= scale;
    return;
  }
  // Thread t sums its rows into partial[t][outer][channels] (zero where
  // its rows miss an outer index).
  std::vector<float> partial(threads * sums, 0.0f);
  forkTeam(threads, [&](int64_t t, int64_t n) {
    sumRows(g, src, rowsOf(g, t, n), partial.data() + t * sums, sum);
  });
  for (int64_t i = 0; i < sums; ++i) {
    float total = partial[i];
    for (int64_t t = 1; t < threads; ++t)
      total += partial[t * sums + i];
    dst[i] = total * scale;
  }
}

/// scaleChannelsLast with a level's scalePixels.
void scale(const ChannelsLastPlanes &g, int64_t groups, const float *src,
           const ChannelScale &factors, float *dst,
           const ScalePixels (*scalePixels)[2]) {
  int64_t threads = teamFor(g, kScaleFloatsPerThread);
  ScaleCall call{&g, groups, src, factors, dst, scalePixels};
  forkShares(g.outer * g.pixels, threads, [&](int64_t begin, int64_t end) {
    scaleRows(call, {begin, end});
  });
}

} // namespace

void cpu::avx512::globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                                const float *src, float *dst) {
  averagePool(g, src, dst, sumPixels);
}

void cpu::avx2::globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                              const float *src, float *dst) {
  averagePool(g, src, dst, sumPixels256);
}

void cpu::avx512::scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                                    const float *src,
                                    const ChannelScale &factors, float *dst) {
  scale(g, groups, src, factors, dst, kScalePixels);
}

void cpu::avx2::scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                                  const float *src, const ChannelScale &factors,
                                  float *dst) {
  scale(g, groups, src, factors, dst, kScalePixels256);
}
