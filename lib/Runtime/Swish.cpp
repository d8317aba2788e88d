//===- Swish.cpp - SiLU in place, after a oneDNN step ---------------------===//
//
// Part of Loom. See Cpu.h. oneDNN 2.6's swish post-op (eltwise_swish) costs
// its convolutions about twice what a separate AVX-512 pass over the result
// costs (docs/Runtime.md, "SiLU after the convolution"): the pass below,
// x / (1 + exp(-x)) sixteen floats at a time, run in place on the step's
// destination in whatever layout the primitive wrote (an elementwise
// function does not care; a blocked layout's zero padding stays zero).
//
//===----------------------------------------------------------------------===//

#include "Cpu.h"

#include <algorithm>
#include <immintrin.h>

using namespace loom::rt;

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

__attribute__((target("avx512f"))) void swishRange(float *data, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(data + i, swish16(_mm512_loadu_ps(data + i)));
  if (i < n) {
    __mmask16 tail = __mmask16((1u << (n - i)) - 1);
    __m512 x = _mm512_maskz_loadu_ps(tail, data + i);
    _mm512_mask_storeu_ps(data + i, tail, swish16(x));
  }
}

struct SwishCall {
  float *data;
  int64_t n;
};

void swishWorker(void *arg) {
  auto *call = static_cast<SwishCall *>(arg);
  int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  // Chunks of whole 64-byte lines.
  int64_t chunk = (call->n + threads - 1) / threads;
  chunk = (chunk + 15) / 16 * 16;
  int64_t begin = std::min(call->n, t * chunk);
  int64_t end = std::min(call->n, begin + chunk);
  swishRange(call->data + begin, end - begin);
}

/// The elements per thread below which the pass does not fork: a fork and
/// join of the two-thread team cost about what 16384 elements do.
constexpr int64_t kSwishPerThread = 16384;

} // namespace

bool cpu::hasSwishPass() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

void cpu::swishInPlace(float *data, int64_t n) {
  int64_t threads =
      std::min<int64_t>(omp_get_max_threads(), n / kSwishPerThread);
  if (threads <= 1)
    return swishRange(data, n);
  SwishCall call{data, n};
  GOMP_parallel(swishWorker, &call, unsigned(threads), 0);
}
