//===- Recurrences.cpp - The recurrence kernel class ----------------------===//
//
// Part of Loom. See the description of LoomGPUMapRecurrences in Passes.td
// and docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "KernelClasses.h"
#include "Launches.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPRECURRENCES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// The work of one step of the recurrence, once its structured ops are
/// loop nests: each outermost parallel loop shared among the workgroup's
/// threads, every other write run by thread 0, a barrier after each.
class StepMapper {
public:
  StepMapper(Value tid, int64_t threads) : tid(tid), threads(threads) {}

  /// Maps the ops of \p block (a sequential loop's body).
  LogicalResult mapBlock(Block &block);

private:
  LogicalResult distribute(scf::ParallelOp loop);
  void runOnFirstThread(Operation *op);
  void barrierAfter(Operation *op);

  Value tid;
  int64_t threads;
};

/// Whether \p op (or an op nested in it) is a parallel loop.
bool holdsParallel(Operation *op) {
  WalkResult found =
      op->walk([](scf::ParallelOp) { return WalkResult::interrupt(); });
  return found.wasInterrupted();
}

LogicalResult StepMapper::mapBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (op.hasTrait<OpTrait::IsTerminator>() || isPure(&op))
      continue;
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(distribute(loop)))
        return failure();
      continue;
    }
    // A sequential loop around parallel ones (a nested recurrence, a
    // reduction loop outside its parallel loops): every thread runs it,
    // the parallel loops inside shared.
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && holdsParallel(loop)) {
      if (loop.getNumResults() != 0)
        return loop.emitOpError("carries values around parallel loops, "
                                "which the recurrence class does not map");
      if (failed(mapBlock(*loop.getBody())))
        return failure();
      continue;
    }
    if (holdsParallel(&op))
      return op.emitOpError("holds parallel loops the recurrence class does "
                            "not map");
    if (op.getNumResults() != 0) {
      // A read every thread does alike (a scalar a later op uses).
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (effects && effects.onlyHasEffect<MemoryEffects::Read>())
        continue;
      return op.emitOpError("writes memory and has results, which the "
                            "recurrence class does not map");
    }
    runOnFirstThread(&op);
  }
  return success();
}

/// The iterations of \p loop (linearised) shared among the threads, each
/// thread taking every `threads`-th one from its own index; then a barrier.
LogicalResult StepMapper::distribute(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("has reductions, which the GPU mapping does not "
                            "take (linalg reductions are sequential loops)");
  FailureOr<SmallVector<int64_t>> trips = tripCounts(loop);
  if (failed(trips))
    return loop.emitOpError("has a bound that is not a constant: GPU "
                            "kernels are generated for static shapes");
  int64_t total = 1;
  for (int64_t t : *trips)
    total *= t;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto shared =
      scf::ForOp::create(b, loc, tid, index(total), index(threads));
  b.setInsertionPoint(shared.getBody()->getTerminator());
  IRMapping mapping;
  SmallVector<Value> positions =
      delinearize(b, loc, shared.getInductionVar(), *trips);
  for (auto [d, position] : llvm::enumerate(positions))
    mapping.map(loop.getInductionVars()[d],
                arith::AddIOp::create(
                    b, loc, loop.getLowerBound()[d],
                    arith::MulIOp::create(b, loc, position, loop.getStep()[d])));
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
  // A parallel loop nested under a sequential one inside (a loop order of
  // parallel, reduction, parallel) is run by the thread as a loop nest.
  SmallVector<scf::ParallelOp> inner;
  shared.getBody()->walk([&](scf::ParallelOp p) { inner.push_back(p); });
  for (scf::ParallelOp p : llvm::reverse(inner)) {
    OpBuilder nb(p);
    IRMapping nested;
    Block *at = nullptr;
    for (unsigned d = 0; d < p.getNumLoops(); ++d) {
      auto f = scf::ForOp::create(nb, p.getLoc(), p.getLowerBound()[d],
                                  p.getUpperBound()[d], p.getStep()[d]);
      nested.map(p.getInductionVars()[d], f.getInductionVar());
      at = f.getBody();
      nb.setInsertionPoint(at->getTerminator());
    }
    if (p.getNumResults() != 0)
      return p.emitOpError("has reductions, which the GPU mapping does not "
                           "take");
    for (Operation &op : p.getBody()->without_terminator())
      nb.clone(op, nested);
    p.erase();
  }
  barrierAfter(shared);
  return success();
}

void StepMapper::runOnFirstThread(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, tid,
      arith::ConstantIndexOp::create(b, loc, 0));
  auto guard = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  op->moveBefore(guard.thenBlock()->getTerminator());
  barrierAfter(guard);
}

void StepMapper::barrierAfter(Operation *op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  mlir::gpu::BarrierOp::create(b, op->getLoc());
}

/// The structured ops inside \p loop as loop nests (parallel loops for
/// their parallel dimensions), and the largest number of parallel
/// iterations of one of them.
FailureOr<int64_t> toLoopNests(scf::ForOp loop) {
  SmallVector<linalg::LinalgOp> ops;
  loop.getBody()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  int64_t widest = 1;
  IRRewriter rewriter(loop.getContext());
  for (linalg::LinalgOp op : ops) {
    if (!op.hasPureBufferSemantics())
      return op->emitOpError("is not on buffers: the recurrence class maps "
                             "bufferized kernels");
    int64_t parallel = 1;
    for (auto [extent, kind] : llvm::zip(op.getStaticLoopRanges(),
                                         op.getIteratorTypesArray()))
      if (kind == utils::IteratorType::parallel && extent > 0)
        parallel *= extent;
    widest = std::max(widest, parallel);
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op->emitOpError("could not be lowered to loops");
    rewriter.eraseOp(op);
  }
  return widest;
}

/// In \p loop (a reduction loop of one thread), the element a load reads and
/// a later store of the same body writes back, at indices the loop does not
/// change, with no other access to that buffer in the body: carried in a
/// register (an iteration argument) from a load before the loop to a store
/// after it. A product's accumulator then costs no memory access per step.
void promoteAccumulators(scf::ForOp loop) {
  // Constants and index arithmetic the body computes out of it first.
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  Block *body = loop.getBody();
  auto invariant = [&](ValueRange indices) {
    return llvm::all_of(
        indices, [&](Value v) { return loop.isDefinedOutsideOfLoop(v); });
  };
  for (auto load : llvm::make_early_inc_range(body->getOps<memref::LoadOp>())) {
    Value buffer = load.getMemRef();
    memref::StoreOp store;
    unsigned accesses = 0;
    body->walk([&](Operation *op) {
      if (llvm::is_contained(op->getOperands(), buffer))
        ++accesses;
      if (auto s = dyn_cast<memref::StoreOp>(op);
          s && s.getMemRef() == buffer && s->getBlock() == body &&
          llvm::equal(s.getIndices(), load.getIndices()) &&
          load->isBeforeInBlock(s))
        store = s;
    });
    if (!store || accesses != 2 || !invariant(load.getIndices()))
      continue;
    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    Value init = memref::LoadOp::create(rewriter, load.getLoc(), buffer,
                                        load.getIndices());
    Value stored = store.getValueToStore();
    auto grown = cast<scf::ForOp>(
        loop.replaceWithAdditionalYields(
                rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
                [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                  return SmallVector<Value>{stored};
                })
            ->getOperation());
    load.replaceAllUsesWith(grown.getRegionIterArgs().back());
    load.erase();
    rewriter.setInsertionPointAfter(grown);
    memref::StoreOp::create(rewriter, store.getLoc(), grown.getResults().back(),
                            buffer, store.getIndices());
    store.erase();
    loop = grown;
    body = loop.getBody();
  }
}

/// How many iterations of a thread's innermost sequential loop (a product's
/// k loop) one iteration runs. Fewer back edges: more work per branch on a
/// GPU, and within lavapipe's budget of 65,535 loop iterations per
/// invocation (llvmpipe's loop limiter counts every loop of a shader
/// together and silently leaves a loop once it is spent; a recurrence's
/// thread runs every step's loops).
constexpr uint64_t kUnroll = 8;

/// Promotes the accumulators of, then unrolls by kUnroll, each innermost
/// loop of constant bounds in \p launch
/// (the reduction loops of its structured ops; a thread's share of a
/// parallel loop starts at its thread index and is left as it is).
LogicalResult unrollInnermost(mlir::gpu::LaunchOp launch) {
  // Innermost loops of kUnroll iterations or more whose bounds are
  // constants (a thread's share of a parallel loop starts at its index).
  auto innermost = [&] {
    SmallVector<scf::ForOp> loops;
    launch.getBody().walk([&](scf::ForOp loop) {
      bool nested = false;
      loop.getBody()->walk([&](scf::ForOp) { nested = true; });
      auto lb = getConstantIntValue(loop.getLowerBound());
      auto ub = getConstantIntValue(loop.getUpperBound());
      auto step = getConstantIntValue(loop.getStep());
      if (!nested && lb && ub && step && *step > 0 &&
          (*ub - *lb) / *step >= int64_t(kUnroll))
        loops.push_back(loop);
    });
    return loops;
  };
  // One value per index expression (each op of a step computed its
  // indices anew), so that a load and its store are seen to match.
  IRRewriter rewriter(launch.getContext());
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, launch);
  for (scf::ForOp loop : innermost())
    promoteAccumulators(loop);
  for (scf::ForOp loop : innermost())
    if (failed(loopUnrollByFactor(loop, kUnroll)))
      return loop.emitOpError("could not be unrolled");
  return success();
}

/// The trip count of \p loop counted from 0 (a thread's share of a parallel
/// loop starts at its index), when its upper bound and step are constants.
std::optional<int64_t> tripsFromZero(scf::ForOp loop) {
  auto ub = getConstantIntValue(loop.getUpperBound());
  auto step = getConstantIntValue(loop.getStep());
  if (!ub || !step || *step <= 0)
    return std::nullopt;
  return llvm::divideCeil(*ub, *step);
}

/// The loop iterations (back edges) a thread runs per iteration of
/// \p steps, from the constant bounds of the loops in its body; std::nullopt
/// when a bound is not constant.
std::optional<int64_t> backEdgesPerStep(scf::ForOp steps) {
  int64_t total = 1;
  WalkResult walked = steps.getBody()->walk([&](scf::ForOp loop) {
    int64_t iterations = 1;
    for (scf::ForOp l = loop; l != steps;
         l = l->getParentOfType<scf::ForOp>()) {
      std::optional<int64_t> trips = tripsFromZero(l);
      if (!trips)
        return WalkResult::interrupt();
      iterations *= *trips;
    }
    total += iterations;
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return std::nullopt;
  return total;
}

/// Cuts \p launch, a recurrence's launch whose body runs its step loop
/// (the body's one top-level loop), into launches of consecutive steps,
/// each within kLoopBudget (Launches.h) back edges per thread. The state lives in memory between
/// steps; a launch boundary orders it. Left whole when the step loop's
/// bounds or its loops' are not constants, or when unrolling left it more
/// than one loop.
void cutIntoLaunches(mlir::gpu::LaunchOp launch) {
  auto loops = launch.getBody().front().getOps<scf::ForOp>();
  if (!llvm::hasSingleElement(loops))
    return;
  scf::ForOp steps = *loops.begin();
  auto lb = getConstantIntValue(steps.getLowerBound());
  auto ub = getConstantIntValue(steps.getUpperBound());
  auto step = getConstantIntValue(steps.getStep());
  std::optional<int64_t> perStep = backEdgesPerStep(steps);
  if (!lb || !ub || !step || *step <= 0 || !perStep)
    return;
  int64_t count = llvm::divideCeil(*ub - *lb, *step);
  int64_t chunk = std::max<int64_t>(1, kLoopBudget / *perStep);
  if (count <= chunk)
    return;
  auto bound = [&](scf::ForOp loop, int64_t first, int64_t last) {
    OpBuilder b(loop);
    loop.setLowerBound(
        arith::ConstantIndexOp::create(b, loop.getLoc(), *lb + first * *step));
    loop.setUpperBound(arith::ConstantIndexOp::create(
        b, loop.getLoc(), std::min(*ub, *lb + last * *step)));
  };
  OpBuilder b(launch);
  b.setInsertionPointAfter(launch);
  for (int64_t first = chunk; first < count; first += chunk) {
    IRMapping mapping;
    Operation *copy = b.clone(*launch, mapping);
    bound(cast<scf::ForOp>(mapping.lookup(steps.getOperation())), first,
          first + chunk);
    b.setInsertionPointAfter(copy);
  }
  bound(steps, 0, chunk);
}

/// \p loop as launches of one workgroup that run it, its steps in order
/// (one launch, or several of consecutive steps: cutIntoLaunches).
LogicalResult mapRecurrence(scf::ForOp loop, int64_t blockSize) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("carries values other than through memory, "
                            "which the recurrence class does not map");
  loop->removeAttr(kKernelClassAttrName);
  FailureOr<int64_t> widest = toLoopNests(loop);
  if (failed(widest))
    return failure();
  int64_t threads = std::min(*widest, blockSize);
  OpBuilder b(loop);
  mlir::gpu::LaunchOp launch =
      createLaunch(b, loop.getLoc(), Grid(), threads);
  loop->moveBefore(launch.getBody().front().getTerminator());
  StepMapper mapper(launch.getThreadIds().x, threads);
  if (failed(mapper.mapBlock(*loop.getBody())) ||
      failed(unrollInnermost(launch)))
    return failure();
  clonePureProducers(launch);
  cutIntoLaunches(launch);
  return success();
}

struct MapRecurrences
    : public loom::codegen::gpu::impl::LoomGPUMapRecurrencesBase<
          MapRecurrences> {
  using LoomGPUMapRecurrencesBase::LoomGPUMapRecurrencesBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("loom-gpu-map-recurrences: block-size must be "
                               "in [1, 1024], got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    // The loops that record the class (the selection's), or that record
    // none and are recurrences (this pass run alone).
    SmallVector<scf::ForOp> loops;
    auto take = [&](scf::ForOp loop,
                    std::optional<KernelClass> recorded) -> LogicalResult {
      if (recorded && *recorded != KernelClass::Recurrence)
        return success();
      if (isRecurrence(loop))
        loops.push_back(loop);
      else if (recorded)
        return emitNotOfClass(loop, KernelClass::Recurrence);
      return success();
    };
    if (failed(forEachTopLevelLoop(getOperation(), take)))
      return signalPassFailure();
    for (scf::ForOp loop : loops)
      if (failed(mapRecurrence(loop, blockSize)))
        return signalPassFailure();
  }
};

} // namespace

bool loom::codegen::gpu::isRecurrence(scf::ForOp loop) {
  WalkResult found = loop.getBody()->walk(
      [](linalg::LinalgOp) { return WalkResult::interrupt(); });
  return found.wasInterrupted();
}
