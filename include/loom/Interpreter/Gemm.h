//===- Gemm.h - Generic blocked matrix product and threading ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Private helpers of the interpreter kernels:
//
//  * parallelFor: splits a range of independent items over a few std::threads
//    when the work is large enough to pay for them.
//  * gemm: C (+)= A * B for row-major matrices with leading dimensions, over
//    any number domain D, structured like GotoBLAS: B is packed in KC x NC
//    blocks of NR-wide column panels, A in MC x KC blocks of MR-high row
//    panels, and a register-blocked MR x NR micro-kernel accumulates
//    products. The micro-kernel's inner loop runs over NR contiguous packed
//    elements, which the compiler vectorizes for the float domains. Large
//    products are split over threads along the larger of M and N.
//
// Each C element is the sum over k of A[i][k] * B[k][j], accumulated in
// order within each KC-long block of k, the block sums being added in order;
// so results do not depend on the number of threads.
// For the float domains the micro-kernel uses GCC/Clang vector types
// (baseline SSE2 on x86-64) for the very same multiply-then-add arithmetic;
// domains with a wide accumulator (ModPDomain) sum unreduced products.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_GEMM_H
#define LOOM_INTERPRETER_GEMM_H

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Kernels.h"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace loom {
namespace interp {
namespace detail {

/// Work (in multiply-accumulates or comparable element operations) below
/// which a kernel stays on the calling thread.
constexpr int64_t kParallelThreshold = int64_t(1) << 20;

/// Calls fn(begin, end) on disjoint chunks covering [0, n), on up to
/// getNumThreads() threads if \p totalWork exceeds kParallelThreshold. The
/// calling thread takes the first chunk. fn must be safe to run concurrently
/// on disjoint chunks.
template <class F> void parallelFor(int64_t n, int64_t totalWork, F &&fn) {
  if (n <= 0)
    return;
  int64_t threads = getNumThreads();
  threads = std::min<int64_t>(threads, n);
  threads = std::min<int64_t>(
      threads, std::max<int64_t>(1, totalWork / kParallelThreshold));
  if (threads <= 1) {
    fn(int64_t(0), n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (int64_t t = 1; t < threads; ++t) {
    int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    workers.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(int64_t(0), n / threads);
  for (std::thread &w : workers)
    w.join();
}

/// Register and cache blocking of the GEMM for domain D.
template <class D> struct GemmBlocking {
  using T = typename D::T;
  static constexpr bool isFloat = std::is_floating_point_v<T>;
  /// Micro-tile: MR rows by NR columns, sized so the accumulators of the
  /// float domains fit in the 16 SSE registers.
  static constexpr int MR = 4;
  static constexpr int NR = !isFloat ? 4 : sizeof(T) == 4 ? 8 : 4;
  /// Cache blocks.
  static constexpr int64_t KC = 256;
  static constexpr int64_t MC = 128;
  static constexpr int64_t NC = 2048;
};

/// Whether D's add and mul are the plain IEEE operators of its scalar type
/// (FloatDomain), so that the micro-kernel may compute acc + a * b on GCC /
/// Clang vector types: the same operations, element by element, as the
/// generic code, which some compilers vectorize poorly on their own.
#if defined(__GNUC__)
template <class D>
inline constexpr bool
    kUseVectorKernel = std::is_same_v<D, FloatDomain<typename D::T>> &&
                       16 % sizeof(typename D::T) == 0 &&
                       GemmBlocking<D>::NR % (16 / sizeof(typename D::T)) == 0;
#else
template <class D> inline constexpr bool kUseVectorKernel = false;
#endif

/// Whether D offers a wide accumulator for sums of products (Wide,
/// wideTerms, mulWide, reduceWide; see ModPDomain).
template <class D, class = void> struct HasWideAccumulator : std::false_type {};
template <class D>
struct HasWideAccumulator<D, std::void_t<typename D::Wide>> : std::true_type {};

/// Computes the MR x NR product of packed panels \p ap (kc x MR) and \p bp
/// (kc x NR) into \p acc, accumulating over k in order.
template <class D>
inline void
microTile(int64_t kc, const typename D::T *__restrict ap,
          const typename D::T *__restrict bp,
          typename D::T (&acc)[GemmBlocking<D>::MR][GemmBlocking<D>::NR]) {
  using T = typename D::T;
  constexpr int MR = GemmBlocking<D>::MR;
  constexpr int NR = GemmBlocking<D>::NR;
#if defined(__GNUC__)
  if constexpr (kUseVectorKernel<D>) {
    constexpr int W = 16 / sizeof(T);
    constexpr int NV = NR / W;
    typedef T V __attribute__((vector_size(16)));
    V vacc[MR][NV];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j)
        vacc[i][j] = V{}; // +0.0, as D::zero()
    for (int64_t k = 0; k < kc; ++k) {
      V b[NV];
      for (int j = 0; j < NV; ++j)
        __builtin_memcpy(&b[j], bp + k * NR + j * W, sizeof(V));
      for (int i = 0; i < MR; ++i) {
        V a;
        for (int l = 0; l < W; ++l)
          a[l] = ap[k * MR + i];
        for (int j = 0; j < NV; ++j) {
          V prod = a * b[j];              // D::mul, then
          vacc[i][j] = vacc[i][j] + prod; // D::add (separately rounded)
        }
      }
    }
    __builtin_memcpy(&acc[0][0], &vacc[0][0], sizeof(vacc));
    return;
  }
#endif
  if constexpr (HasWideAccumulator<D>::value) {
    // Unreduced sums of products, reduced every D::wideTerms terms.
    using Wide = typename D::Wide;
    Wide wacc[MR][NR];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        wacc[i][j] = 0;
    for (int64_t k0 = 0; k0 < kc; k0 += D::wideTerms) {
      int64_t k1 = std::min<int64_t>(kc, k0 + D::wideTerms);
      for (int64_t k = k0; k < k1; ++k)
        for (int i = 0; i < MR; ++i)
          for (int j = 0; j < NR; ++j)
            wacc[i][j] += D::mulWide(ap[k * MR + i], bp[k * NR + j]);
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j)
          wacc[i][j] = D::reduceWide(wacc[i][j]);
    }
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        acc[i][j] = static_cast<T>(wacc[i][j]);
    return;
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      acc[i][j] = D::zero();
  for (int64_t k = 0; k < kc; ++k) {
    const T *a = ap + k * MR;
    const T *b = bp + k * NR;
    for (int i = 0; i < MR; ++i) {
      T ai = a[i];
      for (int j = 0; j < NR; ++j)
        acc[i][j] = D::add(acc[i][j], D::mul(ai, b[j]));
    }
  }
}

/// Accumulates the MR x NR product of packed panels \p ap (kc x MR) and
/// \p bp (kc x NR) and stores (or, if \p accumulate, adds) its top-left
/// mr x nr corner into C.
template <class D>
inline void microKernel(int64_t kc, const typename D::T *__restrict ap,
                        const typename D::T *__restrict bp,
                        typename D::T *__restrict c, int64_t ldc, int64_t mr,
                        int64_t nr, bool accumulate) {
  using T = typename D::T;
  constexpr int MR = GemmBlocking<D>::MR;
  constexpr int NR = GemmBlocking<D>::NR;
  T acc[MR][NR];
  microTile<D>(kc, ap, bp, acc);
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i) {
      T *ci = c + i * ldc;
      if (accumulate)
        for (int j = 0; j < NR; ++j)
          ci[j] = D::add(ci[j], acc[i][j]);
      else
        for (int j = 0; j < NR; ++j)
          ci[j] = acc[i][j];
    }
    return;
  }
  for (int64_t i = 0; i < mr; ++i) {
    T *ci = c + i * ldc;
    for (int64_t j = 0; j < nr; ++j)
      ci[j] = accumulate ? D::add(ci[j], acc[i][j]) : acc[i][j];
  }
}

/// Packs the mc x kc block of A at \p a (leading dimension lda) into MR-high
/// panels, k-major within a panel, zero-filling rows past mc.
template <class D>
void packA(int64_t mc, int64_t kc, const typename D::T *a, int64_t lda,
           typename D::T *ap) {
  constexpr int MR = GemmBlocking<D>::MR;
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    int64_t rows = std::min<int64_t>(MR, mc - i0);
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t i = 0; i < rows; ++i)
        ap[k * MR + i] = a[(i0 + i) * lda + k];
      for (int64_t i = rows; i < MR; ++i)
        ap[k * MR + i] = D::zero();
    }
    ap += kc * MR;
  }
}

/// Packs the kc x nc block of B at \p b (leading dimension ldb) into NR-wide
/// panels, k-major within a panel, zero-filling columns past nc.
template <class D>
void packB(int64_t kc, int64_t nc, const typename D::T *b, int64_t ldb,
           typename D::T *bp) {
  constexpr int NR = GemmBlocking<D>::NR;
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    int64_t cols = std::min<int64_t>(NR, nc - j0);
    if (cols == NR) {
      for (int64_t k = 0; k < kc; ++k) {
        const typename D::T *src = b + k * ldb + j0;
        for (int j = 0; j < NR; ++j)
          bp[k * NR + j] = src[j];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const typename D::T *src = b + k * ldb + j0;
        for (int64_t j = 0; j < cols; ++j)
          bp[k * NR + j] = src[j];
        for (int64_t j = cols; j < NR; ++j)
          bp[k * NR + j] = D::zero();
      }
    }
    bp += kc * NR;
  }
}

/// C[M x N] = A[M x K] * B[K x N] (or C += A * B if \p accumulate), all
/// row-major with the given leading dimensions, on the calling thread.
template <class D>
void gemmSerial(int64_t m, int64_t n, int64_t k, const typename D::T *a,
                int64_t lda, const typename D::T *b, int64_t ldb,
                typename D::T *c, int64_t ldc, bool accumulate) {
  using T = typename D::T;
  using B = GemmBlocking<D>;
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, D::zero());
    return;
  }
  int64_t kcMax = std::min<int64_t>(B::KC, k);
  int64_t mcMax = std::min<int64_t>(B::MC, (m + B::MR - 1) / B::MR * B::MR);
  int64_t ncMax = std::min<int64_t>(B::NC, (n + B::NR - 1) / B::NR * B::NR);
  std::vector<T> aPack(static_cast<size_t>(kcMax * mcMax));
  std::vector<T> bPack(static_cast<size_t>(kcMax * ncMax));
  for (int64_t jc = 0; jc < n; jc += B::NC) {
    int64_t nc = std::min<int64_t>(B::NC, n - jc);
    for (int64_t pc = 0; pc < k; pc += B::KC) {
      int64_t kc = std::min<int64_t>(B::KC, k - pc);
      bool acc = accumulate || pc > 0;
      packB<D>(kc, nc, b + pc * ldb + jc, ldb, bPack.data());
      for (int64_t ic = 0; ic < m; ic += B::MC) {
        int64_t mc = std::min<int64_t>(B::MC, m - ic);
        packA<D>(mc, kc, a + ic * lda + pc, lda, aPack.data());
        for (int64_t jr = 0; jr < nc; jr += B::NR) {
          const T *bp = bPack.data() + (jr / B::NR) * kc * B::NR;
          int64_t nr = std::min<int64_t>(B::NR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += B::MR) {
            const T *ap = aPack.data() + (ir / B::MR) * kc * B::MR;
            int64_t mr = std::min<int64_t>(B::MR, mc - ir);
            microKernel<D>(kc, ap, bp, c + (ic + ir) * ldc + jc + jr, ldc, mr,
                           nr, acc);
          }
        }
      }
    }
  }
}

/// As gemmSerial, split over threads (along the larger of M and N) when the
/// product is large.
template <class D>
void gemm(int64_t m, int64_t n, int64_t k, const typename D::T *a, int64_t lda,
          const typename D::T *b, int64_t ldb, typename D::T *c, int64_t ldc,
          bool accumulate) {
  using B = GemmBlocking<D>;
  int64_t work = m * n * std::max<int64_t>(k, 1);
  if (n >= m) {
    int64_t panels = (n + B::NR - 1) / B::NR;
    parallelFor(panels, work, [&](int64_t p0, int64_t p1) {
      int64_t j0 = p0 * B::NR, j1 = std::min(n, p1 * B::NR);
      gemmSerial<D>(m, j1 - j0, k, a, lda, b + j0, ldb, c + j0, ldc,
                    accumulate);
    });
  } else {
    int64_t panels = (m + B::MR - 1) / B::MR;
    parallelFor(panels, work, [&](int64_t p0, int64_t p1) {
      int64_t i0 = p0 * B::MR, i1 = std::min(m, p1 * B::MR);
      gemmSerial<D>(i1 - i0, n, k, a + i0 * lda, lda, b, ldb, c + i0 * ldc, ldc,
                    accumulate);
    });
  }
}

} // namespace detail
} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_GEMM_H
