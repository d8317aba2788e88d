//===- ShapeFolding.cpp - Constants, casts and shape computations ---------===//
//
// Part of Loom. Constant, Identity, Dropout (inference), Cast and CastLike,
// and the operators that exported models use to compute shapes: Shape,
// Size, ConstantOfShape, Range, EyeLike, comparisons, logic and Where. The
// input shapes are static after import, so these fold to constants; on
// run-time values the comparisons and Where become tg.equal, tg.less, ...
// and tg.select, and logic (which tg does not have as ops) tg.select on
// bool values.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>
#include <variant>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using TP = onnx::TensorProto;

namespace {

LogicalResult importConstant(NodeContext &ctx) {
  HostTensor t;
  if (const auto *a = ctx.getAttr("value")) {
    auto d = onnxutil::decodeTensor(a->t(), "");
    if (!d)
      return ctx.fail(llvm::toString(d.takeError()));
    t = std::move(*d);
  } else if (const auto *a = ctx.getAttr("value_float")) {
    t = HostTensor::splat(TP::FLOAT, {}, a->f());
  } else if (const auto *a = ctx.getAttr("value_int")) {
    t = HostTensor::splat(TP::INT64, {}, 0);
    t.ints[0] = a->i();
  } else if (const auto *a = ctx.getAttr("value_floats")) {
    t.dataType = TP::FLOAT;
    t.shape = {a->floats_size()};
    t.floats.assign(a->floats().begin(), a->floats().end());
  } else if (const auto *a = ctx.getAttr("value_ints")) {
    t.dataType = TP::INT64;
    t.shape = {a->ints_size()};
    t.ints.assign(a->ints().begin(), a->ints().end());
  } else {
    return ctx.fail("only tensor, float and int values are supported (not "
                    "sparse tensors or strings)");
  }
  ctx.setOutput(0, std::move(t));
  return success();
}

LogicalResult importIdentity(NodeContext &ctx) {
  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, *t);
    return success();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  ctx.setOutput(0, *x);
  return success();
}

/// Dropout in inference mode, or in training mode with a ratio of 0 (what
/// a module calling F.dropout(x, p=0.0, training=True) exports, e.g.
/// torchvision's Swin): both are the identity with an all-true mask.
LogicalResult importDropout(NodeContext &ctx) {
  if (ctx.hasInput(2)) {
    if (failed(ctx.requireKnown(2, "training_mode")))
      return failure();
    if (ctx.known(2)->asInt(0)) {
      const HostTensor *ratio = ctx.hasInput(1) ? ctx.known(1) : nullptr;
      // ONNX's default ratio is 0.5.
      if (!ratio || ratio->numElements() != 1 || ratio->asDouble(0) != 0.0)
        return ctx.fail("training mode is not supported (only with a ratio "
                        "known to be 0, the identity)");
    }
  }
  if (ctx.opset() < 7 && ctx.getInt("is_test", 0) == 0 && ctx.hasOutput(1))
    return ctx.fail("training mode is not supported");
  if (failed(importIdentity(ctx)))
    return failure();
  if (ctx.hasOutput(1)) {
    // The mask of an inference-mode dropout keeps everything.
    auto shape = ctx.inputShape(0);
    ctx.setOutput(1,
                  HostTensor::splat(TP::BOOL, {shape.begin(), shape.end()}, 1));
  }
  return success();
}

LogicalResult castTo(NodeContext &ctx, int32_t to) {
  if (const HostTensor *t = ctx.constant(0)) {
    ctx.setOutput(0, castHost(*t, to));
    return success();
  }
  Type e = onnxutil::getTGElementType(ctx.context(), to);
  if (!e)
    return ctx.fail("casting to " + onnxutil::dataTypeName(to) +
                    " is not supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto y = ctx.convert(*x, e);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importShape(NodeContext &ctx) {
  llvm::ArrayRef<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  HostTensor t;
  t.dataType = TP::INT64;
  t.shape = {end - start};
  t.ints.assign(shape.begin() + start, shape.begin() + end);
  ctx.setOutput(0, std::move(t));
  return success();
}

LogicalResult importSize(NodeContext &ctx) {
  HostTensor t = HostTensor::splat(TP::INT64, {}, 0);
  t.ints[0] = onnxutil::numElementsOf(ctx.inputShape(0));
  ctx.setOutput(0, std::move(t));
  return success();
}

} // namespace

FailureOr<HostTensor> loom::onnx_to_tg::constantOfShapeValue(NodeContext &ctx) {
  HostTensor value = HostTensor::splat(TP::FLOAT, {}, 0);
  if (const auto *a = ctx.getAttr("value")) {
    auto d = onnxutil::decodeTensor(a->t(), "");
    if (!d)
      return ctx.fail(llvm::toString(d.takeError()));
    if (d->numElements() != 1)
      return ctx.fail("'value' must hold one element");
    value = std::move(*d);
  }
  return value;
}

LogicalResult loom::onnx_to_tg::setSplatOutput(NodeContext &ctx,
                                               ArrayRef<int64_t> dims,
                                               const HostTensor &value) {
  Type e = onnxutil::getTGElementType(ctx.context(), value.dataType);
  if (!e)
    return ctx.fail("element type " + onnxutil::dataTypeName(value.dataType) +
                    " is not supported");
  ctx.setOutput(0,
                ctx.splat(RankedTensorType::get(dims, e), value.asDouble(0)));
  return success();
}

namespace {

LogicalResult importConstantOfShape(NodeContext &ctx) {
  auto shape = ctx.constantInts(0, "the shape");
  if (failed(shape))
    return failure();
  int64_t n = onnxutil::numElementsOf(*shape);
  if (n < 0)
    return ctx.fail("invalid shape " + safetensors::formatShape(*shape));
  auto fill = constantOfShapeValue(ctx);
  if (failed(fill))
    return failure();
  HostTensor value = std::move(*fill);
  std::vector<int64_t> dims(shape->begin(), shape->end());
  if (n <= kFoldLimit) {
    HostTensor t = HostTensor::splat(value.dataType, dims, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (t.isFloat())
        t.floats[i] = value.floats[0];
      else
        t.ints[i] = value.ints[0];
    }
    ctx.setOutput(0, std::move(t));
    return success();
  }
  return setSplatOutput(ctx, dims, value);
}

} // namespace

HostTensor onnx_to_tg::rangeHost(const HostTensor &start,
                                 const HostTensor &delta, int64_t count) {
  HostTensor t;
  t.dataType = start.dataType;
  t.shape = {count};
  for (int64_t i = 0; i < count; ++i) {
    if (t.isFloat())
      t.floats.push_back(start.asDouble(0) +
                         static_cast<double>(i) * delta.asDouble(0));
    else
      t.ints.push_back(start.ints[0] + i * delta.ints[0]);
  }
  onnxutil::roundToDataType(t);
  return t;
}

namespace {

LogicalResult importRange(NodeContext &ctx) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireKnown(i, i == 0   ? "start"
                                   : i == 1 ? "limit"
                                            : "delta")))
      return failure();
  const HostTensor *start = ctx.known(0), *limit = ctx.known(1),
                   *delta = ctx.known(2);
  if (start->numElements() != 1 || limit->numElements() != 1 ||
      delta->numElements() != 1)
    return ctx.fail("start, limit and delta must be scalars");
  double s = start->asDouble(0), l = limit->asDouble(0), d = delta->asDouble(0);
  if (d == 0)
    return ctx.fail("delta must not be 0");
  double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= kFoldLimit))
    return ctx.fail("the range has more than " + Twine(kFoldLimit) +
                    " elements");
  ctx.setOutput(0, rangeHost(*start, *delta, static_cast<int64_t>(count)));
  return success();
}

LogicalResult importEyeLike(NodeContext &ctx) {
  llvm::ArrayRef<int64_t> shape = ctx.inputShape(0);
  if (shape.size() != 2)
    return ctx.fail("the input must be a matrix");
  int32_t dtype = ctx.getInt("dtype", ctx.inputDataType(0));
  int64_t k = ctx.getInt("k", 0);
  if (onnxutil::numElementsOf(shape) > kFoldLimit)
    return ctx.fail("the matrix is too large to fold");
  HostTensor t = HostTensor::splat(dtype, {shape[0], shape[1]}, 0);
  for (int64_t i = 0; i < shape[0]; ++i) {
    int64_t j = i + k;
    if (j < 0 || j >= shape[1])
      continue;
    if (t.isFloat())
      t.floats[i * shape[1] + j] = 1;
    else
      t.ints[i * shape[1] + j] = 1;
  }
  ctx.setOutput(0, std::move(t));
  return success();
}

/// Whether predicate P is a tg comparison (names it as P::Op).
template <typename P, typename = void> struct IsComparison : std::false_type {};
template <typename P>
struct IsComparison<P, std::void_t<typename P::Op>> : std::true_type {};

/// Whether predicate P is logic with a run-time form (P::build).
template <typename P, typename = void> struct IsLogic : std::false_type {};
template <typename P>
struct IsLogic<P, std::void_t<decltype(&P::build)>> : std::true_type {};

/// Comparisons and logic; the result is bool. On known values `Pred` is
/// applied to doubles, or to int64 when both inputs are integers (so that
/// large integers compare exactly). Otherwise a comparison is its tg op
/// (`Pred::Op`), and logic is tg.select on the bool inputs (`Pred::build`).
template <typename Pred> LogicalResult importPredicate(NodeContext &ctx) {
  unsigned n = ctx.numInputs();
  const HostTensor *a = ctx.constant(0);
  const HostTensor *b = n > 1 ? ctx.constant(1) : a;
  if (!a || !b) {
    if constexpr (IsComparison<Pred>::value) {
      auto x = ctx.input(0), y = ctx.input(1);
      if (failed(x) || failed(y))
        return failure();
      auto r = ctx.create<typename Pred::Op>({*x, *y});
      if (failed(r))
        return failure();
      ctx.setOutput(0, *r);
      return success();
    } else {
      static_assert(IsLogic<Pred>::value, "a predicate without a tg form");
      if (ctx.inputDataType(0) != TP::BOOL ||
          (n > 1 && ctx.inputDataType(1) != TP::BOOL))
        return ctx.fail("inputs must be bool");
      auto x = ctx.input(0);
      auto y = n > 1 ? ctx.input(1) : x;
      if (failed(x) || failed(y))
        return failure();
      auto r = Pred::build(ctx, *x, *y);
      if (failed(r))
        return failure();
      ctx.setOutput(0, *r);
      return success();
    }
  }
  if (!broadcastHostShapes(a->shape, b->shape))
    return ctx.fail("input shapes do not broadcast");
  Pred pred;
  HostTensor out = binaryHost(
      *a, *b, TP::BOOL,
      [&](double x, double y) -> double { return pred(x, y); },
      [&](int64_t x, int64_t y) -> int64_t { return pred(x, y); });
  ctx.setOutput(0, std::move(out));
  return success();
}

struct EqualPred {
  using Op = tg::EqualOp;
  template <typename T> bool operator()(T a, T b) const { return a == b; }
};
struct LessPred {
  using Op = tg::LessOp;
  template <typename T> bool operator()(T a, T b) const { return a < b; }
};
struct LessOrEqualPred {
  using Op = tg::LessEqualOp;
  template <typename T> bool operator()(T a, T b) const { return a <= b; }
};
struct GreaterPred {
  using Op = tg::GreaterOp;
  template <typename T> bool operator()(T a, T b) const { return a > b; }
};
struct GreaterOrEqualPred {
  using Op = tg::GreaterEqualOp;
  template <typename T> bool operator()(T a, T b) const { return a >= b; }
};
/// `cond ? a : b` on bool values, with `a` and `b` true or false when
/// given as such.
FailureOr<Value> selectBool(NodeContext &ctx, Value cond,
                            std::variant<Value, bool> a,
                            std::variant<Value, bool> b) {
  auto asValue = [&](std::variant<Value, bool> v) {
    if (auto *value = std::get_if<Value>(&v))
      return *value;
    return ctx.scalar(ctx.builder().getI1Type(), std::get<bool>(v) ? 1 : 0);
  };
  return ctx.create<tg::SelectOp>({cond, asValue(a), asValue(b)});
}

struct AndPred {
  template <typename T> bool operator()(T a, T b) const { return a && b; }
  static FailureOr<Value> build(NodeContext &ctx, Value a, Value b) {
    return selectBool(ctx, a, b, false);
  }
};
struct OrPred {
  template <typename T> bool operator()(T a, T b) const { return a || b; }
  static FailureOr<Value> build(NodeContext &ctx, Value a, Value b) {
    return selectBool(ctx, a, true, b);
  }
};
struct NotPred {
  template <typename T> bool operator()(T a, T) const { return a == 0; }
  static FailureOr<Value> build(NodeContext &ctx, Value a, Value) {
    return selectBool(ctx, a, false, true);
  }
};
struct XorPred {
  template <typename T> bool operator()(T a, T b) const {
    return (a != 0) != (b != 0);
  }
  static FailureOr<Value> build(NodeContext &ctx, Value a, Value b) {
    auto notB = NotPred::build(ctx, b, b);
    if (failed(notB))
      return failure();
    return selectBool(ctx, a, *notB, b);
  }
};

LogicalResult importWhere(NodeContext &ctx) {
  const HostTensor *c = ctx.constant(0), *x = ctx.constant(1),
                   *y = ctx.constant(2);
  if (ctx.inputDataType(1) != ctx.inputDataType(2))
    return ctx.fail("X and Y have different element types");
  if (!c || !x || !y) {
    auto cv = ctx.input(0), xv = ctx.input(1), yv = ctx.input(2);
    if (failed(cv) || failed(xv) || failed(yv))
      return failure();
    auto r = ctx.create<tg::SelectOp>({*cv, *xv, *yv});
    if (failed(r))
      return failure();
    ctx.setOutput(0, *r);
    return success();
  }
  auto s1 = broadcastHostShapes(c->shape, x->shape);
  auto shape = s1 ? broadcastHostShapes(*s1, y->shape) : std::nullopt;
  if (!shape)
    return ctx.fail("input shapes do not broadcast");
  HostTensor cc = broadcastHost(*c, *shape), xx = broadcastHost(*x, *shape),
             yy = broadcastHost(*y, *shape);
  HostTensor out = xx;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    if (cc.asInt(i))
      continue;
    if (out.isFloat())
      out.floats[i] = yy.floats[i];
    else
      out.ints[i] = yy.ints[i];
  }
  ctx.setOutput(0, std::move(out));
  return success();
}

} // namespace

void onnx_to_tg::populateShapeFoldingHandlers(HandlerTable &table) {
  table["Constant"] = importConstant;
  table["Identity"] = importIdentity;
  table["Dropout"] = importDropout;
  table["Cast"] = [](NodeContext &c) {
    return castTo(c, c.getInt("to", TP::FLOAT));
  };
  table["CastLike"] = [](NodeContext &c) {
    return castTo(c, c.inputDataType(1));
  };
  table["Shape"] = importShape;
  table["Size"] = importSize;
  table["ConstantOfShape"] = importConstantOfShape;
  table["Range"] = importRange;
  table["EyeLike"] = importEyeLike;
  table["Equal"] = importPredicate<EqualPred>;
  table["Less"] = importPredicate<LessPred>;
  table["LessOrEqual"] = importPredicate<LessOrEqualPred>;
  table["Greater"] = importPredicate<GreaterPred>;
  table["GreaterOrEqual"] = importPredicate<GreaterOrEqualPred>;
  table["And"] = importPredicate<AndPred>;
  table["Or"] = importPredicate<OrPred>;
  table["Xor"] = importPredicate<XorPred>;
  table["Not"] = importPredicate<NotPred>;
  table["Where"] = importWhere;
}
