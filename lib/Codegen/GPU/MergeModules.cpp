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
    SymbolTable table(merged);
    // Each outlined module holds one kernel and the symbols it uses (the
    // constant globals of an index table); the modules' names are unique,
    // the kernels' and the symbols' need not be: a kernel takes its
    // module's name, a symbol equivalent to one already merged is dropped,
    // another of the same name renamed.
    for (gpu::GPUModuleOp part : parts) {
      Block &from = part.getBodyRegion().front();
      for (Operation &op : llvm::make_early_inc_range(from)) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol || isa<gpu::GPUFuncOp>(op))
          continue;
        StringAttr name = symbol.getNameAttr();
        Operation *existing = table.lookup(name);
        if (existing && OperationEquivalence::isEquivalentTo(
                            &op, existing, OperationEquivalence::IgnoreLocations)) {
          op.erase();
          continue;
        }
        op.remove();
        StringAttr unique = table.insert(&op);
        if (unique != name &&
            failed(SymbolTable::replaceAllSymbolUses(name, unique,
                                                     &part.getBodyRegion())))
          return signalPassFailure();
      }
      for (Operation &op : llvm::make_early_inc_range(from)) {
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
