//===- Selections.cpp - The selection kernel class ------------------------===//
//
// Part of Loom. See the description of LoomGPUMapSelections in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes", "Selections").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "Launches.h"

#include "loom/Conversion/TGToLinalg/DynamicOrder.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPSELECTIONS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom;
using namespace loom::codegen::gpu;


namespace {

/// What a workgroup scan gives each thread: the sum over the threads before
/// it, and over all.
struct Scan {
  Value exclusive, total;
};

/// Scalar, memory, control-flow and workgroup ops of the selection kernels,
/// built at an ImplicitLocOpBuilder's insertion point.
struct Builder : tg::ScalarOps {
  using LoopBody =
      llvm::function_ref<SmallVector<Value>(Builder &, Value, ValueRange)>;

  Value load(Value memref, ValueRange indices) {
    return memref::LoadOp::create(b, memref, indices);
  }
  void store(Value v, Value memref, ValueRange indices) {
    memref::StoreOp::create(b, v, memref, indices);
  }
  void barrier() { mlir::gpu::BarrierOp::create(b); }

  /// scf.for over [lb, ub) by \p step carrying \p init.
  SmallVector<Value> forLoop(Value lb, Value ub, Value step, ValueRange init,
                             LoopBody body) {
    auto loop = scf::ForOp::create(
        b, lb, ub, step, init,
        [&](OpBuilder &nb, Location loc, Value iv, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, nb);
          Builder inner{ib};
          scf::YieldOp::create(ib, body(inner, iv, args));
        });
    return SmallVector<Value>(loop.getResults());
  }
  /// The positions tid, tid + threads, ... below \p ub.
  void strided(Value tid, int64_t threads, Value ub,
               llvm::function_ref<void(Builder &, Value)> body) {
    forLoop(tid, ub, index(threads), {},
            [&](Builder &ib, Value i, ValueRange) {
              body(ib, i);
              return SmallVector<Value>{};
            });
  }
  void ifThen(Value cond, llvm::function_ref<void(Builder &)> then) {
    scf::IfOp::create(b, cond, [&](OpBuilder &nb, Location loc) {
      ImplicitLocOpBuilder ib(loc, nb);
      Builder inner{ib};
      then(inner);
      scf::YieldOp::create(ib);
    });
  }

  /// A Hillis-Steele scan of each thread's i32 \p v over the workgroup's
  /// \p threads threads, in \p shared (workgroup memory of one i32 per
  /// thread), its log2(threads) steps unrolled: no loop. Every thread must
  /// reach it; \p shared is free again when it returns.
  Scan workgroupScan(Value shared, Value tid, int64_t threads, Value v) {
    store(v, shared, tid);
    barrier();
    for (int64_t d = 1; d < threads; d *= 2) {
      Value has = cmp(arith::CmpIPredicate::uge, tid, index(d));
      Value from = select(has, sub(tid, index(d)), index(0));
      Value mine = load(shared, tid);
      Value other = select(has, load(shared, from), i32(0));
      barrier();
      store(add(mine, other), shared, tid);
      barrier();
    }
    Value inclusive = load(shared, tid);
    Value total = load(shared, index(threads - 1));
    barrier();
    return {sub(inclusive, v), total};
  }
};

/// The buffer of \p tensor (read only).
Value bufferOf(ImplicitLocOpBuilder &b, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

/// A buffer for the result \p result and the tensor it becomes after the
/// launches, which replaces \p result's uses.
Value resultBuffer(ImplicitLocOpBuilder &b, Value result,
                   SmallVectorImpl<std::pair<Value, Value>> &results) {
  auto type = cast<RankedTensorType>(result.getType());
  Value buffer = memref::AllocOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()));
  results.push_back({result, buffer});
  return buffer;
}

/// Replaces each result of \p op by its buffer as a tensor after \p last
/// (its last launch), and erases \p op.
LogicalResult replaceOp(ImplicitLocOpBuilder &fb, Operation *last,
                        ArrayRef<std::pair<Value, Value>> results,
                        Operation *op) {
  fb.setInsertionPointAfter(last);
  for (auto [result, buffer] : results)
    result.replaceAllUsesWith(bufferization::ToTensorOp::create(
        fb, result.getType(), buffer, /*restrict=*/true, /*writable=*/true));
  op->erase();
  return success();
}

/// Where \p leader holds (one thread of the launch), stores \p n (an
/// index) into the op's rank-0 i64 count buffer \p count.
void storeCount(Builder &k, Value leader, Value n, Value count) {
  k.ifThen(leader, [&](Builder &tb) {
    tb.store(tb.toI64(n), count, {});
  });
}

/// The launch's thread id along x.
Value threadId(mlir::gpu::LaunchOp launch) {
  return launch.getThreadIds().x;
}

/// tg.nonzero as one workgroup: each thread counts the non-zero elements of
/// its contiguous chunk of ceil(n / threads), a workgroup scan gives each
/// chunk its first column, and each thread writes its elements' coordinates
/// there and zeros the padding columns of its chunk. Per thread: two loops
/// of the chunk's length.
LogicalResult mapNonZero(tg::NonZeroOp op, int64_t threads) {
  ImplicitLocOpBuilder fb(op.getLoc(), op);
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  int64_t n = inType.getNumElements(), rank = inType.getRank();
  int64_t chunk = llvm::divideCeil(n, threads);
  if (2 * chunk + 2 > kLoopBudget)
    return failure();
  Value input = bufferOf(fb, op.getInput());
  SmallVector<std::pair<Value, Value>> results;
  Value indices = resultBuffer(fb, op.getIndices(), results);
  Value count = resultBuffer(fb, op.getCount(), results);
  auto launch = createLaunch(fb, op.getLoc(), Grid{}, threads);
  ImplicitLocOpBuilder b(op.getLoc(), fb);
  Builder k{b};
  Value shared = allocWorkgroupMemory(b, b.getLoc(), {threads}, b.getI32Type());
  Value tid = threadId(launch);
  Value lo = k.minI(k.mul(tid, k.index(chunk)), k.index(n));
  Value hi = k.minI(k.add(lo, k.index(chunk)), k.index(n));
  Type elem = inType.getElementType();
  auto nonZero = [&](Builder &ib, Value i) -> Value {
    Value x = ib.load(input, delinearize(ib.b, ib.b.getLoc(), i,
                                         inType.getShape()));
    Value zero = arith::ConstantOp::create(ib.b, ib.b.getZeroAttr(elem));
    if (isa<FloatType>(elem))
      return arith::CmpFOp::create(ib.b, arith::CmpFPredicate::UNE, x, zero);
    return ib.cmp(arith::CmpIPredicate::ne, x, zero);
  };
  Value mine = k.forLoop(lo, hi, k.index(1), {k.i32(0)},
                         [&](Builder &ib, Value i, ValueRange acc) {
                           return SmallVector<Value>{ib.add(
                               acc[0], ib.oneIf(nonZero(ib, i),
                                                ib.b.getI32Type()))};
                         })[0];
  Scan scan = k.workgroupScan(shared, tid, threads, mine);
  Value total = k.toIndex(scan.total);
  k.forLoop(lo, hi, k.index(1), {k.toIndex(scan.exclusive)},
            [&](Builder &ib, Value i, ValueRange pos) {
              Value nz = nonZero(ib, i);
              ib.ifThen(nz, [&](Builder &tb) {
                SmallVector<Value> coords = delinearize(
                    tb.b, tb.b.getLoc(), i, inType.getShape());
                for (int64_t d = 0; d < rank; ++d)
                  tb.store(tb.cast(coords[d], tb.b.getI64Type()), indices,
                           {tb.index(d), pos[0]});
              });
              ib.ifThen(ib.cmp(arith::CmpIPredicate::sge, i, total),
                        [&](Builder &tb) {
                          Value zero = arith::ConstantIntOp::create(tb.b, 0, 64);
                          for (int64_t d = 0; d < rank; ++d)
                            tb.store(zero, indices, {tb.index(d), i});
                        });
              return SmallVector<Value>{
                  ib.add(pos[0], ib.oneIf(nz, ib.b.getIndexType()))};
            });
  storeCount(k, k.eq(tid, k.index(0)), total, count);
  return replaceOp(fb, launch, results, op);
}

} // namespace

namespace {

/// The most bytes of workgroup memory a selection kernel takes: Vulkan's
/// guaranteed maxComputeSharedMemorySize (16 KiB). A sort of more elements
/// runs in a scratch buffer in global memory instead.
constexpr int64_t kMaxSharedBytes = 16384;

/// The loop iterations of a bitonic sort of \p size (a power of 2) elements
/// by \p threads threads, per thread: the permutation's ceil(size /
/// threads) positions set, then the stages (log2(size) (log2(size) + 1) / 2)
/// and their loops, each stage ceil(size / 2 / threads) pairs.
int64_t sortBackEdges(int64_t size, int64_t threads) {
  int64_t levels = llvm::Log2_64(size);
  int64_t stages = levels * (levels + 1) / 2;
  return llvm::divideCeil(size, threads) + levels +
         stages * (1 + llvm::divideCeil(size / 2, threads));
}

/// A permutation being sorted: `size` (a power of 2) i32 positions in
/// workgroup memory, or in a global scratch row of its own per workgroup.
struct Permutation {
  Value memref;
  /// The workgroup's row of a scratch buffer; null in workgroup memory.
  Value row;
  int64_t size;
  SmallVector<Value> at(Value j) const {
    if (row)
      return {row, j};
    return {j};
  }
};

/// The permutation memory of a sort of \p size elements by \p rows
/// workgroups: workgroup memory where it fits (allocated at \p launchBody's
/// insertion point), else a scratch buffer of rows x size (allocated at
/// \p fn's, before the launch).
Permutation permutationFor(ImplicitLocOpBuilder &fn, int64_t size,
                           int64_t rows, Value &scratch) {
  if (size * 4 <= kMaxSharedBytes)
    return Permutation{Value(), Value(), size};
  scratch = memref::AllocOp::create(
      fn, MemRefType::get({rows, size}, fn.getI32Type()));
  return Permutation{scratch, Value(), size};
}

/// A range [first, last) of a bitonic sort's stages, numbered in the
/// order they run: stage u (0 .. level-1) of level L (1 .. log2 size) is
/// L (L - 1) / 2 + u.
struct Stages {
  int64_t first, last;
  /// The stages of a whole sort of \p size (a power of 2) elements.
  static Stages of(int64_t size) {
    int64_t levels = llvm::Log2_64(size);
    return {0, levels * (levels + 1) / 2};
  }
};

/// The level of stage \p stage and the stage's place in its level.
std::pair<int64_t, int64_t> levelOf(int64_t stage) {
  int64_t level = 1;
  while (level * (level + 1) / 2 <= stage)
    ++level;
  return {level, stage - level * (level - 1) / 2};
}

/// Sets \p perm to the positions 0 .. size-1 (every thread must reach it:
/// a barrier after).
void fillPermutation(Builder &k, const Permutation &perm, Value tid,
                     int64_t threads) {
  k.strided(tid, threads, k.index(perm.size), [&](Builder &ib, Value p) {
    ib.store(ib.cast(p, ib.b.getI32Type()), perm.memref, perm.at(p));
  });
  k.barrier();
}

/// Runs \p range of the stages of a bitonic sort of \p perm by \p before
/// (a strict total order on two positions, i32) with the workgroup's
/// \p threads threads, a barrier after each stage. Every thread must reach
/// it. A sort whose stages pass one launch's loop budget runs them in
/// several launches, its permutation in global memory between them.
void sortStages(Builder &k, const Permutation &perm, Value tid, int64_t threads,
                Stages range,
                llvm::function_ref<Value(Builder &, Value, Value)> before) {
  if (range.first >= range.last)
    return;
  bool whole = range.first == 0 && range.last == Stages::of(perm.size).last;
  std::pair<int64_t, int64_t> from = levelOf(range.first);
  std::pair<int64_t, int64_t> to = levelOf(range.last - 1);
  int64_t firstLevel = from.first, firstU = from.second;
  int64_t lastLevel = to.first, lastU = to.second;
  Value one = k.index(1);
  k.forLoop(k.index(firstLevel), k.index(lastLevel + 1), one, {},
            [&](Builder &lb, Value level, ValueRange) {
    Value size = arith::ShLIOp::create(lb.b, one, level);
    // The stages of this level in the range: all of them in a whole sort.
    Value lo = lb.index(0), hi = level;
    if (!whole) {
      lo = lb.select(lb.eq(level, lb.index(firstLevel)), lb.index(firstU), lo);
      hi = lb.select(lb.eq(level, lb.index(lastLevel)), lb.index(lastU + 1),
                     hi);
    }
    lb.forLoop(lo, hi, one, {}, [&](Builder &sb, Value u, ValueRange) {
      Value shift = sb.sub(sb.sub(level, one), u);
      Value stride = arith::ShLIOp::create(sb.b, one, shift);
      sb.strided(tid, threads, sb.index(perm.size / 2),
                 [&](Builder &pb, Value q) {
        Value low = arith::AndIOp::create(pb.b, q, pb.sub(stride, one));
        Value i = pb.sub(pb.add(q, q), low);
        Value j = pb.add(i, stride);
        Value a = pb.load(perm.memref, perm.at(i));
        Value c = pb.load(perm.memref, perm.at(j));
        Value up = pb.eq(arith::AndIOp::create(pb.b, i, size), pb.index(0));
        Value wrong = pb.select(up, before(pb, c, a), before(pb, a, c));
        pb.store(pb.select(wrong, c, a), perm.memref, perm.at(i));
        pb.store(pb.select(wrong, a, c), perm.memref, perm.at(j));
      });
      sb.barrier();
      return SmallVector<Value>{};
    });
    return SmallVector<Value>{};
  });
}

/// Sorts the positions 0 .. size-1 of \p perm by \p before (a strict
/// total order on two positions, i32) with the workgroup's \p threads
/// threads: a bitonic sort, a barrier after each of its stages. Every
/// thread must reach it.
void bitonicSort(Builder &k, const Permutation &perm, Value tid,
                 int64_t threads,
                 llvm::function_ref<Value(Builder &, Value, Value)> before) {
  fillPermutation(k, perm, tid, threads);
  sortStages(k, perm, tid, threads, Stages::of(perm.size), before);
}

/// The valid length of an optional length operand's buffer, as an index
/// clamped to [0, bound]; \p bound without one.
Value validLength(Builder &k, Value buffer, int64_t bound) {
  if (!buffer)
    return k.index(bound);
  Value v = k.toIndex(k.load(buffer, {}));
  return k.minI(k.maxI(v, k.index(0)), k.index(bound));
}

/// Positions \p a and \p c (i32) in the order of a selection: those that
/// take part (\p aIn, \p cIn) first, in the order \p inOrder, then the
/// others by position.
Value orderedBefore(Builder &k, Value a, Value c, Value aIn, Value cIn,
                    llvm::function_ref<Value(Builder &, Value, Value)> inOrder) {
  Value rest = k.orI(aIn, k.andI(k.notI(cIn), k.lt(a, c)));
  return k.select(k.andI(aIn, cIn), inOrder(k, a, c), rest);
}

/// A tg.topk's lines (the positions along the axis for one position of the
/// other dimensions) and the buffers its launches share.
struct TopK {
  int64_t dim, k, lines, inner, threads;
  SmallVector<int64_t> outerShape, innerShape;
  bool largest;
  Value input, validBuf;

  /// The indices of position \p p of line \p line in an input or result.
  SmallVector<Value> at(Builder &k, Value line, Value p) const {
    SmallVector<Value> idx = delinearize(
        k.b, k.b.getLoc(), arith::DivUIOp::create(k.b, line, k.index(inner)),
        outerShape);
    idx.push_back(p);
    llvm::append_range(
        idx, delinearize(k.b, k.b.getLoc(),
                         arith::RemUIOp::create(k.b, line, k.index(inner)),
                         innerShape));
    return idx;
  }
  /// The value at position \p p (i32, clamped into the line) of \p line.
  Value valueAt(Builder &k, Value line, Value p) const {
    Value pos = k.minI(k.toIndex(p), k.index(dim - 1));
    return k.load(input, at(k, line, pos));
  }
  /// Whether position \p a (i32) of \p line comes before position \p c:
  /// those before \p valid first, by the op's order (DynamicOrder.h's
  /// before), then the others by position.
  Value before(Builder &k, Value line, Value valid, Value a, Value c) const {
    Value validI = k.cast(valid, k.b.getI32Type());
    return orderedBefore(k, a, c, k.lt(a, validI), k.lt(c, validI),
                         [&](Builder &ob, Value x, Value y) {
      return loom::tg::buildBefore(ob.b, largest, valueAt(ob, line, x), x,
                                   valueAt(ob, line, y), y);
    });
  }
  /// The loop iterations per thread of a launch that sorts \p size entries
  /// and writes \p picks of them.
  int64_t backEdges(int64_t size, int64_t picks) const {
    return sortBackEdges(size, threads) + llvm::divideCeil(picks, threads) + 1;
  }
};

/// A line of a top-k cut into chunks of `length` (a power of 2) positions
/// whose first `picks` (min(k, length)) are its candidates: `chunks x picks`
/// candidates per line, which hold the line's first k.
struct Chunks {
  int64_t length = 0, count = 1, picks = 0;
  int64_t candidates() const { return count * picks; }
};

/// The chunking of \p t's lines whose two sorts (the chunks', then the
/// candidates') stay within the loop budget, of the fewest loop iterations
/// per thread of the two launches together (the chunks' workgroups run
/// side by side: the longest path); none when a line fits one sort.
FailureOr<std::optional<Chunks>> chunkingFor(const TopK &t) {
  int64_t whole = llvm::PowerOf2Ceil(t.dim);
  if (t.backEdges(whole, t.k) <= kLoopBudget)
    return std::optional<Chunks>();
  std::optional<Chunks> best;
  int64_t bestPath = 0;
  for (int64_t length = 2; length < whole; length *= 2) {
    Chunks c{length, llvm::divideCeilSigned(t.dim, length),
             std::min(t.k, length)};
    int64_t first = t.backEdges(length, c.picks);
    int64_t second = t.backEdges(llvm::PowerOf2Ceil(c.candidates()), t.k);
    if (first > kLoopBudget || second > kLoopBudget ||
        failed(gridFor(t.lines * c.count)))
      continue;
    if (!best || first + second < bestPath) {
      best = c;
      bestPath = first + second;
    }
  }
  if (!best)
    return failure();
  return best;
}

/// Launch 1 of a chunked top-k, a workgroup per (line, chunk): the chunk's
/// positions sorted by \p t's order, its first `picks` written to
/// \p candidates (lines x candidates, i32 positions in the line).
void emitChunkSorts(ImplicitLocOpBuilder &fb, const TopK &t, const Chunks &c,
                    Value candidates) {
  int64_t workgroups = t.lines * c.count;
  FailureOr<Grid> grid = gridFor(workgroups);
  Value scratch;
  Permutation perm = permutationFor(fb, c.length, workgroups, scratch);
  auto launch = createLaunch(fb, fb.getLoc(), *grid, t.threads);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  if (!scratch)
    perm.memref =
        allocWorkgroupMemory(b, b.getLoc(), {c.length}, b.getI32Type());
  Value tid = threadId(launch);
  Value block = linearBlockId(b, b.getLoc(), launch, *grid);
  Value id = k.minI(block, k.index(workgroups - 1));
  if (scratch)
    perm.row = id;
  Value line = arith::DivUIOp::create(b, id, k.index(c.count));
  Value chunk = arith::RemUIOp::create(b, id, k.index(c.count));
  Value first = k.cast(k.mul(chunk, k.index(c.length)), b.getI32Type());
  Value valid = validLength(k, t.validBuf, t.dim);
  bitonicSort(k, perm, tid, t.threads, [&](Builder &ib, Value a, Value x) {
    return t.before(ib, line, valid, ib.add(first, a), ib.add(first, x));
  });
  k.ifThen(k.lt(block, k.index(workgroups)), [&](Builder &ob) {
    ob.strided(tid, t.threads, ob.index(c.picks), [&](Builder &jb, Value j) {
      Value p = jb.add(first, jb.load(perm.memref, perm.at(j)));
      jb.store(p, candidates,
               {line, jb.add(jb.mul(chunk, jb.index(c.picks)), j)});
    });
  });
  fb.setInsertionPointAfter(launch);
}

/// tg.topk as a workgroup per line: a bitonic sort of the line's positions
/// (or of its chunks' candidates, \p chunks) padded to a power of 2 by the
/// op's order (padding and positions past `valid` last), then the first
/// min(k, valid) of them written out and the rest zeros.
Operation *emitLineSorts(ImplicitLocOpBuilder &fb, const TopK &t,
                         const std::optional<Chunks> &chunks,
                         Value candidates, Value values, Value indices,
                         Value count) {
  int64_t entries = chunks ? chunks->candidates() : t.dim;
  int64_t size = llvm::PowerOf2Ceil(entries);
  FailureOr<Grid> grid = gridFor(t.lines);
  Value scratch;
  Permutation perm = permutationFor(fb, size, t.lines, scratch);
  auto launch = createLaunch(fb, fb.getLoc(), *grid, t.threads);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  if (!scratch)
    perm.memref = allocWorkgroupMemory(b, b.getLoc(), {size}, b.getI32Type());
  Value tid = threadId(launch);
  Value block = linearBlockId(b, b.getLoc(), launch, *grid);
  Value line = k.minI(block, k.index(t.lines - 1));
  if (scratch)
    perm.row = line;
  Value valid = validLength(k, t.validBuf, t.dim);
  Value taken = k.minI(valid, k.index(t.k));
  // Entry e's position in the line: a candidate's, or e itself; padding
  // entries past the candidates are positions past the line (last).
  auto position = [&](Builder &ib, Value e) -> Value {
    if (!chunks)
      return e;
    Value at = ib.minI(ib.toIndex(e), ib.index(entries - 1));
    Value p = ib.load(candidates, {line, at});
    return ib.select(ib.lt(e, ib.i32(entries)), p, ib.i32(t.dim));
  };
  bitonicSort(k, perm, tid, t.threads, [&](Builder &ib, Value a, Value c) {
    return t.before(ib, line, valid, position(ib, a), position(ib, c));
  });
  Type elem = cast<MemRefType>(values.getType()).getElementType();
  k.ifThen(k.lt(block, k.index(t.lines)), [&](Builder &ob) {
    ob.strided(tid, t.threads, ob.index(t.k), [&](Builder &jb, Value j) {
      Value live = jb.lt(j, taken);
      Value e = jb.load(perm.memref, perm.at(jb.minI(j, jb.index(size - 1))));
      Value p = position(jb, e);
      Value zero = arith::ConstantOp::create(jb.b, jb.b.getZeroAttr(elem));
      Value v = jb.select(live, t.valueAt(jb, line, p), zero);
      Value wide = arith::ExtSIOp::create(jb.b, jb.b.getI64Type(), p);
      Value idx =
          jb.select(live, wide, arith::ConstantIntOp::create(jb.b, 0, 64));
      jb.store(v, values, t.at(jb, line, j));
      jb.store(idx, indices, t.at(jb, line, j));
    });
  });
  storeCount(k, k.andI(k.eq(block, k.index(0)), k.eq(tid, k.index(0))),
             taken, count);
  return launch;
}

/// tg.topk: a launch of a workgroup per line (emitLineSorts); a line whose
/// sort would pass the loop budget is cut into chunks sorted by a launch
/// before it (emitChunkSorts), whose candidates it sorts instead.
LogicalResult mapTopK(tg::TopKOp op, int64_t threads) {
  ImplicitLocOpBuilder fb(op.getLoc(), op);
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = inType.getRank();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  ArrayRef<int64_t> shape = inType.getShape();
  TopK t{shape[axis], static_cast<int64_t>(op.getK()), 1, 1, threads,
         SmallVector<int64_t>(shape.take_front(axis)),
         SmallVector<int64_t>(shape.drop_front(axis + 1)), op.getLargest(),
         Value(), Value()};
  for (int64_t d : t.outerShape)
    t.lines *= d;
  for (int64_t d : t.innerShape)
    t.inner *= d;
  t.lines *= t.inner;
  if (t.dim < 1 || t.dim > std::numeric_limits<int32_t>::max() / 2 ||
      failed(gridFor(t.lines)))
    return failure();
  FailureOr<std::optional<Chunks>> chunks = chunkingFor(t);
  if (failed(chunks))
    return failure();
  t.input = bufferOf(fb, op.getInput());
  t.validBuf = op.getValid() ? bufferOf(fb, op.getValid()) : Value();
  SmallVector<std::pair<Value, Value>> results;
  Value values = resultBuffer(fb, op.getValues(), results);
  Value indices = resultBuffer(fb, op.getIndices(), results);
  Value count = resultBuffer(fb, op.getCount(), results);
  Value candidates;
  if (*chunks) {
    candidates = memref::AllocOp::create(
        fb, MemRefType::get({t.lines, (*chunks)->candidates()},
                            fb.getI32Type()));
    emitChunkSorts(fb, t, **chunks, candidates);
  }
  Operation *last =
      emitLineSorts(fb, t, *chunks, candidates, values, indices, count);
  return replaceOp(fb, last, results, op);
}

} // namespace

namespace {

/// The most bytes of the suppression masks of one tg.non_max_suppression
/// held at once (a tile: classes x the rows of one sweep launch's words x
/// words of 32 boxes); the sweep's launches are cut shorter to keep a tile
/// within it.
constexpr int64_t kMaxMaskBytes = int64_t(512) << 20;

/// A tg.non_max_suppression's sizes and the buffers its launches share.
struct Suppression {
  /// The op's attributes.
  double iouThreshold = 0;
  bool centerPointBox = false;
  std::optional<double> scoreThreshold;
  int64_t threads, classes, perBatch, n, words, size, picks, rows;
  /// The words of one sweep launch, whose candidates' mask rows one mask
  /// launch computes before it (a tile).
  int64_t tileWords;
  /// The candidates' sort cut into launches within the loop budget: the
  /// first runs in launch 1, the others in launches of their own.
  SmallVector<Stages> sortLaunches;
  Value boxes, scores, valid, selected, count;
  /// Scratch: each class's candidates sorted (classes x size), their
  /// number (classes), a tile of the masks (classes x tileRows() x words:
  /// bit s of word w of row r - 32 w0 is whether candidate r suppresses
  /// candidate 32 w + s, both in sorted order, for the tile's first word
  /// w0), the suppressed candidates (classes x words), the kept boxes
  /// (classes x picks) and their number (classes).
  Value order, candidates, masks, removed, kept, keptCount;

  /// The mask rows of one tile (the candidates of tileWords words).
  int64_t tileRows() const { return std::min(32 * tileWords, n); }

  /// The four coordinates of box \p p (an index) of class \p cls's batch.
  SmallVector<Value> box(Builder &k, Value cls, Value p) const {
    Value batch = arith::DivUIOp::create(k.b, cls, k.index(perBatch));
    SmallVector<Value> v;
    for (int64_t c = 0; c < 4; ++c)
      v.push_back(k.load(boxes, {batch, p, k.index(c)}));
    return v;
  }
  /// Whether box \p a suppresses box \p c of class \p cls (indices).
  Value suppresses(Builder &k, Value cls, Value a, Value c) const {
    Value iou =
        arith::ConstantOp::create(k.b, k.b.getF32FloatAttr(iouThreshold));
    return loom::tg::buildSuppresses(k.b, box(k, cls, a), box(k, cls, c),
                                     centerPointBox, iou);
  }
  /// The loop iterations per thread of the sweep over one word, at most.
  int64_t sweepBackEdgesPerWord() const {
    return 2 + 32 + llvm::divideCeil(words, threads) * 34;
  }
  /// The loop iterations per thread of launch 1 but its sort's stages.
  int64_t countBackEdges() const {
    return llvm::divideCeil(n, threads) + llvm::divideCeil(size, threads) +
           llvm::divideCeil(words, threads);
  }
};

/// The candidates' order in a launch body of the workgroup of class \p cls:
/// the first `valid` boxes, above the score threshold when there is one,
/// by score, highest first, the lower index first among equals.
struct CandidateOrder {
  const Suppression &s;
  Value batch, within, valid;

  CandidateOrder(Builder &k, const Suppression &s, Value cls)
      : s(s), batch(arith::DivUIOp::create(k.b, cls, k.index(s.perBatch))),
        within(arith::RemUIOp::create(k.b, cls, k.index(s.perBatch))),
        valid(validLength(k, s.valid, s.n)) {}
  Value scoreOf(Builder &ib, Value p) const {
    Value pos = ib.minI(ib.toIndex(p), ib.index(s.n - 1));
    return ib.load(s.scores, {batch, within, pos});
  }
  Value isCandidate(Builder &ib, Value p) const {
    Value in = ib.lt(p, ib.cast(valid, p.getType()));
    if (!s.scoreThreshold)
      return in;
    Value t = arith::ConstantOp::create(
        ib.b, ib.b.getF32FloatAttr(*s.scoreThreshold));
    return ib.andI(in, arith::CmpFOp::create(ib.b, arith::CmpFPredicate::OGT,
                                             scoreOf(ib, p), t));
  }
  /// Whether position \p a (i32) comes before position \p c.
  Value before(Builder &ib, Value a, Value c) const {
    return orderedBefore(ib, a, c, isCandidate(ib, a), isCandidate(ib, c),
                         [&](Builder &ob, Value x, Value y) {
                           return loom::tg::buildBefore(
                               ob.b, true, scoreOf(ob, x), x, scoreOf(ob, y),
                               y);
                         });
  }
};

/// A launch of a workgroup per class of a tg.non_max_suppression: its
/// thread id, block and class (the last one for blocks past the classes),
/// built at the top of its body, where the builder is left.
struct ClassLaunch {
  mlir::gpu::LaunchOp launch;
  Value tid, block, cls;
};
ClassLaunch createClassLaunch(ImplicitLocOpBuilder &fb, const Suppression &s) {
  FailureOr<Grid> grid = gridFor(s.classes);
  auto launch = createLaunch(fb, fb.getLoc(), *grid, s.threads);
  Builder k{fb};
  Value block = linearBlockId(fb, fb.getLoc(), launch, *grid);
  return {launch, threadId(launch), block,
          k.minI(block, k.index(s.classes - 1))};
}

/// Launch 1, a workgroup per class: the class's candidates counted, its
/// sort by CandidateOrder begun (the first range of sortLaunches), its
/// sweep state cleared.
void emitSortCandidates(ImplicitLocOpBuilder &fb, const Suppression &s) {
  FailureOr<Grid> grid = gridFor(s.classes);
  auto launch = createLaunch(fb, fb.getLoc(), *grid, s.threads);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  Value shared = allocWorkgroupMemory(b, b.getLoc(), {s.threads}, b.getI32Type());
  Value tid = threadId(launch);
  Value block = linearBlockId(b, b.getLoc(), launch, *grid);
  Value cls = k.minI(block, k.index(s.classes - 1));
  CandidateOrder order(k, s, cls);
  Value mine = k.forLoop(tid, k.index(s.n), k.index(s.threads), {k.i32(0)},
                         [&](Builder &ib, Value p, ValueRange acc) {
                           return SmallVector<Value>{ib.add(
                               acc[0], ib.oneIf(order.isCandidate(ib, p),
                                                ib.b.getI32Type()))};
                         })[0];
  Scan scan = k.workgroupScan(shared, tid, s.threads, mine);
  Permutation perm{s.order, cls, s.size};
  fillPermutation(k, perm, tid, s.threads);
  sortStages(k, perm, tid, s.threads, s.sortLaunches.front(),
             [&](Builder &ib, Value a, Value c) {
               return order.before(ib, a, c);
             });
  k.ifThen(k.lt(block, k.index(s.classes)), [&](Builder &ob) {
    ob.strided(tid, s.threads, ob.index(s.words), [&](Builder &wb, Value w) {
      wb.store(wb.i32(0), s.removed, {cls, w});
    });
    ob.ifThen(ob.eq(tid, ob.index(0)), [&](Builder &tb) {
      tb.store(scan.total, s.candidates, {cls});
      tb.store(tb.i32(0), s.keptCount, {cls});
    });
  });
  fb.setInsertionPointAfter(launch);
}

/// Launch 1b (one per later range of sortLaunches), a workgroup per class:
/// \p range of the stages of the candidates' sort.
void emitSortStages(ImplicitLocOpBuilder &fb, const Suppression &s,
                    Stages range) {
  ClassLaunch c = createClassLaunch(fb, s);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  CandidateOrder order(k, s, c.cls);
  sortStages(k, Permutation{s.order, c.cls, s.size}, c.tid, s.threads, range,
             [&](Builder &ib, Value x, Value y) {
               return order.before(ib, x, y);
             });
  fb.setInsertionPointAfter(c.launch);
}

/// Launch 2 (before each sweep launch, for its words [w0, w1)), a thread
/// per (class, candidate r of those words, word w): word w of r's mask, 32
/// overlaps each where r is a candidate that word w's may follow.
void emitMasks(ImplicitLocOpBuilder &fb, const Suppression &s, int64_t w0,
               int64_t w1) {
  int64_t rows = std::min(32 * w1, s.n) - 32 * w0;
  int64_t total = s.classes * rows * s.words;
  FailureOr<Grid> grid = gridFor(llvm::divideCeil(total, s.threads));
  auto launch = createLaunch(fb, fb.getLoc(), *grid, s.threads);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  Value id = k.add(k.mul(linearBlockId(b, b.getLoc(), launch, *grid),
                         k.index(s.threads)),
                   threadId(launch));
  k.ifThen(k.lt(id, k.index(total)), [&](Builder &ib) {
    SmallVector<Value> at =
        delinearize(ib.b, ib.b.getLoc(), id, {s.classes, rows, s.words});
    Value cls = at[0], row = at[1], w = at[2];
    Value r = ib.add(row, ib.index(32 * w0));
    Value m = ib.toIndex(ib.load(s.candidates, {cls}));
    Value first = ib.mul(w, ib.index(32));
    Value any = ib.andI(ib.andI(ib.lt(r, m), ib.lt(first, m)),
                        ib.lt(r, ib.add(first, ib.index(31))));
    // Words no sweep reads (rows past the candidates, words before the
    // row's or past the candidates) are zeros, their overlaps not computed.
    Value zero = ib.i32(0);
    auto word = scf::IfOp::create(ib.b, TypeRange{ib.b.getI32Type()}, any,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(ib.b);
      ib.b.setInsertionPointToStart(&word.getElseRegion().front());
      scf::YieldOp::create(ib.b, zero);
      ib.b.setInsertionPointToStart(&word.getThenRegion().front());
      Builder tb{ib.b};
      Value computed = tb.forLoop(
          tb.index(0), tb.index(32), tb.index(1), {tb.i32(0)},
          [&](Builder &lb, Value bit, ValueRange acc) {
            Value j = lb.add(first, bit);
            Value live = lb.andI(lb.lt(r, j), lb.lt(j, m));
            Value jSafe = lb.minI(j, lb.index(s.size - 1));
            Value a = lb.toIndex(lb.load(s.order, {cls, r}));
            Value c = lb.toIndex(lb.load(s.order, {cls, jSafe}));
            Value hit = lb.andI(
                live, s.suppresses(lb, cls, lb.minI(a, lb.index(s.n - 1)),
                                   lb.minI(c, lb.index(s.n - 1))));
            Value shifted = arith::ShLIOp::create(
                lb.b, lb.oneIf(hit, lb.b.getI32Type()),
                lb.cast(bit, lb.b.getI32Type()));
            return SmallVector<Value>{
                arith::OrIOp::create(lb.b, acc[0], shifted)};
          })[0];
      scf::YieldOp::create(ib.b, computed);
    }
    ib.store(word.getResult(0), s.masks, {cls, row, w});
  });
  fb.setInsertionPointAfter(launch);
}

/// The position of the one set bit of \p bit (an i32 power of 2), without a
/// loop: five tests of a mask each.
Value bitPosition(Builder &k, Value bit) {
  static constexpr uint32_t kMasks[] = {0xFFFF0000u, 0xFF00FF00u, 0xF0F0F0F0u,
                                        0xCCCCCCCCu, 0xAAAAAAAAu};
  Value pos = k.i32(0);
  int64_t weight = 16;
  for (uint32_t mask : kMasks) {
    Value m = k.i32(int32_t(mask));
    Value set = k.cmp(arith::CmpIPredicate::ne,
                      arith::AndIOp::create(k.b, bit, m), k.i32(0));
    pos = k.add(pos, k.select(set, k.i32(weight), k.i32(0)));
    weight /= 2;
  }
  return pos;
}

/// An scf.while over the set bits of \p bits (i32), lowest first, while
/// \p more holds of the carried values: \p body gets the bit's position
/// (an index) and the carried values (after \p bits's), and returns the
/// next ones and the bits still to visit.
SmallVector<Value> forEachBit(
    Builder &k, Value bits, ValueRange init,
    llvm::function_ref<Value(Builder &, ValueRange)> more,
    llvm::function_ref<SmallVector<Value>(Builder &, Value, Value, ValueRange)>
        body) {
  SmallVector<Value> operands{bits};
  operands.append(init.begin(), init.end());
  SmallVector<Type> types = llvm::to_vector(ValueRange(operands).getTypes());
  SmallVector<Location> locs(types.size(), k.b.getLoc());
  auto loop = scf::WhileOp::create(k.b, types, operands);
  Block *before = k.b.createBlock(&loop.getBefore(), {}, types, locs);
  {
    ImplicitLocOpBuilder ib = ImplicitLocOpBuilder::atBlockEnd(k.b.getLoc(), before);
    Builder cb{ib};
    Value nonEmpty =
        cb.cmp(arith::CmpIPredicate::ne, before->getArgument(0), cb.i32(0));
    Value go = cb.andI(nonEmpty, more(cb, before->getArguments().drop_front()));
    scf::ConditionOp::create(ib, go, before->getArguments());
  }
  Block *after = k.b.createBlock(&loop.getAfter(), {}, types, locs);
  {
    ImplicitLocOpBuilder ib = ImplicitLocOpBuilder::atBlockEnd(k.b.getLoc(), after);
    Builder lb{ib};
    Value rest = after->getArgument(0);
    Value low = arith::AndIOp::create(ib, rest, lb.sub(lb.i32(0), rest));
    Value pos = lb.toIndex(bitPosition(lb, low));
    Value remaining = arith::XOrIOp::create(ib, rest, low);
    SmallVector<Value> next =
        body(lb, pos, remaining, after->getArguments().drop_front());
    scf::YieldOp::create(ib, next);
  }
  k.b.setInsertionPointAfter(loop);
  return SmallVector<Value>(loop.getResults().drop_front());
}

/// The i32 mask of the first \p count (an index; at most 32 counted) bits.
Value lowBits(Builder &k, Value count) {
  Value n = k.cast(k.minI(k.maxI(count, k.index(0)), k.index(32)),
                   k.b.getI32Type());
  Value full = k.eq(n, k.i32(32));
  Value partial = k.sub(arith::ShLIOp::create(k.b, k.i32(1), n), k.i32(1));
  return k.select(full, k.i32(-1), partial);
}

/// Launch 3 (one launch per range [w0, w1) of words, after the mask launch
/// of its tile), a workgroup per class: the greedy sweep. Every thread
/// resolves word w alike (its candidates not yet suppressed, lowest first,
/// each kept one removing the later ones of the word its mask marks), then
/// the threads share the later words, each OR-ing into it the masks of the
/// word's kept boxes; a barrier; the next word.
void emitSweep(ImplicitLocOpBuilder &fb, const Suppression &s, int64_t w0,
               int64_t w1) {
  ClassLaunch c = createClassLaunch(fb, s);
  auto launch = c.launch;
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  Value tid = c.tid, block = c.block, cls = c.cls;
  Value active = k.lt(block, k.index(s.classes));
  Value leader = k.andI(active, k.eq(tid, k.index(0)));
  Value m = k.toIndex(k.load(s.candidates, {cls}));
  Value start = k.toIndex(k.load(s.keptCount, {cls}));
  Value picks = k.index(s.picks);
  Value kept = k.forLoop(k.index(w0), k.index(w1), k.index(1), {start},
                         [&](Builder &wb, Value w, ValueRange carried) {
    Value first = wb.mul(w, wb.index(32));
    Value removed = wb.load(s.removed, {cls, w});
    Value live = arith::AndIOp::create(
        wb.b, arith::XOrIOp::create(wb.b, removed, wb.i32(-1)),
        lowBits(wb, wb.sub(m, first)));
    auto resolved = forEachBit(
        wb, live, {carried[0], wb.i32(0)},
        [&](Builder &cb, ValueRange v) { return cb.lt(v[0], picks); },
        [&](Builder &lb, Value bit, Value rest, ValueRange v) {
          Value r = lb.add(first, bit);
          lb.ifThen(leader, [&](Builder &tb) {
            tb.store(tb.load(s.order, {cls, r}), s.kept, {cls, v[0]});
          });
          Value suppressed =
              lb.load(s.masks, {cls, lb.sub(r, lb.index(32 * w0)), w});
          Value next = arith::AndIOp::create(
              lb.b, rest, arith::XOrIOp::create(lb.b, suppressed, lb.i32(-1)));
          Value one = arith::ShLIOp::create(lb.b, lb.i32(1),
                                            lb.cast(bit, lb.b.getI32Type()));
          return SmallVector<Value>{next, lb.add(v[0], lb.index(1)),
                                    arith::OrIOp::create(lb.b, v[1], one)};
        });
    Value keptBits = resolved[1];
    wb.ifThen(wb.cmp(arith::CmpIPredicate::ne, keptBits, wb.i32(0)),
              [&](Builder &xb) {
      xb.strided(xb.add(xb.add(w, xb.index(1)), tid), s.threads,
                 xb.index(s.words), [&](Builder &ob, Value later) {
        Value acc = forEachBit(
            ob, keptBits, {ob.load(s.removed, {cls, later})},
            [&](Builder &cb, ValueRange) {
              return arith::ConstantIntOp::create(cb.b, 1, 1);
            },
            [&](Builder &lb, Value bit, Value rest, ValueRange v) {
              Value r = lb.add(first, bit);
              Value mask = lb.load(
                  s.masks, {cls, lb.sub(r, lb.index(32 * w0)), later});
              return SmallVector<Value>{rest,
                                        arith::OrIOp::create(lb.b, v[0], mask)};
            })[0];
        ob.ifThen(active, [&](Builder &tb) {
          tb.store(acc, s.removed, {cls, later});
        });
      });
    });
    wb.barrier();
    return SmallVector<Value>{resolved[0]};
  })[0];
  k.ifThen(leader, [&](Builder &tb) {
    tb.store(tb.cast(kept, tb.b.getI32Type()), s.keptCount, {cls});
  });
  fb.setInsertionPointAfter(launch);
}

/// Launch 4, one workgroup: the kept boxes of each class in turn as rows
/// [batch, class, box] (the threads share a class's rows), then zero rows
/// to the bound and the count.
void emitSelected(ImplicitLocOpBuilder &fb, const Suppression &s) {
  auto launch = createLaunch(fb, fb.getLoc(), Grid{}, s.threads);
  ImplicitLocOpBuilder b(fb.getLoc(), fb);
  Builder k{b};
  Value tid = threadId(launch);
  Type i64 = b.getI64Type();
  Value total = k.forLoop(k.index(0), k.index(s.classes), k.index(1),
                          {k.index(0)}, [&](Builder &cb, Value cls,
                                            ValueRange offset) {
    Value n = cb.toIndex(cb.load(s.keptCount, {cls}));
    Value batch = arith::DivUIOp::create(cb.b, cls, cb.index(s.perBatch));
    Value within = arith::RemUIOp::create(cb.b, cls, cb.index(s.perBatch));
    cb.strided(tid, s.threads, n, [&](Builder &rb, Value q) {
      Value row = rb.add(offset[0], q);
      Value cells[3] = {rb.cast(batch, i64), rb.cast(within, i64),
                        arith::ExtSIOp::create(rb.b, i64,
                                               rb.load(s.kept, {cls, q}))};
      for (int64_t c = 0; c < 3; ++c)
        rb.store(cells[c], s.selected, {row, rb.index(c)});
    });
    return SmallVector<Value>{cb.add(offset[0], n)};
  })[0];
  k.strided(tid, s.threads, k.index(s.rows), [&](Builder &rb, Value row) {
    rb.ifThen(rb.cmp(arith::CmpIPredicate::sge, row, total), [&](Builder &zb) {
      Value zero = arith::ConstantIntOp::create(zb.b, 0, 64);
      for (int64_t c = 0; c < 3; ++c)
        zb.store(zero, s.selected, {row, zb.index(c)});
    });
  });
  storeCount(k, k.eq(tid, k.index(0)), total, s.count);
  fb.setInsertionPointAfter(launch);
}

/// The candidates' sort of \p s cut into launches within the loop budget
/// (the first after launch 1's own loops), or failure when a launch cannot
/// take even one stage.
FailureOr<SmallVector<Stages>> sortLaunchesFor(const Suppression &s) {
  int64_t levels = llvm::Log2_64(s.size);
  int64_t perStage = 1 + llvm::divideCeil(s.size / 2, s.threads);
  int64_t total = Stages::of(s.size).last;
  SmallVector<Stages> launches;
  for (int64_t first = 0; first < total || launches.empty();) {
    int64_t room = kLoopBudget - levels -
                   (launches.empty() ? s.countBackEdges() : 0);
    int64_t stages = std::min(room / perStage, total - first);
    if (stages < 1 && first < total)
      return failure();
    launches.push_back({first, first + stages});
    first += stages;
  }
  return launches;
}

/// tg.non_max_suppression as the IoU-bitmask form: the launches above
/// (the candidates' sort cut into launches, then for each range of words
/// whose sweep stays within the loop budget, and whose masks within
/// kMaxMaskBytes, a mask launch and a sweep launch; then the rows). Fails
/// (the op keeps its scf lowering) for non-f32 operands, or where even one
/// stage of the sort or one word of the sweep passes the budget.
LogicalResult mapNonMaxSuppression(tg::NonMaxSuppressionOp op,
                                   int64_t threads) {
  auto boxesType = cast<RankedTensorType>(op.getBoxes().getType());
  auto scoresType = cast<RankedTensorType>(op.getScores().getType());
  if (!boxesType.getElementType().isF32() ||
      !scoresType.getElementType().isF32())
    return failure();
  Suppression s;
  s.iouThreshold = op.getIouThreshold().convertToDouble();
  s.centerPointBox = op.getCenterPointBox() == 1;
  if (auto t = op.getScoreThreshold())
    s.scoreThreshold = t->convertToDouble();
  s.threads = threads;
  s.perBatch = scoresType.getDimSize(1);
  s.classes = scoresType.getDimSize(0) * s.perBatch;
  s.n = scoresType.getDimSize(2);
  s.words = llvm::divideCeil(s.n, 32);
  s.size = llvm::PowerOf2Ceil(s.n);
  s.picks = std::min<int64_t>(op.getMaxOutputBoxesPerClass(), s.n);
  s.rows = cast<RankedTensorType>(op.getSelected().getType()).getDimSize(0);
  if (s.n < 1 || s.classes < 1 || s.picks < 1 ||
      s.n > std::numeric_limits<int32_t>::max() / 2)
    return failure();
  s.tileWords = std::min(kLoopBudget / s.sweepBackEdgesPerWord(),
                         kMaxMaskBytes / (s.classes * 32 * s.words * 4));
  FailureOr<SmallVector<Stages>> sorts = sortLaunchesFor(s);
  if (s.tileWords < 1 || failed(sorts) || failed(gridFor(s.classes)) ||
      failed(gridFor(llvm::divideCeil(s.classes * s.tileRows() * s.words,
                                      threads))) ||
      s.classes * (1 + llvm::divideCeil(s.picks, threads)) +
              llvm::divideCeil(s.rows, threads) >
          kLoopBudget)
    return failure();
  s.sortLaunches = std::move(*sorts);
  ImplicitLocOpBuilder fb(op.getLoc(), op);
  s.boxes = bufferOf(fb, op.getBoxes());
  s.scores = bufferOf(fb, op.getScores());
  s.valid = op.getValid() ? bufferOf(fb, op.getValid()) : Value();
  SmallVector<std::pair<Value, Value>> results;
  s.selected = resultBuffer(fb, op.getSelected(), results);
  s.count = resultBuffer(fb, op.getCount(), results);
  auto scratch = [&](ArrayRef<int64_t> shape) -> Value {
    return memref::AllocOp::create(fb, MemRefType::get(shape, fb.getI32Type()));
  };
  s.order = scratch({s.classes, s.size});
  s.candidates = scratch({s.classes});
  s.masks = scratch({s.classes, s.tileRows(), s.words});
  s.removed = scratch({s.classes, s.words});
  s.kept = scratch({s.classes, s.picks});
  s.keptCount = scratch({s.classes});
  emitSortCandidates(fb, s);
  for (Stages range : ArrayRef(s.sortLaunches).drop_front())
    emitSortStages(fb, s, range);
  for (int64_t w0 = 0; w0 < s.words; w0 += s.tileWords) {
    int64_t w1 = std::min(s.words, w0 + s.tileWords);
    emitMasks(fb, s, w0, w1);
    emitSweep(fb, s, w0, w1);
  }
  emitSelected(fb, s);
  return replaceOp(fb, &*std::prev(fb.getInsertionPoint()), results, op);
}

} // namespace

namespace {

struct MapSelections
    : public loom::codegen::gpu::impl::LoomGPUMapSelectionsBase<MapSelections> {
  using LoomGPUMapSelectionsBase::LoomGPUMapSelectionsBase;
  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("loom-gpu-map-selections: block-size must be "
                               "in [1, 1024], got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<tg::NonZeroOp, tg::TopKOp, tg::NonMaxSuppressionOp>(op))
        ops.push_back(op);
    });
    // An op the class does not take keeps its scf lowering
    // (convert-tg-to-linalg).
    for (Operation *op : ops)
      (void)llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](tg::NonZeroOp o) { return mapNonZero(o, blockSize); })
          .Case([&](tg::TopKOp o) { return mapTopK(o, blockSize); })
          .Case([&](tg::NonMaxSuppressionOp o) {
            return mapNonMaxSuppression(o, blockSize);
          });
  }
};

} // namespace
