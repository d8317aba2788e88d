//===- Attention.cpp - tg.attention's kernel, per instruction-set level ---===//
//
// Part of Loom. See Cpu.h's attention() and docs/Runtime.md "Attention".
// One algorithm (AttentionImpl.inc), compiled three times over a vector of
// W floats: AVX-512 (16), AVX2 + FMA (8), and plain C++ (1) for every other
// x86-64 CPU.
//
// The design. A tile is up to 16 query rows that read one key/value head
// (the query heads of a group, then their positions), so a decode step of
// grouped-query attention reads each key once for the whole group. Keys go
// by blocks of 64: each row's scores for the block (dot products over the
// head size), the block's maximum, exp(score - max) and the running sum and
// output rescaled by exp(old max - new max): FlashAttention's online
// softmax, so no score matrix wider than a block exists. A row stops at
// its visible keys (loom/Support/AttentionMask.h) and a tile at its rows'
// last visible key: keys past the live length are never read, and a
// causal prefill skips the blocks above the diagonal. When the tiles are
// fewer than the threads (decode at batch 1), each tile's keys are split
// into equal shares, at least 256 keys each, one task a share, and the
// partial (max, sum, output) merged by their log-sum-exp (Flash-Decoding's
// split-KV): the result is the softmax of the union, not an approximation.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include "loom/Support/AttentionMask.h"

#include <algorithm>
#include <cmath>
#include <immintrin.h>
#include <limits>
#include <vector>

using namespace loom;
using namespace loom::rt;

// Cephes' expf (as Swish.cpp's): exp(x) = 2^n exp(r), r = x - n ln 2, x
// clamped to [-87, 88]; relative error about 1e-7. The kernel takes exp of
// scores minus their maximum (x <= 0); below -87 it gives ~1e-38, not 0,
// which no sum of a 1 and such terms notices.
#define LOOM_EXP_POLY(V, FMA, MUL, ADD, SET1)                                  \
  V p = SET1(1.9875691500e-4f);                                                \
  p = FMA(p, r, SET1(1.3981999507e-3f));                                       \
  p = FMA(p, r, SET1(8.3334519073e-3f));                                       \
  p = FMA(p, r, SET1(4.1665795894e-2f));                                       \
  p = FMA(p, r, SET1(1.6666665459e-1f));                                       \
  p = FMA(p, r, SET1(5.0000001201e-1f));                                       \
  p = FMA(p, MUL(r, r), ADD(r, SET1(1.f)));

#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,fma"))),  \
                             apply_to = function)
namespace loom::rt::cpu::avx512 {
namespace {
struct Vec {
  static constexpr int64_t W = 16;
  using T = __m512;
  static __mmask16 mask(int64_t n) { return __mmask16((1u << n) - 1); }
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float x) { return _mm512_set1_ps(x); }
  static T load(const float *p) { return _mm512_loadu_ps(p); }
  static T loadn(const float *p, int64_t n) {
    return n == W ? load(p) : _mm512_maskz_loadu_ps(mask(n), p);
  }
  static void storen(float *p, T v, int64_t n) {
    if (n == W)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, mask(n), v);
  }
  static T zeroBeyond(T v, int64_t n) {
    return n == W ? v : _mm512_maskz_mov_ps(mask(n), v);
  }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(T v) { return _mm512_reduce_add_ps(v); }
  static T exp(T x) {
    x = _mm512_max_ps(set1(-87.f), _mm512_min_ps(set1(88.f), x));
    T n = _mm512_roundscale_ps(_mm512_mul_ps(x, set1(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    T r = _mm512_fnmadd_ps(n, set1(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, set1(-2.12194440e-4f), r);
    LOOM_EXP_POLY(T, fmadd, mul, add, set1)
    return _mm512_scalef_ps(p, n);
  }
};
} // namespace
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::avx512
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
namespace loom::rt::cpu::avx2 {
namespace {
struct Vec {
  static constexpr int64_t W = 8;
  using T = __m256;
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float x) { return _mm256_set1_ps(x); }
  static T load(const float *p) { return _mm256_loadu_ps(p); }
  static T loadn(const float *p, int64_t n) {
    return n == W ? load(p) : _mm256_maskload_ps(p, mask(n));
  }
  static void storen(float *p, T v, int64_t n) {
    if (n == W)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, mask(n), v);
  }
  static T zeroBeyond(T v, int64_t n) {
    return n == W ? v : _mm256_and_ps(v, _mm256_castsi256_ps(mask(n)));
  }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static float sum(T v) {
    __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static T exp(T x) {
    x = _mm256_max_ps(set1(-87.f), _mm256_min_ps(set1(88.f), x));
    T n = _mm256_round_ps(_mm256_mul_ps(x, set1(1.44269504088896341f)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    T r = _mm256_fnmadd_ps(n, set1(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, set1(-2.12194440e-4f), r);
    LOOM_EXP_POLY(T, fmadd, mul, add, set1)
    // 2^n from its exponent bits: n is in [-126, 127] after the clamp.
    __m256i bits = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  }
};
} // namespace
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::avx2
#pragma clang attribute pop

namespace loom::rt::cpu::portable {
namespace {
struct Vec {
  static constexpr int64_t W = 1;
  using T = float;
  static T zero() { return 0; }
  static T set1(float x) { return x; }
  static T load(const float *p) { return *p; }
  static T loadn(const float *p, int64_t) { return *p; }
  static void storen(float *p, T v, int64_t) { *p = v; }
  static T zeroBeyond(T v, int64_t) { return v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T fmadd(T a, T b, T c) { return a * b + c; }
  static float sum(T v) { return v; }
  static T exp(T x) { return std::exp(x); }
};
} // namespace
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::portable
