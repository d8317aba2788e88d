//===- ExpandTF32.cpp - TF32 roundings as integer arithmetic --------------===//
//
// Part of Loom. See ExpandTF32Roundings in Passes.td and docs/Precision.md
// ("TF32").
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Builders.h"

namespace loom {
#define GEN_PASS_DEF_EXPANDTF32ROUNDINGS
#include "loom/Conversion/Passes.h.inc"
} // namespace loom

using namespace mlir;

namespace {

/// \p x (f32, or a vector of f32) rounded to TF32 on its bits: to nearest,
/// ties to even, at the 13th bit; NaN and infinities (all exponent bits
/// set) unchanged.
Value roundOnBits(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Type bitsType = i32;
  if (auto vector = dyn_cast<VectorType>(x.getType()))
    bitsType = vector.clone(i32);
  auto c = [&](uint32_t v) {
    return createScalarOrSplatConstant(b, loc, bitsType, APInt(32, v));
  };
  Value u = arith::BitcastOp::create(b, loc, bitsType, x);
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, u, c(13)), c(1));
  Value biased = arith::AddIOp::create(
      b, loc, u, arith::AddIOp::create(b, loc, lsb, c(0xfff)));
  Value rounded = arith::AndIOp::create(b, loc, biased, c(0xffffe000u));
  Value exponent = arith::AndIOp::create(b, loc, u, c(0x7f800000u));
  Value special = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        exponent, c(0x7f800000u));
  Value bits = arith::SelectOp::create(b, loc, special, u, rounded);
  return arith::BitcastOp::create(b, loc, x.getType(), bits);
}

bool isTF32(Type type) { return getElementTypeOrSelf(type).isTF32(); }

struct ExpandTF32RoundingsPass
    : public loom::impl::ExpandTF32RoundingsBase<ExpandTF32RoundingsPass> {
  void runOnOperation() override {
    SmallVector<arith::ExtFOp> pairs;
    getOperation()->walk([&](arith::ExtFOp ext) {
      auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
      // Only the default rounding (to nearest, ties to even).
      if (trunc && !trunc.getRoundingmodeAttr() &&
          isTF32(ext.getIn().getType()) &&
          getElementTypeOrSelf(ext.getType()).isF32() &&
          getElementTypeOrSelf(trunc.getIn().getType()).isF32())
        pairs.push_back(ext);
    });
    for (arith::ExtFOp ext : pairs) {
      auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
      OpBuilder b(ext);
      ext.replaceAllUsesWith(roundOnBits(b, ext.getLoc(), trunc.getIn()));
      ext.erase();
      if (trunc->use_empty())
        trunc.erase();
    }
    WalkResult left = getOperation()->walk([&](Operation *op) {
      auto typed = [](Type t) { return isTF32(t); };
      if (llvm::any_of(op->getResultTypes(), typed) ||
          llvm::any_of(op->getOperandTypes(), typed)) {
        op->emitOpError("uses a tf32 value other than as a TF32 rounding (an "
                        "arith.truncf from f32 that only arith.extf to f32 "
                        "reads): neither LLVM nor SPIR-V has the type");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
