//===- Z3Domain.h - A symbolic number domain over Z3 reals ------*- C++ -*-===//
//
// Part of Loom. Z3Domain is a number domain (see loom/Interpreter/Domain.h)
// whose scalars are Z3 real-valued expressions. The interpreter's kernels are
// instantiated for it (Z3Domain.cpp, with LOOM_INSTANTIATE_KERNELS), so the
// very code that defines the reference semantics of every tg operator builds,
// element by element, the symbolic value of a tensor expression over real
// inputs. The axiom checker (AxiomChecker.h) uses it to prove each axiom of
// the rule generator on concrete shapes.
//
// Semantics:
//   * add, sub, mul, neg: real arithmetic; div by a numeral is exact real
//     division, and a / b otherwise is a * inv(b) with inv uninterpreted and
//     b * inv(b) = 1 whenever b != 0 (a side condition, below), so that
//     sums of products of atoms normalise to one polynomial;
//   * fromDouble is exact (every finite double is a dyadic rational);
//   * max/min are if-then-else terms over the real order (the order of the
//     reals, unlike ModPDomain's); lowest() is a distinguished symbol
//     that max/min absorb, standing for -infinity (the start of a max
//     reduction);
//   * exp, log, sqrt, tanh, erf, non-integer pow and remainders of
//     non-numerals are uninterpreted
//     functions. Facts about them that hold over the reals are recorded as
//     side conditions (facts()) whenever a term is built: exp(a) > 0,
//     a >= 0 -> sqrt(a) >= 0 and sqrt(a)^2 = a, a > 0 -> sqrt(a) > 0.
//
// The domain is bound to a z3::context per thread by a Z3Domain::Scope; all
// expressions of one scope belong to that context.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_Z3DOMAIN_H
#define LOOM_SUPEROPT_Z3DOMAIN_H

#include <z3++.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace loom::superopt {

struct Z3Domain {
  /// A scalar: a Z3 real expression. Default-constructed scalars are 0.
  struct T {
    T();
    T(z3::expr e) : e(std::move(e)) {}
    z3::expr e;
  };

  static constexpr const char *name = "z3";
  static constexpr bool isExact = true;

  /// Binds the domain to \p context on the current thread for the scope's
  /// lifetime. Scopes do not nest.
  class Scope {
  public:
    explicit Scope(z3::context &context);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
  };

  /// The context of the current thread's scope.
  static z3::context &ctx();
  /// Side conditions recorded for the uninterpreted functions built so far in
  /// this scope.
  static const std::vector<z3::expr> &facts();
  /// The symbol standing for -infinity.
  static bool isLowest(const T &v);

  static T zero();
  static T one();
  static T lowest();
  static T fromDouble(double v);
  /// The value of a numeral, NaN for any other expression.
  static double toDouble(const T &v);
  static T fromInt(int64_t v);

  static T add(const T &a, const T &b);
  static T sub(const T &a, const T &b);
  static T mul(const T &a, const T &b);
  static T div(const T &a, const T &b);
  static T neg(const T &a);
  static T max(const T &a, const T &b);
  static T min(const T &a, const T &b);

  static T exp(const T &a);
  static T log(const T &a);
  static T sqrt(const T &a);
  static T tanh(const T &a);
  static T erf(const T &a);
  /// An uninterpreted function: no rule of the generator involves
  /// tg.round_tf32.
  static T roundTF32(const T &a);
  /// Exact power for integer numeral exponents in [-64, 64], otherwise an
  /// uninterpreted function.
  static T pow(const T &base, const T &exponent);
  /// Remainders (C fmod: the dividend's sign; mod: the divisor's): exact for
  /// integer numerals (0 for a zero divisor, as ModPDomain), otherwise
  /// uninterpreted functions. No rule of the generator involves tg.mod.
  static T fmod(const T &a, const T &b);
  static T mod(const T &a, const T &b);
  /// x != 0 ? 1 : 0 (the kernels' cast to i1).
  static T nonZeroIndicator(const T &a);

  /// A small integer drawn from \p state (numerals; unused by the checker).
  static T random(uint64_t &state);
};

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_Z3DOMAIN_H
