//===- ControlFlow.cpp - If, Loop and Scan --------------------------------===//
//
// Part of Loom. tg graphs are straight-line, so control flow is resolved at
// import time (docs/ONNX/Import.md says why):
//
//   If    the condition must be known at import time (a constant, a folded
//         shape computation, a bound graph input); only the branch it takes
//         is imported, into the enclosing function. Values of enclosing
//         graphs are visible in the branch by name; nested Ifs work the same
//         way.
//   Loop  the trip count M and the initial condition must be known, and so
//         must the condition each iteration computes (when the loop has
//         one); the body is imported once per iteration with its inputs
//         bound to the iteration number, the condition and the carried
//         values. Scan outputs are stacked along a new leading axis.
//   Scan  (opset 9 and later) the sequence length is static; the body is
//         imported once per element of the scan axis, with the slices of the
//         scan inputs (forward or reverse) and the state; scan outputs are
//         stacked along their scan_output_axes.
//
// Unrolling is bounded: at most kMaxIterations iterations and
// kMaxUnrolledNodes nodes for one Loop or Scan, and kMaxExpandedNodes for the
// whole import (loops nested in loops); beyond them the import stops with a
// diagnostic rather than produce a graph too large to use.
//
//===----------------------------------------------------------------------===//

#include "Expander.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/DebugStringHelper.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using llvm::StringRef;

/// Iterations one Loop or Scan may unroll to.
static constexpr int64_t kMaxIterations = 4096;
/// Body nodes (iterations times nodes of the body) one Loop or Scan may
/// unroll to.
static constexpr int64_t kMaxUnrolledNodes = 1 << 17;

/// A graph attribute of the node; an error when it is missing.
static const onnx::GraphProto *graphAttr(NodeContext &ctx, StringRef name) {
  const onnx::AttributeProto *a = ctx.getAttr(name);
  if (!a || !a->has_g()) {
    (void)ctx.fail("attribute '" + name + "' (a graph) is required");
    return nullptr;
  }
  return &a->g();
}

/// The first graph input (by its tg.name) that \p value is computed from, or
/// "" (a run-time condition computed by comparisons of graph inputs).
static std::string graphInputBehind(Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (auto name = func ? func.getArgAttrOfType<StringAttr>(
                                 arg.getArgNumber(), "tg.name")
                           : StringAttr())
        return name.str();
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return "";
}

/// The value of input `i`, a tensor of one element known at import time;
/// otherwise an error saying that `what` must be known (and, for a graph
/// input, how to bind it).
static FailureOr<double> knownScalar(NodeContext &ctx, unsigned i,
                                     StringRef what, StringRef why) {
  const HostTensor *t = ctx.known(i);
  if (!t) {
    ImportedValue *v = ctx.importer().lookup(ctx.node().input(i));
    auto diag = ctx.emitError() << what << " (input " << i
                                << ") is not known at import time; " << why;
    std::string behind = v && !v->isGraphInput && v->value
                             ? graphInputBehind(v->value)
                             : std::string();
    if (v && v->isGraphInput)
      diag << "; it is the graph input '" << ctx.node().input(i)
           << "': bind it to a value (loom-translate --bind "
           << ctx.node().input(i) << "=VALUE)";
    else if (!behind.empty())
      diag << "; it is computed from the graph input '" << behind
           << "': bind that to a value (loom-translate --bind " << behind
           << "=VALUE)";
    return diag;
  }
  if (t->numElements() != 1)
    return ctx.fail(what + " (input " + Twine(i) +
                    ") must have one element, it has " +
                    Twine(t->numElements()));
  return t->asDouble(0);
}

/// Checks that `count` iterations of `body` stay within the unrolling
/// limits.
static LogicalResult checkUnrollLimits(NodeContext &ctx,
                                       const onnx::GraphProto &body,
                                       int64_t count) {
  if (count > kMaxIterations)
    return ctx.fail("unrolling " + Twine(count) +
                    " iterations exceeds the limit of " +
                    Twine(kMaxIterations));
  int64_t nodes = count * std::max(body.node_size(), 1);
  if (nodes > kMaxUnrolledNodes)
    return ctx.fail("unrolling " + Twine(count) + " iterations of a body of " +
                    Twine(body.node_size()) + " nodes exceeds the limit of " +
                    Twine(kMaxUnrolledNodes) + " nodes");
  return success();
}

/// Fails once the import as a whole has grown past kMaxExpandedNodes
/// (loops nested in loops).
static LogicalResult checkTotal(NodeContext &ctx) {
  if (ctx.importer().importedNodes > kMaxExpandedNodes)
    return ctx.fail("unrolling makes the graph exceed " +
                    Twine(kMaxExpandedNodes) + " nodes");
  return success();
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

/// Imports the nodes of \p branch into \p block (a region of the tg.if
/// being built) and returns the values of its outputs. The names the branch
/// defines are forgotten afterwards (ONNX scoping), and so are the values
/// that enclosing names got inside it, except weights: those move to the
/// start of the function, where both branches and what follows see them.
static FailureOr<SmallVector<Value>>
importBranch(NodeContext &ctx, const onnx::GraphProto &branch, Block &block) {
  GraphImporter &gi = ctx.importer();
  llvm::StringMap<ImportedValue> saved = gi.values;
  llvm::scope_exit forget([&] {
    Block &start = gi.function.getBody().front();
    for (auto &named : gi.values) {
      ImportedValue &v = named.getValue();
      auto it = saved.find(named.getKey());
      if (it == saved.end() || it->second.value || !v.value)
        continue;
      if (auto weight = v.value.getDefiningOp<tg::WeightOp>()) {
        weight->moveBefore(&start, start.begin());
        it->second = v;
      }
    }
    gi.values = std::move(saved);
  });
  OpBuilder::InsertionGuard guard(gi.builder);
  gi.builder.setInsertionPointToEnd(&block);
  if (failed(gi.importSubgraph(branch)))
    return failure();
  SmallVector<Value> outputs;
  for (const auto &out : branch.output()) {
    ImportedValue *v = gi.lookup(out.name());
    if (!v)
      return ctx.fail("the branch output '" + out.name() +
                      "' is not defined in the branch or before it");
    // The length of a padded value is computed in the branch's region and
    // cannot leave it with the value (Dynamic.cpp, docs/ONNX/Import.md).
    if (v->bound)
      return ctx.fail("the branch output '" + out.name() +
                      "' has a data-dependent length; a run-time If cannot "
                      "return a padded value");
    auto value = gi.materialize(out.name(), *v, ctx.loc());
    if (failed(value))
      return failure();
    outputs.push_back(*value);
  }
  tg::YieldOp::create(gi.builder, ctx.loc(), outputs);
  return outputs;
}

/// An If whose condition is known only at run time: a tg.if holding both
/// branches.
static LogicalResult importRunTimeIf(NodeContext &ctx) {
  const onnx::GraphProto *branches[2] = {graphAttr(ctx, "then_branch"),
                                         graphAttr(ctx, "else_branch")};
  if (!branches[0] || !branches[1])
    return failure();
  RankedTensorType condType = ctx.inputType(0);
  if (!condType || !condType.getElementType().isInteger(1) ||
      condType.getNumElements() != 1)
    return ctx.fail("the condition (input 0) must be a bool tensor of one "
                    "element");
  auto cond = ctx.input(0);
  if (failed(cond))
    return failure();
  auto ifOp = tg::IfOp::create(ctx.builder(), ctx.loc(), TypeRange(), *cond);
  SmallVector<Value> yielded[2];
  const char *names[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    if (branches[b]->output_size() != static_cast<int>(ctx.numOutputs()))
      return ctx.fail("the " + Twine(names[b]) + " has " +
                      Twine(branches[b]->output_size()) +
                      " outputs, the node " + Twine(ctx.numOutputs()));
    auto outs = importBranch(ctx, *branches[b], ifOp.getBlock(b == 0));
    if (failed(outs)) {
      std::string behind = graphInputBehind(*cond);
      return ctx.fail(
          "the " + Twine(names[b]) +
          " does not import (above); the condition is known only at run "
          "time, so both branches must import at these shapes" +
          (behind.empty() ? std::string()
                          : "; binding the graph input '" + behind +
                                "' (loom-translate --bind " + behind +
                                "=VALUE) imports only the branch it selects"));
    }
    yielded[b] = std::move(*outs);
  }
  SmallVector<Type> types;
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    Type t = yielded[0][i].getType(), e = yielded[1][i].getType();
    if (t != e)
      return ctx.fail("output " + Twine(i) + ": the then_branch yields " +
                      mlir::debugString(t) + " and the else_branch " +
                      mlir::debugString(e) +
                      "; a run-time If needs both branches to yield the same "
                      "static types (bind the inputs that decide the "
                      "condition to import one branch)");
    types.push_back(t);
  }
  // The op was built before its result types were known: rebuild it with
  // them, moving the regions.
  OpBuilder &b = ctx.builder();
  auto typed = tg::IfOp::create(b, ctx.loc(), types, *cond);
  for (int r = 0; r < 2; ++r) {
    Region &to = r == 0 ? typed.getThenRegion() : typed.getElseRegion();
    Region &from = r == 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
    to.getBlocks().clear();
    to.takeBody(from);
  }
  ifOp.erase();
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, typed.getResult(i));
  return success();
}

static LogicalResult importIf(NodeContext &ctx) {
  if (!ctx.known(0))
    return importRunTimeIf(ctx);
  auto cond = knownScalar(ctx, 0, "the condition", "");
  if (failed(cond))
    return failure();
  const onnx::GraphProto *branch =
      graphAttr(ctx, *cond != 0 ? "then_branch" : "else_branch");
  if (!branch)
    return failure();
  if (branch->output_size() != static_cast<int>(ctx.numOutputs()))
    return ctx.fail("the " + Twine(*cond != 0 ? "then_branch" : "else_branch") +
                    " has " + Twine(branch->output_size()) +
                    " outputs, the node " + Twine(ctx.numOutputs()));
  if (failed(ctx.importer().importSubgraph(*branch)))
    return failure();
  Expander ex(ctx);
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    if (failed(ex.setOutput(i, branch->output(i).name())))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

static LogicalResult importLoop(NodeContext &ctx) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return failure();
  const StringRef why = "Loom unrolls loops whose trip count and "
                        "conditions are known at import time";
  int64_t numCarried = static_cast<int64_t>(ctx.numInputs()) - 2;
  if (numCarried < 0)
    return ctx.fail("expects the inputs M and cond (either may be empty)");
  int64_t numScan = body->output_size() - 1 - numCarried;
  if (body->input_size() != numCarried + 2 || numScan < 0 ||
      numCarried + numScan != static_cast<int64_t>(ctx.numOutputs()))
    return ctx.fail("the body has " + Twine(body->input_size()) +
                    " inputs and " + Twine(body->output_size()) +
                    " outputs, which do not match the node's " +
                    Twine(numCarried) + " loop-carried values");

  std::optional<int64_t> tripCount;
  if (ctx.hasInput(0)) {
    auto m = knownScalar(ctx, 0, "the trip count M", why);
    if (failed(m))
      return failure();
    tripCount = static_cast<int64_t>(*m);
  }
  bool hasCond = ctx.hasInput(1);
  bool cond = true;
  if (hasCond) {
    auto c = knownScalar(ctx, 1, "the condition", why);
    if (failed(c))
      return failure();
    cond = *c != 0;
  }
  if (!tripCount && !hasCond)
    return ctx.fail("neither a trip count nor a condition bounds the loop");
  if (tripCount && failed(checkUnrollLimits(ctx, *body, *tripCount)))
    return failure();

  Expander ex(ctx);
  SmallVector<std::string> carried;
  for (int64_t j = 0; j < numCarried; ++j)
    carried.push_back(ctx.node().input(2 + j));
  SmallVector<SmallVector<std::string>> scans(numScan);
  int64_t it = 0;
  for (; (!tripCount || it < *tripCount) && cond; ++it) {
    if ((!tripCount && failed(checkUnrollLimits(ctx, *body, it + 1))) ||
        failed(checkTotal(ctx)))
      return failure();
    if (failed(ex.alias(body->input(0).name(), ex.scalarInt(it))))
      return failure();
    HostTensor c;
    c.dataType = onnx::TensorProto::BOOL;
    c.ints = {1};
    if (failed(ex.alias(body->input(1).name(), ex.constant(std::move(c)))))
      return failure();
    for (int64_t j = 0; j < numCarried; ++j)
      if (failed(ex.alias(body->input(2 + j).name(), carried[j])))
        return failure();
    if (failed(ctx.importer().importSubgraph(*body)))
      return failure();
    if (hasCond) {
      ImportedValue *out = ctx.importer().lookup(body->output(0).name());
      if (!out)
        return ctx.fail("the body does not compute its condition '" +
                        body->output(0).name() + "'");
      const HostTensor *known = ctx.importer().decode(*out, ctx.loc());
      if (!known || known->numElements() != 1)
        return ctx.fail("the condition the body computes in iteration " +
                        Twine(it) + " is not known at import time; " + why);
      cond = known->asDouble(0) != 0;
    }
    for (int64_t j = 0; j < numCarried; ++j) {
      auto s = ex.snapshot(body->output(1 + j).name());
      if (failed(s))
        return failure();
      carried[j] = *s;
    }
    for (int64_t k = 0; k < numScan; ++k) {
      auto s = ex.snapshot(body->output(1 + numCarried + k).name());
      if (failed(s))
        return failure();
      scans[k].push_back(*s);
    }
  }
  for (int64_t j = 0; j < numCarried; ++j)
    if (failed(ex.setOutput(j, carried[j])))
      return failure();
  for (int64_t k = 0; k < numScan; ++k) {
    if (!ctx.hasOutput(numCarried + k))
      continue;
    if (scans[k].empty())
      return ctx.fail("the loop runs no iteration, so its scan output " +
                      Twine(k) + " has no known shape");
    auto v = ex.stack(scans[k], 0);
    if (failed(v) || failed(ex.setOutput(numCarried + k, *v)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

static LogicalResult importScan(NodeContext &ctx) {
  if (ctx.opset() < 9)
    return ctx.fail("Scan before opset 9 (with a batch axis and "
                    "sequence_lens) is not supported");
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return failure();
  int64_t numScanIn = ctx.getInt("num_scan_inputs", 0);
  int64_t numState = static_cast<int64_t>(ctx.numInputs()) - numScanIn;
  int64_t numScanOut = body->output_size() - numState;
  if (numScanIn < 1 || numState < 0 || numScanOut < 0 ||
      body->input_size() != numState + numScanIn ||
      static_cast<int64_t>(ctx.numOutputs()) != numState + numScanOut)
    return ctx.fail("num_scan_inputs " + Twine(numScanIn) +
                    " does not match the inputs and the body");
  auto readList = [&](StringRef name, int64_t n,
                      SmallVector<int64_t> &out) -> LogicalResult {
    out.assign(n, 0);
    if (auto v = ctx.getInts(name)) {
      if (static_cast<int64_t>(v->size()) != n)
        return ctx.fail(name + " has " + Twine(v->size()) +
                        " entries; expected " + Twine(n));
      out.assign(v->begin(), v->end());
    }
    return success();
  };
  SmallVector<int64_t> inAxes, inDirs, outAxes, outDirs;
  if (failed(readList("scan_input_axes", numScanIn, inAxes)) ||
      failed(readList("scan_input_directions", numScanIn, inDirs)) ||
      failed(readList("scan_output_axes", numScanOut, outAxes)) ||
      failed(readList("scan_output_directions", numScanOut, outDirs)))
    return failure();

  int64_t length = -1;
  for (int64_t j = 0; j < numScanIn; ++j) {
    unsigned i = numState + j;
    auto axis =
        ctx.normalizeAxis(inAxes[j], ctx.inputRank(i), "scan_input_axes");
    if (failed(axis))
      return failure();
    inAxes[j] = *axis;
    int64_t n = ctx.inputShape(i)[*axis];
    if (length >= 0 && n != length)
      return ctx.fail("the scan inputs have different lengths (" +
                      Twine(length) + " and " + Twine(n) + ")");
    length = n;
  }
  if (length == 0 && numScanOut > 0)
    return ctx.fail("the scan inputs are empty, so the scan outputs have no "
                    "known shape");
  if (failed(checkUnrollLimits(ctx, *body, length)))
    return failure();

  Expander ex(ctx);
  SmallVector<std::string> state;
  for (int64_t j = 0; j < numState; ++j)
    state.push_back(ctx.node().input(j));
  SmallVector<SmallVector<std::string>> scans(numScanOut);
  for (int64_t t = 0; t < length; ++t) {
    if (failed(checkTotal(ctx)))
      return failure();
    for (int64_t j = 0; j < numState; ++j)
      if (failed(ex.alias(body->input(j).name(), state[j])))
        return failure();
    for (int64_t j = 0; j < numScanIn; ++j) {
      int64_t index = inDirs[j] ? length - 1 - t : t;
      int64_t axis = inAxes[j];
      auto slice = ex.emit(
          "Gather", {ctx.node().input(numState + j), ex.scalarInt(index)},
          [&](onnx::NodeProto &n) { Expander::setInt(n, "axis", axis); });
      if (failed(slice) ||
          failed(ex.alias(body->input(numState + j).name(), *slice)))
        return failure();
    }
    if (failed(ctx.importer().importSubgraph(*body)))
      return failure();
    for (int64_t j = 0; j < numState; ++j) {
      auto s = ex.snapshot(body->output(j).name());
      if (failed(s))
        return failure();
      state[j] = *s;
    }
    for (int64_t k = 0; k < numScanOut; ++k) {
      auto s = ex.snapshot(body->output(numState + k).name());
      if (failed(s))
        return failure();
      scans[k].push_back(*s);
    }
  }
  for (int64_t j = 0; j < numState; ++j)
    if (failed(ex.setOutput(j, state[j])))
      return failure();
  for (int64_t k = 0; k < numScanOut; ++k) {
    if (!ctx.hasOutput(numState + k))
      continue;
    if (outDirs[k])
      std::reverse(scans[k].begin(), scans[k].end());
    int64_t rank = ex.shapeOf(scans[k].front()).size() + 1;
    auto axis = ctx.normalizeAxis(outAxes[k], rank, "scan_output_axes");
    if (failed(axis))
      return failure();
    auto v = ex.stack(scans[k], *axis);
    if (failed(v) || failed(ex.setOutput(numState + k, *v)))
      return failure();
  }
  return success();
}

void onnx_to_tg::populateControlFlowHandlers(HandlerTable &table) {
  table["If"] = importIf;
  table["Loop"] = importLoop;
  table["Scan"] = importScan;
}
