//===- TGDialect.cpp - Tensor graph dialect --------------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom::tg;

#include "loom/Dialect/TG/IR/TGOpsDialect.cpp.inc"
#include "loom/Dialect/TG/IR/TGEnums.cpp.inc"
#include "loom/Dialect/TG/IR/TGInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/TG/IR/TGAttrs.cpp.inc"

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/TG/IR/TGOps.cpp.inc"
      >();
  // tg.bound is generated apart (TGBoundOp.td).
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/TG/IR/TGBoundOp.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/TG/IR/TGAttrs.cpp.inc"
      >();
}

Operation *TGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

// Arguments' tg.* attributes: `tg.tied_result` is checked against the
// function (TiedArguments.h); the others (`tg.name`, training's roles) are
// read by the passes that use them.
LogicalResult TGDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  if (attr.getName() == kTiedResultAttr)
    return verifyTiedResult(op, argIndex, attr.getValue());
  return success();
}

LogicalResult TGDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == kWeightsAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << kWeightsAttrName
                             << "' is only valid on a builtin.module";
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << kWeightsAttrName
                             << "' must be a string (a path to a "
                                "safetensors file), got "
                             << attr.getValue();
    return success();
  }
  // Set by --tg-autodiff on a forward op cloned into the backward pass
  // (docs/Training.md).
  if (attr.getName() == "tg.recomputed") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'tg.recomputed' is a unit attribute";
    return success();
  }
  // Set by --tg-fold-weights on a folded tg.round_tf32 (docs/Precision.md,
  // "TF32"): the constant's values are TF32.
  if (attr.getName() == loom::tg::kTF32ValuesAttr) {
    auto constant = dyn_cast<loom::tg::ConstantOp>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !constant ||
        !getElementTypeOrSelf(constant.getType()).isF32())
      return op->emitError() << "'" << loom::tg::kTF32ValuesAttr
                             << "' is a unit attribute of an f32 tg.constant";
    return success();
  }
  // Set by --tg-tensor-parallel on rank r's copy of a function
  // (docs/CacheParallel.md): the world rank that runs it.
  if (attr.getName() == "tg.runs_on_rank") {
    auto rank = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !rank || rank.getInt() < 0)
      return op->emitError()
             << "'tg.runs_on_rank' is a non-negative integer on a function";
    return success();
  }
  // A positive integer on a function that carries \p needs.
  auto positiveBeside = [&](StringRef needs) -> LogicalResult {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !value || value.getInt() < 1 ||
        !op->hasAttr(needs))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' is a positive integer on a function with '" << needs << "'";
    return success();
  };
  // Set by --tg-cache-parallel on a tensor-parallel rank's function: every
  // world rank w with w % period == tg.runs_on_rank runs it (a world of
  // cache- and tensor-parallel ranks, docs/CacheParallel.md).
  if (attr.getName() == "tg.rank_period")
    return positiveBeside("tg.runs_on_rank");
  // Set by --tg-pipeline-stages on a stage of a world of cache- or
  // tensor-parallel ranks: the ranks tg.runs_on_rank + k tg.rank_period,
  // k < count, run it (one stage's block of the world).
  if (attr.getName() == "tg.rank_count")
    return positiveBeside("tg.rank_period");
  return op->emitError() << "unknown tg dialect attribute '" << attr.getName().getValue()
                         << "'";
}
