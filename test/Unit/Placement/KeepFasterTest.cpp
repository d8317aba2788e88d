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
