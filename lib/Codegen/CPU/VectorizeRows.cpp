//===- VectorizeRows.cpp - Rows of elementwise ops and reductions ---------===//
//
// Part of Loom. See the description of LoomVectorizeRows in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMVECTORIZEROWS
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

/// How one operand of the generic is read along the row (the innermost
/// loop): a contiguous run of its buffer, or one element held for the row.
enum class Access { Contiguous, Held };

/// The sets of accumulators a reduction row keeps: a vector add or max
/// takes 4 cycles before its result can be combined again and the CPUs
/// measured issue two a cycle, so one accumulator made a 256-wide softmax
/// row's max and sum wait on each combine (docs/Codegen/CPU.md).
constexpr int64_t kSets = 4;

/// A linalg.generic on buffers this pass rewrites, and what it found.
struct Row {
  linalg::GenericOp op;
  int64_t width;                 // the innermost loop's extent
  bool reduction;                // the innermost loop is a reduction
  SmallVector<Access> access;    // per operand
  SmallVector<Operation *> combiners; // per output, for a reduction
};

bool scalarOk(Type t) { return t.isF32() || t.isInteger(1); }

/// Whether the innermost loop \p d appears in \p map only as its last
/// result (Contiguous when the buffer's last stride is 1) or not at all
/// (Held); nullopt when it is read otherwise.
std::optional<Access> accessOf(AffineMap map, MemRefType type, unsigned d) {
  unsigned n = map.getNumResults();
  for (unsigned r = 0; r + 1 < n; ++r)
    if (map.getResult(r).isFunctionOfDim(d))
      return std::nullopt;
  if (n == 0 || !map.getResult(n - 1).isFunctionOfDim(d))
    return Access::Held;
  if (map.getResult(n - 1) != getAffineDimExpr(d, map.getContext()))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return std::nullopt;
  return Access::Contiguous;
}

/// The op combining output argument \p out into the value yielded for it:
/// `op(out, v)` or `op(v, out)` of an associative, commutative arith op
/// with a neutral element, \p out read nowhere else; null otherwise.
Operation *combinerOf(linalg::GenericOp op, unsigned output) {
  BlockArgument out = op.getRegionOutputArgs()[output];
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Operation *c = yield.getOperand(output).getDefiningOp();
  if (!c || c->getNumOperands() != 2 || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != c ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(c) ||
      !arith::getNeutralElement(c))
    return nullptr;
  return c;
}

/// Whether every op of the body maps elementwise onto vectors: arith and
/// math ops on f32 and i1 without regions, and scalar constants.
bool bodyVectorizes(linalg::GenericOp op) {
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0)
      return false;
    if (!isa<arith::ConstantOp>(inner) &&
        !inner.hasTrait<OpTrait::Elementwise>())
      return false;
    for (Type t : inner.getResultTypes())
      if (!scalarOk(t))
        return false;
    for (Value v : inner.getOperands())
      if (!scalarOk(v.getType()))
        return false;
  }
  return true;
}

/// \p op as a Row when this pass handles it: static loops, f32 buffers,
/// every operand contiguous along the innermost loop or not moving with
/// it, and either a parallel innermost loop whose outputs all move with it
/// (rows of an elementwise op) or a reduction one whose outputs none do,
/// each updated by one combiner (a row's sum, max, ...).
std::optional<Row> rowOf(linalg::GenericOp op, int64_t minWidth) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 1 ||
      !op.getBody()->getOps<linalg::IndexOp>().empty() || !bodyVectorizes(op))
    return std::nullopt;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic))
    return std::nullopt;
  unsigned d = op.getNumLoops() - 1;
  Row row{op, extents[d],
          op.getIteratorTypesArray()[d] == utils::IteratorType::reduction,
          {}, {}};
  if (row.width < minWidth)
    return std::nullopt;
  // A parallel row of a one-loop op is one long loop LLVM vectorises well;
  // rows of several loops it fully unrolls when short and vectorises
  // across rows with gathers.
  if (!row.reduction && op.getNumLoops() == 1)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.getElementType().isF32() ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return std::nullopt;
    std::optional<Access> a = accessOf(map, type, d);
    if (!a)
      return std::nullopt;
    bool isOutput = op.isDpsInit(&operand);
    if (isOutput && (*a == Access::Held) != row.reduction)
      return std::nullopt;
    row.access.push_back(*a);
  }
  if (row.reduction)
    for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
      Operation *c = combinerOf(op, i);
      if (!c || !c->getResult(0).hasOneUse())
        return std::nullopt;
      row.combiners.push_back(c);
    }
  return row;
}

/// Emits one row's vector code at the builder's insertion point.
class RowEmitter {
public:
  RowEmitter(OpBuilder &b, Row row, int64_t lanes)
      : b(b), row(std::move(row)), lanes(lanes), loc(this->row.op.getLoc()) {}

  /// The row at outer loop indices \p outer.
  void emit(ValueRange outer) {
    int64_t full = row.width / lanes * lanes;
    SmallVector<Value> held = heldValues(outer);
    if (!row.reduction) {
      if (full > 0) {
        auto loop = scf::ForOp::create(b, loc, index(0), index(full),
                                       index(lanes));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        elementwise(outer, held, loop.getInductionVar(), lanes);
      }
      if (full < row.width)
        elementwise(outer, held, index(full), row.width - full);
      return;
    }
    reduce(outer, held, full);
  }

private:
  OpBuilder &b;
  Row row;
  int64_t lanes;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  VectorType vectorOf(Type t) { return VectorType::get({lanes}, t); }
  Value mask(int64_t valid) {
    return vector::ConstantMaskOp::create(b, loc, vectorOf(b.getI1Type()),
                                          b.getDenseI64ArrayAttr({valid}));
  }

  /// The indices of operand \p operand at outer indices \p outer, its last
  /// one \p col when it moves along the row.
  SmallVector<Value> indices(OpOperand &operand, ValueRange outer, Value col) {
    AffineMap map = row.op.getMatchingIndexingMap(&operand);
    unsigned d = row.op.getNumLoops() - 1;
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        idx.push_back(dim.getPosition() == d ? col : outer[dim.getPosition()]);
      else
        idx.push_back(index(cast<AffineConstantExpr>(e).getValue()));
    }
    return idx;
  }

  /// The held operands' elements, loaded once for the row and broadcast
  /// (null for contiguous operands).
  SmallVector<Value> heldValues(ValueRange outer) {
    SmallVector<Value> held;
    for (auto [operand, a] : llvm::zip(row.op->getOpOperands(), row.access)) {
      // A reduction's outputs are its accumulators, not read per row.
      bool accumulator = row.reduction && row.op.isDpsInit(&operand);
      if (a != Access::Held || accumulator ||
          row.op.getMatchingBlockArgument(&operand).use_empty()) {
        held.push_back(nullptr);
        continue;
      }
      Value s = memref::LoadOp::create(b, loc, operand.get(),
                                       indices(operand, outer, Value()));
      held.push_back(vector::BroadcastOp::create(b, loc, vectorOf(s.getType()),
                                                 s));
    }
    return held;
  }

  /// The block's arguments as vectors for the columns [col, col + valid).
  IRMapping arguments(ValueRange outer, ArrayRef<Value> held, Value col,
                      int64_t valid) {
    IRMapping map;
    for (auto [i, operand] : llvm::enumerate(row.op->getOpOperands())) {
      BlockArgument arg = row.op.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      if (held[i]) {
        map.map(arg, held[i]);
        continue;
      }
      if (row.access[i] != Access::Contiguous)
        continue; // a reduction's output: its accumulator, mapped by step
      SmallVector<Value> idx = indices(operand, outer, col);
      VectorType vec = vectorOf(arg.getType());
      Value v = valid == lanes
                    ? Value(vector::LoadOp::create(b, loc, vec, operand.get(),
                                                   idx))
                    : Value(vector::MaskedLoadOp::create(
                          b, loc, vec, operand.get(), idx, mask(valid),
                          arith::ConstantOp::create(
                              b, loc, vec, b.getZeroAttr(vec))));
      map.map(arg, v);
    }
    return map;
  }

  /// \p inner applied to vectors: the same op on vector operands; a scalar
  /// from outside the body or a constant broadcast.
  Value vectorValue(IRMapping &map, Value v) {
    if (Value m = map.lookupOrNull(v))
      return m;
    Value s = v;
    if (auto c = v.getDefiningOp<arith::ConstantOp>();
        c && c->getBlock() == row.op.getBody())
      s = arith::ConstantOp::create(b, loc, c.getValue());
    Value vec = vector::BroadcastOp::create(b, loc, vectorOf(v.getType()), s);
    map.map(v, vec);
    return vec;
  }
  void vectorizeOp(Operation &inner, IRMapping &map) {
    if (isa<arith::ConstantOp>(inner))
      return; // broadcast where used
    OperationState state(loc, inner.getName());
    for (Value v : inner.getOperands())
      state.addOperands(vectorValue(map, v));
    for (Type t : inner.getResultTypes())
      state.addTypes(vectorOf(t));
    state.addAttributes(inner.getAttrs());
    Operation *created = b.create(state);
    map.map(inner.getResults(), created->getResults());
  }
  /// The body up to (not including) \p stop on vectors.
  void body(IRMapping &map, ArrayRef<Operation *> stop = {}) {
    for (Operation &inner : row.op.getBody()->without_terminator())
      if (!llvm::is_contained(stop, &inner))
        vectorizeOp(inner, map);
  }

  /// Columns [col, col + valid) of a parallel row: loads, body, stores.
  void elementwise(ValueRange outer, ArrayRef<Value> held, Value col,
                   int64_t valid) {
    IRMapping map = arguments(outer, held, col, valid);
    body(map);
    auto yield = cast<linalg::YieldOp>(row.op.getBody()->getTerminator());
    for (OpOperand &init : row.op.getDpsInitsMutable()) {
      unsigned o = init.getOperandNumber() - row.op.getNumDpsInputs();
      Value v = vectorValue(map, yield.getOperand(o));
      SmallVector<Value> idx = indices(init, outer, col);
      if (valid == lanes)
        vector::StoreOp::create(b, loc, v, init.get(), idx);
      else
        vector::MaskedStoreOp::create(b, loc, init.get(), idx, mask(valid), v);
    }
  }

  /// The value each combiner folds into its accumulator, for columns
  /// [col, col + valid), and the accumulators updated with it (the lanes
  /// past valid keep theirs).
  SmallVector<Value> step(ValueRange outer, ArrayRef<Value> held, Value col,
                          int64_t valid, ValueRange acc) {
    IRMapping map = arguments(outer, held, col, valid);
    body(map, row.combiners);
    SmallVector<Value> next;
    for (auto [o, c] : llvm::enumerate(row.combiners)) {
      BlockArgument out = row.op.getRegionOutputArgs()[o];
      Value term = c->getOperand(0) == out ? c->getOperand(1) : c->getOperand(0);
      Value updated = combine(c, acc[o], vectorValue(map, term));
      if (valid != lanes)
        updated = arith::SelectOp::create(b, loc, mask(valid), updated, acc[o]);
      next.push_back(updated);
    }
    return next;
  }

  /// \p c applied to \p x and \p y of any type.
  Value combine(Operation *c, Value x, Value y) {
    OperationState state(loc, c->getName());
    state.addOperands({x, y});
    state.addTypes(x.getType());
    state.addAttributes(c->getAttrs());
    return b.create(state)->getResult(0);
  }

  /// \p c folding \p sets of accumulators (one per combiner each) into the
  /// first: pairwise, (a0 . a1) . (a2 . a3).
  SmallVector<Value> foldSets(ArrayRef<SmallVector<Value>> sets) {
    SmallVector<SmallVector<Value>> level(sets.begin(), sets.end());
    while (level.size() > 1) {
      SmallVector<SmallVector<Value>> next;
      for (size_t i = 0; i < level.size(); i += 2) {
        if (i + 1 == level.size()) {
          next.push_back(level[i]);
          continue;
        }
        SmallVector<Value> folded;
        for (auto [o, c] : llvm::enumerate(row.combiners))
          folded.push_back(combine(c, level[i][o], level[i + 1][o]));
        next.push_back(folded);
      }
      level = std::move(next);
    }
    return level.front();
  }

  /// A reduction row: kSets sets of vector accumulators from the
  /// combiners' neutral elements (fewer on a row of fewer vectors), each
  /// updated by every kSets-th vector of columns (a loop over groups of
  /// kSets vectors, the vectors left over, then the masked remainder), so
  /// that successive combines do not wait on each other; the sets folded
  /// pairwise, the lanes folded pairwise by the combiner, and the result
  /// combined with the output element.
  void reduce(ValueRange outer, ArrayRef<Value> held, int64_t full) {
    int64_t vectors = full / lanes;
    int64_t sets = std::clamp<int64_t>(vectors, 1, kSets);
    SmallVector<Value> neutral;
    for (Operation *c : row.combiners) {
      TypedAttr n = *arith::getNeutralElement(c);
      neutral.push_back(vector::BroadcastOp::create(
          b, loc, vectorOf(n.getType()), arith::ConstantOp::create(b, loc, n)));
    }
    SmallVector<SmallVector<Value>> acc(sets, neutral);
    int64_t grouped = vectors / sets * sets * lanes;
    if (grouped > 0) {
      SmallVector<Value> carried;
      for (const SmallVector<Value> &set : acc)
        llvm::append_range(carried, set);
      auto loop = scf::ForOp::create(b, loc, index(0), index(grouped),
                                     index(sets * lanes), carried);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> yielded;
        size_t n = row.combiners.size();
        for (int64_t k = 0; k < sets; ++k) {
          Value col = arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                            index(k * lanes));
          llvm::append_range(
              yielded, step(outer, held, col, lanes,
                            loop.getRegionIterArgs().slice(k * n, n)));
        }
        scf::YieldOp::create(b, loc, yielded);
      }
      size_t n = row.combiners.size();
      for (int64_t k = 0; k < sets; ++k)
        acc[k].assign(loop.getResults().begin() + k * n,
                      loop.getResults().begin() + (k + 1) * n);
    }
    for (int64_t col = grouped, k = 0; col < full; col += lanes, ++k)
      acc[k] = step(outer, held, index(col), lanes, acc[k]);
    if (full < row.width)
      acc[0] = step(outer, held, index(full), row.width - full, acc[0]);
    SmallVector<Value> total = foldSets(acc);
    for (auto [o, c] : llvm::enumerate(row.combiners)) {
      Value v = total[o];
      for (int64_t half = lanes / 2; half >= 1; half /= 2) {
        SmallVector<int64_t> lo, hi;
        for (int64_t k = 0; k < half; ++k) {
          lo.push_back(k);
          hi.push_back(k + half);
        }
        v = combine(c, vector::ShuffleOp::create(b, loc, v, v, lo),
                    vector::ShuffleOp::create(b, loc, v, v, hi));
      }
      Value sum = vector::ExtractOp::create(b, loc, v, int64_t(0));
      OpOperand &init = row.op.getDpsInitsMutable()[o];
      SmallVector<Value> idx = indices(init, outer, Value());
      Value old = memref::LoadOp::create(b, loc, init.get(), idx);
      memref::StoreOp::create(b, loc, combine(c, old, sum), init.get(), idx);
    }
  }
};

/// Replaces \p row's op with loops over its outer dimensions around the
/// row's vector code.
void rewrite(Row row, int64_t lanes) {
  linalg::GenericOp op = row.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<Value> outer;
  for (int64_t extent : ArrayRef(extents).drop_back()) {
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, extent),
        arith::ConstantIndexOp::create(b, loc, 1));
    outer.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  RowEmitter(b, row, lanes).emit(outer);
  op.erase();
}

struct VectorizeRows
    : public loom::codegen::cpu::impl::LoomVectorizeRowsBase<VectorizeRows> {
  using LoomVectorizeRowsBase::LoomVectorizeRowsBase;
  void runOnOperation() override {
    SmallVector<Row> rows;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<Row> r = rowOf(op, minWidth))
        rows.push_back(*r);
    });
    for (Row &row : rows)
      rewrite(row, lanes);
  }
};

} // namespace
