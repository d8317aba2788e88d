//===- ScalarFunctions.h - Semantics of the elementwise operators -*- C++
//-*-===//
//
// Part of Loom. The elementwise operators of the interpreter, each defined
// once here over the primitives of a number domain D (Domain.h): the
// UnaryKind and BinaryKind enumerators, and beside each its definition. The
// tensor kernels (unary, binary, the activations fused into conv) and
// the scalar entry points (unaryScalar, binaryScalar) all map these
// definitions. A new elementwise function is an enumerator, a branch of
// applyUnary (or applyBinary) and a case of the dispatch switch, all in
// this file.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_SCALARFUNCTIONS_H
#define LOOM_INTERPRETER_SCALARFUNCTIONS_H

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <type_traits>

namespace loom {
namespace interp {

/// Elementwise unary operators. Derived ones are defined from the domain
/// primitives as:
///   Relu(x)        = max(x, 0)
///   Sigmoid(x)     = 1 / (1 + exp(-x))
///   Rsqrt(x)       = 1 / sqrt(x)
///   Gelu(x)        = 0.5 * x * (1 + erf(x / sqrt(2)))
///   GeluTanh(x)    = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
///   Clip(x)        = min(max(x, a), b)
///   HardSigmoid(x) = max(0, min(1, a * x + b))
///   HardSwish(x)   = x * HardSigmoid(x) with a = 1/6, b = 0.5
///   Softplus(x)    = max(x, 0) + log(1 + exp(-max(x, -x)))
///                    (= log(1 + exp(x)) without overflow for large x)
/// (constants enter through D::fromDouble).
enum class UnaryKind {
  Relu,
  Sigmoid,
  Tanh,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Neg,
  Erf,
  Gelu,
  GeluTanh,
  Clip,
  HardSigmoid,
  HardSwish,
  Softplus,
  RoundTF32
};

/// Attributes of unary operators. Clip: a = min, b = max. HardSigmoid:
/// a = alpha, b = beta. Ignored by the other kinds.
struct UnaryParams {
  double a = 0, b = 0;
};

/// Elementwise binary operators (numpy broadcasting). Mod is the remainder
/// with the divisor's sign (Python's %, ONNX Mod fmod=0), FMod the one with
/// the dividend's (C fmod, ONNX Mod fmod=1).
enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, Pow, Mod, FMod };

/// Elementwise comparisons (numpy broadcasting); the result is 1 or 0.
enum class CompareKind { Equal, Greater, GreaterEqual, Less, LessEqual };

/// The constants of the derived unary operators, converted into the domain
/// once per kernel call.
template <class D> struct UnaryConsts {
  using T = typename D::T;
  T zero = D::zero(), one = D::one(), half = D::fromDouble(0.5);
  T sqrt2 = D::fromDouble(std::sqrt(2.0));
  T sqrt2OverPi = D::fromDouble(std::sqrt(2.0 / 3.14159265358979323846));
  T geluCubic = D::fromDouble(0.044715);
  T sixth = D::fromDouble(1.0 / 6.0);
  T a, b;
  explicit UnaryConsts(UnaryParams p)
      : a(D::fromDouble(p.a)), b(D::fromDouble(p.b)) {}
};

/// max(0, min(1, alpha * x + beta)).
template <class D>
typename D::T hardSigmoid(const UnaryConsts<D> &c, typename D::T x,
                          typename D::T alpha, typename D::T beta) {
  return D::max(c.zero, D::min(c.one, D::add(D::mul(alpha, x), beta)));
}

/// The semantics of unary operator K: the single definition used by every
/// kernel (unary, the activations fused into conv, unaryScalar).
template <class D, UnaryKind K>
inline typename D::T applyUnary(const UnaryConsts<D> &c, typename D::T x) {
  if constexpr (K == UnaryKind::Relu)
    return D::max(x, c.zero);
  else if constexpr (K == UnaryKind::Sigmoid)
    return D::div(c.one, D::add(c.one, D::exp(D::neg(x))));
  else if constexpr (K == UnaryKind::Tanh)
    return D::tanh(x);
  else if constexpr (K == UnaryKind::Exp)
    return D::exp(x);
  else if constexpr (K == UnaryKind::Log)
    return D::log(x);
  else if constexpr (K == UnaryKind::Sqrt)
    return D::sqrt(x);
  else if constexpr (K == UnaryKind::Rsqrt)
    return D::div(c.one, D::sqrt(x));
  else if constexpr (K == UnaryKind::Neg)
    return D::neg(x);
  else if constexpr (K == UnaryKind::Erf)
    return D::erf(x);
  else if constexpr (K == UnaryKind::Gelu)
    return D::mul(D::mul(c.half, x), D::add(c.one, D::erf(D::div(x, c.sqrt2))));
  else if constexpr (K == UnaryKind::GeluTanh) {
    typename D::T cube = D::mul(x, D::mul(x, x));
    typename D::T inner =
        D::mul(c.sqrt2OverPi, D::add(x, D::mul(c.geluCubic, cube)));
    return D::mul(D::mul(c.half, x), D::add(c.one, D::tanh(inner)));
  } else if constexpr (K == UnaryKind::Clip)
    return D::min(D::max(x, c.a), c.b);
  else if constexpr (K == UnaryKind::HardSigmoid)
    return hardSigmoid<D>(c, x, c.a, c.b);
  else if constexpr (K == UnaryKind::HardSwish)
    return D::mul(x, hardSigmoid<D>(c, x, c.sixth, c.half));
  else if constexpr (K == UnaryKind::RoundTF32)
    return D::roundTF32(x);
  else {
    static_assert(K == UnaryKind::Softplus, "unhandled unary kind");
    typename D::T minusAbs = D::neg(D::max(x, D::neg(x)));
    return D::add(D::max(x, c.zero),
                  D::log(D::add(c.one, D::exp(minusAbs))));
  }
}

/// Calls fn(std::integral_constant<UnaryKind, K>) for the runtime kind.
template <class F> auto dispatchUnary(UnaryKind kind, F &&fn) {
#define LOOM_UNARY_CASE(K)                                                     \
  case UnaryKind::K:                                                           \
    return fn(std::integral_constant<UnaryKind, UnaryKind::K>());
  switch (kind) {
    LOOM_UNARY_CASE(Relu)
    LOOM_UNARY_CASE(Sigmoid)
    LOOM_UNARY_CASE(Tanh)
    LOOM_UNARY_CASE(Exp)
    LOOM_UNARY_CASE(Log)
    LOOM_UNARY_CASE(Sqrt)
    LOOM_UNARY_CASE(Rsqrt)
    LOOM_UNARY_CASE(Neg)
    LOOM_UNARY_CASE(Erf)
    LOOM_UNARY_CASE(Gelu)
    LOOM_UNARY_CASE(GeluTanh)
    LOOM_UNARY_CASE(Clip)
    LOOM_UNARY_CASE(HardSigmoid)
    LOOM_UNARY_CASE(HardSwish)
    LOOM_UNARY_CASE(Softplus)
    LOOM_UNARY_CASE(RoundTF32)
  }
#undef LOOM_UNARY_CASE
  llvm_unreachable("unknown UnaryKind");
}

/// The semantics of binary operator K.
template <class D, BinaryKind K>
inline typename D::T applyBinary(typename D::T a, typename D::T b) {
  if constexpr (K == BinaryKind::Add)
    return D::add(a, b);
  else if constexpr (K == BinaryKind::Sub)
    return D::sub(a, b);
  else if constexpr (K == BinaryKind::Mul)
    return D::mul(a, b);
  else if constexpr (K == BinaryKind::Div)
    return D::div(a, b);
  else if constexpr (K == BinaryKind::Max)
    return D::max(a, b);
  else if constexpr (K == BinaryKind::Min)
    return D::min(a, b);
  else if constexpr (K == BinaryKind::Mod)
    return D::mod(a, b);
  else if constexpr (K == BinaryKind::FMod)
    return D::fmod(a, b);
  else {
    static_assert(K == BinaryKind::Pow, "unhandled binary kind");
    return D::pow(a, b);
  }
}

/// Calls fn(std::integral_constant<BinaryKind, K>) for the runtime kind.
template <class F> auto dispatchBinary(BinaryKind kind, F &&fn) {
#define LOOM_BINARY_CASE(K)                                                    \
  case BinaryKind::K:                                                          \
    return fn(std::integral_constant<BinaryKind, BinaryKind::K>());
  switch (kind) {
    LOOM_BINARY_CASE(Add)
    LOOM_BINARY_CASE(Sub)
    LOOM_BINARY_CASE(Mul)
    LOOM_BINARY_CASE(Div)
    LOOM_BINARY_CASE(Max)
    LOOM_BINARY_CASE(Min)
    LOOM_BINARY_CASE(Pow)
    LOOM_BINARY_CASE(Mod)
    LOOM_BINARY_CASE(FMod)
  }
#undef LOOM_BINARY_CASE
  llvm_unreachable("unknown BinaryKind");
}

/// The semantics of comparison K. Float domains compare as IEEE (every
/// comparison with NaN is false); exact domains use the domain's own order
/// D::less (ModPDomain: centered representatives, as tg.max does). Domains
/// with neither (the symbolic Z3 domain) cannot compare.
template <class D, CompareKind K>
inline bool applyCompare(typename D::T a, typename D::T b) {
  if constexpr (!D::isExact) {
    if constexpr (K == CompareKind::Equal)
      return a == b;
    else if constexpr (K == CompareKind::Greater)
      return a > b;
    else if constexpr (K == CompareKind::GreaterEqual)
      return a >= b;
    else if constexpr (K == CompareKind::Less)
      return a < b;
    else {
      static_assert(K == CompareKind::LessEqual, "unhandled compare kind");
      return a <= b;
    }
  } else {
    if constexpr (K == CompareKind::Equal)
      return a == b;
    else if constexpr (K == CompareKind::Greater)
      return D::less(b, a);
    else if constexpr (K == CompareKind::GreaterEqual)
      return !D::less(a, b);
    else if constexpr (K == CompareKind::Less)
      return D::less(a, b);
    else {
      static_assert(K == CompareKind::LessEqual, "unhandled compare kind");
      return !D::less(b, a);
    }
  }
}

/// Calls fn(std::integral_constant<CompareKind, K>) for the runtime kind.
template <class F> auto dispatchCompare(CompareKind kind, F &&fn) {
#define LOOM_COMPARE_CASE(K)                                                   \
  case CompareKind::K:                                                         \
    return fn(std::integral_constant<CompareKind, CompareKind::K>());
  switch (kind) {
    LOOM_COMPARE_CASE(Equal)
    LOOM_COMPARE_CASE(Greater)
    LOOM_COMPARE_CASE(GreaterEqual)
    LOOM_COMPARE_CASE(Less)
    LOOM_COMPARE_CASE(LessEqual)
  }
#undef LOOM_COMPARE_CASE
  llvm_unreachable("unknown CompareKind");
}

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_SCALARFUNCTIONS_H
