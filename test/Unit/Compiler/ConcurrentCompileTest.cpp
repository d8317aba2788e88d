//===- ConcurrentCompileTest.cpp - Compiles sharing one MLIR context ------===//
//
// Part of Loom. loom-compile compiles model versions on threads of their own
// sharing one MLIRContext (placement::compileKeepFaster,
// placement::BackgroundCompile), after compiler::prepareConcurrentCompiles.
// A compile must then only read the context: a pass manager's run appends
// its pipeline's dependent dialects and their extensions to the context
// and applies the extensions that are new (the tg-to-linalg lowering
// models, attached to tg's ops), and one thread attaching interfaces to ops
// while another reads them corrupted the heap ("double free or corruption",
// 2026-11-24). Checked twice: exactly (after the preparation every dialect
// and extension the pipelines depend on is in the context), and as it
// failed (two compiles at once in fresh contexts, several rounds).
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Compiler.h"
#include "loom/Compiler/Passes.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <thread>

using namespace mlir;
using namespace loom;

namespace {

void registerPasses() {
  static bool registered = [] {
    registerAllPasses();
    compiler::registerCompilerPasses();
    return true;
  }();
  (void)registered;
}

/// A product, an exponential, a transpose and a relu: lowered to linalg by
/// several of the lowering models the extension attaches.
constexpr const char *kModel = R"mlir(
func.func @main(%a: tensor<6x16xf32>, %b: tensor<16x6xf32>) -> tensor<6x6xf32> {
  %p = tg.matmul %a, %b : (tensor<6x16xf32>, tensor<16x6xf32>) -> tensor<6x6xf32>
  %e = tg.exp %p : tensor<6x6xf32>
  %t = tg.transpose %e {perm = array<i64: 1, 0>} : (tensor<6x6xf32>) -> tensor<6x6xf32>
  %r = tg.relu %t : tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}
)mlir";

/// A context with loom-compile's registry (every dialect and extension,
/// tg) but only tg and func loaded: what the pipelines need is loaded by the
/// preparation.
std::unique_ptr<MLIRContext> freshContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<tg::TGDialect>();
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadDialect<tg::TGDialect, func::FuncDialect>();
  return context;
}

compiler::CompileOptions cpuOptions() {
  compiler::CompileOptions options;
  auto target = target::TargetRegistry::builtin().create("cpu");
  EXPECT_TRUE(bool(target)) << llvm::toString(target.takeError());
  if (target)
    options.target = std::move(*target);
  return options;
}

TEST(ConcurrentCompileTest, PreparedContextHoldsWhatTheCompilesNeed) {
  registerPasses();
  std::unique_ptr<MLIRContext> context = freshContext();
  compiler::CompileOptions options = cpuOptions();
  ASSERT_TRUE(options.target);
  compiler::prepareConcurrentCompiles(*context, options);
  DialectRegistry needed;
  compiler::registerCompileDependencies(needed, options, *options.target);
  EXPECT_TRUE(needed.isSubsetOf(context->getDialectRegistry()));
  for (StringRef name : needed.getDialectNames())
    EXPECT_TRUE(context->getLoadedDialect(name)) << name.str();
  // The fragment and kernel pipelines of the CPU target: tg lowers to
  // linalg, the kernels to the LLVM dialect.
  EXPECT_TRUE(context->getLoadedDialect("linalg"));
  EXPECT_TRUE(context->getLoadedDialect("llvm"));
}

TEST(ConcurrentCompileTest, TwoCompilesAtOnceInOneContext) {
  registerPasses();
  SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("concurrent-compile", dir));
  // A fresh context each round: a context's first compile is the one that
  // registered what its pipelines need.
  constexpr int kRounds = 8;
  for (int round = 0; round < kRounds; ++round) {
    std::unique_ptr<MLIRContext> context = freshContext();
    OwningOpRef<ModuleOp> modules[2] = {
        parseSourceString<ModuleOp>(kModel, context.get()),
        parseSourceString<ModuleOp>(kModel, context.get())};
    ASSERT_TRUE(modules[0] && modules[1]);
    compiler::CompileOptions options[2] = {cpuOptions(), cpuOptions()};
    ASSERT_TRUE(options[0].target && options[1].target);
    compiler::prepareConcurrentCompiles(*context, options[0]);
    bool compiled[2] = {false, false};
    std::string paths[2];
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      paths[i] = (dir + "/r" + Twine(round) + "-" + Twine(i) + ".so").str();
      threads.emplace_back([&, i] {
        compiled[i] = succeeded(compiler::compileToArtifact(
            *modules[i], nullptr, options[i], paths[i]));
      });
    }
    for (std::thread &t : threads)
      t.join();
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(compiled[i]) << "round " << round << " thread " << i;
      EXPECT_TRUE(llvm::sys::fs::exists(paths[i])) << paths[i];
    }
  }
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
