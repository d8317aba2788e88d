//===- KernelsTest.cpp - Numerics of the interpreter kernels --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Typed tests over the three number domains. Inputs are small integers or
// dyadic rationals, so that every polynomial or rational result is exact in
// all domains (ModP included) and is compared with ==. Transcendental results
// are compared with hand-computed constants (within a tolerance) in the float
// domains, and against their documented uninterpreted semantics in ModP.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Kernels.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::interp;

namespace {

using Domains = ::testing::Types<F32Domain, F64Domain, ModPDomain>;

struct DomainNames {
  template <class D> static std::string GetName(int) { return D::name; }
};

template <class D> class KernelsDomainTest : public ::testing::Test {};
template <class D> class KernelsElementwiseTest : public ::testing::Test {};
template <class D> class KernelsLinalgTest : public ::testing::Test {};
template <class D> class KernelsPoolTest : public ::testing::Test {};
template <class D> class KernelsMovementTest : public ::testing::Test {};
template <class D> class KernelsReduceTest : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsDomainTest, Domains, DomainNames);
TYPED_TEST_SUITE(KernelsElementwiseTest, Domains, DomainNames);
TYPED_TEST_SUITE(KernelsLinalgTest, Domains, DomainNames);
TYPED_TEST_SUITE(KernelsPoolTest, Domains, DomainNames);
TYPED_TEST_SUITE(KernelsMovementTest, Domains, DomainNames);
TYPED_TEST_SUITE(KernelsReduceTest, Domains, DomainNames);

using Shape = std::vector<int64_t>;

template <class D> Tensor<D> make(Shape shape, std::vector<double> values) {
  return Tensor<D>::fromDoubles(std::move(shape), values);
}

/// 0, 1, 2, ... in shape \p shape.
template <class D> Tensor<D> iota(Shape shape) {
  Tensor<D> t(std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data[i] = D::fromInt(i);
  return t;
}

/// Relative tolerance for results that went through rounding in D.
template <class D> double tolerance() {
  return std::is_same_v<typename D::T, float> ? 2e-5 : 1e-12;
}

/// Expects \p got to have shape \p shape and elements exactly
/// D::fromDouble(want).
template <class D>
void expectExact(const Tensor<D> &got, Shape shape, std::vector<double> want) {
  ASSERT_EQ(got.shape, shape);
  Tensor<D> expected = make<D>(shape, want);
  ASSERT_EQ(got.data.size(), expected.data.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got.data[i], expected.data[i])
        << "element " << i << ": got " << D::toDouble(got.data[i]) << ", want "
        << want[i];
}

/// Float domains only: expects \p got near \p want (relative tolerance).
template <class D>
void expectNear(const Tensor<D> &got, Shape shape, std::vector<double> want) {
  static_assert(!D::isExact, "approximate comparison of an exact domain");
  ASSERT_EQ(got.shape, shape);
  std::vector<double> g = got.toDoubles();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(g[i], want[i], tolerance<D>() * (1 + std::fabs(want[i])))
        << "element " << i;
}

/// Expects \p got == \p ref exactly in exact domains and within a tolerance
/// scaled by \p scale in float domains.
template <class D>
void expectClose(const Tensor<D> &got, const Tensor<D> &ref, double scale = 1) {
  ASSERT_EQ(got.shape, ref.shape);
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    if constexpr (D::isExact) {
      ASSERT_EQ(got.data[i], ref.data[i]) << "element " << i;
    } else {
      double r = D::toDouble(ref.data[i]);
      ASSERT_NEAR(D::toDouble(got.data[i]), r,
                  tolerance<D>() * scale * (1 + std::fabs(r)))
          << "element " << i;
    }
  }
}

/// Maps the domain-level scalar function \p f over \p x (an independent
/// statement of an elementwise semantics).
template <class D, class F> Tensor<D> mapScalar(const Tensor<D> &x, F f) {
  Tensor<D> out = x;
  for (auto &v : out.data)
    v = f(v);
  return out;
}

//===----------------------------------------------------------------------===//
// Domains and tensors
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsDomainTest, Arithmetic) {
  using D = TypeParam;
  EXPECT_EQ(D::add(D::fromInt(3), D::fromInt(4)), D::fromInt(7));
  EXPECT_EQ(D::sub(D::fromInt(3), D::fromInt(4)), D::fromInt(-1));
  EXPECT_EQ(D::mul(D::fromInt(-3), D::fromInt(4)), D::fromInt(-12));
  EXPECT_EQ(D::div(D::fromInt(3), D::fromInt(4)), D::fromDouble(0.75));
  EXPECT_EQ(D::neg(D::fromInt(5)), D::fromInt(-5));
  EXPECT_EQ(D::mul(D::fromDouble(0.25), D::fromInt(4)), D::one());
  EXPECT_EQ(D::mul(D::fromDouble(0.5), D::fromInt(2)), D::one());
  EXPECT_EQ(D::fromDouble(-6), D::fromInt(-6));
  EXPECT_EQ(D::fromDouble(0), D::zero());
  EXPECT_EQ(D::toDouble(D::fromInt(-5)), -5.0);
  EXPECT_EQ(D::pow(D::fromInt(3), D::fromInt(2)), D::fromInt(9));
  EXPECT_EQ(D::pow(D::fromInt(2), D::fromInt(-2)), D::fromDouble(0.25));
}

TYPED_TEST(KernelsDomainTest, Order) {
  using D = TypeParam;
  auto m2 = D::fromInt(-2), p1 = D::fromInt(1), z = D::zero();
  EXPECT_TRUE(D::less(m2, p1));
  EXPECT_FALSE(D::less(p1, m2));
  EXPECT_FALSE(D::less(p1, p1));
  EXPECT_TRUE(D::less(m2, z));
  EXPECT_EQ(D::max(m2, p1), p1);
  EXPECT_EQ(D::min(m2, p1), m2);
  EXPECT_TRUE(D::less(D::lowest(), m2));
  EXPECT_EQ(D::max(D::lowest(), m2), m2);
}

TYPED_TEST(KernelsDomainTest, TensorBasics) {
  using D = TypeParam;
  Tensor<D> z({2, 3});
  EXPECT_EQ(z.numElements(), 6);
  EXPECT_EQ(z.rank(), 2);
  for (auto v : z.data)
    EXPECT_EQ(v, D::zero());
  Tensor<D> scalar(Shape{});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(stridesOf({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(stridesOf({}), Shape{});
  Tensor<D> t = make<D>({2, 2}, {1, -2, 0.5, 3});
  if constexpr (!D::isExact) {
    EXPECT_EQ(t.toDoubles(), (std::vector<double>{1, -2, 0.5, 3}));
  }
  EXPECT_EQ(make<D>({3}, {1, -2, 7}).toDoubles(),
            (std::vector<double>{1, -2, 7}));
}

TYPED_TEST(KernelsDomainTest, RandomIsDeterministic) {
  using D = TypeParam;
  Tensor<D> a = Tensor<D>::random({4, 5}, 42);
  Tensor<D> b = Tensor<D>::random({4, 5}, 42);
  Tensor<D> c = Tensor<D>::random({4, 5}, 43);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  EXPECT_EQ(a.shape, (Shape{4, 5}));
  if constexpr (!D::isExact) {
    for (double v : Tensor<D>::random({1000}, 7).toDoubles()) {
      EXPECT_GE(v, -1.0);
      EXPECT_LT(v, 1.0);
    }
  } else {
    for (auto v : Tensor<D>::random({1000}, 7).data)
      EXPECT_LT(v, ModPDomain::P);
  }
}

TEST(KernelsModPDomain, FieldOperations) {
  using D = ModPDomain;
  const uint64_t P = D::P;
  uint64_t state = 1;
  for (int i = 0; i < 1000; ++i) {
    uint64_t a = D::random(state), b = D::random(state);
    unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    EXPECT_EQ(D::mul(a, b), static_cast<uint64_t>(p % P));
    EXPECT_EQ(D::add(a, b), (a + b) % P);
    EXPECT_EQ(D::add(D::sub(a, b), b), a);
    if (a != 0) {
      EXPECT_EQ(D::mul(a, D::inverse(a)), 1u);
    }
    EXPECT_EQ(D::mul(D::div(b, a == 0 ? 1 : a), a == 0 ? 1 : a), b);
  }
  EXPECT_EQ(D::neg(0), 0u);
  EXPECT_EQ(D::fromInt(-1), P - 1);
  EXPECT_EQ(D::fromInt(INT64_MIN), D::neg(D::pow2(63)));
}

TEST(KernelsModPDomain, DivisionByZeroIsZero) {
  using D = ModPDomain;
  EXPECT_EQ(D::div(D::fromInt(5), D::zero()), D::zero());
  EXPECT_EQ(D::inverse(0), 0u);
  EXPECT_EQ(D::pow(D::zero(), D::fromInt(-3)), D::zero());
  EXPECT_EQ(D::pow(D::zero(), D::zero()), D::one());
}

TEST(KernelsModPDomain, FromDoubleIsExactOnDyadics) {
  using D = ModPDomain;
  EXPECT_EQ(D::mul(D::fromDouble(0.25), D::fromInt(4)), D::one());
  EXPECT_EQ(D::mul(D::fromDouble(-0.375), D::fromInt(8)), D::fromInt(-3));
  EXPECT_EQ(D::mul(D::fromDouble(std::ldexp(1.0, -70)),
                   D::fromDouble(std::ldexp(1.0, 70))),
            D::one());
  EXPECT_EQ(D::fromDouble(std::ldexp(3.0, 100)),
            D::mul(D::fromInt(3), D::pow2(100)));
  EXPECT_EQ(D::fromDouble(std::ldexp(1.0, 61)), D::one()); // 2^61 == 1 mod P
  EXPECT_EQ(D::fromDouble(-0.0), D::zero());
  EXPECT_EQ(D::fromDouble(std::ldexp(1.0, -1074)), D::pow2(-1074));
  // Non-finite values map to fixed, distinct residues.
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(D::fromDouble(nan), D::fromDouble(nan));
  EXPECT_NE(D::fromDouble(nan), D::fromDouble(inf));
  EXPECT_NE(D::fromDouble(inf), D::fromDouble(-inf));
  EXPECT_LT(D::fromDouble(inf), D::P);
  // Non-dyadic constants are the residue of their double approximation, not
  // of the real number.
  EXPECT_NE(D::mul(D::fromDouble(1.0 / 3.0), D::fromInt(3)), D::one());
}

TEST(KernelsModPDomain, CenteredOrder) {
  using D = ModPDomain;
  EXPECT_EQ(D::toDouble(D::fromInt(-7)), -7.0);
  EXPECT_EQ(D::toDouble(D::HalfP), static_cast<double>(D::HalfP));
  EXPECT_EQ(D::centered(D::HalfP + 1), -static_cast<int64_t>(D::HalfP));
  EXPECT_TRUE(D::less(D::HalfP + 1, 0));
  EXPECT_TRUE(D::less(D::HalfP + 1, D::HalfP));
  EXPECT_EQ(D::lowest(), D::HalfP + 1);
  EXPECT_EQ(D::max(D::fromInt(-3), D::fromInt(2)), D::fromInt(2));
  EXPECT_EQ(D::min(D::fromInt(-3), D::fromInt(2)), D::fromInt(-3));
}

TEST(KernelsModPDomain, UninterpretedFunctions) {
  using D = ModPDomain;
  uint64_t state = 5;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = D::random(state);
    // Deterministic.
    EXPECT_EQ(D::exp(x), D::exp(x));
    // Distinct functions.
    EXPECT_NE(D::exp(x), D::log(x));
    EXPECT_NE(D::exp(x), D::sqrt(x));
    EXPECT_NE(D::tanh(x), D::erf(x));
    EXPECT_NE(D::sqrt(x), D::tanh(x));
    EXPECT_LT(D::exp(x), D::P);
  }
  // No real-number identities hold.
  EXPECT_NE(D::exp(D::zero()), D::one());
  EXPECT_NE(D::sqrt(D::fromInt(4)), D::fromInt(2));
  EXPECT_NE(D::mul(D::exp(D::fromInt(1)), D::exp(D::fromInt(1))),
            D::exp(D::fromInt(2)));
}

TEST(KernelsModPDomain, Pow) {
  using D = ModPDomain;
  uint64_t state = 9;
  for (int i = 0; i < 50; ++i) {
    uint64_t x = D::random(state);
    EXPECT_EQ(D::pow(x, D::fromInt(3)), D::mul(x, D::mul(x, x)));
    EXPECT_EQ(D::pow(x, D::fromInt(-2)), D::div(D::one(), D::mul(x, x)));
    EXPECT_EQ(D::pow(x, D::fromInt(64)), D::powU(x, 64));
    EXPECT_EQ(D::pow(x, D::zero()), D::one());
    // Outside [-64, 64] or non-integer: uninterpreted.
    EXPECT_NE(D::pow(x, D::fromInt(65)), D::powU(x, 65));
    EXPECT_EQ(D::pow(x, D::fromInt(65)), D::pow(x, D::fromInt(65)));
    EXPECT_NE(D::pow(x, D::fromDouble(0.5)), D::sqrt(x));
    EXPECT_NE(D::pow(x, D::fromInt(65)), D::pow(x, D::fromInt(66)));
  }
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsElementwiseTest, Relu) {
  using D = TypeParam;
  // Order-based operators get integer inputs: in ModP, dyadic fractions are
  // not ordered like reals (1/2 is the residue (P+1)/2, centered negative).
  Tensor<D> x = make<D>({2, 2}, {-2, -1, 0, 3});
  expectExact(unary(UnaryKind::Relu, x), {2, 2}, {0, 0, 0, 3});
  if constexpr (D::isExact) {
    // A residue above P/2 is negative: relu maps it to 0.
    Tensor<D> big({2}, {D::HalfP + 1, D::HalfP});
    EXPECT_EQ(unary(UnaryKind::Relu, big).data[0], D::zero());
    EXPECT_EQ(unary(UnaryKind::Relu, big).data[1], D::HalfP);
  }
}

TYPED_TEST(KernelsElementwiseTest, NegClipHardSigmoid) {
  using D = TypeParam;
  Tensor<D> x = make<D>({5}, {-3, -1, 1, 2, 5});
  expectExact(unary(UnaryKind::Neg, x), {5}, {3, 1, -1, -2, -5});
  expectExact(unary(UnaryKind::Neg, make<D>({1}, {0.5})), {1}, {-0.5});
  expectExact(unary(UnaryKind::Clip, x, {-1, 2}), {5}, {-1, -1, 1, 2, 2});
  // 2 * x + 1 = -3, -1, 1, 3 -> clamped to [0, 1].
  Tensor<D> h = make<D>({4}, {-2, -1, 0, 1});
  expectExact(unary(UnaryKind::HardSigmoid, h, {2, 1}), {4}, {0, 0, 1, 1});
  Tensor<D> f = make<D>({6}, {-4, -2, 0, 1, 2, 4});
  Tensor<D> hf = unary(UnaryKind::HardSigmoid, f, {0.25, 0.5});
  if constexpr (!D::isExact) {
    // 0.25 * x + 0.5 = -0.5, 0, 0.5, 0.75, 1, 1.5 -> clamped to [0, 1].
    expectExact(hf, {6}, {0, 0, 0.5, 0.75, 1, 1});
  } else {
    auto alpha = D::fromDouble(0.25), beta = D::fromDouble(0.5);
    expectClose(hf, mapScalar(f, [&](uint64_t v) {
                  return D::max(
                      D::zero(),
                      D::min(D::one(), D::add(D::mul(alpha, v), beta)));
                }));
    // 0.25 * 2 + 0.5 == 1 exactly, and min(1, 1) == 1.
    EXPECT_EQ(hf.data[4], D::one());
  }
}

TYPED_TEST(KernelsElementwiseTest, HardSwish) {
  using D = TypeParam;
  Tensor<D> x = make<D>({7}, {-4, -3, -1, 0, 1, 3, 4});
  Tensor<D> y = unary(UnaryKind::HardSwish, x);
  if constexpr (!D::isExact) {
    expectNear(y, {7}, {0, 0, -1.0 / 3, 0, 2.0 / 3, 3, 4});
  } else {
    // x * max(0, min(1, fromDouble(1/6) * x + 1/2)).
    auto sixth = D::fromDouble(1.0 / 6), half = D::fromDouble(0.5);
    expectClose(y, mapScalar(x, [&](uint64_t v) {
                  return D::mul(
                      v,
                      D::max(D::zero(),
                             D::min(D::one(), D::add(D::mul(sixth, v), half))));
                }));
    EXPECT_EQ(y.data[3], D::zero());
  }
}

TYPED_TEST(KernelsElementwiseTest, SigmoidTanhExpLog) {
  using D = TypeParam;
  Tensor<D> x = make<D>({3}, {0, 1, -2});
  Tensor<D> pos = make<D>({3}, {1, 2, 0.5});
  Tensor<D> sig = unary(UnaryKind::Sigmoid, x);
  Tensor<D> th = unary(UnaryKind::Tanh, x);
  Tensor<D> ex = unary(UnaryKind::Exp, x);
  Tensor<D> lg = unary(UnaryKind::Log, pos);
  if constexpr (!D::isExact) {
    expectNear(sig, {3}, {0.5, 0.7310585786300049, 0.11920292202211755});
    expectNear(th, {3}, {0, 0.7615941559557649, -0.9640275800758169});
    expectNear(ex, {3}, {1, 2.718281828459045, 0.1353352832366127});
    expectNear(lg, {3}, {0, 0.6931471805599453, -0.6931471805599453});
  } else {
    expectClose(sig, mapScalar(x, [](uint64_t v) {
                  return D::div(D::one(), D::add(D::one(), D::exp(D::neg(v))));
                }));
    // exp is uninterpreted: sigmoid(0) is not 1/2.
    EXPECT_NE(sig.data[0], D::fromDouble(0.5));
    expectClose(th, mapScalar(x, [](uint64_t v) { return D::tanh(v); }));
    EXPECT_NE(th.data[0], D::zero());
    expectClose(ex, mapScalar(x, [](uint64_t v) { return D::exp(v); }));
    expectClose(lg, mapScalar(pos, [](uint64_t v) { return D::log(v); }));
    // Deterministic, and exp differs from log on the same input.
    EXPECT_EQ(unary(UnaryKind::Exp, x).data, ex.data);
    EXPECT_NE(unary(UnaryKind::Log, x).data, ex.data);
  }
}

TYPED_TEST(KernelsElementwiseTest, SqrtRsqrtErf) {
  using D = TypeParam;
  Tensor<D> x = make<D>({3}, {4, 0.25, 2});
  Tensor<D> e = make<D>({3}, {0, 0.5, -1});
  Tensor<D> sq = unary(UnaryKind::Sqrt, x);
  Tensor<D> rs = unary(UnaryKind::Rsqrt, x);
  Tensor<D> er = unary(UnaryKind::Erf, e);
  if constexpr (!D::isExact) {
    expectNear(sq, {3}, {2, 0.5, 1.4142135623730951});
    expectNear(rs, {3}, {0.5, 2, 0.7071067811865476});
    expectNear(er, {3}, {0, 0.5204998778130465, -0.8427007929497149});
  } else {
    expectClose(sq, mapScalar(x, [](uint64_t v) { return D::sqrt(v); }));
    EXPECT_NE(sq.data[0], D::fromInt(2));
    // rsqrt(x) * sqrt(x) == 1 exactly (sqrt(x) != 0 here).
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(D::mul(rs.data[i], sq.data[i]), D::one());
    expectClose(er, mapScalar(e, [](uint64_t v) { return D::erf(v); }));
  }
}

TYPED_TEST(KernelsElementwiseTest, Gelu) {
  using D = TypeParam;
  Tensor<D> x = make<D>({4}, {0, 1, -1, 2});
  Tensor<D> g = unary(UnaryKind::Gelu, x);
  Tensor<D> gt = unary(UnaryKind::GeluTanh, x);
  if constexpr (!D::isExact) {
    expectNear(
        g, {4},
        {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416});
    expectNear(
        gt, {4},
        {0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775});
  } else {
    auto half = D::fromDouble(0.5), sqrt2 = D::fromDouble(std::sqrt(2.0));
    expectClose(g, mapScalar(x, [&](uint64_t v) {
                  return D::mul(D::mul(half, v),
                                D::add(D::one(), D::erf(D::div(v, sqrt2))));
                }));
    auto c = D::fromDouble(std::sqrt(2.0 / 3.14159265358979323846));
    auto k = D::fromDouble(0.044715);
    expectClose(
        gt, mapScalar(x, [&](uint64_t v) {
          auto inner = D::mul(c, D::add(v, D::mul(k, D::mul(v, D::mul(v, v)))));
          return D::mul(D::mul(half, v), D::add(D::one(), D::tanh(inner)));
        }));
    EXPECT_EQ(g.data[0], D::zero());
    EXPECT_NE(g.data[1], gt.data[1]);
  }
}

TYPED_TEST(KernelsElementwiseTest, Softplus) {
  using D = TypeParam;
  Tensor<D> x = make<D>({6}, {-100, -1, 0, 1, 20, 100});
  Tensor<D> y = unary(UnaryKind::Softplus, x);
  if constexpr (!D::isExact) {
    // log(1 + exp(x)), which overflows for x = 100 when computed naively.
    std::vector<double> want;
    for (double v : {-100.0, -1.0, 0.0, 1.0, 20.0, 100.0})
      want.push_back(v > 0 ? v + std::log1p(std::exp(-v))
                           : std::log1p(std::exp(v)));
    expectNear(y, {6}, want);
  } else {
    // max(x, 0) + log(1 + exp(-max(x, -x))), exp and log uninterpreted.
    expectClose(y, mapScalar(x, [&](uint64_t v) {
                  return D::add(
                      D::max(v, D::zero()),
                      D::log(D::add(D::one(),
                                    D::exp(D::neg(D::max(v, D::neg(v)))))));
                }));
  }
}

TYPED_TEST(KernelsElementwiseTest, UnaryScalarMatchesKernel) {
  using D = TypeParam;
  Tensor<D> x = Tensor<D>::random({16}, 3);
  for (UnaryKind k :
       {UnaryKind::Relu, UnaryKind::Sigmoid, UnaryKind::Tanh, UnaryKind::Exp,
        UnaryKind::Neg, UnaryKind::Erf, UnaryKind::Gelu, UnaryKind::GeluTanh,
        UnaryKind::Clip, UnaryKind::HardSigmoid, UnaryKind::HardSwish,
        UnaryKind::Softplus}) {
    UnaryParams p{-0.5, 0.5};
    Tensor<D> y = unary(k, x, p);
    for (int i = 0; i < 16; ++i) {
      auto want = unaryScalar<D>(k, x.data[i], p);
      // Bit-identical, NaN included.
      EXPECT_TRUE(y.data[i] == want || (want != want && y.data[i] != y.data[i]))
          << "kind " << static_cast<int>(k) << " element " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsElementwiseTest, BinarySameShape) {
  using D = TypeParam;
  Tensor<D> a = make<D>({2, 2}, {1, -2, 3, 4});
  Tensor<D> b = make<D>({2, 2}, {2, 4, -1, -8});
  expectExact(binary(BinaryKind::Add, a, b), {2, 2}, {3, 2, 2, -4});
  expectExact(binary(BinaryKind::Sub, a, b), {2, 2}, {-1, -6, 4, 12});
  expectExact(binary(BinaryKind::Mul, a, b), {2, 2}, {2, -8, -3, -32});
  expectExact(binary(BinaryKind::Div, a, b), {2, 2}, {0.5, -0.5, -3, -0.5});
  expectExact(binary(BinaryKind::Max, a, b), {2, 2}, {2, 4, 3, 4});
  expectExact(binary(BinaryKind::Min, a, b), {2, 2}, {1, -2, -1, -8});
}

TYPED_TEST(KernelsElementwiseTest, BinaryModOnIntegers) {
  // The floored remainder has the divisor's sign, fmod the dividend's; a
  // scalar divisor broadcasts. Every domain agrees on integers.
  using D = TypeParam;
  Tensor<D> a = make<D>({6}, {-7, 7, -7, 7, 0, 9});
  Tensor<D> b = make<D>({6}, {3, 3, -3, -3, 4, 9});
  expectExact(binary(BinaryKind::Mod, a, b), {6}, {2, 1, -1, -2, 0, 0});
  expectExact(binary(BinaryKind::FMod, a, b), {6}, {-1, 1, -1, 1, 0, 0});
  expectExact(binary(BinaryKind::Mod, make<D>({2, 2}, {5, -5, 6, -6}),
                     make<D>({}, {4})),
              {2, 2}, {1, 3, 2, 2});
  // The scalar entry point is the kernel's definition.
  EXPECT_EQ(binaryScalar<D>(BinaryKind::Mod, D::fromInt(-7), D::fromInt(3)),
            D::fromInt(2));
}

TYPED_TEST(KernelsElementwiseTest, BinaryFModOnFloats) {
  using D = TypeParam;
  if constexpr (D::isExact) {
    // A zero divisor gives 0, as division does in the exact domain.
    expectExact(binary(BinaryKind::FMod, make<D>({1}, {5}), make<D>({1}, {0})),
                {1}, {0});
  } else {
    expectExact(binary(BinaryKind::FMod, make<D>({4}, {5.5, -5.5, 5.5, -5.5}),
                       make<D>({4}, {2, 2, -2, -2})),
                {4}, {1.5, -1.5, 1.5, -1.5});
    Tensor<D> nan =
        binary(BinaryKind::FMod, make<D>({1}, {1}), make<D>({1}, {0}));
    EXPECT_TRUE(std::isnan(nan.data[0]));
  }
}

TYPED_TEST(KernelsElementwiseTest, BinaryPow) {
  using D = TypeParam;
  Tensor<D> base = make<D>({4}, {2, 4, -2, 3});
  Tensor<D> exponent = make<D>({4}, {3, -2, 2, 0});
  expectExact(binary(BinaryKind::Pow, base, exponent), {4}, {8, 0.0625, 4, 1});
  Tensor<D> r = binary(BinaryKind::Pow, make<D>({1}, {4}), make<D>({1}, {0.5}));
  if constexpr (D::isExact) {
    EXPECT_EQ(r.data[0],
              D::uninterpreted(D::FnPow, D::fromInt(4), D::fromDouble(0.5)));
  } else {
    expectNear(r, {1}, {2});
  }
}

TYPED_TEST(KernelsElementwiseTest, BinaryDivByZero) {
  using D = TypeParam;
  Tensor<D> r =
      binary(BinaryKind::Div, make<D>({2}, {1, -1}), make<D>({2}, {0, 0}));
  if constexpr (D::isExact) {
    expectExact(r, {2}, {0, 0});
  } else {
    EXPECT_EQ(r.toDoubles()[0], std::numeric_limits<double>::infinity());
    EXPECT_EQ(r.toDoubles()[1], -std::numeric_limits<double>::infinity());
  }
}

TYPED_TEST(KernelsElementwiseTest, BinaryBroadcast) {
  using D = TypeParam;
  // [2,3] + [3]
  expectExact(binary(BinaryKind::Add, make<D>({2, 3}, {1, 2, 3, 4, 5, 6}),
                     make<D>({3}, {10, 20, 30})),
              {2, 3}, {11, 22, 33, 14, 25, 36});
  // [2,1,3] * [4,1] -> [2,4,3]
  Tensor<D> a = make<D>({2, 1, 3}, {1, 2, 3, -1, -2, -3});
  Tensor<D> b = make<D>({4, 1}, {1, 2, 3, 4});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        want.push_back((i == 0 ? 1 : -1) * (k + 1) * (j + 1));
  expectExact(binary(BinaryKind::Mul, a, b), {2, 4, 3}, want);
  // [3,1] - [1,3]
  expectExact(binary(BinaryKind::Sub, make<D>({3, 1}, {1, 2, 3}),
                     make<D>({1, 3}, {1, 2, 4})),
              {3, 3}, {0, -1, -3, 1, 0, -2, 2, 1, -1});
  // Rank-0 operand.
  expectExact(binary(BinaryKind::Max, make<D>({}, {0}),
                     make<D>({2, 2}, {-1, 2, -3, 4})),
              {2, 2}, {0, 2, 0, 4});
  expectExact(
      binary(BinaryKind::Div, make<D>({2, 2}, {1, 2, 3, 4}), make<D>({}, {4})),
      {2, 2}, {0.25, 0.5, 0.75, 1});
}

TYPED_TEST(KernelsElementwiseTest, BinaryBroadcastMatchesScalar) {
  using D = TypeParam;
  Tensor<D> a = Tensor<D>::random({2, 3, 4, 5}, 1);
  Tensor<D> b = Tensor<D>::random({3, 1, 5}, 2);
  Tensor<D> c = Tensor<D>::random({2, 1, 4, 1}, 3);
  for (BinaryKind k : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul,
                       BinaryKind::Div, BinaryKind::Max, BinaryKind::Min}) {
    Tensor<D> r1 = binary(k, a, b), r2 = binary(k, b, c);
    ASSERT_EQ(r1.shape, (Shape{2, 3, 4, 5}));
    ASSERT_EQ(r2.shape, (Shape{2, 3, 4, 5}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 4; ++l)
          for (int m = 0; m < 5; ++m) {
            int64_t o = ((i * 3 + j) * 4 + l) * 5 + m;
            auto av = a.data[o], bv = b.data[j * 5 + m], cv = c.data[i * 4 + l];
            ASSERT_EQ(r1.data[o], binaryScalar<D>(k, av, bv));
            ASSERT_EQ(r2.data[o], binaryScalar<D>(k, bv, cv));
          }
  }
}

//===----------------------------------------------------------------------===//
// Matmul and conv
//===----------------------------------------------------------------------===//

/// Naive [..., M, K] x [..., K, N] with broadcast batch dimensions.
template <class D>
Tensor<D> naiveMatmul(const Tensor<D> &a, const Tensor<D> &b) {
  int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1];
  int64_t n = b.shape[b.rank() - 1];
  Shape aBatch(a.shape.begin(), a.shape.end() - 2);
  Shape bBatch(b.shape.begin(), b.shape.end() - 2);
  auto broadcast = broadcastShapes(aBatch, bBatch);
  Shape batch(broadcast->begin(), broadcast->end());
  Shape outShape = batch;
  outShape.push_back(m);
  outShape.push_back(n);
  Tensor<D> out(outShape);
  Tensor<D> aIdx = broadcastTo(iota<D>(aBatch), batch);
  Tensor<D> bIdx = broadcastTo(iota<D>(bBatch), batch);
  for (int64_t bi = 0; bi < numElementsOf(batch); ++bi) {
    int64_t ai = static_cast<int64_t>(D::toDouble(aIdx.data[bi]));
    int64_t bj = static_cast<int64_t>(D::toDouble(bIdx.data[bi]));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        auto s = D::zero();
        for (int64_t p = 0; p < k; ++p)
          s = D::add(s, D::mul(a.data[(ai * m + i) * k + p],
                               b.data[(bj * k + p) * n + j]));
        out.data[(bi * m + i) * n + j] = s;
      }
  }
  return out;
}

TYPED_TEST(KernelsLinalgTest, MatmulHand) {
  using D = TypeParam;
  Tensor<D> a = make<D>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor<D> b = make<D>({3, 2}, {7, 8, 9, 10, 11, 12});
  expectExact(matmul(a, b), {2, 2}, {58, 64, 139, 154});
  Tensor<D> c = make<D>({2, 2}, {1, -1, 0.5, 2});
  Tensor<D> d = make<D>({2, 2, 1}, {2, 4, -1, 1});
  expectExact(matmul(c, d), {2, 2, 1}, {-2, 9, -2, 1.5});
}

TYPED_TEST(KernelsLinalgTest, MatmulBroadcastBatch) {
  using D = TypeParam;
  Tensor<D> a = Tensor<D>::random({2, 1, 5, 3}, 11);
  Tensor<D> b = Tensor<D>::random({3, 3, 4}, 12);
  Tensor<D> r = matmul(a, b);
  EXPECT_EQ(r.shape, (Shape{2, 3, 5, 4}));
  expectClose(r, naiveMatmul(a, b), 4);
  Tensor<D> c = Tensor<D>::random({6, 7}, 13);
  Tensor<D> e = Tensor<D>::random({2, 2, 7, 9}, 14);
  expectClose(matmul(c, e), naiveMatmul(c, e), 4);
}

TYPED_TEST(KernelsLinalgTest, MatmulLargeAndBlocked) {
  using D = TypeParam;
  // K > KC, M > MC, ragged tiles; large enough to be split over threads.
  Tensor<D> a = Tensor<D>::random({130, 300}, 21);
  Tensor<D> b = Tensor<D>::random({300, 67}, 22);
  expectClose(matmul(a, b), naiveMatmul(a, b), 40);
  // N > NC.
  Tensor<D> c = Tensor<D>::random({5, 3}, 23);
  Tensor<D> d = Tensor<D>::random({3, 2100}, 24);
  expectClose(matmul(c, d), naiveMatmul(c, d), 4);
  // Many small matrices (split over threads by batch).
  Tensor<D> e = Tensor<D>::random({300, 16, 16}, 25);
  Tensor<D> f = Tensor<D>::random({16, 17}, 26);
  expectClose(matmul(e, f), naiveMatmul(e, f), 8);
  // K == 0 gives zeros.
  Tensor<D> z = matmul(Tensor<D>({2, 0}), Tensor<D>({0, 3}));
  expectExact(z, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TYPED_TEST(KernelsLinalgTest, MatmulThreadCounts) {
  using D = TypeParam;
  Tensor<D> a = Tensor<D>::random({100, 160}, 31);
  Tensor<D> b = Tensor<D>::random({160, 200}, 32);
  Tensor<D> ref = naiveMatmul(a, b);
  std::vector<Tensor<D>> results;
  for (unsigned threads : {1u, 3u}) {
    setNumThreads(threads);
    EXPECT_EQ(getNumThreads(), threads);
    results.push_back(matmul(a, b));
    expectClose(results.back(), ref, 20);
  }
  // Each element is summed in the same order whatever the thread count.
  EXPECT_EQ(results[0].data, results[1].data);
  setNumThreads(0);
  EXPECT_GE(getNumThreads(), 1u);
}

/// The activation of \p p applied to one value, case by case.
template <class D>
typename D::T naiveActivation(const ConvParams &p, typename D::T s) {
  UnaryParams ab{p.alpha, p.beta};
  switch (p.activation) {
  case Activation::None:
    return s;
  case Activation::Relu:
    return unaryScalar<D>(UnaryKind::Relu, s);
  case Activation::Sigmoid:
    return unaryScalar<D>(UnaryKind::Sigmoid, s);
  case Activation::Tanh:
    return unaryScalar<D>(UnaryKind::Tanh, s);
  case Activation::GeluErf:
    return unaryScalar<D>(UnaryKind::Gelu, s);
  case Activation::GeluTanh:
    return unaryScalar<D>(UnaryKind::GeluTanh, s);
  case Activation::HardSwish:
    return unaryScalar<D>(UnaryKind::HardSwish, s);
  case Activation::Swish:
    return D::mul(s, unaryScalar<D>(UnaryKind::Sigmoid, s));
  case Activation::Clip:
    return unaryScalar<D>(UnaryKind::Clip, s, ab);
  case Activation::HardSigmoid:
    return unaryScalar<D>(UnaryKind::HardSigmoid, s, ab);
  case Activation::LeakyRelu:
    return D::less(s, D::zero()) ? D::mul(D::fromDouble(p.alpha), s) : s;
  }
  return s;
}

/// Naive direct convolution (ONNX Conv semantics) followed by the bias and
/// activation.
template <class D>
Tensor<D> naiveConv(const Tensor<D> &x, const Tensor<D> &w,
                    const Tensor<D> *bias, const ConvParams &p) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t og = o / p.groups;
  int64_t oh = (h + p.pads[0] + p.pads[2] - p.dilations[0] * (kh - 1) - 1) /
                   p.strides[0] +
               1;
  int64_t ow = (wd + p.pads[1] + p.pads[3] - p.dilations[1] * (kw - 1) - 1) /
                   p.strides[1] +
               1;
  Tensor<D> out({n, o, oh, ow});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc) {
      int64_t g = oc / og;
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          auto s = D::zero();
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t y = r * p.strides[0] - p.pads[0] + i * p.dilations[0];
                int64_t xx = q * p.strides[1] - p.pads[1] + j * p.dilations[1];
                if (y < 0 || y >= h || xx < 0 || xx >= wd)
                  continue;
                s = D::add(
                    s, D::mul(x.data[((b * c + g * cg + ic) * h + y) * wd + xx],
                              w.data[((oc * cg + ic) * kh + i) * kw + j]));
              }
          if (bias)
            s = D::add(s, bias->data[oc]);
          out.data[((b * o + oc) * oh + r) * ow + q] = naiveActivation<D>(p, s);
        }
    }
  return out;
}

TYPED_TEST(KernelsLinalgTest, Conv2dHand) {
  using D = TypeParam;
  Tensor<D> x = make<D>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor<D> w = make<D>({1, 1, 2, 2}, {1, 0, 0, -1});
  expectExact(conv(x, w, nullptr, {}), {1, 1, 2, 2}, {-4, -4, -4, -4});
  Tensor<D> bias = make<D>({1}, {1});
  expectExact(conv(x, w, &bias, {}), {1, 1, 2, 2}, {-3, -3, -3, -3});
  ConvParams relu;
  relu.activation = Activation::Relu;
  expectExact(conv(x, w, &bias, relu), {1, 1, 2, 2}, {0, 0, 0, 0});
  // Pad 1, stride 2 (worked by hand on the zero-padded 5x5 input).
  ConvParams p;
  p.pads = {1, 1, 1, 1};
  p.strides = {2, 2};
  Tensor<D> w2 = make<D>({1, 1, 2, 2}, {1, 2, 3, 4});
  expectExact(conv(x, w2, nullptr, p), {1, 1, 2, 2}, {4, 18, 36, 77});
  // Two groups of one channel each, dilation 2: out[g] = w[g] * x[g] corners.
  Tensor<D> x2 = make<D>({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, //
                                        -1, 0, 1, 0, 0, 0, 1, 0, -1});
  Tensor<D> w3 = make<D>({2, 1, 2, 2}, {1, 1, 1, 1, 1, 2, 4, 8});
  ConvParams g;
  g.groups = 2;
  g.dilations = {2, 2};
  expectExact(conv(x2, w3, nullptr, g), {1, 2, 1, 1}, {20, -1 + 2 + 4 - 8});
}

TYPED_TEST(KernelsLinalgTest, Conv2dMatchesNaive) {
  using D = TypeParam;
  struct Case {
    Shape x, w;
    ConvParams p;
    bool bias;
  };
  auto params = [](std::array<int64_t, 2> s, std::array<int64_t, 4> pads,
                   std::array<int64_t, 2> d, int64_t groups, Activation act,
                   double alpha = 0, double beta = 0) {
    ConvParams p;
    p.alpha = alpha;
    p.beta = beta;
    p.strides = s;
    p.pads = pads;
    p.dilations = d;
    p.groups = groups;
    p.activation = act;
    return p;
  };
  std::vector<Case> cases = {
      // Grouped, asymmetric padding, bias, relu.
      {{2, 4, 7, 6},
       {6, 2, 3, 3},
       params({1, 1}, {1, 0, 2, 1}, {1, 1}, 2, Activation::Relu),
       true},
      // Depthwise with channel multiplier 2, stride and dilation 2.
      {{1, 4, 9, 8},
       {8, 1, 3, 3},
       params({2, 2}, {2, 2, 2, 2}, {2, 2}, 4, Activation::None),
       false},
      // 1x1 stride 1 (direct path), sigmoid.
      {{2, 16, 5, 5},
       {8, 16, 1, 1},
       params({1, 1}, {0, 0, 0, 0}, {1, 1}, 1, Activation::Sigmoid),
       true},
      // 1x1 stride 2.
      {{1, 8, 7, 7},
       {4, 8, 1, 1},
       params({2, 2}, {0, 0, 0, 0}, {1, 1}, 1, Activation::None),
       true},
      // Non-square kernel, mixed strides/dilations, padding on two sides.
      {{1, 3, 8, 9},
       {5, 3, 2, 3},
       params({2, 1}, {0, 3, 1, 0}, {1, 2}, 1, Activation::Tanh),
       true},
      // Large enough for a threaded GEMM.
      {{1, 32, 20, 20},
       {64, 32, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::Tanh),
       true},
      // Large enough for a threaded im2col too.
      {{1, 32, 64, 64},
       {4, 32, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::None),
       true},
      // Every other activation of Activations.def (tg.conv's attribute
      // names a subset; ConvParams takes any).
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::GeluErf),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::GeluTanh),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::HardSwish),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::Swish),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::Clip, -0.5, 0.5),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::HardSigmoid, 0.25,
              0.5),
       true},
      {{1, 4, 6, 6},
       {4, 4, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Activation::LeakyRelu, 0.25),
       true},
      // Many small groups, split over threads by group.
      {{2, 64, 48, 48},
       {64, 1, 3, 3},
       params({1, 1}, {1, 1, 1, 1}, {1, 1}, 64, Activation::Relu),
       false},
  };
  uint64_t seed = 100;
  for (const Case &c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "x " << c.x[1] << "x" << c.x[2] << "x" << c.x[3] << " w "
                 << c.w[0] << "x" << c.w[1] << "x" << c.w[2] << "x" << c.w[3]
                 << " groups " << c.p.groups);
    Tensor<D> x = Tensor<D>::random(c.x, seed++);
    Tensor<D> w = Tensor<D>::random(c.w, seed++);
    Tensor<D> b = Tensor<D>::random({c.w[0]}, seed++);
    const Tensor<D> *bias = c.bias ? &b : nullptr;
    Tensor<D> ref = naiveConv(x, w, bias, c.p);
    expectClose(conv(x, w, bias, c.p), ref, 30);
    // The threaded paths agree with any thread count.
    setNumThreads(3);
    expectClose(conv(x, w, bias, c.p), ref, 30);
    setNumThreads(0);
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsPoolTest, MaxPool) {
  using D = TypeParam;
  Tensor<D> x = make<D>({1, 1, 4, 4}, {1, -2, 3, 0,   //
                                       5, 6, -7, 8,   //
                                       -9, 10, 11, 2, //
                                       0, 1, -3, -4});
  PoolParams p;
  p.kernel = {2, 2};
  p.strides = {2, 2};
  expectExact(maxPool(x, p), {1, 1, 2, 2}, {6, 8, 10, 11});
  // Padding never wins, even over negative values.
  Tensor<D> neg = make<D>({1, 1, 2, 2}, {-5, -6, -7, -8});
  PoolParams q;
  q.kernel = {3, 3};
  q.strides = {2, 2};
  q.pads = {1, 1, 1, 1};
  expectExact(maxPool(neg, q), {1, 1, 1, 1}, {-5});
  PoolParams r;
  r.kernel = {2, 2};
  r.pads = {1, 1, 0, 0};
  expectExact(maxPool(neg, r), {1, 1, 2, 2}, {-5, -5, -5, -5});
}

TYPED_TEST(KernelsPoolTest, AvgPool) {
  using D = TypeParam;
  Tensor<D> x = make<D>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  PoolParams p;
  p.kernel = {2, 2};
  expectExact(avgPool(x, p), {1, 1, 2, 2}, {3, 4, 6, 7});
  PoolParams q;
  q.kernel = {2, 2};
  q.strides = {2, 2};
  q.pads = {1, 1, 1, 1};
  // Windows: {1}, {2,3}, {4,7}, {5,6,8,9}.
  expectExact(avgPool(x, q), {1, 1, 2, 2}, {1, 2.5, 5.5, 7});
  q.countIncludePad = true;
  expectExact(avgPool(x, q), {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
  // Two channels, batch 2: planes are independent.
  Tensor<D> y = make<D>({2, 2, 1, 2}, {1, 3, -2, 2, 4, 4, 0, -8});
  PoolParams r;
  r.kernel = {1, 2};
  expectExact(avgPool(y, r), {2, 2, 1, 1}, {2, 0, 4, -4});
}

TYPED_TEST(KernelsPoolTest, GlobalAvgPool) {
  using D = TypeParam;
  Tensor<D> x = make<D>({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -2});
  expectExact(globalAvgPool(x), {1, 2, 1, 1}, {3, -2});
  Tensor<D> y = make<D>({2, 1, 1, 4}, {1, 2, 3, 4, 0, 0, 0, 1});
  expectExact(globalAvgPool(y), {2, 1, 1, 1}, {2.5, 0.25});
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsElementwiseTest, Cast) {
  using D = TypeParam;
  double inf = std::numeric_limits<double>::infinity();
  if constexpr (!D::isExact) {
    Tensor<D> h =
        make<D>({8}, {1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -11),
                      65504, 65520, 1e-8, 3e-8, -2.5, -70000});
    expectExact(cast(h, ElemKind::F16), {8},
                {1, 1 + std::ldexp(1.0, -9), 65504, inf, 0,
                 std::ldexp(1.0, -24), -2.5, -inf});
    Tensor<D> b = make<D>(
        {3}, {1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8), -3});
    expectExact(cast(b, ElemKind::BF16), {3}, {1, 1 + std::ldexp(1.0, -6), -3});
    Tensor<D> f = make<D>({2}, {1 + std::ldexp(1.0, -30), 0.1});
    expectExact(cast(f, ElemKind::F32), {2}, {1, double(0.1f)});
    expectExact(
        cast(f, ElemKind::F64), {2},
        {std::is_same_v<typename D::T, float> ? 1.0 : 1 + std::ldexp(1.0, -30),
         std::is_same_v<typename D::T, float> ? double(0.1f) : 0.1});
    Tensor<D> i = make<D>({4}, {-2.75, 2.75, -0.5, 3});
    expectExact(cast(i, ElemKind::I32), {4}, {-2, 2, 0, 3});
    expectExact(cast(i, ElemKind::I64), {4}, {-2, 2, 0, 3});
    Tensor<D> one = make<D>({4}, {0, -0.0, 2.5, -1});
    expectExact(cast(one, ElemKind::I1), {4}, {0, 0, 1, 1});
  } else {
    Tensor<D> x = make<D>({4}, {0, 0.5, -3, 12345});
    for (ElemKind k : {ElemKind::F64, ElemKind::F32, ElemKind::F16,
                       ElemKind::BF16, ElemKind::I64, ElemKind::I32})
      EXPECT_EQ(cast(x, k).data, x.data);
    expectExact(cast(x, ElemKind::I1), {4}, {0, 1, 1, 1});
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsMovementTest, Transpose) {
  using D = TypeParam;
  expectExact(transpose(make<D>({2, 3}, {1, 2, 3, 4, 5, 6}), {1, 0}), {3, 2},
              {1, 4, 2, 5, 3, 6});
  Tensor<D> x = iota<D>({2, 3, 4});
  Tensor<D> t = transpose(x, {2, 0, 1});
  std::vector<double> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        want.push_back((i * 3 + j) * 4 + k);
  expectExact(t, {4, 2, 3}, want);
  expectExact(transpose(x, {0, 1, 2}), {2, 3, 4}, x.toDoubles());
  Tensor<D> u = iota<D>({1, 3, 1, 2});
  expectExact(transpose(u, {3, 2, 1, 0}), {2, 1, 3, 1}, {0, 2, 4, 1, 3, 5});
}

TYPED_TEST(KernelsMovementTest, Reshape) {
  using D = TypeParam;
  Tensor<D> x = make<D>({2, 3}, {1, 2, 3, 4, 5, 6});
  expectExact(reshape(x, {3, 2}), {3, 2}, {1, 2, 3, 4, 5, 6});
  expectExact(reshape(x, {6}), {6}, {1, 2, 3, 4, 5, 6});
  expectExact(reshape(make<D>({1, 1}, {7}), {}), {}, {7});
}

TYPED_TEST(KernelsMovementTest, ConcatSplit) {
  using D = TypeParam;
  Tensor<D> a = make<D>({2, 1}, {1, 2});
  Tensor<D> b = make<D>({2, 2}, {3, 4, 5, 6});
  expectExact(concat<D>({&a, &b}, 1), {2, 3}, {1, 3, 4, 2, 5, 6});
  Tensor<D> c = make<D>({1, 2}, {7, 8});
  expectExact(concat<D>({&b, &c}, 0), {3, 2}, {3, 4, 5, 6, 7, 8});
  expectExact(concat<D>({&b, &b}, -1), {2, 4}, {3, 4, 3, 4, 5, 6, 5, 6});

  Tensor<D> x = iota<D>({2, 5});
  std::vector<Tensor<D>> parts = split(x, 1, {2, 3});
  ASSERT_EQ(parts.size(), 2u);
  expectExact(parts[0], {2, 2}, {0, 1, 5, 6});
  expectExact(parts[1], {2, 3}, {2, 3, 4, 7, 8, 9});
  std::vector<Tensor<D>> rows = split(x, 0, {1, 0, 1});
  ASSERT_EQ(rows.size(), 3u);
  expectExact(rows[0], {1, 5}, {0, 1, 2, 3, 4});
  EXPECT_EQ(rows[1].shape, (Shape{0, 5}));
  expectExact(rows[2], {1, 5}, {5, 6, 7, 8, 9});
  std::vector<const Tensor<D> *> ptrs = {&parts[0], &parts[1]};
  expectExact(concat<D>(ptrs, 1), {2, 5}, x.toDoubles());
}

TYPED_TEST(KernelsMovementTest, Slice) {
  using D = TypeParam;
  Tensor<D> x = iota<D>({4, 5});
  expectExact(slice(x, {1, 0}, {4, 5}, {2, 2}), {2, 3}, {5, 7, 9, 15, 17, 19});
  expectExact(slice(x, {0, 1}, {2, 3}, {1, 1}), {2, 2}, {1, 2, 6, 7});
  expectExact(slice(x, {3, 4}, {4, 5}, {1, 3}), {1, 1}, {19});
  EXPECT_EQ(slice(x, {2, 0}, {2, 5}, {1, 1}).shape, (Shape{0, 5}));
  Tensor<D> y = iota<D>({2, 3, 4});
  expectExact(slice(y, {0, 1, 1}, {2, 3, 4}, {1, 1, 2}), {2, 2, 2},
              {5, 7, 9, 11, 17, 19, 21, 23});
}

TYPED_TEST(KernelsMovementTest, Pad) {
  using D = TypeParam;
  Tensor<D> x = make<D>({2, 2}, {1, 2, 3, 4});
  expectExact(pad(x, {1, 0}, {0, 2}, -1.5), {3, 4},
              {-1.5, -1.5, -1.5, -1.5, 1, 2, -1.5, -1.5, 3, 4, -1.5, -1.5});
  expectExact(pad(x, {0, 0}, {0, 0}, 9), {2, 2}, {1, 2, 3, 4});
  expectExact(pad(make<D>({}, {5}), {}, {}, 0), {}, {5});
}

TYPED_TEST(KernelsMovementTest, Enlarge) {
  using D = TypeParam;
  expectExact(enlarge(make<D>({1, 1, 1, 1}, {7}), 3, 3), {1, 1, 3, 3},
              {0, 0, 0, 0, 7, 0, 0, 0, 0});
  Tensor<D> w = make<D>({2, 1, 3, 1}, {1, 2, 3, 4, 5, 6});
  expectExact(enlarge(w, 3, 3), {2, 1, 3, 3},
              {0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 5, 0, 0, 6, 0});
  expectExact(enlarge(w, 5, 1), {2, 1, 5, 1}, {0, 1, 2, 3, 0, 0, 4, 5, 6, 0});
}

TYPED_TEST(KernelsMovementTest, BroadcastTo) {
  using D = TypeParam;
  Tensor<D> x = make<D>({3, 1}, {1, 2, 3});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        want.push_back(j + 1);
  expectExact(broadcastTo(x, {2, 3, 4}), {2, 3, 4}, want);
  expectExact(broadcastTo(make<D>({}, {-2}), {2, 2}), {2, 2}, {-2, -2, -2, -2});
  expectExact(broadcastTo(make<D>({1, 2}, {1, 2}), {2, 2}), {2, 2},
              {1, 2, 1, 2});
  using Dims = llvm::SmallVector<int64_t>;
  EXPECT_EQ(broadcastShapes({2, 1, 3}, {4, 1}), (Dims{2, 4, 3}));
  EXPECT_EQ(broadcastShapes({}, {5}), (Dims{5}));
  EXPECT_EQ(broadcastShapes({2, 3}, {4, 3}), std::nullopt);
  EXPECT_EQ(broadcastStrides({3, 1}, {2, 3, 4}), (Dims{0, 1, 0}));
}

TYPED_TEST(KernelsMovementTest, Gather) {
  using D = TypeParam;
  Tensor<D> data = make<D>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto r = gather(data, make<D>({3}, {2, -1, 0}), 0);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectExact(*r, {3, 2}, {5, 6, 5, 6, 1, 2});
  auto c = gather(data, make<D>({2, 1}, {1, -2}), 1);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  expectExact(*c, {3, 2, 1}, {2, 1, 4, 3, 6, 5});
  auto s = gather(data, make<D>({}, {1}), 0);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  expectExact(*s, {2}, {3, 4});

  auto bad = gather(data, make<D>({2}, {0, 3}), 0);
  ASSERT_FALSE(bool(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_NE(msg.find("index 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3)"), std::string::npos) << msg;
  auto neg = gather(data, make<D>({1}, {-3}), 1);
  ASSERT_FALSE(bool(neg));
  msg = llvm::toString(neg.takeError());
  EXPECT_NE(msg.find("index -3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-2, 2)"), std::string::npos) << msg;
  if constexpr (!D::isExact) {
    auto frac = gather(data, make<D>({1}, {0.5}), 0);
    ASSERT_FALSE(bool(frac));
    llvm::consumeError(frac.takeError());
  }
}

TYPED_TEST(KernelsMovementTest, Resize) {
  using D = TypeParam;
  Tensor<D> x = make<D>({1, 1, 2, 2}, {1, 2, 3, 4});
  // Nearest, half_pixel, round_prefer_floor (ONNX's defaults): moves
  // elements only.
  ResizeParams nearest;
  nearest.sizes = {1, 1, 4, 6};
  expectExact(resize(x, nearest), {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
               3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  // Bilinear, half_pixel: weights 1/4 and 3/4, exact in every domain.
  ResizeParams linear;
  linear.sizes = {1, 1, 4, 4};
  linear.mode = ResizeMode::Linear;
  expectExact(resize(x, linear), {1, 1, 4, 4},
              {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5,
               3, 3.25, 3.75, 4});
  // Asymmetric + floor (ONNX Upsample) with an explicit scale.
  ResizeParams floor;
  floor.sizes = {1, 1, 2, 4};
  floor.scales = {1, 1, 1, 2};
  floor.coordinateMode = ResizeCoordinateMode::Asymmetric;
  floor.nearestMode = ResizeNearestMode::Floor;
  expectExact(resize(x, floor), {1, 1, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
  // Identity sizes leave the tensor unchanged.
  ResizeParams same;
  same.sizes = {1, 1, 2, 2};
  same.mode = ResizeMode::Cubic;
  expectExact(resize(x, same), {1, 1, 2, 2}, {1, 2, 3, 4});
  if constexpr (!D::isExact) {
    // Cubic, A = -0.75 (test_resize_upsample_scales_cubic, first row).
    Tensor<D> y = iota<D>({1, 1, 4, 4});
    ResizeParams cubic;
    cubic.sizes = {1, 1, 8, 8};
    cubic.mode = ResizeMode::Cubic;
    std::vector<double> row = resize(y, cubic).toDoubles();
    std::vector<double> want = {-0.52734375, -0.23046875, 0.24609375, 0.875,
                                1.28125,     1.91015625,  2.38671875, 2.68359375};
    for (size_t i = 0; i < 8; ++i)
      EXPECT_NEAR(row[i], want[i], 1e-5) << "element " << i;
  }
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsReduceTest, Reduce) {
  using D = TypeParam;
  Tensor<D> x = make<D>({2, 3}, {1, 2, 3, 4, 5, -6});
  expectExact(reduce(ReduceKind::Sum, x, {0}, false), {3}, {5, 7, -3});
  expectExact(reduce(ReduceKind::Sum, x, {1}, true), {2, 1}, {6, 3});
  expectExact(reduce(ReduceKind::Mean, x, {0}, false), {3}, {2.5, 3.5, -1.5});
  expectExact(reduce(ReduceKind::Mean, x, {0, 1}, true), {1, 1}, {1.5});
  expectExact(reduce(ReduceKind::Max, x, {0}, true), {1, 3}, {4, 5, 3});
  expectExact(reduce(ReduceKind::Max, x, {1}, false), {2}, {3, 5});
  expectExact(reduce(ReduceKind::Max, x, {0, 1}, false), {}, {5});
  expectExact(reduce(ReduceKind::Max, make<D>({2}, {-3, -2}), {0}, false), {},
              {-2});
  expectExact(reduce(ReduceKind::Sum, x, {}, false), {2, 3},
              {1, 2, 3, 4, 5, -6});
}

TYPED_TEST(KernelsReduceTest, ReduceMatchesNaive) {
  using D = TypeParam;
  Tensor<D> x = Tensor<D>::random({3, 4, 5, 6}, 77);
  for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max}) {
    Tensor<D> r = reduce(kind, x, {1, 3}, true);
    ASSERT_EQ(r.shape, (Shape{3, 1, 5, 1}));
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 5; ++c) {
        auto acc = kind == ReduceKind::Sum ? D::zero() : D::lowest();
        for (int b = 0; b < 4; ++b)
          for (int d = 0; d < 6; ++d) {
            auto v = x.data[((a * 4 + b) * 5 + c) * 6 + d];
            acc = kind == ReduceKind::Sum ? D::add(acc, v) : D::max(acc, v);
          }
        if constexpr (D::isExact) {
          EXPECT_EQ(r.data[a * 5 + c], acc);
        } else {
          EXPECT_NEAR(r.data[a * 5 + c], acc, 1e-5);
        }
      }
  }
}

TYPED_TEST(KernelsReduceTest, Softmax) {
  using D = TypeParam;
  Tensor<D> x = make<D>({2, 3}, {1, 2, 3, -1, 0, 1});
  Tensor<D> y = softmax(x, 1);
  Tensor<D> t = make<D>({3, 2}, {1, -1, 2, 0, 3, 1});
  Tensor<D> z = softmax(t, 0);
  if constexpr (!D::isExact) {
    std::vector<double> row = {0.09003057317038046, 0.24472847105479767,
                               0.6652409557748219};
    expectNear(y, {2, 3}, {row[0], row[1], row[2], row[0], row[1], row[2]});
    expectNear(z, {3, 2}, {row[0], row[0], row[1], row[1], row[2], row[2]});
    expectNear(softmax(x, -1), {2, 3},
               {row[0], row[1], row[2], row[0], row[1], row[2]});
  } else {
    // exp(x - max) / sum: with uninterpreted exp, rows with the same offsets
    // from their max agree, and each row sums to exactly one.
    auto e0 = D::exp(D::fromInt(-2)), e1 = D::exp(D::fromInt(-1)),
         e2 = D::exp(D::zero());
    auto s = D::add(D::add(e0, e1), e2);
    Tensor<D> want({2, 3}, {D::div(e0, s), D::div(e1, s), D::div(e2, s),
                            D::div(e0, s), D::div(e1, s), D::div(e2, s)});
    expectClose(y, want);
    EXPECT_EQ(z.data, transpose(want, {1, 0}).data);
    EXPECT_EQ(D::add(D::add(y.data[0], y.data[1]), y.data[2]), D::one());
  }
}

TYPED_TEST(KernelsReduceTest, LayerNorm) {
  using D = TypeParam;
  // Row 0: mean 3, deviations -2 -1 0 3, var 3.5; + eps 0.5 = 4.
  // Row 1: constant, var 0: the result is the bias.
  Tensor<D> x = make<D>({2, 4}, {1, 2, 3, 6, -1, -1, -1, -1});
  Tensor<D> scale = make<D>({4}, {1, 2, 0.5, -1});
  Tensor<D> bias = make<D>({4}, {0, 1, 0, 0.25});
  Tensor<D> y = layerNorm(x, scale, bias, 1, 0.5);
  if constexpr (!D::isExact) {
    expectExact(y, {2, 4}, {-1, 0, 0, -1.25, 0, 1, 0, 0.25});
  } else {
    auto inv = D::div(D::one(), D::sqrt(D::fromInt(4)));
    std::vector<double> dev = {-2, -1, 0, 3};
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y.data[i], D::add(D::mul(D::mul(D::fromDouble(dev[i]), inv),
                                         scale.data[i]),
                                  bias.data[i]));
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y.data[4 + i], bias.data[i]);
  }
  // Normalising over the last two dimensions of a rank-3 tensor.
  Tensor<D> x3 = make<D>({1, 2, 2}, {1, 2, 3, 6});
  Tensor<D> s3 = make<D>({2, 2}, {1, 2, 0.5, -1});
  Tensor<D> b3 = make<D>({2, 2}, {0, 1, 0, 0.25});
  Tensor<D> y3 = layerNorm(x3, s3, b3, -2, 0.5);
  EXPECT_EQ(y3.shape, (Shape{1, 2, 2}));
  EXPECT_EQ(y3.data,
            std::vector<typename D::T>(y.data.begin(), y.data.begin() + 4));
}

TYPED_TEST(KernelsReduceTest, BatchNorm) {
  using D = TypeParam;
  // var + eps is 4 and 16: sqrt is exact in the float domains only.
  Tensor<D> x = make<D>({1, 2, 1, 2}, {3, 5, 0, 4});
  Tensor<D> scale = make<D>({2}, {2, 0.5});
  Tensor<D> bias = make<D>({2}, {1, -1});
  Tensor<D> mean = make<D>({2}, {1, 2});
  Tensor<D> var = make<D>({2}, {3.75, 15.75});
  Tensor<D> y = batchNorm(x, scale, bias, mean, var, 0.25);
  if constexpr (!D::isExact) {
    expectExact(y, {1, 2, 1, 2}, {3, 5, -1.25, -0.75});
  } else {
    auto s0 = D::sqrt(D::fromInt(4)), s1 = D::sqrt(D::fromInt(16));
    auto f = [&](double v, double m, uint64_t s, double sc, double b) {
      return D::add(
          D::mul(D::div(D::sub(D::fromDouble(v), D::fromDouble(m)), s),
                 D::fromDouble(sc)),
          D::fromDouble(b));
    };
    EXPECT_EQ(y.shape, (Shape{1, 2, 1, 2}));
    EXPECT_EQ(y.data, (std::vector<uint64_t>{
                          f(3, 1, s0, 2, 1), f(5, 1, s0, 2, 1),
                          f(0, 2, s1, 0.5, -1), f(4, 2, s1, 0.5, -1)}));
    EXPECT_NE(y.data[0], D::fromInt(3));
  }
  // Batch of two, rank 3 (N, C, L).
  Tensor<D> x2 = make<D>({2, 2, 1}, {3, 0, 5, 4});
  Tensor<D> y2 = batchNorm(x2, scale, bias, mean, var, 0.25);
  EXPECT_EQ(y2.data, (std::vector<typename D::T>{y.data[0], y.data[2],
                                                 y.data[1], y.data[3]}));
}

} // namespace
