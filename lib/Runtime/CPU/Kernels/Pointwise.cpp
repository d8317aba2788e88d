//===- Pointwise.cpp - 1x1 convolutions on channels-last buffers ----------===//
//
// Part of Loom. See Cpu.h. A pointwise convolution (1x1, stride 1, no
// padding, one group) between NHWC buffers is the product dst[p][o] =
// src[p][k] x W[k][o] over M = batch x pixels rows. On small planes (M of 49
// or 196, hundreds to 1500 channels) oneDNN 2.6's forms (brgconv_1x1,
// jit_1x1, matmul) took 1.1-1.2x what ONNX Runtime's MLAS takes in MNASNet
// and RegNet-Y (docs/Runtime.md, "Pointwise convolutions on small planes").
// Here the weights are packed once into columns of sixteen output channels
// ([O / 16][K][16], zero-padded); a tile of 6 pixels x 4 columns (24
// accumulators, the source broadcast; with AVX2 6 pixels x 1 column, in
// halves of eight) runs over a block of k whose weights
// stay in L1 while the tiles of all the pixels run over it; while they run,
// the next block's weights are prefetched into L2. The threads split the
// pixels, or where there are few pixels and many channels the columns (each
// thread then streams its part of the weights once). Bias, the residual sum
// (in place or not) and ReLU or a clip are applied before the store, to NHWC
// or, channel by channel, to a plain NCHW image.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <new>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// Pixels a tile (its accumulators' rows) and, with AVX-512, vectors of
/// sixteen output channels a panel (its columns): 6 x 4 = 24 accumulators,
/// four registers the panel's weights of one k, one the broadcast pixel
/// (7 x 4 spilled two accumulators a k). With AVX2 (16 registers of eight
/// floats) a panel is one column, two registers: 6 x 2 = 12 accumulators,
/// two the weights, one the broadcast (MLAS's AVX2 kernel is 6 x 16 too).
constexpr int kRows = 6;
constexpr int kVectors512 = 4;
constexpr int kVectors256 = 1;

/// The most k a block of a panel's weights spans: 4 columns x 160 k x 64
/// bytes = 40 KiB, in L1 while every tile of the share's pixels runs over
/// it (K = 1488 in blocks of 149, K = 320 of 160, K = 144 whole). Over all
/// of K (416 -> 1280: 104 KiB) each tile read the panel from L2 again; blocks
/// of at most 128 k were 3-5% faster on MNASNet's and RegNet-Y's 7x7 steps
/// (K 416 to 1488) but 8-10% slower on RegNet-Y's 144 -> 144 at 28x28 (two
/// blocks of 72) and 2-4% on its 320 -> 320 at 14x14 (three of 107) than
/// blocks of at most 192 (2 threads).
constexpr int64_t kBlockK = 160;

/// What one tile reads and writes: its pixels' sums over one block of k.
struct Tile {
  const float *src;  ///< its first pixel's first k of the block
  int64_t srcLd;     ///< the floats a pixel of src holds (K)
  const float *w;    ///< its first column's packed weights of the block
  int64_t wColumn;   ///< the floats between two columns of w (16 K)
  int64_t kb;        ///< the k of the block
  float *dst;        ///< its first pixel's first channel
  const float *sum;  ///< the addend at dst's place, or null
  const float *bias; ///< at dst's first channel, or null
  int64_t ld;        ///< the floats a pixel of dst (and sum) holds
  /// The floats between two channels of dst: 1 (NHWC), or the pixels of a
  /// plain NCHW result (ld 1; then the block is all of K), written by
  /// scatters.
  int64_t channelStride;
  int64_t lastLanes; ///< the channels of the tile's last column (1-16)
  /// The first block starts from zero and adds bias and addend; the others
  /// from the partial sums in dst; the last applies the activation.
  bool firstBlock, lastBlock;
  const float *ahead; ///< weights to prefetch, a line a k (null: none)
  int64_t aheadLines; ///< how many lines of them
};

/// act(x) of the epilogue: max(lo, min(hi, x)) (ReLU: lo 0, hi +inf).
template <bool Clamp>
__attribute__((target("avx512f"), always_inline)) inline __m512
activate(__m512 x, const PointwiseEpilogue &e) {
  if constexpr (Clamp)
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(e.lo)),
                      _mm512_set1_ps(e.hi));
  return x;
}

/// Stores \p x at row \p r, vector \p v of the tile's dst.
__attribute__((target("avx512f"), always_inline)) inline void
store(const Tile &t, int r, int v, __mmask16 m, __m512 x) {
  if (t.channelStride == 1)
    return _mm512_mask_storeu_ps(t.dst + r * t.ld + 16 * v, m, x);
  __m512i lane =
      _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  _mm512_mask_i32scatter_ps(
      t.dst + r + 16 * v * t.channelStride, m,
      _mm512_mullo_epi32(lane, _mm512_set1_epi32(int(t.channelStride))), x, 4);
}

/// R pixels x V vectors: the sums over the block, then the partial sums of
/// the blocks before (in dst) or (first block) bias and addend, then (last
/// block) the activation.
template <int R, int V, bool Clamp>
__attribute__((target("avx512f"))) void tile(const Tile &t,
                                             const PointwiseEpilogue &e) {
  __m512 acc[R][V];
  __mmask16 lanes[V];
  for (int v = 0; v < V; ++v)
    lanes[v] =
        v == V - 1 ? __mmask16((1u << t.lastLanes) - 1) : __mmask16(0xffff);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < t.kb; ++k) {
    if (k < t.aheadLines)
      _mm_prefetch(reinterpret_cast<const char *>(t.ahead + k * 16),
                   _MM_HINT_T1);
    __m512 w[V];
    for (int v = 0; v < V; ++v)
      w[v] = _mm512_load_ps(t.w + v * t.wColumn + k * 16);
    for (int r = 0; r < R; ++r) {
      __m512 s = _mm512_set1_ps(t.src[r * t.srcLd + k]);
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm512_fmadd_ps(s, w[v], acc[r][v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    __mmask16 m = lanes[v];
    __m512 b = t.firstBlock && t.bias
                   ? _mm512_maskz_loadu_ps(m, t.bias + 16 * v)
                   : _mm512_setzero_ps();
    for (int r = 0; r < R; ++r) {
      __m512 x = _mm512_add_ps(acc[r][v], b);
      if (!t.firstBlock)
        x = _mm512_add_ps(x,
                          _mm512_maskz_loadu_ps(m, t.dst + r * t.ld + 16 * v));
      else if (t.sum)
        x = _mm512_add_ps(x,
                          _mm512_maskz_loadu_ps(m, t.sum + r * t.ld + 16 * v));
      store(t, r, v, m, t.lastBlock ? activate<Clamp>(x, e) : x);
    }
  }
}

/// tile<R, V, Clamp> by [R - 1][V - 1][Clamp].
using TileFn = void (*)(const Tile &, const PointwiseEpilogue &);
template <int R, bool Clamp>
constexpr TileFn kRow[kVectors512] = {tile<R, 1, Clamp>, tile<R, 2, Clamp>,
                                      tile<R, 3, Clamp>, tile<R, 4, Clamp>};
template <bool Clamp>
constexpr const TileFn *kTilesOf[kRows] = {kRow<1, Clamp>, kRow<2, Clamp>,
                                           kRow<3, Clamp>, kRow<4, Clamp>,
                                           kRow<5, Clamp>, kRow<6, Clamp>};

/// The lanes of eight (\p half 0: channels 0-7 of a column, 1: 8-15) that
/// hold one of the column's \p count channels, as AVX2's masked loads and
/// stores take them (a lane's sign bit).
__attribute__((target("avx2"), always_inline)) inline __m256i
halfLanes(int64_t count, int half) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count - 8 * half)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Eight floats at \p p: all of them where the half is \p whole, else the
/// lanes of \p m (0 beyond).
__attribute__((target("avx2"), always_inline)) inline __m256
loadHalf(const float *p, bool whole, __m256i m) {
  return whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

/// tile's function with AVX2 on one column (two halves of eight channels):
/// R pixels x 16 channels.
template <int R, bool Clamp>
__attribute__((target("avx2,fma"))) void tile256(const Tile &t,
                                                 const PointwiseEpilogue &e) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < t.kb; ++k) {
    if (k < t.aheadLines)
      _mm_prefetch(reinterpret_cast<const char *>(t.ahead + k * 16),
                   _MM_HINT_T1);
    __m256 w0 = _mm256_load_ps(t.w + k * 16),
           w1 = _mm256_load_ps(t.w + k * 16 + 8);
    for (int r = 0; r < R; ++r) {
      __m256 s = _mm256_broadcast_ss(t.src + r * t.srcLd + k);
      acc[r][0] = _mm256_fmadd_ps(s, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(s, w1, acc[r][1]);
    }
  }
  for (int h = 0; h < 2 && 8 * h < t.lastLanes; ++h) {
    // Masked loads and stores only for a partial half: on AMD's Zen a
    // masked store (vmaskmovps) is microcoded, many times a plain one's
    // cost, and this epilogue runs once a block of k per tile (Zen 3, 2
    // threads, warm: 96 -> 384 over 3136 pixels 4.05-4.23 -> 2.51 ms,
    // 768 -> 2304 over 196 7.67-7.95 -> 7.04; loom-bench-small-plane).
    bool whole = t.lastLanes >= 8 * (h + 1);
    __m256i m = halfLanes(t.lastLanes, h);
    __m256 b = t.firstBlock && t.bias ? loadHalf(t.bias + 8 * h, whole, m)
                                      : _mm256_setzero_ps();
    for (int r = 0; r < R; ++r) {
      __m256 x = _mm256_add_ps(acc[r][h], b);
      if (!t.firstBlock)
        x = _mm256_add_ps(x, loadHalf(t.dst + r * t.ld + 8 * h, whole, m));
      else if (t.sum)
        x = _mm256_add_ps(x, loadHalf(t.sum + r * t.ld + 8 * h, whole, m));
      if (t.lastBlock && Clamp)
        x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(e.lo)),
                          _mm256_set1_ps(e.hi));
      if (t.channelStride == 1) {
        if (whole)
          _mm256_storeu_ps(t.dst + r * t.ld + 8 * h, x);
        else
          _mm256_maskstore_ps(t.dst + r * t.ld + 8 * h, m, x);
        continue;
      }
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, x);
      for (int l = 0; l < 8 && 8 * h + l < t.lastLanes; ++l)
        t.dst[r + (8 * h + l) * t.channelStride] = lanes[l];
    }
  }
}

template <bool Clamp>
constexpr TileFn kRow256[kRows][kVectors256] = {
    {tile256<1, Clamp>}, {tile256<2, Clamp>}, {tile256<3, Clamp>},
    {tile256<4, Clamp>}, {tile256<5, Clamp>}, {tile256<6, Clamp>}};
template <bool Clamp>
constexpr const TileFn *kTiles256Of[kRows] = {
    kRow256<Clamp>[0], kRow256<Clamp>[1], kRow256<Clamp>[2],
    kRow256<Clamp>[3], kRow256<Clamp>[4], kRow256<Clamp>[5]};

/// A form of the kernel: the columns of its widest panel and its tiles by
/// [rows - 1][columns - 1], without and with the clamp.
struct Form {
  int vectors;
  const TileFn *const *tiles[2];
};
constexpr Form kForm512{kVectors512, {kTilesOf<false>, kTilesOf<true>}};
constexpr Form kForm256{kVectors256, {kTiles256Of<false>, kTiles256Of<true>}};

/// One run's operands.
struct Call {
  const Form *form;
  const PointwiseWeights *w;
  int64_t pixels;
  const float *src;
  const PointwiseEpilogue *e;
  float *dst;
  /// The threads' grid: groups of columns x groups of pixels.
  int64_t columnGroups, pixelGroups;
};

/// A thread's share: columns [begin, end) of sixteen channels, pixels
/// [first, last).
struct Share {
  int64_t begin, end, first, last;
};

/// The block of weights prefetched into L2 while the tiles of one run: its
/// columns [col, col + vectors), its k [begin, end).
struct Ahead {
  int64_t col, vectors, begin, end;
};

/// The first column of panel \p j of the \p panels of share \p s.
int64_t panelStart(const Share &s, int64_t panels, int64_t j) {
  return s.begin + (s.end - s.begin) * j / panels;
}

/// The block after block \p b of panel \p j of share \p s (K = \p k in
/// \p blocks blocks): the panel's next block, or after its last the next
/// panel's first (none after the share's last panel).
Ahead aheadOf(const Share &s, int64_t k, int64_t blocks, int64_t panels,
              int64_t j, int64_t b) {
  int64_t col = panelStart(s, panels, j);
  if (b + 1 < blocks)
    return {col, panelStart(s, panels, j + 1) - col, k * (b + 1) / blocks,
            k * (b + 2) / blocks};
  if (j + 1 == panels)
    return {col, 0, 0, 0};
  int64_t next = panelStart(s, panels, j + 1);
  return {next, panelStart(s, panels, j + 2) - next, 0, k / blocks};
}

/// The columns of \p s's weights, panel by panel, each panel block by
/// block of k (kBlockK), each block's tiles over the share's pixels; the
/// block after prefetched while the tiles of this one run.
void runShare(const Call &c, const Share &s) {
  const PointwiseWeights &w = *c.w;
  const PointwiseEpilogue &e = *c.e;
  bool clamp = e.lo != -INFINITY || e.hi != INFINITY;
  const TileFn *const *tiles = c.form->tiles[clamp];
  int64_t maxVectors = c.form->vectors;
  int64_t k = w.in;
  int64_t blocks = e.planar ? 1 : (k + kBlockK - 1) / kBlockK;
  Tile t;
  t.srcLd = k;
  t.wColumn = k * 16;
  t.ld = e.planar ? 1 : w.out;
  t.channelStride = e.planar ? c.pixels : 1;
  // Panels of as equal widths as make at most maxVectors columns each (5
  // columns: 3 and 2, not 4 and 1, whose tiles load a column a broadcast).
  int64_t panels = (s.end - s.begin + maxVectors - 1) / maxVectors;
  for (int64_t j = 0; j < panels; ++j) {
    int64_t col = panelStart(s, panels, j);
    int64_t vectors = panelStart(s, panels, j + 1) - col;
    int64_t channel = col * 16;
    int64_t rest = w.out - (col + vectors - 1) * 16;
    t.bias = e.bias ? e.bias + channel : nullptr;
    t.lastLanes = std::min<int64_t>(rest, 16);
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t kBegin = k * b / blocks, kEnd = k * (b + 1) / blocks;
      t.w = w.packed + (col * k + kBegin) * 16;
      t.kb = kEnd - kBegin;
      t.firstBlock = b == 0;
      t.lastBlock = b == blocks - 1;
      Ahead ahead = aheadOf(s, k, blocks, panels, j, b);
      for (int64_t p = s.first, i = 0; p < s.last; p += kRows, ++i) {
        int64_t rows = std::min<int64_t>(kRows, s.last - p);
        t.src = c.src + p * k + kBegin;
        t.dst = c.dst + p * t.ld + channel * t.channelStride;
        t.sum = e.sum ? e.sum + p * w.out + channel : nullptr;
        // Tile i prefetches column i of the block after, a line a k.
        t.ahead = w.packed + ((ahead.col + i) * k + ahead.begin) * 16;
        t.aheadLines = i < ahead.vectors ? ahead.end - ahead.begin : 0;
        tiles[rows - 1][vectors - 1](t, e);
      }
    }
  }
}

/// Thread \p t's share of \p c: its group's columns and pixels (whole
/// tiles), as equal as those make them.
Share shareOf(const Call &c, int64_t t) {
  int64_t columns = c.w->columns(), tiles = (c.pixels + kRows - 1) / kRows;
  int64_t cg = t % c.columnGroups, pg = t / c.columnGroups;
  return {columns * cg / c.columnGroups, columns * (cg + 1) / c.columnGroups,
          std::min(c.pixels, kRows * (tiles * pg / c.pixelGroups)),
          std::min(c.pixels, kRows * (tiles * (pg + 1) / c.pixelGroups))};
}

/// The weights from which the threads split the columns whatever the
/// pixels (4 MiB).
constexpr int64_t kColumnsWeightBytes = int64_t(4) << 20;

/// Whether the threads split the columns of a run of \p tiles tiles of
/// pixels and \p columns columns, not its pixels. Splitting the columns,
/// each thread reads all of the source, half of it from the other core's
/// cache (the step before split the pixels); splitting the pixels, each
/// reads all of the weights. On the idle machine (2 threads) the pixels were
/// 3-25% faster from 14x14 (33 tiles) up, and at 7x7 (9 tiles) up to 960
/// output channels too (MobileNet-V2's 576 -> 160 and 960 -> 160 0.82x,
/// MNASNet 1.3's 1488 -> 248 0.88x, RegNet-Y-800MF's 784 -> 784 0.95x),
/// as fast with 1280 and 1488 (MNASNet's 248 -> 1488 and 416 -> 1280
/// 0.99-1.01x), but ResNet-50's 512 -> 2048 (4 MiB of weights) took 1.04-1.11x
/// the columns' time. Below 4 tiles a thread would get a tile or two.
bool splitsColumns(int64_t tiles, int64_t columns, int64_t weightBytes) {
  return tiles < 4 ||
         (columns >= 96 && (tiles < 16 || weightBytes >= kColumnsWeightBytes));
}

/// The multiply-adds a thread below which a run does not fork (2^17: a few
/// microseconds of one core, about what a fork and join of the two-thread
/// team cost). Not measured apart: in a model the runtime already runs the
/// steps of less work than that on the calling thread (Threads.cpp,
/// runsAlone).
constexpr int64_t kFmasPerThread = int64_t(1) << 17;

} // namespace

PointwiseWeights::PointwiseWeights(const float *weights, int64_t out,
                                   int64_t in, Order order,
                                   std::optional<bool> hugePages)
    : out(out), in(in) {
  size_t bytes = size_t(columns() * in * 16) * sizeof(float);
  block = allocateWeights(bytes, hugePages);
  if (!block)
    throw std::bad_alloc();
  packed = static_cast<float *>(block.get());
  std::memset(packed, 0, bytes);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < in; ++k)
      packed[(o / 16 * in + k) * 16 + o % 16] =
          order == Order::OutIn ? weights[o * in + k] : weights[k * out + o];
}

PointwiseWeights::~PointwiseWeights() = default;

namespace {

/// pointwiseChannelsLast with the tiles of \p form.
void runPointwise(const Form &form, const PointwiseWeights &w, int64_t pixels,
                  const float *src, const PointwiseEpilogue &e, float *dst) {
  int64_t columns = w.columns(), tiles = (pixels + kRows - 1) / kRows;
  int64_t fmas = pixels * w.in * columns * 16;
  int64_t threads = threadsFor(columns * tiles, fmas, kFmasPerThread);
  // Split columns while every group keeps a full panel (narrower ones read
  // the source once per fewer channels).
  int64_t columnGroups =
      splitsColumns(tiles, columns,
                    w.in * columns * 16 * int64_t(sizeof(float)))
          ? std::clamp<int64_t>(columns / form.vectors, 1, threads)
          : 1;
  int64_t pixelGroups = std::min(tiles, threads / columnGroups);
  Call c{&form, &w, pixels, src, &e, dst, columnGroups, pixelGroups};
  threads = columnGroups * pixelGroups;
  if (threads <= 1)
    return runShare(c, {0, columns, 0, pixels});
  forkTeam(threads, [&](int64_t t, int64_t) { runShare(c, shareOf(c, t)); });
}

} // namespace

void cpu::avx512::pointwiseChannelsLast(const PointwiseWeights &w,
                                        int64_t pixels, const float *src,
                                        const PointwiseEpilogue &e,
                                        float *dst) {
  runPointwise(kForm512, w, pixels, src, e, dst);
}

void cpu::avx2::pointwiseChannelsLast(const PointwiseWeights &w, int64_t pixels,
                                      const float *src,
                                      const PointwiseEpilogue &e, float *dst) {
  runPointwise(kForm256, w, pixels, src, e, dst);
}
