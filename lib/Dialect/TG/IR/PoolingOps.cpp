//===- PoolingOps.cpp - Facts of the pooling tg ops -----------------------===//
//
// Part of Loom. tg.maxpool, tg.maxpool_grad, tg.avgpool,
// tg.global_avgpool.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

/// The shape rule of a 2-D pooling op.
template <typename Adaptor>
static LogicalResult inferWindow(std::optional<Location> location,
                                 Adaptor adaptor,
                                 SmallVectorImpl<Type> &inferred) {
  return inferPool2d(location, adaptor.getInput().getType(),
                     adaptor.getKernelSize(), adaptor.getStrides(),
                     adaptor.getPads(), inferred);
}

/// The window of a 2-D pooling op, as the kernels take it.
template <typename PoolOp> static interp::PoolParams windowOf(PoolOp op) {
  interp::PoolParams p;
  p.kernel = arrayOf<2>(op.getKernelSize());
  p.strides = arrayOf<2>(op.getStrides());
  p.pads = arrayOf<4>(op.getPads());
  return p;
}

/// One comparison or addition per window tap and result element.
template <typename PoolOp> static OpWork windowWork(PoolOp op) {
  auto k = op.getKernelSize();
  return streamingWork(op, double(k[0]) * double(k[1]));
}

/// An ONNX pooling node with the window attributes of \p op.
template <typename PoolOp>
static ONNXNode windowNode(PoolOp op, ONNXEmitter &e, StringRef opType) {
  return e.node(opType, {e.input(0)}, {e.output()})
      .attr("kernel_shape", op.getKernelSize())
      .attr("strides", op.getStrides())
      .attr("pads", op.getPads());
}

//===----------------------------------------------------------------------===//
// tg.maxpool
//===----------------------------------------------------------------------===//

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferWindow(location, adaptor, inferred);
}

LogicalResult MaxPoolOp::evaluate(interp::EvalFrame &frame) {
  interp::PoolParams p = windowOf(*this);
  return frame.visit(
      [&](auto &f) { return f.push(interp::maxPool(f.in(0), p)); });
}

OpWork MaxPoolOp::getWork() { return windowWork(*this); }

LogicalResult MaxPoolOp::exportONNX(ONNXEmitter &e) {
  windowNode(*this, e, "MaxPool");
  return success();
}

//===----------------------------------------------------------------------===//
// tg.maxpool_grad
//===----------------------------------------------------------------------===//

LogicalResult MaxPoolGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferMaxPoolGrad(location, adaptor.getInput().getType(),
                            adaptor.getGradOutput().getType(),
                            adaptor.getKernelSize(), adaptor.getStrides(),
                            adaptor.getPads(), inferred);
}

LogicalResult MaxPoolGradOp::evaluate(interp::EvalFrame &frame) {
  interp::PoolParams p = windowOf(*this);
  return frame.visit([&](auto &f) {
    return f.push(interp::maxPoolGrad(f.in(0), f.in(1), p));
  });
}

// Per window: one comparison per tap to find its argmax, one addition.
OpWork MaxPoolGradOp::getWork() {
  OpWork work = streamingWork(*this, 0);
  auto k = getKernelSize();
  work.flops = (double(k[0]) * double(k[1]) + 1) *
               numElementsOf(getGradOutput().getType());
  return work;
}

LogicalResult MaxPoolGradOp::exportONNX(ONNXEmitter &e) {
  // Opset 17: MaxPool's Indices output is the argmax of each window,
  // flattened over the whole NCHW input (padding excluded), first maximum
  // in row-major order as ONNX Runtime picks it. ScatterElements
  // (reduction = add) sums grad_output at those positions of a flat zero
  // tensor, reshaped to the input.
  auto input = getInput().getType();
  int64_t n = input.getNumElements();
  auto zero = e.scalar(input.getElementType(), 0.0, "_zero");
  if (failed(zero))
    return failure();
  std::string pooled = e.fresh("_pooled"), indices = e.fresh("_indices"),
              flatIdx = e.fresh("_flat_indices"),
              flatGrad = e.fresh("_flat_grad"), zeros = e.fresh("_zeros"),
              sum = e.fresh("_sum");
  e.node("MaxPool", {e.input(0)}, {pooled, indices})
      .attr("kernel_shape", getKernelSize())
      .attr("strides", getStrides())
      .attr("pads", getPads());
  std::string flat = e.constI64({n}, "_flat_shape");
  std::string to1d = e.constI64({-1}, "_to_1d");
  e.node("Reshape", {indices, to1d}, {flatIdx});
  e.node("Reshape", {e.input(1), to1d}, {flatGrad});
  e.node("Expand", {*zero, flat}, {zeros});
  e.node("ScatterElements", {zeros, flatIdx, flatGrad}, {sum})
      .attr("axis", int64_t(0))
      .attr("reduction", StringRef("add"));
  e.node("Reshape", {sum, e.constI64(input.getShape(), "_out_shape")},
         {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.avgpool
//===----------------------------------------------------------------------===//

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferWindow(location, adaptor, inferred);
}

LogicalResult AvgPoolOp::evaluate(interp::EvalFrame &frame) {
  interp::PoolParams p = windowOf(*this);
  p.countIncludePad = getCountIncludePad();
  return frame.visit(
      [&](auto &f) { return f.push(interp::avgPool(f.in(0), p)); });
}

OpWork AvgPoolOp::getWork() { return windowWork(*this); }

LogicalResult AvgPoolOp::exportONNX(ONNXEmitter &e) {
  windowNode(*this, e, "AveragePool")
      .attr("count_include_pad", int64_t(getCountIncludePad()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.global_avgpool
//===----------------------------------------------------------------------===//

LogicalResult GlobalAvgPoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferGlobalAvgPool(location, adaptor.getInput().getType(), inferred);
}

LogicalResult GlobalAvgPoolOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::globalAvgPool(f.in(0))); });
}

OpWork GlobalAvgPoolOp::getWork() {
  // One addition per input element.
  OpWork work = streamingWork(*this, 0);
  work.flops = numElementsOf(getInput().getType());
  return work;
}

LogicalResult GlobalAvgPoolOp::exportONNX(ONNXEmitter &e) {
  return e.direct("GlobalAveragePool");
}
