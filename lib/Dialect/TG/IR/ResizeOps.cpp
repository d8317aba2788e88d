//===- ResizeOps.cpp - Facts of tg.resize ---------------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "loom/Interpreter/ResizeKernel.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferResize(location, adaptor.getInput().getType(), adaptor.getSizes(),
                     adaptor.getScales(), inferred);
}

interp::ResizeParams interp::resizeParamsOf(ResizeOp op) {
  interp::ResizeParams p;
  p.sizes.assign(op.getSizes().begin(), op.getSizes().end());
  if (auto scales = op.getScales())
    p.scales.assign(scales->begin(), scales->end());
  p.mode = op.getMode();
  p.coordinateMode = op.getCoordinateTransformationMode();
  p.nearestMode = op.getNearestMode();
  p.cubicCoeffA = op.getCubicCoeffA().convertToDouble();
  p.excludeOutside = op.getExcludeOutside();
  return p;
}

LogicalResult ResizeOp::evaluate(interp::EvalFrame &frame) {
  interp::ResizeParams p = interp::resizeParamsOf(*this);
  return frame.visit(
      [&](auto &f) { return f.push(interp::resize(f.in(0), p)); });
}

// Interpolation weights are not counted: bytes dominate.
OpWork ResizeOp::getWork() { return streamingWork(*this, 0); }

LogicalResult ResizeOp::exportONNX(ONNXEmitter &e) {
  auto inShape = getInput().getType().getShape();
  // Scales when they reproduce the sizes in float32, else sizes.
  bool useScales = false;
  if (auto scales = getScales()) {
    useScales = true;
    for (size_t d = 0; d < inShape.size(); ++d) {
      float s = static_cast<float>((*scales)[d]);
      useScales &= static_cast<int64_t>(std::floor(
                       static_cast<double>(inShape[d]) * s)) == getSizes()[d];
    }
  }
  SmallVector<std::string> ins{e.input(0), ""};
  if (useScales) {
    ins.push_back(e.constF32(*getScales(), "_scales"));
  } else {
    ins.push_back("");
    ins.push_back(e.constI64(getSizes(), "_sizes"));
  }
  e.node("Resize", ins, {e.output()})
      .attr("mode", stringifyResizeMode(getMode()))
      .attr("coordinate_transformation_mode",
            stringifyResizeCoordinateMode(getCoordinateTransformationMode()))
      .attr("nearest_mode", stringifyResizeNearestMode(getNearestMode()))
      .attr("cubic_coeff_a", getCubicCoeffA().convertToDouble())
      .attr("exclude_outside", int64_t(getExcludeOutside()));
  return success();
}
