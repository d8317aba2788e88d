//===- AxiomTest.cpp - Axioms, their parser and their bounded check -------===//
//
// Part of Loom. The axiom language parses; the symbolic domain evaluates the
// interpreter's kernels; the bounded check proves true axioms and refutes a
// planted wrong one with a counterexample.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/AxiomChecker.h"
#include "loom/Superopt/Axioms.h"
#include "loom/Superopt/Z3Domain.h"

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Interpreter/Kernels.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace loom;
using namespace loom::superopt;

namespace {

class AxiomTest : public ::testing::Test {
protected:
  AxiomTest() { universe = Universe::createForInputs(&context, {}, 1); }

  /// Checks the named built-in axioms.
  std::vector<AxiomCheckResult> check(std::vector<std::string> names) {
    const std::vector<Axiom> &all = builtinAxioms();
    std::vector<unsigned> ids;
    for (unsigned i = 0; i < all.size(); ++i)
      for (const std::string &n : names)
        if (all[i].name == n)
          ids.push_back(i);
    EXPECT_EQ(ids.size(), names.size()) << "unknown axiom name";
    return checkAxioms(all, ids, *universe, AxiomCheckOptions());
  }

  /// Parses `text` as a planted axiom and checks it alone.
  AxiomCheckResult checkPlanted(llvm::StringRef text) {
    auto planted = parseAxiom(text, "planted");
    EXPECT_TRUE(static_cast<bool>(planted))
        << llvm::toString(planted.takeError());
    if (!planted)
      return AxiomCheckResult();
    std::vector<Axiom> axioms;
    axioms.push_back(std::move(*planted));
    auto results = checkAxioms(axioms, {0}, *universe, AxiomCheckOptions());
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? AxiomCheckResult() : results[0];
  }

  mlir::MLIRContext context;
  std::unique_ptr<Universe> universe;
};

TEST_F(AxiomTest, BuiltinAxiomsParse) {
  const std::vector<Axiom> &all = builtinAxioms();
  EXPECT_GT(all.size(), 40u);
  for (const Axiom &a : all) {
    EXPECT_TRUE(a.lhs && a.rhs) << a.name;
    EXPECT_FALSE(a.doc.empty()) << a.name;
  }
}

TEST_F(AxiomTest, ParseErrorsAreReported) {
  auto bad = parseAxiom("oops: frobnicate(x) = x where x:[a]", "");
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_NE(msg.find("frobnicate"), std::string::npos) << msg;
  auto noWhere = parseAxiom("oops: relu(x) = x", "");
  ASSERT_FALSE(static_cast<bool>(noWhere));
  llvm::consumeError(noWhere.takeError());
}

TEST_F(AxiomTest, SymbolicDomainIsExact) {
  z3::context ctx;
  Z3Domain::Scope scope(ctx);
  EXPECT_EQ(Z3Domain::toDouble(Z3Domain::fromDouble(0.75)), 0.75);
  Z3Domain::T third = Z3Domain::div(Z3Domain::one(), Z3Domain::fromInt(3));
  Z3Domain::T one = Z3Domain::mul(third, Z3Domain::fromInt(3));
  // Products of numerals are terms until simplified (as the checker does);
  // toDouble reads numerals only.
  EXPECT_EQ(Z3Domain::toDouble(Z3Domain::T(one.e.simplify())), 1.0);
  // max absorbs the symbol for -infinity.
  Z3Domain::T x = ctx.real_const("x");
  EXPECT_TRUE(z3::eq(Z3Domain::max(Z3Domain::lowest(), x).e, x.e));
}

TEST_F(AxiomTest, KernelsRunSymbolically) {
  z3::context ctx;
  Z3Domain::Scope scope(ctx);
  interp::Tensor<Z3Domain> a({2, 2}), b({2, 2});
  for (int i = 0; i < 4; ++i) {
    a.data[i] = ctx.real_const(("a" + std::to_string(i)).c_str());
    b.data[i] = ctx.real_const(("b" + std::to_string(i)).c_str());
  }
  interp::Tensor<Z3Domain> c = interp::matmul<Z3Domain>(a, b);
  z3::solver s(ctx);
  s.add(c.data[1].e != a.data[0].e * b.data[1].e + a.data[1].e * b.data[3].e);
  EXPECT_EQ(s.check(), z3::unsat);
}

TEST_F(AxiomTest, LinearAlgebraAxiomsHold) {
  for (const AxiomCheckResult &r :
       check({"matmul-assoc", "matmul-concat-inner", "transpose-matmul",
              "split-concat1-first", "concat-interchange"})) {
    EXPECT_TRUE(r.proved) << r.name << ": " << r.failure;
    EXPECT_GT(r.instances, 0u) << r.name;
  }
}

TEST_F(AxiomTest, ConvolutionAxiomsHold) {
  for (const AxiomCheckResult &r :
       check({"conv-concat-filters", "conv-groups", "conv-pool"}))
    EXPECT_TRUE(r.proved) << r.name << ": " << r.failure;
}

TEST_F(AxiomTest, BatchNormFoldingAxiomsHold) {
  for (const AxiomCheckResult &r : check({"batchnorm-affine", "conv-affine"}))
    EXPECT_TRUE(r.proved) << r.name << ": " << r.failure;
}

TEST_F(AxiomTest, WrongAxiomIsRefutedWithACounterexample) {
  // Planted: relu is not additive.
  AxiomCheckResult r = checkPlanted(
      "relu-add: relu(add(x, y)) = add(relu(x), relu(y)) where x:S y:S");
  EXPECT_FALSE(r.proved);
  EXPECT_NE(r.failure.find("counterexample"), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("but rhs"), std::string::npos) << r.failure;
}

TEST_F(AxiomTest, SubtlyWrongConvolutionAxiomIsRefuted) {
  // A claim that looks like the true pooling axioms: a 3x3 convolution
  // commuting with 3x3 max pooling. It fails (max is not linear), and the
  // check finds a counterexample on a small image.
  AxiomCheckResult r = checkPlanted(
      "conv-maxpool: maxpool{kernel=[3,3]}(conv(x, f)) = "
      "conv(maxpool{kernel=[3,3]}(x), f) where x:[n,c,h,w] f:[o,c,3,3] "
      "with h in {2}");
  EXPECT_FALSE(r.proved);
  EXPECT_NE(r.failure.find("counterexample"), std::string::npos) << r.failure;
}

} // namespace
