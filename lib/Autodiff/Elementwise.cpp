//===- Elementwise.cpp - VJPs of the elementwise tg ops -------------------===//
//
// Part of Loom. Unary ops differentiate from their input x and/or output y;
// binary ops sum the broadcast gradient back to each operand's shape. The
// choices at points where an op is not differentiable are in
// docs/Training.md: relu'(0) = 0, max/min ties go to the left operand,
// clip passes the gradient at its bounds, hardsigmoid/hardswish take the
// inner branch at their kinks.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradBuilder.h"

#include <cmath>

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::autodiff;

namespace {

/// A unary op's gradient from (x, y, dy).
using UnaryRule = Value (*)(GradBuilder &, Value x, Value y, Value dy);

template <class OpT, UnaryRule Rule>
VJP unaryVJP(OpT op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = Rule(g, op->getOperand(0), op->getResult(0), grads[0]);
  return out;
}

Value reluRule(GradBuilder &g, Value x, Value, Value dy) {
  return g.mask(g.greater(x, g.scalarLike(0, x)), dy);
}
Value sigmoidRule(GradBuilder &g, Value, Value y, Value dy) {
  return g.activationGrad(Activation::Sigmoid, y, dy);
}
Value tanhRule(GradBuilder &g, Value, Value y, Value dy) {
  return g.activationGrad(Activation::Tanh, y, dy);
}
Value expRule(GradBuilder &g, Value, Value y, Value dy) { return g.mul(dy, y); }
Value logRule(GradBuilder &g, Value x, Value, Value dy) { return g.div(dy, x); }
Value sqrtRule(GradBuilder &g, Value, Value y, Value dy) {
  return g.div(g.scale(dy, 0.5), y);
}
Value rsqrtRule(GradBuilder &g, Value, Value y, Value dy) {
  // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 y^3
  return g.mul(g.scale(dy, -0.5), g.mul(y, g.mul(y, y)));
}
Value negRule(GradBuilder &g, Value, Value, Value dy) { return g.neg(dy); }
Value erfRule(GradBuilder &g, Value x, Value, Value dy) {
  Value e = g.exp(g.neg(g.mul(x, x)));
  return g.mul(dy, g.scale(e, 2.0 / std::sqrt(M_PI)));
}
// A rounding's gradient goes straight through, as a cast's does.
Value roundTF32Rule(GradBuilder &, Value, Value, Value dy) { return dy; }
Value softplusRule(GradBuilder &g, Value x, Value, Value dy) {
  return g.mul(dy, g.sigmoid(x));
}
Value hardswishRule(GradBuilder &g, Value x, Value, Value dy) {
  // x * clamp(x/6 + 1/2, 0, 1): 0 below -3, 1 above 3, (2x + 3) / 6 between.
  Value inner = g.add(g.scale(x, 1.0 / 3.0), g.scalarLike(0.5, x));
  Value d = g.select(g.greater(x, g.scalarLike(3, x)), g.scalarLike(1, x),
                     inner);
  d = g.select(g.less(x, g.scalarLike(-3, x)), g.scalarLike(0, x), d);
  return g.mul(dy, d);
}

VJP geluVJP(GeluOp op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  Value x = op.getInput(), dy = grads[0];
  Value d;
  if (op.getTanhApproximation()) {
    // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2), t = tanh(c (x + k x^3))
    const double c = std::sqrt(2.0 / M_PI), k = 0.044715;
    Value x2 = g.mul(x, x);
    Value u = g.scale(g.add(x, g.scale(g.mul(x2, x), k)), c);
    Value t = g.tanh(u);
    Value one = g.scalarLike(1, x);
    Value left = g.scale(g.add(one, t), 0.5);
    Value du = g.scale(g.add(one, g.scale(x2, 3 * k)), c);
    Value right = g.mul(g.scale(x, 0.5), g.mul(g.sub(one, g.mul(t, t)), du));
    d = g.add(left, right);
  } else {
    // Phi(x) + x phi(x)
    Value cdf = g.scale(g.add(g.scalarLike(1, x),
                              g.erf(g.scale(x, 1.0 / std::sqrt(2.0)))),
                        0.5);
    Value pdf = g.scale(g.exp(g.scale(g.mul(x, x), -0.5)),
                        1.0 / std::sqrt(2 * M_PI));
    d = g.add(cdf, g.mul(x, pdf));
  }
  out[0] = g.mul(dy, d);
  return out;
}

VJP clipVJP(ClipOp op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  Value x = op.getInput();
  Value below = g.less(x, g.scalarLike(op.getMin().convertToDouble(), x));
  Value above = g.greater(x, g.scalarLike(op.getMax().convertToDouble(), x));
  Value zero = g.scalarLike(0, x);
  out[0] = g.select(below, zero, g.select(above, zero, grads[0]));
  return out;
}

VJP hardsigmoidVJP(HardSigmoidOp op, GradBuilder &g, ValueRange grads,
                   ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (!needed[0])
    return out;
  Value x = op.getInput();
  double alpha = op.getAlpha().convertToDouble(),
         beta = op.getBeta().convertToDouble();
  Value z = g.add(g.scale(x, alpha), g.scalarLike(beta, x));
  Value zero = g.scalarLike(0, x);
  Value d = g.scale(grads[0], alpha);
  out[0] = g.select(g.less(z, zero), zero,
                    g.select(g.greater(z, g.scalarLike(1, x)), zero, d));
  return out;
}

VJP castVJP(CastOp op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  auto in = GradBuilder::typeOf(op.getInput());
  if (!needed[0] || !isa<FloatType>(in.getElementType()))
    return out;
  if (!isa<FloatType>(op.getType().getElementType()))
    return out; // float -> integer: piecewise constant, gradient zero
  out[0] = CastOp::create(g.builder(), op.getLoc(), in, grads[0]);
  return out;
}

/// The gradients of `lhs op rhs` before summing back to the operands' shapes.
using BinaryRule = std::pair<Value, Value> (*)(GradBuilder &, Value lhs,
                                               Value rhs, Value y, Value dy,
                                               ArrayRef<bool> needed);

template <class OpT, BinaryRule Rule>
VJP binaryVJP(OpT op, GradBuilder &g, ValueRange grads, ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  auto [dl, dr] = Rule(g, lhs, rhs, op->getResult(0), grads[0], needed);
  if (needed[0])
    out[0] = g.sumTo(dl, GradBuilder::typeOf(lhs));
  if (needed[1])
    out[1] = g.sumTo(dr, GradBuilder::typeOf(rhs));
  return out;
}

std::pair<Value, Value> addRule(GradBuilder &, Value, Value, Value, Value dy,
                                ArrayRef<bool>) {
  return {dy, dy};
}
std::pair<Value, Value> subRule(GradBuilder &g, Value, Value, Value, Value dy,
                                ArrayRef<bool> needed) {
  return {dy, needed[1] ? g.neg(dy) : Value()};
}
std::pair<Value, Value> mulRule(GradBuilder &g, Value l, Value r, Value,
                                Value dy, ArrayRef<bool> needed) {
  return {needed[0] ? g.mul(dy, r) : Value(),
          needed[1] ? g.mul(dy, l) : Value()};
}
std::pair<Value, Value> divRule(GradBuilder &g, Value, Value r, Value y,
                                Value dy, ArrayRef<bool> needed) {
  Value dl = g.div(dy, r);
  return {dl, needed[1] ? g.neg(g.mul(dl, y)) : Value()};
}
std::pair<Value, Value> maxRule(GradBuilder &g, Value l, Value r, Value,
                                Value dy, ArrayRef<bool>) {
  Value left = g.greaterEqual(l, r); // ties go to the left operand
  Value zero = g.scalarLike(0, dy);
  return {g.select(left, dy, zero), g.select(left, zero, dy)};
}
std::pair<Value, Value> minRule(GradBuilder &g, Value l, Value r, Value,
                                Value dy, ArrayRef<bool>) {
  Value left = g.greaterEqual(r, l);
  Value zero = g.scalarLike(0, dy);
  return {g.select(left, dy, zero), g.select(left, zero, dy)};
}
std::pair<Value, Value> powRule(GradBuilder &g, Value l, Value r, Value y,
                                Value dy, ArrayRef<bool> needed) {
  // d/dl l^r = r l^(r-1); d/dr l^r = ln(l) l^r (defined for l > 0).
  Value dl, dr;
  if (needed[0])
    dl = g.mul(dy, g.mul(r, g.pow(l, g.sub(r, g.scalarLike(1, r)))));
  if (needed[1])
    dr = g.mul(dy, g.mul(g.log(l), y));
  return {dl, dr};
}

std::pair<Value, Value> modRule(GradBuilder &g, Value l, Value r, Value y,
                                Value dy, ArrayRef<bool> needed) {
  // y = l - r * q with q = trunc(l / r) (fmod; floor for integers, which
  // carry no gradient), constant between jumps: dy/dl = 1, dy/dr = -q, and
  // q = (l - y) / r.
  return {dy, needed[1] ? g.neg(g.mul(dy, g.div(g.sub(l, y), r))) : Value()};
}

VJP selectVJP(SelectOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  Value c = op->getOperand(0), dy = grads[0], zero = g.scalarLike(0, dy);
  if (needed[1])
    out[1] = g.sumTo(g.select(c, dy, zero),
                     GradBuilder::typeOf(op->getOperand(1)));
  if (needed[2])
    out[2] = g.sumTo(g.select(c, zero, dy),
                     GradBuilder::typeOf(op->getOperand(2)));
  return out;
}

} // namespace

void loom::tg::autodiff::attachElementwiseGradients(MLIRContext *context) {
  attachGradient<ReluOp, unaryVJP<ReluOp, reluRule>>(context);
  attachGradient<SigmoidOp, unaryVJP<SigmoidOp, sigmoidRule>>(context);
  attachGradient<TanhOp, unaryVJP<TanhOp, tanhRule>>(context);
  attachGradient<ExpOp, unaryVJP<ExpOp, expRule>>(context);
  attachGradient<LogOp, unaryVJP<LogOp, logRule>>(context);
  attachGradient<SqrtOp, unaryVJP<SqrtOp, sqrtRule>>(context);
  attachGradient<RsqrtOp, unaryVJP<RsqrtOp, rsqrtRule>>(context);
  attachGradient<NegOp, unaryVJP<NegOp, negRule>>(context);
  attachGradient<ErfOp, unaryVJP<ErfOp, erfRule>>(context);
  attachGradient<SoftplusOp, unaryVJP<SoftplusOp, softplusRule>>(context);
  attachGradient<HardSwishOp, unaryVJP<HardSwishOp, hardswishRule>>(context);
  attachGradient<RoundTF32Op, unaryVJP<RoundTF32Op, roundTF32Rule>>(context);
  attachGradient<GeluOp, geluVJP>(context);
  attachGradient<ClipOp, clipVJP>(context);
  attachGradient<HardSigmoidOp, hardsigmoidVJP>(context);
  attachGradient<CastOp, castVJP>(context);
  attachGradient<AddOp, binaryVJP<AddOp, addRule>>(context);
  attachGradient<SubOp, binaryVJP<SubOp, subRule>>(context);
  attachGradient<MulOp, binaryVJP<MulOp, mulRule>>(context);
  attachGradient<DivOp, binaryVJP<DivOp, divRule>>(context);
  attachGradient<MaxOp, binaryVJP<MaxOp, maxRule>>(context);
  attachGradient<MinOp, binaryVJP<MinOp, minRule>>(context);
  attachGradient<PowOp, binaryVJP<PowOp, powRule>>(context);
  attachGradient<ModOp, binaryVJP<ModOp, modRule>>(context);
  attachGradient<SelectOp, selectVJP>(context);
}
