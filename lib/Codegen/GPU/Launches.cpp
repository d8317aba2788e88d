//===- Launches.cpp - Building gpu.launch ops of a kernel class -----------===//
//
// Part of Loom. See Launches.h.
//
//===----------------------------------------------------------------------===//

#include "Launches.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace loom::codegen::gpu {

FailureOr<Grid> gridFor(int64_t blocks) {
  Grid grid;
  grid.x = std::max<int64_t>(1, std::min(blocks, kMaxGridDim));
  grid.y = (blocks + grid.x - 1) / grid.x;
  if (grid.y > kMaxGridDim)
    return failure();
  return grid;
}

FailureOr<SmallVector<int64_t>> tripCounts(scf::ParallelOp loop) {
  SmallVector<int64_t> trips;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    auto lb = getConstantIntValue(loop.getLowerBound()[d]);
    auto ub = getConstantIntValue(loop.getUpperBound()[d]);
    auto step = getConstantIntValue(loop.getStep()[d]);
    if (!lb || !ub || !step || *step <= 0)
      return failure();
    trips.push_back(*ub <= *lb ? 0 : (*ub - *lb + *step - 1) / *step);
  }
  return trips;
}

mlir::gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Grid grid,
                                 int64_t threads) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value one = index(1);
  auto launch = mlir::gpu::LaunchOp::create(
      b, loc, index(grid.x), index(grid.y), one, index(threads), one, one);
  Block &body = launch.getBody().front();
  if (body.empty() || !body.back().hasTrait<OpTrait::IsTerminator>()) {
    b.setInsertionPointToEnd(&body);
    mlir::gpu::TerminatorOp::create(b, loc);
  }
  b.setInsertionPoint(body.getTerminator());
  return launch;
}

Value linearBlockId(OpBuilder &b, Location loc, mlir::gpu::LaunchOp launch,
                    Grid grid) {
  mlir::gpu::KernelDim3 ids = launch.getBlockIds();
  Value x = arith::ConstantIndexOp::create(b, loc, grid.x);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ids.y, x),
                               ids.x);
}

Value allocWorkgroupMemory(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                           Type elementType,
                           std::optional<uint64_t> alignment) {
  auto workgroup = mlir::gpu::AddressSpaceAttr::get(
      b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(),
                              workgroup);
  auto alloc = memref::AllocOp::create(b, loc, type);
  if (alignment)
    alloc.setAlignment(*alignment);
  return alloc;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value id,
                               ArrayRef<int64_t> extents) {
  SmallVector<Value> out(extents.size());
  for (int d = int(extents.size()) - 1; d >= 0; --d) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[d]);
    out[d] = arith::RemUIOp::create(b, loc, id, extent);
    id = arith::DivUIOp::create(b, loc, id, extent);
  }
  return out;
}

SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      out.push_back(ivs[dim.getPosition()]);
      continue;
    }
    out.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), ivs));
  }
  return out;
}

SmallVector<Value> payloadAt(OpBuilder &b, Location loc, linalg::LinalgOp op,
                             ArrayRef<Value> ivs,
                             function_ref<Value(OpOperand &)> given) {
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (Value value = given ? given(operand) : Value())
      mapping.map(arg, value);
    else if (!isa<MemRefType>(operand.get().getType()))
      mapping.map(arg, operand.get());
    else if (!arg.use_empty())
      mapping.map(arg, memref::LoadOp::create(
                           b, loc, operand.get(),
                           applyMap(b, loc, op.getMatchingIndexingMap(&operand),
                                    ivs)));
  }
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(o, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : op.getBlock()->getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}

bool isInvariantLoad(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  if (!load)
    return false;
  auto param = dyn_cast<BlockArgument>(load.getMemRef());
  if (!param || !isa<FunctionOpInterface>(param.getOwner()->getParentOp()))
    return false;
  return llvm::all_of(param.getUsers(), [](Operation *user) {
    return isa<memref::LoadOp>(user);
  });
}

void clonePureProducers(mlir::gpu::LaunchOp launch) {
  Region &region = launch.getBody();
  Block &body = region.front();
  for (bool changed = true; changed;) {
    changed = false;
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(region, above);
    for (Value v : above) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getNumRegions() != 0 ||
          !(isPure(def) || isInvariantLoad(def)))
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&body);
      Operation *clone = b.clone(*def);
      for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
        replaceAllUsesInRegionWith(from, to, region);
      changed = true;
    }
  }
}

} // namespace loom::codegen::gpu
