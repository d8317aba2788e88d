//===- PoolingOps.cpp - Facts of the pooling tg ops -----------------------===//
//
// Part of Loom. tg.maxpool2d, tg.avgpool2d, tg.global_avgpool.
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
template <typename PoolOp> static interp::Pool2dParams windowOf(PoolOp op) {
  interp::Pool2dParams p;
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
// tg.maxpool2d
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferWindow(location, adaptor, inferred);
}

LogicalResult MaxPool2dOp::evaluate(interp::EvalFrame &frame) {
  interp::Pool2dParams p = windowOf(*this);
  return frame.visit(
      [&](auto &f) { return f.push(interp::maxPool2d(f.in(0), p)); });
}

OpWork MaxPool2dOp::getWork() { return windowWork(*this); }

LogicalResult MaxPool2dOp::exportONNX(ONNXEmitter &e) {
  windowNode(*this, e, "MaxPool");
  return success();
}

//===----------------------------------------------------------------------===//
// tg.avgpool2d
//===----------------------------------------------------------------------===//

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferWindow(location, adaptor, inferred);
}

LogicalResult AvgPool2dOp::evaluate(interp::EvalFrame &frame) {
  interp::Pool2dParams p = windowOf(*this);
  p.countIncludePad = getCountIncludePad();
  return frame.visit(
      [&](auto &f) { return f.push(interp::avgPool2d(f.in(0), p)); });
}

OpWork AvgPool2dOp::getWork() { return windowWork(*this); }

LogicalResult AvgPool2dOp::exportONNX(ONNXEmitter &e) {
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
