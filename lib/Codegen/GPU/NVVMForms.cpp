//===- NVVMForms.cpp - Canonical kernel forms rewritten for NVVM ----------===//
//
// Part of Loom. See the description of LoomGPUNVVMForms in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUNVVMFORMS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

/// The lanes of an NVIDIA warp: the subgroup of every CUDA chip.
constexpr int64_t kWarpSize = 32;

bool isWorkgroupMemory(MemRefType type) {
  auto space =
      dyn_cast_or_null<mlir::gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == mlir::gpu::AddressSpace::Workgroup;
}

/// Each workgroup `memref.alloc` of \p fn's entry block as a workgroup
/// attribution of \p fn, with the alloc's alignment where it has one (the
/// tiles ldmatrix reads: 16 bytes; LLVM aligns an array to its element);
/// any other allocation is an error.
LogicalResult sharedToAttributions(mlir::gpu::GPUFuncOp fn) {
  SmallVector<memref::AllocOp> allocs;
  fn.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    if (!isWorkgroupMemory(type) || !type.hasStaticShape() ||
        alloc->getBlock() != &fn.getBody().front())
      return alloc.emitOpError("allocates memory a CUDA kernel cannot have "
                               "(NVVM would call malloc): only statically "
                               "shaped workgroup memory in a kernel's entry "
                               "block");
    BlockArgument attribution =
        fn.addWorkgroupAttribution(type, alloc.getLoc());
    if (std::optional<uint64_t> alignment = alloc.getAlignment())
      fn.setWorkgroupAttributionAttr(
          fn.getNumWorkgroupAttributions() - 1,
          LLVM::LLVMDialect::getAlignAttrName(),
          IntegerAttr::get(IntegerType::get(fn.getContext(), 64), *alignment));
    alloc.replaceAllUsesWith(attribution);
    alloc.erase();
  }
  return success();
}

/// The subgroup queries of \p fn in terms of 32-lane warps of its known
/// block size.
LogicalResult queriesAsWarps(mlir::gpu::GPUFuncOp fn) {
  SmallVector<Operation *> queries;
  bool reduces = false;
  fn.walk([&](Operation *op) {
    if (isa<mlir::gpu::SubgroupSizeOp, mlir::gpu::SubgroupIdOp,
            mlir::gpu::NumSubgroupsOp>(op))
      queries.push_back(op);
    reduces |= isa<mlir::gpu::SubgroupReduceOp>(op);
  });
  if (queries.empty() && !reduces)
    return success();
  std::optional<ArrayRef<int32_t>> block = fn.getKnownBlockSize();
  if (!block)
    return fn.emitOpError("uses subgroups but has no known block size");
  int64_t threads = int64_t((*block)[0]) * (*block)[1] * (*block)[2];
  if (reduces && threads % kWarpSize != 0)
    return fn.emitOpError("reduces over subgroups with ")
           << threads << " threads, not a multiple of a warp (32)";
  for (Operation *op : queries) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value value;
    if (isa<mlir::gpu::SubgroupSizeOp>(op)) {
      value = index(kWarpSize);
    } else if (isa<mlir::gpu::NumSubgroupsOp>(op)) {
      value = index((threads + kWarpSize - 1) / kWarpSize);
    } else {
      using mlir::gpu::Dimension;
      Value x = mlir::gpu::ThreadIdOp::create(b, loc, Dimension::x);
      Value y = mlir::gpu::ThreadIdOp::create(b, loc, Dimension::y);
      Value z = mlir::gpu::ThreadIdOp::create(b, loc, Dimension::z);
      Value yz = arith::AddIOp::create(
          b, loc, y, arith::MulIOp::create(b, loc, z, index((*block)[1])));
      Value linear = arith::AddIOp::create(
          b, loc, x, arith::MulIOp::create(b, loc, yz, index((*block)[0])));
      value = arith::DivUIOp::create(b, loc, linear, index(kWarpSize));
    }
    op->getResult(0).replaceAllUsesWith(value);
    op->erase();
  }
  return success();
}

/// Lets every float product, sum and difference of \p fn contract, so that
/// a product and the sum it feeds become one FMA.
void allowContraction(mlir::gpu::GPUFuncOp fn) {
  fn.walk([](Operation *op) {
    if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(op))
      return;
    auto fm = cast<arith::ArithFastMathInterface>(op);
    arith::FastMathFlags flags =
        fm.getFastMathFlagsAttr().getValue() | arith::FastMathFlags::contract;
    op->setAttr(fm.getFastMathAttrName(),
                arith::FastMathFlagsAttr::get(op->getContext(), flags));
  });
}

struct NVVMForms
    : public loom::codegen::gpu::impl::LoomGPUNVVMFormsBase<NVVMForms> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<mlir::gpu::GPUFuncOp>()) {
      if (failed(sharedToAttributions(fn)) || failed(queriesAsWarps(fn)))
        return signalPassFailure();
      allowContraction(fn);
    }
    RewritePatternSet patterns(&getContext());
    mlir::populateGpuLowerSubgroupReduceToShufflePatterns(patterns, kWarpSize);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](mlir::gpu::SubgroupReduceOp op) {
      op.emitOpError("cannot be expanded to warp shuffles");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
