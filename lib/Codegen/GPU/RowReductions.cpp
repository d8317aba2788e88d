//===- RowReductions.cpp - The row-reduction kernel class -----------------===//
//
// Part of Loom. See the description of LoomGPUMapRowReductions in Passes.td
// and docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "KernelClasses.h"
#include "RowReductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPROWREDUCTIONS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// The kind of the floating-point combiner \p op, if the row class takes
/// it (associative and commutative up to rounding).
std::optional<ReductionKind> kindOf(Operation *op) {
  using AR = mlir::gpu::AllReduceOperation;
  using RMW = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(op)
      .Case([](arith::AddFOp) {
        return ReductionKind{AR::ADD, RMW::addf};
      })
      .Case([](arith::MulFOp) {
        return ReductionKind{AR::MUL, RMW::mulf};
      })
      .Case([](arith::MaximumFOp) {
        return ReductionKind{AR::MAXIMUMF, RMW::maximumf};
      })
      .Case([](arith::MinimumFOp) {
        return ReductionKind{AR::MINIMUMF, RMW::minimumf};
      })
      .Case([](arith::MaxNumFOp) {
        return ReductionKind{AR::MAXNUMF, RMW::maxnumf};
      })
      .Case([](arith::MinNumFOp) {
        return ReductionKind{AR::MINNUMF, RMW::minnumf};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Whether every shaped input of \p op reads a row contiguously: where its
/// indexing map uses a reduction loop, its innermost result is the last
/// loop (so that neighbouring threads read neighbouring elements).
bool readsRowsContiguously(linalg::LinalgOp op, unsigned numLoops,
                           unsigned firstReduction) {
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(in);
    bool usesReduction = false;
    for (unsigned d = firstReduction; d < numLoops; ++d)
      usesReduction |= map.isFunctionOfDim(d);
    if (!usesReduction)
      continue;
    if (map.getNumResults() == 0 ||
        map.getResults().back() !=
            getAffineDimExpr(numLoops - 1, op.getContext()))
      return false;
  }
  return true;
}

/// The combiner of \p op's payload: the yielded value is `combiner(out, x)`
/// (either order) with the output's block argument used there only.
LogicalResult matchCombiner(RowReduction &r) {
  Block *body = r.op.getBlock();
  for (Operation &o : body->without_terminator())
    if (o.getNumRegions() != 0 || !isPure(&o))
      return failure();
  Value yielded = body->getTerminator()->getOperand(0);
  Operation *combiner = yielded.getDefiningOp();
  BlockArgument out = r.op.getRegionOutputArgs().front();
  if (!combiner || combiner->getBlock() != body ||
      combiner->getNumOperands() != 2 || !out.hasOneUse())
    return failure();
  std::optional<ReductionKind> kind = kindOf(combiner);
  if (!kind)
    return failure();
  if (combiner->getOperand(0) == out)
    r.outOperand = 0;
  else if (combiner->getOperand(1) == out)
    r.outOperand = 1;
  else
    return failure();
  r.combiner = combiner;
  r.kind = *kind;
  return success();
}

} // namespace

FailureOr<RowReduction>
loom::codegen::gpu::classifyRowReduction(linalg::LinalgOp op, int64_t minLength,
                                         bool anyLayout) {
  RowReduction r;
  r.op = op;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op.getNumLoops() == 0)
    return failure();
  auto outType = dyn_cast<MemRefType>(op.getDpsInits().front().getType());
  if (!outType || !outType.getElementType().isF32())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = ranges.size();
  unsigned firstReduction = 0;
  while (firstReduction < numLoops &&
         iterators[firstReduction] == utils::IteratorType::parallel)
    ++firstReduction;
  if (firstReduction == numLoops)
    return failure();
  for (unsigned d = 0; d < numLoops; ++d) {
    if (ShapedType::isDynamic(ranges[d]) ||
        (d >= firstReduction && iterators[d] != utils::IteratorType::reduction))
      return failure();
    (d < firstReduction ? r.rowExtents : r.rowLoopExtents).push_back(ranges[d]);
    (d < firstReduction ? r.rows : r.length) *= ranges[d];
  }
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (unsigned d = firstReduction; d < numLoops; ++d)
    if (outMap.isFunctionOfDim(d))
      return failure();
  // A row read with strides (an input broadcast along the row, a
  // transposed one) is still a workgroup's: the class takes it where the
  // generic class's thread per row would be worse, a single row (one thread
  // for the whole reduction) or a row past the loop budget (a loop that
  // lavapipe cuts short).
  bool stridedRowsWanted = r.rows == 1 || r.length > kLoopBudget;
  if (r.rows == 0 || r.length < std::max<int64_t>(minLength, 1) ||
      !(anyLayout || stridedRowsWanted ||
        readsRowsContiguously(op, numLoops, firstReduction)) ||
      failed(matchCombiner(r)))
    return failure();
  return r;
}

namespace {

/// The row element at loop positions \p ivs: the payload up to the
/// combiner, on the inputs loaded there.
Value rowElement(OpBuilder &b, Location loc, const RowReduction &r,
                 ArrayRef<Value> ivs) {
  linalg::LinalgOp op = r.op;
  IRMapping mapping;
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(in);
    if (!isa<MemRefType>(in->get().getType())) {
      mapping.map(arg, in->get());
      continue;
    }
    SmallVector<Value> at =
        applyMap(b, loc, op.getMatchingIndexingMap(in), ivs);
    mapping.map(arg, memref::LoadOp::create(b, loc, in->get(), at));
  }
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (&o == r.combiner)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(o, mapping);
  }
  return mapping.lookupOrDefault(r.combiner->getOperand(1 - r.outOperand));
}

/// The combiner on \p acc (in the output's place) and \p value.
Value combine(OpBuilder &b, const RowReduction &r, Value acc, Value value) {
  IRMapping mapping;
  mapping.map(r.combiner->getOperand(r.outOperand), acc);
  mapping.map(r.combiner->getOperand(1 - r.outOperand), value);
  return b.clone(*r.combiner, mapping)->getResult(0);
}

/// A loop from \p lb to \p ub by \p step folding `combine` over \p element
/// (the value at one position), starting from the kind's identity.
Value foldLoop(OpBuilder &b, Location loc, const RowReduction &r, Value lb,
               Value ub, Value step,
               function_ref<Value(OpBuilder &, Value)> element) {
  Value identity =
      arith::getIdentityValue(r.kind.identity, b.getF32Type(), b, loc);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{identity},
      [&](OpBuilder &nb, Location, Value iv, ValueRange acc) {
        Value next = combine(nb, r, acc.front(), element(nb, iv));
        scf::YieldOp::create(nb, loc, next);
      });
  return loop.getResult(0);
}

/// Replaces \p r's op with a launch of one workgroup per row that reduces
/// it (emitRowReduction).
LogicalResult emitRowKernel(const RowReduction &r, int64_t maxThreads) {
  linalg::LinalgOp op = r.op;
  OpBuilder b(op);
  FailureOr<RowLaunch> at = beginRowLaunch(
      b, op.getLoc(), r.rows, rowThreads(r.length, maxThreads));
  if (failed(at))
    return failure();
  emitRowReduction(b, r, *at);
  r.op->erase();
  clonePureProducers(at->launch);
  return success();
}

struct MapRowReductions
    : public loom::codegen::gpu::impl::LoomGPUMapRowReductionsBase<
          MapRowReductions> {
  using LoomGPUMapRowReductionsBase::LoomGPUMapRowReductionsBase;

  void runOnOperation() override {
    if (blockSize < kMinRowThreads || blockSize > 1024) {
      getOperation().emitError("loom-gpu-map-row-reductions: block-size must "
                               "be in [32, 1024], got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    auto row = [&](linalg::LinalgOp op, bool recorded) {
      return recorded ? classifyRowReduction(op, 1, /*anyLayout=*/true)
                      : classifyRowReduction(op, minLength, /*anyLayout=*/false);
    };
    auto found = opsOfClass(getOperation(), KernelClass::RowReduction, row);
    if (failed(found))
      return signalPassFailure();
    for (const RowReduction &r : *found)
      if (failed(emitRowKernel(r, blockSize))) {
        r.op->emitOpError("has ")
            << r.rows << " rows, more than a grid of 65535 x 65535 holds";
        return signalPassFailure();
      }
  }
};

} // namespace

bool loom::codegen::gpu::isRowReduction(linalg::LinalgOp op, int64_t minLength,
                                        bool anyLayout) {
  return succeeded(classifyRowReduction(op, minLength, anyLayout));
}

int64_t loom::codegen::gpu::rowThreads(int64_t length, int64_t maxThreads) {
  // A power of 2 (so a whole number of warps on CUDA) within block-size.
  return std::clamp<int64_t>(llvm::PowerOf2Ceil(length), kMinRowThreads,
                             int64_t(llvm::bit_floor(uint64_t(maxThreads))));
}

FailureOr<RowLaunch> loom::codegen::gpu::beginRowLaunch(
    OpBuilder &b, Location loc, int64_t rows, int64_t threads) {
  RowLaunch at;
  at.rows = rows;
  at.threads = threads;
  FailureOr<Grid> grid = gridFor(at.rows);
  if (failed(grid))
    return failure();
  at.grid = *grid;
  at.launch = createLaunch(b, loc, at.grid, threads);
  at.shared = allocWorkgroupMemory(b, loc, {threads}, b.getF32Type());
  at.row = linearBlockId(b, loc, at.launch, at.grid);
  // A block past the last row (the grid's last column) reads the last row
  // and stores nothing: every thread reaches every barrier.
  at.rowRead = arith::MinUIOp::create(
      b, loc, at.row, arith::ConstantIndexOp::create(b, loc, at.rows - 1));
  at.tid = at.launch.getThreadIds().x;
  return at;
}

Value RowLaunch::activeAt(OpBuilder &b, Location loc) const {
  if (grid.size() == rows)
    return Value();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                               arith::ConstantIndexOp::create(b, loc, rows));
}

void loom::codegen::gpu::emitRowReduction(OpBuilder &b, const RowReduction &r,
                                          const RowLaunch &at) {
  linalg::LinalgOp op = r.op;
  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  SmallVector<Value> ivs = delinearize(b, loc, at.rowRead, r.rowExtents);
  Value partial =
      foldLoop(b, loc, r, at.tid, index(r.length), index(at.threads),
               [&](OpBuilder &nb, Value position) -> Value {
                 SmallVector<Value> pos(ivs);
                 llvm::append_range(
                     pos, delinearize(nb, loc, position, r.rowLoopExtents));
                 return rowElement(nb, loc, r, pos);
               });
  Value perSubgroup = mlir::gpu::SubgroupReduceOp::create(
      b, loc, partial, r.kind.subgroup, /*uniform=*/false);
  Value lane = mlir::gpu::LaneIdOp::create(b, loc, IntegerAttr());
  Value subgroup = mlir::gpu::SubgroupIdOp::create(b, loc, IntegerAttr());
  Value zero = index(0);
  auto firstLane = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
      /*withElse=*/false);
  OpBuilder atFirstLane = OpBuilder::atBlockBegin(firstLane.thenBlock());
  memref::StoreOp::create(atFirstLane, loc, perSubgroup, at.shared, subgroup);
  mlir::gpu::BarrierOp::create(b, loc);
  Value subgroups = mlir::gpu::NumSubgroupsOp::create(b, loc, IntegerAttr());
  Value width = mlir::gpu::SubgroupSizeOp::create(b, loc, IntegerAttr());
  Value gathered = foldLoop(
      b, loc, r, lane, subgroups, width, [&](OpBuilder &nb, Value i) -> Value {
        return memref::LoadOp::create(nb, loc, at.shared, i).getResult();
      });
  Value total = mlir::gpu::SubgroupReduceOp::create(b, loc, gathered,
                                                    r.kind.subgroup, false);
  Value store =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, at.tid, zero);
  if (Value active = at.activeAt(b, loc))
    store = arith::AndIOp::create(b, loc, store, active);
  auto storeIf = scf::IfOp::create(b, loc, store, /*withElse=*/false);
  OpBuilder inside = OpBuilder::atBlockTerminator(storeIf.thenBlock());
  Value out = op.getDpsInits().front();
  SmallVector<Value> pos = applyMap(
      inside, loc, op.getMatchingIndexingMap(op.getDpsInitOperand(0)), ivs);
  Value old = memref::LoadOp::create(inside, loc, out, pos);
  memref::StoreOp::create(inside, loc, combine(inside, r, old, total), out,
                          pos);
}
