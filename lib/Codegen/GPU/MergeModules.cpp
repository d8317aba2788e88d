//===- MergeModules.cpp - Every kernel in one gpu.module ------------------===//
//
// Part of Loom. See the description of LoomGPUMergeModules in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMERGEMODULES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

struct MergeModules
    : public loom::codegen::gpu::impl::LoomGPUMergeModulesBase<MergeModules> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> parts(module.getOps<gpu::GPUModuleOp>());
    if (parts.empty())
      return;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(
        b, module.getLoc(), loom::codegen::gpu::kKernelModuleName);
    Block &into = merged.getBodyRegion().front();
    // Each outlined module holds one kernel; the modules' names are unique,
    // the kernels' need not be: a kernel takes its module's name.
    for (gpu::GPUModuleOp part : parts) {
      for (Operation &op :
           llvm::make_early_inc_range(part.getBodyRegion().front())) {
        if (auto fn = dyn_cast<gpu::GPUFuncOp>(op))
          fn.setName(part.getName());
        op.moveBefore(&into, into.end());
      }
    }
    auto moduleRef = b.getStringAttr(loom::codegen::gpu::kKernelModuleName);
    module.walk([&](gpu::LaunchFuncOp launch) {
      launch.setKernelAttr(SymbolRefAttr::get(
          moduleRef, {FlatSymbolRefAttr::get(launch.getKernelModuleName())}));
    });
    for (gpu::GPUModuleOp part : parts)
      part.erase();
  }
};

} // namespace
