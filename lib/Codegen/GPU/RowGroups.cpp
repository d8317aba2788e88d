//===- RowGroups.cpp - The row-group kernel class -------------------------===//
//
// Part of Loom. See the description of LoomGPUMapRowGroups in Passes.td and
// docs/Codegen/GPU.md ("Row groups").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "../CPU/ViewBase.h"
#include "KernelClasses.h"
#include "RowReductions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPROWGROUPS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;
using loom::codegen::cpu::baseOf;

namespace {

/// One op of a row group: a row reduction, or an op whose loops are all
/// parallel, its leading loops the rows' (a per-row value when there are
/// no others, a row's elements otherwise).
struct RowMember {
  linalg::LinalgOp op;
  std::optional<RowReduction> reduction;
  /// The extents of the op's leading loops that are its rows (their
  /// product the group's rows).
  SmallVector<int64_t> rowExtents;
  /// A parallel op's loops past the rows'.
  SmallVector<int64_t> elementExtents;
  /// The positions a row's threads share out: a reduction's row length, a
  /// parallel op's elements per row (1 for a per-row value).
  int64_t length = 1;
};

/// A run of ops of a block mapped to one launch of a workgroup per row: a
/// workgroup's row is each member's row of the same linear index.
struct RowGroup {
  SmallVector<RowMember, 4> members;
  int64_t rows = 1;
};

/// Whether \p op's payload is straight-line pure code.
bool hasPurePayload(linalg::LinalgOp op) {
  if (op->getNumRegions() != 1)
    return false;
  return llvm::all_of(op.getBlock()->without_terminator(), [](Operation &o) {
    return o.getNumRegions() == 0 && isPure(&o);
  });
}

/// How many of the leading \p extents multiply to \p rows (the fewest), or
/// none when no prefix does.
std::optional<size_t> rowPrefix(ArrayRef<int64_t> extents, int64_t rows) {
  size_t k = 0;
  for (int64_t product = 1; product != rows; product *= extents[k++])
    if (k == extents.size() || product > rows)
      return std::nullopt;
  return k;
}

/// \p op as a parallel member of a group of \p rows rows: all its loops
/// parallel and static, the shortest prefix of them whose extents multiply
/// to \p rows its rows.
std::optional<RowMember> parallelMember(linalg::LinalgOp op, int64_t rows) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      !hasPurePayload(op) || op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  std::optional<size_t> k = rowPrefix(ranges, rows);
  if (!k)
    return std::nullopt;
  RowMember m;
  m.op = op;
  m.rowExtents.assign(ranges.begin(), ranges.begin() + *k);
  m.elementExtents.assign(ranges.begin() + *k, ranges.end());
  for (int64_t e : m.elementExtents)
    m.length *= e;
  return m;
}

/// \p op as a member of a group of \p rows rows: a row reduction of that
/// many rows of at least \p minLength elements (read contiguously unless
/// \p anyLayout), or a parallel member.
std::optional<RowMember> memberOf(linalg::LinalgOp op, int64_t rows,
                                  int64_t minLength, bool anyLayout) {
  FailureOr<RowReduction> r = classifyRowReduction(op, minLength, anyLayout);
  if (succeeded(r)) {
    if (r->rows != rows)
      return std::nullopt;
    RowMember m;
    m.op = op;
    m.rowExtents = r->rowExtents;
    m.length = r->length;
    m.reduction = *r;
    return m;
  }
  return parallelMember(op, rows);
}

/// The buffer \p v is, through reshapes only (`memref.expand_shape`,
/// `memref.collapse_shape`, which keep every element's linear position in
/// a buffer of identity layout), or null where another view is between.
Value reshapedBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      v = expand.getSrc();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      v = collapse.getSrc();
    else
      return isa<ViewLikeOpInterface>(def) ? Value() : v;
  }
  return v;
}

/// Whether \p m's access through \p operand (a buffer of identity layout
/// holding \p rows rows) reaches its own row's elements only: the leading
/// dimensions of the buffer whose extents multiply to \p rows are indexed
/// by \p m's row loops in order (dimensions and loops of extent 1 aside),
/// and no later index uses a row loop. Then the element's linear position
/// is `row * (size / rows) + offset` with `offset < size / rows`, in the
/// buffer and in any reshape of it.
bool staysInItsRow(const RowMember &m, OpOperand &operand, int64_t rows) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return false;
  linalg::LinalgOp op = m.op;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  ArrayRef<int64_t> shape = type.getShape();
  std::optional<size_t> rowDims = rowPrefix(shape, rows);
  if (!rowDims)
    return false;
  size_t k = *rowDims;
  // The row loops of extent > 1, in order, against the buffer's leading
  // dimensions of extent > 1.
  SmallVector<unsigned> rowLoops;
  for (auto [d, extent] : llvm::enumerate(m.rowExtents))
    if (extent > 1)
      rowLoops.push_back(d);
  size_t next = 0;
  for (size_t i = 0; i < map.getNumResults(); ++i) {
    AffineExpr e = map.getResult(i);
    if (i < k && shape[i] > 1) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (next == rowLoops.size() || !dim ||
          dim.getPosition() != rowLoops[next] ||
          m.rowExtents[rowLoops[next]] != shape[i])
        return false;
      ++next;
      continue;
    }
    for (unsigned d : rowLoops)
      if (e.isFunctionOfDim(d))
        return false;
  }
  return next == rowLoops.size();
}

/// Why the workgroups of a group of \p members over \p rows rows could not
/// run concurrently (a workgroup reaching what another row's writes), or
/// the empty string: every buffer a member writes is reached, by every
/// member, through reshapes of it only and within the row (staysInItsRow).
/// Inputs nothing writes may be read anyhow.
std::string crossRowAccess(ArrayRef<RowMember> members, int64_t rows) {
  llvm::SmallPtrSet<Value, 8> written;
  for (const RowMember &m : members)
    for (Value init : linalg::LinalgOp(m.op).getDpsInits())
      written.insert(baseOf(init));
  for (const RowMember &m : members)
    for (OpOperand &operand : m.op->getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()) || !written.contains(baseOf(v)))
        continue;
      if (!reshapedBuffer(v))
        return "a buffer it writes is reached through a view other than a "
               "reshape";
      if (!staysInItsRow(m, operand, rows))
        return "a buffer it writes is reached outside the row that writes it";
    }
  return "";
}

/// The loop iterations one thread of \p threads runs for \p members.
int64_t backEdges(ArrayRef<RowMember> members, int64_t threads) {
  int64_t edges = 0;
  for (const RowMember &m : members)
    edges += (m.length + threads - 1) / threads + 1;
  return edges;
}

int64_t longestRow(ArrayRef<RowMember> members) {
  int64_t length = 1;
  for (const RowMember &m : members)
    length = std::max(length, m.length);
  return length;
}

/// Why \p members cannot be one group of \p rows rows with workgroups of at
/// most \p maxThreads threads, or the empty string.
std::string whyNotAGroup(ArrayRef<RowMember> members, int64_t rows,
                         int64_t maxThreads) {
  std::string access = crossRowAccess(members, rows);
  if (!access.empty())
    return access;
  int64_t threads = rowThreads(longestRow(members), maxThreads);
  if (backEdges(members, threads) > kLoopBudget)
    return llvm::formatv("a thread would run more than {0} loop iterations",
                         kLoopBudget)
        .str();
  if (failed(gridFor(rows)))
    return llvm::formatv("its {0} rows are more than a grid of 65535 x 65535 "
                         "holds",
                         rows)
        .str();
  return "";
}

/// The maximal runs of consecutive ops of \p block that \p eligible takes,
/// separated only by pure ops that are not structured ops.
SmallVector<SmallVector<linalg::LinalgOp>>
runsOf(Block &block, function_ref<bool(linalg::LinalgOp)> eligible) {
  SmallVector<SmallVector<linalg::LinalgOp>> runs(1);
  for (Operation &o : block) {
    auto op = dyn_cast<linalg::LinalgOp>(&o);
    if (op && eligible(op)) {
      runs.back().push_back(op);
      continue;
    }
    if (!op && isBetweenStructuredOps(&o))
      continue;
    if (!runs.back().empty())
      runs.emplace_back();
  }
  if (runs.back().empty())
    runs.pop_back();
  return runs;
}

/// How formGroups forms groups: an anchor is a row reduction of rows of at
/// least `minLength` elements (read contiguously unless `anyLayout`), and a
/// group of one op is kept only with `keepSingles`.
struct Formation {
  int64_t minLength = 1;
  bool anyLayout = false;
  bool keepSingles = false;
  int64_t maxThreads = 128;
};

/// The groups formed in \p run, greedily: each row reduction that anchors
/// one (Formation), not yet in a group, with the parallel members over its
/// rows just before it and the members over its rows after it, as long as
/// the whole stays a group (whyNotAGroup).
std::vector<RowGroup> formGroups(ArrayRef<linalg::LinalgOp> run,
                                 const Formation &how) {
  std::vector<RowGroup> groups;
  size_t next = 0;
  while (next < run.size()) {
    size_t anchor = next;
    FailureOr<RowReduction> first = failure();
    for (; anchor < run.size(); ++anchor)
      if (succeeded(first = classifyRowReduction(run[anchor], how.minLength,
                                                 how.anyLayout)))
        break;
    if (anchor == run.size())
      break;
    RowGroup g;
    g.rows = first->rows;
    g.members.push_back(
        *memberOf(run[anchor], g.rows, how.minLength, how.anyLayout));
    auto tryAdd = [&](linalg::LinalgOp op, bool before) {
      std::optional<RowMember> m =
          before ? parallelMember(op, g.rows)
                 : memberOf(op, g.rows, how.minLength, how.anyLayout);
      if (!m)
        return false;
      SmallVector<RowMember, 4> trial(g.members);
      trial.insert(before ? trial.begin() : trial.end(), *m);
      if (!whyNotAGroup(trial, g.rows, how.maxThreads).empty())
        return false;
      g.members = std::move(trial);
      return true;
    };
    size_t start = anchor;
    while (start > next && tryAdd(run[start - 1], /*before=*/true))
      --start;
    size_t end = anchor + 1;
    while (end < run.size() && tryAdd(run[end], /*before=*/false))
      ++end;
    if (g.members.size() > 1 || how.keepSingles)
      groups.push_back(std::move(g));
    next = end;
  }
  return groups;
}

/// \p op's payload at loop positions \p ivs (payloadAt), its results stored
/// at its outputs' indices there.
void emitPayloadAt(OpBuilder &b, Location loc, linalg::LinalgOp op,
                   ArrayRef<Value> ivs) {
  SmallVector<Value> results = payloadAt(b, loc, op, ivs);
  for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), results))
    memref::StoreOp::create(
        b, loc, value, init.get(),
        applyMap(b, loc, op.getMatchingIndexingMap(&init), ivs));
}

/// \p m (a parallel member) for the row of \p at: the threads of an active
/// workgroup share out the row's positions, thread `tid` taking `tid, tid +
/// threads, ...`.
void emitParallelMember(OpBuilder &b, const RowMember &m, const RowLaunch &at) {
  linalg::LinalgOp op = m.op;
  Location loc = op.getLoc();
  OpBuilder inside = b;
  if (Value active = at.activeAt(b, loc)) {
    auto guard = scf::IfOp::create(b, loc, active, /*withElse=*/false);
    inside = OpBuilder::atBlockTerminator(guard.thenBlock());
  }
  SmallVector<Value> rowIvs =
      delinearize(inside, loc, at.rowRead, m.rowExtents);
  scf::ForOp::create(
      inside, loc, at.tid,
      arith::ConstantIndexOp::create(inside, loc, m.length),
      arith::ConstantIndexOp::create(inside, loc, at.threads), ValueRange{},
      [&](OpBuilder &nb, Location, Value position, ValueRange) {
        SmallVector<Value> ivs(rowIvs);
        llvm::append_range(ivs,
                           delinearize(nb, loc, position, m.elementExtents));
        emitPayloadAt(nb, loc, op, ivs);
        scf::YieldOp::create(nb, loc);
      });
}

/// Replaces \p g's ops with one launch of a workgroup per row that runs
/// them in order, a barrier between two.
LogicalResult emitRowGroup(const RowGroup &g, int64_t maxThreads) {
  linalg::LinalgOp last = g.members.back().op;
  Location loc = linalg::LinalgOp(g.members.front().op).getLoc();
  OpBuilder b(last);
  FailureOr<RowLaunch> at =
      beginRowLaunch(b, loc, g.rows,
                     rowThreads(longestRow(g.members), maxThreads));
  if (failed(at))
    return failure();
  for (auto [i, m] : llvm::enumerate(g.members)) {
    if (i != 0)
      mlir::gpu::BarrierOp::create(b, loc);
    if (m.reduction)
      emitRowReduction(b, *m.reduction, *at);
    else
      emitParallelMember(b, m, *at);
  }
  for (const RowMember &m : g.members)
    m.op->erase();
  clonePureProducers(at->launch);
  return success();
}

/// The groups of \p run, a run of ops that record the class: formed as the
/// selection forms them but whatever the thresholds (any row length and
/// layout, a group of one op too); an op left out of every group is an
/// error at it.
FailureOr<std::vector<RowGroup>>
recordedGroups(ArrayRef<linalg::LinalgOp> run, int64_t maxThreads) {
  Formation how;
  how.anyLayout = true;
  how.keepSingles = true;
  how.maxThreads = maxThreads;
  std::vector<RowGroup> groups = formGroups(run, how);
  llvm::SmallPtrSet<Operation *, 16> grouped;
  for (const RowGroup &g : groups)
    for (const RowMember &m : g.members)
      grouped.insert(m.op);
  for (linalg::LinalgOp op : run)
    if (!grouped.contains(op)) {
      op->emitOpError("records kernel class '")
             << nameOf(KernelClass::RowGroup)
             << "' but joins no row group (a run of consecutive ops over "
                "the same rows with a row reduction among them, each "
                "workgroup reaching only its own row of what the run "
                "writes)";
      return failure();
    }
  return groups;
}

struct MapRowGroups
    : public loom::codegen::gpu::impl::LoomGPUMapRowGroupsBase<MapRowGroups> {
  using LoomGPUMapRowGroupsBase::LoomGPUMapRowGroupsBase;

  void runOnOperation() override {
    if (blockSize < kMinRowThreads || blockSize > 1024) {
      getOperation().emitError("loom-gpu-map-row-groups: block-size must "
                               "be in [32, 1024], got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    std::vector<RowGroup> groups;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Block &body = fn.getBody().front();
      auto recorded = [](linalg::LinalgOp op) {
        return recordsClass(op, KernelClass::RowGroup);
      };
      for (ArrayRef<linalg::LinalgOp> run : runsOf(body, recorded)) {
        FailureOr<std::vector<RowGroup>> found =
            recordedGroups(run, blockSize);
        if (failed(found))
          return signalPassFailure();
        llvm::append_range(groups, std::move(*found));
      }
      Formation how;
      how.minLength = minLength;
      how.maxThreads = blockSize;
      for (ArrayRef<linalg::LinalgOp> run : runsOf(body, recordsNoClass))
        llvm::append_range(groups, formGroups(run, how));
    }
    for (const RowGroup &g : groups)
      if (failed(emitRowGroup(g, blockSize)))
        return signalPassFailure();
  }
};

} // namespace

void loom::codegen::gpu::selectRowGroups(
    Block &block, int64_t minLength, int64_t maxThreads,
    function_ref<bool(linalg::LinalgOp)> eligible) {
  Formation how;
  how.minLength = minLength;
  how.maxThreads = maxThreads;
  for (ArrayRef<linalg::LinalgOp> run : runsOf(block, eligible))
    for (const RowGroup &g : formGroups(run, how))
      for (const RowMember &m : g.members)
        recordClass(m.op, KernelClass::RowGroup);
}

bool loom::codegen::gpu::isRowGroupOp(linalg::LinalgOp op) {
  return succeeded(classifyRowReduction(op, 1, /*anyLayout=*/true)) ||
         parallelMember(op, 1).has_value();
}
