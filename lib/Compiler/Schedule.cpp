//===- Schedule.cpp - The host program of a compiled entry ----------------===//
//
// Part of Loom. See Schedule.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Schedule.h"

#include "loom/Compiler/Backend.h"
#include "loom/Compiler/StridedView.h"
#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Dialect/TG/IR/SignatureNames.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Support/StableSort.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
namespace art = loom::artifact;

namespace {

std::string dtypeName(Type type) {
  auto kind = tg::elemKindOf(type);
  return kind ? elementTypeInfo(*kind).mlirName.str() : std::string("?");
}

/// Bytes of a dense tensor (i1 is one byte per element).
int64_t bytesOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

class ScheduleBuilder {
public:
  ScheduleBuilder(func::FuncOp fn, StringRef prefix,
                  const BackendRegistry &backends,
                  const ScheduleOptions &options)
      : fn(fn), prefix(prefix), backends(backends), options(options) {}

  FailureOr<EntrySchedule> run();

private:
  func::FuncOp fn;
  StringRef prefix;
  const BackendRegistry &backends;
  EntrySchedule entry;
  llvm::DenseMap<Value, int64_t> bufferOf;
  /// Fragment results that write straight into an output buffer.
  llvm::DenseMap<Value, int64_t> outputStorage;
  llvm::StringMap<int64_t> weightBuffer;
  unsigned kernels = 0;
  ScheduleOptions options;
  /// Concatenations and splits in place: per group (by a member's id) each member
  /// buffer's byte offset in the group, and each member's group.
  std::map<int64_t, std::map<int64_t, int64_t>> groups;
  llvm::DenseMap<int64_t, int64_t> groupOf;
  /// The group members no step writes (concatenation and split results).
  llvm::DenseSet<int64_t> views;
  /// Views folded into matrix products (docs/Compiler.md, "Views folded
  /// into matrix products"): a transpose, slice or reshape fragment not
  /// computed where it stands, its result (or a tg.reshape of it) a strided
  /// view of buffer `root`; computed by `fragment` at its first reader
  /// that cannot take the view (materialize).
  struct PendingView {
    int64_t root;
    StridedView view;
    tg::FragmentOp fragment;
  };
  llvm::DenseMap<Value, PendingView> pending;
  /// View fragments whose result a matrix product before them wrote
  /// through a view: the result's buffer.
  llvm::DenseMap<Operation *, int64_t> prewritten;

  int64_t addBuffer(Buffer b) {
    entry.buffers.push_back(std::move(b));
    return entry.buffers.size() - 1;
  }
  void describeSignature();
  void chooseOutputStorage(func::ReturnOp ret);
  LogicalResult scheduleOp(Operation &op);
  LogicalResult scheduleFragment(tg::FragmentOp fragment);
  LogicalResult scheduleIf(tg::IfOp op);
  FailureOr<bool> lowerLibrary(tg::FragmentOp fragment,
                               const Backend &backend,
                               const LibraryCall &call, Step &step,
                               const StridedView *dstView);
  bool readByViewTakers(Value v);
  void addResultBuffers(tg::FragmentOp fragment);
  art::KernelStep kernelStep(tg::FragmentOp fragment);
  bool deferView(tg::FragmentOp fragment);
  void materialize(Value v);
  std::optional<std::pair<tg::FragmentOp, StridedView>>
  writableView(tg::FragmentOp fragment);
  void scheduleReturn(func::ReturnOp ret);
  int64_t tiedInPlace(tg::FragmentOp fragment);
  void computeLiveness();
  bool readsPlain(Value v) const;
  bool placeConcatInPlace(tg::FragmentOp fragment);
  bool placeSplitInPlace(tg::FragmentOp fragment);
  bool placeSliceInPlace(tg::FragmentOp fragment);
  bool placePiecesInPlace(tg::FragmentOp fragment, int64_t start);
  bool formGroup(std::map<int64_t, int64_t> frame, int64_t leader,
                 ArrayRef<int64_t> newViews);
  void placeGroups();
  void aliasSums();
};


void ScheduleBuilder::describeSignature() {
  entry.name = fn.getName().str();
  if (auto rank = fn->getAttrOfType<IntegerAttr>("tg.runs_on_rank"))
    entry.rank = rank.getInt();
  if (auto period = fn->getAttrOfType<IntegerAttr>("tg.rank_period"))
    entry.rankPeriod = period.getInt();
  if (auto count = fn->getAttrOfType<IntegerAttr>("tg.rank_count"))
    entry.rankCount = count.getInt();
  FunctionType type = fn.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto tensor = cast<RankedTensorType>(t);
    entry.inputs.push_back({tg::signatureName(fn.getArgAttrDict(i), "arg", i),
                            dtypeName(tensor), tensor.getShape().vec(),
                            bytesOf(tensor), std::nullopt});
    Buffer b;
    b.record.kind = art::BufferKind::Input;
    b.record.index = i;
    bufferOf[fn.getArgument(i)] = addBuffer(b);
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    auto tensor = cast<RankedTensorType>(t);
    entry.outputs.push_back(
        {tg::signatureName(fn.getResultAttrDict(i), "result", i),
         dtypeName(tensor), tensor.getShape().vec(), bytesOf(tensor),
         std::nullopt});
    if (auto bound = tg::getResultBound(fn, i))
      entry.outputs.back().bound =
          art::OutputBound{bound->dim, int64_t(bound->lengthResult)};
    if (auto tied = tg::getTiedArgument(fn, i))
      entry.outputs.back().tiedInput = int64_t(*tied);
  }
}

/// A returned value that a fragment computes (through reshapes) is written
/// straight into its output buffer; the others are copied at the end. A
/// tied output has no buffer of its own: its argument's memory is it
/// (tiedInPlace, scheduleReturn).
void ScheduleBuilder::chooseOutputStorage(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (tg::getTiedArgument(fn, i))
      continue;
    Value root = v;
    while (auto reshape = root.getDefiningOp<tg::ReshapeOp>())
      root = reshape.getInput();
    if (!root.getDefiningOp<tg::FragmentOp>() || outputStorage.count(root))
      continue;
    outputStorage[root] = i;
  }
}

LogicalResult ScheduleBuilder::scheduleOp(Operation &op) {
  if (auto weight = dyn_cast<tg::WeightOp>(op)) {
    auto [it, inserted] = weightBuffer.try_emplace(weight.getName(), 0);
    if (inserted) {
      Buffer b;
      b.record.kind = art::BufferKind::Weight;
      b.record.weight = weight.getName().str();
      it->second = addBuffer(b);
      entry.weights.push_back(b.record.weight);
    }
    bufferOf[weight.getResult()] = it->second;
    return success();
  }
  if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
    Buffer b;
    b.record.kind = art::BufferKind::Weight;
    b.record.weight = ("__loom_" + fn.getName() + "_constant_" +
                       Twine(entry.constants.size()))
                          .str();
    entry.constants.push_back({b.record.weight, constant});
    bufferOf[constant.getResult()] = addBuffer(b);
    return success();
  }
  if (auto reshape = dyn_cast<tg::ReshapeOp>(op)) {
    if (auto it = pending.find(reshape.getInput()); it != pending.end()) {
      PendingView p = it->second;
      if (p.view.reshape(cast<ShapedType>(reshape.getType()).getShape())) {
        pending.try_emplace(reshape.getResult(), std::move(p));
        return success();
      }
      materialize(reshape.getInput());
    }
    bufferOf[reshape.getResult()] = bufferOf.lookup(reshape.getInput());
    return success();
  }
  if (auto fragment = dyn_cast<tg::FragmentOp>(op))
    return scheduleFragment(fragment);
  // Branches and the return read buffers (a branch's regions too).
  op.walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      materialize(v);
  });
  if (auto ifOp = dyn_cast<tg::IfOp>(op))
    return scheduleIf(ifOp);
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    scheduleReturn(ret);
    return success();
  }
  return op.emitOpError("cannot be scheduled: the CPU compiler schedules "
                        "tg.fragment, tg.if, tg.weight, tg.constant and "
                        "tg.reshape (run --tg-form-fragments first)");
}

/// tg.if: a branch step that jumps to the else steps when the condition is
/// false, the then steps, a jump past the else steps, the else steps. Each
/// region ends by copying what it yields into the op's result buffers.
/// Jumps only go forward, so the steps that run are a subsequence of the
/// list, and liveness computed over the list holds for every path.
LogicalResult ScheduleBuilder::scheduleIf(tg::IfOp op) {
  int64_t branchIndex = entry.steps.size();
  SmallVector<int64_t> results;
  for (Value r : op.getResults()) {
    Buffer b;
    b.record.kind = art::BufferKind::Arena;
    b.record.bytes = bytesOf(r.getType());
    b.firstStep = b.lastStep = branchIndex;
    results.push_back(addBuffer(b));
    bufferOf[r] = results.back();
  }
  Step branch;
  branch.record = art::BranchStep{bufferOf.lookup(op.getCondition()), 0};
  entry.steps.push_back(std::move(branch));
  int64_t jumpIndex = -1;
  for (bool taken : {true, false}) {
    if (!taken) {
      jumpIndex = entry.steps.size();
      Step jump;
      jump.record = art::JumpStep{};
      entry.steps.push_back(std::move(jump));
      entry.steps[branchIndex].record.getIf<art::BranchStep>()->elseStep =
          int64_t(entry.steps.size());
    }
    Block &block = op.getBlock(taken);
    for (Operation &inner : block.without_terminator())
      if (failed(scheduleOp(inner)))
        return failure();
    for (auto [v, dst] :
         llvm::zip(block.getTerminator()->getOperands(), results)) {
      Step copy;
      copy.record = art::CopyStep{bufferOf.lookup(v), dst};
      entry.steps.push_back(std::move(copy));
    }
  }
  entry.steps[jumpIndex].record.getIf<art::JumpStep>()->to =
      int64_t(entry.steps.size());
  return success();
}

/// The ops of \p fragment when it computes its one result from its one
/// input by a chain of tg.transpose, tg.slice (steps of 1 or more) and
/// tg.reshape ops, or only transposes and reshapes when \p bijective; else
/// none.
static SmallVector<Operation *> viewOps(tg::FragmentOp fragment,
                                        bool bijective) {
  if (fragment.getInputs().size() != 1 || fragment.getNumResults() != 1)
    return {};
  Block &body = fragment.getBody().front();
  SmallVector<Operation *> ops;
  Value last = body.getArgument(0);
  for (Operation &op : body.without_terminator()) {
    auto slice = dyn_cast<tg::SliceOp>(op);
    bool moves = isa<tg::TransposeOp, tg::ReshapeOp>(op) ||
                 (slice && !bijective &&
                  llvm::all_of(slice.getStrides().value_or(ArrayRef<int64_t>{}),
                               [](int64_t step) { return step >= 1; }));
    if (!moves || op.getNumOperands() != 1 || op.getOperand(0) != last)
      return {};
    ops.push_back(&op);
    last = op.getResult(0);
  }
  if (ops.empty() || body.getTerminator()->getOperands() != ValueRange(last))
    return {};
  return ops;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// \p view (of \p fragment's input) through \p fragment's view ops.
static bool applyViewOps(ArrayRef<Operation *> ops, StridedView &view) {
  for (Operation *op : ops) {
    if (auto transpose = dyn_cast<tg::TransposeOp>(op)) {
      view.transpose(transpose.getPerm());
    } else if (auto slice = dyn_cast<tg::SliceOp>(op)) {
      SmallVector<int64_t> steps(shapeOf(slice.getResult()).size(), 1);
      if (auto given = slice.getStrides())
        steps.assign(given->begin(), given->end());
      if (!view.slice(slice.getStarts(), steps, shapeOf(slice.getResult())))
        return false;
    } else if (!view.reshape(shapeOf(op->getResult(0)))) {
      return false;
    }
  }
  return true;
}

/// Whether every reader of \p v (through tg.reshape) is a fragment of the
/// entry's block that takes it as a view: a library step whose backend
/// takes views, or a view fragment all of whose readers do; and there is
/// one.
bool ScheduleBuilder::readByViewTakers(Value v) {
  Block *top = &fn.getBody().front();
  bool any = false;
  for (Operation *user : v.getUsers()) {
    if (user->getBlock() != top)
      return false;
    if (auto reshape = dyn_cast<tg::ReshapeOp>(user)) {
      if (!readByViewTakers(reshape.getResult()))
        return false;
      any = true;
      continue;
    }
    auto fragment = dyn_cast<tg::FragmentOp>(user);
    const Backend *backend =
        fragment ? backends.lookup(fragment.getBackend()) : nullptr;
    if (!backend)
      return false;
    if (backend->generatesCode()) {
      if (viewOps(fragment, false).empty() ||
          outputStorage.count(fragment.getResult(0)) ||
          !readByViewTakers(fragment.getResult(0)))
        return false;
    } else {
      std::optional<LibraryCall> call = backends.matchFragment(fragment);
      if (!call || !backend->takesViews(*call))
        return false;
    }
    any = true;
  }
  return any;
}

/// A view fragment whose readers all take views is not computed where it
/// stands: its result becomes a pending view of its input's buffer.
bool ScheduleBuilder::deferView(tg::FragmentOp fragment) {
  SmallVector<Operation *> ops = viewOps(fragment, false);
  if (ops.empty() || fragment->getBlock() != &fn.getBody().front() ||
      outputStorage.count(fragment.getResult(0)) ||
      !readByViewTakers(fragment.getResult(0)))
    return false;
  Value in = fragment.getInputs()[0];
  PendingView p{bufferOf.lookup(in), StridedView::dense(shapeOf(in)),
                fragment};
  if (auto it = pending.find(in); it != pending.end()) {
    p.root = it->second.root;
    p.view = it->second.view;
  } else if (!bufferOf.count(in)) {
    return false;
  }
  if (!applyViewOps(ops, p.view))
    return false;
  pending.try_emplace(fragment.getResult(0), std::move(p));
  return true;
}

/// Computes the pending view \p v into a buffer (its fragment's step, after
/// those of the views it reads), for a reader that cannot take the view.
void ScheduleBuilder::materialize(Value v) {
  auto it = pending.find(v);
  if (it == pending.end())
    return;
  tg::FragmentOp fragment = it->second.fragment;
  pending.erase(it);
  Value result = fragment.getResult(0);
  if (!bufferOf.count(result)) {
    materialize(fragment.getInputs()[0]);
    pending.erase(result);
    addResultBuffers(fragment);
    Step step;
    step.fragment = fragment;
    step.record = kernelStep(fragment);
    entry.steps.push_back(std::move(step));
  }
  bufferOf[v] = bufferOf.lookup(result);
}

/// The view fragment that alone reads the result of library fragment \p
/// fragment (through tg.reshape), when it only transposes and reshapes (a
/// matrix product's heads merged back), and the result as a strided view of
/// that fragment's result: the product may write it there, and the
/// fragment is not computed.
std::optional<std::pair<tg::FragmentOp, StridedView>>
ScheduleBuilder::writableView(tg::FragmentOp fragment) {
  if (fragment.getNumResults() != 1 ||
      outputStorage.count(fragment.getResult(0)))
    return std::nullopt;
  Value v = fragment.getResult(0);
  while (v.hasOneUse()) {
    Operation *user = *v.user_begin();
    if (user->getBlock() != fragment->getBlock())
      return std::nullopt;
    if (auto reshape = dyn_cast<tg::ReshapeOp>(user)) {
      v = reshape.getResult();
      continue;
    }
    auto reader = dyn_cast<tg::FragmentOp>(user);
    const Backend *backend =
        reader ? backends.lookup(reader.getBackend()) : nullptr;
    if (!backend || !backend->generatesCode() ||
        outputStorage.count(reader.getResult(0)))
      return std::nullopt;
    SmallVector<Operation *> ops = viewOps(reader, true);
    if (ops.empty())
      return std::nullopt;
    // Undo the ops from the reader's dense result back to its input.
    StridedView view = StridedView::dense(shapeOf(reader.getResult(0)));
    for (Operation *op : llvm::reverse(ops)) {
      if (auto transpose = dyn_cast<tg::TransposeOp>(op)) {
        SmallVector<int64_t> inverse(transpose.getPerm().size());
        for (auto [i, p] : llvm::enumerate(transpose.getPerm()))
          inverse[p] = i;
        view.transpose(inverse);
      } else if (!view.reshape(shapeOf(op->getOperand(0)))) {
        return std::nullopt;
      }
    }
    if (!view.reshape(shapeOf(fragment.getResult(0))))
      return std::nullopt;
    return std::make_pair(reader, std::move(view));
  }
  return std::nullopt;
}

void ScheduleBuilder::addResultBuffers(tg::FragmentOp fragment) {
  int64_t stepIndex = entry.steps.size();
  for (Value result : fragment.getResults()) {
    Buffer b;
    auto out = outputStorage.find(result);
    if (out != outputStorage.end()) {
      b.record.kind = art::BufferKind::Output;
      b.record.index = out->second;
    } else {
      b.record.kind = art::BufferKind::Arena;
      b.record.bytes = bytesOf(result.getType());
      b.firstStep = b.lastStep = stepIndex;
    }
    bufferOf[result] = addBuffer(b);
  }
}

LogicalResult ScheduleBuilder::scheduleFragment(tg::FragmentOp fragment) {
  if (auto it = prewritten.find(fragment); it != prewritten.end()) {
    bufferOf[fragment.getResult(0)] = it->second;
    return success();
  }
  const Backend *backend = backends.lookup(fragment.getBackend());
  if (!backend)
    return fragment.emitOpError("is placed on '")
           << fragment.getBackend() << "', which is not a registered backend";
  if (backend->generatesCode() && deferView(fragment))
    return success();
  std::optional<LibraryCall> call;
  if (!backend->generatesCode()) {
    call = backends.matchFragment(fragment);
    if (!call)
      return fragment.emitOpError("is placed on ")
             << backend->name()
             << " but its body is not one fragment that backend computes";
  }
  bool views = call && backend->takesViews(*call);
  if (!views)
    for (Value in : fragment.getInputs())
      materialize(in);
  std::optional<std::pair<tg::FragmentOp, StridedView>> dst;
  if (views)
    dst = writableView(fragment);
  if (dst) {
    Buffer b;
    b.record.kind = art::BufferKind::Arena;
    b.record.bytes = bytesOf(dst->first.getResult(0).getType());
    b.firstStep = b.lastStep = entry.steps.size();
    bufferOf[fragment.getResult(0)] = addBuffer(b);
  } else if (int64_t state = tiedInPlace(fragment); state != -1) {
    bufferOf[fragment.getResult(0)] = state;
  } else {
    addResultBuffers(fragment);
  }
  if (options.concatInPlace &&
      (placeConcatInPlace(fragment) || placeSplitInPlace(fragment) ||
       placeSliceInPlace(fragment)))
    return success();
  // Results without elements (an ONNX slice may be empty) need no step.
  if (llvm::all_of(fragment.getResultTypes(), [](Type t) {
        return cast<ShapedType>(t).getNumElements() == 0;
      }))
    return success();
  Step step;
  step.fragment = fragment;
  if (call) {
    FailureOr<bool> lowered = lowerLibrary(
        fragment, *backend, *call, step, dst ? &dst->second : nullptr);
    if (succeeded(lowered) && !*lowered) {
      // The library cannot read or write these views: compute them.
      // (A result buffer made for the view keeps its size: the view's
      // result has the product's elements.)
      for (Value in : fragment.getInputs())
        materialize(in);
      dst.reset();
      lowered = lowerLibrary(fragment, *backend, *call, step, nullptr);
    }
    if (failed(lowered))
      return failure();
    if (dst)
      prewritten[dst->first] = bufferOf.lookup(fragment.getResult(0));
  } else {
    step.record = kernelStep(fragment);
  }
  entry.steps.push_back(std::move(step));
  return success();
}

/// Whether generated fragment \p fragment is elementwise over one shape
/// (art::KernelStep::elementwise): its inputs and results f32 tensors of its
/// first result's shape or of one element, every op of its body elementwise
/// (tg::Elementwise) with operands and results of that shape or of one
/// element, or a constant of one value (a splat: an inlined constant of
/// several values is read row-major, whatever layout the arguments get).
static bool isElementwiseKernel(tg::FragmentOp fragment) {
  if (fragment.getNumResults() == 0)
    return false;
  auto full = cast<ShapedType>(fragment.getResult(0).getType());
  if (!full.hasStaticShape() || full.getNumElements() <= 1)
    return false;
  auto fits = [&](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && shaped.hasStaticShape() &&
           (shaped.getShape() == full.getShape() ||
            shaped.getNumElements() == 1);
  };
  auto fitsF32 = [&](Type t) {
    return fits(t) && cast<ShapedType>(t).getElementType().isF32();
  };
  if (!llvm::all_of(fragment.getInputs().getTypes(), fitsF32) ||
      !llvm::all_of(fragment.getResultTypes(), fitsF32))
    return false;
  for (Operation &op : fragment.getBody().front()) {
    if (isa<tg::YieldOp>(op))
      continue;
    if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
      if (!constant.getValue().isSplat())
        return false;
      continue;
    }
    if (!op.hasTrait<tg::Elementwise>() ||
        !llvm::all_of(op.getOperandTypes(), fits) ||
        !llvm::all_of(op.getResultTypes(), fits))
      return false;
  }
  return true;
}

/// The next kernel step, of generated fragment \p fragment on its buffers.
art::KernelStep ScheduleBuilder::kernelStep(tg::FragmentOp fragment) {
  art::KernelStep kernel;
  kernel.name = (prefix + Twine(kernels++)).str();
  for (Value v : fragment.getInputs())
    kernel.args.push_back(bufferOf.lookup(v));
  for (Value v : fragment.getResults())
    kernel.args.push_back(bufferOf.lookup(v));
  kernel.elementwise = isElementwiseKernel(fragment);
  return kernel;
}

/// Whether every element of \p c's f32 value is a TF32 value (its 13 low
/// fraction bits zero, or an infinity or NaN).
static bool holdsOnlyTF32(tg::ConstantOp c) {
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !dense.getElementType().isF32())
    return false;
  auto isTF32 = [](uint32_t bits) {
    return (bits & 0x1fff) == 0 || (bits & 0x7f800000) == 0x7f800000;
  };
  ArrayRef<char> raw = dense.getRawData();
  for (size_t i = 0; i + 4 <= raw.size(); i += 4) {
    uint32_t bits;
    std::memcpy(&bits, raw.data() + i, 4);
    if (!isTF32(bits))
      return false;
  }
  return true;
}

/// Whether \p v holds TF32 values: a tg.round_tf32's result or a constant
/// --tg-fold-weights made of one (tg::holdsTF32Values; its values checked:
/// a constant that only claims it runs in f32, which is exact too),
/// directly, as the result of a fragment whose body yields one, or through
/// ops that only move data.
static bool isRoundedToTF32(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (tg::holdsTF32Values(v))
      return !isa<tg::ConstantOp>(def) ||
             holdsOnlyTF32(cast<tg::ConstantOp>(def));
    if (auto fragment = dyn_cast<tg::FragmentOp>(def)) {
      Operation *yield = fragment.getBody().front().getTerminator();
      v = yield->getOperand(cast<OpResult>(v).getResultNumber());
      continue;
    }
    if (!def->hasTrait<tg::ComputesNothing>() || def->getNumOperands() != 1)
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// The library step of \p call: true when lowered, false when it was
/// given views (pending inputs, \p dstView) that its backend cannot take.
FailureOr<bool> ScheduleBuilder::lowerLibrary(tg::FragmentOp fragment,
                                              const Backend &backend,
                                              const LibraryCall &call,
                                              Step &step,
                                              const StridedView *dstView) {
  auto pendingInput = [&](Value v) -> const PendingView * {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return nullptr;
    auto it = pending.find(fragment.getInputs()[arg.getArgNumber()]);
    return it == pending.end() ? nullptr : &it->second;
  };
  // Body values are block arguments (the fragment's inputs) or the results
  // of its last op (the fragment's, in order).
  auto buffer = [&](Value v) -> int64_t {
    if (const PendingView *p = pendingInput(v))
      return p->root;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return bufferOf.lookup(fragment.getInputs()[arg.getArgNumber()]);
    auto result = cast<OpResult>(v);
    assert(result.getOwner() == call.ops.back() && "not a fragment operand");
    return bufferOf.lookup(fragment.getResult(result.getResultNumber()));
  };
  auto isWeight = [&](Value v) {
    return entry.buffers[buffer(v)].kind() == art::BufferKind::Weight;
  };
  auto view = [&](Value v) -> const StridedView * {
    if (isa<BlockArgument>(v)) {
      const PendingView *p = pendingInput(v);
      return p ? &p->view : nullptr;
    }
    return dstView;
  };
  bool anyView = dstView || llvm::any_of(fragment.getInputs(), [&](Value in) {
                   return pending.count(in) != 0;
                 });
  auto roundedToTF32 = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && isRoundedToTF32(fragment.getInputs()[arg.getArgNumber()]);
  };
  StepOperands operands{buffer, isWeight};
  operands.roundedToTF32 = roundedToTF32;
  if (anyView)
    operands.view = view;
  LibraryStep lowered;
  if (failed(backend.lower(call, operands, lowered)))
    return anyView ? FailureOr<bool>(false) : FailureOr<bool>(failure());
  step.record = std::move(lowered.record);
  return true;
}

/// Copies each returned value into its output buffer unless a step wrote it
/// there. A tied output's value goes into its argument's buffer, after the
/// other outputs (one of which may be the argument's old value).
void ScheduleBuilder::scheduleReturn(func::ReturnOp ret) {
  auto copy = [&](int64_t src, int64_t dst) {
    if (src == dst)
      return;
    Step step;
    step.record = art::CopyStep{src, dst};
    entry.steps.push_back(std::move(step));
  };
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (tg::getTiedArgument(fn, i))
      continue;
    int64_t src = bufferOf.lookup(v);
    const Buffer &b = entry.buffers[src];
    if (b.kind() == art::BufferKind::Output && b.record.index == int64_t(i))
      continue;
    Buffer out;
    out.record.kind = art::BufferKind::Output;
    out.record.index = i;
    copy(src, addBuffer(out));
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (auto arg = tg::getTiedArgument(fn, i))
      copy(bufferOf.lookup(v), bufferOf.lookup(fn.getArgument(*arg)));
}

/// The last step that reads each arena buffer.
void ScheduleBuilder::computeLiveness() {
  auto use = [&](int64_t id, int64_t stepIndex) {
    Buffer &b = entry.buffers[id];
    if (b.kind() == art::BufferKind::Arena)
      b.lastStep = std::max(b.lastStep, stepIndex);
  };
  for (auto [i, step] : llvm::enumerate(entry.steps))
    for (const art::Operand &o : art::operands(step.record))
      use(o.buffer, i);
}

/// The op \p fragment computes, when it is one \p OpT of the fragment's
/// inputs whose results the fragment returns in order, and nothing else.
template <typename OpT> static OpT loneOp(tg::FragmentOp fragment) {
  Block &body = fragment.getBody().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  auto op = dyn_cast<OpT>(body.front());
  if (!op || ValueRange(body.getTerminator()->getOperands()) !=
                 ValueRange(op->getResults()))
    return nullptr;
  for (Value in : op->getOperands())
    if (!isa<BlockArgument>(in))
      return nullptr;
  return op;
}

/// The buffer of the tied argument that library fragment \p fragment
/// updates in place, or -1. In place when the fragment is one
/// tg.update_slice whose base is an argument tied to the result the
/// fragment's value is returned as, and the argument has no other reader
/// (which could run after the update). Otherwise the update writes a buffer
/// of its own, copied into the argument's at the end (scheduleReturn), and
/// a remark says why.
int64_t ScheduleBuilder::tiedInPlace(tg::FragmentOp fragment) {
  auto update = loneOp<tg::UpdateSliceOp>(fragment);
  if (!update)
    return -1;
  Value base = fragment.getInputs()[cast<BlockArgument>(update.getBase())
                                        .getArgNumber()];
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg || arg.getOwner() != &fn.getBody().front())
    return -1;
  std::optional<unsigned> tied = tg::getTiedResult(fn, arg.getArgNumber());
  if (!tied)
    return -1;
  if (!options.stateInPlace) {
    fragment.emitRemark() << "argument " << arg.getArgNumber()
                          << " is updated in a copy, copied back at the end "
                             "(--state-in-place=false)";
    return -1;
  }
  Value result = fragment.getResult(0);
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (ret.getOperand(*tied) != result) {
    fragment.emitRemark() << "argument " << arg.getArgNumber()
                          << " is updated here but the function returns "
                             "another value as its tied result "
                          << *tied << ": the update is not made in place";
    return -1;
  }
  if (!base.hasOneUse()) {
    fragment.emitRemark() << "argument " << arg.getArgNumber()
                          << " has readers besides its update: the update "
                             "writes a copy, copied back at the end";
    return -1;
  }
  return bufferOf.lookup(base);
}

/// Whether every dimension of \p type before \p axis is 1 (each range
/// along the axis is then contiguous).
static bool unitBefore(RankedTensorType type, int64_t axis) {
  if (axis < 0)
    axis += type.getRank();
  return llvm::all_of(type.getShape().take_front(axis),
                      [](int64_t d) { return d == 1; });
}

/// Whether a step reading \p v (through reshapes) reads it in the plain
/// layout: generated kernels, copies, returns. Library steps may keep
/// their operands in a layout of their own (the CPU runtime's oneDNN layout
/// plan: docs/Runtime.md).
bool ScheduleBuilder::readsPlain(Value v) const {
  for (Operation *user : v.getUsers()) {
    if (auto reshape = dyn_cast<tg::ReshapeOp>(user)) {
      if (readsPlain(reshape.getResult()))
        return true;
      continue;
    }
    auto fragment = dyn_cast<tg::FragmentOp>(user);
    if (!fragment)
      return true;
    const Backend *backend = backends.lookup(fragment.getBackend());
    if (!backend || backend->generatesCode())
      return true;
  }
  return false;
}

/// A fragment that is one concatenation along an axis with only unit
/// dimensions before it (each operand is then a contiguous range of the
/// result) gets no step when every operand can be written in place: each
/// operand's arena buffer becomes its range of the result's buffer. Buffers
/// joined this way form a group with one offset each, placed together by
/// the memory plan; a concatenation whose operand is already in a group
/// (DenseNet's dense blocks concatenate the same tensors again and again,
/// each time with one more) joins the result to it at the matching offset.
/// Buffers in a group keep the plain layout, so a library concatenation
/// whose result only library steps read (Inception's and SqueezeNet's,
/// between oneDNN convolutions in their blocked layout) stays a step: in
/// place, each of its readers would reorder it. Refused (the concatenation
/// stays a step) where an operand is not an arena buffer, appears twice, would start off the arena's alignment,
/// already sits in the result's group at another offset, or where two
/// buffers that steps write would overlap.
bool ScheduleBuilder::placeConcatInPlace(tg::FragmentOp fragment) {
  tg::ConcatOp concat = loneOp<tg::ConcatOp>(fragment);
  if (!concat)
    return false;
  const Backend *backend = backends.lookup(fragment.getBackend());
  if (!backend ||
      (!backend->generatesCode() && !readsPlain(fragment.getResult(0))))
    return false;
  if (!unitBefore(cast<RankedTensorType>(concat.getResult().getType()),
                  concat.getAxis()))
    return false;
  auto arena = [&](int64_t id) {
    return entry.buffers[id].kind() == art::BufferKind::Arena;
  };
  int64_t dst = bufferOf.lookup(fragment.getResult(0));
  if (!arena(dst))
    return false;
  // The group the result would join: every member at its offset from the
  // result's start.
  std::map<int64_t, int64_t> frame{{dst, 0}};
  int64_t offset = 0;
  for (Value in : concat.getInputs()) {
    int64_t id = bufferOf.lookup(
        fragment.getInputs()[cast<BlockArgument>(in).getArgNumber()]);
    if (!arena(id) || offset % kArenaAlignment != 0)
      return false;
    auto known = frame.find(id);
    if (known != frame.end()) {
      if (known->second != offset || !groupOf.count(id))
        return false; // an operand twice, or a group joined at two places
    } else if (auto g = groupOf.find(id); g != groupOf.end()) {
      const std::map<int64_t, int64_t> &members = groups[g->second];
      int64_t shift = offset - members.at(id);
      for (auto [member, at] : members)
        if (!frame.try_emplace(member, at + shift).second)
          return false;
    } else {
      frame[id] = offset;
    }
    offset += entry.buffers[id].record.bytes;
  }
  return formGroup(std::move(frame), dst, {dst});
}

/// A fragment that is one split along an axis with only unit dimensions
/// before it (each result is then a contiguous range of the operand) gets
/// no step: each result's arena buffer becomes its range of the operand's
/// buffer (placePiecesInPlace). A merged convolution or product followed by
/// the split of its result into the branches' pieces (tg-superopt's merges
/// of operators sharing an input) then costs no copy.
bool ScheduleBuilder::placeSplitInPlace(tg::FragmentOp fragment) {
  tg::SplitOp split = loneOp<tg::SplitOp>(fragment);
  return split &&
         unitBefore(cast<RankedTensorType>(split.getInput().getType()),
                    split.getAxis()) &&
         placePiecesInPlace(fragment, 0);
}

/// The byte offset of \p slice's result in its operand where that result
/// is one contiguous range of it: every dimension before the one axis the
/// slice narrows is 1, the axis's step is 1, every later dimension whole
/// (a channel range at batch 1: ShuffleNet's and CSP blocks' chunks). Else
/// nullopt.
static std::optional<int64_t> contiguousSliceOffset(tg::SliceOp slice) {
  auto in = cast<RankedTensorType>(slice.getInput().getType());
  ArrayRef<int64_t> out = shapeOf(slice.getResult());
  ArrayRef<int64_t> starts = slice.getStarts();
  int64_t rank = in.getRank(), axis = -1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t step = slice.getStrides() ? (*slice.getStrides())[d] : 1;
    if (out[d] == in.getDimSize(d) && starts[d] == 0)
      continue;
    if (axis != -1 || step != 1)
      return std::nullopt;
    axis = d;
  }
  if (axis == -1 || !unitBefore(in, axis))
    return std::nullopt;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= in.getDimSize(d);
  int64_t elementBytes =
      std::max<int64_t>(1, int64_t(in.getElementTypeBitWidth()) / 8);
  return starts[axis] * inner * elementBytes;
}

/// A fragment that is one slice whose result is a contiguous range of its
/// operand (contiguousSliceOffset) gets no step, as a split's pieces; not
/// where a concatenation reads the result: the slice's step then writes
/// its copy straight into the concatenation's range (placeConcatInPlace),
/// where a piece would sit in its operand's group and the concatenation
/// would become a step copying every operand (ShuffleNet's blocks,
/// concat(x1, branch(x2)) of the chunks x1, x2: 0.06 -> 0.39 ms of
/// concatenations a run for 0.29 of slices).
bool ScheduleBuilder::placeSliceInPlace(tg::FragmentOp fragment) {
  tg::SliceOp slice = loneOp<tg::SliceOp>(fragment);
  if (!slice || cast<ShapedType>(slice.getType()).getNumElements() == 0)
    return false;
  for (Operation *user : fragment.getResult(0).getUsers())
    if (auto reader = dyn_cast<tg::FragmentOp>(user);
        reader && loneOp<tg::ConcatOp>(reader))
      return false;
  std::optional<int64_t> offset = contiguousSliceOffset(slice);
  return offset && placePiecesInPlace(fragment, *offset);
}

/// \p fragment's results, one after the other from byte \p start of its
/// one operand's buffer, become those ranges of it: each result's arena
/// buffer joins the operand's group (a piece of a concatenation in place
/// or of another piece) or a new one, marked a piece (no step writes it).
/// Refused (the fragment stays a step) where the operand or a result is
/// not an arena buffer or a result would start off the arena's alignment.
bool ScheduleBuilder::placePiecesInPlace(tg::FragmentOp fragment,
                                         int64_t start) {
  auto arena = [&](int64_t id) {
    return entry.buffers[id].kind() == art::BufferKind::Arena;
  };
  int64_t src = bufferOf.lookup(fragment.getInputs()[0]);
  if (!arena(src))
    return false;
  std::map<int64_t, int64_t> frame{{src, 0}};
  int64_t leader = src;
  if (auto g = groupOf.find(src); g != groupOf.end()) {
    frame = groups[g->second];
    leader = g->second;
  }
  int64_t begin = frame.begin()->second;
  for (auto [member, at] : frame)
    begin = std::min(begin, at);
  int64_t offset = frame.at(src) + start;
  SmallVector<int64_t> pieces;
  for (Value result : fragment.getResults()) {
    int64_t id = bufferOf.lookup(result);
    if (!arena(id) || (offset - begin) % kArenaAlignment != 0)
      return false;
    frame[id] = offset;
    pieces.push_back(id);
    offset += entry.buffers[id].record.bytes;
  }
  if (!formGroup(std::move(frame), leader, pieces))
    return false;
  for (int64_t id : pieces)
    entry.buffers[id].splitPiece = true;
  return true;
}

/// Makes \p frame (each member buffer at its byte offset) the group led by
/// \p leader, \p newViews among the members no step writes; false (nothing
/// changed) where two buffers that steps write would overlap.
bool ScheduleBuilder::formGroup(std::map<int64_t, int64_t> frame,
                                int64_t leader, ArrayRef<int64_t> newViews) {
  SmallVector<std::pair<int64_t, int64_t>> written; // [begin, end)
  for (auto [member, at] : frame)
    if (!llvm::is_contained(newViews, member) && !views.count(member))
      written.push_back({at, at + entry.buffers[member].record.bytes});
  llvm::sort(written);
  for (size_t i = 1; i < written.size(); ++i)
    if (written[i].first < written[i - 1].second)
      return false;
  for (auto [member, at] : frame) {
    if (auto g = groupOf.find(member);
        g != groupOf.end() && g->second != leader)
      groups.erase(g->second);
    groupOf[member] = leader;
  }
  groups[leader] = std::move(frame);
  views.insert(newViews.begin(), newViews.end());
  return true;
}

/// Each group of concatenations in place becomes one arena reservation:
/// its member at the lowest offset is the root, spanning the group and
/// alive from the first member's write to the last member's read; the
/// others are aliases at their offsets from it.
void ScheduleBuilder::placeGroups() {
  for (auto &[leader, members] : groups) {
    int64_t begin = INT64_MAX, end = 0, root = -1;
    for (auto [member, at] : members) {
      if (at < begin)
        begin = at, root = member;
    }
    Buffer &r = entry.buffers[root];
    for (auto [member, at] : members) {
      Buffer &b = entry.buffers[member];
      end = std::max(end, at - begin + b.record.bytes);
      b.record.shared = true;
      r.firstStep = std::min(r.firstStep, b.firstStep);
      r.lastStep = std::max(r.lastStep, b.lastStep);
      if (member != root) {
        b.aliasOf = root;
        b.aliasOffset = at - begin;
      }
    }
    r.spanBytes = end;
  }
}

/// A library step whose residual sum (oneDNN's sum post-op accumulates
/// into the destination) is the last read of an arena buffer of the
/// result's size writes its result over that buffer, so the addend needs no
/// copy into the destination first (ResNet-50: 16 copies of up to 3.2 MB
/// per inference). Not where the step also reads the addend as another
/// operand (conv(x) + x), which it would overwrite while reading.
void ScheduleBuilder::aliasSums() {
  auto arena = [&](std::optional<int64_t> id) {
    return id && *id >= 0 && *id < int64_t(entry.buffers.size()) &&
           entry.buffers[*id].kind() == art::BufferKind::Arena;
  };
  for (auto [i, step] : llvm::enumerate(entry.steps)) {
    std::vector<art::Operand> operands = art::operands(step.record);
    auto role = [&](StringRef name) -> std::optional<int64_t> {
      for (const art::Operand &o : operands)
        if (o.role == name.str())
          return o.buffer;
      return std::nullopt;
    };
    std::optional<int64_t> sum = role("sum"), dst = role("dst");
    if (!arena(sum) || !arena(dst) || *sum == *dst ||
        entry.buffers[*sum].record.shared || entry.buffers[*dst].record.shared)
      continue;
    Buffer &s = entry.buffers[*sum], &d = entry.buffers[*dst];
    bool readElsewhere = llvm::any_of(operands, [&](const art::Operand &o) {
      return o.role != "sum" && o.role != "dst" && o.buffer == *sum;
    });
    if (readElsewhere || s.record.bytes != d.record.bytes ||
        s.lastStep != int64_t(i) ||
        d.firstStep != int64_t(i) || d.aliasOf != -1)
      continue;
    int64_t root = *sum;
    while (entry.buffers[root].aliasOf != -1)
      root = entry.buffers[root].aliasOf;
    d.aliasOf = root;
    Buffer &r = entry.buffers[root];
    r.lastStep = std::max(r.lastStep, d.lastStep);
  }
}

} // namespace

void compiler::planArena(EntrySchedule &entry) {
  auto record = [&](int64_t id) -> art::Buffer & {
    return entry.buffers[id].record;
  };
  SmallVector<int64_t> order;
  for (auto [id, b] : llvm::enumerate(entry.buffers))
    if (b.kind() == art::BufferKind::Arena) {
      entry.unplannedBytes += alignTo(b.record.bytes, kArenaAlignment);
      if (b.aliasOf == -1)
        order.push_back(id);
    }
  loom::stableSort(order, [&](int64_t a, int64_t b) {
    return entry.buffers[a].extent() > entry.buffers[b].extent();
  });
  SmallVector<int64_t> placed;
  for (int64_t id : order) {
    Buffer &b = entry.buffers[id];
    SmallVector<std::pair<int64_t, int64_t>> busy; // [begin, end)
    for (int64_t other : placed) {
      const Buffer &o = entry.buffers[other];
      if (o.firstStep <= b.lastStep && b.firstStep <= o.lastStep)
        busy.push_back({o.record.offset, o.record.offset + o.extent()});
    }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + b.extent() <= begin)
        break;
      offset = std::max(offset, alignTo(end, kArenaAlignment));
    }
    b.record.offset = offset;
    entry.arenaBytes = std::max(entry.arenaBytes, offset + b.extent());
    placed.push_back(id);
  }
  for (Buffer &b : entry.buffers)
    if (b.aliasOf != -1)
      b.record.offset = record(b.aliasOf).offset + b.aliasOffset;
  entry.arenaBytes = alignTo(entry.arenaBytes, kArenaAlignment);
}

namespace {

FailureOr<EntrySchedule> ScheduleBuilder::run() {
  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError("must have one block to be compiled");
  for (Type t :
       llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape() || !tg::elemKindOf(tensor))
      return fn.emitOpError("has a ")
             << t << " argument or result; compiled entries take and return "
             << "statically shaped tensors";
  }
  if (failed(tg::verifyResultBounds(fn)))
    return failure();
  describeSignature();
  chooseOutputStorage(cast<func::ReturnOp>(fn.getBody().front().back()));
  for (Operation &op : fn.getBody().front())
    if (failed(scheduleOp(op)))
      return failure();
  computeLiveness();
  placeGroups();
  aliasSums();
  planArena(entry);
  return std::move(entry);
}

} // namespace

FailureOr<EntrySchedule>
compiler::buildSchedule(func::FuncOp fn, StringRef kernelPrefix,
                        const BackendRegistry &backends,
                        const ScheduleOptions &options) {
  return ScheduleBuilder(fn, kernelPrefix, backends, options).run();
}

void compiler::shareConstants(MutableArrayRef<EntrySchedule> entries) {
  // Dense attributes are uniqued by type and bytes: equal constants are
  // the same attribute.
  llvm::DenseMap<Attribute, std::string> first;
  for (EntrySchedule &entry : entries)
    for (ConstantWeight &c : entry.constants) {
      auto [it, inserted] = first.try_emplace(c.op.getValue(), c.name);
      if (inserted || it->second == c.name)
        continue;
      for (Buffer &b : entry.buffers)
        if (b.record.kind == art::BufferKind::Weight && b.record.weight == c.name)
          b.record.weight = it->second;
      c.name = it->second;
    }
}

int64_t compiler::kernelGrain(tg::FragmentOp fragment, int64_t range) {
  double work = 0;
  for (Operation &op : fragment.getBody().front().without_terminator())
    work += cost::workOf(&op).flops;
  for (Value v : llvm::concat<Value>(fragment.getInputs(),
                                     fragment.getResults()))
    work += double(bytesOf(v.getType()));
  if (work <= 0)
    return range;
  double grain = std::ceil(kMinWorkPerThread * double(range) / work);
  return std::clamp<int64_t>(int64_t(std::min(grain, double(range))), 1,
                             std::max<int64_t>(range, 1));
}
