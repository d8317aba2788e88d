//===- ONNXEmitter.cpp - What a tg op sees when it is exported ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/ONNXEmitter.h"

using namespace mlir;
using namespace loom::tg;

ONNXEmitter::~ONNXEmitter() = default;

ONNXNode &ONNXNode::attr(StringRef name, int64_t value) {
  emitter->setAttr(node, name, value);
  return *this;
}
ONNXNode &ONNXNode::attr(StringRef name, double value) {
  emitter->setAttr(node, name, value);
  return *this;
}
ONNXNode &ONNXNode::attr(StringRef name, StringRef value) {
  emitter->setAttr(node, name, value);
  return *this;
}
ONNXNode &ONNXNode::attr(StringRef name, ArrayRef<int64_t> values) {
  emitter->setAttr(node, name, values);
  return *this;
}

LogicalResult ONNXNode::graph(StringRef name, Block &body,
                              ArrayRef<std::string> outerArgs) {
  return emitter->setGraph(node, name, body, outerArgs);
}

LogicalResult ONNXEmitter::direct(StringRef opType) {
  SmallVector<std::string> inputs, outputs;
  for (unsigned i = 0, e = numInputs(); i < e; ++i)
    inputs.push_back(input(i));
  for (unsigned i = 0, e = numOutputs(); i < e; ++i)
    outputs.push_back(output(i));
  node(opType, inputs, outputs);
  return success();
}
