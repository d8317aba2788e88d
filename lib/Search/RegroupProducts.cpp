//===- RegroupProducts.cpp - Merged products in one canonical grouping ----===//
//
// Part of Loom. See RegroupProducts.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/RegroupProducts.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Support/StableSort.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

int64_t columns(Value v) {
  return cast<RankedTensorType>(v.getType()).getDimSize(1);
}

/// Whether \p op multiplies an activation by a parameter, both rank-2 of
/// static shape.
bool isCandidate(tg::MatmulOp op) {
  auto lhs = dyn_cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = dyn_cast<RankedTensorType>(op.getRhs().getType());
  return lhs && rhs && lhs.hasStaticShape() && rhs.hasStaticShape() &&
         lhs.getRank() == 2 && rhs.getRank() == 2 &&
         !tg::isParameter(op.getLhs()) && tg::isParameter(op.getRhs());
}

bool isColumnConcat(Value v) {
  auto concat = v.getDefiningOp<tg::ConcatOp>();
  return concat && concat.getAxis() == 1;
}

/// The column blocks of the parameter \p v: the operands of its column
/// concatenations, recursively.
void appendBlocks(Value v, SmallVectorImpl<Value> &blocks) {
  if (!isColumnConcat(v)) {
    blocks.push_back(v);
    return;
  }
  for (Value in : v.getDefiningOp<tg::ConcatOp>().getInputs())
    appendBlocks(in, blocks);
}

/// A value the product's result is read through: columns [col, col +
/// width) of the result.
struct Piece {
  Value value;
  int64_t col;
};

/// Collects the pieces of \p v (at column \p col of the product's result)
/// that something other than a column split reads; false when some reader
/// of \p v is a split along the columns and another is not.
bool collectPieces(Value v, int64_t col, SmallVectorImpl<Piece> &pieces) {
  bool splits = !v.use_empty() && llvm::all_of(v.getUsers(), [](Operation *u) {
    auto split = dyn_cast<tg::SplitOp>(u);
    return split && split.getAxis() == 1;
  });
  if (!splits) {
    if (!v.use_empty())
      pieces.push_back({v, col});
    return true;
  }
  for (Operation *user : v.getUsers()) {
    int64_t at = col;
    for (Value r : user->getResults()) {
      if (!collectPieces(r, at, pieces))
        return false;
      at += columns(r);
    }
  }
  return true;
}

/// The products of one activation, their blocks and the readers of each
/// block's columns.
struct Group {
  SmallVector<tg::MatmulOp> products;
  /// Every block once, and per block the values that are its columns.
  llvm::MapVector<Value, SmallVector<Value, 1>> blocks;
};

/// Adds \p product to \p group; false when its result is read through a
/// piece that is not one whole block, or when a block repeats.
bool addProduct(tg::MatmulOp product, Group &group) {
  SmallVector<Value> blocks;
  appendBlocks(product.getRhs(), blocks);
  llvm::DenseMap<int64_t, Value> blockAt;
  int64_t col = 0;
  for (Value b : blocks) {
    if (group.blocks.count(b))
      return false;
    group.blocks[b];
    blockAt[col] = b;
    col += columns(b);
  }
  SmallVector<Piece> pieces;
  if (!collectPieces(product.getResult(), 0, pieces))
    return false;
  for (const Piece &p : pieces) {
    Value b = blockAt.lookup(p.col);
    if (!b || columns(b) != columns(p.value))
      return false;
    group.blocks[b].push_back(p.value);
  }
  group.products.push_back(product);
  return true;
}

/// Erases the ops of \p block that nothing reads and that have no effect,
/// last first, until none is left.
void eraseDeadOps(Block &block) {
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (op.use_empty() && isa<tg::TGDialect>(op.getDialect()) &&
          isMemoryEffectFree(&op)) {
        op.erase();
        erased = true;
      }
  }
}

/// Replaces the products of \p group by one product by its blocks in the
/// order of their definitions, split into the blocks.
void regroup(Group &group) {
  DenseMap<Operation *, int64_t> position;
  int64_t i = 0;
  Operation *first = group.products.front();
  for (Operation &op : *first->getBlock())
    position[&op] = i++;
  SmallVector<Value> order;
  for (auto &entry : group.blocks)
    order.push_back(entry.first);
  loom::stableSort(order, [&](Value a, Value b) {
    int64_t pa = position.lookup(a.getDefiningOp()),
            pb = position.lookup(b.getDefiningOp());
    if (pa != pb)
      return pa < pb;
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  for (Value b : order)
    tg::hoistParameter(b, first);
  OpBuilder builder(first);
  Location loc = first->getLoc();
  Value lhs = group.products.front().getLhs();
  Value rhs = order.size() == 1
                  ? order.front()
                  : tg::ConcatOp::create(builder, loc, order, 1).getResult();
  Value product = tg::MatmulOp::create(builder, loc, lhs, rhs);
  SmallVector<Value> pieces{product};
  if (order.size() > 1) {
    SmallVector<int64_t> sizes;
    for (Value b : order)
      sizes.push_back(columns(b));
    auto split = tg::SplitOp::create(builder, loc, product, 1, sizes);
    pieces.assign(split->result_begin(), split->result_end());
  }
  for (auto [b, piece] : llvm::zip(order, pieces))
    for (Value reader : group.blocks[b])
      reader.replaceAllUsesWith(piece);
}

} // namespace

size_t search::regroupProducts(func::FuncOp fn) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return 0;
  Block &block = fn.getBody().front();
  llvm::MapVector<Value, SmallVector<tg::MatmulOp>> byActivation;
  for (Operation &op : block)
    if (auto mm = dyn_cast<tg::MatmulOp>(op); mm && isCandidate(mm))
      byActivation[mm.getLhs()].push_back(mm);
  size_t replaced = 0;
  for (auto &[lhs, products] : byActivation) {
    if (llvm::none_of(products, [](tg::MatmulOp mm) {
          return isColumnConcat(mm.getRhs());
        }))
      continue;
    Group group;
    if (!llvm::all_of(products,
                      [&](tg::MatmulOp mm) { return addProduct(mm, group); }))
      continue;
    regroup(group);
    replaced += group.products.size();
  }
  if (replaced)
    eraseDeadOps(block);
  return replaced;
}
