//===- TGOps.cpp - Tensor graph operations ---------------------------------===//
//
// Part of Loom. Type inference entry points (rules in TypeInference.cpp),
// custom verifiers, folders and canonicalisation patterns.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom::tg;

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferMatmul(location, adaptor.getLhs().getType(),
                     adaptor.getRhs().getType(), inferred);
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Type bias = adaptor.getBias() ? adaptor.getBias().getType() : Type();
  return inferConv2d(location, adaptor.getInput().getType(),
                     adaptor.getFilter().getType(), bias, adaptor.getStrides(),
                     adaptor.getPads(), adaptor.getDilations(),
                     adaptor.getGroups(), inferred);
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferPool2d(location, adaptor.getInput().getType(),
                     adaptor.getKernelSize(), adaptor.getStrides(),
                     adaptor.getPads(), inferred);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferPool2d(location, adaptor.getInput().getType(),
                     adaptor.getKernelSize(), adaptor.getStrides(),
                     adaptor.getPads(), inferred);
}

LogicalResult
GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                  std::optional<Location> location,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  return inferGlobalAvgPool(location, adaptor.getInput().getType(), inferred);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferTranspose(location, adaptor.getInput().getType(),
                        adaptor.getPerm(), inferred);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferConcat(location, adaptor.getInputs().getTypes(),
                     adaptor.getAxis(), inferred);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferSplit(location, adaptor.getInput().getType(), adaptor.getAxis(),
                    adaptor.getSizes(), inferred);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferSlice(location, adaptor.getInput().getType(),
                    adaptor.getStarts(), adaptor.getLimits(),
                    adaptor.getStrides(), inferred);
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferPad(location, adaptor.getInput().getType(), adaptor.getLow(),
                  adaptor.getHigh(), inferred);
}

LogicalResult EnlargeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferEnlarge(location, adaptor.getInput().getType(),
                      adaptor.getKernelSize(), inferred);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferGather(location, adaptor.getData().getType(),
                     adaptor.getIndices().getType(), adaptor.getAxis(),
                     inferred);
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferResize(location, adaptor.getInput().getType(),
                     adaptor.getSizes(), adaptor.getScales(), adaptor.getMode(),
                     adaptor.getCoordinateTransformationMode(),
                     adaptor.getNearestMode(), inferred);
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferSoftmax(location, adaptor.getInput().getType(),
                      adaptor.getAxis(), inferred);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferLayerNorm(location, adaptor.getInput().getType(),
                        adaptor.getScale().getType(),
                        adaptor.getBias().getType(), adaptor.getAxis(),
                        inferred);
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferBatchNorm(
      location, adaptor.getInput().getType(), adaptor.getScale().getType(),
      adaptor.getBias().getType(), adaptor.getMean().getType(),
      adaptor.getVariance().getType(), inferred);
}

//===----------------------------------------------------------------------===//
// Verifiers of the ops whose result type is not inferred
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  return success();
}

LogicalResult ClipOp::verify() {
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (std::isnan(lo) || std::isnan(hi))
    return emitOpError("bounds must not be NaN");
  if (lo > hi)
    return emitOpError("'min' (") << lo << ") must not exceed 'max' (" << hi
                                  << ")";
  return success();
}

LogicalResult CastOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ")
           << in << " to " << out << "; a cast keeps the shape";
  return success();
}

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

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

/// `x op c` folds to `x` when `c` is a splat constant matching `isNeutral` and
/// the op does not broadcast `x` to a larger shape.
template <typename Op, typename Matcher>
static OpFoldResult foldNeutralRhs(Op op, Matcher isNeutral) {
  if (op.getLhs().getType() == op.getType() &&
      matchPattern(op.getRhs(), isNeutral))
    return op.getLhs();
  return {};
}

// The neutral elements are the ones that are exact for every float, -0.0 and
// NaN included (as in the arith dialect): x + -0.0, x - 0.0, x * 1, x / 1.
OpFoldResult AddOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_NegZeroFloat());
}
OpFoldResult SubOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_PosZeroFloat());
}
OpFoldResult MulOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_OneFloat());
}
OpFoldResult DivOp::fold(FoldAdaptor) {
  return foldNeutralRhs(*this, m_OneFloat());
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  if (auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(
          adaptor.getInput()))
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
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                             inner.getInput(), perm);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x), in place.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = llvm::dyn_cast_if_present<DenseElementsAttr>(
          adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(
          adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

LogicalResult SplitOp::fold(FoldAdaptor, SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() != 1 || getResult(0).getType() != getInput().getType())
    return failure();
  results.push_back(getInput());
  return success();
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

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult EnlargeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGOps.cpp.inc"
