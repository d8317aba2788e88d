//===- NarrowProducts.cpp - Products in bf16, f16 or on TF32 operands ----===//
//
// Part of Loom. See TGNarrowProducts in Passes.td and docs/Precision.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGNARROWPRODUCTS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// \p type with element type \p elem.
RankedTensorType withElement(Type type, Type elem) {
  return cast<RankedTensorType>(type).clone(elem);
}

/// Whether every operand and result of \p op is an f32 tensor.
bool allF32Tensors(Operation *op) {
  auto isF32 = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.getElementType().isF32();
  };
  return llvm::all_of(op->getOperandTypes(), isF32) &&
         llvm::all_of(op->getResultTypes(), isF32);
}

/// What the rewrite has made: the narrow value of each f32 value it cast
/// (one cast of a value however many products read it: a transformer's
/// query, key and value projections read one input), and the casts of
/// results back to f32.
struct Narrowing {
  FloatType type;
  DenseMap<Value, Value> narrow;
  SmallVector<CastOp> widened;

  /// \p v as the narrow type: the narrow value a cast of it to f32 was made
  /// from (a previous product's result), the cast made before, else a new
  /// cast after \p v's definition.
  Value of(OpBuilder &b, Value v) {
    if (auto widen = v.getDefiningOp<CastOp>())
      if (cast<RankedTensorType>(widen.getInput().getType()).getElementType() ==
          type)
        return widen.getInput();
    Value &made = narrow[v];
    if (made)
      return made;
    if (auto arg = dyn_cast<BlockArgument>(v))
      b.setInsertionPointToStart(arg.getOwner());
    else
      b.setInsertionPointAfter(v.getDefiningOp());
    made = CastOp::create(b, v.getLoc(), withElement(v.getType(), type), v);
    return made;
  }
};

/// \p op computed in the narrow type between casts.
void narrow(Operation *op, Narrowing &n) {
  FloatType narrowType = n.type;
  OpBuilder b(op);
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(n.of(b, v));
  b.setInsertionPoint(op);
  Operation *copy = b.clone(*op);
  copy->setOperands(operands);
  b.setInsertionPointAfter(copy);
  for (auto [old, result] : llvm::zip(op->getResults(), copy->getResults())) {
    result.setType(withElement(old.getType(), narrowType));
    auto wide = CastOp::create(b, op->getLoc(), old.getType(), result);
    old.replaceAllUsesWith(wide.getResult());
    n.widened.push_back(wide);
  }
  op->erase();
}

/// Rounds \p operand to TF32 by a tg.round_tf32 of its own, just before
/// its product: a rounding per use (the query, key and value projections
/// each round the one input they read), so that each joins the kernel of
/// its product, which rounds as it loads (FormFragments). An operand a
/// rounding of its own already makes is left as it is.
void roundToTF32(OpBuilder &b, OpOperand &operand) {
  Value v = operand.get();
  if (v.getDefiningOp<RoundTF32Op>() && v.hasOneUse())
    return;
  b.setInsertionPoint(operand.getOwner());
  operand.set(RoundTF32Op::create(b, v.getLoc(), v));
}

struct NarrowProductsPass
    : public tg::impl::TGNarrowProductsBase<NarrowProductsPass> {
  using TGNarrowProductsBase::TGNarrowProductsBase;

  void runOnOperation() override {
    if (type == "tf32")
      return roundProductsToTF32(getOperation());
    FloatType narrow = narrowTypeNamed(&getContext(), type);
    if (!narrow) {
      getOperation().emitError("--tg-narrow-products: type must be bf16, "
                               "f16 or tf32, not '")
          << type << "'";
      return signalPassFailure();
    }
    narrowProducts(getOperation(), narrow);
  }
};

} // namespace

FloatType tg::narrowTypeNamed(MLIRContext *context, StringRef name) {
  if (name == "bf16")
    return BFloat16Type::get(context);
  if (name == "f16")
    return Float16Type::get(context);
  return {};
}

/// Every f32 tg.matmul and tg.conv of \p module.
static SmallVector<Operation *> f32Products(ModuleOp module) {
  SmallVector<Operation *> products;
  module.walk([&](Operation *op) {
    if (isa<MatmulOp, ConvOp>(op) && allF32Tensors(op))
      products.push_back(op);
  });
  return products;
}

void tg::roundProductsToTF32(ModuleOp module) {
  OpBuilder b(module.getContext());
  for (Operation *op : f32Products(module))
    for (OpOperand *operand : multiplicands(op))
      roundToTF32(b, *operand);
}

void tg::narrowProducts(ModuleOp module, FloatType narrowType) {
  SmallVector<Operation *> products = f32Products(module);
  Narrowing n;
  n.type = narrowType;
  for (Operation *op : products)
    narrow(op, n);
  // The casts back to f32 that only fed narrowed products are dead now.
  for (CastOp c : n.widened)
    if (c->use_empty())
      c->erase();
}
