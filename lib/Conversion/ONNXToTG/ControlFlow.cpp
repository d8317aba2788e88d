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
//         values. Scan outputs are stacked along a new leading axis. A trip
//         count that is a length of data-dependent value (tracked,
//         RunTimeLengths.cpp) unrolls the loop to its static bound, each
//         iteration a tg.if that runs the body only below the run-time
//         count: carried values keep their old value past it, a value the
//         body appends to and the scan outputs are padded, with the count
//         as their length.
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

/// An output of a branch of a run-time If: its value, and the dimension of
/// data-dependent length it has, if any.
struct BranchOutput {
  Value value;
  std::optional<BoundedDim> bound;
};

/// Imports the nodes of \p branch into \p block (a region of the tg.if
/// being built) and returns its outputs; the caller yields them. The names
/// the branch defines are forgotten afterwards (ONNX scoping), and so are
/// the values that enclosing names got inside it, except weights: those
/// move to the start of the function, where both branches and what follows
/// see them. \p inspect, when given, runs after the nodes are imported and
/// before the names are forgotten (a Loop reads its body's condition).
static FailureOr<SmallVector<BranchOutput>>
importBranch(NodeContext &ctx, const onnx::GraphProto &branch, Block &block,
             llvm::function_ref<LogicalResult()> inspect = nullptr) {
  GraphImporter &gi = ctx.importer();
  llvm::StringMap<ImportedValue> saved = gi.values;
  auto savedCompactions = gi.compactions;
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
    gi.compactions = std::move(savedCompactions);
  });
  OpBuilder::InsertionGuard guard(gi.builder);
  gi.builder.setInsertionPointToEnd(&block);
  if (failed(gi.importSubgraph(branch)) || (inspect && failed(inspect())))
    return failure();
  SmallVector<BranchOutput> outputs;
  for (const auto &out : branch.output()) {
    ImportedValue *v = gi.lookup(out.name());
    if (!v)
      return ctx.fail("the branch output '" + out.name() +
                      "' is not defined in the branch or before it");
    auto value = gi.materialize(out.name(), *v, ctx.loc());
    if (failed(value))
      return failure();
    outputs.push_back({*value, getBound(*value)});
  }
  return outputs;
}

/// The dimension along which output \p i of a run-time If has a
/// data-dependent length: where a branch yields a padded value, or where
/// the branches' static sizes differ (the shorter one is then padded with
/// its size as its length). None when both yield the same static type.
static FailureOr<std::optional<int64_t>>
paddedIfDim(NodeContext &ctx, unsigned i, const BranchOutput &t,
            const BranchOutput &e) {
  auto tt = cast<RankedTensorType>(t.value.getType()),
       et = cast<RankedTensorType>(e.value.getType());
  auto mismatch = [&]() {
    return ctx.fail("output " + Twine(i) + ": the then_branch yields " +
                    mlir::debugString(tt) + " and the else_branch " +
                    mlir::debugString(et) +
                    "; a run-time If needs both branches to yield the same "
                    "static types, or types that differ in one dimension "
                    "(bind the inputs that decide the condition to import "
                    "one branch)");
  };
  if (tt.getElementType() != et.getElementType() ||
      tt.getRank() != et.getRank())
    return mismatch();
  std::optional<int64_t> dim;
  if (t.bound)
    dim = t.bound->dim;
  if (e.bound) {
    if (dim && *dim != e.bound->dim)
      return mismatch();
    dim = e.bound->dim;
  }
  for (int64_t d = 0; d < tt.getRank(); ++d) {
    if (tt.getDimSize(d) == et.getDimSize(d) || d == dim)
      continue;
    if (dim)
      return mismatch();
    dim = d;
  }
  return dim;
}

/// In the current block: \p out padded along \p dim to \p size, and its
/// length (a rank-0 i64).
static FailureOr<std::pair<Value, Value>>
padBranchOutput(NodeContext &ctx, const BranchOutput &out, int64_t dim,
                int64_t size) {
  auto type = cast<RankedTensorType>(out.value.getType());
  int64_t have = type.getDimSize(dim);
  Type i64 = IntegerType::get(ctx.context(), 64);
  Value length = out.bound ? out.bound->length
                           : ctx.scalar(i64, static_cast<double>(have));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  auto padded = RankedTensorType::get(shape, type.getElementType());
  if (have == size)
    return std::pair(out.value, length);
  if (have == 0)
    return std::pair(ctx.splat(padded, 0), length);
  SmallVector<int64_t> low(shape.size(), 0), high(shape.size(), 0);
  high[dim] = size - have;
  auto v = ctx.createTyped<tg::PadOp>(
      padded, out.value,
      {ctx.namedAttr("low", DenseI64ArrayAttr::get(ctx.context(), low)),
       ctx.namedAttr("high", DenseI64ArrayAttr::get(ctx.context(), high))});
  if (failed(v))
    return failure();
  return std::pair(*v, length);
}

/// \p ifOp, built before its result types were known, rebuilt with
/// \p types (its regions move to the new op, which replaces it).
static tg::IfOp withResultTypes(NodeContext &ctx, tg::IfOp ifOp,
                                TypeRange types) {
  auto typed = tg::IfOp::create(ctx.builder(), ctx.loc(), types,
                                ifOp.getCondition());
  for (int r = 0; r < 2; ++r) {
    Region &to = r == 0 ? typed.getThenRegion() : typed.getElseRegion();
    Region &from = r == 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
    to.getBlocks().clear();
    to.takeBody(from);
  }
  ifOp.erase();
  return typed;
}

/// An If whose condition is known only at run time: a tg.if holding both
/// branches. An output of data-dependent length (padded in a branch, or of
/// different sizes in the two) is padded to the larger size, and the
/// tg.if returns its length after the outputs.
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
  SmallVector<BranchOutput> outs[2];
  const char *names[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    if (branches[b]->output_size() != static_cast<int>(ctx.numOutputs()))
      return ctx.fail("the " + Twine(names[b]) + " has " +
                      Twine(branches[b]->output_size()) +
                      " outputs, the node " + Twine(ctx.numOutputs()));
    auto imported = importBranch(ctx, *branches[b], ifOp.getBlock(b == 0));
    if (failed(imported)) {
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
    outs[b] = std::move(*imported);
  }
  SmallVector<Type> types, lengthTypes;
  SmallVector<Value> yielded[2], lengths[2];
  SmallVector<std::optional<int64_t>> paddedDims;
  OpBuilder &builder = ctx.builder();
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    auto dim = paddedIfDim(ctx, i, outs[0][i], outs[1][i]);
    if (failed(dim))
      return failure();
    paddedDims.push_back(*dim);
    if (!*dim) {
      types.push_back(outs[0][i].value.getType());
      for (int b = 0; b < 2; ++b)
        yielded[b].push_back(outs[b][i].value);
      continue;
    }
    int64_t size = 0;
    for (int b = 0; b < 2; ++b)
      size = std::max(size, cast<RankedTensorType>(outs[b][i].value.getType())
                                .getDimSize(**dim));
    for (int b = 0; b < 2; ++b) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToEnd(&ifOp.getBlock(b == 0));
      auto p = padBranchOutput(ctx, outs[b][i], **dim, size);
      if (failed(p))
        return failure();
      yielded[b].push_back(p->first);
      lengths[b].push_back(p->second);
    }
    types.push_back(yielded[0].back().getType());
    lengthTypes.push_back(lengths[0].back().getType());
  }
  for (int b = 0; b < 2; ++b) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&ifOp.getBlock(b == 0));
    SmallVector<Value> all(yielded[b]);
    all.append(lengths[b]);
    tg::YieldOp::create(builder, ctx.loc(), all);
  }
  types.append(lengthTypes);
  tg::IfOp typed = withResultTypes(ctx, ifOp, types);
  unsigned nextLength = ctx.numOutputs();
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    ctx.setOutput(i, typed.getResult(i));
    if (!paddedDims[i])
      continue;
    Value length = typed.getResult(nextLength++);
    if (ctx.hasOutput(i))
      setBound(ctx, *ctx.importer().lookup(ctx.node().output(i)),
               BoundedDim{*paddedDims[i], length});
  }
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

/// A trip count known only at run time, below a static bound (a length:
/// the number of detections a post-processing loop visits). The loop is
/// unrolled to the bound; iteration `i` takes effect when `i < count`.
struct RunTimeTrips {
  int64_t bound;
  Value count; // rank-0 i64
};

/// Follows \p name back through the Identity and Cast nodes of \p body.
static std::string throughCopies(const onnx::GraphProto &body,
                                 std::string name) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto &n : body.node()) {
      if ((n.op_type() != "Identity" && n.op_type() != "Cast") ||
          n.output_size() != 1 || n.output(0) != name || n.input_size() < 1)
        continue;
      name = n.input(0);
      changed = true;
      break;
    }
  }
  return name;
}

/// The `Concat(in, ...)` node behind body output \p out (through copies)
/// whose first input is body input \p in, so that the values of `in` stay
/// the first ones of `out` (PyTorch's `res = torch.cat((res, x))` in a
/// scripted loop); null otherwise.
static const onnx::NodeProto *appendingConcat(const onnx::GraphProto &body,
                                              StringRef out, StringRef in) {
  std::string source = throughCopies(body, out.str());
  for (const auto &n : body.node()) {
    if (n.output_size() != 1 || n.output(0) != source)
      continue;
    if (n.op_type() != "Concat" || n.input_size() < 1 ||
        throughCopies(body, n.input(0)) != in)
      return nullptr;
    return &n;
  }
  return nullptr;
}

/// The axis along which body output \p out appends to body input \p in
/// (appendingConcat); none otherwise.
static std::optional<int64_t> appendAxis(const onnx::GraphProto &body,
                                         StringRef out, StringRef in) {
  const onnx::NodeProto *n = appendingConcat(body, out, in);
  if (!n)
    return std::nullopt;
  for (const auto &a : n->attribute())
    if (a.name() == "axis")
      return a.i();
  return std::nullopt;
}

/// One loop-carried value of a Loop with a run-time trip count: its name,
/// its static shape after each iteration (shapes[k] after k iterations),
/// and the axis it grows along, when it grows.
struct CarriedValue {
  std::string name;
  SmallVector<SmallVector<int64_t>> shapes;
  std::optional<int64_t> growAxis;
};

/// How carried value \p j (\p c) changes in an iteration of a loop with a
/// run-time trip count, from \p oldShape to \p newShape: not at all
/// (none), or by being appended to along the axis returned (the body's
/// `out = Concat(in, ...)`); anything else is refused.
static FailureOr<std::optional<int64_t>>
carriedGrowth(NodeContext &ctx, const onnx::GraphProto &body, int64_t j,
              ArrayRef<int64_t> oldShape, ArrayRef<int64_t> newShape,
              const CarriedValue &c) {
  if (oldShape == newShape)
    return std::optional<int64_t>();
  std::optional<int64_t> axis =
      appendAxis(body, body.output(1 + j).name(), body.input(2 + j).name());
  int64_t rank = oldShape.size();
  if (axis && *axis < 0)
    *axis += rank;
  bool appends = axis && *axis >= 0 && *axis < rank &&
                 int64_t(newShape.size()) == rank &&
                 (!c.growAxis || *c.growAxis == *axis);
  for (int64_t d = 0; appends && d < rank; ++d)
    appends =
        d == *axis ? newShape[d] >= oldShape[d] : newShape[d] == oldShape[d];
  if (!appends || getBound(ctx.importer().lookup(c.name)->value))
    return ctx.fail(
        "loop-carried value " + Twine(j) + " changes its shape from " +
        shapeString(oldShape) + " to " + shapeString(newShape) +
        " in an iteration; with a trip count known only at run time, a "
        "carried value must keep its shape or be appended to (Concat of "
        "itself first)");
  return axis;
}

/// Reads the condition the body computed in iteration \p it (it must be
/// known at import time) into \p cond.
static LogicalResult readBodyCondition(NodeContext &ctx,
                                       const onnx::GraphProto &body,
                                       int64_t it, StringRef why,
                                       bool &cond) {
  ImportedValue *out = ctx.importer().lookup(body.output(0).name());
  if (!out)
    return ctx.fail("the body does not compute its condition '" +
                    body.output(0).name() + "'");
  const HostTensor *known = ctx.importer().decode(*out, ctx.loc());
  if (!known || known->numElements() != 1)
    return ctx.fail("the condition the body computes in iteration " +
                    Twine(it) + " is not known at import time; " + why);
  cond = known->asDouble(0) != 0;
  return success();
}

/// The loop-carried values and scan outputs of the iterations unrolled so
/// far.
struct LoopState {
  SmallVector<CarriedValue> carried;
  SmallVector<SmallVector<std::string>> scans;
};

/// In the current block (a guarded iteration's then region, the body just
/// imported): what the body appends to carried value \p j along \p axis,
/// the inputs of its `Concat(in, ...)` after the first, concatenated.
static FailureOr<Value> appendedPart(NodeContext &ctx, Expander &ex,
                                     const onnx::GraphProto &body, int64_t j,
                                     int64_t axis) {
  const onnx::NodeProto *concat = appendingConcat(
      body, body.output(1 + j).name(), body.input(2 + j).name());
  SmallVector<Value> parts;
  for (int k = 1; concat && k < concat->input_size(); ++k) {
    auto v = ex.valueOf(concat->input(k));
    if (failed(v))
      return failure();
    parts.push_back(*v);
  }
  if (parts.empty())
    return ctx.fail("loop-carried value " + Twine(j) +
                    " grows without a Concat that appends to it");
  if (parts.size() == 1)
    return parts.front();
  return ctx.create<tg::ConcatOp>(parts, {ctx.i64Attr("axis", axis)});
}

/// Iteration \p it of a Loop whose trip count \p count is known only at
/// run time: a tg.if on `it < count` whose then region holds the body and
/// yields its carried values and scan outputs, and whose else region
/// yields the carried values unchanged and zeros for the scan outputs. A
/// carried value the body appends to is appended to after the tg.if, with
/// the part the then region yields (zeros from the else region), so that
/// the value itself is not copied out of a region. An iteration past the
/// count thus costs a branch at run time, not the body's work (a detector's
/// per-detection loop is unrolled to its bound of detections, and most
/// images have far fewer).
static LogicalResult guardedIteration(NodeContext &ctx, Expander &ex,
                                      const onnx::GraphProto &body,
                                      int64_t it, Value count, StringRef why,
                                      bool hasCond, bool &cond,
                                      LoopState &state) {
  SmallVector<Value> old;
  for (CarriedValue &c : state.carried) {
    auto v = ex.valueOf(c.name);
    if (failed(v))
      return failure();
    old.push_back(*v);
  }
  Type i64 = IntegerType::get(ctx.context(), 64);
  auto valid = ctx.create<tg::LessOp>({ctx.scalar(i64, double(it)), count});
  if (failed(valid))
    return failure();
  auto ifOp = tg::IfOp::create(ctx.builder(), ctx.loc(), TypeRange(), *valid);
  int64_t numCarried = state.carried.size();
  SmallVector<std::optional<int64_t>> growth;
  SmallVector<Value> appended(numCarried);
  auto inspect = [&]() -> LogicalResult {
    if (hasCond && failed(readBodyCondition(ctx, body, it, why, cond)))
      return failure();
    for (int64_t j = 0; j < numCarried; ++j) {
      auto axis = carriedGrowth(
          ctx, body, j, cast<RankedTensorType>(old[j].getType()).getShape(),
          ex.shapeOf(body.output(1 + j).name()), state.carried[j]);
      if (failed(axis))
        return failure();
      growth.push_back(*axis);
      if (!*axis)
        continue;
      auto part = appendedPart(ctx, ex, body, j, **axis);
      if (failed(part))
        return failure();
      appended[j] = *part;
    }
    return success();
  };
  auto outs = importBranch(ctx, body, ifOp.getThenBlock(), inspect);
  if (failed(outs))
    return failure();
  SmallVector<Value> yielded[2];
  SmallVector<Type> types;
  {
    OpBuilder::InsertionGuard guard(ctx.builder());
    ctx.builder().setInsertionPointToEnd(&ifOp.getElseBlock());
    for (auto [k, out] : llvm::enumerate(ArrayRef(*outs).drop_front())) {
      if (out.bound)
        return ctx.fail("the body's output '" + body.output(1 + k).name() +
                        "' has a dimension of data-dependent length; with "
                        "a trip count known only at run time, the body's "
                        "outputs must have static shapes");
      bool carried = int64_t(k) < numCarried;
      Value then = carried && growth[k] ? appended[k] : out.value;
      auto type = cast<RankedTensorType>(then.getType());
      yielded[0].push_back(then);
      yielded[1].push_back(carried && !growth[k] ? old[k]
                                                 : ctx.splat(type, 0));
      types.push_back(type);
    }
    for (int b = 0; b < 2; ++b) {
      ctx.builder().setInsertionPointToEnd(&ifOp.getBlock(b == 0));
      tg::YieldOp::create(ctx.builder(), ctx.loc(), yielded[b]);
    }
  }
  tg::IfOp typed = withResultTypes(ctx, ifOp, types);
  for (auto [j, c] : llvm::enumerate(state.carried)) {
    FailureOr<Value> v = typed.getResult(j);
    if (growth[j])
      v = ctx.create<tg::ConcatOp>({old[j], *v},
                                   {ctx.i64Attr("axis", *growth[j])});
    if (failed(v))
      return failure();
    c.name = ex.bind(*v);
    c.shapes.emplace_back(cast<RankedTensorType>(v->getType()).getShape());
    if (growth[j])
      c.growAxis = growth[j];
  }
  for (auto [k, scan] : llvm::enumerate(state.scans))
    scan.push_back(ex.bind(typed.getResult(numCarried + k)));
  return success();
}

/// Sets output \p i of the node to \p name padded along \p dim with the
/// run-time \p length.
static LogicalResult setPaddedOutput(NodeContext &ctx, Expander &ex, unsigned i,
                                     StringRef name, int64_t dim,
                                     Value length) {
  if (!ctx.hasOutput(i))
    return success();
  if (failed(ex.setOutput(i, name)))
    return failure();
  return setPadded(ctx, *ctx.importer().lookup(ctx.node().output(i)),
                   BoundedDim{dim, length});
}

/// The outputs of a Loop with a run-time trip count, unrolled to its bound
/// over \p iterations iterations: a grown carried value has the length it
/// had after `count` iterations; the scan outputs `count` valid rows.
static LogicalResult
setRunTimeLoopOutputs(NodeContext &ctx, Expander &ex, const RunTimeTrips &trips,
                      int64_t iterations, ArrayRef<CarriedValue> carried,
                      ArrayRef<SmallVector<std::string>> scans) {
  Type i64 = IntegerType::get(ctx.context(), 64);
  Value count = trips.count;
  if (iterations < trips.bound) { // the body's condition stopped it
    auto c = lengthOp(ctx, LengthOp::Min, count,
                      ctx.scalar(i64, double(iterations)));
    if (failed(c))
      return failure();
    count = *c;
  }
  for (auto [j, c] : llvm::enumerate(carried)) {
    if (!c.growAxis) {
      if (failed(ex.setOutput(j, c.name)))
        return failure();
      continue;
    }
    // The length after `count` iterations: sizes[count].
    SmallVector<int64_t> sizes;
    bool identity = true;
    for (auto [k, shape] : llvm::enumerate(c.shapes)) {
      sizes.push_back(shape[*c.growAxis]);
      identity &= sizes.back() == int64_t(k);
    }
    Value length = count;
    if (!identity) {
      auto at = ex.emit("Gather", {ex.ints(sizes), ex.bind(count)});
      auto v = failed(at) ? FailureOr<Value>(failure()) : ex.valueOf(*at);
      if (failed(v))
        return failure();
      length = *v;
    }
    if (failed(setPaddedOutput(ctx, ex, j, c.name, *c.growAxis, length)))
      return failure();
  }
  for (auto [k, scan] : llvm::enumerate(scans)) {
    unsigned i = carried.size() + k;
    if (!ctx.hasOutput(i))
      continue;
    if (scan.empty())
      return ctx.fail("the loop runs no iteration, so its scan output " +
                      Twine(k) + " has no known shape");
    auto v = ex.stack(scan, 0);
    if (failed(v) || failed(setPaddedOutput(ctx, ex, i, *v, 0, count)))
      return failure();
  }
  return success();
}

/// The trip count M (input 0): known at import time, or a tracked length
/// (RunTimeLengths.cpp) whose upper bound the loop is unrolled to.
static LogicalResult readTripCount(NodeContext &ctx, StringRef why,
                                   std::optional<int64_t> &tripCount,
                                   std::optional<RunTimeTrips> &runTime) {
  if (!ctx.hasInput(0))
    return success();
  if (!ctx.known(0)) {
    auto tracked = trackedScalar(ctx, 0);
    if (failed(tracked))
      return failure();
    if (*tracked) {
      auto count = runTimeElement(ctx, 0, **tracked, 0);
      if (failed(count))
        return failure();
      runTime = RunTimeTrips{std::max<int64_t>((*tracked)->upper, 0), *count};
      tripCount = runTime->bound;
      return success();
    }
  }
  auto m = knownScalar(ctx, 0, "the trip count M", why);
  if (failed(m))
    return failure();
  tripCount = static_cast<int64_t>(*m);
  return success();
}

static LogicalResult importLoop(NodeContext &ctx) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return failure();
  const StringRef why = "Loom unrolls loops whose trip count and "
                        "conditions are known at import time (or whose trip "
                        "count is a length of data-dependent value with a "
                        "static bound)";
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
  std::optional<RunTimeTrips> runTime;
  if (failed(readTripCount(ctx, why, tripCount, runTime)))
    return failure();
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
  LoopState state;
  for (int64_t j = 0; j < numCarried; ++j) {
    std::string name = ctx.node().input(2 + j);
    ArrayRef<int64_t> shape = ex.shapeOf(name);
    state.carried.push_back(
        {name, {SmallVector<int64_t>(shape)}, std::nullopt});
  }
  state.scans.resize(numScan);
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
      if (failed(ex.alias(body->input(2 + j).name(), state.carried[j].name)))
        return failure();
    if (runTime) {
      if (failed(guardedIteration(ctx, ex, *body, it, runTime->count, why,
                                  hasCond, cond, state)))
        return failure();
      continue;
    }
    if (failed(ctx.importer().importSubgraph(*body)) ||
        (hasCond && failed(readBodyCondition(ctx, *body, it, why, cond))))
      return failure();
    for (int64_t j = 0; j < numCarried; ++j) {
      auto s = ex.snapshot(body->output(1 + j).name());
      if (failed(s))
        return failure();
      state.carried[j].name = *s;
    }
    for (int64_t k = 0; k < numScan; ++k) {
      auto s = ex.snapshot(body->output(1 + numCarried + k).name());
      if (failed(s))
        return failure();
      state.scans[k].push_back(*s);
    }
  }
  if (runTime)
    return setRunTimeLoopOutputs(ctx, ex, *runTime, it, state.carried,
                                 state.scans);
  for (int64_t j = 0; j < numCarried; ++j)
    if (failed(ex.setOutput(j, state.carried[j].name)))
      return failure();
  for (int64_t k = 0; k < numScan; ++k) {
    if (!ctx.hasOutput(numCarried + k))
      continue;
    if (state.scans[k].empty())
      return ctx.fail("the loop runs no iteration, so its scan output " +
                      Twine(k) + " has no known shape");
    auto v = ex.stack(state.scans[k], 0);
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
