//===- ControlFlowOps.cpp - Facts of tg.if --------------------------------===//
//
// Part of Loom. tg.if evaluates one of its two regions at run time. Its
// facts: the interpreter runs the region the condition selects; its work is
// the larger of the two regions' (a cost model cannot know which runs);
// ONNX export writes an If node with the regions as its branches; a
// condition known at compile time folds the op away.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

void IfOp::build(OpBuilder &builder, OperationState &state,
                 TypeRange resultTypes, Value condition) {
  state.addOperands(condition);
  state.addTypes(resultTypes);
  for (int i = 0; i < 2; ++i)
    state.addRegion()->push_back(new Block());
}

LogicalResult IfOp::verify() {
  if (getCondition().getType().getNumElements() != 1)
    return emitOpError("condition must have one element, it has type ")
           << getCondition().getType();
  for (auto [name, region] :
       {std::pair<StringRef, Region *>{"then", &getThenRegion()},
        {"else", &getElseRegion()}}) {
    Block &block = region->front();
    auto yield = cast<YieldOp>(block.getTerminator());
    if (yield.getResults().getTypes() != getResultTypes())
      return emitOpError("the ")
             << name << " region yields " << yield.getResults().getTypes()
             << " but the op has results of type " << getResultTypes();
    for (Operation &op : block.without_terminator())
      if (!isa<TGDialect>(op.getDialect()))
        return op.emitOpError("cannot be inside a tg.if (only tg ops can)");
  }
  return success();
}

namespace {
/// tg.if on a constant condition is the region it selects.
struct InlineKnownBranch : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr value;
    if (!matchPattern(op.getCondition(), m_Constant(&value)))
      return failure();
    Block &block = op.getBlock(*value.value_begin<bool>());
    auto yield = cast<YieldOp>(block.getTerminator());
    SmallVector<Value> results(yield.getResults());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, op);
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void IfOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                       MLIRContext *context) {
  results.add<InlineKnownBranch>(context);
}

LogicalResult IfOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) {
    using D = typename std::remove_reference_t<decltype(f)>::Domain;
    bool taken = D::toDouble(f.in(0).data.front()) != 0;
    return f.pushBlockResults(getBlock(taken));
  });
}

OpWork tg::blockWork(Block &block) {
  OpWork work = metadataWork();
  for (Operation &op : block.without_terminator()) {
    OpWork inner = cast<WorkOpInterface>(op).getWork();
    work.flops += inner.flops;
    work.bytesRead += inner.bytesRead;
    work.bytesWritten += inner.bytesWritten;
    work.kernel |= inner.kernel;
  }
  return work;
}

OpWork IfOp::getWork() {
  OpWork thenWork = blockWork(getThenBlock());
  OpWork elseWork = blockWork(getElseBlock());
  return thenWork.flops + thenWork.bytes() >= elseWork.flops + elseWork.bytes()
             ? thenWork
             : elseWork;
}

LogicalResult IfOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> outputs;
  for (unsigned i = 0; i < getNumResults(); ++i)
    outputs.push_back(e.output(i));
  ONNXNode node = e.node("If", {e.input(0)}, outputs);
  if (failed(node.graph("then_branch", getThenBlock())))
    return failure();
  return node.graph("else_branch", getElseBlock());
}
