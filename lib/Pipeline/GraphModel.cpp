//===- GraphModel.cpp - The op DAG of a forward function with costs -------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/Partition.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <set>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

int64_t pipeline::bytesOf(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape())
    return 0;
  int64_t bits = rt.getElementType().getIntOrFloatBitWidth();
  return rt.getNumElements() * std::max<int64_t>(1, bits / 8);
}

namespace {

bool isFloat(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// The cost of `op`'s VJP: the op is cloned into a scratch function whose
/// arguments stand for its operands and result gradients, its VJP built
/// there and priced op by op. Negative when it has none.
double backwardSeconds(Operation *op, cost::CostModel &costs) {
  auto iface = dyn_cast<tg::GradientOpInterface>(op);
  if (!iface)
    return -1;
  MLIRContext *ctx = op->getContext();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(scratch->getBody());
  SmallVector<Type> types(op->getOperandTypes());
  types.append(op->getResultTypes().begin(), op->getResultTypes().end());
  auto fn = func::FuncOp::create(b, op->getLoc(), "vjp",
                                 b.getFunctionType(types, {}));
  Block *block = fn.addEntryBlock();
  b.setInsertionPointToStart(block);
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    map.map(v, block->getArgument(i));
  Operation *copy = b.clone(*op, map);
  SmallVector<Value> grads;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    grads.push_back(block->getArgument(op->getNumOperands() + i));
  SmallVector<bool> needed;
  for (Value v : op->getOperands())
    needed.push_back(isFloat(v.getType()) &&
                     !isa_and_nonnull<tg::ConstantOp>(v.getDefiningOp()));
  auto copied = cast<tg::GradientOpInterface>(copy);
  // Diagnostics of ops with no gradient are expected here: silence them.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  if (failed(copied.buildVJP(b, grads, needed)))
    return -1;
  double seconds = 0;
  for (Operation &o : *block)
    if (&o != copy)
      seconds += costs.opCost(&o);
  return seconds;
}

} // namespace

FailureOr<GraphModel> pipeline::modelGraph(func::FuncOp fn,
                                           cost::CostModel &costs) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("cannot partition a function of several blocks");
  GraphModel g;
  g.numInputs = fn.getNumArguments();
  Block &body = fn.getBody().front();
  DenseMap<Operation *, int> index;
  DenseSet<Operation *> weightSeen;
  for (Operation &op : body.without_terminator()) {
    if (isa<tg::WeightOp, tg::ConstantOp>(op))
      continue;
    if (isa<tg::IfOp>(op))
      return op.emitOpError("cannot be partitioned: a training step through "
                            "run-time control flow is not built (bind the "
                            "condition, or fold it with --canonicalize)");
    if (isa<tg::ScanOp>(op))
      return op.emitOpError("cannot be partitioned: a training step through "
                            "a recurrence is not built");
    if (op.getNumRegions())
      return op.emitOpError("cannot be partitioned (form fragments after "
                            "partitioning)");
    Node n;
    n.op = &op;
    n.forward = costs.opCost(&op);
    double back = backwardSeconds(&op, costs);
    n.backward = back >= 0 ? back : 2 * n.forward;
    for (Value r : op.getResults())
      n.activationBytes += bytesOf(r.getType());
    std::set<int> deps;
    for (Value v : op.getOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        deps.insert(arg.getArgNumber());
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (isa<tg::WeightOp>(def)) {
        if (weightSeen.insert(def).second)
          n.weightBytes += bytesOf(v.getType());
        continue;
      }
      auto it = index.find(def);
      if (it == index.end())
        continue; // a constant
      const std::vector<int> &up = g.inputs[it->second];
      deps.insert(up.begin(), up.end());
    }
    int id = g.nodes.size();
    index[&op] = id;
    g.inputs.emplace_back(deps.begin(), deps.end());
    g.nodes.push_back(std::move(n));
  }
  for (auto [id, n] : llvm::enumerate(g.nodes)) {
    DenseMap<int, int64_t> bytesTo;
    for (Value r : n.op->getResults())
      for (Operation *user : r.getUsers()) {
        auto it = index.find(user);
        if (it != index.end())
          bytesTo[it->second] += bytesOf(r.getType());
      }
    std::vector<std::pair<int, int64_t>> succ(bytesTo.begin(), bytesTo.end());
    llvm::sort(succ);
    for (auto [s, bytes] : succ) {
      n.succs.push_back(s);
      n.succBytes.push_back(bytes);
      g.nodes[s].preds.push_back(id);
    }
    g.totalForward += n.forward;
    g.totalBackward += n.backward;
    g.totalWeightBytes += n.weightBytes;
  }
  if (g.nodes.empty())
    return fn.emitError("nothing to partition: the function has no ops");
  return g;
}
