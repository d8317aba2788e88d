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

/// \p fn's text under a fixed name: equal for two kernels that differ in
/// their names alone (the same body, arguments, attributes and symbols).
std::string kernelText(gpu::GPUFuncOp fn) {
  StringAttr name = fn.getNameAttr();
  fn.setName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  fn->print(os, OpPrintingFlags().useLocalScope());
  fn.setName(name);
  return text;
}

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
    // A kernel equal to one already merged (a detector's per-class
    // post-processing repeats the same ops for every class) is dropped and
    // its launches point at the other: one entry point, one pipeline.
    llvm::StringMap<StringAttr> byText;
    llvm::DenseMap<StringAttr, StringAttr> sameAs;
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
        if (auto fn = dyn_cast<gpu::GPUFuncOp>(op)) {
          fn.setName(part.getName());
          auto [it, added] =
              byText.try_emplace(kernelText(fn), part.getNameAttr());
          if (!added) {
            sameAs[part.getNameAttr()] = it->second;
            continue;
          }
        }
        op.moveBefore(&into, into.end());
      }
    }
    auto moduleRef = b.getStringAttr(loom::codegen::gpu::kKernelModuleName);
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr kernel = launch.getKernelModuleName();
      kernel = sameAs.lookup(kernel) ? sameAs.lookup(kernel) : kernel;
      launch.setKernelAttr(
          SymbolRefAttr::get(moduleRef, {FlatSymbolRefAttr::get(kernel)}));
    });
    for (gpu::GPUModuleOp part : parts)
      part.erase();
  }
};

} // namespace
