//===- Scan.cpp - tg.scan as one scf.for ----------------------------------===//
//
// Part of Loom. A tg.scan becomes one scf.for over its steps: the carried
// values and the stacked outputs are the loop's iteration arguments, each
// step reads its slice of every sequence with tensor.extract_slice and
// writes its outputs into the stacked ones with tensor.insert_slice
// (bufferization makes both views of the kernel's buffers), the next
// carried values are copied over the previous ones, and the body,
// already lowered (the pass lowers nested ops first), moves into the loop.
// The kernel then holds one copy of the step, whatever the trip count.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

/// Offsets [t, 0, ...], sizes [1, shape...] and unit strides of step `t`'s
/// slice of a value of \p type (the stacked or sequence type).
struct StepSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  StepSlice(OpBuilder &b, Value t, RankedTensorType type) {
    offsets.push_back(t);
    sizes.push_back(b.getIndexAttr(1));
    for (int64_t d : type.getShape().drop_front()) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(d));
    }
    strides.assign(type.getRank(), b.getIndexAttr(1));
  }
};

Lowered lowerScan(ScanOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  const int64_t n = op.getTripCount();
  const unsigned numCarried = op.getInits().size();
  SmallVector<Value> iterInits(op.getInits());
  for (Value r : op.getStacked()) {
    auto type = cast<RankedTensorType>(r.getType());
    iterInits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                                type.getElementType()));
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value count = arith::ConstantIndexOp::create(b, loc, n);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, count, one, iterInits);
  Block *loopBody = loop.getBody();
  if (!loopBody->empty())
    loopBody->getTerminator()->erase();
  OpBuilder in = OpBuilder::atBlockEnd(loopBody);
  Value t = loop.getInductionVar();
  if (op.getReverse())
    t = arith::SubIOp::create(
        in, loc, arith::ConstantIndexOp::create(in, loc, n - 1), t);

  Block &body = op.getBodyBlock();
  ValueRange iterArgs = loop.getRegionIterArgs();
  for (unsigned i = 0; i < numCarried; ++i)
    body.getArgument(i).replaceAllUsesWith(iterArgs[i]);
  for (auto [j, seq] : llvm::enumerate(op.getSequences())) {
    auto type = cast<RankedTensorType>(seq.getType());
    BlockArgument arg = body.getArgument(op.getFirstSliceArgument() + j);
    StepSlice s(in, t, type);
    Value slice = tensor::ExtractSliceOp::create(
        in, loc, cast<RankedTensorType>(arg.getType()), seq, s.offsets,
        s.sizes, s.strides);
    arg.replaceAllUsesWith(slice);
  }
  for (auto [k, inv] : llvm::enumerate(op.getInvariants()))
    body.getArgument(op.getFirstInvariantArgument() + k)
        .replaceAllUsesWith(inv);

  Operation *yield = body.getTerminator();
  loopBody->getOperations().splice(loopBody->end(), body.getOperations(),
                                   body.begin(), Block::iterator(yield));
  in.setInsertionPointToEnd(loopBody);
  // The next carried values are copied into the loop's own (bufferization
  // keeps one buffer per carried value; the step reads the old value before
  // the copy overwrites it).
  SmallVector<Value> next;
  for (auto [y, carried] :
       llvm::zip(yield->getOperands().take_front(numCarried), iterArgs))
    next.push_back(
        linalg::CopyOp::create(in, loc, ValueRange{y}, ValueRange{carried})
            .getResult(0));
  for (auto [k, y] :
       llvm::enumerate(yield->getOperands().drop_front(numCarried))) {
    Value stacked = iterArgs[numCarried + k];
    StepSlice s(in, t, cast<RankedTensorType>(stacked.getType()));
    next.push_back(tensor::InsertSliceOp::create(in, loc, y, stacked,
                                                 s.offsets, s.sizes,
                                                 s.strides));
  }
  scf::YieldOp::create(in, loc, next);
  return SmallVector<Value>(loop.getResults());
}

} // namespace

void lowering::attachLoopModels(MLIRContext *context) {
  context->loadDialect<scf::SCFDialect>();
  attach<ScanOp, lowerScan>(context);
}
