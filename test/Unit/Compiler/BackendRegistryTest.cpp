//===- BackendRegistryTest.cpp - Backends are open -------------------------===//
//
// Part of Loom. A backend the builtin set does not have (here a library that
// runs tg.tanh, named with a character that is not a bare identifier's) is
// picked up by backend lists, fragment formation and the placement search
// from the registry it is registered in, with no other change: nothing names
// a backend but the backend. Also: backend lists and their errors, and a
// registry refuses a second code generator.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Placement/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

constexpr const char *kGraph = R"mlir(
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %m = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %e = tg.exp %m : tensor<4x16xf32>
  %t = tg.tanh %e : tensor<4x16xf32>
  return %t : tensor<4x16xf32>
}
)mlir";

/// A library that runs tg.tanh alone, and claims to be free.
class TanhLibrary : public Backend {
public:
  StringRef name() const override { return "tanh-lib"; }
  StringRef summary() const override { return "a test library: tanh"; }
  StringRef device() const override { return "cpu"; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    return {tg::TanhOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override { return {"tanh"}; }
  LogicalResult lower(const LibraryCall &call, const StepOperands &,
                      LibraryStep &) const override {
    return call.anchor->emitOpError("tanh-lib has no runtime step");
  }
  double analyticSeconds(const LibraryCall &,
                         const cost::RooflineTarget &) const override {
    return 0;
  }

protected:
  void collectCandidates(Operation *anchor, Available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    if (!isa<tg::TanhOp>(anchor))
      return;
    LibraryCall call;
    call.anchor = anchor;
    call.ops.push_back(anchor);
    out.push_back(std::move(call));
  }
};

BackendRegistry withTanhLibrary() {
  BackendRegistry registry;
  registry.add(createCodegenBackend());
  registry.add(createOneDNNBackend());
  registry.add(std::make_unique<TanhLibrary>());
  registry.setDefaultList("conv:onednn,matmul:onednn");
  return registry;
}

class BackendRegistryTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<tg::TGDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kGraph, &context);
    ASSERT_TRUE(module);
  }
  /// The backend of each fragment of @f, in order.
  std::vector<std::string> fragmentBackends() {
    std::vector<std::string> names;
    module->walk([&](tg::FragmentOp f) {
      names.push_back(f.getBackend().str());
    });
    return names;
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(BackendRegistryTest, ListsNameRegisteredBackendsAndClasses) {
  const BackendRegistry &builtin = BackendRegistry::builtin();
  auto choices = builtin.parseChoices("conv:onednn, matmul:openblas,codegen");
  ASSERT_TRUE(bool(choices)) << llvm::toString(choices.takeError());
  ASSERT_EQ(choices->size(), 3u);
  EXPECT_EQ((*choices)[0].backend->name(), "onednn");
  EXPECT_EQ((*choices)[0].ops, OpClass::Conv);
  EXPECT_EQ((*choices)[1].backend->name(), "openblas");
  EXPECT_EQ((*choices)[1].ops, OpClass::Matmul);
  EXPECT_EQ((*choices)[2].ops, OpClass::Any);
  EXPECT_EQ(builtin.codeGenerator()->name(), "codegen");
  EXPECT_EQ(builtin.spellList("codegen", ""),
            "conv:codegen,conv:onednn,matmul:onednn,loomrt");

  auto error = [&](StringRef list) {
    auto parsed = builtin.parseChoices(list);
    return parsed ? std::string("no error")
                  : llvm::toString(parsed.takeError());
  };
  EXPECT_EQ(error("cudnn"),
            "unknown backend 'cudnn' (registered: codegen, onednn, openblas, loomrt)");
  EXPECT_EQ(error("pool:onednn"),
            "unknown op class 'pool' in 'pool:onednn' (classes: conv, matmul)");
  EXPECT_EQ(error("conv:openblas"),
            "'conv:openblas': openblas runs no conv op");
}

TEST_F(BackendRegistryTest, EachDeviceKindHasItsRegistry) {
  EXPECT_EQ(BackendRegistry::forDevice("cpu"), &BackendRegistry::builtin());
  EXPECT_EQ(BackendRegistry::forDevice("tpu"), nullptr);
  auto names = [](const BackendRegistry &r) {
    std::vector<std::string> out;
    for (const auto &b : r.all())
      out.push_back((b->name() + "@" + b->device()).str());
    return out;
  };
  const BackendRegistry *cuda = BackendRegistry::forDevice("cuda");
  ASSERT_TRUE(cuda);
  // A GPU's loomrt holds the world's steps only (a tensor-parallel
  // program's gathers), first in its default list.
  EXPECT_EQ(names(*cuda),
            (std::vector<std::string>{"codegen@cuda", "cublas@cuda",
                                      "cudnn@cuda", "loomrt@cuda"}));
  EXPECT_EQ(cuda->defaultList(), "loomrt,codegen");
  EXPECT_EQ(cuda->lookup("loomrt")->anchorOps(),
            (std::vector<llvm::StringRef>{"tg.world_rank", "tg.all_gather"}));
  const BackendRegistry *vulkan = BackendRegistry::forDevice("vulkan");
  ASSERT_TRUE(vulkan);
  EXPECT_EQ(names(*vulkan),
            (std::vector<std::string>{"codegen@vulkan", "loomrt@vulkan"}));
  EXPECT_EQ(vulkan->defaultList(), "loomrt,codegen");
  // cuBLASLt's candidates: the product with its row bias and ReLU, longest
  // first, each shorter one a prefix.
  constexpr const char *kLinear = R"mlir(
func.func @g(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = tg.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = tg.relu %a : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
)mlir";
  OwningOpRef<ModuleOp> linear = parseSourceString<ModuleOp>(kLinear, &context);
  ASSERT_TRUE(linear);
  Operation *matmul = nullptr;
  linear->walk([&](tg::MatmulOp op) { matmul = op; });
  SmallVector<LibraryCall> calls;
  cuda->lookup("cublas")->candidates(matmul, [](Operation *) { return true; },
                                     calls);
  std::vector<std::string> patterns;
  for (const LibraryCall &c : calls)
    patterns.push_back(c.pattern());
  EXPECT_EQ(patterns, (std::vector<std::string>{"matmul+bias+relu",
                                                "matmul+bias", "matmul"}));
}

TEST_F(BackendRegistryTest, FormationTakesANewLibraryFromItsRegistry) {
  BackendRegistry registry = withTanhLibrary();
  PassManager pm(&context);
  TGFormFragmentsOptions options;
  options.backends = "tanh-lib,onednn";
  pm.addNestedPass<func::FuncOp>(createTGFormFragments(registry, options));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  // The matmul on oneDNN, the exp generated, the tanh on the new library.
  EXPECT_EQ(fragmentBackends(),
            (std::vector<std::string>{"onednn", "codegen", "tanh-lib"}));
  // The name is not a bare identifier: it prints quoted, and parses back.
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_NE(text.find("tg.fragment <\"tanh-lib\">"), std::string::npos)
      << text;
  EXPECT_TRUE(parseSourceString<ModuleOp>(text, &context));
}

TEST_F(BackendRegistryTest, PlacementSearchesANewLibraryFromItsRegistry) {
  BackendRegistry registry = withTanhLibrary();
  PassManager pm(&context);
  placement::TGPlaceBackendsOptions options;
  options.cost = "analytic";
  pm.addPass(placement::createTGPlaceBackends(registry, options));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  // The analytic model prices the new library at nothing: the search puts
  // the tanh there.
  std::vector<std::string> names = fragmentBackends();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "tanh-lib");
}

/// A second backend that generates code.
class OtherGenerator : public TanhLibrary {
public:
  StringRef name() const override { return "other-codegen"; }
  bool generatesCode() const override { return true; }
};

TEST(BackendRegistryDeathTest, OneNameAndOneCodeGeneratorPerRegistry) {
  EXPECT_DEATH(
      {
        BackendRegistry registry;
        registry.add(createCodegenBackend());
        registry.add(createCodegenBackend());
      },
      "backend 'codegen' registered twice");
  EXPECT_DEATH(
      {
        BackendRegistry registry;
        registry.add(createCodegenBackend());
        registry.add(std::make_unique<OtherGenerator>());
      },
      "backend 'other-codegen' generates code, and 'codegen' already does");
}

} // namespace
