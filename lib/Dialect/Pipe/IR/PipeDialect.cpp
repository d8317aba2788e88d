//===- PipeDialect.cpp - Pipeline schedule dialect ------------------------===//
//
// Part of Loom. The ops, the textual form of action lists, and the op
// verifier (the structure; lib/Dialect/Pipe/Schedule/Verifier.cpp checks the
// semantics).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/IR/PipeOps.h"
#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace loom::pipe;

#include "loom/Dialect/Pipe/IR/PipeOpsDialect.cpp.inc"

void PipeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Pipe/IR/PipeOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Action lists: `[F @s0 0, SEND_F @s0 0 to @s1 on @d1, ...]`
//===----------------------------------------------------------------------===//

static ParseResult parseActions(OpAsmParser &parser, ArrayAttr &refs,
                                DenseI32ArrayAttr &actions) {
  llvm::StringMap<int32_t> index;
  SmallVector<Attribute> names;
  SmallVector<int32_t> values;
  auto ref = [&](StringAttr name) -> int32_t {
    auto [it, inserted] = index.try_emplace(name.getValue(), names.size());
    if (inserted)
      names.push_back(FlatSymbolRefAttr::get(name));
    return it->second;
  };
  auto parseOne = [&]() -> ParseResult {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    std::optional<ActionKind> kind = parseActionKind(keyword);
    if (!kind)
      return parser.emitError(loc, "unknown pipeline action '")
             << keyword << "' (expected F, B, I, W, SEND_F, RECV_F, SEND_B or RECV_B)";
    StringAttr stage;
    int32_t microBatch;
    if (parser.parseSymbolName(stage) || parser.parseInteger(microBatch))
      return failure();
    int32_t peerStage = -1, peerDevice = -1;
    if (!isCompute(*kind)) {
      StringAttr peer, device;
      if (parser.parseKeyword(isSend(*kind) ? "to" : "from") ||
          parser.parseSymbolName(peer) || parser.parseKeyword("on") ||
          parser.parseSymbolName(device))
        return failure();
      peerStage = ref(peer);
      peerDevice = ref(device);
    }
    values.append({static_cast<int32_t>(*kind), ref(stage), microBatch,
                   peerStage, peerDevice});
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  refs = parser.getBuilder().getArrayAttr(names);
  actions = parser.getBuilder().getDenseI32ArrayAttr(values);
  return success();
}

static void printActions(OpAsmPrinter &p, Operation *, ArrayAttr refs,
                         DenseI32ArrayAttr actions) {
  ArrayRef<int32_t> values = actions.asArrayRef();
  auto name = [&](int32_t i) {
    if (i >= 0 && i < static_cast<int32_t>(refs.size()))
      p.printAttributeWithoutType(refs[i]);
    else
      p << "@<bad ref " << i << ">";
  };
  p << "[";
  p.increaseIndent();
  for (size_t i = 0; i + 5 <= values.size(); i += 5) {
    if (i)
      p << ",";
    p.printNewline();
    auto kind = static_cast<ActionKind>(values[i]);
    p << actionKindName(kind) << " ";
    name(values[i + 1]);
    p << " " << values[i + 2];
    if (!isCompute(kind)) {
      p << (isSend(kind) ? " to " : " from ");
      name(values[i + 3]);
      p << " on ";
      name(values[i + 4]);
    }
  }
  p.decreaseIndent();
  if (!values.empty())
    p.printNewline();
  p << "]";
}

//===----------------------------------------------------------------------===//
// Filler action lists: `[F 0 0 at 3, B 0 0 at 3, ...]`
//===----------------------------------------------------------------------===//

static ParseResult parseFillActions(OpAsmParser &parser,
                                    DenseI32ArrayAttr &actions) {
  SmallVector<int32_t> values;
  auto parseOne = [&]() -> ParseResult {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    if (keyword != "F" && keyword != "B")
      return parser.emitError(loc, "unknown filler action '")
             << keyword << "' (expected F or B)";
    int32_t step, microBatch, at;
    if (parser.parseInteger(step) || parser.parseInteger(microBatch) ||
        parser.parseKeyword("at") || parser.parseInteger(at))
      return failure();
    values.append({keyword == "B" ? 1 : 0, step, microBatch, at});
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  actions = parser.getBuilder().getDenseI32ArrayAttr(values);
  return success();
}

static void printFillActions(OpAsmPrinter &p, Operation *,
                             DenseI32ArrayAttr actions) {
  ArrayRef<int32_t> values = actions.asArrayRef();
  p << "[";
  p.increaseIndent();
  for (size_t i = 0; i + 4 <= values.size(); i += 4) {
    if (i)
      p << ",";
    p.printNewline();
    p << (values[i] == 1 ? "B " : values[i] == 0 ? "F " : "<bad kind> ")
      << values[i + 1] << " " << values[i + 2] << " at " << values[i + 3];
  }
  p.decreaseIndent();
  if (!values.empty())
    p.printNewline();
  p << "]";
}

#define GET_OP_CLASSES
#include "loom/Dialect/Pipe/IR/PipeOps.cpp.inc"

//===----------------------------------------------------------------------===//
// pipe.schedule
//===----------------------------------------------------------------------===//

void ScheduleOp::build(OpBuilder &builder, OperationState &state,
                       StringRef name, int64_t microBatches) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getMicroBatchesAttrName(state.name),
                     builder.getI64IntegerAttr(microBatches));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

LogicalResult ScheduleOp::verify() {
  // readSchedule resolves every name and checks every action's structure.
  return readSchedule(*this);
}

LogicalResult
ScheduleOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *module = (*this)->getParentOp();
  if (!module)
    return success();
  for (auto stage : getBody().getOps<StageOp>()) {
    for (FlatSymbolRefAttr ref :
         {stage.getForwardAttr(), stage.getBackwardAttr(),
          stage.getInputGradAttr(), stage.getWeightGradAttr()}) {
      if (!ref)
        continue;
      if (!symbolTable.lookupNearestSymbolFrom<func::FuncOp>(module, ref))
        return stage.emitOpError("names function ")
               << ref << ", which is not a func.func of the module";
    }
  }
  return success();
}
