//===- Z3Domain.cpp - A symbolic number domain over Z3 reals --------------===//
//
// Part of Loom. See Z3Domain.h. This file also instantiates every kernel of
// the interpreter (KernelsImpl.h) for Z3Domain, so that the symbolic
// semantics is the interpreter's, not a second copy of it.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Z3Domain.h"

#include "loom/Interpreter/KernelsImpl.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <optional>

using namespace loom::superopt;

namespace {

/// Everything a scope binds on its thread.
struct ThreadState {
  explicit ThreadState(z3::context &c)
      : ctx(c), zero(c.real_val(0)), one(c.real_val(1)),
        lowest(c.real_const("-oo")),
        expFn(c.function("exp", c.real_sort(), c.real_sort())),
        logFn(c.function("log", c.real_sort(), c.real_sort())),
        sqrtFn(c.function("sqrt", c.real_sort(), c.real_sort())),
        tanhFn(c.function("tanh", c.real_sort(), c.real_sort())),
        erfFn(c.function("erf", c.real_sort(), c.real_sort())),
        roundTF32Fn(c.function("round_tf32", c.real_sort(), c.real_sort())),
        powFn(c.function("pow", c.real_sort(), c.real_sort(), c.real_sort())),
        fmodFn(c.function("fmod", c.real_sort(), c.real_sort(), c.real_sort())),
        modFn(c.function("mod", c.real_sort(), c.real_sort(), c.real_sort())),
        invFn(c.function("inv", c.real_sort(), c.real_sort())) {}
  z3::context &ctx;
  z3::expr zero, one, lowest;
  z3::func_decl expFn, logFn, sqrtFn, tanhFn, erfFn, roundTF32Fn, powFn, fmodFn,
      modFn, invFn;
  std::vector<z3::expr> facts;
  llvm::DenseSet<unsigned> factTerms;
};

thread_local ThreadState *state = nullptr;

ThreadState &current() {
  if (!state)
    llvm::report_fatal_error("Z3Domain used outside a Z3Domain::Scope");
  return *state;
}

/// The value of an integral numeral.
std::optional<int64_t> integerValue(const z3::expr &e) {
  int64_t v;
  if (e.is_numeral() && e.is_numeral_i64(v))
    return v;
  return std::nullopt;
}

/// Records facts about term \p t once.
template <class F> void addFacts(const z3::expr &t, F &&make) {
  ThreadState &s = current();
  if (s.factTerms.insert(t.id()).second)
    make(s.facts);
}

} // namespace

Z3Domain::T::T() : e(current().zero) {}

Z3Domain::Scope::Scope(z3::context &context) {
  if (state)
    llvm::report_fatal_error("nested Z3Domain::Scope");
  state = new ThreadState(context);
}

Z3Domain::Scope::~Scope() {
  delete state;
  state = nullptr;
}

z3::context &Z3Domain::ctx() { return current().ctx; }
const std::vector<z3::expr> &Z3Domain::facts() { return current().facts; }
bool Z3Domain::isLowest(const T &v) { return z3::eq(v.e, current().lowest); }

Z3Domain::T Z3Domain::zero() { return current().zero; }
Z3Domain::T Z3Domain::one() { return current().one; }
Z3Domain::T Z3Domain::lowest() { return current().lowest; }

Z3Domain::T Z3Domain::fromDouble(double v) {
  z3::context &c = ctx();
  if (std::isnan(v))
    return c.real_const("nan");
  if (std::isinf(v))
    return v > 0 ? c.real_const("+oo") : lowest();
  if (v == 0)
    return zero();
  // v = mant * 2^exp exactly, with mant an integer of at most 53 bits.
  int e = 0;
  double frac = std::frexp(v, &e);
  int64_t mant = static_cast<int64_t>(std::ldexp(frac, 53));
  int64_t exp2 = static_cast<int64_t>(e) - 53;
  while (mant % 2 == 0) {
    mant /= 2;
    ++exp2;
  }
  bool negative = mant < 0;
  uint64_t magnitude = negative ? uint64_t(0) - uint64_t(mant) : uint64_t(mant);
  unsigned bits = 64 + static_cast<unsigned>(exp2 < 0 ? -exp2 : exp2) + 1;
  llvm::APInt num(bits, magnitude), den(bits, 1);
  if (exp2 >= 0)
    num <<= static_cast<unsigned>(exp2);
  else
    den <<= static_cast<unsigned>(-exp2);
  llvm::SmallString<64> text;
  if (negative)
    text += "-";
  num.toStringUnsigned(text, 10);
  if (exp2 < 0) {
    text += "/";
    den.toStringUnsigned(text, 10);
  }
  return c.real_val(text.c_str());
}

double Z3Domain::toDouble(const T &v) {
  double d;
  if (v.e.is_numeral() && v.e.is_numeral(d))
    return d;
  return std::nan("");
}

Z3Domain::T Z3Domain::fromInt(int64_t v) { return ctx().real_val(v); }

Z3Domain::T Z3Domain::add(const T &a, const T &b) {
  if (integerValue(a.e) == 0)
    return b;
  if (integerValue(b.e) == 0)
    return a;
  return T(a.e + b.e);
}

Z3Domain::T Z3Domain::sub(const T &a, const T &b) {
  if (integerValue(b.e) == 0)
    return a;
  return T(a.e - b.e);
}

Z3Domain::T Z3Domain::mul(const T &a, const T &b) {
  std::optional<int64_t> va = integerValue(a.e), vb = integerValue(b.e);
  if (va == 0 || vb == 0)
    return zero();
  if (va == 1)
    return b;
  if (vb == 1)
    return a;
  return T(a.e * b.e);
}

Z3Domain::T Z3Domain::div(const T &a, const T &b) {
  if (integerValue(b.e) == 1)
    return a;
  if (b.e.is_numeral())
    return T(a.e / b.e);
  // a * inv(b), inv uninterpreted with b * inv(b) = 1 for b != 0: sums of
  // products of atoms then normalise to a canonical polynomial, so that
  // rational identities (batchnorm folding) are proved by simplification.
  z3::expr r = current().invFn(b.e);
  addFacts(r, [&](std::vector<z3::expr> &facts) {
    facts.push_back(z3::implies(b.e != 0, b.e * r == 1));
  });
  return mul(a, T(r));
}

Z3Domain::T Z3Domain::neg(const T &a) { return T(-a.e); }

Z3Domain::T Z3Domain::max(const T &a, const T &b) {
  if (isLowest(a))
    return b;
  if (isLowest(b))
    return a;
  return T(z3::ite(a.e < b.e, b.e, a.e));
}

Z3Domain::T Z3Domain::min(const T &a, const T &b) {
  if (isLowest(a))
    return a;
  if (isLowest(b))
    return b;
  return T(z3::ite(b.e < a.e, b.e, a.e));
}

Z3Domain::T Z3Domain::exp(const T &a) {
  z3::expr r = current().expFn(a.e);
  addFacts(r, [&](std::vector<z3::expr> &facts) { facts.push_back(r > 0); });
  return r;
}

Z3Domain::T Z3Domain::log(const T &a) { return current().logFn(a.e); }

Z3Domain::T Z3Domain::sqrt(const T &a) {
  z3::expr r = current().sqrtFn(a.e);
  addFacts(r, [&](std::vector<z3::expr> &facts) {
    facts.push_back(z3::implies(a.e >= 0, r >= 0 && r * r == a.e));
    facts.push_back(z3::implies(a.e > 0, r > 0));
  });
  return r;
}

Z3Domain::T Z3Domain::tanh(const T &a) { return current().tanhFn(a.e); }
Z3Domain::T Z3Domain::erf(const T &a) { return current().erfFn(a.e); }
Z3Domain::T Z3Domain::roundTF32(const T &a) {
  return current().roundTF32Fn(a.e);
}

Z3Domain::T Z3Domain::pow(const T &base, const T &exponent) {
  std::optional<int64_t> e = integerValue(exponent.e);
  if (e && *e >= -64 && *e <= 64) {
    T r = one();
    for (int64_t i = 0; i < (*e < 0 ? -*e : *e); ++i)
      r = mul(r, base);
    return *e < 0 ? div(one(), r) : r;
  }
  return current().powFn(base.e, exponent.e);
}

Z3Domain::T Z3Domain::fmod(const T &a, const T &b) {
  std::optional<int64_t> x = integerValue(a.e), y = integerValue(b.e);
  if (x && y)
    return fromInt(*y == 0 ? 0 : *x % *y);
  return current().fmodFn(a.e, b.e);
}

Z3Domain::T Z3Domain::mod(const T &a, const T &b) {
  std::optional<int64_t> x = integerValue(a.e), y = integerValue(b.e);
  if (x && y) {
    if (*y == 0)
      return zero();
    int64_t r = *x % *y;
    return fromInt(r != 0 && ((r < 0) != (*y < 0)) ? r + *y : r);
  }
  return current().modFn(a.e, b.e);
}

Z3Domain::T Z3Domain::nonZeroIndicator(const T &a) {
  return T(z3::ite(a.e != 0, current().one, current().zero));
}

Z3Domain::T Z3Domain::random(uint64_t &s) {
  return fromInt(static_cast<int64_t>(interp::splitmix64Next(s) % 17) - 8);
}

LOOM_INSTANTIATE_KERNELS(loom::superopt::Z3Domain)
