//===- DynamicOrder.cpp - The selections' order and overlap as IR ---------===//
//
// Part of Loom. See loom/Conversion/TGToLinalg/DynamicOrder.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/TGToLinalg/DynamicOrder.h"

#include "LoweringSupport.h"

using namespace mlir;

namespace loom::tg {

Value buildLess(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (!isa<FloatType>(x.getType()))
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  Value lt = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, y);
  Value yNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, y, y);
  Value xNum = arith::CmpFOp::create(b, arith::CmpFPredicate::ORD, x, x);
  ScalarOps s{b};
  return s.orI(lt, s.andI(yNan, xNum));
}

Value buildBefore(ImplicitLocOpBuilder &b, bool largest, Value x, Value i,
                  Value y, Value j) {
  if (!largest)
    std::swap(x, y);
  ScalarOps s{b};
  Value notYBelowX = s.notI(buildLess(b, x, y));
  return s.orI(buildLess(b, y, x), s.andI(notYBelowX, s.lt(i, j)));
}

Value buildSuppresses(ImplicitLocOpBuilder &b, ArrayRef<Value> a,
                      ArrayRef<Value> c, bool centerPointBox,
                      Value threshold) {
  auto f = [&](double v) { return lowering::f32(b, b.getLoc(), v); };
  auto extent = [&](ArrayRef<Value> box, int c0, int c1) {
    if (centerPointBox) {
      Value half = arith::DivFOp::create(b, box[c1], f(2));
      return std::pair<Value, Value>{arith::SubFOp::create(b, box[c0], half),
                                     arith::AddFOp::create(b, box[c0], half)};
    }
    return std::pair<Value, Value>{arith::MinimumFOp::create(b, box[c0], box[c1]),
                                   arith::MaximumFOp::create(b, box[c0], box[c1])};
  };
  int xa = centerPointBox ? 0 : 1, xb = centerPointBox ? 2 : 3;
  int ya = centerPointBox ? 1 : 0, yb = centerPointBox ? 3 : 2;
  auto [ax0, ax1] = extent(a, xa, xb);
  auto [bx0, bx1] = extent(c, xa, xb);
  auto [ay0, ay1] = extent(a, ya, yb);
  auto [by0, by1] = extent(c, ya, yb);
  auto gt = [&](Value x, Value y) {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, y);
  };
  Value ix0 = arith::MaximumFOp::create(b, ax0, bx0);
  Value ix1 = arith::MinimumFOp::create(b, ax1, bx1);
  Value iy0 = arith::MaximumFOp::create(b, ay0, by0);
  Value iy1 = arith::MinimumFOp::create(b, ay1, by1);
  auto area = [&](Value x0, Value x1, Value y0, Value y1) -> Value {
    return arith::MulFOp::create(b, arith::SubFOp::create(b, x1, x0),
                                 arith::SubFOp::create(b, y1, y0));
  };
  Value inter = area(ix0, ix1, iy0, iy1);
  Value areaA = area(ax0, ax1, ay0, ay1), areaB = area(bx0, bx1, by0, by1);
  Value uni = arith::SubFOp::create(b, arith::AddFOp::create(b, areaA, areaB), inter);
  ScalarOps s{b};
  Value ok = s.andI(s.andI(gt(ix1, ix0), gt(iy1, iy0)),
                    s.andI(s.andI(gt(inter, f(0)), gt(areaA, f(0))),
                           s.andI(gt(areaB, f(0)), gt(uni, f(0)))));
  return s.andI(ok, gt(arith::DivFOp::create(b, inter, uni), threshold));
}

} // namespace loom::tg
