//===- FloatVec.h - A vector of W floats per instruction-set level -*- C++
//-*-===//
//
// Part of Loom. The vector type the hand-written kernels that are written
// once over a vector (AttentionImpl.inc, GemvImpl.inc) are compiled with,
// one per level: `Vec` in namespace avx512 (16 floats), avx2 (8, with FMA)
// and portable (1: plain C++ for every x86-64 CPU). Each names the type
// (`T`), its width (`W`) and the operations the kernels use: loads and
// stores of the first n lanes, arithmetic, reductions, exp, a strided
// gather. A kernel's file includes this header, then its implementation
// once per level inside that level's namespace and target attribute.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_KERNELS_FLOATVEC_H
#define LOOM_LIB_RUNTIME_CPU_KERNELS_FLOATVEC_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

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
  /// p[j * stride] for lanes j < n, 0 beyond (n in [0, W]).
  static T gatherStrided(const float *p, int64_t stride, int64_t n) {
    __m512i index = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(int(stride)));
    return _mm512_mask_i32gather_ps(zero(), mask(n), index, p, 4);
  }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(T v) { return _mm512_reduce_add_ps(v); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static float maxOf(T v) { return _mm512_reduce_max_ps(v); }
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
  /// p[j * stride] for lanes j < n, 0 beyond (n in [0, W]).
  static T gatherStrided(const float *p, int64_t stride, int64_t n) {
    __m256i index =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                           _mm256_set1_epi32(int(stride)));
    return _mm256_mask_i32gather_ps(zero(), p, index,
                                    _mm256_castsi256_ps(mask(n)), 4);
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
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static float maxOf(T v) {
    __m128 m =
        _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
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
  static T gatherStrided(const float *p, int64_t, int64_t n) {
    return n > 0 ? *p : 0.f;
  }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T fmadd(T a, T b, T c) { return a * b + c; }
  static float sum(T v) { return v; }
  // As maxps: the second operand when either is NaN.
  static T max(T a, T b) { return a > b ? a : b; }
  static float maxOf(T v) { return v; }
  static T exp(T x) { return std::exp(x); }
};
} // namespace
} // namespace loom::rt::cpu::portable

#endif // LOOM_LIB_RUNTIME_CPU_KERNELS_FLOATVEC_H
