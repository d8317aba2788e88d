//===- GroupedConv.cpp - Grouped convolutions on channels-last buffers ----===//
//
// Part of Loom. See Cpu.h. RegNet's grouped convolutions have groups of 16
// channels (one AVX-512 vector of a group's outputs); between NHWC buffers
// oneDNN 2.6 ran its jit:avx512_core kernel on them with weights in
// aBCde16c16b, and in RegNet-Y-800MF the first of them (64 -> 64, 4 groups,
// 3x3 stride 2 at 112x112) took 1.5x what ONNX Runtime's does
// (docs/Runtime.md, "Grouped convolutions of 16-channel groups"). Here each
// output row is computed a group at a time: the group's input rows under
// the row's windows are first packed, zero-padded, into a small buffer
// whose columns are ordered by the phase of the stride, so that the pixels
// of a tile read consecutive vectors; a tile of up to 14 output pixels of
// the row holds one accumulator vector a pixel (16 output channels); for
// every tap and input channel a weight vector of 16 output channels is
// multiplied with the input values broadcast. For a 3-wide window at
// stride 1 or 2, an input value is broadcast once for every tap of its
// phase (up to 3 multiply-adds a load); any other window loads one a
// multiply-add. OpenMP's team splits chunks of output rows, in each chunk
// the groups, in each group the chunk's rows: a small plane by groups.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <array>
#include <immintrin.h>
#include <utility>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// The most output pixels a tile holds (one accumulator each).
constexpr int kMaxTile = 14;

/// The input channels a slice holds: one vector.
constexpr int64_t kSlice = 16;

/// The columns of a phase of a packed row (packRow).
int64_t columnsOf(const GroupedConvGeometry &g) {
  return g.ow - 1 + (g.kw + g.sw - 1) / g.sw;
}

/// Packs the input of output row \p oy of image \p n for the group whose
/// first input channel is \p channel into \p out: for each slice of 16
/// input channels of the group, each tap row ky and each phase f of the
/// stride (the input columns x with x + padLeft = x' * sw + f), the columns
/// x' = 0 .. columnsOf(g) - 1 of 16 floats, zero outside the input:
/// [slices][kh][sw][columns][16]. Output pixel ox's tap kx reads phase
/// kx % sw, column ox + kx / sw: a tile's pixels read consecutive vectors
/// whatever the stride.
__attribute__((target("avx512f"))) void
packRow(const GroupedConvGeometry &g, const float *src, int64_t n, int64_t oy,
        int64_t channel, float *out) {
  int64_t columns = columnsOf(g);
  for (int64_t s = 0; s < g.groupChannels / kSlice; ++s)
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      int64_t iy = oy * g.sh - g.padTop + ky;
      const float *in =
          iy >= 0 && iy < g.h
              ? src + (n * g.h + iy) * g.w * g.channels + channel + s * kSlice
              : nullptr;
      for (int64_t f = 0; f < g.sw; ++f)
        for (int64_t c = 0; c < columns; ++c, out += kSlice) {
          int64_t x = c * g.sw + f - g.padLeft;
          __m512 v = in && x >= 0 && x < g.w
                         ? _mm512_loadu_ps(in + x * g.channels)
                         : _mm512_setzero_ps();
          _mm512_storeu_ps(out, v);
        }
    }
}

/// One tile's operands: the row's packed input at the tile's first output
/// column, its block's packed weights ([slices][kh][16 ic][kw][16 oc]) and
/// 16 biases (or null), \p dst at the first output pixel's block.
struct Tile {
  const float *src;
  int64_t columns;
  const float *weights, *bias;
  float *dst;
};

/// The bias, the ReLU and the store of T accumulators.
template <int T, bool Relu>
__attribute__((target("avx512f"), always_inline)) inline void
store(const GroupedConvGeometry &g, const Tile &t, __m512 *acc) {
  __m512 bias = t.bias ? _mm512_loadu_ps(t.bias) : _mm512_setzero_ps();
  for (int p = 0; p < T; ++p) {
    __m512 v = _mm512_add_ps(acc[p], bias);
    if (Relu)
      v = _mm512_max_ps(v, _mm512_setzero_ps());
    _mm512_storeu_ps(t.dst + p * g.outChannels, v);
  }
}

/// T output pixels of tile \p t, any window and stride: for every tap and
/// input channel a weight vector of 16 output channels is loaded once and
/// multiplied with each pixel's input value broadcast, one accumulator a
/// pixel.
template <int T, bool Relu>
__attribute__((target("avx512f"))) void tile(const GroupedConvGeometry &g,
                                             const Tile &t) {
  __m512 acc[T];
  for (int p = 0; p < T; ++p)
    acc[p] = _mm512_setzero_ps();
  for (int64_t s = 0; s < g.groupChannels / kSlice; ++s)
    for (int64_t ky = 0; ky < g.kh; ++ky)
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const float *in =
            t.src + (((s * g.kh + ky) * g.sw + kx % g.sw) * t.columns +
                     kx / g.sw) *
                        kSlice;
        const float *w = t.weights + ((s * g.kh + ky) * kSlice * g.kw + kx) * 16;
        for (int64_t c = 0; c < kSlice; ++c) {
          __m512 wv = _mm512_loadu_ps(w + c * g.kw * 16);
          for (int p = 0; p < T; ++p)
            acc[p] = _mm512_fmadd_ps(_mm512_set1_ps(in[p * kSlice + c]), wv,
                                     acc[p]);
        }
      }
  store<T, Relu>(g, t, acc);
}

/// The taps of phase F (kx = F, F + SW, ...) of a window KW wide at
/// stride SW, over the 16 input channels of one slice: each input value of
/// the phase's columns \p in is broadcast once and multiplied with the
/// weight vector ([16 ic][kw][16 oc] at \p w) of every tap that reads it.
template <int T, int SW, int KW, int F>
__attribute__((target("avx512f"), always_inline)) inline void
phase(__m512 *acc, const float *in, const float *w) {
  constexpr int taps = (KW - F + SW - 1) / SW;
  if constexpr (taps > 0) {
    for (int64_t c = 0; c < kSlice; ++c) {
      __m512 wv[taps];
#pragma unroll
      for (int q = 0; q < taps; ++q)
        wv[q] = _mm512_loadu_ps(w + (c * KW + F + q * SW) * 16);
#pragma unroll
      for (int j = 0; j < T + taps - 1; ++j) {
        __m512 x = _mm512_set1_ps(in[j * kSlice + c]);
#pragma unroll
        for (int q = 0; q < taps; ++q)
          if (j - q >= 0 && j - q < T)
            acc[j - q] = _mm512_fmadd_ps(x, wv[q], acc[j - q]);
      }
    }
  }
}

/// phase<T, SW, KW, F> for each phase F of the stride, whose columns start
/// \p columns vectors apart from \p row.
template <int T, int SW, int KW, size_t... F>
__attribute__((target("avx512f"), always_inline)) inline void
phases(__m512 *acc, const float *row, int64_t columns, const float *w,
       std::index_sequence<F...>) {
  (phase<T, SW, KW, int(F)>(acc, row + int64_t(F) * columns * kSlice, w),
   ...);
}

/// tile<T, Relu> for a window KW wide at stride SW: an input value
/// broadcast once serves every tap of its phase (the pixels whose windows
/// hold it), KW / SW multiply-adds a load instead of one.
template <int T, int SW, int KW, bool Relu>
__attribute__((target("avx512f"))) void
tileReusing(const GroupedConvGeometry &g, const Tile &t) {
  __m512 acc[T];
  for (int p = 0; p < T; ++p)
    acc[p] = _mm512_setzero_ps();
  for (int64_t s = 0; s < g.groupChannels / kSlice; ++s)
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const float *w = t.weights + (s * g.kh + ky) * KW * kSlice * 16;
      const float *row = t.src + (s * g.kh + ky) * SW * t.columns * kSlice;
      phases<T, SW, KW>(acc, row, t.columns, w, std::make_index_sequence<SW>());
    }
  store<T, Relu>(g, t, acc);
}
/// A tile's function by its pixels - 1.
using TileFn = void (*)(const GroupedConvGeometry &, const Tile &);
using Tiles = std::array<TileFn, kMaxTile>;
template <bool Relu, size_t... I>
constexpr Tiles anyWindow(std::index_sequence<I...>) {
  return {tile<int(I) + 1, Relu>...};
}
template <int SW, int KW, bool Relu, size_t... I>
constexpr Tiles reusing(std::index_sequence<I...>) {
  return {tileReusing<int(I) + 1, SW, KW, Relu>...};
}

/// The tile functions for \p g: tileReusing for 3-wide windows at stride
/// 1 or 2, tile for any other.
const TileFn *tilesFor(const GroupedConvGeometry &g) {
  constexpr auto seq = std::make_index_sequence<kMaxTile>();
  static constexpr Tiles table[3][2] = {
      {anyWindow<false>(seq), anyWindow<true>(seq)},
      {reusing<1, 3, false>(seq), reusing<1, 3, true>(seq)},
      {reusing<2, 3, false>(seq), reusing<2, 3, true>(seq)}};
  int kind = g.kw != 3 || g.sw > 2 ? 0 : int(g.sw);
  return table[kind][g.relu].data();
}

/// A convolution's run: the geometry, its buffers, the packed weights.
struct Call {
  const GroupedConvGeometry *g;
  const float *src, *weights, *bias;
  float *dst;
};

/// The input bytes a chunk of output rows reads at most, about half of a
/// core's L2: the chunk is run a group at a time, each group's weights
/// staying in L1 over the chunk's rows while the rows stay in L2 for the
/// next group.
constexpr int64_t kChunkBytes = 256 << 10;

/// The output rows of a chunk: as many as read kChunkBytes of new input
/// rows (at least one).
int64_t chunkRows(const GroupedConvGeometry &g) {
  return std::max<int64_t>(1, kChunkBytes / (g.sh * g.w * g.channels * 4));
}

/// A unit of work: output row \p row ([batch * oh]) of the blocks of
/// \p group.
struct Item {
  int64_t group, row;
};

/// Item \p it of \p call, the input of its group packed into \p packed
/// first.
void convolve(const Call &call, Item it, float *packed) {
  const GroupedConvGeometry &g = *call.g;
  const TileFn *run = tilesFor(g);
  int64_t n = it.row / g.oh, oy = it.row % g.oh, columns = columnsOf(g);
  int64_t blocks = g.outChannels / g.groups / 16;
  int64_t blockWeights = g.kh * g.kw * g.groupChannels * 16;
  int64_t tiles = (g.ow + kMaxTile - 1) / kMaxTile;
  packRow(g, call.src, n, oy, it.group * g.groupChannels, packed);
  for (int64_t b = it.group * blocks; b < (it.group + 1) * blocks; ++b) {
    Tile t{packed, columns, call.weights + b * blockWeights,
           call.bias ? call.bias + b * 16 : nullptr, nullptr};
    float *out = call.dst + it.row * g.ow * g.outChannels + b * 16;
    for (int64_t i = 0; i < tiles; ++i) {
      int64_t begin = g.ow * i / tiles, end = g.ow * (i + 1) / tiles;
      t.src = packed + begin * kSlice;
      t.dst = out + begin * g.outChannels;
      run[end - begin - 1](g, t);
    }
  }
}

/// Item \p i of the order the threads split: chunks of chunkRows output
/// rows, in each chunk the groups, in each group the chunk's rows. A plane
/// of one chunk is split by groups (each thread reads the weights of its
/// groups only), a larger one by chunks of rows.
Item itemAt(const GroupedConvGeometry &g, int64_t i) {
  int64_t rows = g.batch * g.oh, chunk = chunkRows(g);
  int64_t c = std::min(i / (g.groups * chunk), (rows - 1) / chunk);
  int64_t first = c * chunk, within = i - first * g.groups;
  int64_t count = std::min(chunk, rows - first);
  return {within / count, first + within % count};
}

int64_t itemsOf(const GroupedConvGeometry &g) {
  return g.groups * g.batch * g.oh;
}

/// Items [begin, end) of \p call on the calling thread.
void convolveItems(const Call &call, int64_t begin, int64_t end) {
  const GroupedConvGeometry &g = *call.g;
  AlignedFloats packed(g.groupChannels * g.kh * g.sw * columnsOf(g));
  for (int64_t i = begin; i < end; ++i)
    convolve(call, itemAt(g, i), packed.data());
}

/// The multiply-adds of 16 lanes a thread below which a convolution does
/// not fork: about 3 us of them at the 5.7 G a second one core ran here,
/// about what a fork and join of the two-thread team cost the other
/// channels-last kernels (SqueezeExcite.cpp). Not measured for this kernel:
/// the rule's convolutions have millions of them.
constexpr int64_t kFmasPerThread = 16384;

} // namespace

AlignedFloats cpu::packGroupedConvWeights(const GroupedConvGeometry &g,
                                          const float *oihw) {
  // OIHW [o][icg][kh][kw] -> [o / 16][icg / 16][kh][16 ic][kw][16 oc]:
  // the weights of a tile stream in the order it reads them.
  int64_t icg = g.groupChannels;
  AlignedFloats packed(g.outChannels * icg * g.kh * g.kw);
  for (int64_t o = 0; o < g.outChannels; ++o)
    for (int64_t c = 0; c < icg; ++c)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          int64_t slice = o / 16 * (icg / kSlice) + c / kSlice;
          packed[(((slice * g.kh + ky) * kSlice + c % kSlice) * g.kw + kx) *
                     16 +
                 o % 16] = oihw[((o * icg + c) * g.kh + ky) * g.kw + kx];
        }
  return packed;
}

void cpu::avx512::groupedConvChannelsLast(const GroupedConvGeometry &g,
                                  const float *src, const float *packed,
                                  const float *bias, float *dst) {
  Call call{&g, src, packed, bias, dst};
  int64_t rows = g.batch * g.oh;
  int64_t fmas = rows * g.ow * (g.outChannels / 16) * g.kh * g.kw *
                 g.groupChannels;
  int64_t items = itemsOf(g);
  forkShares(items, threadsFor(items, fmas, kFmasPerThread),
             [&](int64_t begin, int64_t end) {
               convolveItems(call, begin, end);
             });
}
