//===- FragmentOps.cpp - Facts of tg.fragment -----------------------------===//
//
// Part of Loom. A fragment's facts are its body's: the interpreter runs the
// body, its work is the sum of its ops' work, and ONNX export writes the
// body's nodes in its place.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

void FragmentOp::build(OpBuilder &builder, OperationState &state,
                       TypeRange resultTypes, ValueRange inputs,
                       StringRef backend) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  state.addAttribute(getBackendAttrName(state.name),
                     builder.getStringAttr(backend));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value v : inputs)
    block->addArgument(v.getType(), v.getLoc());
}

LogicalResult FragmentOp::verify() {
  if (getBackend().empty())
    return emitOpError("names no backend");
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("body arguments must have the types of the inputs");
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getResults().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getResults().getTypes() << " but has results of type "
           << getResultTypes();
  for (Operation &op : body.without_terminator()) {
    if (!isa<TGDialect>(op.getDialect()))
      return op.emitOpError("cannot be inside a tg.fragment (only tg ops "
                            "can)");
    if (isa<WeightOp, FragmentOp, IfOp>(op))
      return op.emitOpError("cannot be inside a tg.fragment (weights enter "
                            "as inputs; fragments do not nest; fragments "
                            "form inside the regions of a tg.if)");
  }
  return success();
}

LogicalResult FragmentOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.pushBodyResults(getBody().front()); });
}

OpWork FragmentOp::getWork() {
  // One launch: the FLOPs of the body; the bytes crossing the fragment's
  // boundary (what stays inside is fused).
  OpWork work = streamingWork(*this, 0);
  work.kernel = false;
  for (Operation &op : getBody().front().without_terminator()) {
    OpWork inner = cast<WorkOpInterface>(op).getWork();
    work.flops += inner.flops;
    work.kernel |= inner.kernel;
  }
  return work;
}

LogicalResult FragmentOp::exportONNX(ONNXEmitter &e) {
  return e.exportBody(getBody().front());
}
