//===- LinearOps.cpp - Facts of tg.matmul and tg.conv -------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "loom/Dialect/TG/IR/TGActivation.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// tg.matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferMatmul(location, adaptor.getLhs().getType(),
                     adaptor.getRhs().getType(), inferred);
}

LogicalResult MatmulOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::matmul(f.in(0), f.in(1))); });
}

OpWork MatmulOp::getWork() {
  // A multiply-add per result element and step of the contraction.
  int64_t k = getLhs().getType().getShape().back();
  return streamingWork(*this, 2.0 * double(k));
}

LogicalResult MatmulOp::exportONNX(ONNXEmitter &e) {
  return e.direct("MatMul");
}

//===----------------------------------------------------------------------===//
// tg.conv
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Type bias = adaptor.getBias() ? adaptor.getBias().getType() : Type();
  return inferConv(location, adaptor.getInput().getType(),
                     adaptor.getFilter().getType(), bias, adaptor.getStrides(),
                     adaptor.getPads(), adaptor.getDilations(),
                     adaptor.getGroups(), inferred);
}

LogicalResult ConvOp::evaluate(interp::EvalFrame &frame) {
  interp::ConvParams p;
  p.strides = arrayOf<2>(getStrides());
  p.pads = arrayOf<4>(getPads());
  p.dilations = arrayOf<2>(getDilations());
  p.groups = getGroups();
  p.activation = toActivation(getActivation());
  return frame.visit([&](auto &f) {
    return f.push(
        interp::conv(f.in(0), f.in(1), getBias() ? &f.in(2) : nullptr, p));
  });
}

OpWork ConvOp::getWork() {
  // A multiply-add per filter tap and result element, then the bias and the
  // activation per result element.
  auto filter = getFilter().getType().getShape();
  double perOutput =
      2.0 * double(filter[1]) * double(filter[2]) * double(filter[3]);
  if (getBias())
    perOutput += 1;
  if (getActivation() == tg::Activation::Relu)
    perOutput += 1;
  else if (getActivation() != tg::Activation::None)
    perOutput += kTranscendentalFlops;
  return streamingWork(*this, perOutput);
}

LogicalResult ConvOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> ins{e.input(0), e.input(1)};
  if (getBias())
    ins.push_back(e.input(2));
  bool act = getActivation() != tg::Activation::None;
  std::string conv = act ? e.fresh("_conv") : e.output();
  e.node("Conv", ins, {conv})
      .attr("kernel_shape", getFilter().getType().getShape().drop_front(2))
      .attr("strides", getStrides())
      .attr("pads", getPads())
      .attr("dilations", getDilations())
      .attr("group", int64_t(getGroups()));
  if (act) {
    StringRef kind = getActivation() == tg::Activation::Relu      ? "Relu"
                     : getActivation() == tg::Activation::Sigmoid ? "Sigmoid"
                                                              : "Tanh";
    e.node(kind, {conv}, {e.output()});
  }
  return success();
}
