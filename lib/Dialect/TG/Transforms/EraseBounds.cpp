//===- EraseBounds.cpp - Replace every tg.bound by its input ---------------===//
//
// Part of Loom. --tg-erase-bounds: loom-compile's first pass (after the
// importer has recorded the function results' bounds in their attributes).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGBoundOp.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGERASEBOUNDS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom::tg;

namespace {
struct EraseBoundsPass
    : loom::tg::impl::TGEraseBoundsBase<EraseBoundsPass> {
  using TGEraseBoundsBase::TGEraseBoundsBase;

  void runOnOperation() override {
    getOperation().walk([](BoundOp op) {
      op.getOutput().replaceAllUsesWith(op.getInput());
      op.erase();
    });
  }
};
} // namespace
