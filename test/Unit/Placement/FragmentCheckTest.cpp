//===- FragmentCheckTest.cpp - Every backend's fragments are correct -------===//
//
// Part of Loom. The fragment check (placement::checkFragments) compiles every
// fragment every registered backend offers on a graph holding each pattern
// (convolutions with bias, residual sum and activation, grouped and strided;
// a pool and a convolution added, with an activation after the add; matrix
// products with a row bias and GELU, batched) and compares each with
// the interpreter. With the builtin backends all pass; with a planted faulty
// oneDNN entry (its lowering drops the activation) exactly the fragments that
// end in an activation fail.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Placement/Placement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

constexpr const char *kGraph = R"mlir(
func.func @residual(%x: tensor<1x8x9x9xf32>, %r: tensor<1x16x9x9xf32>) -> tensor<1x16x9x9xf32> {
  %w = tg.weight "w1" : tensor<16x8x3x3xf32>
  %b = tg.weight "b1" : tensor<16xf32>
  %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x9x9xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x9x9xf32>
  %s = tg.add %c, %r : (tensor<1x16x9x9xf32>, tensor<1x16x9x9xf32>) -> tensor<1x16x9x9xf32>
  %y = tg.relu %s : tensor<1x16x9x9xf32>
  return %y : tensor<1x16x9x9xf32>
}
func.func @grouped(%x: tensor<1x8x11x11xf32>) -> tensor<1x12x6x6xf32> {
  %w = tg.weight "w2" : tensor<12x2x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x8x11x11xf32>, tensor<12x2x3x3xf32>) -> tensor<1x12x6x6xf32>
  %y = tg.sigmoid %c : tensor<1x12x6x6xf32>
  return %y : tensor<1x12x6x6xf32>
}
func.func @dense(%x: tensor<2x5x24xf32>) -> tensor<2x5x40xf32> {
  %w = tg.weight "w3" : tensor<24x40xf32>
  %b = tg.weight "b3" : tensor<40xf32>
  %m = tg.matmul %x, %w : (tensor<2x5x24xf32>, tensor<24x40xf32>) -> tensor<2x5x40xf32>
  %a = tg.add %m, %b : (tensor<2x5x40xf32>, tensor<40xf32>) -> tensor<2x5x40xf32>
  %g = tg.gelu %a : tensor<2x5x40xf32>
  return %g : tensor<2x5x40xf32>
}
func.func @cell(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32> {
  %w = tg.weight "w4" : tensor<8x8x1x1xf32>
  %c = tg.conv %x, %w : (tensor<1x8x7x7xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x7x7xf32>
  %r = tg.relu %c : tensor<1x8x7x7xf32>
  %p = tg.avgpool %x {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %s = tg.add %p, %r : (tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %y = tg.hardswish %s : tensor<1x8x7x7xf32>
  return %y : tensor<1x8x7x7xf32>
}
func.func @batched(%a: tensor<3x4x6xf32>, %b: tensor<3x6x7xf32>) -> tensor<3x4x7xf32> {
  %m = tg.matmul %a, %b : (tensor<3x4x6xf32>, tensor<3x6x7xf32>) -> tensor<3x4x7xf32>
  %t = tg.tanh %m : tensor<3x4x7xf32>
  return %t : tensor<3x4x7xf32>
}
)mlir";

/// oneDNN's patterns with a lowering that forgets the activation: what a
/// wrong backend entry looks like.
class DropsActivation : public Backend {
public:
  StringRef name() const override { return inner->name(); }
  StringRef summary() const override { return "faulty oneDNN"; }
  StringRef device() const override { return inner->device(); }
  bool generatesCode() const override { return inner->generatesCode(); }
  std::vector<StringRef> anchorOps() const override {
    return inner->anchorOps();
  }
  std::vector<std::string> patterns() const override {
    return inner->patterns();
  }
  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    if (failed(inner->lower(call, operands, step)))
      return failure();
    if (auto *conv = step.record.getIf<artifact::Conv2dStep>())
      conv->activation = artifact::PostOp();
    if (auto *matmul = step.record.getIf<artifact::MatmulStep>())
      matmul->activation = artifact::PostOp();
    if (auto *binary = step.record.getIf<artifact::BinaryStep>())
      binary->activation = artifact::PostOp();
    return success();
  }
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    return inner->analyticSeconds(call, target);
  }

protected:
  void collectCandidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    inner->candidates(anchor, available, out);
  }

private:
  std::unique_ptr<Backend> inner = createOneDNNBackend();
};

class FragmentCheckTest : public ::testing::Test {
protected:
  void SetUp() override {
    // Every pass registered, as in the tools.
    static bool registered = [] {
      registerAllPasses();
      compiler::registerCompilerPasses();
      return true;
    }();
    (void)registered;
    context.loadDialect<tg::TGDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kGraph, &context);
    ASSERT_TRUE(module);
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

bool endsInActivation(const placement::FragmentCheck &c) {
  for (const char *act : {"relu", "sigmoid", "tanh", "gelu", "hardswish"})
    if (llvm::StringRef(c.pattern).ends_with(act))
      return true;
  return false;
}

TEST_F(FragmentCheckTest, BuiltinBackendsMatchTheInterpreter) {
  auto checks = placement::checkFragments(*module, BackendRegistry::builtin(),
                                          1e-4);
  ASSERT_TRUE(succeeded(checks));
  std::set<std::string> seen;
  for (const auto &c : *checks) {
    EXPECT_TRUE(c.passed) << c.backend << " " << c.pattern << " at "
                          << c.where << ": error " << c.error << " "
                          << c.note;
    seen.insert(c.backend + " " + c.pattern);
  }
  // Every pattern of every backend was exercised, prefixes included.
  for (const char *expected :
       {"onednn conv+sum+relu", "onednn conv+sum", "onednn conv",
        "onednn conv+sigmoid", "onednn matmul+bias+gelu",
        "onednn matmul+bias", "onednn matmul", "onednn matmul+tanh",
        "openblas matmul", "codegen conv+add+relu", "codegen matmul+add+gelu",
        "codegen matmul+tanh", "codegen relu", "onednn conv+relu",
        "onednn avgpool", "onednn add+hardswish", "onednn add"})
    EXPECT_TRUE(seen.count(expected)) << "not checked: " << expected;
}

TEST_F(FragmentCheckTest, PlantedFaultyBackendIsCaught) {
  BackendRegistry faulty;
  faulty.add(createCodegenBackend());
  faulty.add(std::make_unique<DropsActivation>());
  faulty.add(createOpenBLASBackend());
  auto checks = placement::checkFragments(*module, faulty, 1e-4);
  ASSERT_TRUE(succeeded(checks));
  int caught = 0;
  for (const auto &c : *checks) {
    bool wrong = c.backend == "onednn" && endsInActivation(c);
    EXPECT_EQ(c.passed, !wrong)
        << c.backend << " " << c.pattern << ": error " << c.error << " "
        << c.note;
    caught += wrong && !c.passed;
  }
  // conv+sum+relu, conv+sigmoid, matmul+bias+gelu, matmul+tanh,
  // conv+relu, add+hardswish.
  EXPECT_EQ(caught, 6);
}

} // namespace
