//===- Normalization.cpp - ONNX normalisations and softmax to tg ----------===//
//
// Part of Loom. BatchNormalization (inference form), LayerNormalization
// (with its optional Mean and InvStdDev outputs), InstanceNormalization,
// MeanVarianceNormalization, LRN, Softmax and LogSoftmax (both with the
// coerce-to-2-D semantics of opsets before 13), and SoftmaxCrossEntropyLoss
// in its mean-over-[N, C] form.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

LogicalResult importBatchNorm(NodeContext &ctx) {
  for (unsigned i = 0; i < 5; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  if (ctx.getInt("training_mode", 0))
    return ctx.fail("training mode is not supported");
  if (ctx.opset() < 9 && ctx.getInt("spatial", 1) == 0)
    return ctx.fail("spatial = 0 is not supported");
  for (unsigned i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      return ctx.fail("the training outputs (running mean and variance) are "
                      "not supported");
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  Type e = elementTypeOf(operands[0]);
  for (Value &v : llvm::drop_begin(operands)) {
    auto c = ctx.convert(v, e);
    if (failed(c))
      return failure();
    v = *c;
  }
  auto y = ctx.create<tg::BatchNormOp>(
      operands, {ctx.f64Attr("epsilon", ctx.getFloat("epsilon", 1e-5))});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importLayerNorm(NodeContext &ctx) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  auto x = ctx.input(0), scale = ctx.input(1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  Type e = elementTypeOf(*x);
  llvm::ArrayRef<int64_t> shape = ctx.inputShape(0);
  llvm::ArrayRef<int64_t> normShape = shape.drop_front(*axis);
  auto normType = RankedTensorType::get(normShape, e);

  // Scale and bias of the normalised shape (broadcast when smaller).
  auto fit = [&](Value v) -> FailureOr<Value> {
    auto c = ctx.convert(v, e);
    if (failed(c))
      return failure();
    auto type = cast<RankedTensorType>(c->getType());
    if (type.getShape() == normShape)
      return *c;
    auto b = broadcastHostShapes(type.getShape(), normShape);
    if (!b || llvm::ArrayRef<int64_t>(*b) != normShape)
      return ctx.emitError()
             << "scale and bias must broadcast to the "
                "normalised shape "
             << safetensors::formatShape(normShape) << ", got " << type;
    return ctx.createTyped<tg::BroadcastToOp>(normType, *c);
  };
  auto s = fit(*scale);
  if (failed(s))
    return failure();
  FailureOr<Value> b = failure();
  if (ctx.hasInput(2)) {
    auto given = ctx.input(2);
    if (failed(given))
      return failure();
    b = fit(*given);
    if (failed(b))
      return failure();
  } else {
    b = ctx.splat(normType, 0);
  }
  auto y = ctx.create<tg::LayerNormOp>(
      {*x, *s, *b},
      {ctx.i64Attr("axis", *axis), ctx.f64Attr("epsilon", epsilon)});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);

  // Mean and InvStdDev (the statistics, kept as size-1 dimensions).
  if (ctx.hasOutput(1) || ctx.hasOutput(2)) {
    OpChain B{ctx, e};
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(*axis, rank));
    auto mean = B.reduce<tg::ReduceMeanOp>(*x, axes);
    auto d = B.bin<tg::SubOp>(*x, mean);
    auto var = B.reduce<tg::ReduceMeanOp>(B.bin<tg::MulOp>(d, d), axes);
    auto inv = B.un<tg::RsqrtOp>(B.bin<tg::AddOp>(var, B.c(epsilon)));
    if (failed(mean) || failed(inv))
      return failure();
    ctx.setOutput(1, *mean);
    ctx.setOutput(2, *inv);
  }
  return success();
}

LogicalResult importInstanceNorm(NodeContext &ctx) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  auto x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank < 3)
    return ctx.fail("the input needs spatial dimensions (rank >= 3)");
  Type e = elementTypeOf(*x);
  int64_t c = ctx.inputShape(0)[1];
  if (ctx.inputShape(1) != llvm::ArrayRef<int64_t>{c} ||
      ctx.inputShape(2) != llvm::ArrayRef<int64_t>{c})
    return ctx.fail("scale and B must have shape [" + Twine(c) + "]");
  SmallVector<int64_t> paramShape(rank - 1, 1);
  paramShape[0] = c;
  OpChain B{ctx, e};
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  auto mean = B.reduce<tg::ReduceMeanOp>(*x, axes);
  auto d = B.bin<tg::SubOp>(*x, mean);
  auto var = B.reduce<tg::ReduceMeanOp>(B.bin<tg::MulOp>(d, d), axes);
  auto norm =
      B.bin<tg::MulOp>(d, B.un<tg::RsqrtOp>(B.bin<tg::AddOp>(
                              var, B.c(ctx.getFloat("epsilon", 1e-5)))));
  auto s = ctx.reshape(*scale, paramShape);
  auto b = ctx.reshape(*bias, paramShape);
  auto y = B.bin<tg::AddOp>(B.bin<tg::MulOp>(norm, s), b);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importMeanVarianceNorm(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  SmallVector<int64_t> axes =
      ctx.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  for (int64_t &a : axes) {
    auto n = ctx.normalizeAxis(a, rank, "axes entry");
    if (failed(n))
      return failure();
    a = *n;
  }
  OpChain B{ctx, elementTypeOf(*x)};
  // The ONNX function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
  auto mean = B.reduce<tg::ReduceMeanOp>(*x, axes);
  auto meanSq = B.reduce<tg::ReduceMeanOp>(B.bin<tg::MulOp>(*x, *x), axes);
  auto var = B.bin<tg::SubOp>(meanSq, B.bin<tg::MulOp>(mean, mean));
  auto y = B.bin<tg::DivOp>(B.bin<tg::SubOp>(*x, mean),
                            B.bin<tg::AddOp>(B.un<tg::SqrtOp>(var), B.c(1e-9)));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importLRN(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t size = ctx.getInt("size", 0);
  if (size < 1)
    return ctx.fail("'size' must be >= 1");
  llvm::ArrayRef<int64_t> shape = ctx.inputShape(0);
  if (shape.size() < 3)
    return ctx.fail("the input needs spatial dimensions (rank >= 3)");
  Type e = elementTypeOf(*x);
  OpChain B{ctx, e};
  // The sum of squares over a channel window is size times a
  // zero-padded average pool over [N, 1, C, spatial].
  int64_t spatial = onnxutil::numElementsOf(shape.drop_front(2));
  auto sq = B.bin<tg::MulOp>(*x, *x);
  if (failed(sq))
    return failure();
  auto flat = ctx.reshape(*sq, {shape[0], 1, shape[1], spatial});
  if (failed(flat))
    return failure();
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  auto avg = ctx.create<tg::AvgPoolOp>(
      *flat, {ctx.arrayAttr("kernel_size", {size, 1}),
              ctx.arrayAttr("pads", {before, 0, after, 0}),
              ctx.boolAttr("count_include_pad", true)});
  if (failed(avg))
    return failure();
  auto avgBack = ctx.reshape(*avg, shape);
  double alpha = ctx.getFloat("alpha", 1e-4), beta = ctx.getFloat("beta", 0.75),
         bias = ctx.getFloat("bias", 1.0);
  auto denom = B.bin<tg::PowOp>(
      B.bin<tg::AddOp>(B.c(bias), B.bin<tg::MulOp>(B.c(alpha), avgBack)),
      B.c(beta));
  auto y = B.bin<tg::DivOp>(*x, denom);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult importSoftmax(NodeContext &ctx, bool isLog) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank == 0)
    return ctx.fail("the input must have rank >= 1");
  bool coerce = ctx.opset() < 13;
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", coerce ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  // Before opset 13 the input is seen as a matrix [prod(dims before axis),
  // prod(dims from axis)] and normalised along its rows.
  SmallVector<int64_t> axes{*axis};
  if (coerce)
    axes = llvm::to_vector(llvm::seq<int64_t>(*axis, rank));
  Type e = elementTypeOf(*x);
  FailureOr<Value> y = failure();
  if (!isLog) {
    if (axes.size() == 1) {
      y = ctx.create<tg::SoftmaxOp>(*x, {ctx.i64Attr("axis", *axis)});
    } else {
      llvm::ArrayRef<int64_t> shape = ctx.inputShape(0);
      int64_t rows = onnxutil::numElementsOf(shape.take_front(*axis));
      int64_t cols = onnxutil::numElementsOf(shape.drop_front(*axis));
      auto flat = ctx.reshape(*x, {rows, cols});
      if (failed(flat))
        return failure();
      auto s = ctx.create<tg::SoftmaxOp>(*flat, {ctx.i64Attr("axis", 1)});
      if (failed(s))
        return failure();
      y = ctx.reshape(*s, shape);
    }
  } else {
    // x - max - log(sum(exp(x - max))), as ONNX's reference (log(softmax)
    // would lose the tail to underflow).
    OpChain B{ctx, e};
    auto d = B.bin<tg::SubOp>(*x, B.reduce<tg::ReduceMaxOp>(*x, axes));
    auto lse =
        B.un<tg::LogOp>(B.reduce<tg::ReduceSumOp>(B.un<tg::ExpOp>(d), axes));
    y = B.bin<tg::SubOp>(d, lse);
  }
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// SoftmaxCrossEntropyLoss in the form tg.softmax_cross_entropy computes:
/// reduction "mean", [N, C] scores, no weights, no ignore_index and no
/// log_prob output.
LogicalResult importSoftmaxCrossEntropy(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  std::string reduction = ctx.getString("reduction", "mean");
  if (reduction != "mean")
    return ctx.fail("reduction '" + reduction +
                    "' is not supported (only 'mean')");
  if (ctx.hasInput(2))
    return ctx.fail("class weights are not supported");
  if (ctx.hasAttr("ignore_index"))
    return ctx.fail("'ignore_index' is not supported");
  if (ctx.hasOutput(1))
    return ctx.fail("the log_prob output is not supported");
  if (ctx.inputRank(0) != 2)
    return ctx.fail("only [N, C] scores are supported, the scores have rank " +
                    Twine(ctx.inputRank(0)));
  auto scores = ctx.input(0);
  auto labels = ctx.input(1);
  if (failed(scores) || failed(labels))
    return failure();
  auto y = ctx.create<tg::SoftmaxCrossEntropyOp>({*scores, *labels});
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populateNormalizationHandlers(HandlerTable &table) {
  table["BatchNormalization"] = importBatchNorm;
  table["LayerNormalization"] = importLayerNorm;
  table["InstanceNormalization"] = importInstanceNorm;
  table["MeanVarianceNormalization"] = importMeanVarianceNorm;
  table["LRN"] = importLRN;
  table["Softmax"] = [](NodeContext &c) { return importSoftmax(c, false); };
  table["LogSoftmax"] = [](NodeContext &c) { return importSoftmax(c, true); };
  table["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropy;
}
