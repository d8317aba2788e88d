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

#include "StepAllocations.h"
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
using codegen::cpu::hoistStepAllocations;

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

/// The part of a buffer one thread of a team touches in an op. Sliced
/// (`dim` >= 0): positions of dimension `dim` of `view` in the thread's
/// slice of `[0, size)` cut in multiples of `grain` (TeamRewriter::slice:
/// the same positions for every op with the same four, and disjoint from
/// every other thread's); otherwise anywhere.
struct Part {
  Value view;
  int64_t dim = -1, size = 0, grain = 1;
  bool sliced() const { return dim >= 0; }
  bool operator==(const Part &other) const {
    return view == other.view && dim == other.dim && size == other.size &&
           grain == other.grain;
  }
};

/// A read or write of buffer `base` (baseOf a view) by one thread.
struct Access {
  Value base;
  Part part;
  bool write;
};

/// The product of the static sizes \p dims of \p type; 0 if one is dynamic.
int64_t staticProduct(MemRefType type, ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      return 0;
    product *= type.getDimSize(d);
  }
  return product;
}

/// \p part as a part of the view its view reshapes, while it stays one
/// slice: a slice of whole rows of a collapsed group is a slice of the
/// group's outermost source dimension, and a slice of the outermost
/// dimension of an expanded group one of its source dimension. So two ops
/// that see a buffer through different shapes (a product's tiles
/// `[2, 24, 128]`, the elementwise op after it `[2, 3072]`) may still
/// touch the same part of it.
Part normalized(Part part) {
  while (part.sliced()) {
    if (auto collapse = part.view.getDefiningOp<memref::CollapseShapeOp>()) {
      ReassociationIndices group = collapse.getReassociationIndices()[part.dim];
      int64_t inner =
          staticProduct(collapse.getSrcType(), ArrayRef(group).drop_front());
      if (inner == 0 || part.size % inner != 0 || part.grain % inner != 0)
        break;
      part = {collapse.getSrc(), group.front(), part.size / inner,
              part.grain / inner};
      continue;
    }
    if (auto expand = part.view.getDefiningOp<memref::ExpandShapeOp>()) {
      auto groups = expand.getReassociationIndices();
      auto group = llvm::find_if(groups, [&](const ReassociationIndices &g) {
        return g.front() == part.dim;
      });
      if (group == groups.end())
        break;
      int64_t inner =
          staticProduct(expand.getResultType(), ArrayRef(*group).drop_front());
      if (inner == 0)
        break;
      part = {expand.getSrc(), int64_t(group - groups.begin()),
              part.size * inner, part.grain * inner};
      continue;
    }
    break;
  }
  return part;
}

/// Whether distinct positions of the view \p v are distinct elements of
/// its buffer: views made by subviews of positive constant strides,
/// reshapes and casts (a reinterpret_cast may repeat elements).
bool injectiveView(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    if (auto sub = dyn_cast<memref::SubViewOp>(view.getOperation())) {
      if (llvm::any_of(sub.getStaticStrides(),
                       [](int64_t stride) { return stride <= 0; }))
        return false;
    } else if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp,
                    memref::CastOp>(view.getOperation())) {
      return false;
    }
    v = view.getViewSource();
  }
  return true;
}

/// Reads and writes of \p part's view with the part \p part (anywhere
/// where the view may repeat elements).
void addAccess(SmallVectorImpl<Access> &accesses, Part part, bool read,
               bool write) {
  Value base = baseOf(part.view);
  part = injectiveView(part.view) ? normalized(part) : Part{part.view};
  if (read)
    accesses.push_back({base, part, false});
  if (write)
    accesses.push_back({base, part, true});
}

/// What \p op reads and writes, anywhere in each buffer.
SmallVector<Access> wholeAccesses(Operation *op) {
  Touched t = touched(op);
  SmallVector<Access> accesses;
  for (Value v : t.reads)
    accesses.push_back({v, Part{v}, false});
  for (Value v : t.writes)
    accesses.push_back({v, Part{v}, true});
  return accesses;
}

/// How the team cuts a linalg op (its loop `dim`) or a copy (its dimension
/// `dim`): each thread its slice in multiples of `grain`.
struct Cut {
  int64_t dim = -1, grain = 16;
  bool operator==(const Cut &other) const {
    return dim == other.dim && grain == other.grain;
  }
};

/// The dimension of each memref operand of \p op that its loop or
/// dimension \p dim indexes alone (-1 where none does, or another loop
/// indexes it too): the operand's positions a cut of \p dim slices.
SmallVector<std::pair<OpOperand *, int64_t>> cutOperands(Operation *op,
                                                         int64_t dim) {
  SmallVector<std::pair<OpOperand *, int64_t>> result;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (!linalgOp) { // a copy: the same dimension of both
      result.push_back({&operand, dim});
      continue;
    }
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    int64_t position = -1, uses = 0;
    for (auto [i, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(dim)) {
        ++uses;
        if (isa<AffineDimExpr>(expr))
          position = int64_t(i);
      }
    result.push_back({&operand, uses == 1 ? position : -1});
  }
  return result;
}

/// The extent a cut of \p op's loop or dimension \p dim slices.
int64_t cutExtent(Operation *op, int64_t dim) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.getStaticLoopRanges()[dim];
  return cast<MemRefType>(cast<memref::CopyOp>(op).getSource().getType())
      .getDimSize(dim);
}

/// What a thread reads and writes of a linalg op or copy cut by \p cut.
SmallVector<Access> cutAccesses(Operation *op, Cut cut) {
  SmallVector<Access> accesses;
  int64_t extent = cutExtent(op, cut.dim);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  for (auto [operand, position] : cutOperands(op, cut.dim)) {
    Part part{operand->get()};
    if (position >= 0)
      part = {operand->get(), position, extent, cut.grain};
    bool init = linalgOp ? linalgOp.isDpsInit(operand)
                         : operand->getOperandNumber() == 1;
    bool read =
        !init || (linalgOp && linalgOp.payloadUsesValueFromOperand(operand));
    addAccess(accesses, part, read, init);
  }
  return accesses;
}

/// What a thread reads and writes of a product's tile loop (marked
/// `loom.parallel_tiles`, from 0 in constant steps) cut into slices of its
/// iterations: where every access of a buffer (vector transfers, loads and
/// stores of a view defined outside the loop) indexes one dimension of it
/// by the induction variable, over at most a step, the slice of that
/// dimension with the step as its grain; any other buffer anywhere.
SmallVector<Access> tileLoopAccesses(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  Value iv = loop.getInductionVar();
  // The part one access op touches: sliced, or anywhere.
  auto partOf = [&](Operation *op, Value view) -> Part {
    ValueRange indices;
    ArrayRef<int64_t> shape;
    if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
      if (read.getPermutationMap().isMinorIdentity())
        indices = read.getIndices(), shape = read.getVectorType().getShape();
    } else if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
      if (write.getPermutationMap().isMinorIdentity())
        indices = write.getIndices(), shape = write.getVectorType().getShape();
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      indices = load.getIndices();
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      indices = store.getIndices();
    }
    auto position = llvm::find(indices, iv);
    if (!lb || *lb != 0 || !ub || !step || *step <= 0 ||
        position == indices.end() || llvm::count(indices, iv) != 1 ||
        loop->isAncestor(view.getParentBlock()->getParentOp()))
      return Part{view};
    int64_t dim = position - indices.begin();
    int64_t vectorDim = dim - int64_t(indices.size() - shape.size());
    if (vectorDim >= 0 && shape[vectorDim] > *step)
      return Part{view};
    int64_t trips = llvm::divideCeil(*ub, *step);
    return Part{view, dim, trips * *step, *step};
  };
  if (!touched(loop).known)
    return wholeAccesses(loop);
  llvm::MapVector<std::pair<Value, unsigned>, Part> parts;
  loop.getBody()->walk([&](MemoryEffectOpInterface op) {
    SmallVector<MemoryEffects::EffectInstance> list;
    op.getEffects(list);
    for (auto &e : list) {
      bool write = isa<MemoryEffects::Write>(e.getEffect());
      if (!e.getValue() || !(write || isa<MemoryEffects::Read>(e.getEffect())))
        continue;
      Value base = baseOf(e.getValue());
      if (loop->isAncestor(base.getParentBlock()->getParentOp()))
        continue; // allocated inside
      Part part = injectiveView(e.getValue())
                      ? normalized(partOf(op, e.getValue()))
                      : Part{e.getValue()};
      auto [it, inserted] = parts.try_emplace({base, unsigned(write)}, part);
      if (!inserted && !(it->second == part))
        it->second = Part{base};
    }
  });
  SmallVector<Access> accesses;
  for (auto &[key, part] : parts)
    accesses.push_back({key.first, part, key.second != 0});
  return accesses;
}

/// Runs the tile loop \p loop, `[begin, end)` in steps of \p step,
/// backwards in every other step of the recurrence around it: each step
/// then starts on the tiles the previous one read last, which the
/// thread's L2 still holds, instead of on those it read first, which the
/// rest of its slice evicted. Each tile computes what it did; only their
/// order changes. (A thread streaming 4.7 MB of tiles a step, two
/// threads, loaded VM: median step 4-6% shorter.)
void alternate(scf::ForOp loop, Value begin, Value end, Value step) {
  auto outer = loop->getParentOfType<scf::ForOp>();
  if (!outer)
    return;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, outer.getInductionVar(),
                            outer.getLowerBound()),
      outer.getStep());
  Value odd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, count, one),
      arith::ConstantIndexOp::create(b, loc, 0));
  Value last = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, begin, end), step);
  Value iv = loop.getInductionVar();
  b.setInsertionPointToStart(loop.getBody());
  Value mirrored = arith::SubIOp::create(b, loc, last, iv);
  Value tile = arith::SelectOp::create(b, loc, odd, mirrored, iv);
  SmallPtrSet<Operation *, 2> keep{mirrored.getDefiningOp(),
                                   tile.getDefiningOp()};
  iv.replaceAllUsesExcept(tile, keep);
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
        if (&block != &fn.getBody().front() && !since.empty())
          barrier(OpBuilder(&op), op.getLoc());
        continue;
      }
      if (&op == loop.getOperation()) {
        if (!since.empty())
          barrier(OpBuilder(&op), op.getLoc());
        rewriteBlock(*loop.getBody(), loop);
        continue;
      }
      // An allocation and a free wait for the whole team (LoomTeamCalls).
      if (isa<memref::AllocOp, memref::DeallocOp>(op)) {
        since.clear();
        continue;
      }
      rewriteOp(&op);
    }
  }

private:
  /// Cuts \p op (where it writes) into the thread's part, after a barrier
  /// where that part may touch what another thread's parts of the ops
  /// since the last barrier did.
  void rewriteOp(Operation *op) {
    Touched t = touched(op);
    if (t.reads.empty() && t.writes.empty())
      return;
    // Where the op was (partition replaces it).
    Block *block = op->getBlock();
    Operation *previous = op->getPrevNode();
    Location loc = op->getLoc();
    SmallVector<Access> accesses =
        t.writes.empty() ? wholeAccesses(op) : partition(op);
    if (hazard(accesses)) {
      OpBuilder b(fn.getContext());
      if (previous)
        b.setInsertionPointAfter(previous);
      else
        b.setInsertionPointToStart(block);
      barrier(b, loc);
    }
    for (const Access &access : accesses)
      since[access.base].push_back(access);
  }

  void barrier(OpBuilder b, Location loc) {
    func::CallOp::create(b, loc, barrierFn, ValueRange{team});
    since.clear();
  }

  /// Whether two threads' \p a and \p b may touch the same element, one
  /// of them writing.
  static bool conflict(const Access &a, const Access &b) {
    return a.base == b.base && (a.write || b.write) &&
           !(a.part.sliced() && a.part == b.part);
  }

  /// How many of \p accesses conflict with one of \p others.
  static int64_t conflicts(ArrayRef<Access> accesses, ArrayRef<Access> others) {
    return llvm::count_if(accesses, [&](const Access &a) {
      return llvm::any_of(others,
                          [&](const Access &b) { return conflict(a, b); });
    });
  }

  bool hazard(ArrayRef<Access> accesses) const {
    return llvm::any_of(accesses, [&](const Access &a) {
      auto it = since.find(a.base);
      return it != since.end() && conflicts(ArrayRef(a), it->second) != 0;
    });
  }

  /// Cuts \p op into the calling thread's part; returns what that part
  /// touches.
  SmallVector<Access> partition(Operation *op) {
    if (isa<linalg::LinalgOp, memref::CopyOp>(op))
      if (std::optional<Cut> cut = chooseCut(op)) {
        SmallVector<Access> accesses = cutAccesses(op, *cut);
        if (succeeded(split(op, *cut)))
          return accesses;
      }
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && loop->hasAttr(codegen::cpu::kParallelTilesAttr)) {
      SmallVector<Access> accesses = tileLoopAccesses(loop);
      if (succeeded(splitLoop(loop)))
        return accesses;
    }
    onThreadZero(op);
    return wholeAccesses(op);
  }

  /// The dimensions a cut of \p op may slice: a linalg op's statically
  /// sized parallel loops, a statically shaped copy's dimensions.
  static SmallVector<int64_t> cuttableDims(Operation *op) {
    SmallVector<int64_t> dims;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (!isa<TilingInterface>(op) || !linalgOp.hasPureBufferSemantics())
        return dims;
      for (auto [i, kind, extent] :
           llvm::enumerate(linalgOp.getIteratorTypesArray(),
                           linalgOp.getStaticLoopRanges()))
        if (kind == utils::IteratorType::parallel &&
            !ShapedType::isDynamic(extent))
          dims.push_back(int64_t(i));
      return dims;
    }
    auto copy = cast<memref::CopyOp>(op);
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (type && target && type.hasStaticShape() && type.getRank() != 0 &&
        target.getShape() == type.getShape())
      llvm::append_range(dims, llvm::seq<int64_t>(0, type.getRank()));
    return dims;
  }

  /// The accesses of the next product's tile loop in \p op's block before
  /// any allocation, free or other loop: a cut of \p op that touches the
  /// same parts needs no barrier before it.
  static SmallVector<Access> nextTileLoopAccesses(Operation *op) {
    for (Operation *next = op->getNextNode(); next;
         next = next->getNextNode()) {
      if (isa<memref::AllocOp, memref::DeallocOp>(next) ||
          next->hasTrait<OpTrait::IsTerminator>())
        break;
      if (auto loop = dyn_cast<scf::ForOp>(next)) {
        if (loop->hasAttr(codegen::cpu::kParallelTilesAttr))
          return tileLoopAccesses(loop);
        break;
      }
    }
    return {};
  }

  /// How to cut \p op: its largest dimension in multiples of 16, unless
  /// another dimension or grain makes its part of an operand the part an
  /// op since the last barrier touched, or the part the next product's tile
  /// loop will, so that fewer barriers are needed (the fewest conflicts
  /// with the ops since the last barrier first, then with that loop).
  std::optional<Cut> chooseCut(Operation *op) {
    SmallVector<int64_t> dims = cuttableDims(op);
    if (dims.empty())
      return std::nullopt;
    SmallVector<Cut> candidates{
        {*llvm::max_element(dims, [&](int64_t a, int64_t b) {
          return cutExtent(op, a) < cutExtent(op, b);
        })}};
    SmallVector<Access> next = nextTileLoopAccesses(op);
    for (int64_t dim : dims) {
      int64_t extent = cutExtent(op, dim);
      for (auto [use, at] : cutOperands(op, dim)) {
        OpOperand *operand = use;
        int64_t position = at;
        if (position < 0)
          continue;
        Value base = baseOf(operand->get());
        auto consider = [&](const Access &other) {
          const Part &target = other.part;
          if (other.base != base || !target.sliced() ||
              (target.grain * extent) % target.size != 0)
            return;
          Cut cut{dim, target.grain * extent / target.size};
          if (normalized({operand->get(), position, extent, cut.grain}) ==
                  target &&
              !llvm::is_contained(candidates, cut))
            candidates.push_back(cut);
        };
        if (auto it = since.find(base); it != since.end())
          llvm::for_each(it->second, consider);
        llvm::for_each(next, consider);
      }
    }
    auto cost = [&](Cut cut) {
      SmallVector<Access> accesses = cutAccesses(op, cut);
      return std::make_pair(hazard(accesses), conflicts(accesses, next));
    };
    return *llvm::min_element(candidates,
                              [&](Cut a, Cut b) { return cost(a) < cost(b); });
  }

  LogicalResult split(Operation *op, Cut cut) {
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      return splitCopy(copy, cut);
    return splitLinalg(cast<linalg::LinalgOp>(op), cut);
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

  void onThreadZero(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, thread,
        arith::ConstantIndexOp::create(b, loc, 0));
    auto guard = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    op->moveBefore(guard.thenBlock()->getTerminator());
  }

  /// Loop \p cut.dim of \p op, cut into one slice per thread.
  LogicalResult splitLinalg(linalg::LinalgOp op, Cut cut) {
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    OpBuilder b(op);
    auto [lo, size] = slice(b, op.getLoc(), extents[cut.dim], cut.grain);
    SmallVector<OpFoldResult> offsets(extents.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t e : extents)
      sizes.push_back(b.getIndexAttr(e));
    offsets[cut.dim] = lo;
    sizes[cut.dim] = size;
    FailureOr<TilingResult> tiled =
        cast<TilingInterface>(op.getOperation())
            .getTiledImplementation(b, offsets, sizes);
    if (failed(tiled))
      return failure();
    op->erase();
    return success();
  }

  /// Dimension \p cut.dim of a statically shaped copy, cut likewise.
  LogicalResult splitCopy(memref::CopyOp copy, Cut cut) {
    ArrayRef<int64_t> shape =
        cast<MemRefType>(copy.getSource().getType()).getShape();
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    auto [lo, size] = slice(b, loc, shape[cut.dim], cut.grain);
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
        sizes, strides(shape.size(), b.getIndexAttr(1));
    for (int64_t e : shape)
      sizes.push_back(b.getIndexAttr(e));
    offsets[cut.dim] = lo;
    sizes[cut.dim] = size;
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
    alternate(loop, begin, end, stepValue);
    return success();
  }

  func::FuncOp fn;
  Value thread, threads, team;
  func::FuncOp barrierFn;
  /// What each buffer's accesses since the last barrier were.
  llvm::DenseMap<Value, SmallVector<Access, 2>> since;
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

/// A kernel one thread runs (not a team's: several recurrences run as
/// tasks, or one whose step reads less than \p minStepBytes of weights, or
/// whose step a team cannot share) still streams the weights of each
/// recurrence whose step reads at least \p minStepBytes of them: its tile
/// loops alternate direction as a team's do.
void alternateTasks(func::FuncOp fn, int64_t minStepBytes) {
  for (auto loop : fn.getBody().front().getOps<scf::ForOp>()) {
    if (invariantStepBytes(loop) < minStepBytes)
      continue;
    for (auto tiles : loop.getBody()->getOps<scf::ForOp>()) {
      std::optional<int64_t> lb = getConstantIntValue(tiles.getLowerBound()),
                             ub = getConstantIntValue(tiles.getUpperBound()),
                             step = getConstantIntValue(tiles.getStep());
      if (tiles->hasAttr(codegen::cpu::kParallelTilesAttr) && lb && ub &&
          step && *step > 0 && *ub > *lb && (*ub - *lb) % *step == 0)
        alternate(tiles, tiles.getLowerBound(), tiles.getUpperBound(),
                  tiles.getStep());
    }
  }
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
      else
        alternateTasks(fn, minStepBytes);
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
