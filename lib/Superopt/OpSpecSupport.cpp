//===- OpSpecSupport.cpp - Writing operator specifications ----------------===//
//
// Part of Loom. The helpers the spec files share (OpSpecSupport.h).
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using namespace loom::superopt::opspec;

Inferred opspec::sameVectors(SpecContext &sc, Shapes in) {
  for (ShapeId s : in)
    if (sc.shapes->rank(s) != 1 || s != in[0])
      return std::nullopt;
  return sameShape(in[0]);
}

bool opspec::normalizeAxis(int64_t axis, int64_t rank, int8_t &out) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return false;
  out = static_cast<int8_t>(axis);
  return true;
}

bool opspec::isMacro(Operation *op, StringRef name) {
  auto a = op->getAttrOfType<StringAttr>(kMacroAttr);
  return a && a.getValue() == name;
}

void opspec::markMacro(Operation *op, StringRef name) {
  op->setAttr(kMacroAttr, StringAttr::get(op->getContext(), name));
}

Value opspec::emitEpsilon(OpBuilder &b, Location loc) {
  auto type = tensorTypeOf(b.getContext(), {});
  return tg::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getF32FloatAttr(kNormEpsilon)));
}

DenseI64ArrayAttr opspec::i64s(OpBuilder &b, ArrayRef<int64_t> v) {
  return b.getDenseI64ArrayAttr(v);
}

//===----------------------------------------------------------------------===//
// Split information
//===----------------------------------------------------------------------===//

size_t opspec::subtreeSize(ArrayRef<int16_t> tree, size_t at) {
  if (tree[at] < 0)
    return 1;
  size_t left = subtreeSize(tree, at + 1);
  return 1 + left + subtreeSize(tree, at + 1 + left);
}

void opspec::appendShifted(SmallVectorImpl<int16_t> &out,
                           ArrayRef<int16_t> tree, int delta) {
  for (int16_t v : tree)
    out.push_back(v < 0 ? v : static_cast<int16_t>(v + delta));
}

AxisSplit opspec::meet(const AxisSplit &a, const AxisSplit &b) {
  return a == b ? a : AxisSplit();
}

AxisSplit opspec::concatSplit(const AxisSplit &a, const AxisSplit &b,
                              int64_t dimA) {
  AxisSplit r;
  r.tree.clear();
  r.tree.push_back(static_cast<int16_t>(dimA));
  appendShifted(r.tree, a.tree, 0);
  appendShifted(r.tree, b.tree, static_cast<int>(dimA));
  return r;
}

void opspec::splitNone(const OpAttrs &, Splits, Shapes, const ShapeTable &,
                       SmallVectorImpl<SplitInfo> &out) {
  out.assign(1, SplitInfo());
}

void opspec::splitElementwise(const OpAttrs &, Splits in, Shapes,
                              const ShapeTable &,
                              SmallVectorImpl<SplitInfo> &out) {
  SplitInfo r = *in[0];
  for (const SplitInfo *s : in.drop_front())
    for (unsigned a = 0; a < 4; ++a)
      r.axes[a] = meet(r.axes[a], s->axes[a]);
  out.assign(1, r);
}

void opspec::splitCopy(const OpAttrs &, Splits in, Shapes, const ShapeTable &,
                       SmallVectorImpl<SplitInfo> &out) {
  out.assign(1, *in[0]);
}

void opspec::splitLeading(const OpAttrs &, Splits in, Shapes,
                          const ShapeTable &, SmallVectorImpl<SplitInfo> &out) {
  SplitInfo r;
  r.axes[0] = in[0]->axes[0];
  out.assign(1, r);
}

void opspec::splitLeadingTwo(const OpAttrs &, Splits in, Shapes,
                             const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
  SplitInfo r;
  r.axes[0] = in[0]->axes[0];
  r.axes[1] = in[0]->axes[1];
  out.assign(1, r);
}

bool opspec::completeNothing(OpAttrs &, Splits, Shapes, const ShapeTable &) {
  return true;
}

bool opspec::acceptAll(const OpAttrs &, ArrayRef<Role>) { return true; }
