//===- StemConv.cpp - A CNN's stem convolution from NCHW into NHWC --------===//
//
// Part of Loom. See Cpu.h. The first convolution of a CNN reads the model's
// NCHW input of a few channels (an RGB image's three) and writes an NHWC
// result for the convolutions after it. oneDNN 2.6's brgconv computes it in
// NHWC only, so the input was first reordered (transposePlanes) from
// memory; its NCHW kernel (jit:avx512_core) writes nChw16c, which needs a
// reorder after. This kernel reads the NCHW planes in place and writes NHWC:
// a direct convolution whose weights are packed once as
// [kh][kw][c][output channels padded to 16]. A tile is up to 64 output
// channels (4 vectors) of up to 6 pixels of one output row: 24 accumulators,
// each tap's weights loaded once for the six pixels, each pixel's input
// broadcast. The interior pixels of a row (every tap inside the input) run
// in tiles of six with no test per tap; the border pixels one at a time
// over the taps inside. Rows whose taps leave the input above or below run
// over fewer filter rows. Tails of output channels under masks. The
// threads split the output rows.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <array>
#include <immintrin.h>
#include <utility>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// Output channels a tile's vector holds.
constexpr int64_t kLanes = 16;
/// The most vectors of output channels (NB) of one tile, and the most
/// pixels (P) of a tile of NB vectors: up to 24 accumulators of the 32
/// registers, each weight vector loaded once for P pixels.
constexpr int kMaxVectors = 4, kMaxPixels = 12;
constexpr int maxPixels(int vectors) {
  return vectors <= 2 ? 12 : 24 / vectors;
}
/// The interior pixels of a row go in runs of kRunPixels, a multiple of
/// every maxPixels: each block of output channels splits a run into whole
/// tiles.
constexpr int64_t kRunPixels = 24;

__mmask16 firstLanes(int64_t rest) {
  return rest >= 16  ? __mmask16(0xffff)
         : rest <= 0 ? __mmask16(0)
                     : __mmask16((1u << rest) - 1);
}

/// One convolution's run: its geometry and operands.
struct StemCall {
  DenseConvGeometry g;
  const float *src, *weights, *bias;
  StemPostOp post;
  float *dst;
  int64_t paddedOut; ///< output channels padded to a multiple of 16
};

/// The taps of one tile: filter rows [kh0, kh1) and columns [kw0, kw1);
/// \p in is the source at channel 0, filter row kh0 and column kw0 of the
/// tile's first pixel.
struct Taps {
  const float *in;
  int64_t kh0, kh1, kw0, kw1;
};

template <int NB>
__attribute__((target("avx512f"), always_inline)) inline void
finish(const StemCall &k, __m512 *acc, int64_t oc, float *out) {
  const StemPostOp &post = k.post;
  __m512 lo = _mm512_set1_ps(post.lo), hi = _mm512_set1_ps(post.hi);
  __m512 three = _mm512_set1_ps(3.f), six = _mm512_set1_ps(6.f);
  __m512 sixth = _mm512_set1_ps(1.f / 6.f), zero = _mm512_setzero_ps();
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    __m512 v = acc[j];
    switch (post.kind) {
    case StemPostOp::Kind::None:
      break;
    case StemPostOp::Kind::Relu:
      v = _mm512_max_ps(v, zero);
      break;
    case StemPostOp::Kind::Clip:
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      break;
    case StemPostOp::Kind::HardSwish: {
      __m512 gate =
          _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, three), zero), six);
      v = _mm512_mul_ps(_mm512_mul_ps(v, gate), sixth);
      break;
    }
    }
    _mm512_mask_storeu_ps(out + kLanes * j,
                          firstLanes(k.g.outChannels - oc - kLanes * j), v);
  }
}

/// P pixels (\p k's stride apart) of one output row, NB vectors of output
/// channels from \p oc, over taps \p t of C input channels, into \p out
/// (NHWC, the first pixel's channel oc).
template <int C, int NB, int P>
__attribute__((target("avx512f"))) void tile(const StemCall &k, const Taps &t,
                                             int64_t oc, float *out) {
  const DenseConvGeometry &g = k.g;
  // Every loop over the accumulators unrolled whole, so that they stay in
  // registers.
  __m512 acc[P][NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    __m512 b =
        k.bias
            ? _mm512_maskz_loadu_ps(firstLanes(g.outChannels - oc - kLanes * j),
                                    k.bias + oc + kLanes * j)
            : _mm512_setzero_ps();
#pragma unroll
    for (int p = 0; p < P; ++p)
      acc[p][j] = b;
  }
  int64_t plane = g.h * g.w, sw = g.sw, taps = t.kw1 - t.kw0;
  const float *w = k.weights + oc;
  for (int64_t kh = t.kh0; kh < t.kh1; ++kh) {
    const float *x = t.in + (kh - t.kh0) * g.w;
    const float *wr = w + (kh * g.kw + t.kw0) * C * k.paddedOut;
    for (int64_t tap = 0; tap < taps; ++tap, ++x, wr += C * k.paddedOut)
#pragma unroll
      for (int c = 0; c < C; ++c) {
        __m512 wv[NB];
#pragma unroll
        for (int j = 0; j < NB; ++j)
          wv[j] = _mm512_loadu_ps(wr + c * k.paddedOut + kLanes * j);
#pragma unroll
        for (int p = 0; p < P; ++p) {
          __m512 xv = _mm512_set1_ps(x[c * plane + p * sw]);
#pragma unroll
          for (int j = 0; j < NB; ++j)
            acc[p][j] = _mm512_fmadd_ps(xv, wv[j], acc[p][j]);
        }
      }
  }
#pragma unroll
  for (int p = 0; p < P; ++p)
    finish<NB>(k, acc[p], oc, out + p * g.outChannels);
}

using TileFn = void (*)(const StemCall &, const Taps &, int64_t, float *);
using PixelTiles = std::array<TileFn, kMaxPixels>;
using VectorTiles = std::array<PixelTiles, kMaxVectors>;

/// tile<C, NB, P> for P up to maxPixels(NB), null past it.
template <int C, int NB, int... P>
constexpr PixelTiles pixelTiles(std::integer_sequence<int, P...>) {
  PixelTiles out = {};
  ((out[P] = P < maxPixels(NB) ? tile<C, NB, std::min(P, maxPixels(NB) - 1) + 1>
                               : nullptr),
   ...);
  return out;
}

template <int C> constexpr VectorTiles vectorTiles() {
  auto pixels = std::make_integer_sequence<int, kMaxPixels>();
  return {pixelTiles<C, 1>(pixels), pixelTiles<C, 2>(pixels),
          pixelTiles<C, 3>(pixels), pixelTiles<C, 4>(pixels)};
}

/// kTiles[C - 1][NB - 1][P - 1]: tile<C, NB, P>.
constexpr std::array<VectorTiles, 4> kTiles = {
    vectorTiles<1>(), vectorTiles<2>(), vectorTiles<3>(), vectorTiles<4>()};

/// \p pixels (at most kRunPixels; 1 where the taps are cut at the row's
/// ends) of one output row over taps \p t of the first pixel, every output
/// channel, into \p out (the first pixel's). Blocks of 4 vectors of output
/// channels, the last one narrower; each block in tiles of maxPixels.
void pixelsOf(const StemCall &k, const Taps &t, int64_t pixels, float *out) {
  int64_t o = k.g.outChannels;
  const VectorTiles &tiles = kTiles[k.g.channels - 1];
  for (int64_t oc = 0; oc < o; oc += kLanes * kMaxVectors) {
    int vectors =
        int(std::min<int64_t>(kMaxVectors, (o - oc + kLanes - 1) / kLanes));
    int64_t most = maxPixels(vectors);
    for (int64_t p = 0; p < pixels; p += most) {
      Taps at = t;
      at.in += p * k.g.sw;
      tiles[vectors - 1][std::min(most, pixels - p) - 1](k, at, oc,
                                                         out + p * o + oc);
    }
  }
}

/// Output row \p oh of image \p n.
void row(const StemCall &k, int64_t n, int64_t oh) {
  const DenseConvGeometry &g = k.g;
  int64_t top = oh * g.sh - g.padTop;
  int64_t kh0 = std::max<int64_t>(0, -top);
  int64_t kh1 = std::max(kh0, std::min<int64_t>(g.kh, g.h - top));
  // The input at channel 0, filter row kh0 (column 0 of the input).
  const float *in = k.src + n * g.channels * g.h * g.w + (top + kh0) * g.w;
  float *out = k.dst + (n * g.oh + oh) * g.ow * g.outChannels;
  // Interior pixels: every filter column inside the row, ow * sw - padLeft
  // >= 0 and ow * sw - padLeft + kw - 1 < w.
  int64_t first = std::min(g.ow, (g.padLeft + g.sw - 1) / g.sw);
  int64_t reach = g.w - g.kw + g.padLeft;
  int64_t end =
      reach < 0 ? first : std::clamp<int64_t>(reach / g.sw + 1, first, g.ow);
  auto border = [&](int64_t ow) {
    int64_t left = ow * g.sw - g.padLeft;
    int64_t kw0 = std::max<int64_t>(0, -left);
    int64_t kw1 = std::max(kw0, std::min<int64_t>(g.kw, g.w - left));
    pixelsOf(k, Taps{in + left + kw0, kh0, kh1, kw0, kw1}, 1,
             out + ow * g.outChannels);
  };
  for (int64_t ow = 0; ow < first; ++ow)
    border(ow);
  for (int64_t ow = first; ow < end; ow += kRunPixels)
    pixelsOf(k, Taps{in + ow * g.sw - g.padLeft, kh0, kh1, 0, g.kw},
             std::min<int64_t>(kRunPixels, end - ow), out + ow * g.outChannels);
  for (int64_t ow = end; ow < g.ow; ++ow)
    border(ow);
}

void rows(const StemCall &k, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r)
    row(k, r / k.g.oh, r % k.g.oh);
}

int64_t paddedOutOf(const DenseConvGeometry &g) {
  return (g.outChannels + kLanes - 1) / kLanes * kLanes;
}

} // namespace

std::vector<float> cpu::packStemWeights(const DenseConvGeometry &g,
                                        const float *oihw) {
  int64_t padded = paddedOutOf(g);
  std::vector<float> out(g.kh * g.kw * g.channels * padded, 0.f);
  for (int64_t o = 0; o < g.outChannels; ++o)
    for (int64_t c = 0; c < g.channels; ++c)
      for (int64_t y = 0; y < g.kh; ++y)
        for (int64_t x = 0; x < g.kw; ++x)
          out[((y * g.kw + x) * g.channels + c) * padded + o] =
              oihw[((o * g.channels + c) * g.kh + y) * g.kw + x];
  return out;
}

void cpu::avx512::convolveStem(const DenseConvGeometry &g, const float *src,
                               const float *packed, const float *bias,
                               const StemPostOp &post, float *dst) {
  StemCall k{g, src, packed, bias, post, dst, paddedOutOf(g)};
  int64_t total = g.batch * g.oh;
  if (total == 0 || g.ow == 0 || g.outChannels == 0)
    return;
  // Small convolutions run on the calling thread already: the CPU device
  // prepares them on one (Threads.cpp, runsAlone).
  forkShares(total, threadsFor(total, total, 1),
             [&](int64_t begin, int64_t end) { rows(k, begin, end); });
}
