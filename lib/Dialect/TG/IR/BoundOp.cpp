//===- BoundOp.cpp - tg.bound: verifier, facts, queries --------------------===//
//
// Part of Loom. tg.bound (TGBoundOp.td) is the identity on its input; it
// states that a dimension is padded and which rank-0 i64 tensor holds its
// run-time length. Its facts are those of an op that computes nothing.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGBoundOp.cpp.inc"

LogicalResult BoundOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t dim = getDim();
  if (dim < 0 || dim >= type.getRank())
    return emitOpError("dimension ")
           << dim << " does not exist in " << type << " (rank "
           << type.getRank() << ")";
  if (type.isDynamicDim(dim))
    return emitOpError("dimension ")
           << dim << " of " << type
           << " is dynamic; a bound pads a static dimension";
  auto length = cast<RankedTensorType>(getLength().getType());
  if (length.getRank() != 0 || !length.getElementType().isInteger(64))
    return emitOpError("length must be a rank-0 i64 tensor (tensor<i64>), not ")
           << length;
  return success();
}

LogicalResult BoundOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) { return f.push(f.in(0)); });
}

OpWork BoundOp::getWork() { return metadataWork(); }

LogicalResult BoundOp::exportONNX(ONNXEmitter &e) {
  e.node("Identity", {e.input(0)}, {e.output()});
  return success();
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

SmallVector<Bound, 2> tg::getBounds(Value v) {
  SmallVector<Bound, 2> bounds;
  while (auto op = v ? v.getDefiningOp<BoundOp>() : BoundOp()) {
    bounds.push_back({int64_t(op.getDim()), op.getLength()});
    v = op.getInput();
  }
  std::reverse(bounds.begin(), bounds.end());
  return bounds;
}

Value tg::stripBounds(Value v) {
  while (auto op = v ? v.getDefiningOp<BoundOp>() : BoundOp())
    v = op.getInput();
  return v;
}

Value tg::withBounds(OpBuilder &builder, Location loc, Value v,
                     ArrayRef<Bound> bounds) {
  SmallVector<Bound, 2> own = getBounds(v);
  if (own.size() == bounds.size() &&
      llvm::all_of(llvm::zip(own, bounds), [](auto pair) {
        auto [a, b] = pair;
        return a.dim == b.dim && a.length == b.length;
      }))
    return v;
  v = stripBounds(v);
  for (const Bound &b : bounds)
    v = BoundOp::create(builder, loc, v.getType(), v, b.length, b.dim);
  return v;
}
