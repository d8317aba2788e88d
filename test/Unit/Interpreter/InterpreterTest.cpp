//===- InterpreterTest.cpp - The tg interpreter on IR parsed from strings -===//
//
// Part of Loom. End-to-end checks of the MLIR-facing interpreter: dispatch,
// attributes, weights, calls and run-time diagnostics, in every domain.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace loom;
using namespace loom::interp;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    registry.insert<tg::TGDialect, func::FuncDialect>();
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        context.get(), [this](Diagnostic &d) {
          diagnostics += d.str() + "\n";
          return success();
        });
  }

  OwningOpRef<ModuleOp> parse(StringRef ir) {
    return parseSourceString<ModuleOp>(ir, context.get(), "test.mlir");
  }

  template <class D>
  FailureOr<std::vector<Tensor<D>>> run(ModuleOp module,
                                       std::vector<Tensor<D>> args,
                                       InterpreterOptions options = {}) {
    Interpreter<D> interp(module, options);
    auto fn = module.lookupSymbol<func::FuncOp>("main");
    return interp.run(fn, args);
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::string diagnostics;
};

constexpr const char *kAffine = R"mlir(
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %b = tg.constant dense<[[1.0, -2.0]]> : tensor<1x2xf32>
  %m = tg.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %y = tg.add %m, %b : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %r = tg.relu %y : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
)mlir";


TEST_F(InterpreterTest, AffineReluInEveryDomain) {
  auto module = parse(kAffine);
  ASSERT_TRUE(module) << diagnostics;
  // x = [[1,2,3],[4,5,6]], w = [[1,0],[0,1],[1,1]] -> x.w = [[4,5],[10,11]]
  // + [1,-2] -> [[5,3],[11,9]]; relu keeps all.
  std::vector<double> x = {1, 2, 3, 4, 5, 6}, w = {1, 0, 0, 1, 1, 1};
  std::vector<double> expect = {5, 3, 11, 9};
  auto f32 = run<F32Domain>(*module, {Tensor<F32Domain>::fromDoubles({2, 3}, x),
                                      Tensor<F32Domain>::fromDoubles({3, 2}, w)});
  ASSERT_TRUE(succeeded(f32)) << diagnostics;
  EXPECT_EQ((*f32)[0].toDoubles(), expect);
  auto f64 = run<F64Domain>(*module, {Tensor<F64Domain>::fromDoubles({2, 3}, x),
                                      Tensor<F64Domain>::fromDoubles({3, 2}, w)});
  ASSERT_TRUE(succeeded(f64)) << diagnostics;
  EXPECT_EQ((*f64)[0].toDoubles(), expect);
  auto modp = run<ModPDomain>(
      *module, {Tensor<ModPDomain>::fromDoubles({2, 3}, x),
                Tensor<ModPDomain>::fromDoubles({3, 2}, w)});
  ASSERT_TRUE(succeeded(modp)) << diagnostics;
  EXPECT_EQ((*modp)[0].toDoubles(), expect);
}

TEST_F(InterpreterTest, ReluInModPUsesCenteredOrder) {
  auto module = parse(kAffine);
  ASSERT_TRUE(module);
  // x.w = [[-4,-5],...]: negative in the centred representation -> relu 0.
  std::vector<double> x = {-1, -2, -3, 0, 0, 0}, w = {1, 0, 0, 1, 1, 1};
  auto modp = run<ModPDomain>(
      *module, {Tensor<ModPDomain>::fromDoubles({2, 3}, x),
                Tensor<ModPDomain>::fromDoubles({3, 2}, w)});
  ASSERT_TRUE(succeeded(modp)) << diagnostics;
  EXPECT_EQ((*modp)[0].toDoubles(), (std::vector<double>{0, 0, 1, 0}));
}

TEST_F(InterpreterTest, CallsAndMultipleResults) {
  auto module = parse(R"mlir(
func.func private @halves(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a, %b = tg.split %x {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %a, %b : tensor<2xf32>, tensor<2xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
  %a, %b = func.call @halves(%x) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %d = tg.sub %b, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %d : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(module) << diagnostics;
  auto r = run<F64Domain>(*module,
                          {Tensor<F64Domain>::fromDoubles({4}, {1, 2, 10, 20})});
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{9, 18}));
}

TEST_F(InterpreterTest, GatherOutOfRangeIsADiagnostic) {
  auto module = parse(R"mlir(
func.func @main(%t: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %i = tg.constant dense<[0, 7]> : tensor<2xi64>
  %g = tg.gather %t, %i : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}
)mlir");
  ASSERT_TRUE(module) << diagnostics;
  auto r = run<F32Domain>(*module, {Tensor<F32Domain>({3, 2})});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("7"), std::string::npos) << diagnostics;
}

TEST_F(InterpreterTest, ArgumentShapeMismatchIsADiagnostic) {
  auto module = parse(kAffine);
  ASSERT_TRUE(module);
  auto r = run<F32Domain>(*module, {Tensor<F32Domain>({3, 2}),
                                    Tensor<F32Domain>({3, 2})});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("argument 0 expects"), std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, TooLargeResultIsADiagnostic) {
  auto module = parse(R"mlir(
func.func @main(%x: tensor<1xf32>) -> tensor<100000x100000xf32> {
  %b = tg.broadcast_to %x : (tensor<1xf32>) -> tensor<100000x100000xf32>
  return %b : tensor<100000x100000xf32>
}
)mlir");
  ASSERT_TRUE(module) << diagnostics;
  auto r = run<F32Domain>(*module, {Tensor<F32Domain>({1})});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("larger than the interpreter's limit"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, WeightsAreLoadedAndChecked) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("loom-interp", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "w.safetensors");
  safetensors::Writer writer;
  ASSERT_FALSE(bool(writer.add("scale", safetensors::DType::F32, {2}, {2, 3})));
  ASSERT_FALSE(bool(writer.add("bad", safetensors::DType::F16, {2}, {2, 3})));
  ASSERT_FALSE(bool(writer.write(path)));

  auto module = parse(R"mlir(
module attributes {tg.weights = "unused-default.safetensors"} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = tg.weight "scale" : tensor<2xf32>
  %y = tg.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
}
)mlir");
  ASSERT_TRUE(module) << diagnostics;
  InterpreterOptions options;
  options.weightsFile = std::string(path);
  auto r = run<F32Domain>(*module, {Tensor<F32Domain>::fromDoubles({2}, {5, 7})},
                          options);
  ASSERT_TRUE(succeeded(r)) << diagnostics;
  EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{10, 21}));

  // A dtype mismatch is reported at the tg.weight.
  auto bad = parse(R"mlir(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = tg.weight "bad" : tensor<2xf32>
  return %w : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(bad);
  diagnostics.clear();
  auto r2 = run<F32Domain>(*bad, {Tensor<F32Domain>({2})}, options);
  EXPECT_TRUE(failed(r2));
  EXPECT_NE(diagnostics.find("bad"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("F16"), std::string::npos) << diagnostics;

  // A missing file is a diagnostic, not a crash.
  diagnostics.clear();
  options.weightsFile = std::string(dir) + "/does-not-exist.safetensors";
  auto r3 = run<F32Domain>(*module, {Tensor<F32Domain>({2})}, options);
  EXPECT_TRUE(failed(r3));
  EXPECT_NE(diagnostics.find("does-not-exist"), std::string::npos)
      << diagnostics;
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(InterpreterTest, ModuleWithoutWeightsAttributeIsADiagnostic) {
  auto module = parse(R"mlir(
func.func @main() -> tensor<2xf32> {
  %w = tg.weight "w" : tensor<2xf32>
  return %w : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto r = run<F32Domain>(*module, {});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(diagnostics.find("has no 'tg.weights' attribute"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, ConvBatchNormMatchesAcrossFloatDomains) {
  auto module = parse(R"mlir(
func.func @main(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %s: tensor<4xf32>) -> tensor<1x4x5x5xf32> {
  %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32>
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %bn = tg.batchnorm %c, %s, %s, %s, %one {epsilon = 0.0 : f64} : (tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %p = tg.maxpool %bn {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  return %p : tensor<1x4x5x5xf32>
}
)mlir");
  ASSERT_TRUE(module) << diagnostics;
  auto x32 = Tensor<F32Domain>::random({1, 3, 9, 9}, 1);
  auto w32 = Tensor<F32Domain>::random({4, 3, 3, 3}, 2);
  auto s32 = Tensor<F32Domain>::random({4}, 3);
  auto a = run<F32Domain>(*module, {x32, w32, s32});
  auto b = run<F64Domain>(
      *module, {Tensor<F64Domain>::fromDoubles({1, 3, 9, 9}, x32.toDoubles()),
                Tensor<F64Domain>::fromDoubles({4, 3, 3, 3}, w32.toDoubles()),
                Tensor<F64Domain>::fromDoubles({4}, s32.toDoubles())});
  ASSERT_TRUE(succeeded(a) && succeeded(b)) << diagnostics;
  std::vector<double> va = (*a)[0].toDoubles(), vb = (*b)[0].toDoubles();
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i)
    EXPECT_NEAR(va[i], vb[i], 1e-5 * (1 + std::abs(vb[i]))) << i;
}

} // namespace
