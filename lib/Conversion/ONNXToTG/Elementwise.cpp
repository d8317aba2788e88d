//===- Elementwise.cpp - ONNX elementwise operators to tg -----------------===//
//
// Part of Loom. Arithmetic (Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean,
// Mod), unary functions and activations. Operators tg has are mapped one to one;
// the others are short exact decompositions (Abs = max(x, -x), LeakyRelu =
// relu(x) - alpha * relu(-x), ...). On values known at import time (shape
// computations) every operator here is evaluated by the importer, integers
// included; on run-time values tg's arithmetic is floating-point only, except
// tg.mod, which takes integers too.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Interpreter/Precision.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

//===----------------------------------------------------------------------===//
// Binary and variadic arithmetic
//===----------------------------------------------------------------------===//

enum class Arith { Add, Sub, Mul, Div, Pow, Max, Min };

/// Calls \p fn with the domain (interp::F32Domain or F64Domain) in which
/// compile time computes an op of ONNX element type \p dataType
/// (interp::foldDomainFor, docs/Interpreter.md "Compile-time evaluation"):
/// float for float, float16 and bfloat16, as tg's ops compute at run time.
template <class Fn> double inFoldDomain(int32_t dataType, Fn &&fn) {
  std::optional<ElemKind> kind = elemKindOfONNX(dataType);
  interp::FoldDomain domain =
      kind ? interp::foldDomainFor({*kind}, /*convertsOnly=*/false)
           : interp::FoldDomain::F64;
  switch (domain) {
  case interp::FoldDomain::F32:
    return fn(interp::F32Domain{});
  case interp::FoldDomain::F64:
    return fn(interp::F64Domain{});
  }
  llvm_unreachable("unknown FoldDomain");
}

/// The interpreter's operator of \p k.
interp::BinaryKind binaryKindOf(Arith k) {
  switch (k) {
  case Arith::Add:
    return interp::BinaryKind::Add;
  case Arith::Sub:
    return interp::BinaryKind::Sub;
  case Arith::Mul:
    return interp::BinaryKind::Mul;
  case Arith::Div:
    return interp::BinaryKind::Div;
  case Arith::Pow:
    return interp::BinaryKind::Pow;
  case Arith::Max:
    return interp::BinaryKind::Max;
  case Arith::Min:
    return interp::BinaryKind::Min;
  }
  llvm_unreachable("unknown Arith");
}

/// Arithmetic \p k on known float values of ONNX element type \p dataType:
/// the interpreter's definition, in the type's fold domain (inFoldDomain;
/// the result is rounded to the type after).
double foldArith(Arith k, int32_t dataType, double a, double b) {
  return inFoldDomain(dataType, [&](auto domain) {
    using D = decltype(domain);
    return D::toDouble(interp::binaryScalar<D>(
        binaryKindOf(k), D::fromDouble(a), D::fromDouble(b)));
  });
}

int64_t foldArithInt(Arith k, int64_t a, int64_t b) {
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (k) {
  case Arith::Add:
    return static_cast<int64_t>(u(a) + u(b));
  case Arith::Sub:
    return static_cast<int64_t>(u(a) - u(b));
  case Arith::Mul:
    return static_cast<int64_t>(u(a) * u(b));
  case Arith::Div:
    // Truncating, as ONNX's reference; x / 0 is undefined there, 0 here.
    if (b == 0 || (a == INT64_MIN && b == -1))
      return 0;
    return a / b;
  case Arith::Pow:
    return static_cast<int64_t>(
        std::pow(static_cast<double>(a), static_cast<double>(b)));
  case Arith::Max:
    return std::max(a, b);
  case Arith::Min:
    return std::min(a, b);
  }
  return 0;
}

FailureOr<Value> buildArith(NodeContext &ctx, Arith k, Value a, Value b) {
  switch (k) {
  case Arith::Add:
    return ctx.create<tg::AddOp>({a, b});
  case Arith::Sub:
    return ctx.create<tg::SubOp>({a, b});
  case Arith::Mul:
    return ctx.create<tg::MulOp>({a, b});
  case Arith::Div:
    return ctx.create<tg::DivOp>({a, b});
  case Arith::Pow:
    return ctx.create<tg::PowOp>({a, b});
  case Arith::Max:
    return ctx.create<tg::MaxOp>({a, b});
  case Arith::Min:
    return ctx.create<tg::MinOp>({a, b});
  }
  return failure();
}

/// Integer arithmetic on run-time values (what exporters write for index
/// arithmetic, e.g. torchvision's `topk_idxs // num_classes`): tg's
/// arithmetic is on floats, so the operands go through f64, exact for
/// magnitudes below 2^53; Div truncates as ONNX's reference does (the cast
/// back truncates), and x / 0 is 0, as when folded. Max and Min compare.
FailureOr<Value> buildIntegerArith(NodeContext &ctx, Arith k, Value a,
                                   Value b) {
  Type e = cast<RankedTensorType>(a.getType()).getElementType();
  Type f64 = Float64Type::get(ctx.context());
  OpChain c{ctx, f64};
  if (k == Arith::Max || k == Arith::Min) {
    auto less = ctx.create<tg::LessOp>({a, b});
    return k == Arith::Min ? c.select(less, a, b) : c.select(less, b, a);
  }
  auto x = c.cast(a, f64), y = c.cast(b, f64);
  if (k != Arith::Div)
    return c.cast(buildArith(ctx, k, *x, *y), e);
  if (failed(y))
    return failure();
  auto zero = ctx.create<tg::EqualOp>({*y, c.c(0)});
  auto q = c.cast(c.bin<tg::DivOp>(x, c.select(zero, c.c(1), *y)), e);
  return c.select(zero, ctx.scalar(e, 0), q);
}

/// Add, Sub, Mul, Div, Pow (two inputs) and Sum, Max, Min, Mean (one or
/// more), with numpy broadcasting.
LogicalResult importArith(NodeContext &ctx, Arith k, bool mean = false) {
  unsigned n = ctx.numInputs();
  if (n == 0)
    return ctx.fail("needs at least one input");
  for (unsigned i = 0; i < n; ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is missing");
  int32_t dataType = ctx.inputDataType(0);
  for (unsigned i = 1; i < n; ++i)
    if (k != Arith::Pow && ctx.inputDataType(i) != dataType)
      return ctx.fail("inputs have different element types (" +
                      onnxutil::dataTypeName(dataType) + " and " +
                      onnxutil::dataTypeName(ctx.inputDataType(i)) + ")");
  for (unsigned i = 1; i < n; ++i)
    if (!broadcastHostShapes(ctx.inputShape(0), ctx.inputShape(i)))
      return ctx.fail("input shapes " +
                      safetensors::formatShape(ctx.inputShape(0)) + " and " +
                      safetensors::formatShape(ctx.inputShape(i)) +
                      " do not broadcast");

  if (ctx.allConstant()) {
    HostTensor acc = *ctx.constant(0);
    for (unsigned i = 1; i < n; ++i) {
      auto shape = broadcastHostShapes(acc.shape, ctx.constant(i)->shape);
      if (!shape)
        return ctx.fail("input shapes do not broadcast");
      acc = binaryHost(
          acc, *ctx.constant(i), dataType,
          [&](double a, double b) { return foldArith(k, dataType, a, b); },
          [k](int64_t a, int64_t b) { return foldArithInt(k, a, b); });
    }
    if (mean) {
      HostTensor count = HostTensor::splat(dataType, {}, n);
      acc = binaryHost(
          acc, count, dataType, [](double a, double b) { return a / b; },
          [](int64_t a, int64_t b) { return a / b; });
    }
    ctx.setOutput(0, std::move(acc));
    return success();
  }

  // Integer Pow stays refused: tg.pow of f64 need not be exact on integers
  // (compiled, it is exp(y log x)), and truncating 8.9999... gives 8.
  bool integer = !onnxutil::isFloatDataType(dataType);
  if (integer && k == Arith::Pow)
    return ctx.fail(onnxutil::dataTypeName(dataType) +
                    " Pow on values not known at import time is not "
                    "supported (tg arithmetic is floating-point)");
  auto acc = ctx.input(0);
  if (failed(acc))
    return failure();
  Value result = *acc;
  for (unsigned i = 1; i < n; ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    Value rhs = *v;
    if (k == Arith::Pow) {
      auto c = ctx.convert(
          rhs, cast<RankedTensorType>(result.getType()).getElementType());
      if (failed(c))
        return failure();
      rhs = *c;
    }
    auto r = integer ? buildIntegerArith(ctx, k, result, rhs)
                     : buildArith(ctx, k, result, rhs);
    if (failed(r))
      return failure();
    result = *r;
  }
  if (mean && n > 1) {
    // An integer mean truncates, as when folded.
    Type e = cast<RankedTensorType>(result.getType()).getElementType();
    Value count = ctx.scalar(e, n);
    auto r = integer ? buildIntegerArith(ctx, Arith::Div, result, count)
                     : ctx.create<tg::DivOp>({result, count});
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

/// Mod as tg.mod: fmod 0 (integers; the divisor's sign) or 1 (C fmod),
/// with numpy broadcasting. Folded when both inputs are known, with the
/// interpreter's definitions (Domain.h): the float domain's for floats, the
/// exact domain's integer remainders for integers (exact below 2^60 in
/// magnitude, far beyond the shape arithmetic Mod folds in models).
LogicalResult importMod(NodeContext &ctx) {
  if (ctx.numInputs() != 2 || !ctx.hasInput(0) || !ctx.hasInput(1))
    return ctx.fail("needs two inputs");
  int64_t fmod = ctx.getInt("fmod", 0);
  if (fmod != 0 && fmod != 1)
    return ctx.fail("fmod must be 0 or 1, got " + Twine(fmod));
  int32_t dataType = ctx.inputDataType(0);
  if (ctx.inputDataType(1) != dataType)
    return ctx.fail("inputs have different element types (" +
                    onnxutil::dataTypeName(dataType) + " and " +
                    onnxutil::dataTypeName(ctx.inputDataType(1)) + ")");
  if (onnxutil::isFloatDataType(dataType) && fmod == 0)
    return ctx.fail("float inputs need fmod = 1");
  if (!broadcastHostShapes(ctx.inputShape(0), ctx.inputShape(1)))
    return ctx.fail("input shapes " +
                    safetensors::formatShape(ctx.inputShape(0)) + " and " +
                    safetensors::formatShape(ctx.inputShape(1)) +
                    " do not broadcast");
  if (ctx.allConstant()) {
    using F = interp::F64Domain;
    using Z = interp::ModPDomain;
    ctx.setOutput(
        0, binaryHost(
               *ctx.constant(0), *ctx.constant(1), dataType,
               [&](double a, double b) {
                 return fmod ? F::fmod(a, b) : F::mod(a, b);
               },
               [&](int64_t a, int64_t b) {
                 Z::T x = Z::fromInt(a), y = Z::fromInt(b);
                 return Z::centered(fmod ? Z::fmod(x, y) : Z::mod(x, y));
               }));
    return success();
  }
  auto lhs = ctx.input(0), rhs = ctx.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto r = ctx.create<tg::ModOp>(
      {*lhs, *rhs},
      {ctx.namedAttr("fmod", ctx.builder().getBoolAttr(fmod == 1))});
  if (failed(r))
    return failure();
  ctx.setOutput(0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Unary functions
//===----------------------------------------------------------------------===//

/// Folds \p fn (of a known element and the input's ONNX element type) on a
/// known input, float or, with \p intOk, integer; returns false when the
/// input is not known. The result is rounded to the input's type.
bool foldUnaryWith(NodeContext &ctx,
                   llvm::function_ref<double(double, int32_t)> fn,
                   bool intOk) {
  const HostTensor *t = ctx.constant(0);
  if (!t || (!t->isFloat() && !intOk))
    return false;
  HostTensor out = *t;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    if (out.isFloat())
      out.floats[i] = fn(out.floats[i], out.dataType);
    else
      out.ints[i] = static_cast<int64_t>(
          fn(static_cast<double>(out.ints[i]), out.dataType));
  }
  onnxutil::roundToDataType(out);
  ctx.setOutput(0, std::move(out));
  return true;
}

/// Folds a unary function that is exact in any precision (floor, abs,
/// neg, ...; one rounding to the type after) on a known input.
bool foldUnary(NodeContext &ctx, double (*fn)(double), bool intOk = false) {
  return foldUnaryWith(
      ctx, [&](double v, int32_t) { return fn(v); }, intOk);
}

/// Folds tg's unary \p kind (the interpreter's definition) on a known
/// float input in its fold domain (inFoldDomain): exp and log of a float
/// in float, as tg.exp and tg.log compute at run time.
bool foldUnary(NodeContext &ctx, interp::UnaryKind kind) {
  return foldUnaryWith(
      ctx,
      [&](double v, int32_t dataType) {
        return inFoldDomain(dataType, [&](auto domain) {
          using D = decltype(domain);
          return D::toDouble(interp::unaryScalar<D>(kind, D::fromDouble(v)));
        });
      },
      /*intOk=*/false);
}

/// The float input 0, or an error naming its element type.
FailureOr<Value> floatInput(NodeContext &ctx, unsigned i = 0) {
  if (!ctx.hasInput(i))
    return ctx.fail("input " + Twine(i) + " is required");
  if (failed(ctx.requireFloatInput(i)))
    return failure();
  return ctx.input(i);
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// One tg unary op, input -> output.
template <typename OpT> LogicalResult importUnary(NodeContext &ctx) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  auto y = ctx.createTyped<OpT>(x->getType(), *x);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// Runs `build` on the float input and sets its result as output 0.
LogicalResult
importUnaryWith(NodeContext &ctx,
                llvm::function_ref<FailureOr<Value>(Value, Type)> build) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  auto y = build(*x, elementTypeOf(*x));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

template <typename OpT>
FailureOr<Value> un(NodeContext &ctx, FailureOr<Value> x) {
  if (failed(x))
    return failure();
  return ctx.createTyped<OpT>(x->getType(), *x);
}

template <typename OpT>
FailureOr<Value> bin(NodeContext &ctx, FailureOr<Value> a, FailureOr<Value> b) {
  if (failed(a) || failed(b))
    return failure();
  return ctx.create<OpT>({*a, *b});
}

/// Runs `build` on input 0 and sets its result as output 0: a float as it
/// is, an integer (PyTorch's `-idx`, `idx.abs()`) in f64 and cast back,
/// exact below 2^53 as the integer arithmetic is.
LogicalResult
importNumberUnaryWith(NodeContext &ctx,
                      llvm::function_ref<FailureOr<Value>(Value, Type)> build) {
  if (!ctx.hasInput(0) || ctx.isFloatInput(0))
    return importUnaryWith(ctx, build);
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Type f64 = ctx.builder().getF64Type();
  auto wide = ctx.convert(*x, f64);
  if (failed(wide))
    return failure();
  auto y = build(*wide, f64);
  if (succeeded(y))
    y = ctx.convert(*y, elementTypeOf(*x));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// relu(x) - alpha * relu(-x): x for x >= 0, alpha * x below (exact).
FailureOr<Value> leakyRelu(NodeContext &ctx, Value x, Value alpha) {
  auto pos = un<tg::ReluOp>(ctx, x);
  auto negPart = un<tg::ReluOp>(ctx, un<tg::NegOp>(ctx, x));
  return bin<tg::SubOp>(ctx, pos, bin<tg::MulOp>(ctx, alpha, negPart));
}

/// elu(x) = relu(x) + alpha * (exp(min(x, 0)) - 1).
FailureOr<Value> elu(NodeContext &ctx, Value x, Type e, double alpha) {
  auto pos = un<tg::ReluOp>(ctx, x);
  auto below = bin<tg::MinOp>(ctx, x, ctx.scalar(e, 0));
  auto em1 = bin<tg::SubOp>(ctx, un<tg::ExpOp>(ctx, below), ctx.scalar(e, 1));
  return bin<tg::AddOp>(ctx, pos,
                        bin<tg::MulOp>(ctx, ctx.scalar(e, alpha), em1));
}

LogicalResult importClip(NodeContext &ctx) {
  // Integer inputs (PyTorch's `indices.clamp(0, n)`) compare as
  // buildIntegerArith's Max and Min do; tg.clip is for floats.
  bool integer = ctx.hasInput(0) && !ctx.isFloatInput(0);
  auto x = integer ? ctx.input(0) : floatInput(ctx);
  if (failed(x))
    return failure();
  Type e = elementTypeOf(*x);
  // Bounds: attributes before opset 11, optional inputs since.
  std::optional<double> lo, hi;
  Value loValue, hiValue;
  if (ctx.opset() < 11) {
    lo = ctx.getFloat("min", -INFINITY);
    hi = ctx.getFloat("max", INFINITY);
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!ctx.hasInput(i))
        continue;
      std::optional<double> &bound = i == 1 ? lo : hi;
      if (const HostTensor *t = ctx.known(i)) {
        if (t->numElements() != 1)
          return ctx.fail("the bounds of Clip must be scalars");
        bound = t->asDouble(0);
        continue;
      }
      auto v = ctx.input(i);
      if (failed(v))
        return failure();
      auto c = ctx.convert(*v, e);
      if (failed(c))
        return failure();
      (i == 1 ? loValue : hiValue) = *c;
    }
  }
  Value result = *x;
  // Bounds known at import time and in order: one tg.clip.
  if (!integer && !loValue && !hiValue &&
      lo.value_or(-INFINITY) <= hi.value_or(INFINITY) &&
      !std::isnan(lo.value_or(0)) && !std::isnan(hi.value_or(0))) {
    if (lo || hi) {
      auto r = ctx.createTyped<tg::ClipOp>(
          x->getType(), *x,
          {ctx.f64Attr("min", lo.value_or(-INFINITY)),
           ctx.f64Attr("max", hi.value_or(INFINITY))});
      if (failed(r))
        return failure();
      result = *r;
    }
    ctx.setOutput(0, result);
    return success();
  }
  // Otherwise min(max(x, lo), hi), which is what ONNX specifies.
  if (lo)
    loValue = ctx.scalar(e, *lo);
  if (hi)
    hiValue = ctx.scalar(e, *hi);
  for (auto [k, bound] : {std::pair(Arith::Max, loValue),
                           std::pair(Arith::Min, hiValue)}) {
    if (!bound)
      continue;
    auto r = integer ? buildIntegerArith(ctx, k, result, bound)
                     : buildArith(ctx, k, result, bound);
    if (failed(r))
      return failure();
    result = *r;
  }
  ctx.setOutput(0, result);
  return success();
}

LogicalResult importPRelu(NodeContext &ctx) {
  auto x = floatInput(ctx);
  auto slope = floatInput(ctx, 1);
  if (failed(x) || failed(slope))
    return failure();
  // Models from before opset 7 give a slope of [C] for channels on dim 1,
  // which numpy broadcasting would align with the last dimension instead.
  llvm::ArrayRef<int64_t> xs = ctx.inputShape(0), ss = ctx.inputShape(1);
  auto shape = broadcastHostShapes(xs, ss);
  if ((!shape || llvm::ArrayRef<int64_t>(*shape) != xs) && ss.size() == 1 &&
      xs.size() > 2 && ss[0] == xs[1]) {
    SmallVector<int64_t> channels(xs.size() - 1, 1);
    channels[0] = ss[0];
    slope = ctx.reshape(*slope, channels);
    if (failed(slope))
      return failure();
  }
  auto y = leakyRelu(ctx, *x, *slope);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

double roundHalfEven(double v) { return std::nearbyint(v); }
double signOf(double v) { return v > 0 ? 1 : v < 0 ? -1 : v; }
double absOf(double v) { return std::fabs(v); }
double negOf(double v) { return -v; }
double reciprocalOf(double v) { return 1 / v; }
double reluOf(double v) { return v > 0 ? v : 0; }
double floorOf(double v) { return std::floor(v); }
double ceilOf(double v) { return std::ceil(v); }
double sqrtOf(double v) { return std::sqrt(v); }

/// Floor, Ceil and Round: folded when known, otherwise computed from
/// tg.mod (floorAtRunTime and its siblings). Their inputs are floats.
template <double (*Fn)(double),
          FailureOr<Value> (*AtRunTime)(OpChain &, Value)>
LogicalResult importRounding(NodeContext &ctx) {
  if (foldUnary(ctx, Fn))
    return success();
  return importUnaryWith(ctx, [&](Value x, Type e) {
    OpChain b{ctx, e};
    return AtRunTime(b, x);
  });
}

/// Sign: folded when known; otherwise 1, -1 or the value itself (zero, NaN)
/// by two comparisons. Any number type.
LogicalResult importSign(NodeContext &ctx) {
  if (foldUnary(ctx, signOf, /*intOk=*/true))
    return success();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  OpChain b{ctx, elementTypeOf(*x)};
  auto zero = b.c(0);
  auto y = b.select(b.bin<tg::GreaterOp>(*x, zero), b.c(1),
                    b.select(b.bin<tg::LessOp>(*x, zero), b.c(-1), *x));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

//===----------------------------------------------------------------------===//
// Trigonometric and hyperbolic functions at run time
//===----------------------------------------------------------------------===//
//
// tg has no trigonometric ops: each function is computed in f64 from tg
// arithmetic (fmod for the range reduction, Horner polynomials, exp, log,
// sqrt) and cast back, well below f32's rounding. Known inputs are folded.

/// `sum_k c[k] * t^k` by Horner's rule.
FailureOr<Value> horner(OpChain &b, FailureOr<Value> t, ArrayRef<double> c) {
  FailureOr<Value> acc = b.c(c.back());
  for (double k : llvm::reverse(c.drop_back()))
    acc = b.bin<tg::AddOp>(b.bin<tg::MulOp>(acc, t), b.c(k));
  return acc;
}

/// sin(s) for |s| <= pi/2: its Taylor series to s^19 (error < 1e-13).
FailureOr<Value> sinNear(OpChain &b, FailureOr<Value> s) {
  SmallVector<double> c;
  double term = 1;
  for (int k = 0; k < 10; ++k) {
    c.push_back(term);
    term /= -double((2 * k + 2) * (2 * k + 3));
  }
  return b.bin<tg::MulOp>(s, horner(b, b.bin<tg::MulOp>(s, s), c));
}

/// x reduced to about [-pi, pi]: fmod by C1 = 6.28125 (exact, and n * C1
/// too for n < 2^16 turns, in f32 as in f64), less n (2 pi - C1), then one
/// turn back (Cody and Waite's reduction: the interpreter's f32 domain
/// computes these f64 ops in f32 and keeps its accuracy).
FailureOr<Value> turnReduced(OpChain &b, Value x) {
  constexpr double c1 = 6.28125, c2 = 2 * M_PI - c1;
  auto byC1 =
      b.ctx.create<tg::ModOp>({x, b.c(c1)}, {b.ctx.boolAttr("fmod", true)});
  auto turns = b.bin<tg::DivOp>(b.bin<tg::SubOp>(x, byC1), b.c(c1));
  auto r = b.bin<tg::SubOp>(byC1, b.bin<tg::MulOp>(turns, b.c(c2)));
  return b.select(b.bin<tg::GreaterOp>(r, b.c(M_PI)),
                  b.bin<tg::SubOp>(r, b.c(2 * M_PI)),
                  b.select(b.bin<tg::LessOp>(r, b.c(-M_PI)),
                           b.bin<tg::AddOp>(r, b.c(2 * M_PI)), r));
}

FailureOr<Value> sinF64(OpChain &b, Value x) {
  auto r = turnReduced(b, x);
  // sin(r) = sin(pi - r) = sin(-pi - r): folded into [-pi/2, pi/2].
  auto s = b.select(b.bin<tg::GreaterOp>(r, b.c(M_PI_2)),
                    b.bin<tg::SubOp>(b.c(M_PI), r),
                    b.select(b.bin<tg::LessOp>(r, b.c(-M_PI_2)),
                             b.bin<tg::SubOp>(b.c(-M_PI), r), r));
  return sinNear(b, s);
}

FailureOr<Value> cosF64(OpChain &b, Value x) {
  // cos(r) = sin(pi/2 - |r|), |r| <= pi.
  auto r = turnReduced(b, x);
  auto magnitude =
      b.select(b.bin<tg::LessOp>(r, b.c(0)), b.un<tg::NegOp>(r), r);
  return sinNear(b, b.bin<tg::SubOp>(b.c(M_PI_2), magnitude));
}

/// atan(x): |x| > 1 as pi/2 - atan(1/|x|), t > tan(pi/8) as pi/4 +
/// atan((t - 1) / (t + 1)), leaving |u| <= tan(pi/8) for the series to
/// u^33 (error < 1e-13); the sign restored last.
FailureOr<Value> atanF64(OpChain &b, FailureOr<Value> x) {
  if (failed(x))
    return failure();
  auto negative = b.bin<tg::LessOp>(*x, b.c(0));
  auto a = b.select(negative, b.un<tg::NegOp>(*x), *x);
  auto inverted = b.bin<tg::GreaterOp>(a, b.c(1));
  auto t = b.select(inverted, b.bin<tg::DivOp>(b.c(1), a), a);
  auto shifted = b.bin<tg::GreaterOp>(t, b.c(0.41421356237309503));
  auto u = b.select(shifted,
                    b.bin<tg::DivOp>(b.bin<tg::SubOp>(t, b.c(1)),
                                     b.bin<tg::AddOp>(t, b.c(1))),
                    t);
  SmallVector<double> c;
  for (int k = 0; k < 17; ++k)
    c.push_back((k % 2 ? -1.0 : 1.0) / double(2 * k + 1));
  auto series = b.bin<tg::MulOp>(u, horner(b, b.bin<tg::MulOp>(u, u), c));
  auto inner = b.select(shifted, b.bin<tg::AddOp>(series, b.c(M_PI_4)), series);
  auto outer = b.select(inverted, b.bin<tg::SubOp>(b.c(M_PI_2), inner), inner);
  return b.select(negative, b.un<tg::NegOp>(outer), outer);
}

/// sqrt((1 - x) (1 + x)), exact near |x| = 1 where 1 - x^2 is not.
FailureOr<Value> cosOfArcsin(OpChain &b, Value x) {
  return b.un<tg::SqrtOp>(b.bin<tg::MulOp>(b.bin<tg::SubOp>(b.c(1), x),
                                           b.bin<tg::AddOp>(b.c(1), x)));
}

enum class Trig {
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh
};

FailureOr<Value> trigF64(OpChain &b, Trig fn, Value x) {
  switch (fn) {
  case Trig::Sin:
    return sinF64(b, x);
  case Trig::Cos:
    return cosF64(b, x);
  case Trig::Tan:
    return b.bin<tg::DivOp>(sinF64(b, x), cosF64(b, x));
  case Trig::Asin:
    return atanF64(b, b.bin<tg::DivOp>(x, cosOfArcsin(b, x)));
  case Trig::Acos: // 2 atan(sqrt((1 - x) / (1 + x)))
    return b.bin<tg::MulOp>(
        b.c(2), atanF64(b, b.un<tg::SqrtOp>(
                               b.bin<tg::DivOp>(b.bin<tg::SubOp>(b.c(1), x),
                                                b.bin<tg::AddOp>(b.c(1), x)))));
  case Trig::Atan:
    return atanF64(b, x);
  case Trig::Sinh:
  case Trig::Cosh: {
    auto up = b.un<tg::ExpOp>(x);
    auto down = b.un<tg::ExpOp>(b.un<tg::NegOp>(x));
    if (fn == Trig::Cosh)
      return b.bin<tg::MulOp>(b.c(0.5), b.bin<tg::AddOp>(up, down));
    // Below 1/8 in magnitude, the series to x^9 (no cancellation).
    auto series = b.bin<tg::MulOp>(
        x, horner(b, b.bin<tg::MulOp>(x, x),
                  {1.0, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880}));
    auto small = b.bin<tg::LessOp>(b.bin<tg::MulOp>(x, x), b.c(1.0 / 64));
    return b.select(small, series,
                    b.bin<tg::MulOp>(b.c(0.5), b.bin<tg::SubOp>(up, down)));
  }
  case Trig::Asinh: { // sign(x) log(|x| + sqrt(x^2 + 1))
    auto negative = b.bin<tg::LessOp>(x, b.c(0));
    auto a = b.select(negative, b.un<tg::NegOp>(x), x);
    auto y = b.un<tg::LogOp>(b.bin<tg::AddOp>(
        a, b.un<tg::SqrtOp>(b.bin<tg::AddOp>(b.bin<tg::MulOp>(a, a), b.c(1)))));
    return b.select(negative, b.un<tg::NegOp>(y), y);
  }
  case Trig::Acosh: // log(x + sqrt((x - 1) (x + 1)))
    return b.un<tg::LogOp>(b.bin<tg::AddOp>(
        x, b.un<tg::SqrtOp>(b.bin<tg::MulOp>(b.bin<tg::SubOp>(x, b.c(1)),
                                             b.bin<tg::AddOp>(x, b.c(1))))));
  case Trig::Atanh: // log((1 + x) / (1 - x)) / 2
    return b.bin<tg::MulOp>(b.c(0.5), b.un<tg::LogOp>(b.bin<tg::DivOp>(
                                          b.bin<tg::AddOp>(b.c(1), x),
                                          b.bin<tg::SubOp>(b.c(1), x))));
  }
  llvm_unreachable("unknown Trig");
}

template <Trig Fn, double (*Fold)(double)>
LogicalResult importTrig(NodeContext &ctx) {
  if (foldUnary(ctx, Fold))
    return success();
  return importUnaryWith(ctx, [&](Value x, Type e) -> FailureOr<Value> {
    Type f64 = ctx.builder().getF64Type();
    OpChain b{ctx, f64};
    auto wide = ctx.convert(x, f64);
    if (failed(wide))
      return failure();
    return b.cast(trigF64(b, Fn, *wide), e);
  });
}

double sinOf(double v) { return std::sin(v); }
double cosOf(double v) { return std::cos(v); }
double tanOf(double v) { return std::tan(v); }
double asinOf(double v) { return std::asin(v); }
double acosOf(double v) { return std::acos(v); }
double atanOf(double v) { return std::atan(v); }
double sinhOf(double v) { return std::sinh(v); }
double coshOf(double v) { return std::cosh(v); }
double asinhOf(double v) { return std::asinh(v); }
double acoshOf(double v) { return std::acosh(v); }
double atanhOf(double v) { return std::atanh(v); }

} // namespace

void onnx_to_tg::populateElementwiseHandlers(HandlerTable &table) {
  table["Sin"] = importTrig<Trig::Sin, sinOf>;
  table["Cos"] = importTrig<Trig::Cos, cosOf>;
  table["Tan"] = importTrig<Trig::Tan, tanOf>;
  table["Asin"] = importTrig<Trig::Asin, asinOf>;
  table["Acos"] = importTrig<Trig::Acos, acosOf>;
  table["Atan"] = importTrig<Trig::Atan, atanOf>;
  table["Sinh"] = importTrig<Trig::Sinh, sinhOf>;
  table["Cosh"] = importTrig<Trig::Cosh, coshOf>;
  table["Asinh"] = importTrig<Trig::Asinh, asinhOf>;
  table["Acosh"] = importTrig<Trig::Acosh, acoshOf>;
  table["Atanh"] = importTrig<Trig::Atanh, atanhOf>;
  table["Add"] = [](NodeContext &c) { return importArith(c, Arith::Add); };
  table["Sub"] = [](NodeContext &c) { return importArith(c, Arith::Sub); };
  table["Mul"] = [](NodeContext &c) { return importArith(c, Arith::Mul); };
  table["Div"] = [](NodeContext &c) { return importArith(c, Arith::Div); };
  table["Pow"] = [](NodeContext &c) { return importArith(c, Arith::Pow); };
  table["Max"] = [](NodeContext &c) { return importArith(c, Arith::Max); };
  table["Min"] = [](NodeContext &c) { return importArith(c, Arith::Min); };
  table["Mod"] = importMod;
  table["Sum"] = [](NodeContext &c) { return importArith(c, Arith::Add); };
  table["Mean"] = [](NodeContext &c) {
    return importArith(c, Arith::Add, /*mean=*/true);
  };

  table["Relu"] = [](NodeContext &c) -> LogicalResult {
    if (foldUnary(c, reluOf, /*intOk=*/true))
      return success();
    return importNumberUnaryWith(
        c, [&](Value x, Type) { return un<tg::ReluOp>(c, x); });
  };
  table["Sigmoid"] = importUnary<tg::SigmoidOp>;
  table["Tanh"] = importUnary<tg::TanhOp>;
  table["Exp"] = [](NodeContext &c) {
    return foldUnary(c, interp::UnaryKind::Exp) ? success()
                                                : importUnary<tg::ExpOp>(c);
  };
  table["Log"] = [](NodeContext &c) {
    return foldUnary(c, interp::UnaryKind::Log) ? success()
                                                : importUnary<tg::LogOp>(c);
  };
  table["Sqrt"] = [](NodeContext &c) {
    return foldUnary(c, sqrtOf) ? success() : importUnary<tg::SqrtOp>(c);
  };
  table["Erf"] = importUnary<tg::ErfOp>;
  table["HardSwish"] = importUnary<tg::HardSwishOp>;
  table["Neg"] = [](NodeContext &c) -> LogicalResult {
    if (foldUnary(c, negOf, true))
      return success();
    return importNumberUnaryWith(
        c, [&](Value x, Type) { return un<tg::NegOp>(c, x); });
  };
  table["Abs"] = [](NodeContext &c) -> LogicalResult {
    if (foldUnary(c, absOf, true))
      return success();
    return importNumberUnaryWith(c, [&](Value x, Type) {
      return bin<tg::MaxOp>(c, x, un<tg::NegOp>(c, x));
    });
  };
  table["Reciprocal"] = [](NodeContext &c) -> LogicalResult {
    if (foldUnary(c, reciprocalOf))
      return success();
    return importUnaryWith(c, [&](Value x, Type e) {
      return bin<tg::DivOp>(c, c.scalar(e, 1), x);
    });
  };
  table["Softsign"] = [](NodeContext &c) {
    // x / (1 + |x|).
    return importUnaryWith(c, [&](Value x, Type e) {
      auto abs = bin<tg::MaxOp>(c, x, un<tg::NegOp>(c, x));
      return bin<tg::DivOp>(c, x, bin<tg::AddOp>(c, c.scalar(e, 1), abs));
    });
  };
  table["LeakyRelu"] = [](NodeContext &c) {
    return importUnaryWith(c, [&](Value x, Type e) {
      return leakyRelu(c, x, c.scalar(e, c.getFloat("alpha", 0.01)));
    });
  };
  table["PRelu"] = importPRelu;
  table["Elu"] = [](NodeContext &c) {
    return importUnaryWith(c, [&](Value x, Type e) {
      return elu(c, x, e, c.getFloat("alpha", 1.0));
    });
  };
  table["Selu"] = [](NodeContext &c) {
    return importUnaryWith(c, [&](Value x, Type e) {
      double alpha = c.getFloat("alpha", 1.67326319217681884765625);
      double gamma = c.getFloat("gamma", 1.05070102214813232421875);
      return bin<tg::MulOp>(c, c.scalar(e, gamma), elu(c, x, e, alpha));
    });
  };
  table["Celu"] = [](NodeContext &c) {
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
    return importUnaryWith(c, [&](Value x, Type e) {
      double alpha = c.getFloat("alpha", 1.0);
      auto scaled = bin<tg::DivOp>(c, x, c.scalar(e, alpha));
      auto em1 = bin<tg::SubOp>(c, un<tg::ExpOp>(c, scaled), c.scalar(e, 1));
      auto neg = bin<tg::MinOp>(c, c.scalar(e, 0),
                                bin<tg::MulOp>(c, c.scalar(e, alpha), em1));
      return bin<tg::AddOp>(c, un<tg::ReluOp>(c, x), neg);
    });
  };
  table["HardSigmoid"] = [](NodeContext &c) {
    return importUnaryWith(c, [&](Value x, Type) {
      return c.createTyped<tg::HardSigmoidOp>(
          x.getType(), x,
          {c.f64Attr("alpha", static_cast<float>(c.getFloat("alpha", 0.2))),
           c.f64Attr("beta", static_cast<float>(c.getFloat("beta", 0.5)))});
    });
  };
  table["Gelu"] = [](NodeContext &c) {
    return importUnaryWith(c, [&](Value x, Type) {
      bool tanh = c.getString("approximate", "none") == "tanh";
      return c.createTyped<tg::GeluOp>(
          x.getType(), x, {c.boolAttr("tanh_approximation", tanh)});
    });
  };
  table["Clip"] = importClip;

  table["Floor"] = importRounding<floorOf, floorAtRunTime>;
  table["Ceil"] = importRounding<ceilOf, ceilAtRunTime>;
  table["Round"] = importRounding<roundHalfEven, roundHalfEvenAtRunTime>;
  table["Sign"] = importSign;
}

/// \p rounded, with a zero result signed as \p x (x * 0): C's floor(-0.0)
/// and nearbyint(-0.4) are -0.0.
static FailureOr<Value> keepZeroSign(OpChain &b, Value x,
                                     FailureOr<Value> rounded) {
  return b.select(b.bin<tg::EqualOp>(rounded, b.c(0)),
                  b.bin<tg::MulOp>(x, b.c(0)), rounded);
}

/// x - fmod(x, 1) is x rounded toward zero, exactly; one less where the
/// remainder is negative. From 2^(p-1) on (p: the type's significand bits)
/// every value is an integer, and infinities would give NaN: those values
/// are kept as they are.
FailureOr<Value> onnx_to_tg::floorAtRunTime(OpChain &b, Value x) {
  auto ft = cast<FloatType>(b.e);
  double big = std::ldexp(1.0, int(ft.getFPMantissaWidth()) - 1);
  auto fraction =
      b.ctx.create<tg::ModOp>({x, b.c(1)}, {b.ctx.boolAttr("fmod", true)});
  auto truncated = b.bin<tg::SubOp>(x, fraction);
  auto floored = keepZeroSign(
      b, x,
      b.select(b.bin<tg::LessOp>(fraction, b.c(0)),
               b.bin<tg::SubOp>(truncated, b.c(1)), truncated));
  return b.select(b.bin<tg::GreaterEqualOp>(x, b.c(big)), x,
                  b.select(b.bin<tg::LessEqualOp>(x, b.c(-big)), x, floored));
}

/// -floor(-x).
FailureOr<Value> onnx_to_tg::ceilAtRunTime(OpChain &b, Value x) {
  auto negated = b.un<tg::NegOp>(x);
  if (failed(negated))
    return failure();
  return b.un<tg::NegOp>(floorAtRunTime(b, *negated));
}

/// floor(x), plus one where the fraction is above one half, or exactly one
/// half and floor(x) is odd (fmod(floor(x), 2) is -1, 0 or 1: odd where its
/// square is 1).
FailureOr<Value> onnx_to_tg::roundHalfEvenAtRunTime(OpChain &b, Value x) {
  auto floored = floorAtRunTime(b, x);
  if (failed(floored))
    return failure();
  auto fraction = b.bin<tg::SubOp>(x, *floored);
  auto parity = b.ctx.create<tg::ModOp>({*floored, b.c(2)},
                                        {b.ctx.boolAttr("fmod", true)});
  auto odd = b.bin<tg::EqualOp>(b.bin<tg::MulOp>(parity, parity), b.c(1));
  auto above = b.bin<tg::GreaterOp>(fraction, b.c(0.5));
  auto tie = b.bin<tg::EqualOp>(fraction, b.c(0.5));
  auto up = b.select(above, above, b.select(tie, odd, tie));
  return keepZeroSign(
      b, x, b.select(up, b.bin<tg::AddOp>(*floored, b.c(1)), *floored));
}
