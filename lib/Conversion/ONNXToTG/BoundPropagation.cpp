//===- BoundPropagation.cpp - Bounds carried through the operators --------===//
//
// Part of Loom. After a node's handler, the bound of its output follows
// from its inputs' (BoundRules.h): through the operators that keep the valid
// prefix of a padded dimension valid (elementwise, movement, gathers,
// products over another dimension, operators computing each index of the
// padded dimension on its own); every other consumer of a padded dimension
// is refused, naming the node. docs/ONNX/Import.md "Bounded dynamic
// shapes".
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

/// Elementwise: the inputs are aligned on the right with the output; a
/// padded input dimension must not be broadcast.
static LogicalResult propagateElementwise(NodeContext &ctx,
                                          ArrayRef<int64_t> outShape,
                                          BoundMerger &m) {
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    int64_t dim = b->dim + int64_t(outShape.size()) - ctx.inputRank(i);
    if (outShape[dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    if (failed(m.add({dim, b->length})))
      return failure();
  }
  return success();
}

/// Reshape-like: the padded dimension must survive as one output
/// dimension with the same number of elements before it: of the same size,
/// or merged with the dimensions after it (torchvision's
/// `boxes.reshape(-1, 4)` of [boxes, classes, 4]), whose valid elements are
/// then the first `length * inner` (the product of the merged dimensions).
static LogicalResult
propagateReshape(NodeContext &ctx, ArrayRef<int64_t> outShape, BoundMerger &m) {
  std::optional<BoundedDim> b = inputBound(ctx, 0);
  if (!b)
    return success();
  ArrayRef<int64_t> in = ctx.inputShape(0);
  int64_t before = 1;
  for (int64_t d = 0; d < b->dim; ++d)
    before *= in[d];
  int64_t outBefore = 1;
  for (int64_t d = 0; d < int64_t(outShape.size()); ++d) {
    if (outBefore == before) {
      int64_t merged = in[b->dim];
      for (int64_t e = b->dim + 1;
           merged < outShape[d] && e < int64_t(in.size()); ++e)
        merged *= in[e];
      if (merged == outShape[d]) {
        int64_t inner = in[b->dim] ? merged / in[b->dim] : 1;
        if (inner == 1)
          return m.add({d, b->length});
        auto length =
            lengthOp(ctx, LengthOp::Mul, b->length,
                     ctx.scalar(ctx.builder().getI64Type(), double(inner)));
        if (failed(length))
          return failure();
        return m.add({d, *length});
      }
    }
    outBefore *= outShape[d];
  }
  return ctx.fail("a reshape that splits a dimension of data-dependent "
                  "length, or merges it with the dimensions before it, is "
                  "not supported");
}

static LogicalResult propagateGather(NodeContext &ctx, ArrayRef<int64_t>,
                                     BoundMerger &m) {
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "axis");
  if (failed(axis))
    return failure();
  int64_t idxRank = ctx.inputRank(1);
  // A padded data dimension other than the axis moves with the gather; the
  // axis itself is read at the given (valid) indices.
  if (std::optional<BoundedDim> b = inputBound(ctx, 0); b && b->dim != *axis)
    if (failed(
            m.add({b->dim < *axis ? b->dim : b->dim + idxRank - 1, b->length})))
      return failure();
  if (std::optional<BoundedDim> b = inputBound(ctx, 1))
    return m.add({*axis + b->dim, b->length});
  return success();
}

/// The dimension of the output a padded dimension of input `i` keeps when
/// Slice or Concat does not touch it; \p isSlice: Slice, whose other inputs
/// must not be padded.
template <bool isSlice>
static LogicalResult propagateKept(NodeContext &ctx, ArrayRef<int64_t> outShape,
                                   BoundMerger &m) {
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    if (i > 0 && isSlice)
      return ctx.fail("slice bounds of data-dependent length are not "
                      "supported");
    if (!isSlice && *ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(i),
                                       "axis") == b->dim)
      return ctx.fail("concatenating along a dimension of data-dependent "
                      "length is not supported");
    if (outShape[b->dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("slicing a dimension of data-dependent length is not "
                      "supported");
    if (failed(m.add({b->dim, b->length})))
      return failure();
  }
  return success();
}

/// Transpose: the padded dimension moves where the permutation puts it.
static LogicalResult propagateTranspose(NodeContext &ctx, ArrayRef<int64_t>,
                                        BoundMerger &m) {
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    auto perm = ctx.getInts("perm");
    int64_t rank = ctx.inputRank(0), dim = rank - 1 - b->dim;
    if (perm)
      dim = std::find(perm->begin(), perm->end(), b->dim) - perm->begin();
    if (failed(m.add({dim, b->length})))
      return failure();
  }
  return success();
}

/// MatMul and Gemm: a padded row dimension of A (or batch dimension, not
/// broadcast) or column dimension of B is the output's; a padded
/// contracted dimension is refused. Gemm's C broadcasts as elementwise.
template <bool gemm>
static LogicalResult
propagateProduct(NodeContext &ctx, ArrayRef<int64_t> outShape, BoundMerger &m) {
  int64_t outRank = outShape.size();
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (!b)
      continue;
    int64_t rank = ctx.inputRank(i), dim = -1;
    if (gemm) {
      bool trans = ctx.getInt(i == 0 ? "transA" : "transB", 0) != 0;
      // A's rows are dimension trans ? 1 : 0, B's columns trans ? 0 : 1.
      if (b->dim == ((i == 0) == trans ? 1 : 0))
        dim = i;
    } else if (rank >= 2) {
      int64_t contracted = i == 0 ? rank - 1 : rank - 2;
      if (b->dim == rank - 1 && i == 1)
        dim = outRank - 1;
      else if (b->dim != contracted)
        dim = b->dim + outRank - rank;
    }
    if (dim < 0)
      return ctx.fail("a product over a dimension of data-dependent length is "
                      "not supported");
    if (outShape[dim] != ctx.inputShape(i)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    if (failed(m.add({dim, b->length})))
      return failure();
  }
  if (std::optional<BoundedDim> b = inputBound(ctx, 2)) {
    int64_t dim = b->dim + outRank - ctx.inputRank(2);
    if (outShape[dim] != ctx.inputShape(2)[b->dim])
      return ctx.fail("broadcasting a dimension of data-dependent length is "
                      "not supported");
    return m.add({dim, b->length});
  }
  return success();
}

/// Operators that compute every index of some dimensions on its own (a
/// convolution's or a pooling's batch): the padded dimension of input 0
/// stays padded when it is the batch; no other input may be padded.
static LogicalResult requireOnlyDataPadded(NodeContext &ctx) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("reads a parameter of data-dependent length (padded to "
                      "its bound, docs/ONNX/Import.md)");
  return success();
}

static LogicalResult independentOr(NodeContext &ctx, bool independent,
                                   BoundMerger &m) {
  if (!independent)
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md), and this operator mixes "
                    "the elements of the padded dimension");
  return m.add(*inputBound(ctx, 0));
}

static LogicalResult propagateBatch(NodeContext &ctx, ArrayRef<int64_t>,
                                    BoundMerger &m) {
  if (failed(requireOnlyDataPadded(ctx)))
    return failure();
  return independentOr(ctx, inputBound(ctx, 0)->dim == 0, m);
}

/// A resize keeps a padded batch when it keeps that dimension's size (a
/// scale of 1 there).
static LogicalResult propagateResize(NodeContext &ctx, ArrayRef<int64_t>,
                                     BoundMerger &m) {
  if (failed(requireOnlyDataPadded(ctx)))
    return failure();
  BoundedDim b = *inputBound(ctx, 0);
  bool independent = b.dim == 0;
  if (ImportedValue *out = ctx.importer().lookup(ctx.node().output(0)))
    independent &= out->shape[b.dim] == ctx.inputShape(0)[b.dim];
  return independentOr(ctx, independent, m);
}

/// Softmax, LogSoftmax and Hardmax (\p layerNorm: LayerNormalization)
/// compute the dimensions off their axis on their own; opsets before 13
/// and LayerNormalization normalise over every dimension from the axis on.
template <bool layerNorm>
static LogicalResult propagateNormalizing(NodeContext &ctx, ArrayRef<int64_t>,
                                          BoundMerger &m) {
  if (failed(requireOnlyDataPadded(ctx)))
    return failure();
  BoundedDim b = *inputBound(ctx, 0);
  bool coerced = !layerNorm && ctx.opset() < 13;
  int64_t rank = ctx.inputRank(0);
  auto axis = ctx.normalizeAxis(
      ctx.getInt("axis", layerNorm || !coerced ? -1 : 1), rank, "axis");
  if (failed(axis))
    return failure();
  return independentOr(
      ctx, coerced || layerNorm ? b.dim < *axis : b.dim != *axis, m);
}

/// ArgMax and ArgMin along another dimension than the padded one keep it
/// (one index per position of it), one dimension to the left when the
/// axis before it is dropped.
static LogicalResult propagateArgExtreme(NodeContext &ctx, ArrayRef<int64_t>,
                                         BoundMerger &m) {
  BoundedDim b = *inputBound(ctx, 0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
  if (failed(axis))
    return failure();
  if (*axis == b.dim)
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md) along its axis");
  if (ctx.getInt("keepdims", 1) == 0 && *axis < b.dim)
    --b.dim;
  return m.add(b);
}

/// Pad (any mode) that neither pads nor crops the padded dimension keeps
/// it: padding another dimension moves no element along it (Mask R-CNN's
/// `F.pad(masks, (1, 1, 1, 1))` of the detections' masks).
static LogicalResult propagatePad(NodeContext &ctx, ArrayRef<int64_t>,
                                  BoundMerger &m) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("reads a parameter of data-dependent length (padded to "
                      "its bound, docs/ONNX/Import.md)");
  BoundedDim b = *inputBound(ctx, 0);
  int64_t rank = ctx.inputRank(0);
  SmallVector<int64_t> pads, axes;
  if (ctx.opset() < 11) {
    if (auto a = ctx.getInts("pads"))
      pads.assign(a->begin(), a->end());
  } else if (const HostTensor *t = ctx.known(1)) {
    pads.assign(t->ints.begin(), t->ints.end());
  }
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "axes");
    if (failed(a))
      return failure();
    for (int64_t axis : *a) {
      auto n = ctx.normalizeAxis(axis, rank, "axes");
      if (failed(n))
        return failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.fail("the pads of a value of data-dependent length must be "
                    "known at import time");
  for (auto [k, axis] : llvm::enumerate(axes))
    if (axis == b.dim && (pads[k] != 0 || pads[k + axes.size()] != 0))
      return ctx.fail("padding a dimension of data-dependent length is not "
                      "supported");
  return m.add(b);
}

/// Split along another dimension than the padded one: every output keeps
/// the padded dimension.
static LogicalResult propagateSplit(NodeContext &ctx) {
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (inputBound(ctx, i))
      return ctx.fail("split sizes of data-dependent length are not "
                      "supported");
  std::optional<BoundedDim> b = inputBound(ctx, 0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.inputRank(0));
  if (failed(axis))
    return failure();
  if (*axis == b->dim)
    return ctx.fail("splitting along a dimension of data-dependent length is "
                    "not supported");
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    if (!ctx.hasOutput(i))
      continue;
    ImportedValue *out = ctx.importer().lookup(ctx.node().output(i));
    if (!out || !out->value || out->known)
      return ctx.fail("the value of a split of a value of data-dependent "
                      "length is not known at import time");
    setBound(ctx, *out, *b);
  }
  return success();
}

LogicalResult onnx_to_tg::propagateBounds(NodeContext &ctx) {
  const BoundRules &rules = getBoundRules(ctx);
  if (rules.ownBounds)
    return success();
  bool anyBounded = false;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    anyBounded |= bool(inputBound(ctx, i));
  if (!anyBounded)
    return success();
  if (rules.propagateOutputs)
    return rules.propagateOutputs(ctx);
  if (ctx.numOutputs() != 1)
    return ctx.fail("a node with several outputs reading a value of "
                    "data-dependent length is not supported");
  ImportedValue *out = ctx.importer().lookup(ctx.node().output(0));
  if (!out || !out->value || out->known)
    return ctx.fail("the shape or the value of a value of data-dependent "
                    "length is not known at import time (Loom pads it to a "
                    "static bound; docs/ONNX/Import.md)");
  if (!rules.propagate)
    return ctx.fail("reads a value of data-dependent length (padded to its "
                    "bound, docs/ONNX/Import.md), and this operator mixes or "
                    "counts the elements of the padded dimension");
  BoundMerger m{ctx, std::nullopt};
  if (failed(rules.propagate(ctx, out->shape, m)))
    return failure();
  if (m.merged)
    setBound(ctx, *out, *m.merged);
  else
    setBounds(ctx, *out, {});
  return success();
}

void onnx_to_tg::populateBoundPropagationRules(BoundRulesTable &table) {
  // Each output element from the input elements at the same
  // (numpy-broadcast) position: a padded dimension stays padded (Expand's
  // shape operand is never padded: only its data broadcasts).
  for (StringRef op : {"Abs",
                       "Add",
                       "And",
                       "Cast",
                       "CastLike",
                       "Ceil",
                       "Celu",
                       "Clip",
                       "Div",
                       "Dropout",
                       "Elu",
                       "Equal",
                       "Erf",
                       "Exp",
                       "Expand",
                       "Floor",
                       "Gelu",
                       "Greater",
                       "GreaterOrEqual",
                       "HardSigmoid",
                       "HardSwish",
                       "Identity",
                       "LeakyRelu",
                       "Less",
                       "LessOrEqual",
                       "Log",
                       "Max",
                       "Mean",
                       "Min",
                       "Mod",
                       "Mul",
                       "Neg",
                       "Not",
                       "Or",
                       "PRelu",
                       "Pow",
                       "Reciprocal",
                       "Relu",
                       "Round",
                       "Selu",
                       "Sigmoid",
                       "Sign",
                       "Softsign",
                       "Sqrt",
                       "Sub",
                       "Sum",
                       "Tanh",
                       "Where",
                       "Xor"})
    table[op].propagate = propagateElementwise;
  // Rearranging elements without mixing a padded dimension with another.
  for (StringRef op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten"})
    table[op].propagate = propagateReshape;
  table["Gather"].propagate = propagateGather;
  table["Transpose"].propagate = propagateTranspose;
  table["Slice"].propagate = propagateKept</*isSlice=*/true>;
  table["Concat"].propagate = propagateKept</*isSlice=*/false>;
  table["MatMul"].propagate = propagateProduct</*gemm=*/false>;
  table["Gemm"].propagate = propagateProduct</*gemm=*/true>;
  table["Pad"].propagate = propagatePad;
  table["ArgMax"].propagate = table["ArgMin"].propagate = propagateArgExtreme;
  for (StringRef op : {"Conv", "ConvTranspose", "MaxPool", "AveragePool",
                       "GlobalAveragePool", "GlobalMaxPool", "LpPool",
                       "BatchNormalization", "InstanceNormalization"})
    table[op].propagate = propagateBatch;
  table["Resize"].propagate = table["Upsample"].propagate = propagateResize;
  for (StringRef op : {"Softmax", "LogSoftmax", "Hardmax"})
    table[op].propagate = propagateNormalizing</*layerNorm=*/false>;
  table["LayerNormalization"].propagate =
      propagateNormalizing</*layerNorm=*/true>;
  table["Split"].propagateOutputs = propagateSplit;
  // Their handlers read and set the bounds.
  for (StringRef op :
       {"NonZero", "TopK", "NonMaxSuppression", "Unique", "GatherND",
        "RoiAlign", "ScatterElements", "Scatter", "ScatterND"})
    table[op].ownBounds = true;
}
