//===- ForallToRange.cpp - The [begin, end) kernel convention -------------===//
//
// Part of Loom. See LoomForallToRange in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "StepAllocations.h"
#include "ViewBase.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/Sequence.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMFORALLTORANGE
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

/// Replaces \p forall (static bounds, on memrefs) by a loop over the
/// linearised iterations [begin, end); returns the trip count.
FailureOr<int64_t> rewriteForall(scf::ForallOp forall, Value begin, Value end) {
  if (!forall.getOutputs().empty())
    return forall.emitOpError("still has shared outputs: bufferize first");
  ArrayRef<int64_t> lbs = forall.getStaticLowerBound();
  ArrayRef<int64_t> ubs = forall.getStaticUpperBound();
  ArrayRef<int64_t> steps = forall.getStaticStep();
  if (llvm::any_of(llvm::concat<const int64_t>(lbs, ubs, steps),
                   ShapedType::isDynamic))
    return forall.emitOpError("has dynamic bounds");
  SmallVector<int64_t> counts;
  int64_t total = 1;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    counts.push_back(std::max<int64_t>(0, (ub - lb + step - 1) / step));
    total *= counts.back();
  }
  OpBuilder b(forall);
  Location loc = forall.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<OpFoldResult> basis = llvm::map_to_vector(
      counts, [&](int64_t c) -> OpFoldResult { return b.getIndexAttr(c); });
  auto delinearized = affine::AffineDelinearizeIndexOp::create(
      b, loc, loop.getInductionVar(), basis, /*hasOuterBound=*/true);
  IRMapping mapping;
  for (auto [i, iv] : llvm::enumerate(forall.getInductionVars())) {
    Value scaled = delinearized.getResult(i);
    if (steps[i] != 1)
      scaled = arith::MulIOp::create(
          b, loc, scaled, arith::ConstantIndexOp::create(b, loc, steps[i]));
    if (lbs[i] != 0)
      scaled = arith::AddIOp::create(
          b, loc, scaled, arith::ConstantIndexOp::create(b, loc, lbs[i]));
    mapping.map(iv, scaled);
  }
  for (Operation &op : forall.getBody()->without_terminator())
    b.clone(op, mapping);
  forall.erase();
  // A thread runs its iterations one after another: their temporaries (a
  // fused softmax's row, a reduction's accumulator) are allocated once per
  // call, not once per iteration (a malloc and a free each).
  codegen::cpu::hoistStepAllocations(loop);
  return total;
}

using codegen::cpu::baseOf;

/// Whether iterations of \p forall may run as separate calls over parts of
/// the range: nothing else in the function writes a function argument (an
/// output), and nothing after the loop writes memory at all (when the loop
/// fills a temporary that is then copied out, every call would copy the
/// whole temporary, including the parts other calls computed).
bool splittable(scf::ForallOp forall) {
  bool after = false;
  for (Operation &op : *forall->getBlock()) {
    if (&op == forall.getOperation()) {
      after = true;
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(&op);
    if (!effects) {
      if (op.getNumRegions() > 0)
        return false; // unknown nested effects
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      if (after)
        return false;
      Value v = e.getValue();
      if (!v || isa<BlockArgument>(baseOf(v)))
        return false;
    }
  }
  return true;
}

/// A reshape of \p alloc's whole buffer \p view, made the other way from
/// \p out at \p alloc: expanding \p out where \p view collapses \p alloc
/// and collapsing it where \p view expands it; null when \p view is
/// neither.
Value inverseReshape(OpBuilder &b, Value view, memref::AllocOp alloc,
                     Value out) {
  b.setInsertionPoint(alloc);
  MemRefType type = alloc.getType();
  if (auto collapse = view.getDefiningOp<memref::CollapseShapeOp>())
    return memref::ExpandShapeOp::create(
        b, alloc.getLoc(), type, out, collapse.getReassociationIndices(),
        getAsIndexOpFoldResult(b.getContext(), type.getShape()));
  if (auto expand = view.getDefiningOp<memref::ExpandShapeOp>())
    return memref::CollapseShapeOp::create(
        b, alloc.getLoc(), out, expand.getReassociationIndices());
  return {};
}

/// Computes in the output what \p fn computes in a temporary and copies
/// out through a reshape (`copy(collapse_shape(alloc), out)`): the
/// temporary becomes a reshape of the output argument, which nothing else
/// uses, and the copy and the deallocation go.
void forwardReshapedResults(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  for (auto copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    Value view = copy.getSource();
    Operation *reshape = view.getDefiningOp();
    if (!out || !out.hasOneUse() || !reshape ||
        !isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(reshape) ||
        !view.hasOneUse() || view.getType() != out.getType())
      continue;
    auto alloc = reshape->getOperand(0).getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != &body ||
        !alloc.getType().getLayout().isIdentity())
      continue;
    OpBuilder b(alloc);
    Value replacement = inverseReshape(b, view, alloc, out);
    if (!replacement || replacement.getType() != alloc.getType()) {
      if (replacement)
        replacement.getDefiningOp()->erase();
      continue;
    }
    copy.erase();
    reshape->erase();
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.getResult().replaceAllUsesWith(replacement);
    alloc.erase();
  }
}

/// Where a kernel without a forall does independent work (the two
/// directions of a bidirectional recurrence, each a loop over its steps,
/// in one kernel: tg-form-fragments groups independent scans), the
/// function's top-level ops fall into tasks: ops that write memory or read
/// memory another op writes, joined when they touch a common buffer (one
/// written in the function: an allocation or an output; inputs are only
/// read) or one uses another's result. The rest runs before the tasks
/// (views, allocations, reads of inputs) or after them (deallocations).
struct Tasks {
  SmallVector<Operation *> head, tail;
  SmallVector<SmallVector<Operation *>> tasks; // each in block order
};

/// The buffers (bases of views) defined outside \p op that \p op or an op
/// nested in it uses, with whether some effect writes them; failure where
/// an op's effects are unknown or it writes a view of a region argument.
LogicalResult externalBuffers(Operation *op,
                              llvm::MapVector<Value, bool> &used) {
  // Inside: defined in op's regions, or op's own result (an allocation's
  // effects name the buffer it makes).
  auto inside = [&](Value v) {
    return v.getDefiningOp() == op ||
           op->isAncestor(v.getParentBlock()->getParentOp());
  };
  WalkResult walk = op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (isa<BaseMemRefType>(v.getType()) && !inside(baseOf(v)))
        used.insert({baseOf(v), false});
    // An op's own effects, where it declares them (linalg ops do, and
    // have regions); else those of the ops it holds, visited on their own.
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      if (!e.getValue())
        return WalkResult::interrupt(); // writes something unnamed
      Value base = baseOf(e.getValue());
      if (!inside(base))
        used[base] = true;
      else if (isa<BlockArgument>(base))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Whether \p op frees memory (a deallocation: runs after the tasks).
bool frees(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Free>();
}

/// The tasks of \p body (see Tasks); nothing when there are fewer than two
/// that hold a loop (splitting the others off would gain nothing). Tasks
/// without a loop join the first one that has one.
std::optional<Tasks> findTasks(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // The buffers each op touches and which it writes.
  DenseMap<Operation *, llvm::MapVector<Value, bool>> touched;
  llvm::DenseSet<Value> written;
  for (Operation *op : ops) {
    if (failed(externalBuffers(op, touched[op])))
      return std::nullopt;
    for (auto [base, writes] : touched[op])
      if (writes)
        written.insert(base);
  }
  llvm::EquivalenceClasses<Operation *> joined;
  DenseMap<Value, Operation *> firstToucher;
  Tasks result;
  for (Operation *op : ops) {
    if (frees(op)) {
      result.tail.push_back(op);
      continue;
    }
    bool inTask = false;
    auto join = [&](Operation *other) {
      if (!inTask)
        joined.insert(op);
      inTask = true;
      if (other)
        joined.unionSets(op, other);
    };
    for (auto [base, writes] : touched[op]) {
      if (!written.contains(base))
        continue;
      auto [it, fresh] = firstToucher.try_emplace(base, op);
      join(fresh ? nullptr : it->second);
    }
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp(); def && joined.contains(def))
          join(def);
    });
    if (!inTask)
      result.head.push_back(op);
  }
  // A task's result used after the tasks, or a free of what a task made,
  // would need values across the split: left whole.
  for (Operation *op : result.tail)
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && joined.contains(def))
        return std::nullopt;
  llvm::MapVector<Operation *, SmallVector<Operation *>> byLeader;
  for (Operation *op : ops)
    if (joined.contains(op))
      byLeader[joined.getLeaderValue(op)].push_back(op);
  SmallVector<Operation *> light;
  for (auto &[leader, members] : byLeader) {
    bool loop = llvm::any_of(members, [](Operation *m) {
      return isa<LoopLikeOpInterface>(m) || m->getNumRegions() > 0;
    });
    if (loop)
      result.tasks.push_back(members);
    else
      llvm::append_range(light, members);
  }
  if (result.tasks.size() < 2)
    return std::nullopt;
  // Light tasks are independent of the others: run them in the first.
  llvm::append_range(result.tasks.front(), light);
  llvm::sort(result.tasks.front(), [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return result;
}

/// Rewrites \p fn's body into its head, a loop over the tasks in
/// [begin, end) (an scf.index_switch with a case per task), and its tail;
/// returns the number of tasks, or 1 when it has fewer than two.
int64_t splitTasks(func::FuncOp fn, Value begin, Value end) {
  Block &body = fn.getBody().front();
  std::optional<Tasks> tasks = findTasks(body);
  if (!tasks)
    return 1;
  Operation *terminator = body.getTerminator();
  for (Operation *op : tasks->head)
    op->moveBefore(terminator);
  OpBuilder b(terminator);
  Location loc = fn.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(loop.getBody());
  int64_t count = tasks->tasks.size();
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, count));
  auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{},
                                       loop.getInductionVar(), cases, count);
  auto terminate = [&](Region &region) {
    Block *block = b.createBlock(&region);
    b.setInsertionPointToEnd(block);
    return scf::YieldOp::create(b, loc);
  };
  terminate(sw.getDefaultRegion());
  for (auto [region, ops] : llvm::zip(sw.getCaseRegions(), tasks->tasks)) {
    Operation *yield = terminate(region);
    for (Operation *op : ops)
      op->moveBefore(yield);
  }
  for (Operation *op : tasks->tail)
    op->moveBefore(terminator);
  return count;
}

struct ForallToRange
    : public codegen::cpu::impl::LoomForallToRangeBase<ForallToRange> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      // A team kernel (loom-team-kernels) has its convention already.
      if (fn.isExternal() || fn.isPrivate() || fn->hasAttr(codegen::cpu::kTeamAttr))
        continue;
      forwardReshapedResults(fn);
      Block &body = fn.getBody().front();
      Type index = IndexType::get(&getContext());
      unsigned n = fn.getNumArguments();
      if (failed(fn.insertArguments({n, n}, {index, index}, {{}, {}},
                                    {fn.getLoc(), fn.getLoc()})))
        return signalPassFailure();
      Value begin = body.getArgument(n), end = body.getArgument(n + 1);
      SmallVector<scf::ForallOp> foralls(body.getOps<scf::ForallOp>());
      int64_t range = 1;
      if (foralls.empty())
        range = splitTasks(fn, begin, end);
      if (foralls.size() > 1) {
        fn.emitOpError("has ")
            << foralls.size() << " top-level scf.forall; a kernel has one";
        return signalPassFailure();
      }
      if (foralls.size() == 1) {
        scf::ForallOp forall = foralls.front();
        if (splittable(forall)) {
          auto total = rewriteForall(forall, begin, end);
          if (failed(total))
            return signalPassFailure();
          range = *total;
        } else {
          // One call computes everything: the loop runs its whole range.
          int64_t total = 1;
          for (auto [lb, ub, step] :
               llvm::zip(forall.getStaticLowerBound(),
                         forall.getStaticUpperBound(),
                         forall.getStaticStep()))
            total *= std::max<int64_t>(0, (ub - lb + step - 1) / step);
          OpBuilder b(forall);
          Value zero = arith::ConstantIndexOp::create(b, forall.getLoc(), 0);
          Value all =
              arith::ConstantIndexOp::create(b, forall.getLoc(), total);
          if (failed(rewriteForall(forall, zero, all)))
            return signalPassFailure();
        }
      }
      fn->setAttr("loom.range",
                  IntegerAttr::get(IntegerType::get(&getContext(), 64), range));
    }
  }
};

} // namespace
