//===- TargetTest.cpp - The target registry and the CPU target ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Target.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

using namespace loom::target;

namespace {

bool needs(const DeviceRequirements &device, llvm::StringRef feature) {
  return llvm::is_contained(device.features, feature.str());
}

TEST(TargetTest, BuiltinCPUByName) {
  auto avx2 = TargetRegistry::builtin().create("cpu:x86-64-v3");
  ASSERT_TRUE(bool(avx2)) << llvm::toString(avx2.takeError());
  EXPECT_EQ((*avx2)->name(), "cpu");
  EXPECT_EQ((*avx2)->spelling(), "cpu:x86-64-v3");
  EXPECT_FALSE((*avx2)->isHost());
  DeviceRequirements device = (*avx2)->requirements();
  EXPECT_EQ(device.kind, "cpu");
  EXPECT_EQ(device.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(device.processor, "x86-64-v3");
  EXPECT_TRUE(needs(device, "avx2"));
  EXPECT_TRUE(needs(device, "fma"));
  EXPECT_FALSE(needs(device, "avx512f"));
  EXPECT_EQ((*avx2)->kernelPipelineSpelling(),
            "loom-cpu-kernel-pipeline{min-iterations=64 vector-width=256}");
}

TEST(TargetTest, VectorWidthFollowsFeatures) {
  auto avx512 = TargetRegistry::builtin().create("cpu:skylake-avx512");
  ASSERT_TRUE(bool(avx512)) << llvm::toString(avx512.takeError());
  EXPECT_TRUE(needs((*avx512)->requirements(), "avx512f"));
  EXPECT_EQ((*avx512)->kernelPipelineSpelling(),
            "loom-cpu-kernel-pipeline{min-iterations=64 vector-width=512}");
}

TEST(TargetTest, HostSpellings) {
  for (const char *spelling : {"cpu", "cpu:native", "cpu:"}) {
    auto host = TargetRegistry::builtin().create(spelling);
    ASSERT_TRUE(bool(host)) << llvm::toString(host.takeError());
    EXPECT_TRUE((*host)->isHost()) << spelling;
    EXPECT_EQ((*host)->spelling(), "cpu");
    EXPECT_FALSE((*host)->requirements().processor.empty());
  }
}

TEST(TargetTest, KernelPipelineIsBuilt) {
  auto cpu = TargetRegistry::builtin().create("cpu:x86-64-v3");
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  (*cpu)->buildKernelPipeline(pm);
  EXPECT_GT(pm.size(), 20u);
}

TEST(TargetTest, Errors) {
  auto badCPU = TargetRegistry::builtin().create("cpu:pentium9");
  ASSERT_FALSE(bool(badCPU));
  EXPECT_NE(llvm::toString(badCPU.takeError()).find("'pentium9' is not a CPU"),
            std::string::npos);
  auto unknown = TargetRegistry::builtin().create("tpu:v5");
  ASSERT_FALSE(bool(unknown));
  std::string message = llvm::toString(unknown.takeError());
  EXPECT_NE(message.find("no target named 'tpu'"), std::string::npos);
  EXPECT_NE(message.find("registered targets: cpu[:NAME]"), std::string::npos);
  EXPECT_NE(message.find("vulkan"), std::string::npos);
  EXPECT_NE(message.find("cuda:CHIP[,CHIP...]"), std::string::npos);
  // A chip ptxas 13 does not take is refused before MLIR or LLVM sees it.
  auto sm70 = TargetRegistry::builtin().create("cuda:sm_70");
  ASSERT_FALSE(bool(sm70));
  EXPECT_NE(llvm::toString(sm70.takeError())
                .find("'sm_70' is not a supported CUDA chip"),
            std::string::npos);
  auto vulkanOptions = TargetRegistry::builtin().create("vulkan:foo");
  ASSERT_FALSE(bool(vulkanOptions));
  EXPECT_NE(
      llvm::toString(vulkanOptions.takeError()).find("vulkan takes no options"),
      std::string::npos);
}

TEST(TargetTest, GPUTargets) {
  auto vulkan = TargetRegistry::builtin().create("vulkan");
  ASSERT_TRUE(bool(vulkan)) << llvm::toString(vulkan.takeError());
  EXPECT_EQ((*vulkan)->spelling(), "vulkan");
  EXPECT_FALSE((*vulkan)->isHost());
  EXPECT_EQ((*vulkan)->requirements().kind, "vulkan");
  EXPECT_EQ((*vulkan)->kernelPipelineSpelling().rfind(
                "loom-gpu-kernel-pipeline{api=vulkan", 0),
            0u);
  auto cuda = TargetRegistry::builtin().create("cuda:sm_80,sm_90a");
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  EXPECT_EQ((*cuda)->name(), "cuda");
  EXPECT_EQ((*cuda)->spelling(), "cuda:sm_80,sm_90a");
  DeviceRequirements needs = (*cuda)->requirements();
  EXPECT_EQ(needs.kind, "cuda");
  EXPECT_EQ(needs.triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(needs.processor, "sm_80,sm_90a");
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  (*cuda)->buildKernelPipeline(pm);
  EXPECT_GT(pm.size(), 10u);
}

/// A target of a registry of one's own: what the GPU targets will do.
class FakeTarget : public Target {
public:
  explicit FakeTarget(std::string chip) : chip(std::move(chip)) {}
  llvm::StringRef name() const override { return "fake"; }
  std::string spelling() const override { return "fake:" + chip; }
  bool isHost() const override { return false; }
  DeviceRequirements requirements() const override {
    return {"fake", "fake-triple", chip, {}};
  }
  void buildKernelPipeline(mlir::OpPassManager &) const override {}
  std::string kernelPipelineSpelling() const override { return ""; }
  mlir::FailureOr<EmittedKernels>
  emitKernels(mlir::ModuleOp, llvm::ArrayRef<std::string>,
              llvm::LLVMContext &) const override {
    return mlir::failure();
  }
  llvm::TargetMachine &hostMachine() const override {
    llvm_unreachable("no host machine in this test");
  }

private:
  std::string chip;
};

TEST(TargetTest, OpenRegistry) {
  TargetRegistry registry;
  registry.add(
      "fake", "fake:CHIP (a test)",
      [](llvm::StringRef options) -> llvm::Expected<std::unique_ptr<Target>> {
        if (options.empty())
          return llvm::createStringError("fake needs a chip");
        return std::make_unique<FakeTarget>(options.str());
      });
  auto fake = registry.create("fake:x1");
  ASSERT_TRUE(bool(fake)) << llvm::toString(fake.takeError());
  EXPECT_EQ((*fake)->spelling(), "fake:x1");
  EXPECT_EQ((*fake)->requirements().processor, "x1");
  auto bare = registry.create("fake");
  ASSERT_FALSE(bool(bare));
  EXPECT_EQ(llvm::toString(bare.takeError()), "fake needs a chip");
  auto cpu = registry.create("cpu");
  ASSERT_FALSE(bool(cpu));
  EXPECT_NE(llvm::toString(cpu.takeError()).find("fake:CHIP (a test)"),
            std::string::npos);
  EXPECT_EQ(registry.usages(), std::vector<std::string>{"fake:CHIP (a test)"});
}

} // namespace
