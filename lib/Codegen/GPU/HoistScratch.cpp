//===- HoistScratch.cpp - Temporary buffers as kernel parameters ----------===//
//
// Part of Loom. See the description of LoomGPUHoistScratch in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUHOISTSCRATCH
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

/// Bytes of a static memref (an i1 is a byte).
int64_t bytesOf(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, (bits + 7) / 8);
}

LogicalResult hoist(func::FuncOp fn) {
  SmallVector<memref::AllocOp> allocs;
  // Workgroup memory inside a launch (a kernel class's, mapped before
  // bufferization) stays where it is.
  fn.walk([&](memref::AllocOp alloc) {
    if (!alloc->getParentOfType<mlir::gpu::LaunchOp>())
      allocs.push_back(alloc);
  });
  SmallVector<int64_t> bytes;
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return alloc.emitOpError("is a temporary buffer a GPU kernel cannot "
                               "have: only statically shaped, contiguous "
                               "ones become scratch parameters");
    unsigned index = fn.getNumArguments();
    if (failed(
            fn.insertArgument(index, type, DictionaryAttr(), alloc.getLoc())))
      return failure();
    Value param = fn.getArgument(index);
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(param);
    alloc.erase();
    bytes.push_back(bytesOf(type));
  }
  fn->setAttr("loom.scratch", DenseI64ArrayAttr::get(fn.getContext(), bytes));
  SmallVector<memref::CopyOp> copies;
  fn.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
  return success();
}

struct HoistScratch
    : public loom::codegen::gpu::impl::LoomGPUHoistScratchBase<HoistScratch> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(hoist(fn)))
        return signalPassFailure();
  }
};

} // namespace
