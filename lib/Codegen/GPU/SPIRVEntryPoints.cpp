//===- SPIRVEntryPoints.cpp - SPIR-V entry point ABI of each kernel -------===//
//
// Part of Loom. See the description of LoomGPUSPIRVEntryPoints in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUSPIRVENTRYPOINTS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

struct SPIRVEntryPoints
    : public loom::codegen::gpu::impl::LoomGPUSPIRVEntryPointsBase<
          SPIRVEntryPoints> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](gpu::GPUFuncOp fn) {
      if (!fn.isKernel())
        return WalkResult::advance();
      std::optional<ArrayRef<int32_t>> block = fn.getKnownBlockSize();
      if (!block) {
        fn.emitOpError("has no known block size: a SPIR-V entry point "
                       "needs its workgroup size");
        return WalkResult::interrupt();
      }
      fn->setAttr(spirv::getEntryPointABIAttrName(),
                  spirv::getEntryPointABIAttr(&getContext(), *block));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
