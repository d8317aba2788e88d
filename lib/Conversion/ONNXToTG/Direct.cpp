//===- Direct.cpp - ONNX operators that are exactly one tg op -------------===//
//
// Part of Loom. A tg op that is exactly one ONNX operator (same inputs, same
// outputs, no attributes) says so in its ONNXExportOpInterface
// (getONNXOpType). The importer maps such a node type to the op without a
// handler of its own: adding an op of that kind to tg is enough for both
// export and import. Operators with a handler keep it (the handler may fold
// known values, accept integers or older opsets).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

/// Calls \p fn(op, onnxType) for every registered tg op that is exactly one
/// ONNX operator.
static void forEachDirectOp(
    MLIRContext *context,
    llvm::function_ref<void(RegisteredOperationName, StringRef)> fn) {
  auto *dialect = context->getOrLoadDialect<tg::TGDialect>();
  for (RegisteredOperationName op : context->getRegisteredOperations()) {
    if (&op.getDialect() != dialect)
      continue;
    auto *exportable = op.getInterface<tg::ONNXExportOpInterface>();
    if (!exportable)
      continue;
    StringRef onnxType = exportable->getONNXOpType();
    if (!onnxType.empty())
      fn(op, onnxType);
  }
}

/// Imports a node as the tg op that names its type: all inputs, in order,
/// must be given and floating point; the result type is the op's shape rule.
static LogicalResult importDirect(NodeContext &ctx) {
  std::optional<RegisteredOperationName> match;
  forEachDirectOp(ctx.context(), [&](RegisteredOperationName op, StringRef t) {
    if (t == ctx.opType())
      match = op;
  });
  if (!match)
    return ctx.fail("no tg operator is this ONNX operator");
  if (ctx.node().attribute_size() > 0)
    return ctx.fail("attribute '" + ctx.node().attribute(0).name() +
                    "' is not supported (" + match->getStringRef() +
                    " takes none)");
  SmallVector<Value> operands;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is required");
    if (failed(ctx.requireFloatInput(i)))
      return failure();
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  auto op = ctx.createOp(match->getStringRef(), operands, {}, std::nullopt);
  if (failed(op))
    return failure();
  if ((*op)->getNumResults() != ctx.numOutputs())
    return ctx.fail("has " + Twine(ctx.numOutputs()) + " outputs, " +
                    match->getStringRef() + " " +
                    Twine((*op)->getNumResults()));
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      ctx.setOutput(i, (*op)->getResult(i));
  return success();
}

void onnx_to_tg::populateDirectHandlers(HandlerTable &table) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  forEachDirectOp(&context, [&](RegisteredOperationName, StringRef onnxType) {
    table.try_emplace(onnxType, importDirect);
  });
}
