//===- BatchProducts.cpp - Independent products as one batched product ----===//
//
// Part of Loom. See BatchProducts.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/BatchProducts.h"

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

/// A product that may join a group, with the positions (in the block) that
/// bound where the batched product can stand: after the definition of its
/// activation, before the first use of its result.
struct Member {
  mutable tg::MatmulOp op;
  int64_t inputAt, firstUse;
};

/// Positions of the block's ops; a value defined outside them is at -1.
class Positions {
public:
  explicit Positions(Block &block) {
    int64_t i = 0;
    for (Operation &op : block) {
      at[&op] = i++;
      ops.push_back(&op);
    }
    this->block = &block;
  }
  Operation *op(int64_t i) const { return ops[i]; }
  int64_t of(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def)
      return -1;
    Operation *top = block->findAncestorOpInBlock(*def);
    return top ? at.lookup(top) : -1;
  }
  int64_t firstUse(Value v) const {
    int64_t first = std::numeric_limits<int64_t>::max();
    for (Operation *user : v.getUsers())
      if (Operation *top = block->findAncestorOpInBlock(*user))
        first = std::min(first, at.lookup(top));
    return first;
  }

private:
  Block *block;
  DenseMap<Operation *, int64_t> at;
  std::vector<Operation *> ops;
};

bool isStaticTensor(Type t, int64_t minRank) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.hasStaticShape() && ranked.getRank() >= minRank;
}

/// Whether \p op can join a group: an activation `[d0, ..., M, K]` of
/// static shape times a rank-2 parameter, its result used.
bool isCandidate(tg::MatmulOp op) {
  return isStaticTensor(op.getLhs().getType(), 2) &&
         isStaticTensor(op.getRhs().getType(), 2) &&
         cast<RankedTensorType>(op.getRhs().getType()).getRank() == 2 &&
         !tg::isParameter(op.getLhs()) && tg::isParameter(op.getRhs()) &&
         !op->use_empty();
}

/// Splits \p pending (products of one shape, in block order) into groups
/// whose members can be computed at one place: each activation is defined
/// before every member's first use. Members that depend on each other never
/// share a group (the path between them holds a use before a definition).
std::vector<SmallVector<Member>> formGroups(SmallVector<Member> pending) {
  std::vector<SmallVector<Member>> groups;
  while (pending.size() >= 2) {
    SmallVector<Member> group{pending.front()}, rest;
    int64_t last = pending.front().inputAt, first = pending.front().firstUse;
    for (const Member &m : ArrayRef(pending).drop_front()) {
      int64_t l = std::max(last, m.inputAt), f = std::min(first, m.firstUse);
      if (l < f) {
        group.push_back(m);
        last = l;
        first = f;
      } else {
        rest.push_back(m);
      }
    }
    if (group.size() >= 2)
      groups.push_back(std::move(group));
    pending = std::move(rest);
  }
  return groups;
}

/// The split whose results, in order, are the activations of \p group
/// (reordered to match), when there is one: axis 0, one piece per member.
tg::SplitOp splitOfInputs(SmallVector<Member> &group) {
  auto split = group.front().op.getLhs().getDefiningOp<tg::SplitOp>();
  if (!split || split.getAxis() != 0 ||
      split->getNumResults() != group.size() ||
      !llvm::all_of(group, [&](const Member &m) {
        return m.op.getLhs().getDefiningOp() == split.getOperation();
      }))
    return {};
  llvm::sort(group, [](const Member &a, const Member &b) {
    return cast<OpResult>(a.op.getLhs()).getResultNumber() <
           cast<OpResult>(b.op.getLhs()).getResultNumber();
  });
  for (auto [i, m] : llvm::enumerate(group))
    if (cast<OpResult>(m.op.getLhs()).getResultNumber() != i)
      return {};
  return split;
}

RankedTensorType withShape(Type like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(like).getElementType());
}

/// The priced cost of \p ops (parameters are folded: free), each op that
/// computes something a step with its fixed cost (kStepSeconds).
double costOf(ArrayRef<Operation *> ops, cost::CostModel *model) {
  double sum = 0;
  for (Operation *op : ops) {
    if (op->getNumResults() && tg::isParameter(op->getResult(0)))
      continue;
    double seconds = model->opCost(op);
    sum += seconds > 0 ? seconds + kStepSeconds : 0;
  }
  return sum;
}

/// Replaces \p group by one batched product when \p model prices it
/// cheaper; returns the split of its result, or null, and
/// adds the estimated seconds saved to \p saved.
tg::SplitOp batchGroup(SmallVector<Member> group, const Positions &pos,
                       cost::CostModel *model, double *saved) {
  auto rhsType = cast<RankedTensorType>(group.front().op.getRhs().getType());
  Value shared = group.front().op.getRhs();
  if (!llvm::all_of(group,
                    [&](const Member &m) { return m.op.getRhs() == shared; }))
    shared = {};
  if (!shared && int64_t(group.size()) * rhsType.getNumElements() *
                         rhsType.getElementTypeBitWidth() / 8 >
                     kMaxStackedBytes)
    return {};
  tg::SplitOp inputs = splitOfInputs(group);
  int64_t firstUse = std::numeric_limits<int64_t>::max();
  for (const Member &m : group)
    firstUse = std::min(firstUse, m.firstUse);
  // Right before the first use: every activation is defined by then.
  Operation *at = pos.op(firstUse);
  for (const Member &m : group)
    tg::hoistParameter(m.op.getRhs(), at);

  auto lhsType = cast<RankedTensorType>(group.front().op.getLhs().getType());
  auto outType = cast<RankedTensorType>(group.front().op.getType());
  int64_t g = group.size(), rank = lhsType.getRank();
  Location loc = group.front().op.getLoc();
  OpBuilder b(at);
  SmallVector<Operation *> made;
  auto record = [&](Operation *op) {
    made.push_back(op);
    return op->getResult(0);
  };
  // Activations [G * d0, ...] (the split's operand when they are its
  // pieces); with several parameters, [G, d0, ..., M, K].
  Value flat = inputs ? inputs.getInput() : Value();
  if (!flat) {
    SmallVector<Value> lhs;
    for (const Member &m : group)
      lhs.push_back(m.op.getLhs());
    flat = record(tg::ConcatOp::create(b, loc, lhs, 0));
  }
  Value merged;
  if (shared) {
    // One parameter: the activations' rows stacked, the weights read once.
    merged = record(tg::MatmulOp::create(b, loc, flat, shared));
  } else {
    // Parameters [G, 1, ..., K, N]: folded ahead of time.
    SmallVector<int64_t> stacked{g};
    llvm::append_range(stacked, lhsType.getShape());
    Value lhs = record(tg::ReshapeOp::create(
        b, loc, withShape(lhsType, stacked), flat));
    SmallVector<int64_t> one(rank - 1, 1);
    llvm::append_range(one, rhsType.getShape());
    SmallVector<Value> rhs;
    for (const Member &m : group)
      rhs.push_back(record(tg::ReshapeOp::create(
          b, loc, withShape(rhsType, one), m.op.getRhs())));
    Value weights = record(tg::ConcatOp::create(b, loc, rhs, 0));
    Value product = record(tg::MatmulOp::create(b, loc, lhs, weights));
    SmallVector<int64_t> back(outType.getShape());
    back[0] *= g;
    merged = record(tg::ReshapeOp::create(b, loc, withShape(outType, back),
                                          product));
  }
  auto split = tg::SplitOp::create(
      b, loc, merged, 0, SmallVector<int64_t>(g, outType.getDimSize(0)));
  made.push_back(split);

  SmallVector<Operation *> replaced;
  for (const Member &m : group)
    replaced.push_back(m.op);
  double before = model ? costOf(replaced, model) : 0;
  double after = model ? costOf(made, model) : 0;
  if (model && after >= before) {
    for (Operation *op : llvm::reverse(made))
      op->erase();
    return {};
  }
  *saved += before - after;
  for (auto [m, piece] : llvm::zip(group, split.getResults())) {
    m.op.getResult().replaceAllUsesWith(piece);
    m.op->erase();
  }
  if (inputs && inputs->use_empty())
    inputs->erase();
  return split;
}

/// When every piece of \p split has one user, the same elementwise op of
/// one operand (relu), applies it once to the split's operand instead.
bool sinkElementwise(tg::SplitOp split) {
  SmallVector<Operation *> users;
  for (Value piece : split.getResults()) {
    if (!piece.hasOneUse())
      return false;
    users.push_back(*piece.getUsers().begin());
  }
  Operation *first = users.front();
  if (!first->hasTrait<tg::Elementwise>() || first->getNumOperands() != 1 ||
      first->getNumResults() != 1 || first->getNumRegions() != 0 ||
      first->getResult(0).getType() != first->getOperand(0).getType())
    return false;
  for (Operation *u : users)
    if (u->getName() != first->getName() ||
        u->getAttrDictionary() != first->getAttrDictionary() ||
        u->getNumOperands() != 1)
      return false;
  // Before the reshape of the batched product when there is one, where a
  // library fuses it into the product (a oneDNN post-op).
  Value input = split.getInput();
  auto reshape = input.getDefiningOp<tg::ReshapeOp>();
  if (reshape && (!reshape->hasOneUse() || !reshape.getInput().getDefiningOp()))
    reshape = {};
  OpBuilder b(split);
  Operation *whole = b.clone(*first);
  Value operand = reshape ? reshape.getInput() : input;
  whole->setOperand(0, operand);
  whole->getResult(0).setType(operand.getType());
  Value result = whole->getResult(0);
  if (reshape) {
    whole->moveAfter(operand.getDefiningOp());
    result = tg::ReshapeOp::create(b, reshape.getLoc(), input.getType(),
                                   result);
  }
  auto sunk = tg::SplitOp::create(b, split.getLoc(), result, split.getAxis(),
                                  split.getSizes());
  for (auto [u, piece] : llvm::zip(users, sunk.getResults())) {
    u->getResult(0).replaceAllUsesWith(piece);
    u->erase();
  }
  split->erase();
  if (reshape)
    reshape->erase();
  return true;
}

/// One pass over the block: every group batched where it pays.
BatchProductsResult batchOnce(Block &block, cost::CostModel *model) {
  Positions pos(block);
  // Products of one parameter first (their batched form reads it once),
  // then products of one shape.
  llvm::MapVector<std::pair<Type, Value>, SmallVector<Member>> byWeight;
  llvm::MapVector<std::pair<Type, Type>, SmallVector<Member>> byShape;
  for (Operation &op : block)
    if (auto mm = dyn_cast<tg::MatmulOp>(op); mm && isCandidate(mm)) {
      Member m{mm, pos.of(mm.getLhs()), pos.firstUse(mm.getResult())};
      byWeight[{mm.getLhs().getType(), mm.getRhs()}].push_back(m);
      byShape[{mm.getLhs().getType(), mm.getRhs().getType()}].push_back(m);
    }
  std::vector<SmallVector<Member>> candidates;
  for (auto &[key, members] : byWeight)
    llvm::append_range(candidates, formGroups(members));
  for (auto &[key, members] : byShape)
    llvm::append_range(candidates, formGroups(members));
  BatchProductsResult result;
  for (SmallVector<Member> &group : candidates) {
    size_t n = group.size();
    tg::SplitOp split = batchGroup(std::move(group), pos, model, &result.saved);
    if (!split)
      continue;
    result.products += n;
    ++result.groups;
    sinkElementwise(split);
    // Positions changed: the next groups are formed in the next pass.
    return result;
  }
  return result;
}

} // namespace

BatchProductsResult search::batchProducts(func::FuncOp fn,
                                          cost::CostModel *model) {
  BatchProductsResult total;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return total;
  while (true) {
    BatchProductsResult once = batchOnce(fn.getBody().front(), model);
    if (!once.groups)
      return total;
    total.products += once.products;
    total.groups += once.groups;
    total.saved += once.saved;
  }
}
