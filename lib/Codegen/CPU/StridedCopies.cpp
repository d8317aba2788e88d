//===- StridedCopies.cpp - memref.copy of views as linalg.copy ------------===//
//
// Part of Loom. See the description of LoomStridedCopiesToLinalg in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMSTRIDEDCOPIESTOLINALG
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

bool contiguous(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getLayout().isIdentity();
}

struct StridedCopiesToLinalg
    : public loom::codegen::cpu::impl::LoomStridedCopiesToLinalgBase<
          StridedCopiesToLinalg> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
