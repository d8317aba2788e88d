//===- Domain.h - Number domains of the reference interpreter ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The reference interpreter evaluates every `tg` operator once, generically,
// over a *number domain*. A domain D is a stateless struct providing
//
//   using T = ...;                          // the scalar type
//   static constexpr const char *name;      // "f32", "f64", "modp"
//   static constexpr bool isExact;          // exact (field) arithmetic?
//   zero(), one(), lowest()                 // lowest(): least element of less
//   fromDouble(double), toDouble(T), fromInt(int64_t)
//   add, sub, mul, div, neg                 // arithmetic
//   less(T, T) -> bool, max, min            // a total order
//   exp, log, sqrt, tanh, erf, pow(base, exponent)
//   fmod(a, b), mod(a, b)                   // remainders: sign of a (C
//                                           // fmod), sign of b (floor)
//   random(uint64_t &state)                 // a value for random inputs
//
// Everything else (relu, sigmoid, gelu, softmax, normalisations, means, ...)
// is derived from these primitives in Kernels.cpp, so that each operator's
// semantics is written once and is the same in every domain.
//
// Domains provided:
//
//  * FloatDomain<float> (F32Domain) and FloatDomain<double> (F64Domain):
//    ordinary IEEE arithmetic in that precision and the C library's math
//    functions. max/min propagate NaN; less() orders NaN above +inf so that
//    it is a total order.
//
//  * ModPDomain: exact arithmetic in the prime field Z/PZ, P = 2^61 - 1 (a
//    Mersenne prime), used by the rule generator to fingerprint expressions
//    TASO-style: two expressions that are equal as rational functions of their
//    inputs produce identical fingerprints on random residues, and two that
//    differ collide only with probability about (degree / P) per element.
//    The choices below, and what they mean for the soundness of fingerprints:
//
//    - add/sub/mul/neg are the field operations (mul through unsigned
//      __int128). div(a, b) = a * b^(P-2) (Fermat inverse). Division by zero
//      is defined to be 0 (so every operation is total); identities such as
//      x / x == 1 therefore fail exactly when x == 0, which for random
//      residues happens with probability 1/P.
//
//    - fromDouble is exact on dyadic rationals: a finite double equals
//      m * 2^e for integers m, e and maps to m * 2^e mod P, where 2^-1 is the
//      field inverse of 2 (because 2^61 == 1 mod P, 2^e == 2^(e mod 61)).
//      Hence fromDouble(0.5) * fromInt(2) == one() and fromDouble(0.25) * 4
//      == one(). Constants that are not dyadic (1/6, sqrt(2), 1/pi, ...) map
//      to the residue of their double approximation: consistent everywhere,
//      but e.g. 3 * fromDouble(1/6.0) != fromDouble(0.5). NaN, +inf and -inf
//      map to fixed, distinct pseudo-random residues.
//
//    - The order (less/max/min, hence relu, clip, max-pooling, reduce-max,
//      the max-subtraction in softmax) compares *centered representatives*:
//      a residue r > P/2 stands for the negative integer r - P. toDouble
//      returns that centered representative. This order is not compatible
//      with the field operations (it is not translation-invariant, because
//      of wrap-around), so order-based identities that hold over the reals
//      (max(a, b) + c == max(a + c, b + c), ...) can fail on random residues:
//      fingerprints never *prove* such rules, they may only miss them.
//      Note that fractions are not ordered like reals either: 1/2 is the
//      residue (P+1)/2, whose centered value is -(P-1)/2, so relu(0.5) == 0.
//      Tests of order-based operators therefore use integer values.
//
//    - exp, log, sqrt, tanh and erf are *uninterpreted* functions: a keyed
//      64-bit mixing hash (splitmix64 finaliser) of (function id, argument),
//      reduced mod P. They are deterministic and differ per function, so
//      fingerprints respect congruence (equal arguments give equal results)
//      but no other identity: exp(a + b) != exp(a) * exp(b), sqrt(x)^2 != x,
//      sigmoid(x) + sigmoid(-x) != 1. Rules relying on such identities are
//      not found by fingerprinting and must be justified otherwise.
//
//    - pow(x, y): if the centered representative of y is an integer in
//      [-64, 64], the exact field power (a negative exponent takes the
//      inverse, with 0^-n == 0 as for division, and 0^0 == 1); otherwise an
//      uninterpreted hash of (x, y). So x^2 == x * x and x^-1 == 1 / x hold
//      exactly, while x^0.5 is unrelated to sqrt(x).
//
//    - fmod(a, b) and mod(a, b) are the integer remainders of the centered
//      representatives (truncated, with the sign of a; floored, with the
//      sign of b), and 0 when b == 0 (as division). Exact on integers, the
//      values tg.mod meets in models; like the order, not compatible with
//      the field operations on fractions.
//
//    - random() draws uniform residues in [0, P).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_DOMAIN_H
#define LOOM_INTERPRETER_DOMAIN_H

#include "loom/Interpreter/Precision.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace loom {
namespace interp {

/// The splitmix64 output function (Steele, Lea, Flood 2014): a bijective
/// 64-bit mixer with good avalanche behaviour.
inline uint64_t splitmix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Advances a splitmix64 generator and returns its next 64-bit output.
inline uint64_t splitmix64Next(uint64_t &state) {
  state += 0x9e3779b97f4a7c15ULL;
  return splitmix64Mix(state);
}

//===----------------------------------------------------------------------===//
// FloatDomain
//===----------------------------------------------------------------------===//

/// IEEE floating point arithmetic in precision \p FP (float or double).
template <class FP> struct FloatDomain {
  static_assert(std::is_floating_point_v<FP>, "FloatDomain needs float/double");
  using T = FP;
  static constexpr const char *name = std::is_same_v<FP, float> ? "f32" : "f64";
  static constexpr bool isExact = false;

  static T zero() { return T(0); }
  static T one() { return T(1); }
  /// The least element of less(): -inf.
  static T lowest() { return -std::numeric_limits<T>::infinity(); }
  static T fromDouble(double v) { return static_cast<T>(v); }
  static double toDouble(T v) { return static_cast<double>(v); }
  static T fromInt(int64_t v) { return static_cast<T>(v); }

  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
  static T neg(T a) { return -a; }

  /// Total order: the usual order on numbers, with NaN above +inf.
  static bool less(T a, T b) { return a < b || (b != b && a == a); }
  /// NaN-propagating maximum (max(x, NaN) == max(NaN, x) == NaN).
  static T max(T a, T b) {
    if (a != a)
      return a;
    return a < b || b != b ? b : a;
  }
  /// NaN-propagating minimum.
  static T min(T a, T b) {
    if (a != a)
      return a;
    return b < a || b != b ? b : a;
  }

  static T exp(T a) { return std::exp(a); }
  static T log(T a) { return std::log(a); }
  static T sqrt(T a) { return std::sqrt(a); }
  static T tanh(T a) { return std::tanh(a); }
  static T erf(T a) { return std::erf(a); }
  static T pow(T base, T exponent) { return std::pow(base, exponent); }
  /// \p a rounded to TF32 (roundToTF32): tg.round_tf32.
  static T roundTF32(T a) { return static_cast<T>(roundToTF32(a)); }
  /// The remainder with the sign of the dividend: C fmod (NaN for b == 0).
  static T fmod(T a, T b) { return std::fmod(a, b); }
  /// The remainder with the sign of the divisor: a - b * floor(a / b),
  /// computed exactly from fmod (NaN for b == 0).
  static T mod(T a, T b) {
    T r = std::fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  }

  /// Uniform in [-1, 1), on the grid 2^-(digits-1) so every value is exact.
  static T random(uint64_t &state) {
    constexpr int digits = std::numeric_limits<T>::digits;
    uint64_t bits = splitmix64Next(state) >> (64 - digits);
    return static_cast<T>(std::ldexp(static_cast<double>(bits), 1 - digits) -
                          1.0);
  }
};

using F32Domain = FloatDomain<float>;
using F64Domain = FloatDomain<double>;

//===----------------------------------------------------------------------===//
// ModPDomain
//===----------------------------------------------------------------------===//

/// Exact arithmetic modulo the Mersenne prime P = 2^61 - 1; see the file
/// comment for the semantics of division, order, constants and the
/// uninterpreted transcendental functions. Values are canonical residues in
/// [0, P).
struct ModPDomain {
  using T = uint64_t;
  static constexpr const char *name = "modp";
  static constexpr bool isExact = true;
  static constexpr uint64_t P = (uint64_t(1) << 61) - 1;
  /// Largest residue that represents a non-negative integer.
  static constexpr uint64_t HalfP = P / 2;

  /// Function identifiers keying the uninterpreted functions and the images
  /// of non-finite doubles.
  enum FnId : uint64_t {
    FnExp = 1,
    FnLog,
    FnSqrt,
    FnTanh,
    FnErf,
    FnPow,
    FnNaN,
    FnPosInf,
    FnNegInf,
    FnRoundTF32,
  };

  /// Reduces any 64-bit value mod P.
  static T reduce(uint64_t x) {
    x = (x & P) + (x >> 61); // < 2^61 + 8
    return x >= P ? x - P : x;
  }

  static T zero() { return 0; }
  static T one() { return 1; }
  /// The least element of less(): the most negative centered value, -(P-1)/2.
  static T lowest() { return HalfP + 1; }

  static T fromInt(int64_t v) {
    if (v >= 0)
      return reduce(static_cast<uint64_t>(v));
    return neg(reduce(0 - static_cast<uint64_t>(v)));
  }

  /// 2^e mod P for any integer e (2 has order 61 modulo P).
  static T pow2(int64_t e) {
    int64_t r = e % 61;
    if (r < 0)
      r += 61;
    return uint64_t(1) << r;
  }

  /// Exact on dyadic rationals (every finite double); see the file comment.
  static T fromDouble(double v) {
    if (v != v)
      return uninterpreted(FnNaN, 0);
    if (v == std::numeric_limits<double>::infinity())
      return uninterpreted(FnPosInf, 0);
    if (v == -std::numeric_limits<double>::infinity())
      return uninterpreted(FnNegInf, 0);
    if (v == 0)
      return 0;
    int e = 0;
    double frac = std::frexp(v, &e); // v = frac * 2^e, 0.5 <= |frac| < 1
    // frac * 2^53 is an integer of at most 53 bits.
    int64_t mant = static_cast<int64_t>(std::ldexp(frac, 53));
    return mul(fromInt(mant), pow2(static_cast<int64_t>(e) - 53));
  }

  /// The centered representative of \p v, in [-(P-1)/2, (P-1)/2].
  static int64_t centered(T v) {
    return v > HalfP ? static_cast<int64_t>(v) - static_cast<int64_t>(P)
                     : static_cast<int64_t>(v);
  }
  /// The centered representative as a double (rounded if above 2^53).
  static double toDouble(T v) { return static_cast<double>(centered(v)); }

  static T add(T a, T b) {
    uint64_t s = a + b;
    return s >= P ? s - P : s;
  }
  static T sub(T a, T b) { return a >= b ? a - b : a + P - b; }
  static T neg(T a) { return a == 0 ? 0 : P - a; }
  static T mul(T a, T b) {
    unsigned __int128 p = static_cast<unsigned __int128>(a) * b; // < 2^122
    uint64_t lo = static_cast<uint64_t>(p) & P;
    uint64_t hi = static_cast<uint64_t>(p >> 61); // < 2^61
    uint64_t s = lo + hi;
    return s >= P ? s - P : s;
  }
  /// a^e for a non-negative exponent, by square-and-multiply.
  static T powU(T a, uint64_t e) {
    T r = 1;
    while (e) {
      if (e & 1)
        r = mul(r, a);
      a = mul(a, a);
      e >>= 1;
    }
    return r;
  }
  /// Multiplicative inverse (Fermat); inverse(0) is defined as 0.
  static T inverse(T a) { return powU(a, P - 2); }
  /// a * b^-1; division by zero yields 0.
  static T div(T a, T b) { return mul(a, inverse(b)); }

  /// Total order on centered representatives.
  static bool less(T a, T b) { return centered(a) < centered(b); }
  static T max(T a, T b) { return less(a, b) ? b : a; }
  static T min(T a, T b) { return less(b, a) ? b : a; }

  /// The uninterpreted unary function \p fn applied to \p x.
  static T uninterpreted(uint64_t fn, T x) {
    uint64_t key =
        splitmix64Mix(fn * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
    return reduce(splitmix64Mix(splitmix64Mix(x ^ key) + key));
  }
  /// The uninterpreted binary function \p fn applied to (\p x, \p y).
  static T uninterpreted(uint64_t fn, T x, T y) {
    uint64_t key =
        splitmix64Mix(fn * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
    uint64_t h = splitmix64Mix(splitmix64Mix(x ^ key) + key);
    return reduce(splitmix64Mix(h ^ splitmix64Mix(y + key)));
  }

  static T exp(T a) { return uninterpreted(FnExp, a); }
  static T log(T a) { return uninterpreted(FnLog, a); }
  static T sqrt(T a) { return uninterpreted(FnSqrt, a); }
  static T tanh(T a) { return uninterpreted(FnTanh, a); }
  static T erf(T a) { return uninterpreted(FnErf, a); }
  static T roundTF32(T a) { return uninterpreted(FnRoundTF32, a); }
  /// Exact power for integer exponents in [-64, 64], uninterpreted otherwise.
  static T pow(T base, T exponent) {
    int64_t e = centered(exponent);
    if (e >= 0 && e <= 64)
      return powU(base, static_cast<uint64_t>(e));
    if (e < 0 && e >= -64)
      return inverse(powU(base, static_cast<uint64_t>(-e)));
    return uninterpreted(FnPow, base, exponent);
  }
  /// Truncated integer remainder of the centered representatives (the sign
  /// of a); 0 for b == 0.
  static T fmod(T a, T b) {
    int64_t x = centered(a), y = centered(b);
    return y == 0 ? 0 : fromInt(x % y);
  }
  /// Floored integer remainder of the centered representatives (the sign
  /// of b); 0 for b == 0.
  static T mod(T a, T b) {
    int64_t x = centered(a), y = centered(b);
    if (y == 0)
      return 0;
    int64_t r = x % y;
    return fromInt(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
  }

  /// Optional hooks for long sums of products, used by the GEMM: products are
  /// accumulated unreduced in 128 bits (each is below 2^122) and reduced
  /// once per wideTerms of them. A reduced value plus wideTerms products
  /// cannot overflow. The result is the same residue as the sum of D::mul.
  using Wide = unsigned __int128;
  static constexpr int wideTerms = 63;
  static Wide mulWide(T a, T b) { return static_cast<Wide>(a) * b; }
  /// Reduces any 128-bit value mod P (2^61 == 1, so the 61-bit limbs add).
  static T reduceWide(Wide w) {
    uint64_t s = (static_cast<uint64_t>(w) & P) +
                 (static_cast<uint64_t>(w >> 61) & P) +
                 static_cast<uint64_t>(w >> 122);
    return reduce(s);
  }

  /// A uniform residue in [0, P).
  static T random(uint64_t &state) {
    for (;;) {
      uint64_t r = splitmix64Next(state) >> 3; // 61 bits
      if (r < P)
        return r;
    }
  }
};

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_DOMAIN_H
