//===- Sequences.cpp - ONNX sequences, known in length at import ----------===//
//
// Part of Loom. PyTorch exports a Python list built in a loop as ONNX
// sequence operators (torchvision's MViT: SequenceEmpty, a Loop whose body
// does SequenceInsert, then SequenceAt). tg has no sequence type: since
// Loom unrolls loops of static trip count, the number and order of a
// sequence's tensors are known at import time, and the importer keeps a
// sequence as the list of its tensors (ImportedValue::sequence).
// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
// SequenceAt and SequenceLength edit and read that list (positions must be
// known); ConcatFromSequence and SplitToSequence turn it into and from one
// tensor. A sequence as a graph input or output, or a position known only
// at run time, is refused.
//
//===----------------------------------------------------------------------===//

#include "Expander.h"
#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;

namespace {

using Elements = std::vector<ImportedValue>;

/// The tensors of sequence input `i`.
FailureOr<Elements> sequenceInput(NodeContext &ctx, unsigned i) {
  ImportedValue *v = ctx.hasInput(i)
                         ? ctx.importer().lookup(ctx.node().input(i))
                         : nullptr;
  if (!v || !v->sequence)
    return ctx.fail("input " + Twine(i) + " must be a sequence");
  return *v->sequence;
}

void setSequenceOutput(NodeContext &ctx, Elements elements) {
  if (!ctx.hasOutput(0))
    return;
  ImportedValue v;
  v.sequence = std::make_shared<const Elements>(std::move(elements));
  ctx.importer().values[ctx.node().output(0)] = std::move(v);
}

/// Position input `i` (known; negative counts from the end) in
/// [0, size] (with \p end allowed) or [0, size), or \p fallback when absent.
FailureOr<int64_t> position(NodeContext &ctx, unsigned i, int64_t size,
                            bool endAllowed, int64_t fallback) {
  if (!ctx.hasInput(i))
    return fallback;
  auto p = ctx.constantInts(i, "the position (a run-time position into a "
                               "sequence is not supported)");
  if (failed(p))
    return failure();
  if (p->size() != 1)
    return ctx.fail("the position must have one element");
  int64_t k = p->front() < 0 ? p->front() + size : p->front();
  if (k < 0 || k > size || (k == size && !endAllowed))
    return ctx.fail("position " + Twine(p->front()) +
                    " is out of range for a sequence of " + Twine(size) +
                    " tensors");
  return k;
}

LogicalResult importSequenceConstruct(NodeContext &ctx) {
  Elements elements;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    ImportedValue *v = ctx.importer().lookup(ctx.node().input(i));
    if (!v || v->sequence)
      return ctx.fail("input " + Twine(i) + " must be a tensor");
    elements.push_back(*v);
  }
  setSequenceOutput(ctx, std::move(elements));
  return success();
}

LogicalResult importSequenceInsert(NodeContext &ctx) {
  auto elements = sequenceInput(ctx, 0);
  if (failed(elements))
    return failure();
  ImportedValue *t = ctx.importer().lookup(ctx.node().input(1));
  if (!t || t->sequence)
    return ctx.fail("input 1 must be a tensor");
  auto at = position(ctx, 2, elements->size(), true, elements->size());
  if (failed(at))
    return failure();
  elements->insert(elements->begin() + *at, *t);
  setSequenceOutput(ctx, std::move(*elements));
  return success();
}

LogicalResult importSequenceErase(NodeContext &ctx) {
  auto elements = sequenceInput(ctx, 0);
  if (failed(elements))
    return failure();
  if (elements->empty())
    return ctx.fail("erasing from an empty sequence");
  auto at = position(ctx, 1, elements->size(), false, elements->size() - 1);
  if (failed(at))
    return failure();
  elements->erase(elements->begin() + *at);
  setSequenceOutput(ctx, std::move(*elements));
  return success();
}

LogicalResult importSequenceAt(NodeContext &ctx) {
  auto elements = sequenceInput(ctx, 0);
  if (failed(elements))
    return failure();
  auto at = position(ctx, 1, elements->size(), false, 0);
  if (failed(at))
    return failure();
  if (ctx.hasOutput(0))
    ctx.importer().values[ctx.node().output(0)] = (*elements)[*at];
  return success();
}

LogicalResult importSequenceLength(NodeContext &ctx) {
  auto elements = sequenceInput(ctx, 0);
  if (failed(elements))
    return failure();
  HostTensor n = HostTensor::splat(onnx::TensorProto::INT64, {}, 0);
  n.ints[0] = static_cast<int64_t>(elements->size());
  ctx.setOutput(0, std::move(n));
  return success();
}

LogicalResult importConcatFromSequence(NodeContext &ctx) {
  auto elements = sequenceInput(ctx, 0);
  if (failed(elements))
    return failure();
  if (elements->empty())
    return ctx.fail("concatenating an empty sequence");
  Expander ex(ctx);
  SmallVector<std::string> names;
  for (const ImportedValue &v : *elements)
    names.push_back(ex.define(v));
  int64_t axis = ctx.getInt("axis", 0);
  FailureOr<std::string> out;
  if (ctx.getInt("new_axis", 0)) {
    int64_t rank = ex.shapeOf(names.front()).size();
    auto a = ctx.normalizeAxis(axis, rank + 1);
    if (failed(a))
      return failure();
    out = ex.stack(names, *a);
  } else {
    out = ex.emit("Concat", names, [&](onnx::NodeProto &n) {
      Expander::setInt(n, "axis", axis);
    });
  }
  if (failed(out))
    return failure();
  return ex.setOutput(0, *out);
}

LogicalResult importSplitToSequence(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputShape(0);
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), shape.size());
  if (failed(axis))
    return failure();
  int64_t extent = shape[*axis];
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (ctx.hasInput(1)) {
    auto split = ctx.constantInts(1, "split");
    if (failed(split))
      return failure();
    if (split->size() == 1 && ctx.inputRank(1) == 0) {
      // A scalar: pieces of that size, the last one smaller.
      int64_t piece = split->front();
      if (piece < 1)
        return ctx.fail("split must be positive");
      for (int64_t at = 0; at < extent; at += piece)
        sizes.push_back(std::min(piece, extent - at));
    } else {
      sizes.assign(split->begin(), split->end());
    }
  } else {
    sizes.assign(extent, 1);
    squeeze = ctx.getInt("keepdims", 1) == 0;
  }
  Expander ex(ctx);
  auto pieces = ex.emitMulti(
      "Split", {ctx.node().input(0), ex.ints(sizes)}, sizes.size(),
      [&](onnx::NodeProto &n) { Expander::setInt(n, "axis", *axis); });
  if (failed(pieces))
    return failure();
  Elements elements;
  for (const std::string &piece : *pieces) {
    std::string name = piece;
    if (squeeze) {
      auto s = ex.emit("Squeeze", {piece, ex.ints({*axis})});
      if (failed(s))
        return failure();
      name = *s;
    }
    elements.push_back(*ctx.importer().lookup(name));
  }
  setSequenceOutput(ctx, std::move(elements));
  return success();
}

} // namespace

void onnx_to_tg::populateSequenceHandlers(HandlerTable &table) {
  table["SequenceEmpty"] = [](NodeContext &ctx) {
    setSequenceOutput(ctx, {});
    return success();
  };
  table["SequenceConstruct"] = importSequenceConstruct;
  table["SequenceInsert"] = importSequenceInsert;
  table["SequenceErase"] = importSequenceErase;
  table["SequenceAt"] = importSequenceAt;
  table["SequenceLength"] = importSequenceLength;
  table["ConcatFromSequence"] = importConcatFromSequence;
  table["SplitToSequence"] = importSplitToSequence;
}
