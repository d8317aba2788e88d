//===- Movement.cpp - Lowering of data-movement tg ops --------------------===//
//
// Part of Loom. Transpose is linalg.transpose; reshape a collapse and an
// expansion (free after bufferization); broadcast_to an elementwise copy
// with broadcasting maps; slice, split and concat are tensor slices; pad is
// tensor.pad.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

using namespace mlir;
using namespace loom;
namespace lowering = loom::tg::lowering;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> v) {
  return llvm::map_to_vector(
      v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
}

Lowered lowerTranspose(TransposeOp op, OpBuilder &b) {
  auto type = cast<RankedTensorType>(op.getType());
  Value init = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                       type.getElementType());
  return SmallVector<Value>{
      linalg::TransposeOp::create(b, op.getLoc(), op.getInput(), init,
                                  op.getPerm())
          .getResult()[0]};
}

Lowered lowerReshape(ReshapeOp op, OpBuilder &b) {
  return SmallVector<Value>{
      reshapeTo(b, op.getLoc(), op.getInput(),
                cast<RankedTensorType>(op.getType()))};
}

Lowered lowerBroadcastTo(BroadcastToOp op, OpBuilder &b) {
  return SmallVector<Value>{elementwise(
      b, op.getLoc(), cast<RankedTensorType>(op.getType()), {op.getInput()},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; })};
}

Lowered lowerSlice(SliceOp op, OpBuilder &b) {
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> strides(type.getRank(), 1);
  if (auto s = op.getStrides())
    strides.assign(s->begin(), s->end());
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }))
    return op.emitOpError("with a stride below 1 has no lowering yet");
  return SmallVector<Value>{tensor::ExtractSliceOp::create(
      b, op.getLoc(), type, op.getInput(), indexAttrs(b, op.getStarts()),
      indexAttrs(b, type.getShape()), indexAttrs(b, strides))};
}

Lowered lowerSplit(SplitOp op, OpBuilder &b) {
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = inType.getRank();
  int64_t axis = normalizeAxis(op.getAxis(), rank);
  SmallVector<Value> results;
  int64_t offset = 0;
  for (Value r : op.getResults()) {
    auto type = cast<RankedTensorType>(r.getType());
    SmallVector<int64_t> offsets(rank, 0);
    offsets[axis] = offset;
    offset += type.getDimSize(axis);
    results.push_back(tensor::ExtractSliceOp::create(
        b, op.getLoc(), type, op.getInput(), indexAttrs(b, offsets),
        indexAttrs(b, type.getShape()),
        indexAttrs(b, SmallVector<int64_t>(rank, 1))));
  }
  return results;
}

Lowered lowerConcat(ConcatOp op, OpBuilder &b) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  int64_t axis = normalizeAxis(op.getAxis(), rank);
  Value acc = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                      type.getElementType());
  int64_t offset = 0;
  for (Value in : op.getInputs()) {
    auto inType = cast<RankedTensorType>(in.getType());
    SmallVector<int64_t> offsets(rank, 0);
    offsets[axis] = offset;
    offset += inType.getDimSize(axis);
    acc = tensor::InsertSliceOp::create(
        b, op.getLoc(), in, acc, indexAttrs(b, offsets),
        indexAttrs(b, inType.getShape()),
        indexAttrs(b, SmallVector<int64_t>(rank, 1)));
  }
  return SmallVector<Value>{acc};
}

Lowered lowerPad(PadOp op, OpBuilder &b) {
  if (llvm::any_of(op.getLow(), [](int64_t p) { return p < 0; }) ||
      llvm::any_of(op.getHigh(), [](int64_t p) { return p < 0; }))
    return op.emitOpError("with negative padding has no lowering yet");
  auto type = cast<RankedTensorType>(op.getType());
  Value value = arith::ConstantOp::create(
      b, op.getLoc(),
      b.getFloatAttr(type.getElementType(), op.getValue().convertToDouble()));
  return SmallVector<Value>{tensor::PadOp::create(
      b, op.getLoc(), type, op.getInput(), indexAttrs(b, op.getLow()),
      indexAttrs(b, op.getHigh()), value)};
}

} // namespace

void lowering::attachMovementModels(MLIRContext *context) {
  attach<TransposeOp, lowerTranspose>(context);
  attach<ReshapeOp, lowerReshape>(context);
  attach<BroadcastToOp, lowerBroadcastTo>(context);
  attach<SliceOp, lowerSlice>(context);
  attach<SplitOp, lowerSplit>(context);
  attach<ConcatOp, lowerConcat>(context);
  attach<PadOp, lowerPad>(context);
}
