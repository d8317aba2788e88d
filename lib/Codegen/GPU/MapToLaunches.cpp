//===- MapToLaunches.cpp - Loop nests of a kernel function as launches ----===//
//
// Part of Loom. See the description of LoomGPUMapToLaunches in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "Launches.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPTOLAUNCHES
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// Runs every parallel loop nested in \p launch (one the mapping made) as
/// sequential loops in its thread: what linalg leaves inside a reduction's
/// loop when the reduced dimensions are not adjacent (a mean over dims 2
/// and 4 of 6, as RoiAlign's sampling grid), which SPIR-V cannot take.
LogicalResult serializeNestedParallel(mlir::gpu::LaunchOp launch) {
  SmallVector<scf::ParallelOp> nested;
  launch.getBody().walk([&](scf::ParallelOp loop) { nested.push_back(loop); });
  // Post-order: inner loops first, so an outer one clones them as loops.
  for (scf::ParallelOp loop : nested) {
    if (loop.getNumResults() != 0)
      return loop.emitOpError("has reductions, which the GPU mapping does "
                              "not take (linalg reductions are sequential "
                              "loops)");
    OpBuilder b(loop);
    IRMapping mapping;
    for (auto [lb, ub, step, iv] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                   loop.getInductionVars())) {
      auto inner = scf::ForOp::create(b, loop.getLoc(), lb, ub, step);
      mapping.map(iv, inner.getInductionVar());
      b.setInsertionPoint(inner.getBody()->getTerminator());
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    loop.erase();
  }
  return success();
}

/// One thread per iteration of \p loop: the iteration space linearised
/// over blocks of \p blockSize threads.
LogicalResult mapParallel(scf::ParallelOp loop, int64_t blockSize) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("has reductions, which the GPU mapping does not "
                            "take (linalg reductions are sequential loops)");
  FailureOr<SmallVector<int64_t>> counts = tripCounts(loop);
  if (failed(counts))
    return loop.emitOpError("has a bound that is not a constant: GPU "
                            "kernels are generated for static shapes");
  SmallVector<int64_t> trips = *counts;
  int64_t total = 1;
  for (int64_t trip : trips)
    total *= trip;
  if (total == 0) {
    loop.erase();
    return success();
  }
  int64_t threads = std::min(total, blockSize);
  FailureOr<Grid> grid = gridFor((total + threads - 1) / threads);
  if (failed(grid))
    return loop.emitOpError("has ") << total << " iterations, more than a "
                                    << "grid of 65535 x 65535 blocks holds";
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  mlir::gpu::LaunchOp launch = createLaunch(b, loc, *grid, threads);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value block = linearBlockId(b, loc, launch, *grid);
  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block, index(threads)),
      launch.getThreadIds().x);
  if (grid->size() * threads != total) {
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id,
                                          index(total));
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
  }
  IRMapping mapping;
  SmallVector<Value> positions = delinearize(b, loc, id, trips);
  for (auto [d, position] : llvm::enumerate(positions)) {
    Value iv = arith::AddIOp::create(
        b, loc, loop.getLowerBound()[d],
        arith::MulIOp::create(b, loc, position, loop.getStep()[d]));
    mapping.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
  clonePureProducers(launch);
  return serializeNestedParallel(launch);
}

/// \p ops (sequential loop nests, loads and stores, and what computes on
/// their values), in order, run by one thread.
LogicalResult mapSerial(ArrayRef<Operation *> ops) {
  OpBuilder b(ops.front());
  mlir::gpu::LaunchOp launch =
      createLaunch(b, ops.front()->getLoc(), Grid(), 1);
  for (Operation *op : ops)
    op->moveBefore(launch.getBody().front().getTerminator());
  clonePureProducers(launch);
  return serializeNestedParallel(launch);
}

/// Whether \p op (or an op nested in it) uses a result of \p ops.
bool usesAny(Operation *op, const llvm::SmallPtrSetImpl<Operation *> &ops) {
  WalkResult found = op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (Operation *def = v.getDefiningOp(); def && ops.contains(def))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Adds to \p buffers the parameters of \p fn (its buffers) that \p op
/// uses, directly, in its regions, or through the pure ops and invariant
/// loads of \p fn's body it uses (which a launch clones): the buffers a
/// launch holding \p op binds.
void addBuffers(Operation *op, func::FuncOp fn,
                llvm::SmallPtrSetImpl<Value> &buffers,
                llvm::SmallPtrSetImpl<Operation *> &seen) {
  Block &body = fn.getBody().front();
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == &body)
          buffers.insert(v);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def->getBlock() == &body && !op->isAncestor(def) &&
          (isPure(def) || isInvariantLoad(def)) && seen.insert(def).second)
        addBuffers(def, fn, buffers, seen);
    }
  });
}

/// Maps the top-level ops of \p fn: each parallel loop nest to a launch of
/// its own, each run of other ops that touch memory (with the pure ops that
/// compute on their results) to one launch of one thread. Pure ops and
/// invariant loads stay where they are until the launches that use them
/// clone them (clonePureProducers), so that several launches may use them.
/// A run is cut before an op that does not use it when the op would bring
/// its buffers past \p maxBuffers (a concatenation of many scalars).
LogicalResult mapFunction(func::FuncOp fn, int64_t blockSize,
                          int64_t maxBuffers) {
  SmallVector<Operation *> run;
  llvm::SmallPtrSet<Operation *, 8> inRun;
  llvm::SmallPtrSet<Value, 8> runBuffers;
  auto flush = [&] {
    LogicalResult mapped = run.empty() ? success() : mapSerial(run);
    run.clear();
    inRun.clear();
    runBuffers.clear();
    return mapped;
  };
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    bool usesRun = usesAny(&op, inRun);
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (failed(flush()))
        return failure();
      continue;
    }
    // A launch of a kernel class: what canonicalisation hoisted out of it
    // goes back in.
    if (auto launch = dyn_cast<mlir::gpu::LaunchOp>(op)) {
      if (failed(flush()))
        return failure();
      clonePureProducers(launch);
      continue;
    }
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (usesRun)
        return loop.emitOpError("uses a value a sequential loop computes: "
                                "the GPU mapping passes values through "
                                "memory only");
      if (failed(flush()) || failed(mapParallel(loop, blockSize)))
        return failure();
      continue;
    }
    if (op.getNumRegions() == 0 && (isPure(&op) || isInvariantLoad(&op)) &&
        !usesRun)
      continue;
    llvm::SmallPtrSet<Value, 8> buffers(runBuffers.begin(),
                                        runBuffers.end());
    llvm::SmallPtrSet<Operation *, 8> seen;
    addBuffers(&op, fn, buffers, seen);
    if (!usesRun && !run.empty() && int64_t(buffers.size()) > maxBuffers) {
      if (failed(flush()))
        return failure();
      buffers.clear();
      seen.clear();
      addBuffers(&op, fn, buffers, seen);
    }
    runBuffers = std::move(buffers);
    run.push_back(&op);
    inRun.insert(&op);
  }
  return success();
}

struct MapToLaunches
    : public loom::codegen::gpu::impl::LoomGPUMapToLaunchesBase<MapToLaunches> {
  using LoomGPUMapToLaunchesBase::LoomGPUMapToLaunchesBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("loom-gpu-map-to-launches: block-size must be "
                               "in [1, 1024], got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(mapFunction(fn, blockSize, maxBuffers)))
        return signalPassFailure();
  }
};

} // namespace
