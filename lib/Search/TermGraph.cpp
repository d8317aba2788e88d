//===- TermGraph.cpp - Compact tensor graphs for the search ---------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/TermGraph.h"

#include "loom/Search/Hash.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <unordered_map>

using namespace mlir;
using namespace loom;
using namespace loom::search;

FailureOr<TermGraph> TermGraph::fromFunc(SearchContext &sc, func::FuncOp fn,
                                         std::string &why) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock()) {
    why = "the function does not have exactly one block";
    return failure();
  }
  TermGraph g;
  Block &body = fn.getBody().front();
  llvm::DenseMap<Value, ValueRef> values;
  for (BlockArgument arg : body.getArguments()) {
    TermNode n;
    n.op = sc.argOp(arg.getArgNumber());
    n.types.push_back(arg.getType());
    values[arg] = ValueRef{uint32_t(g.nodes.size()), 0};
    g.nodes.push_back(std::move(n));
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        g.outputs.push_back(values.lookup(v));
      continue;
    }
    if (op.getDialect() == nullptr || op.getDialect()->getNamespace() != "tg" ||
        op.getNumRegions() || op.getNumSuccessors()) {
      why = "it contains '" + op.getName().getStringRef().str() +
            "', which the search does not handle";
      return failure();
    }
    // tg.split is the one op of several results the search's terms know
    // (SearchContext::computeDerived); others (tg.nonzero's padded indices
    // and length, tg.topk's values and indices) are not searched.
    if (op.getNumResults() != 1 && op.getName().getStringRef() != "tg.split") {
      why = "it contains '" + op.getName().getStringRef().str() +
            "' (" + std::to_string(op.getNumResults()) +
            " results), which the search does not handle";
      return failure();
    }
    for (Type t : op.getResultTypes())
      if (!isa<RankedTensorType>(t)) {
        why = "an op has a result that is not a ranked tensor";
        return failure();
      }
    TermNode n;
    n.op = sc.internOp(&op);
    SmallVector<Type, 3> operandTypes;
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end()) {
        why = "an operand is defined outside the function body";
        return failure();
      }
      n.operands.push_back(it->second);
      operandTypes.push_back(v.getType());
    }
    n.types.assign(op.result_type_begin(), op.result_type_end());
    n.loc = op.getLoc();
    const OpEval &eval = sc.evaluate(n.op, operandTypes, n.types);
    if (!eval.valid || eval.resultTypes != ArrayRef<Type>(n.types)) {
      why = "op '" + op.getName().getStringRef().str() +
            "' does not verify on its own";
      return failure();
    }
    n.cost = eval.cost;
    for (unsigned i = 0, e = op.getNumResults(); i < e; ++i)
      values[op.getResult(i)] = ValueRef{uint32_t(g.nodes.size()), i};
    g.nodes.push_back(std::move(n));
  }
  if (failed(g.canonicalize(sc))) {
    why = "the function has a cycle";
    return failure();
  }
  return g;
}

size_t TermGraph::numOps(const SearchContext &sc) const {
  size_t n = 0;
  for (const TermNode &node : nodes)
    n += sc.op(node.op).isOp();
  return n;
}

LogicalResult TermGraph::canonicalize(SearchContext &sc) {
  size_t n = nodes.size();
  // Depth-first post-order from the outputs: a topological order of the
  // nodes that reach an output.
  std::vector<uint8_t> state(n, 0); // 0 new, 1 on the stack, 2 done
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<std::pair<uint32_t, uint32_t>> stack;
  for (ValueRef out : outputs) {
    if (state[out.node] == 2)
      continue;
    stack.push_back({out.node, 0});
    state[out.node] = 1;
    while (!stack.empty()) {
      auto &[id, next] = stack.back();
      const TermNode &node = nodes[id];
      if (next < node.operands.size()) {
        uint32_t child = node.operands[next++].node;
        if (state[child] == 1)
          return failure(); // a cycle
        if (state[child] == 0) {
          state[child] = 1;
          stack.push_back({child, 0});
        }
        continue;
      }
      state[id] = 2;
      order.push_back(id);
      stack.pop_back();
    }
  }

  // Rebuild in that order, merging structurally equal nodes.
  std::vector<uint32_t> remap(n, ~0u);
  std::vector<TermNode> result;
  result.reserve(order.size());
  std::unordered_map<uint64_t, uint32_t> byHash;
  byHash.reserve(order.size() * 2);
  double total = 0;
  for (uint32_t old : order) {
    TermNode node = std::move(nodes[old]);
    for (ValueRef &v : node.operands)
      v.node = remap[v.node];
    const OpInfo &info = sc.op(node.op);
    uint64_t h = hashMix(0x5bd1e995ULL, node.op);
    for (Type t : node.types)
      h = hashMix(h, uintptr_t(t.getAsOpaquePointer()));
    auto operandHash = [&](ValueRef v) {
      return hashMix(result[v.node].hash, v.result);
    };
    if (info.commutative && node.operands.size() == 2) {
      uint64_t a = operandHash(node.operands[0]);
      uint64_t b = operandHash(node.operands[1]);
      h = hashMix(hashMix(h, std::min(a, b)), std::max(a, b));
    } else {
      for (ValueRef v : node.operands)
        h = hashMix(h, operandHash(v));
    }
    if (info.isArg())
      h = hashMix(h, 0xa5a5a5a5ULL + info.index);
    node.hash = h;

    auto it = byHash.find(h);
    if (it != byHash.end()) {
      const TermNode &other = result[it->second];
      bool same = other.op == node.op && other.types == node.types &&
                  other.operands.size() == node.operands.size();
      if (same) {
        bool direct = llvm::equal(other.operands, node.operands);
        bool swapped = info.commutative && node.operands.size() == 2 &&
                       other.operands[0] == node.operands[1] &&
                       other.operands[1] == node.operands[0];
        same = direct || swapped;
      }
      if (same) {
        remap[old] = it->second;
        continue;
      }
    }
    node.foldable = info.leaf || (info.isOp() && !node.operands.empty() &&
                                  llvm::all_of(node.operands, [&](ValueRef v) {
                                    return result[v.node].foldable;
                                  }));
    if (!node.foldable)
      total += node.cost;
    remap[old] = result.size();
    byHash.emplace(h, result.size());
    result.push_back(std::move(node));
  }
  nodes = std::move(result);
  total += storedBytes() * sc.getStoredBytePrice();
  uint64_t gh = 0x2545f4914f6cdd1dULL;
  for (ValueRef &out : outputs) {
    out.node = remap[out.node];
    gh = hashMix(gh, hashMix(nodes[out.node].hash, out.result));
  }
  hash = gh;
  cost = total;
  return success();
}

double search::bytesOf(ArrayRef<Type> types) {
  double bytes = 0;
  for (Type t : types) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      continue;
    Type element = tensor.getElementType();
    unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                           : 64; // index
    bytes += double(tensor.getNumElements()) * double((bits + 7) / 8);
  }
  return bytes;
}

double TermGraph::storedBytes() const {
  llvm::DenseSet<std::pair<uint32_t, uint32_t>> stored;
  double bytes = 0;
  for (const TermNode &node : nodes) {
    if (node.foldable)
      continue;
    for (ValueRef v : node.operands)
      if (nodes[v.node].foldable && stored.insert({v.node, v.result}).second)
        bytes += bytesOf(typeOf(v));
  }
  return bytes;
}

void TermGraph::toFunc(SearchContext &sc, func::FuncOp fn) const {
  Block &body = fn.getBody().front();
  Operation *ret = body.getTerminator();
  SmallVector<Operation *> oldOps;
  for (Operation &op : body.without_terminator())
    oldOps.push_back(&op);

  OpBuilder builder(fn.getContext());
  builder.setInsertionPoint(ret);
  std::vector<SmallVector<Value, 1>> values(nodes.size());
  for (auto [i, node] : llvm::enumerate(nodes)) {
    const OpInfo &info = sc.op(node.op);
    if (info.isArg()) {
      values[i].push_back(body.getArgument(info.index));
      continue;
    }
    Location loc = node.loc ? Location(node.loc) : fn.getLoc();
    OperationState state(loc, *info.name);
    for (ValueRef v : node.operands)
      state.operands.push_back(values[v.node][v.result]);
    state.types.assign(node.types.begin(), node.types.end());
    state.attributes.append(info.attrs.getValue());
    Operation *op = builder.create(state);
    values[i].assign(op->result_begin(), op->result_end());
  }
  SmallVector<Value> results;
  for (ValueRef out : outputs)
    results.push_back(values[out.node][out.result]);
  ret->setOperands(results);
  for (Operation *op : llvm::reverse(oldOps)) {
    op->dropAllUses();
    op->erase();
  }
}
