//===- OpWork.cpp - FLOPs and bytes of an op ------------------------------===//
//
// Part of Loom. The work of every tg op is written once, beside the op
// (WorkOpInterface in lib/Dialect/TG/IR/*Ops.cpp); this is the cost models'
// entry point. Conventions: a multiply-add is 2 FLOPs; an elementwise op
// built from transcendental functions counts kTranscendentalFlops per
// element; data movement is 0 FLOPs; every operand is read once and every
// result written once.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"

#include "loom/Dialect/TG/IR/TGOps.h"

using namespace mlir;
using namespace loom;
using namespace loom::cost;

OpWork cost::workOf(Operation *op) {
  if (auto withWork = dyn_cast<tg::WorkOpInterface>(op))
    return withWork.getWork();
  OpWork none;
  none.kernel = false;
  if (isa<tg::TGDialect>(op->getDialect()))
    op->emitOpError("has no work model (WorkOpInterface); counted as zero");
  return none;
}
