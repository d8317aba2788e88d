//===- GPUTarget.cpp - The Vulkan and CUDA targets ------------------------===//
//
// Part of Loom. See Target.h. Code for a GPU: the kernel pipeline of
// lib/Codegen/GPU (docs/Codegen/GPU.md), its kernels packed into one device
// image (a SPIR-V module for Vulkan, a fatbin for CUDA) with the launches
// each codegen fragment is. The artifact's host code (manifest, weights,
// descriptor) is generic x86-64.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/KernelCodegen.h"
#include "loom/Codegen/GPU/Passes.h"
#include "loom/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"

using namespace llvm;
using namespace loom::target;
namespace gpu = loom::codegen::gpu;

llvm::cl::OptionCategory &loom::target::gpuTargetOptions() {
  static cl::OptionCategory category("GPU target options (--target=cuda:..., "
                                     "--target=vulkan)");
  return category;
}

namespace {

/// `loom-compile --gpu-generic-kernels`: every kernel of a GPU target in the
/// generic class (the pipeline's `generic-only`), to compare the kernel
/// classes with it.
cl::opt<bool> genericKernels(
    "gpu-generic-kernels",
    cl::desc("GPU targets: map every kernel in the generic class (one thread "
             "per output element), not the kernel classes (row reductions, "
             "tiled products and convolutions; for comparison)"),
    cl::cat(gpuTargetOptions()), cl::init(false));

/// The workgroups from which the tiled products and convolutions take
/// 64 x 64 output tiles (the pipeline's `large-tile-blocks`).
cl::opt<int64_t> largeTileBlocks(
    "gpu-large-tile-blocks",
    cl::desc("GPU targets: the tiled products and convolutions take 64 x 64 "
             "output tiles (32 sums a thread) where that makes at least this "
             "many workgroups, else 16 x 16 (2 a thread; tensor-core products "
             "of --precision=bf16|f16 on CUDA: 32 x 32); 0: always 64 x 64, "
             "negative: always the small tiles"),
    cl::cat(gpuTargetOptions()), cl::init(264));

/// The tensor-core form of narrow products where no tensor core is (the
/// pipeline's `emulate-tensor-cores`).
cl::opt<bool> emulateTensorCores(
    "gpu-emulate-tensor-cores",
    cl::desc("GPU targets: products in bf16/f16 (--precision) take the "
             "tensor-core form on any API, each mma.sync computed through "
             "workgroup memory, so that lavapipe checks the form's fragments "
             "(slow; a test of the compiler, not a way to run models)"),
    cl::cat(gpuTargetOptions()), cl::init(false), cl::Hidden);

/// bf16 and f16 products in the warpgroup form (the pipeline's `wgmma`).
cl::opt<bool> warpgroupProducts(
    "gpu-wgmma",
    cl::desc("GPU targets: tensor-core products in bf16/f16 (--precision) "
             "take the warpgroup form, one wgmma.mma_async m64nNk16 a step "
             "(--target=cuda with every chip sm_90a; with "
             "--gpu-emulate-tensor-cores on any target). Not yet the "
             "default: no GPU has run it"),
    cl::cat(gpuTargetOptions()), cl::init(false));

/// The CPU the artifact's host code is compiled for: it holds no kernels,
/// so the baseline x86-64 runs it anywhere.
constexpr const char *kHostCPU = "x86-64";

class GPUTarget : public loom::target::Target {
public:
  GPUTarget(std::unique_ptr<Target> host, gpu::DeviceAPI api,
            std::vector<std::string> chips)
      : host(std::move(host)) {
    pipeline.api = api;
    pipeline.chips = chips;
    pipeline.genericOnly = genericKernels;
    pipeline.largeTileBlocks = largeTileBlocks;
    pipeline.emulateTensorCores = emulateTensorCores;
    pipeline.wgmma = warpgroupProducts;
  }

  StringRef name() const override {
    switch (pipeline.api.getValue()) {
    case gpu::DeviceAPI::Vulkan:
      return "vulkan";
    case gpu::DeviceAPI::Cuda:
      return "cuda";
    }
    llvm_unreachable("unknown device API");
  }
  std::string spelling() const override {
    if (pipeline.chips.empty())
      return name().str();
    return (name() + ":" + join(pipeline.chips, ",")).str();
  }
  bool isHost() const override { return false; }

  DeviceRequirements requirements() const override {
    switch (pipeline.api.getValue()) {
    case gpu::DeviceAPI::Vulkan:
      return {"vulkan", "spirv-unknown-vulkan1.3", "", {}};
    case gpu::DeviceAPI::Cuda:
      return {"cuda", "nvptx64-nvidia-cuda", join(pipeline.chips, ","), {}};
    }
    llvm_unreachable("unknown device API");
  }

  void buildKernelPipeline(mlir::OpPassManager &pm) const override {
    gpu::buildGPUKernelPipeline(pm, pipeline);
  }

  std::string kernelPipelineSpelling() const override {
    std::string text = "loom-gpu-kernel-pipeline";
    raw_string_ostream os(text);
    pipeline.print(os);
    return text;
  }

  mlir::FailureOr<EmittedKernels> emitKernels(mlir::ModuleOp lowered,
                                              ArrayRef<std::string> names,
                                              LLVMContext &) const override {
    EmittedKernels out;
    auto kernels = gpu::collectLaunches(lowered, names);
    if (failed(kernels))
      return mlir::failure();
    out.deviceKernels = std::move(*kernels);
    mlir::FailureOr<std::string> image = mlir::failure();
    switch (pipeline.api.getValue()) {
    case gpu::DeviceAPI::Vulkan:
      image = gpu::serializeSPIRV(lowered);
      if (succeeded(image))
        out.listings.push_back({"image.spv", *image});
      out.imageFeatures = gpu::spirvCapabilities(lowered);
      break;
    case gpu::DeviceAPI::Cuda: {
      auto ptx = gpu::ptxByChip(lowered);
      if (failed(ptx))
        return mlir::failure();
      for (const gpu::ChipPTX &chip : *ptx)
        out.listings.push_back({chip.chip + ".ptx", chip.ptx});
      image = gpu::buildFatbin(lowered.getLoc(), *ptx, pipeline.toolkit);
      if (succeeded(image))
        out.listings.push_back({"image.fatbin", *image});
      break;
    }
    }
    if (failed(image))
      return mlir::failure();
    out.image = std::move(*image);
    return out;
  }

  TargetMachine &hostMachine() const override { return host->hostMachine(); }

private:
  std::unique_ptr<Target> host;
  gpu::GPUKernelPipelineOptions pipeline;
};

Expected<std::unique_ptr<loom::target::Target>>
createGPUTarget(gpu::DeviceAPI api, std::vector<std::string> chips) {
  if (warpgroupProducts && !emulateTensorCores &&
      (api != gpu::DeviceAPI::Cuda ||
       llvm::any_of(chips, [](const std::string &c) { return c != "sm_90a"; })))
    return createStringError(
        "--gpu-wgmma: wgmma is an sm_90a instruction; it needs "
        "--target=cuda:sm_90a (every chip sm_90a), or "
        "--gpu-emulate-tensor-cores to check the form on another device");
  auto host = createCPUTarget(kHostCPU);
  if (!host)
    return host.takeError();
  return std::make_unique<GPUTarget>(std::move(*host), api, std::move(chips));
}

} // namespace

Expected<std::unique_ptr<loom::target::Target>>
loom::target::createVulkanTarget(StringRef options) {
  if (!options.empty())
    return createStringError("target 'vulkan:" + options +
                             "': vulkan takes no options (spell it "
                             "--target=vulkan)");
  return createGPUTarget(gpu::DeviceAPI::Vulkan, {});
}

Expected<std::unique_ptr<loom::target::Target>>
loom::target::createCUDATarget(StringRef list) {
  std::vector<std::string> chips;
  if (list.empty())
    return createStringError("target 'cuda' needs its chips: "
                             "cuda:CHIP[,CHIP...] (supported: " +
                             gpu::supportedChips() + ")");
  SmallVector<StringRef> parts;
  list.split(parts, ',');
  for (StringRef chip : parts) {
    if (gpu::ptxFeaturesOf(chip).empty()) {
      std::string what =
          chip.empty() ? std::string("a chip is missing")
                       : ("'" + chip + "' is not a supported CUDA chip").str();
      return createStringError("target 'cuda:" + list + "': " + what +
                               " (supported: " + gpu::supportedChips() + ")");
    }
    if (llvm::is_contained(chips, chip))
      return createStringError("target 'cuda:" + list + "': chip '" + chip +
                               "' is given twice");
    chips.push_back(chip.str());
  }
  return createGPUTarget(gpu::DeviceAPI::Cuda, std::move(chips));
}
