//===- StageFunctions.cpp - A plan's stages as functions ------------------===//
//
// Part of Loom. Every stage of a plan becomes two functions beside the
// partitioned one: its forward (the stage's ops, outlined: the values it
// takes from other stages or the function's arguments come in, the values
// other stages or the return use go out, its tg.weights and tg.constants are
// copied in) and its backward, built by --tg-autodiff from the scalar
// sum_i sum(output_i * grad_i): given the stage inputs and the gradients of
// its outputs, it returns the gradients of its float inputs and of its
// parameters (one vector-Jacobian product of the whole stage).
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/StageFunctions.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradBuilder.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

namespace {

bool isFloat(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// A fresh symbol name based on `base`.
std::string uniqueName(ModuleOp module, const std::string &base) {
  std::string name = base;
  for (int i = 1; SymbolTable::lookupSymbolIn(module, name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

} // namespace

FailureOr<StageFunctions> pipeline::outlineStage(func::FuncOp fn,
                                                 const GraphModel &g,
                                                 const Stage &stage,
                                                 StringRef base) {
  auto module = fn->getParentOfType<ModuleOp>();
  DenseSet<Operation *> members;
  for (int n : stage.nodes)
    members.insert(g.nodes[n].op);
  llvm::SetVector<Value> inputs, outputs;
  for (int n : stage.nodes) {
    Operation *op = g.nodes[n].op;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && (members.contains(def) ||
                  isa<tg::WeightOp, tg::ConstantOp>(def)))
        continue;
      inputs.insert(v);
    }
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers())
        if (!members.contains(user)) {
          outputs.insert(r);
          break;
        }
  }
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> inTypes, outTypes;
  for (Value v : inputs)
    inTypes.push_back(v.getType());
  for (Value v : outputs)
    outTypes.push_back(v.getType());
  StageFunctions out;
  out.forward = uniqueName(module, (base + "_forward").str());
  auto fwd = func::FuncOp::create(b, fn.getLoc(), out.forward,
                                  b.getFunctionType(inTypes, outTypes));
  SymbolTable(module).insert(fwd);
  Block *block = fwd.addEntryBlock();
  b.setInsertionPointToStart(block);
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(inputs))
    map.map(v, block->getArgument(i));
  // Ops in block order; weights and constants copied in before first use.
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (!members.contains(&op))
      continue;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp();
          def && isa<tg::WeightOp, tg::ConstantOp>(def) && !map.contains(v))
        b.clone(*def, map);
    b.clone(op, map);
  }
  SmallVector<Value> results;
  for (Value v : outputs)
    results.push_back(map.lookup(v));
  func::ReturnOp::create(b, fn.getLoc(), results);
  out.inputs.assign(inputs.begin(), inputs.end());
  out.outputs.assign(outputs.begin(), outputs.end());

  // The backward: the gradient of sum_i sum(output_i * grad_i).
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> probeTypes(inTypes);
  for (Type t : outTypes)
    if (isFloat(t))
      probeTypes.push_back(t);
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  std::string probeName = uniqueName(module, (base + "_vjp_probe").str());
  auto probe = func::FuncOp::create(b, fn.getLoc(), probeName,
                                    b.getFunctionType(probeTypes, {scalar}));
  SymbolTable(module).insert(probe);
  Block *pb = probe.addEntryBlock();
  b.setInsertionPointToStart(pb);
  auto call = func::CallOp::create(
      b, fn.getLoc(), fwd,
      ValueRange(pb->getArguments()).take_front(inTypes.size()));
  SmallVector<Value> floats;
  for (Value r : call.getResults())
    if (isFloat(r.getType()))
      floats.push_back(r);
  Value total = tg::autodiff::GradBuilder(b, fn.getLoc())
                    .weightedSum(floats,
                                 pb->getArguments().drop_front(inTypes.size()),
                                 scalar);
  if (!total) {
    probe.erase();
    return fwd.emitError("pipe-partition: stage ")
           << base << " has no float output to differentiate";
  }
  func::ReturnOp::create(b, fn.getLoc(), total);
  // Inline the call so that autodiff sees the stage's ops.
  {
    IRMapping inl;
    for (auto [i, a] : llvm::enumerate(fwd.getArguments()))
      inl.map(a, pb->getArgument(i));
    b.setInsertionPoint(call);
    for (Operation &op : fwd.getBody().front().without_terminator())
      b.clone(op, inl);
    auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
    for (auto [r, v] : llvm::zip(call.getResults(), ret.getOperands()))
      r.replaceAllUsesWith(inl.lookup(v));
    call.erase();
  }
  tg::autodiff::Options o;
  o.optimizer = tg::autodiff::Optimizer::None;
  o.wrtArguments = true;
  o.batchnormTraining = false; // as the forward computes it
  out.backward = uniqueName(module, (base + "_backward").str());
  o.name = out.backward;
  FailureOr<func::FuncOp> bwd = tg::autodiff::buildTrainStep(probe, o);
  probe.erase();
  if (failed(bwd))
    return failure();
  return out;
}
