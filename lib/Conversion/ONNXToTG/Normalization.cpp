//===- Normalization.cpp - ONNX normalisations and softmax to tg ----------===//
//
// Part of Loom. BatchNormalization (inference form), LayerNormalization
// (with its optional Mean and InvStdDev outputs), InstanceNormalization,
// MeanVarianceNormalization, LRN, Softmax and LogSoftmax (both with the
// coerce-to-2-D semantics of opsets before 13), SoftmaxCrossEntropyLoss and
// NegativeLogLikelihoodLoss (every reduction, class weights, ignore_index,
// [N, C, d...] scores).
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

/// x - max - log(sum(exp(x - max))) along `axes`, as ONNX's reference
/// (log(softmax) would lose the tail to underflow).
FailureOr<Value> logSoftmax(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  OpChain B{ctx, elementTypeOf(x)};
  auto d = B.bin<tg::SubOp>(x, B.reduce<tg::ReduceMaxOp>(x, axes));
  auto lse =
      B.un<tg::LogOp>(B.reduce<tg::ReduceSumOp>(B.un<tg::ExpOp>(d), axes));
  return B.bin<tg::SubOp>(d, lse);
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
    y = logSoftmax(ctx, *x, axes);
  }
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// The negative log-likelihood of `logProb` [N, C, d...] at the labels
/// (input `labelInput` [N, d...]) with class weights (input
/// `labelInput + 1`, optional), `ignore_index` and `reduction`, as
/// NegativeLogLikelihoodLoss defines it: per position -logProb[n, t, d...]
/// times the weight of class t (0 where t is ignore_index); "mean" divides
/// the sum by the sum of those weights. The label's class is picked by a
/// one-hot of the labels against the classes (compared in f64, so that any
/// ignore_index compares exactly), summed along C.
FailureOr<Value> negativeLogLikelihood(NodeContext &ctx, Value logProb,
                                       unsigned labelInput) {
  std::string reduction = ctx.getString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return ctx.fail("reduction '" + reduction +
                    "' is not one of 'none', 'sum', 'mean'");
  auto shape = cast<RankedTensorType>(logProb.getType()).getShape();
  int64_t rank = shape.size();
  if (rank < 2)
    return ctx.fail("the scores must have rank >= 2 ([N, C, d...])");
  SmallVector<int64_t> labelShape = {shape[0]};
  llvm::append_range(labelShape, shape.drop_front(2));
  if (ctx.inputShape(labelInput) != ArrayRef<int64_t>(labelShape))
    return ctx.fail("the labels must have the scores' shape without C");
  auto labels = ctx.input(labelInput);
  if (failed(labels))
    return failure();
  Type e = elementTypeOf(logProb), f64 = ctx.builder().getF64Type();
  OpChain B{ctx, e};
  SmallVector<int64_t> oneC(rank, 1), column(labelShape);
  oneC[1] = shape[1];
  column.insert(column.begin() + 1, 1);
  HostTensor classes;
  classes.dataType = onnx::TensorProto::DOUBLE;
  classes.shape.assign(oneC.begin(), oneC.end());
  for (int64_t c = 0; c < shape[1]; ++c)
    classes.floats.push_back(double(c));
  auto classValue = ctx.materialize(classes, "nll_classes");
  auto label = B.cast(ctx.reshape(*labels, column), f64);
  auto oneHot = B.cast(B.bin<tg::EqualOp>(label, classValue), e);
  auto picked =
      B.reduce<tg::ReduceSumOp>(B.bin<tg::MulOp>(logProb, oneHot), {1});
  // The weight of each position [N, 1, d...] (absent: 1 everywhere).
  FailureOr<Value> weight = failure();
  bool weighted = ctx.hasInput(labelInput + 1);
  if (weighted) {
    if (ctx.inputShape(labelInput + 1) != ArrayRef<int64_t>{shape[1]})
      return ctx.fail("the class weights must have shape [C]");
    auto w = ctx.input(labelInput + 1);
    if (failed(w))
      return failure();
    weight = B.reduce<tg::ReduceSumOp>(
        B.bin<tg::MulOp>(oneHot, ctx.reshape(*w, oneC)), {1});
  }
  if (ctx.hasAttr("ignore_index")) {
    Value ignored = ctx.scalar(f64, double(ctx.getInt("ignore_index", 0)));
    auto kept = B.select(B.bin<tg::EqualOp>(label, ignored), B.c(0), B.c(1));
    weight = weighted ? B.bin<tg::MulOp>(weight, kept) : kept;
    weighted = true;
  }
  auto loss =
      B.un<tg::NegOp>(weighted ? B.bin<tg::MulOp>(picked, weight) : picked);
  if (failed(loss))
    return failure();
  if (reduction == "none")
    return ctx.reshape(*loss, labelShape);
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  auto total = B.reduce<tg::ReduceSumOp>(*loss, all);
  if (reduction == "mean")
    total = B.bin<tg::DivOp>(
        total, weighted ? B.reduce<tg::ReduceSumOp>(weight, all)
                        : FailureOr<Value>(B.c(
                              double(onnxutil::numElementsOf(labelShape)))));
  if (failed(total))
    return failure();
  return ctx.reshape(*total, {});
}

LogicalResult importNegativeLogLikelihood(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto loss = negativeLogLikelihood(ctx, *x, 1);
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  return success();
}

/// SoftmaxCrossEntropyLoss: in the form tg.softmax_cross_entropy computes
/// (reduction "mean", [N, C] scores, no weights, no ignore_index, no
/// log_prob output) that op, which training differentiates; otherwise the
/// log-softmax along C and negativeLogLikelihood.
LogicalResult importSoftmaxCrossEntropy(NodeContext &ctx) {
  if (failed(ctx.requireFloatInput(0)))
    return failure();
  auto scores = ctx.input(0);
  if (failed(scores))
    return failure();
  if (ctx.getString("reduction", "mean") == "mean" && !ctx.hasInput(2) &&
      !ctx.hasAttr("ignore_index") && !ctx.hasOutput(1) &&
      ctx.inputRank(0) == 2) {
    auto labels = ctx.input(1);
    if (failed(labels))
      return failure();
    auto y = ctx.create<tg::SoftmaxCrossEntropyOp>({*scores, *labels});
    if (failed(y))
      return failure();
    ctx.setOutput(0, *y);
    return success();
  }
  if (ctx.inputRank(0) < 2)
    return ctx.fail("the scores must have rank >= 2 ([N, C, d...])");
  auto logProb = logSoftmax(ctx, *scores, {1});
  if (failed(logProb))
    return failure();
  auto loss = negativeLogLikelihood(ctx, *logProb, 1);
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  if (ctx.hasOutput(1))
    ctx.setOutput(1, *logProb);
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
  table["NegativeLogLikelihoodLoss"] = importNegativeLogLikelihood;
}
