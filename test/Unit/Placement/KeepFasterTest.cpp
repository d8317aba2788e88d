//===- KeepFasterTest.cpp - The end-to-end choice between model versions --===//
//
// Part of Loom. placement::compileKeepFaster on a small model: a version
// whose graph is the baseline's is neither compiled nor timed; a version
// whose outputs differ is compiled and timed but never kept; the runs are
// at least kMinTurnRounds; the timing budget is a fraction of the baseline's
// compile time, within its bounds.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Placement/KeepFaster.h"
#include "loom/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace loom;

namespace {

constexpr const char *kModel = R"mlir(
func.func @main(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %m = tg.matmul %x, %y : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %r = tg.relu %m : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
)mlir";

TEST(KeepFasterTest, TurnBudgetIsAFractionOfTheCompile) {
  EXPECT_DOUBLE_EQ(placement::turnSeconds(0.0), placement::kMinTurnSeconds);
  EXPECT_DOUBLE_EQ(placement::turnSeconds(0.6), 0.3);
  EXPECT_DOUBLE_EQ(placement::turnSeconds(30.0), placement::kMaxTurnSeconds);
}

/// \p n rounds of a baseline at 1 ms with a spike of 50 ms every seventh
/// round (a loaded machine), and a version at \p ratio of it in every
/// round but those in \p against, where it is 1.2 times it.
static std::vector<std::vector<double>>
rounds(size_t n, double ratio, std::vector<size_t> against = {}) {
  std::vector<double> base, version;
  for (size_t r = 0; r < n; ++r) {
    double b = r % 7 == 3 ? 50e-3 : 1e-3;
    base.push_back(b);
    version.push_back((llvm::is_contained(against, r) ? 1.2 : ratio) * b);
  }
  return {base, version};
}

TEST(KeepFasterTest, RunsInTurnStopWhenASignTestDecides) {
  using placement::TurnVerdict;
  auto verdict = [](const std::vector<std::vector<double>> &t) {
    return placement::turnVerdict(t[0], t[1]);
  };
  // Ten rounds all one way decide, nine do not (2^-9 > 1e-3), whatever the
  // spikes: each is one round.
  EXPECT_EQ(verdict(rounds(9, 0.8)), TurnVerdict::Undecided);
  EXPECT_EQ(verdict(rounds(10, 0.8)), TurnVerdict::Faster);
  EXPECT_EQ(verdict(rounds(10, 1.0)), TurnVerdict::NotFaster);
  EXPECT_EQ(verdict(rounds(10, 1.3)), TurnVerdict::NotFaster);
  // A gain under the 5% margin is not one.
  EXPECT_EQ(verdict(rounds(10, 0.97)), TurnVerdict::NotFaster);
  // One round against: ten rounds are not enough, fourteen are
  // (P(X >= 13 of 14) = 15 / 2^14 < 1e-3).
  EXPECT_EQ(verdict(rounds(10, 0.8, {4})), TurnVerdict::Undecided);
  EXPECT_EQ(verdict(rounds(14, 0.8, {4})), TurnVerdict::Faster);
  // Half and half never decides (the budget does); nor do fewer rounds
  // than kMinTurnRounds, even all one way.
  std::vector<size_t> odd;
  for (size_t r = 1; r < 4000; r += 2)
    odd.push_back(r);
  EXPECT_EQ(verdict(rounds(4000, 0.8, odd)), TurnVerdict::Undecided);
  EXPECT_EQ(verdict(rounds(placement::kMinTurnRounds - 1, 0.5)),
            TurnVerdict::Undecided);
  // Many rounds (the normal approximation): 60% of 1000 decide.
  std::vector<size_t> twoInFive;
  for (size_t r = 0; r < 1000; ++r)
    if (r % 5 < 2)
      twoInFive.push_back(r);
  EXPECT_EQ(verdict(rounds(1000, 0.8, twoInFive)), TurnVerdict::Faster);

  // Several versions: all decided, at most one faster.
  std::vector<std::vector<double>> three = rounds(10, 0.8);
  three.push_back(rounds(10, 1.0)[1]);
  EXPECT_TRUE(placement::turnsDecided(three));
  three.back() = rounds(10, 0.7)[1];
  EXPECT_FALSE(placement::turnsDecided(three)); // which of the two: budget
  three.back() = rounds(10, 0.8, {2, 5})[1];
  EXPECT_FALSE(placement::turnsDecided(three)); // undecided
  three.back().resize(4); // it stopped running: failed, decided
  EXPECT_TRUE(placement::turnsDecided(three));
  EXPECT_TRUE(placement::turnsDecided({{}, {}})); // the baseline failed
}

TEST(KeepFasterTest, SameGraphIsNotCompiledAndWrongOutputsAreNotKept) {
  static bool registered = [] {
    registerAllPasses();
    compiler::registerCompilerPasses();
    return true;
  }();
  (void)registered;
  MLIRContext context;
  context.loadDialect<tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> model = parseSourceString<ModuleOp>(kModel, &context);
  OwningOpRef<ModuleOp> same = parseSourceString<ModuleOp>(kModel, &context);
  // Not the same function: the relu is a sigmoid.
  std::string otherText = kModel;
  otherText.replace(otherText.find("tg.relu"), 7, "tg.sigmoid");
  OwningOpRef<ModuleOp> other =
      parseSourceString<ModuleOp>(otherText, &context);
  ASSERT_TRUE(model && same && other);

  compiler::CompileOptions compile;
  auto target = target::TargetRegistry::builtin().create("cpu");
  ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
  compile.target = std::move(*target);
  SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("keep-faster", dir));
  std::string out = (dir + "/model.so").str();
  placement::KeepFasterOptions options;
  options.threads = 1;
  std::vector<placement::ModelVersion> versions = {
      {"as written", *model}, {"same", *same}, {"other", *other}};
  auto result =
      placement::compileKeepFaster(versions, nullptr, compile, out, options);
  ASSERT_TRUE(succeeded(result));
  const auto &v = result->versions;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(result->kept, 0u);
  EXPECT_EQ(v[1].note, "the same graph as the as written");
  EXPECT_EQ(v[1].compileSeconds, 0.0);
  EXPECT_EQ(v[1].runs, 0u);
  EXPECT_GT(v[2].compileSeconds, 0.0);
  EXPECT_GE(v[0].runs, placement::kMinTurnRounds);
  EXPECT_EQ(v[2].runs, v[0].runs);
  EXPECT_NE(v[2].note.find("outputs differ"), std::string::npos) << v[2].note;
  EXPECT_TRUE(llvm::sys::fs::exists(out));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
