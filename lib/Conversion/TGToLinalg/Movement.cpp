//===- Movement.cpp - Lowering of data-movement tg ops --------------------===//
//
// Part of Loom. Transpose is linalg.transpose; reshape a collapse and an
// expansion (free after bufferization); broadcast_to an elementwise copy
// with broadcasting maps; slice, split and concat are tensor slices; pad is
// tensor.pad; resize reads its input at the interpreter's own taps
// (constant index and weight tensors per dimension).
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"

#include "loom/Interpreter/ResizeKernel.h"

#include <functional>

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

/// A bound only states which part of its input is valid: its input itself,
/// no copy (loom-compile erases it before lowering; --tg-erase-bounds).
Lowered lowerBound(BoundOp op, OpBuilder &) {
  return SmallVector<Value>{op.getInput()};
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
        Value wrapped = wrapIndex(nb, nl, raw, dim);
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

/// tg.update_slice as one linalg.generic over the output: out[..., p, ...] =
/// p - at in [0, U) ? update[..., p - at, ...] : base[..., p, ...], with
/// at = clamp(offset, 0, N - U) (the offset of the whole tensor, or of the
/// index of dimension 0). A value-semantics kernel copies the whole base;
/// the CPU's libloomrt step writes only the slice in place (Dynamic.cpp,
/// loomrt.update_slice).
Lowered lowerUpdateSlice(UpdateSliceOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto outType = cast<RankedTensorType>(op.getType());
  auto offType = cast<RankedTensorType>(op.getOffsets().getType());
  int64_t rank = outType.getRank();
  int64_t axis = normalizeAxis(int64_t(op.getAxis()), rank);
  int64_t dim = outType.getDimSize(axis);
  int64_t rows = cast<RankedTensorType>(op.getUpdate().getType()).getDimSize(axis);
  SmallVector<AffineExpr> offExprs;
  if (offType.getRank() == 1)
    offExprs.push_back(b.getAffineDimExpr(0));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, offExprs, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType());
  Value update = op.getUpdate();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{op.getBase(), op.getOffsets()},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto cst = [&](int64_t v) {
          return arith::ConstantOp::create(nb, nl, nb.getIndexAttr(v));
        };
        auto clamp = [&](Value v, int64_t lo, int64_t hi) {
          return arith::MaxSIOp::create(
              nb, nl, cst(lo), arith::MinSIOp::create(nb, nl, v, cst(hi)));
        };
        Value at = clamp(arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                    args[1]),
                         0, dim - rows);
        Value rel = arith::SubIOp::create(
            nb, nl, linalg::IndexOp::create(nb, nl, axis), at);
        Value inside = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, rel, cst(0)),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, rel,
                                  cst(rows)));
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(d == axis ? Value(clamp(rel, 0, rows - 1))
                                      : Value(linalg::IndexOp::create(nb, nl, d)));
        Value written = tensor::ExtractOp::create(nb, nl, update, indices);
        linalg::YieldOp::create(
            nb, nl,
            Value(arith::SelectOp::create(nb, nl, inside, written, args[0])));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

/// tg.scatter_add as one linalg.generic over the output and the index
/// dimensions (a reduction): out[..., d, ...] = sum_j (indices[j] == d ?
/// updates[..., j, ...] : 0), with negative indices wrapped. The output
/// index is data-dependent, so a generic cannot write it directly; this form
/// does dim_size times the work of the scatter (every output position
/// visits every index), which is fine for the embedding and gather
/// gradients of the models Loom trains. Past kMaxScatterAddVisits visits
/// (an ONNX ScatterElements of a detector's region features: a million
/// updates into a million positions) it is a loop over the updates instead
/// (lowerScatterAddLoop, Dynamic.cpp: sequential, but one visit per
/// update). An out-of-range index matches no position (the interpreter
/// reports it).
constexpr int64_t kMaxScatterAddVisits = int64_t(1) << 26;

Lowered lowerScatterAdd(ScatterAddOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto idxType = cast<RankedTensorType>(op.getIndices().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t outRank = outType.getRank(), ri = idxType.getRank();
  int64_t axis = normalizeAxis(int64_t(op.getAxis()), outRank);
  int64_t dim = int64_t(op.getDimSize());
  auto updType = cast<RankedTensorType>(op.getUpdates().getType());
  if (dim > 0 && updType.getNumElements() > kMaxScatterAddVisits / dim)
    return lowerScatterAddLoop(op, b);
  int64_t loops = outRank + ri;
  SmallVector<AffineExpr> updExprs, idxExprs;
  for (int64_t d = 0; d < axis; ++d)
    updExprs.push_back(b.getAffineDimExpr(d));
  for (int64_t j = 0; j < ri; ++j) {
    updExprs.push_back(b.getAffineDimExpr(outRank + j));
    idxExprs.push_back(b.getAffineDimExpr(outRank + j));
  }
  for (int64_t d = axis + 1; d < outRank; ++d)
    updExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < outRank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {
      AffineMap::get(loops, 0, updExprs, b.getContext()),
      AffineMap::get(loops, 0, idxExprs, b.getContext()),
      AffineMap::get(loops, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(outRank,
                                             utils::IteratorType::parallel);
  iterators.append(ri, utils::IteratorType::reduction);
  Value init = filled(b, loc, outType, 0.0);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{op.getUpdates(), op.getIndices()},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value at = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                              wrapIndex(nb, nl, args[1], dim));
        Value hit = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq, at,
            linalg::IndexOp::create(nb, nl, axis));
        Value sum = arith::AddFOp::create(nb, nl, args[2], args[0]);
        linalg::YieldOp::create(
            nb, nl, Value(arith::SelectOp::create(nb, nl, hit, sum, args[2])));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

/// One resampled dimension: per tap k, the input index and weight of every
/// output index (unused taps have weight 0 at index 0).
struct ResizedDim {
  int64_t dim;
  SmallVector<SmallVector<int32_t>> index;
  SmallVector<SmallVector<float>> weight;
};

/// ONNX Resize as one linalg.generic over the output: the dimensions are
/// interpolated in the interpreter's order (the first resized dimension
/// innermost), each partial sum rounded to f32 as the interpreter's pass
/// over that dimension rounds it, from taps computed by the interpreter's
/// own resizeTaps. A single generic tiles over threads whole.
Lowered lowerResize(ResizeOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t rank = inType.getRank();
  interp::ResizeParams params = interp::resizeParamsOf(op);
  SmallVector<ResizedDim> dims;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = inType.getDimSize(d), out = params.sizes[d];
    double scale = params.scales.empty() ? double(out) / double(in)
                                         : params.scales[d];
    auto taps = interp::kernels_detail::resizeTaps(in, out, scale, params);
    bool identity = in == out;
    size_t width = 1;
    for (int64_t i = 0; i < out; ++i) {
      identity &= taps[i].size() == 1 && taps[i][0].index == i &&
                  taps[i][0].weight == 1;
      width = std::max(width, taps[i].size());
    }
    if (identity)
      continue;
    ResizedDim r{d, {}, {}};
    r.index.assign(width, SmallVector<int32_t>(out, 0));
    r.weight.assign(width, SmallVector<float>(out, 0.f));
    for (int64_t i = 0; i < out; ++i)
      for (auto [k, tap] : llvm::enumerate(taps[i])) {
        r.index[k][i] = int32_t(tap.index);
        r.weight[k][i] = float(tap.weight);
      }
    dims.push_back(std::move(r));
  }
  // Inputs: every dimension's index tensors, then its weight tensors.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const ResizedDim &r : dims) {
    int64_t out = outType.getDimSize(r.dim);
    auto idxType = RankedTensorType::get({out}, b.getI32Type());
    auto wType = RankedTensorType::get({out}, b.getF32Type());
    for (const auto &v : r.index)
      inputs.push_back(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(idxType, ArrayRef<int32_t>(v))));
    for (const auto &v : r.weight)
      inputs.push_back(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(wType, ArrayRef<float>(v))));
    for (size_t k = 0; k < 2 * r.index.size(); ++k)
      maps.push_back(AffineMap::get(rank, 0, b.getAffineDimExpr(r.dim)));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType());
  Value x = op.getInput();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        Value zero = f32(nb, nl, 0.0);
        // The value interpolated along dims[0..level) at `at`.
        std::function<Value(size_t, size_t)> value = [&](size_t level,
                                                         size_t first) {
          if (level == 0)
            return Value(tensor::ExtractOp::create(nb, nl, x, at));
          const ResizedDim &r = dims[level - 1];
          size_t width = r.index.size();
          size_t before = first - 2 * width; // this dim's first input
          Value acc = zero;
          for (size_t k = 0; k < width; ++k) {
            Value saved = at[r.dim];
            at[r.dim] = arith::IndexCastOp::create(
                nb, nl, nb.getIndexType(), args[before + k]);
            Value v = value(level - 1, before);
            at[r.dim] = saved;
            acc = arith::AddFOp::create(
                nb, nl, acc,
                arith::MulFOp::create(nb, nl, args[before + width + k], v));
          }
          return acc;
        };
        linalg::YieldOp::create(nb, nl, value(dims.size(), inputs.size()));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

} // namespace

Value lowering::wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t dim) {
  Type it = raw.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(it, 0));
  Value size = arith::ConstantOp::create(b, loc, b.getIntegerAttr(it, dim));
  Value neg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, raw, zero);
  return arith::SelectOp::create(b, loc, neg,
                                 arith::AddIOp::create(b, loc, raw, size), raw);
}

void lowering::attachMovementModels(MLIRContext *context) {
  attach<TransposeOp, lowerTranspose>(context);
  attach<ReshapeOp, lowerReshape>(context);
  attach<BoundOp, lowerBound>(context);
  attach<BroadcastToOp, lowerBroadcastTo>(context);
  attach<SliceOp, lowerSlice>(context);
  attach<SplitOp, lowerSplit>(context);
  attach<ConcatOp, lowerConcat>(context);
  attach<PadOp, lowerPad>(context);
  attach<GatherOp, lowerGather>(context);
  attach<ScatterAddOp, lowerScatterAdd>(context);
  attach<UpdateSliceOp, lowerUpdateSlice>(context);
  attach<EnlargeOp, lowerEnlarge>(context);
  attach<ResizeOp, lowerResize>(context);
}
