//===- DataMovementOps.cpp - Facts of the data-movement tg ops ------------===//
//
// Part of Loom. transpose, reshape, concat, split, slice, pad, enlarge,
// broadcast_to and gather: no arithmetic, only bytes moved (reshape and
// split move none: a reshape is metadata, and a split's pieces are strided
// views that consumers read in place, as TASO assumes).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// tg.transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferTranspose(location, adaptor.getInput().getType(),
                        adaptor.getPerm(), inferred);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  if (auto splat =
          llvm::dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

namespace {
/// transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             perm);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

LogicalResult TransposeOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit(
      [&](auto &f) { return f.push(interp::transpose(f.in(0), getPerm())); });
}

OpWork TransposeOp::getWork() { return streamingWork(*this, 0); }

LogicalResult TransposeOp::exportONNX(ONNXEmitter &e) {
  e.node("Transpose", {e.input(0)}, {e.output()}).attr("perm", getPerm());
  return success();
}

//===----------------------------------------------------------------------===//
// tg.reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType()
           << "; use tg.cast";
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in << " (" << in.getNumElements() << " elements) to " << out
           << " (" << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x), in place.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense =
          llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

LogicalResult ReshapeOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) {
    return f.push(interp::reshape(f.in(0), shapeOf(getType())));
  });
}

OpWork ReshapeOp::getWork() { return metadataWork(); }

LogicalResult ReshapeOp::exportONNX(ONNXEmitter &e) {
  auto shape = getType().getShape();
  auto node = e.node("Reshape", {e.input(0), e.constI64(shape, "_shape")},
                     {e.output()});
  // A 0 in the shape means "copy the input's dimension" unless allowzero is
  // set.
  if (llvm::is_contained(shape, 0))
    node.attr("allowzero", int64_t(1));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferConcat(location, adaptor.getInputs().getTypes(),
                     adaptor.getAxis(), inferred);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

LogicalResult ConcatOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getType().getRank());
  return frame.visit(
      [&](auto &f) { return f.push(interp::concat(f.ins(), axis)); });
}

OpWork ConcatOp::getWork() { return streamingWork(*this, 0); }

LogicalResult ConcatOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> ins;
  for (unsigned i = 0; i < getInputs().size(); ++i)
    ins.push_back(e.input(i));
  e.node("Concat", ins, {e.output()}).attr("axis", int64_t(getAxis()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.split
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferSplit(location, adaptor.getInput().getType(), adaptor.getAxis(),
                    adaptor.getSizes(), inferred);
}

LogicalResult SplitOp::fold(FoldAdaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() != 1 || getResult(0).getType() != getInput().getType())
    return failure();
  results.push_back(getInput());
  return success();
}

LogicalResult SplitOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getInput().getType().getRank());
  return frame.visit([&](auto &f) {
    return f.push(interp::split(f.in(0), axis, getSizes()));
  });
}

OpWork SplitOp::getWork() { return metadataWork(); }

LogicalResult SplitOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> outs;
  for (unsigned i = 0; i < getNumResults(); ++i)
    outs.push_back(e.output(i));
  e.node("Split", {e.input(0), e.constI64(getSizes(), "_split")}, outs)
      .attr("axis", int64_t(getAxis()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferSlice(location, adaptor.getInput().getType(), adaptor.getStarts(),
                    adaptor.getLimits(), adaptor.getStrides(), inferred);
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return {};
  if (llvm::any_of(getStarts(), [](int64_t s) { return s != 0; }))
    return {};
  // Same shape and all starts at 0: strides only matter on dims of size > 1,
  // where the same shape forces stride 1.
  return getInput();
}

/// The strides of \p op, 1 where absent.
static SmallVector<int64_t> stridesOf(SliceOp op) {
  if (auto strides = op.getStrides())
    return SmallVector<int64_t>(*strides);
  return SmallVector<int64_t>(op.getStarts().size(), 1);
}

LogicalResult SliceOp::evaluate(interp::EvalFrame &frame) {
  SmallVector<int64_t> strides = stridesOf(*this);
  return frame.visit([&](auto &f) {
    return f.push(interp::slice(f.in(0), getStarts(), getLimits(), strides));
  });
}

OpWork SliceOp::getWork() { return streamingWork(*this, 0); }

LogicalResult SliceOp::exportONNX(ONNXEmitter &e) {
  auto axes =
      llvm::to_vector(llvm::seq<int64_t>(0, int64_t(getStarts().size())));
  e.node("Slice",
         {e.input(0), e.constI64(getStarts(), "_starts"),
          e.constI64(getLimits(), "_ends"), e.constI64(axes, "_axes"),
          e.constI64(stridesOf(*this), "_steps")},
         {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.pad
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferPad(location, adaptor.getInput().getType(), adaptor.getLow(),
                  adaptor.getHigh(), inferred);
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult PadOp::evaluate(interp::EvalFrame &frame) {
  double value = getValue().convertToDouble();
  return frame.visit([&](auto &f) {
    return f.push(interp::pad(f.in(0), getLow(), getHigh(), value));
  });
}

OpWork PadOp::getWork() { return streamingWork(*this, 0); }

/// An ONNX Pad node (constant mode, ONNX's default) of operand 0 by \p pads
/// (all begins, then all ends) with \p value.
static FailureOr<ONNXNode> exportConstantPad(ONNXEmitter &e, Type elementType,
                                             ArrayRef<int64_t> pads,
                                             double value) {
  auto fill = e.scalar(elementType, value, "_value");
  if (failed(fill))
    return failure();
  return e.node("Pad", {e.input(0), e.constI64(pads, "_pads"), *fill},
                {e.output()});
}

LogicalResult PadOp::exportONNX(ONNXEmitter &e) {
  SmallVector<int64_t> pads(getLow());
  llvm::append_range(pads, getHigh());
  auto node = exportConstantPad(e, getType().getElementType(), pads,
                                getValue().convertToDouble());
  if (failed(node))
    return failure();
  node->attr("mode", StringRef("constant"));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.enlarge
//===----------------------------------------------------------------------===//

LogicalResult EnlargeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferEnlarge(location, adaptor.getInput().getType(),
                      adaptor.getKernelSize(), inferred);
}

OpFoldResult EnlargeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult EnlargeOp::evaluate(interp::EvalFrame &frame) {
  auto k = getKernelSize();
  return frame.visit(
      [&](auto &f) { return f.push(interp::enlarge(f.in(0), k[0], k[1])); });
}

OpWork EnlargeOp::getWork() { return streamingWork(*this, 0); }

LogicalResult EnlargeOp::exportONNX(ONNXEmitter &e) {
  // A centred zero pad of the two kernel dimensions.
  auto s = getInput().getType().getShape();
  int64_t ph = (getKernelSize()[0] - s[2]) / 2,
          pw = (getKernelSize()[1] - s[3]) / 2;
  return success(succeeded(exportConstantPad(e, getType().getElementType(),
                                             {0, 0, ph, pw, 0, 0, ph, pw}, 0)));
}

//===----------------------------------------------------------------------===//
// tg.broadcast_to
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType();
  if (!isBroadcastableTo(in.getShape(), out.getShape()))
    return emitOpError("operand type ")
           << in << " does not broadcast to " << out;
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat =
          llvm::dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

LogicalResult BroadcastToOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) {
    return f.push(interp::broadcastTo(f.in(0), shapeOf(getType())));
  });
}

OpWork BroadcastToOp::getWork() { return streamingWork(*this, 0); }

LogicalResult BroadcastToOp::exportONNX(ONNXEmitter &e) {
  e.node("Expand", {e.input(0), e.constI64(getType().getShape(), "_shape")},
         {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// tg.gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferGather(location, adaptor.getData().getType(),
                     adaptor.getIndices().getType(), adaptor.getAxis(),
                     inferred);
}

namespace {
/// gather(gather(x, i, axis), j, axis), i 1-D -> gather(x, gather(i, j), axis):
/// the same elements (an index of j picks an entry of i, which picks a
/// slice of x; negative entries wrap at each level as before), moving only
/// those the outer gather keeps (a slice of a compacted concatenation, the
/// importer's Slice and Concat along a padded dimension, picks a few of its
/// rows).
struct ComposeGathers : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<GatherOp>();
    if (!inner || inner.getIndices().getType().getRank() != 1)
      return failure();
    int64_t rank = op.getData().getType().getRank();
    if (axisOf(op.getAxis(), rank) !=
        axisOf(inner.getAxis(), inner.getData().getType().getRank()))
      return failure();
    auto indices = GatherOp::create(rewriter, op.getLoc(), inner.getIndices(),
                                    op.getIndices(), int64_t(0));
    rewriter.replaceOpWithNewOp<GatherOp>(
        op, op.getType(), inner.getData(), indices.getResult(),
        axisOf(inner.getAxis(), inner.getData().getType().getRank()));
    return success();
  }
};

/// gather(transpose(x, perm), i, axis) -> transpose(gather(x, i, perm[axis]),
/// perm'): the same elements, the gather reading x's own layout. A column
/// of a transposed table (a tied embedding read as its head's transpose: a
/// token's row) is then one contiguous row of the table, not one element
/// per row of it; the transpose moves only the gathered slices. Only where
/// the gather keeps no more elements than x has (it picks slices, rather
/// than repeating them).
struct GatherBeforeTranspose : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getData().getDefiningOp<TransposeOp>();
    if (!transpose || !op.getType().hasStaticShape() ||
        !transpose.getInput().getType().hasStaticShape() ||
        op.getType().getNumElements() >
            transpose.getInput().getType().getNumElements())
      return failure();
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t rank = int64_t(perm.size());
    int64_t axis = axisOf(op.getAxis(), rank), inner = perm[axis];
    int64_t indices = op.getIndices().getType().getRank();
    // The dimension of gather(x, i, inner) that x's dimension d becomes.
    auto gathered = [&](int64_t d) { return d < inner ? d : d + indices - 1; };
    SmallVector<int64_t> outer;
    for (int64_t k = 0; k < axis; ++k)
      outer.push_back(gathered(perm[k]));
    for (int64_t k = 0; k < indices; ++k)
      outer.push_back(inner + k);
    for (int64_t k = axis + 1; k < rank; ++k)
      outer.push_back(gathered(perm[k]));
    auto gather = GatherOp::create(rewriter, op.getLoc(), transpose.getInput(),
                                   op.getIndices(), inner);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                             gather.getResult(), outer);
    return success();
  }
};
} // namespace

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<ComposeGathers, GatherBeforeTranspose>(context);
}

LogicalResult GatherOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getData().getType().getRank());
  return frame.visit([&](auto &f) -> LogicalResult {
    auto r = interp::gather(f.in(0), f.in(1), axis);
    if (!r)
      return emitOpError() << llvm::toString(r.takeError());
    return f.push(std::move(*r));
  });
}

OpWork GatherOp::getWork() { return streamingWork(*this, 0); }

LogicalResult GatherOp::exportONNX(ONNXEmitter &e) {
  e.node("Gather", {e.input(0), e.input(1)}, {e.output()})
      .attr("axis", int64_t(getAxis()));
  return success();
}

//===----------------------------------------------------------------------===//
// tg.update_slice
//===----------------------------------------------------------------------===//

LogicalResult UpdateSliceOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  return inferUpdateSlice(location, adaptor.getBase().getType(),
                          adaptor.getUpdate().getType(),
                          adaptor.getOffsets().getType(), adaptor.getAxis(),
                          inferred);
}

LogicalResult UpdateSliceOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = axisOf(getAxis(), getType().getRank());
  return frame.visit([&](auto &f) {
    return f.push(interp::updateSlice(f.in(0), f.in(1), f.in(2), axis));
  });
}

// In place (the tied form the compiler aims at), the update is read and
// written once: the work is the update's bytes, not the base's.
OpWork UpdateSliceOp::getWork() {
  OpWork work = streamingWork(*this, 0);
  auto update = getUpdate().getType();
  double updateBytes = numElementsOf(update) *
                       double((update.getElementTypeBitWidth() + 7) / 8);
  work.bytesRead = updateBytes;
  work.bytesWritten = updateBytes;
  return work;
}

// ScatterElements of the update at indices `clip(offset, 0, N - U) +
// arange(U)` along the axis, broadcast to the update's shape.
LogicalResult UpdateSliceOp::exportONNX(ONNXEmitter &e) {
  auto base = getBase().getType(), update = getUpdate().getType();
  int64_t rank = base.getRank(), axis = axisOf(getAxis(), rank);
  int64_t rows = update.getDimSize(axis);
  std::string at = e.fresh("_at");
  e.node("Clip",
         {e.input(2), e.constI64({0}, "_lo"),
          e.constI64({base.getDimSize(axis) - rows}, "_hi")},
         {at});
  // Offsets as [B or 1, 1, ...] and positions as [1, ..., U, ..., 1].
  SmallVector<int64_t> atShape(rank, 1), rowShape(rank, 1);
  if (getOffsets().getType().getRank() == 1)
    atShape[0] = base.getDimSize(0);
  rowShape[axis] = rows;
  std::string atView = e.fresh("_at_view"), sum = e.fresh("_positions"),
              indices = e.fresh("_indices");
  e.node("Reshape", {at, e.constI64(atShape, "_at_shape")}, {atView});
  SmallVector<int64_t> positions(rows);
  for (int64_t i = 0; i < rows; ++i)
    positions[i] = i;
  std::string rowsName = e.fresh("_rows");
  e.node("Reshape", {e.constI64(positions, "_arange"),
                     e.constI64(rowShape, "_rows_shape")},
         {rowsName});
  e.node("Add", {atView, rowsName}, {sum});
  e.node("Expand", {sum, e.constI64(update.getShape(), "_update_shape")},
         {indices});
  e.node("ScatterElements", {e.input(0), indices, e.input(1)}, {e.output()})
      .attr("axis", axis);
  return success();
}

//===----------------------------------------------------------------------===//
// tg.scatter_add
//===----------------------------------------------------------------------===//

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  return inferScatterAdd(location, adaptor.getUpdates().getType(),
                         adaptor.getIndices().getType(), adaptor.getAxis(),
                         adaptor.getDimSize(), inferred);
}

/// The axis in [0, rank(output)).
static int64_t scatterAxis(ScatterAddOp op) {
  return axisOf(op.getAxis(), op.getType().getRank());
}

LogicalResult ScatterAddOp::evaluate(interp::EvalFrame &frame) {
  int64_t axis = scatterAxis(*this);
  return frame.visit([&](auto &f) -> LogicalResult {
    auto r = interp::scatterAdd(f.in(0), f.in(1), axis, int64_t(getDimSize()));
    if (!r)
      return emitOpError() << llvm::toString(r.takeError());
    return f.push(std::move(*r));
  });
}

// One addition per update element.
OpWork ScatterAddOp::getWork() {
  OpWork work = streamingWork(*this, 0);
  work.flops = numElementsOf(getUpdates().getType());
  return work;
}

LogicalResult ScatterAddOp::exportONNX(ONNXEmitter &e) {
  // Opset 17 ScatterElements(reduction = add) on 3-D views [outer, n, inner]:
  // the zero data [outer, dim_size, inner] is an Expand of a scalar zero,
  // the indices (flattened to n) are broadcast along outer and inner, and
  // the sum is reshaped to the result. ScatterElements takes negative
  // indices as gather does.
  auto updates = getUpdates().getType();
  int64_t axis = scatterAxis(*this);
  int64_t ri = getIndices().getType().getRank();
  ArrayRef<int64_t> shape = updates.getShape();
  auto prod = [](ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  };
  int64_t outer = prod(shape.take_front(axis));
  int64_t n = prod(shape.slice(axis, ri));
  int64_t inner = prod(shape.drop_front(axis + ri));
  auto zero = e.scalar(updates.getElementType(), 0.0, "_zero");
  if (failed(zero))
    return failure();
  std::string data = e.fresh("_zeros"), idx = e.fresh("_idx"),
              idx3 = e.fresh("_idx3"), upd = e.fresh("_updates"),
              sum = e.fresh("_sum");
  e.node("Expand", {*zero, e.constI64({outer, int64_t(getDimSize()), inner}, "_shape")},
         {data});
  e.node("Reshape", {e.input(1), e.constI64({1, n, 1}, "_idx_shape")}, {idx});
  e.node("Expand", {idx, e.constI64({outer, n, inner}, "_upd_shape")}, {idx3});
  e.node("Reshape", {e.input(0), e.constI64({outer, n, inner}, "_upd_shape")},
         {upd});
  e.node("ScatterElements", {data, idx3, upd}, {sum})
      .attr("axis", int64_t(1))
      .attr("reduction", StringRef("add"));
  e.node("Reshape", {sum, e.constI64(getType().getShape(), "_out_shape")},
         {e.output()});
  return success();
}
