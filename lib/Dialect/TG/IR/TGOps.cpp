//===- TGOps.cpp - Tensor graph operations
//---------------------------------===//
//
// Part of Loom. The op classes generated from TGOps.td, and the facts their
// family classes define there. Each op's own C++ (type inference entry,
// verifier, folders, evaluation, work, ONNX export) is in the file of its
// family: ConstantOps, ElementwiseOps, LinearOps, PoolingOps,
// DataMovementOps, ResizeOps, ReductionOps; shape rules in TypeInference.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace loom::tg;

/// tg.fragment's backend: `<onednn>`, or `<"a name">` when the registered
/// name is not a bare identifier.
static ParseResult parseBackendName(OpAsmParser &parser, StringAttr &name) {
  std::string value;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeywordOrString(&value) ||
      parser.parseGreater())
    return failure();
  if (value.empty())
    return parser.emitError(loc, "expected a backend name");
  name = parser.getBuilder().getStringAttr(value);
  return success();
}

static void printBackendName(OpAsmPrinter &printer, Operation *,
                             StringAttr name) {
  printer << "<";
  printer.printKeywordOrString(name.getValue());
  printer << ">";
}

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGOps.cpp.inc"
