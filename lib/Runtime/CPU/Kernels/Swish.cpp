//===- Swish.cpp - SiLU in place, after a oneDNN step ---------------------===//
//
// Part of Loom. See Cpu.h. oneDNN 2.6's swish post-op (eltwise_swish) costs
// its convolutions about twice what a separate AVX-512 pass over the result
// costs (docs/Runtime.md, "SiLU after the convolution"): the pass below,
// x / (1 + exp(-x)) sixteen floats at a time (eight with AVX2), run in place on
// the step's destination in whatever layout the primitive wrote (an elementwise
// function does not care; a blocked layout's zero padding stays zero).
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"

#include <algorithm>
#include <immintrin.h>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

/// x * sigmoid(x) of sixteen floats. exp(-x) as 2^n * exp(r), r = -x - n ln 2
/// in [-ln 2 / 2, ln 2 / 2], exp(r) by Cephes' expf polynomial (relative
/// error about 1e-7); -x clamped to [-87, 88] so 2^n stays finite: there
/// the result is x, or within 1e-36 of 0, as unclamped. NaN stays NaN.
__attribute__((target("avx512f"))) __m512 swish16(__m512 x) {
  __m512 t = _mm512_sub_ps(_mm512_setzero_ps(), x);
  t = _mm512_max_ps(_mm512_set1_ps(-87.f),
                    _mm512_min_ps(_mm512_set1_ps(88.f), t));
  __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), t);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  __m512 e = _mm512_scalef_ps(p, n);
  return _mm512_div_ps(x, _mm512_add_ps(e, _mm512_set1_ps(1.f)));
}

__attribute__((target("avx512f"))) void swishRange512(float *data, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(data + i, swish16(_mm512_loadu_ps(data + i)));
  if (i < n) {
    __mmask16 tail = __mmask16((1u << (n - i)) - 1);
    __m512 x = _mm512_maskz_loadu_ps(tail, data + i);
    _mm512_mask_storeu_ps(data + i, tail, swish16(x));
  }
}

/// swish16's function on eight floats (AVX2): the same clamp, reduction and
/// polynomial, 2^n made from its exponent bits (n is in [-126, 127] after
/// the clamp, so the bits are a normal float).
__attribute__((target("avx2,fma"))) __m256 swish8(__m256 x) {
  __m256 t = _mm256_sub_ps(_mm256_setzero_ps(), x);
  t = _mm256_max_ps(_mm256_set1_ps(-87.f),
                    _mm256_min_ps(_mm256_set1_ps(88.f), t));
  __m256 n =
      _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), t);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_div_ps(x, _mm256_add_ps(e, _mm256_set1_ps(1.f)));
}

__attribute__((target("avx2,fma"))) void swishRange256(float *data, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(data + i, swish8(_mm256_loadu_ps(data + i)));
  if (i < n) {
    // Lane l is on where l < n - i: its index compared with the count.
    __m256i tail =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n - i)),
                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 x = _mm256_maskload_ps(data + i, tail);
    _mm256_maskstore_ps(data + i, tail, swish8(x));
  }
}

using SwishRange = void (*)(float *, int64_t);

/// The elements per thread below which the pass does not fork: a fork and
/// join of the two-thread team cost about what 16384 elements do.
constexpr int64_t kSwishPerThread = 16384;

/// The pass over the calling thread's team with \p range's vectors, each
/// thread a chunk of whole 64-byte lines.
void swishOverTeam(float *data, int64_t n, SwishRange range) {
  forkTeam(threadsFor(n, n, kSwishPerThread), [&](int64_t t, int64_t threads) {
    int64_t chunk = (n + threads - 1) / threads;
    chunk = (chunk + 15) / 16 * 16;
    int64_t begin = std::min(n, t * chunk);
    int64_t end = std::min(n, begin + chunk);
    range(data + begin, end - begin);
  });
}

} // namespace

void cpu::avx512::swishInPlace(float *data, int64_t n) {
  swishOverTeam(data, n, swishRange512);
}

void cpu::avx2::swishInPlace(float *data, int64_t n) {
  swishOverTeam(data, n, swishRange256);
}
