//===- Transpose.cpp - Channels-first <-> channels-last layout changes ----===//
//
// Part of Loom. See Cpu.h. A oneDNN step whose primitive computes in NHWC
// while its buffer holds NCHW (a CNN's stem reads the model's input) or the
// other way round (the last convolution writes the model's output)
// reorders at its edge. oneDNN 2.6's reorder between them (jit:uni) took
// 0.050-0.067 ms of MNASNet's 1x3x224x224 input on two threads, a third of
// its stem step (docs/Runtime.md, "Layout reorders"). Each image of such a
// reorder is a transpose of a matrix ([C][H*W] <-> [H*W][C]), done here
// three ways: with two to four channels (an RGB image's), sixteen pixels of
// every plane interleaved into pixel tuples, or the tuples split back into
// planes, with AVX-512 lane permutes; otherwise in 16x16 tiles transposed
// in registers; tails under masks. Between NHWC and nChw16c (a Winograd
// step's layout) the elements are whole blocks of 16 channels, moved one
// vector each. The threads split the longer side. The AVX2 form transposes
// every matrix in 8x8 tiles (few rows or columns as partial tiles).
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// The mask of the first \p rest lanes (none below 1, all from 16).
__mmask16 firstLanes(int64_t rest) {
  return rest >= 16  ? __mmask16(0xffff)
         : rest <= 0 ? __mmask16(0)
                     : __mmask16((1u << rest) - 1);
}

/// Where each lane of K result vectors comes from among K source vectors:
/// lanes mask[a][b] of result a are lanes index[a][b] of source b.
/// Interleaving K planes of 16 pixels (sources) into 16 K-tuples (results):
/// result lane l of vector a is element e = 16 a + l of the tuples, pixel
/// e / K of plane e % K. Splitting them (deinterleaving) is the inverse:
/// lane p of plane a is element p K + a, lane (p K + a) % 16 of source
/// (p K + a) / 16.
template <int K> struct Lanes {
  alignas(64) int32_t index[K][K][16] = {};
  uint16_t mask[K][K] = {};
  constexpr explicit Lanes(bool interleave) {
    for (int a = 0; a < K; ++a)
      for (int l = 0; l < 16; ++l) {
        int e = interleave ? 16 * a + l : l * K + a;
        int b = interleave ? e % K : e / 16;
        index[a][b][l] = interleave ? e / K : e % 16;
        mask[a][b] = uint16_t(mask[a][b] | (1u << l));
      }
  }
};

template <int K>
__attribute__((target("avx512f"), always_inline)) inline void
permuteLanes(const Lanes<K> &t, const __m512 *in, __m512 *out) {
  for (int a = 0; a < K; ++a) {
    __m512 v = _mm512_setzero_ps();
    for (int b = 0; b < K; ++b)
      v = _mm512_mask_permutexvar_ps(v, t.mask[a][b],
                                     _mm512_load_si512(t.index[a][b]), in[b]);
    out[a] = v;
  }
}

/// How far ahead in each plane an interleave prefetches: a model's input
/// is read from memory (nothing else touches it), and the prefetch cut
/// MNASNet's 1x3x224x224 transpose on one thread from 0.061-0.067 to
/// 0.051-0.055 ms (minimum, median of 20 runs; 256 and 1024 floats ahead
/// did 0.052-0.063). Past a plane's end it reads the next plane or
/// nothing: a prefetch never faults.
constexpr int64_t kPlanePrefetchFloats = 512;

/// \p n <= 16 pixels of K planes \p stride floats apart at \p src into
/// K-tuples at \p dst.
template <int K>
__attribute__((target("avx512f"))) void
interleave(const float *src, int64_t stride, float *dst, int64_t n) {
  static constexpr Lanes<K> lanes(true);
  __m512 in[K], out[K];
  for (int c = 0; c < K; ++c) {
    _mm_prefetch(
        reinterpret_cast<const char *>(src + c * stride + kPlanePrefetchFloats),
        _MM_HINT_T0);
    in[c] = _mm512_maskz_loadu_ps(firstLanes(n), src + c * stride);
  }
  permuteLanes<K>(lanes, in, out);
  for (int a = 0; a < K; ++a)
    _mm512_mask_storeu_ps(dst + 16 * a, firstLanes(n * K - 16 * a), out[a]);
}

/// \p n <= 16 K-tuples at \p src into K planes \p stride floats apart at
/// \p dst.
template <int K>
__attribute__((target("avx512f"))) void
deinterleave(const float *src, float *dst, int64_t stride, int64_t n) {
  static constexpr Lanes<K> lanes(false);
  __m512 in[K], out[K];
  for (int b = 0; b < K; ++b)
    in[b] = _mm512_maskz_loadu_ps(firstLanes(n * K - 16 * b), src + 16 * b);
  permuteLanes<K>(lanes, in, out);
  for (int c = 0; c < K; ++c)
    _mm512_mask_storeu_ps(dst + c * stride, firstLanes(n), out[c]);
}

/// Transposes the 16x16 matrix of rows \p r in place.
__attribute__((target("avx512f"), always_inline)) inline void
transpose16(__m512 *r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4 g + m]: columns m, 4 + m, 8 + m, 12 + m (one a 128-bit lane) of
  // rows 4 g .. 4 g + 3.
  __m512 u[16];
  for (int g = 0; g < 16; g += 4)
    for (int h = 0; h < 2; ++h) {
      __m512d a = _mm512_castps_pd(t[g + h]),
              b = _mm512_castps_pd(t[g + h + 2]);
      u[g + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[g + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  for (int m = 0; m < 4; ++m) {
    __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88);
    __m512 v2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
    __m512 w1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xdd);
    __m512 w2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xdd);
    r[m] = _mm512_shuffle_f32x4(v1, v2, 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(v1, v2, 0xdd);
    r[4 + m] = _mm512_shuffle_f32x4(w1, w2, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(w1, w2, 0xdd);
  }
}

/// \p nr <= 16 rows of \p nc <= 16 floats, \p srcStride apart at \p src,
/// into \p nc rows of \p nr floats, \p dstStride apart at \p dst.
__attribute__((target("avx512f"))) void tile(const float *src,
                                             int64_t srcStride, float *dst,
                                             int64_t dstStride, int64_t nr,
                                             int64_t nc) {
  __m512 r[16];
  if (nr == 16 && nc == 16) {
    for (int i = 0; i < 16; ++i)
      r[i] = _mm512_loadu_ps(src + i * srcStride);
    transpose16(r);
    for (int j = 0; j < 16; ++j)
      _mm512_storeu_ps(dst + j * dstStride, r[j]);
    return;
  }
  for (int i = 0; i < 16; ++i)
    r[i] = i < nr ? _mm512_maskz_loadu_ps(firstLanes(nc), src + i * srcStride)
                  : _mm512_setzero_ps();
  transpose16(r);
  for (int j = 0; j < nc; ++j)
    _mm512_mask_storeu_ps(dst + j * dstStride, firstLanes(nr), r[j]);
}

/// A transpose's work: units of 16 rows or columns of every matrix (along
/// the longer side; the pixels for an interleave or its inverse), numbered
/// matrix by matrix.
struct TransposeCall {
  TransposeShape s;
  const float *src;
  float *dst;
  int64_t chunks; ///< units a matrix
  void (*range)(const TransposeCall &, int64_t, int64_t);
};

/// Units [begin, end): 16 columns of K rows each, interleaved.
template <int K>
void interleaveRange(const TransposeCall &call, int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols;
    int64_t j = u % call.chunks * 16;
    interleave<K>(call.src + base + j, s.cols, call.dst + base + j * K,
                  std::min<int64_t>(16, s.cols - j));
  }
}

/// Units [begin, end): 16 rows of K columns each, split into K rows.
template <int K>
void deinterleaveRange(const TransposeCall &call, int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols;
    int64_t i = u % call.chunks * 16;
    deinterleave<K>(call.src + base + i * K, call.dst + base + i, s.rows,
                    std::min<int64_t>(16, s.rows - i));
  }
}

/// Units [begin, end): 16 columns (\p ByColumns) or rows of every tile
/// along the other side.
template <bool ByColumns>
void tileRange(const TransposeCall &call, int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  int64_t across = ByColumns ? s.rows : s.cols;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols;
    int64_t k = u % call.chunks * 16;
    for (int64_t x = 0; x < across; x += 16) {
      int64_t i = ByColumns ? x : k, j = ByColumns ? k : x;
      tile(call.src + base + i * s.cols + j, s.cols,
           call.dst + base + j * s.rows + i, s.rows,
           std::min<int64_t>(16, s.rows - i),
           std::min<int64_t>(16, s.cols - j));
    }
  }
}

/// Units [begin, end): 16 elements of s.block floats (a multiple of 16)
/// along the longer side (the columns where \p ByColumns), each with every
/// element along the other side; the elements move whole, in the order of
/// the result (runs of whole rows of it, or of 16 elements).
template <bool ByColumns>
__attribute__((target("avx512f"))) void blockRange(const TransposeCall &call,
                                                   int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  int64_t longer = ByColumns ? s.cols : s.rows;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols * s.block;
    int64_t k = u % call.chunks * 16, last = std::min(longer, k + 16);
    int64_t i0 = ByColumns ? 0 : k, i1 = ByColumns ? s.rows : last;
    int64_t j0 = ByColumns ? k : 0, j1 = ByColumns ? last : s.cols;
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i) {
        const float *from = call.src + base + (i * s.cols + j) * s.block;
        float *to = call.dst + base + (j * s.rows + i) * s.block;
        for (int64_t f = 0; f < s.block; f += 16)
          _mm512_storeu_ps(to + f, _mm512_loadu_ps(from + f));
      }
  }
}

/// Units [begin, end) of a matrix with one row or one column: the same
/// bytes, 16 floats a unit.
void copyRange(const TransposeCall &call, int64_t begin, int64_t end) {
  int64_t total = call.s.batch * call.s.rows * call.s.cols;
  int64_t from = begin * 16, to = std::min(total, end * 16);
  std::memcpy(call.dst + from, call.src + from, (to - from) * sizeof(float));
}

/// How \p s is done: the units a matrix and the range function.
TransposeCall plan(const TransposeShape &s, const float *src, float *dst) {
  TransposeCall call{s, src, dst, 0, nullptr};
  auto units = [](int64_t n) { return (n + 15) / 16; };
  using Range = void (*)(const TransposeCall &, int64_t, int64_t);
  static constexpr Range kInterleave[3] = {
      interleaveRange<2>, interleaveRange<3>, interleaveRange<4>};
  static constexpr Range kDeinterleave[3] = {
      deinterleaveRange<2>, deinterleaveRange<3>, deinterleaveRange<4>};
  if (s.rows == 1 || s.cols == 1) {
    call.range = copyRange;
    // One row of all the floats: a unit may span two matrices.
    call.s = {1, 1, s.batch * s.rows * s.cols * s.block, 1};
    call.chunks = units(call.s.cols);
  } else if (s.block > 1) {
    call.chunks = units(std::max(s.rows, s.cols));
    call.range = s.rows <= s.cols ? blockRange<true> : blockRange<false>;
  } else if (s.rows <= 4) {
    call.chunks = units(s.cols);
    call.range = kInterleave[s.rows - 2];
  } else if (s.cols <= 4) {
    call.chunks = units(s.rows);
    call.range = kDeinterleave[s.cols - 2];
  } else if (s.rows <= s.cols) {
    call.chunks = units(s.cols);
    call.range = tileRange<true>;
  } else {
    call.chunks = units(s.rows);
    call.range = tileRange<false>;
  }
  return call;
}

//===----------------------------------------------------------------------===//
// The AVX2 form: 8x8 tiles (every matrix, the ones of two to four rows or
// columns too), elements of 16 floats moved two vectors each.
//===----------------------------------------------------------------------===//

/// The lanes of eight below \p rest, as AVX2's masked loads and stores
/// take them (a lane's sign bit).
__attribute__((target("avx2"), always_inline)) inline __m256i
firstLanes8(int64_t rest) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(rest, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Transposes the 8x8 matrix of rows \p r in place.
__attribute__((target("avx2"), always_inline)) inline void
transpose8(__m256 *r) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 8; g += 4)
    for (int h = 0; h < 2; ++h) {
      u[g + 2 * h] = _mm256_shuffle_ps(t[g + h], t[g + h + 2], 0x44);
      u[g + 2 * h + 1] = _mm256_shuffle_ps(t[g + h], t[g + h + 2], 0xee);
    }
  // u[0..3]: columns 0, 1, 2, 3 (low lane) and 4, 5, 6, 7 (high lane) of
  // rows 0-3; u[4..7] the same of rows 4-7.
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
    r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
  }
}

/// tile's 8x8 form: \p nr <= 8 rows of \p nc <= 8 floats.
__attribute__((target("avx2"))) void tile8(const float *src, int64_t srcStride,
                                           float *dst, int64_t dstStride,
                                           int64_t nr, int64_t nc) {
  __m256 r[8];
  if (nr == 8 && nc == 8) {
    for (int i = 0; i < 8; ++i)
      r[i] = _mm256_loadu_ps(src + i * srcStride);
    transpose8(r);
    for (int j = 0; j < 8; ++j)
      _mm256_storeu_ps(dst + j * dstStride, r[j]);
    return;
  }
  __m256i columns = firstLanes8(nc), rows = firstLanes8(nr);
  for (int i = 0; i < 8; ++i)
    r[i] = i < nr ? _mm256_maskload_ps(src + i * srcStride, columns)
                  : _mm256_setzero_ps();
  transpose8(r);
  for (int j = 0; j < nc; ++j)
    _mm256_maskstore_ps(dst + j * dstStride, rows, r[j]);
}

/// tileRange's 8x8 form: units of 8 columns (\p ByColumns) or rows.
template <bool ByColumns>
void tileRange8(const TransposeCall &call, int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  int64_t across = ByColumns ? s.rows : s.cols;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols;
    int64_t k = u % call.chunks * 8;
    for (int64_t x = 0; x < across; x += 8) {
      int64_t i = ByColumns ? x : k, j = ByColumns ? k : x;
      tile8(call.src + base + i * s.cols + j, s.cols,
            call.dst + base + j * s.rows + i, s.rows,
            std::min<int64_t>(8, s.rows - i), std::min<int64_t>(8, s.cols - j));
    }
  }
}

/// blockRange with AVX2: each element of s.block floats two vectors at a
/// time.
template <bool ByColumns>
__attribute__((target("avx2"))) void blockRange8(const TransposeCall &call,
                                                 int64_t begin, int64_t end) {
  const TransposeShape &s = call.s;
  int64_t longer = ByColumns ? s.cols : s.rows;
  for (int64_t u = begin; u < end; ++u) {
    int64_t base = u / call.chunks * s.rows * s.cols * s.block;
    int64_t k = u % call.chunks * 16, last = std::min(longer, k + 16);
    int64_t i0 = ByColumns ? 0 : k, i1 = ByColumns ? s.rows : last;
    int64_t j0 = ByColumns ? k : 0, j1 = ByColumns ? last : s.cols;
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i) {
        const float *from = call.src + base + (i * s.cols + j) * s.block;
        float *to = call.dst + base + (j * s.rows + i) * s.block;
        for (int64_t f = 0; f < s.block; f += 8)
          _mm256_storeu_ps(to + f, _mm256_loadu_ps(from + f));
      }
  }
}

/// plan's AVX2 form.
TransposeCall plan8(const TransposeShape &s, const float *src, float *dst) {
  TransposeCall call{s, src, dst, 0, nullptr};
  auto units = [](int64_t n, int64_t unit) { return (n + unit - 1) / unit; };
  if (s.rows == 1 || s.cols == 1) {
    call.range = copyRange;
    call.s = {1, 1, s.batch * s.rows * s.cols * s.block, 1};
    call.chunks = units(call.s.cols, 16);
  } else if (s.block > 1) {
    call.chunks = units(std::max(s.rows, s.cols), 16);
    call.range = s.rows <= s.cols ? blockRange8<true> : blockRange8<false>;
  } else if (s.rows <= s.cols) {
    call.chunks = units(s.cols, 8);
    call.range = tileRange8<true>;
  } else {
    call.chunks = units(s.rows, 8);
    call.range = tileRange8<false>;
  }
  return call;
}

/// The floats a thread below which a transpose does not fork: the SiLU
/// pass's threshold (Swish.cpp), whose fork and join cost about what a pass
/// over 16384 floats does; a transpose moves as many bytes a float.
constexpr int64_t kTransposeFloatsPerThread = 16384;

} // namespace

namespace {

/// transposePlanes as \p planned plans it, over the calling thread's team.
void runTranspose(const TransposeShape &s, const float *src, float *dst,
                  TransposeCall (*planned)(const TransposeShape &,
                                           const float *, float *)) {
  int64_t floats = s.batch * s.rows * s.cols * s.block;
  if (floats == 0)
    return;
  TransposeCall call = planned(s, src, dst);
  int64_t units = call.s.batch * call.chunks;
  forkShares(units, threadsFor(units, floats, kTransposeFloatsPerThread),
             [&](int64_t begin, int64_t end) { call.range(call, begin, end); });
}

} // namespace

void cpu::avx512::transposePlanes(const TransposeShape &s, const float *src,
                                  float *dst) {
  runTranspose(s, src, dst, plan);
}

void cpu::avx2::transposePlanes(const TransposeShape &s, const float *src,
                                float *dst) {
  runTranspose(s, src, dst, plan8);
}
