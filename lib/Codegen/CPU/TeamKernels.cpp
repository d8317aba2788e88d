//===- TeamKernels.cpp - A recurrence's steps split over a team -----------===//
//
// Part of Loom. See LoomTeamKernels and LoomTeamCalls in Passes.td and
// docs/Compiler.md ("Recurrences"). A team kernel is called once by every
// thread of a team: each op that writes memory computes the thread's part
// of its work (or runs on thread 0), and the threads meet at a barrier
// wherever an op reads or overwrites what another thread may have written
// (or read) since the last one. Every thread runs the same ops in the same
// order, so each reaches every barrier and every allocation (which the
// team makes collectively) the same number of times.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "ViewBase.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SetVector.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMTEAMKERNELS
#define GEN_PASS_DEF_LOOMTEAMCALLS
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;
using codegen::cpu::baseOf;

namespace {

constexpr llvm::StringLiteral kAlloc("_mlir_memref_to_llvm_alloc");
constexpr llvm::StringLiteral kFree("_mlir_memref_to_llvm_free");

/// The buffers (bases of views) an op and the ops nested in it read and
/// write, less those allocated inside it; `known` is false where an effect
/// is unknown or names no value.
struct Touched {
  llvm::SmallSetVector<Value, 4> reads, writes;
  bool known = true;
};

Touched touched(Operation *op) {
  Touched t;
  auto inside = [&](Value v) {
    return v.getDefiningOp() == op ||
           op->isAncestor(v.getParentBlock()->getParentOp());
  };
  op->walk([&](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      if (!nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        t.known = false;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list) {
      bool read = isa<MemoryEffects::Read>(e.getEffect());
      bool write = isa<MemoryEffects::Write>(e.getEffect());
      if (!read && !write)
        continue; // allocations and frees: collective (see LoomTeamCalls)
      if (!e.getValue()) {
        t.known = false;
        continue;
      }
      Value base = baseOf(e.getValue());
      if (inside(base))
        continue;
      (write ? t.writes : t.reads).insert(base);
    }
  });
  return t;
}

/// The bytes of a statically shaped memref type; 0 for any other type.
int64_t staticBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getElementType().isIntOrFloat())
    return 0;
  return memref.getNumElements() *
         llvm::divideCeil(memref.getElementTypeBitWidth(), 8);
}

/// Whether a team may cut \p op's work into slices, one per thread (the
/// ops TeamRewriter::partition cuts; any other op that writes runs on
/// thread 0).
bool sharedByTeam(Operation *op) {
  return isa<linalg::LinalgOp, memref::CopyOp>(op) ||
         (isa<scf::ForOp>(op) &&
          op->hasAttr(codegen::cpu::kParallelTilesAttr));
}

/// The bytes of the buffers each step of \p loop reads, in ops whose work
/// the team shares, that stay the same over its steps: read through a
/// value defined outside the loop (not a view of the step's own slice) and
/// written nowhere in it. For a recurrence, its recurrent weights, which
/// its product reads whole each step; a loop of scalar loads and stores
/// (a scatter over its updates) counts none, whatever it reads from.
int64_t invariantStepBytes(scf::ForOp loop) {
  Touched all = touched(loop);
  llvm::SmallSetVector<Value, 4> invariant;
  for (Operation &top : *loop.getBody()) {
    if (!sharedByTeam(&top))
      continue;
    top.walk([&](MemoryEffectOpInterface op) {
      SmallVector<MemoryEffects::EffectInstance> list;
      op.getEffects(list);
      for (auto &e : list)
        if (Value v = e.getValue();
            v && isa<MemoryEffects::Read>(e.getEffect()) &&
            !loop->isAncestor(v.getParentBlock()->getParentOp()) &&
            !all.writes.contains(baseOf(v)))
          invariant.insert(baseOf(v));
    });
  }
  int64_t bytes = 0;
  for (Value v : invariant)
    bytes += staticBytes(v.getType());
  return bytes;
}

/// The loop of \p fn a team would run: its only top-level op with regions
/// other than linalg ops, an scf.for without results, where every allocation and deallocation is
/// at the top level of the function or of the loop (so every thread makes
/// them), nothing is allocated on the stack, every op's effects are known,
/// and every op that writes memory at either level has no results (it may
/// be run by one thread).
scf::ForOp teamLoop(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  scf::ForOp loop;
  for (Operation &op : body) {
    if (op.getNumRegions() == 0 || isa<linalg::LinalgOp>(op))
      continue;
    auto candidate = dyn_cast<scf::ForOp>(op);
    if (!candidate || loop || candidate.getNumResults() != 0)
      return {};
    loop = candidate;
  }
  if (!loop || llvm::any_of(body, [](Operation &op) {
        return !touched(&op).known;
      }))
    return {};
  Block *step = loop.getBody();
  WalkResult walk = fn.walk([&](Operation *op) {
    if (isa<memref::AllocaOp>(op) ||
        (isa<memref::AllocOp, memref::DeallocOp>(op) &&
         op->getBlock() != &body && op->getBlock() != step))
      return WalkResult::interrupt();
    if ((op->getBlock() == &body || op->getBlock() == step) &&
        op->getNumResults() != 0 && !touched(op).writes.empty())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted() ? scf::ForOp() : loop;
}

/// Moves each allocation at the top level of \p loop's body whose
/// deallocations are in the body too (a temporary of one step) before the
/// loop, and those deallocations after it: one allocation for all steps.
void hoistStepAllocations(scf::ForOp loop) {
  for (auto alloc : llvm::make_early_inc_range(
           loop.getBody()->getOps<memref::AllocOp>())) {
    if (!alloc.getType().hasStaticShape() || !alloc->getOperands().empty())
      continue;
    SmallVector<Operation *> frees;
    bool local = true;
    for (Operation *user : alloc->getUsers())
      if (isa<memref::DeallocOp>(user)) {
        local &= user->getBlock() == loop.getBody();
        frees.push_back(user);
      }
    if (!local || frees.size() != 1)
      continue;
    alloc->moveBefore(loop);
    frees.front()->moveAfter(loop);
  }
}

/// Rewrites a team kernel: each op that writes memory does the calling
/// thread's part, with barriers between ops that depend on each other.
class TeamRewriter {
public:
  TeamRewriter(func::FuncOp fn, Value thread, Value threads, Value team,
               func::FuncOp barrier)
      : fn(fn), thread(thread), threads(threads), team(team),
        barrierFn(barrier) {}

  void rewriteBlock(Block &block, scf::ForOp loop) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        // A step's writes are read by the next one.
        if (&block != &fn.getBody().front() &&
            !(written.empty() && read.empty()))
          barrier(&op);
        continue;
      }
      if (&op == loop.getOperation()) {
        if (!(written.empty() && read.empty()))
          barrier(&op);
        rewriteBlock(*loop.getBody(), loop);
        continue;
      }
      // An allocation and a free wait for the whole team (LoomTeamCalls).
      if (isa<memref::AllocOp, memref::DeallocOp>(op)) {
        written.clear();
        read.clear();
        continue;
      }
      Touched t = touched(&op);
      if (t.reads.empty() && t.writes.empty())
        continue;
      bool hazard =
          llvm::any_of(t.reads, [&](Value v) { return written.contains(v); }) ||
          llvm::any_of(t.writes, [&](Value v) {
            return written.contains(v) || read.contains(v);
          });
      if (hazard)
        barrier(&op);
      read.insert(t.reads.begin(), t.reads.end());
      written.insert(t.writes.begin(), t.writes.end());
      if (!t.writes.empty())
        partition(&op);
    }
  }

private:
  void barrier(Operation *before) {
    OpBuilder b(before);
    func::CallOp::create(b, before->getLoc(), barrierFn, ValueRange{team});
    written.clear();
    read.clear();
  }

  /// The calling thread's slice [lo, lo + size) of \p extent iterations:
  /// contiguous, in multiples of \p align (false sharing).
  std::pair<Value, Value> slice(OpBuilder &b, Location loc, int64_t extent,
                                int64_t align) {
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    Value total = c(extent);
    Value chunk = arith::CeilDivUIOp::create(b, loc, total, threads);
    chunk = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, chunk, c(align)), c(align));
    Value lo = arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, thread, chunk), total);
    Value hi = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lo, chunk), total);
    return {lo, arith::SubIOp::create(b, loc, hi, lo)};
  }

  void partition(Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (succeeded(splitLinalg(linalgOp)))
        return;
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      if (succeeded(splitCopy(copy)))
        return;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      if (loop->hasAttr(codegen::cpu::kParallelTilesAttr) &&
          succeeded(splitLoop(loop)))
        return;
    onThreadZero(op);
  }

  void onThreadZero(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, thread,
        arith::ConstantIndexOp::create(b, loc, 0));
    auto guard = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    op->moveBefore(guard.thenBlock()->getTerminator());
  }

  /// The largest parallel loop of \p op, cut into one slice per thread.
  LogicalResult splitLinalg(linalg::LinalgOp op) {
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t dim = -1;
    for (auto [i, kind] : llvm::enumerate(iterators))
      if (kind == utils::IteratorType::parallel &&
          !ShapedType::isDynamic(extents[i]) &&
          (dim < 0 || extents[i] > extents[dim]))
        dim = int64_t(i);
    auto tiling = dyn_cast<TilingInterface>(op.getOperation());
    if (dim < 0 || !tiling || !op.hasPureBufferSemantics())
      return failure();
    OpBuilder b(op);
    auto [lo, size] = slice(b, op.getLoc(), extents[dim], 16);
    SmallVector<OpFoldResult> offsets(extents.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t e : extents)
      sizes.push_back(b.getIndexAttr(e));
    offsets[dim] = lo;
    sizes[dim] = size;
    FailureOr<TilingResult> tiled =
        tiling.getTiledImplementation(b, offsets, sizes);
    if (failed(tiled))
      return failure();
    op->erase();
    return success();
  }

  /// The largest dimension of a statically shaped copy, cut likewise.
  LogicalResult splitCopy(memref::CopyOp copy) {
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!type || !target || !type.hasStaticShape() || type.getRank() == 0 ||
        target.getShape() != type.getShape())
      return failure();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t dim = std::max_element(shape.begin(), shape.end()) - shape.begin();
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    auto [lo, size] = slice(b, loc, shape[dim], 16);
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
        sizes, strides(shape.size(), b.getIndexAttr(1));
    for (int64_t e : shape)
      sizes.push_back(b.getIndexAttr(e));
    offsets[dim] = lo;
    sizes[dim] = size;
    Value src = memref::SubViewOp::create(b, loc, copy.getSource(), offsets,
                                          sizes, strides);
    Value dst = memref::SubViewOp::create(b, loc, copy.getTarget(), offsets,
                                          sizes, strides);
    memref::CopyOp::create(b, loc, src, dst);
    copy.erase();
    return success();
  }

  /// A loop over a product's tiles: a slice of its iterations.
  LogicalResult splitLoop(scf::ForOp loop) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0 || *ub < *lb)
      return failure();
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto [lo, size] = slice(b, loc, llvm::divideCeil(*ub - *lb, *step), 1);
    Value stepValue = arith::ConstantIndexOp::create(b, loc, *step);
    Value base = arith::ConstantIndexOp::create(b, loc, *lb);
    Value begin = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, lo, stepValue));
    Value end = arith::AddIOp::create(
        b, loc, begin, arith::MulIOp::create(b, loc, size, stepValue));
    loop.setLowerBound(begin);
    loop.setUpperBound(end);
    return success();
  }

  func::FuncOp fn;
  Value thread, threads, team;
  func::FuncOp barrierFn;
  llvm::DenseSet<Value> written, read;
};

/// The declaration of loom_team_barrier in \p module (made on first use).
func::FuncOp barrierDeclaration(ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(codegen::cpu::kTeamBarrier))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type index = b.getIndexType();
  auto fn = func::FuncOp::create(b, module.getLoc(),
                                 codegen::cpu::kTeamBarrier,
                                 b.getFunctionType({index}, {}));
  fn.setPrivate();
  return fn;
}

struct TeamKernels
    : public codegen::cpu::impl::LoomTeamKernelsBase<TeamKernels> {
  using LoomTeamKernelsBase::LoomTeamKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, scf::ForOp>> kernels;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.isPrivate() ||
          !fn.getBody().front().getOps<scf::ForallOp>().empty())
        continue;
      if (scf::ForOp loop = teamLoop(fn);
          loop && invariantStepBytes(loop) >= minStepBytes)
        kernels.push_back({fn, loop});
    }
    if (kernels.empty())
      return;
    func::FuncOp barrier = barrierDeclaration(module);
    MLIRContext *context = &getContext();
    for (auto [fn, loop] : kernels) {
      hoistStepAllocations(loop);
      Block &body = fn.getBody().front();
      // The buffers no thread writes may still be `noalias` (the kernel's
      // entry point leaves the others without it: KernelCodegen.cpp).
      llvm::DenseSet<Value> written;
      for (Operation &op : body)
        for (Value v : touched(&op).writes)
          written.insert(v);
      for (BlockArgument arg : body.getArguments())
        if (isa<MemRefType>(arg.getType()) && !written.contains(arg))
          fn.setArgAttr(arg.getArgNumber(), LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(context));
      Type index = IndexType::get(context);
      unsigned n = fn.getNumArguments();
      Location loc = fn.getLoc();
      if (failed(fn.insertArguments({n, n, n}, {index, index, index},
                                    {{}, {}, {}}, {loc, loc, loc})))
        return signalPassFailure();
      TeamRewriter rewriter(fn, body.getArgument(n), body.getArgument(n + 1),
                            body.getArgument(n + 2), barrier);
      rewriter.rewriteBlock(body, loop);
      fn->setAttr(codegen::cpu::kTeamAttr, UnitAttr::get(context));
      fn->setAttr("loom.range",
                  IntegerAttr::get(IntegerType::get(context, 64), 1));
    }
  }
};

/// Field \p index of the team \p team points to (a function pointer).
Value teamField(OpBuilder &b, Location loc, Value team, int64_t index) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value field = LLVM::GEPOp::create(b, loc, ptr, ptr, team,
                                    ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, ptr, field);
}

struct TeamCalls : public codegen::cpu::impl::LoomTeamCallsBase<TeamCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    auto voidType = LLVM::LLVMVoidType::get(context);
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!fn->hasAttr(codegen::cpu::kTeamAttr))
        continue;
      if (fn.isExternal() || fn.getNumArguments() == 0 ||
          fn.getArgument(fn.getNumArguments() - 1).getType() != i64) {
        fn.emitOpError("is a team kernel without its team argument");
        return signalPassFailure();
      }
      Value teamInt = fn.getArgument(fn.getNumArguments() - 1);
      SmallVector<LLVM::CallOp> calls;
      fn.walk([&](LLVM::CallOp call) {
        if (std::optional<StringRef> callee = call.getCallee();
            callee && (*callee == codegen::cpu::kTeamBarrier ||
                       *callee == kAlloc || *callee == kFree))
          calls.push_back(call);
      });
      for (LLVM::CallOp call : calls) {
        OpBuilder b(call);
        Location loc = call.getLoc();
        Value team = LLVM::IntToPtrOp::create(b, loc, ptr, teamInt);
        StringRef callee = *call.getCallee();
        if (callee == codegen::cpu::kTeamBarrier) {
          LLVM::CallOp::create(b, loc,
                               LLVM::LLVMFunctionType::get(voidType, {ptr}),
                               ValueRange{teamField(b, loc, team, 0), team});
          call.erase();
          continue;
        }
        bool alloc = callee == kAlloc;
        Value target = LLVM::AddressOfOp::create(b, loc, ptr, callee);
        Type result = alloc ? Type(ptr) : Type(voidType);
        Type operand = alloc ? Type(i64) : Type(ptr);
        auto replacement = LLVM::CallOp::create(
            b, loc, LLVM::LLVMFunctionType::get(result, {ptr, ptr, operand}),
            ValueRange{teamField(b, loc, team, alloc ? 1 : 2), team, target,
                       call.getArgOperands().front()});
        call->replaceAllUsesWith(replacement->getResults());
        call.erase();
      }
    }
    if (auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(
            codegen::cpu::kTeamBarrier);
        decl && SymbolTable::symbolKnownUseEmpty(decl, module))
      decl.erase();
  }
};

} // namespace
