//===- ConvertTGToLinalg.cpp - Apply each tg op's linalg lowering ---------===//
//
// Part of Loom. See the description of ConvertTGToLinalg in
// include/loom/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/Passes.h"
#include "loom/Conversion/TGToLinalg/TGToLinalg.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace loom {
#define GEN_PASS_DEF_CONVERTTGTOLINALG
#include "loom/Conversion/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

struct ConvertTGToLinalg
    : public loom::impl::ConvertTGToLinalgBase<ConvertTGToLinalg> {
  using ConvertTGToLinalgBase::ConvertTGToLinalgBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertTGToLinalgBase::getDependentDialects(registry);
    tg::registerTGToLinalgInterfaceModels(registry);
  }

  void runOnOperation() override {
    // Producers come before their users, so each op's operands are already
    // lowered values when its turn comes.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<tg::TGDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      // A tg.scan's step ends in a tg.yield, which the scan's lowering
      // turns into the loop's (the yields of fragments are gone by now).
      if (isa<tg::YieldOp>(op) && isa<tg::ScanOp>(op->getParentOp()))
        continue;
      auto lowering = dyn_cast<tg::LinalgLoweringOpInterface>(op);
      if (!lowering) {
        op->emitOpError("has no lowering to linalg "
                        "(LinalgLoweringOpInterface)");
        return signalPassFailure();
      }
      OpBuilder b(op);
      auto softmax = dyn_cast<tg::SoftmaxOp>(op);
      FailureOr<SmallVector<Value>> values =
          softmax && softmaxStoresExponentials
              ? tg::lowerSoftmaxStoringExponentials(softmax, b)
              : lowering.lowerToLinalg(b);
      if (failed(values))
        return signalPassFailure();
      op->replaceAllUsesWith(*values);
      op->erase();
    }
  }
};

} // namespace
