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
  Type element = type.getElementType();
  double v = op.getValue().convertToDouble();
  TypedAttr attr = isa<FloatType>(element)
                       ? TypedAttr(b.getFloatAttr(element, v))
                       : TypedAttr(b.getIntegerAttr(element, int64_t(v)));
  Value value = arith::ConstantOp::create(b, op.getLoc(), attr);
  return SmallVector<Value>{tensor::PadOp::create(
      b, op.getLoc(), type, op.getInput(), indexAttrs(b, op.getLow()),
      indexAttrs(b, op.getHigh()), value)};
}

/// The filter zero-padded to the kernel size, its taps centred.
Lowered lowerEnlarge(EnlargeOp op, OpBuilder &b) {
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t dh = (type.getDimSize(2) - inType.getDimSize(2)) / 2;
  int64_t dw = (type.getDimSize(3) - inType.getDimSize(3)) / 2;
  Value zero = arith::ConstantOp::create(
      b, op.getLoc(), b.getFloatAttr(type.getElementType(), 0.0));
  return SmallVector<Value>{tensor::PadOp::create(
      b, op.getLoc(), type, op.getInput(), indexAttrs(b, {0, 0, dh, dw}),
      indexAttrs(b, {0, 0, dh, dw}), zero)};
}

/// out[o..., j..., i...] = data[o..., idx[j...], i...], with the index made
/// non-negative as the interpreter does. An index out of range, which the
/// interpreter reports as an error, is clamped: generated code has no way
/// to report it, and a clamped read stays inside the buffer.
Lowered lowerGather(GatherOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto dataType = cast<RankedTensorType>(op.getData().getType());
  auto idxType = cast<RankedTensorType>(op.getIndices().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t rank = dataType.getRank(), ri = idxType.getRank();
  int64_t axis = normalizeAxis(int64_t(op.getAxis()), rank);
  int64_t outRank = outType.getRank();
  int64_t dim = dataType.getDimSize(axis);
  SmallVector<AffineExpr> idxExprs;
  for (int64_t j = 0; j < ri; ++j)
    idxExprs.push_back(b.getAffineDimExpr(axis + j));
  SmallVector<AffineMap> maps = {
      AffineMap::get(outRank, 0, idxExprs, b.getContext()),
      b.getMultiDimIdentityMap(outRank)};
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType());
  Value data = op.getData();
  SmallVector<utils::IteratorType> iterators(outRank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{op.getIndices()}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value raw = args[0];
        Type it = raw.getType();
        auto cst = [&](int64_t v) {
          return arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(it, v));
        };
        Value zero = cst(0);
        Value neg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                          raw, zero);
        Value wrapped = arith::SelectOp::create(
            nb, nl, neg, arith::AddIOp::create(nb, nl, raw, cst(dim)), raw);
        Value clamped = arith::MaxSIOp::create(
            nb, nl, zero, arith::MinSIOp::create(nb, nl, wrapped, cst(dim - 1)));
        Value at = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), clamped);
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d) {
          if (d == axis)
            indices.push_back(at);
          else
            indices.push_back(linalg::IndexOp::create(
                nb, nl, d < axis ? d : d + ri - 1));
        }
        linalg::YieldOp::create(
            nb, nl, Value(tensor::ExtractOp::create(nb, nl, data, indices)));
      });
  return SmallVector<Value>{generic.getResult(0)};
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
  attach<GatherOp, lowerGather>(context);
  attach<EnlargeOp, lowerEnlarge>(context);
}
