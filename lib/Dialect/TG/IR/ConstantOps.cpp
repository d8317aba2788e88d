//===- ConstantOps.cpp - Facts of tg.constant and tg.weight ---------------===//
//
// Part of Loom. Constants live in the IR; weights in the module's
// safetensors file, which the interpreter and the ONNX exporter read (the
// frame and the emitter hand them over).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// tg.constant
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult ConstantOp::evaluate(interp::EvalFrame &frame) {
  auto dense = dyn_cast<DenseElementsAttr>(getValue());
  if (!dense)
    return emitOpError("holds a ")
           << getValue() << "; the interpreter reads dense constants only";
  std::vector<double> values;
  values.reserve(dense.getNumElements());
  Type e = dense.getElementType();
  if (isa<FloatType>(e)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  } else if (e.isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      values.push_back(v ? 1.0 : 0.0);
  } else {
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(double(v.getSExtValue()));
  }
  return frame.visit(
      [&](auto &f) { return f.pushDoubles(shapeOf(getType()), values); });
}

OpWork ConstantOp::getWork() { return metadataWork(); }

LogicalResult ConstantOp::exportONNX(ONNXEmitter &e) {
  auto name = e.constant(getValue());
  if (failed(name))
    return failure();
  e.alias(0, *name);
  return success();
}

//===----------------------------------------------------------------------===//
// tg.weight
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  return success();
}

LogicalResult WeightOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) { return f.pushWeight(); });
}

OpWork WeightOp::getWork() { return metadataWork(); }

LogicalResult WeightOp::exportONNX(ONNXEmitter &e) {
  auto name = e.weight();
  if (failed(name))
    return failure();
  e.alias(0, *name);
  return success();
}
