//===- SPIRVForms.cpp - Canonical kernel forms rewritten for SPIR-V -------===//
//
// Part of Loom. See the description of LoomGPUSPIRVForms in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUSPIRVFORMS
#define GEN_PASS_DEF_LOOMGPUSPIRVBARRIERS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;

namespace {

/// Whether \p t is bf16 or holds bf16 elements.
bool isBFloat16Type(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return t.isBF16();
}

/// An error at the first op of \p module that computes on bf16: Vulkan
/// 1.3's SPIR-V has no bf16 type (SPV_KHR_bfloat16 is not assumed), and the
/// SPIR-V conversion would leave such an op unconverted or widen it while
/// its buffers hold 2-byte elements.
LogicalResult checkNoBFloat16(Operation *module) {
  WalkResult found = module->walk([](Operation *op) {
    if (llvm::any_of(op->getOperandTypes(), isBFloat16Type) ||
        llvm::any_of(op->getResultTypes(), isBFloat16Type)) {
      op->emitOpError("computes on bf16, which a Vulkan kernel cannot "
                      "(SPIR-V 1.3 has no bf16 type): compile it for a CUDA "
                      "target, or in f16 (--precision=f16)");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(found.wasInterrupted());
}

/// \p alloc in the Workgroup storage class, or an error when it is not
/// static workgroup memory that only loads and stores use.
LogicalResult toWorkgroupClass(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  auto space =
      dyn_cast_or_null<mlir::gpu::AddressSpaceAttr>(type.getMemorySpace());
  if (!space || space.getValue() != mlir::gpu::AddressSpace::Workgroup ||
      !type.hasStaticShape())
    return alloc.emitOpError("allocates memory a Vulkan kernel cannot have: "
                             "only statically shaped workgroup memory");
  for (Operation *user : alloc->getUsers())
    if (!isa<memref::LoadOp, memref::StoreOp>(user))
      return user->emitOpError("uses workgroup memory other than by a load or "
                               "a store, which the SPIR-V form does not "
                               "rewrite");
  auto workgroup = spirv::StorageClassAttr::get(alloc.getContext(),
                                                spirv::StorageClass::Workgroup);
  alloc.getResult().setType(MemRefType::get(
      type.getShape(), type.getElementType(), type.getLayout(), workgroup));
  return success();
}

/// The most elements of a constant table a Vulkan kernel holds (each
/// thread writes its copy when it starts).
constexpr int64_t kMaxTableElements = 4096;

/// \p get (a constant global a kernel reads: an index table, such as a
/// nearest-neighbour resize's) as an array in the Function storage class
/// that each thread fills with the global's values at its entry: SPIR-V
/// lowers no `memref.get_global`. An error when the global is not a small
/// statically shaped constant that only loads read.
LogicalResult toFunctionTable(memref::GetGlobalOp get) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  MemRefType type = get.getType();
  auto values = global ? dyn_cast_or_null<DenseElementsAttr>(
                             global.getInitialValueAttr())
                       : DenseElementsAttr();
  if (!global || !global.getConstant() || !values || !type.hasStaticShape() ||
      type.getNumElements() > kMaxTableElements)
    return get.emitOpError("reads a global a Vulkan kernel cannot hold: only "
                           "constant tables of at most ")
           << kMaxTableElements << " elements";
  for (Operation *user : get->getUsers())
    if (!isa<memref::LoadOp>(user))
      return user->emitOpError("uses a constant table other than by a load, "
                               "which the SPIR-V form does not rewrite");
  auto fn = get->getParentOfType<mlir::gpu::GPUFuncOp>();
  if (!fn)
    return get.emitOpError("reads a constant table outside a kernel");
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Location loc = get.getLoc();
  auto function = spirv::StorageClassAttr::get(get.getContext(),
                                               spirv::StorageClass::Function);
  Value table = memref::AllocaOp::create(
      b, loc,
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(), function));
  SmallVector<int64_t> strides = computeSuffixProduct(type.getShape());
  int64_t flat = 0;
  for (Attribute value : values.getValues<Attribute>()) {
    SmallVector<Value> at;
    for (auto [extent, stride] : llvm::zip(type.getShape(), strides))
      at.push_back(
          arith::ConstantIndexOp::create(b, loc, (flat / stride) % extent));
    Value v = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
    memref::StoreOp::create(b, loc, v, table, at);
    ++flat;
  }
  get.replaceAllUsesWith(table);
  get.erase();
  return success();
}

/// \p reduce (`maximumf` or `minimumf`, which SPIR-V's group operations
/// do not have) as the `maxnumf`/`minnumf` reduction SPIR-V has, and NaN
/// where any lane's value is NaN (what maximumf and minimumf propagate).
void withNaNPropagated(mlir::gpu::SubgroupReduceOp reduce) {
  using AR = mlir::gpu::AllReduceOperation;
  AR op = reduce.getOp();
  if (op != AR::MAXIMUMF && op != AR::MINIMUMF)
    return;
  OpBuilder b(reduce);
  Location loc = reduce.getLoc();
  Value x = reduce.getValue();
  Type type = x.getType();
  auto number = op == AR::MAXIMUMF ? AR::MAXNUMF : AR::MINNUMF;
  Value reduced = mlir::gpu::SubgroupReduceOp::create(
      b, loc, x, number, /*uniform=*/false, reduce.getClusterSize(),
      reduce.getClusterStride());
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value flag = arith::SelectOp::create(b, loc, isNaN, one, zero);
  Value anyNaN = mlir::gpu::SubgroupReduceOp::create(
      b, loc, flag, AR::MAXNUMF, /*uniform=*/false, reduce.getClusterSize(),
      reduce.getClusterStride());
  Value nan = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(
          type, APFloat::getQNaN(cast<FloatType>(type).getFloatSemantics())));
  Value seen =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, anyNaN, zero);
  reduce.replaceAllUsesWith(
      arith::SelectOp::create(b, loc, seen, nan, reduced).getResult());
  reduce.erase();
}

/// \p loop (an `scf.for` with results whose trip count is not known to be
/// positive) inside `scf.if (lower < upper)`, whose else branch yields the
/// loop's initial values. MLIR 22's scf-to-spirv keeps a loop's results in
/// Function variables that only the loop body stores (llvm-project PR
/// 206280 fixed it after 22): a loop that runs no iteration leaves them
/// undefined, where it must give its initial values. A row reduction's
/// thread folds `tid, tid + T, ...` from the combiner's identity: past the
/// row's end its loop is empty, and lavapipe read 0 for the identity (a row
/// maximum of negative values was 0).
void withEmptyTripResults(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (loop.getNumResults() == 0 || (trips && !trips->isZero()))
    return;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                    loop.getLowerBound(),
                                    loop.getUpperBound());
  auto guard = scf::IfOp::create(b, loc, loop.getResultTypes(), any,
                                 /*withElseRegion=*/true);
  loop.replaceAllUsesWith(guard.getResults());
  b.setInsertionPointToEnd(guard.thenBlock());
  Operation *moved = loop.getOperation();
  moved->moveBefore(guard.thenBlock(), guard.thenBlock()->end());
  scf::YieldOp::create(b, loc, moved->getResults());
  b.setInsertionPointToEnd(guard.elseBlock());
  scf::YieldOp::create(b, loc, loop.getInitArgs());
}

struct SPIRVForms
    : public loom::codegen::gpu::impl::LoomGPUSPIRVFormsBase<SPIRVForms> {
  void runOnOperation() override {
    if (failed(checkNoBFloat16(getOperation())))
      return signalPassFailure();
    WalkResult bad = getOperation().walk([](memref::AllocOp alloc) {
      return failed(toWorkgroupClass(alloc)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
    });
    if (bad.wasInterrupted())
      return signalPassFailure();
    SmallVector<memref::GetGlobalOp> tables;
    getOperation().walk([&](memref::GetGlobalOp op) { tables.push_back(op); });
    for (memref::GetGlobalOp op : tables)
      if (failed(toFunctionTable(op)))
        return signalPassFailure();
    // The globals themselves (SPIR-V lowers none): each kernel now holds
    // its own copy.
    for (auto global : llvm::make_early_inc_range(
             getOperation().getOps<memref::GlobalOp>()))
      global.erase();
    SmallVector<mlir::gpu::SubgroupReduceOp> reductions;
    getOperation().walk(
        [&](mlir::gpu::SubgroupReduceOp op) { reductions.push_back(op); });
    for (mlir::gpu::SubgroupReduceOp op : reductions) {
      // Vulkan has only the non-uniform group operations (the uniform ones
      // need the Groups capability); they are as correct where all lanes
      // take part.
      op.setUniform(false);
      withNaNPropagated(op);
    }
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp op) { loops.push_back(op); });
    for (scf::ForOp op : loops)
      withEmptyTripResults(op);
  }
};

/// Every workgroup barrier of a SPIR-V module also orders storage-buffer
/// memory (`UniformMemory`): gpu.barrier makes every access before it
/// visible to the workgroup, global memory included (the recurrence class
/// passes each op's results to the next through it), while
/// convert-gpu-to-spirv's lowering orders workgroup memory only.
struct SPIRVBarriers
    : public loom::codegen::gpu::impl::LoomGPUSPIRVBarriersBase<
          SPIRVBarriers> {
  void runOnOperation() override {
    getOperation().walk([](spirv::ControlBarrierOp barrier) {
      using MS = spirv::MemorySemantics;
      MS semantics = barrier.getMemorySemantics();
      if (barrier.getExecutionScope() == spirv::Scope::Workgroup &&
          spirv::bitEnumContainsAll(semantics, MS::WorkgroupMemory))
        barrier.setMemorySemantics(semantics | MS::UniformMemory);
    });
  }
};

} // namespace
