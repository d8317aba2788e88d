//===- PipelineStages.cpp - A decoder program cut into pipeline stages ----===//
//
// Part of Loom. --tg-pipeline-stages="stages=S" (docs/CacheParallel.md,
// "Pipeline stages"). The cut is found from the state, not by matching
// layers:
//
//   - a function's state (its tied arguments: the key/value caches) falls
//     into *layers*: two state arguments are in one layer where one op reads
//     both (directly, or through the value an op that reads a state
//     argument returns: an attention reads a layer's updated key and value
//     caches). The layers, in the order of their first op, are dealt to the
//     S stages in contiguous runs (by count, layer g to stage g * S / G,
//     unless runs balanced by their weights' bytes hold a smaller largest
//     stage: dealLayers), and the ops that read a layer's state are *fixed*
//     to its stage;
//   - a value computed from the replicated inputs (the token ids, the
//     positions) and constants alone, by ops without arithmetic beyond
//     elementwise (no product), is *free*: every stage that reads it
//     computes it (the rotary tables, the embedding's gather);
//   - between the last fixed op of stage h and the first of stage h + 1 the
//     cut goes where the fewest bytes of the other values are live, the
//     last such place (the residual stream after a layer's feed-forward);
//     those values are stage h's to send, in one tg.all_gather of them
//     packed (f32);
//   - the function's results that are not state (the logits) are computed
//     by the last stage and gathered to every rank, so every rank returns
//     the same bits.
//
// A boundary's exchange is a tg.all_gather rooted at rank h (a broadcast:
// only rank h's block is sent) that every rank runs: rank h puts in the
// crossing values, the others a block of zeros that is not sent (made from
// the rank's last gathered block, so that the order of its gathers is a
// fact of the data, not of the scheduler, and every gather but the last is
// read), and rank h + 1 takes block h. Rank s's function keeps the
// replicated inputs and its own layers' state.
//
// A function that already runs on a world of W ranks (a tensor-parallel
// rank's, or cache-parallel shards', or both) is staged the same way over
// a world of S x W, the stage outermost: world rank w is inner rank w % W
// of stage w / W. Its own collectives keep their groups (within a stage);
// the stages' gathers are groups of stride W (inner rank i of each stage
// sends to inner rank i of the next); stage s of a function that world
// ranks r + k p of W run (k < n) runs on s W + r + k p (tg.runs_on_rank,
// tg.rank_period, tg.rank_count), named <name>.rank<s W + r>.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/PipelineStages.h"

#include "loom/Dialect/TG/IR/SignatureNames.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/Transforms/TensorParallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

RankedTensorType tensorType(Value v) {
  return mlir::cast<RankedTensorType>(v.getType());
}

int64_t bytesOf(Value v) {
  auto type = tensorType(v);
  return type.getNumElements() *
         int64_t(llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

/// Where a function is cut: its ops, in order, each in one stage.
struct Staging {
  int64_t stages = 0;
  /// The world the function already runs on (1: none): its ranks in a
  /// stage.
  int64_t inner = 1;
  /// The block's ops, the return left out.
  SmallVector<Operation *> ops;
  /// Values computed from the replicated inputs and constants alone.
  DenseSet<Value> free;
  /// The stage of each state argument (by argument number).
  DenseMap<unsigned, int64_t> stateStage;
  /// cuts[h]: the index in `ops` of the first op of stage h + 1.
  SmallVector<int64_t> cuts;
  /// crossing[h]: what stage h sends to stage h + 1, in the order of
  /// definition; crossing[S - 1]: the results that are not state and not
  /// free, gathered from the last stage to every rank.
  SmallVector<SmallVector<Value>> crossing;

  int64_t stageOfIndex(int64_t i) const {
    int64_t s = 0;
    while (s < int64_t(cuts.size()) && cuts[s] <= i)
      ++s;
    return s;
  }
};

/// Whether every stage that reads \p op's result may compute it again rather
/// than receive it: an op that computes nothing (a weight, a reshape), an
/// elementwise one, or one that moves data without arithmetic (the
/// embedding's gather, a slice). A product is not (it would read its
/// weights on every stage).
bool recomputable(Operation *op) {
  // A rank's index is its own; a collective runs once, on its stage.
  if (isa<WorldRankOp>(op))
    return true;
  if (op->hasTrait<ReadsWorld>())
    return false;
  if (op->hasTrait<ComputesNothing>() || op->hasTrait<Elementwise>())
    return true;
  auto work = dyn_cast<WorkOpInterface>(op);
  return work && work.getWork().flops == 0;
}

/// The state arguments \p op reads, directly or through a value that an op
/// reading a state argument returned (\p carried).
SmallVector<unsigned>
stateRead(Operation *op, const DenseMap<Value, SmallVector<unsigned>> &carried,
          func::FuncOp fn) {
  SmallVector<unsigned> read;
  for (Value v : op->getOperands()) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (getTiedResult(fn, arg.getArgNumber()))
        read.push_back(arg.getArgNumber());
      continue;
    }
    auto it = carried.find(v);
    if (it != carried.end())
      read.append(it->second.begin(), it->second.end());
  }
  return read;
}

/// The state's layers, each the set of its state arguments, in the order of
/// their first op; and every op that reads state with its layer.
struct Layers {
  SmallVector<SmallVector<unsigned>> members;
  DenseMap<Operation *, int64_t> fixed;
};

FailureOr<Layers> findLayers(func::FuncOp fn, ArrayRef<Operation *> ops) {
  DenseMap<Value, SmallVector<unsigned>> carried;
  llvm::EquivalenceClasses<unsigned> classes;
  SmallVector<std::pair<Operation *, unsigned>> readers;
  for (Operation *op : ops) {
    SmallVector<unsigned> read = stateRead(op, carried, fn);
    if (read.empty())
      continue;
    for (unsigned a : read)
      classes.unionSets(read.front(), a);
    readers.push_back({op, read.front()});
    bool direct = llvm::any_of(op->getOperands(), [&](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && getTiedResult(fn, arg.getArgNumber());
    });
    if (direct)
      for (Value r : op->getResults())
        carried[r] = read;
  }
  Layers layers;
  DenseMap<unsigned, int64_t> layerOfLeader;
  for (auto &[op, arg] : readers) {
    unsigned leader = classes.getLeaderValue(arg);
    auto [it, isNew] =
        layerOfLeader.insert({leader, int64_t(layers.members.size())});
    if (isNew)
      layers.members.emplace_back();
    layers.fixed[op] = it->second;
  }
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    if (!getTiedResult(fn, i))
      continue;
    if (!classes.contains(i)) {
      fn.emitError("--tg-pipeline-stages: state argument ")
          << i << " is read by no op: no stage holds it";
      return failure();
    }
    layers.members[layerOfLeader.lookup(classes.getLeaderValue(i))].push_back(
        i);
  }
  return layers;
}

/// The index of the first and last op of each stage fixed to it.
LogicalResult fixedSpans(func::FuncOp fn, const Staging &st,
                         const Layers &layers, ArrayRef<int64_t> stageOfLayer,
                         SmallVectorImpl<std::pair<int64_t, int64_t>> &spans) {
  spans.assign(st.stages, {INT64_MAX, -1});
  for (auto [i, op] : llvm::enumerate(st.ops)) {
    auto it = layers.fixed.find(op);
    if (it == layers.fixed.end())
      continue;
    auto &span = spans[stageOfLayer[it->second]];
    span.first = std::min(span.first, int64_t(i));
    span.second = std::max(span.second, int64_t(i));
  }
  for (int64_t h = 0; h + 1 < st.stages; ++h)
    if (spans[h].second >= spans[h + 1].first) {
      InFlightDiagnostic d = st.ops[spans[h + 1].first]->emitError(
          "--tg-pipeline-stages: this op of stage ");
      d << h + 1 << " comes before the last op of stage " << h
        << " that reads its state: the layers interleave";
      d.attachNote(st.ops[spans[h].second]->getLoc()) << "that op";
      return failure();
    }
  return success();
}

/// The bytes of the weights (by name: one tensor however often it is read)
/// that the ops of each layer's *segment* read, from the layer's first
/// fixed op to the next layer's (the first segment from the function's
/// start, the last to its end): what a stage of those layers holds, but for
/// the next layer's projections before its first fixed op, which the cut
/// leaves with their layer.
class SegmentWeights {
public:
  SegmentWeights(ArrayRef<Operation *> ops, const Layers &layers) {
    int64_t count = int64_t(layers.members.size());
    SmallVector<int64_t> firstFixed(count, INT64_MAX);
    for (auto [i, op] : llvm::enumerate(ops))
      if (auto it = layers.fixed.find(op); it != layers.fixed.end())
        firstFixed[it->second] = std::min(firstFixed[it->second], int64_t(i));
    read.resize(count);
    int64_t segment = 0;
    for (auto [i, op] : llvm::enumerate(ops)) {
      while (segment + 1 < count && int64_t(i) >= firstFixed[segment + 1])
        ++segment;
      for (Value v : op->getOperands())
        if (auto w = v.getDefiningOp<WeightOp>())
          read[segment][w.getName()] = bytesOf(v);
    }
    // runs[first][last - first - 1]: the weights of segments
    // [first, last), each run grown one segment at a time.
    for (int64_t first = 0; first < count; ++first) {
      llvm::StringSet<> seen;
      int64_t total = 0;
      runs.emplace_back();
      for (int64_t last = first; last < count; ++last) {
        for (const auto &entry : read[last])
          if (seen.insert(entry.getKey()).second)
            total += entry.getValue();
        runs.back().push_back(total);
      }
    }
  }

  /// The bytes of the weights segments [first, last) read.
  int64_t bytes(int64_t first, int64_t last) const {
    return runs[first][last - first - 1];
  }

private:
  SmallVector<llvm::StringMap<int64_t>> read;
  SmallVector<SmallVector<int64_t>> runs;
};

/// The stage of each of \p layers' layers: contiguous runs, by count (layer
/// g of G to stage g S / G) unless runs balanced by the bytes of their
/// weights (SegmentWeights) hold a smaller largest stage: a first stage
/// holding the embedding and a last holding the head take fewer layers.
SmallVector<int64_t> dealLayers(ArrayRef<Operation *> ops, const Layers &layers,
                                int64_t stages) {
  int64_t count = int64_t(layers.members.size());
  SmallVector<int64_t> byCount;
  for (int64_t g = 0; g < count; ++g)
    byCount.push_back(g * stages / count);
  SegmentWeights weights(ops, layers);
  auto largest = [&](ArrayRef<int64_t> stageOf) {
    int64_t most = 0, first = 0;
    for (int64_t g = 1; g <= count; ++g)
      if (g == count || stageOf[g] != stageOf[first]) {
        most = std::max(most, weights.bytes(first, g));
        first = g;
      }
    return most;
  };
  // best[s][g]: the smallest largest stage of layers [0, g) in s stages,
  // and where its last stage starts.
  const int64_t none = INT64_MAX;
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> best(
      stages + 1,
      SmallVector<std::pair<int64_t, int64_t>>(count + 1, {none, -1}));
  best[0][0] = {0, 0};
  for (int64_t s = 1; s <= stages; ++s)
    for (int64_t g = s; g <= count; ++g)
      for (int64_t k = s - 1; k < g; ++k)
        if (best[s - 1][k].first != none) {
          int64_t most = std::max(best[s - 1][k].first, weights.bytes(k, g));
          if (most < best[s][g].first)
            best[s][g] = {most, k};
        }
  if (best[stages][count].first >= largest(byCount))
    return byCount;
  SmallVector<int64_t> balanced(count);
  for (int64_t s = stages, g = count; s > 0; --s) {
    int64_t k = best[s][g].second;
    for (int64_t l = k; l < g; ++l)
      balanced[l] = s - 1;
    g = k;
  }
  return balanced;
}

/// The last position in [first, last] where the fewest bytes of computed
/// values are live (not state, weights or constants), given each such
/// value's bytes over the positions it is live at (\p live). The last: in a
/// transformer the residual stream alone is live after a layer's attention
/// block and again after its feed-forward, and the feed-forward belongs with
/// its layer (its stage reads its weights).
int64_t cheapestCut(ArrayRef<int64_t> live, int64_t first, int64_t last) {
  int64_t best = first;
  for (int64_t p = first; p <= last; ++p)
    if (live[p] <= live[best])
      best = p;
  return best;
}

FailureOr<Staging> planStages(func::FuncOp fn, int64_t stages) {
  Staging st;
  st.stages = stages;
  FailureOr<int64_t> inner = enlargeWorld(fn, stages, "--tg-pipeline-stages");
  if (failed(inner))
    return failure();
  st.inner = *inner;
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions()) {
      op.emitError("--tg-pipeline-stages: an op with regions is not staged");
      return failure();
    }
    st.ops.push_back(&op);
  }
  for (BlockArgument a : body.getArguments())
    if (!getTiedResult(fn, a.getArgNumber()))
      st.free.insert(a);
  for (Operation *op : st.ops)
    if (recomputable(op) && llvm::all_of(op->getOperands(), [&](Value v) {
          return st.free.contains(v);
        }))
      st.free.insert(op->getResults().begin(), op->getResults().end());

  FailureOr<Layers> layers = findLayers(fn, st.ops);
  if (failed(layers))
    return failure();
  int64_t count = int64_t(layers->members.size());
  if (count < stages) {
    fn.emitError("--tg-pipeline-stages: ")
        << count << " layer(s) of state (key/value caches read together) "
        << "cannot fill stages=" << stages;
    return failure();
  }
  SmallVector<int64_t> stageOfLayer = dealLayers(st.ops, *layers, stages);
  for (int64_t g = 0; g < count; ++g)
    for (unsigned a : layers->members[g])
      st.stateStage[a] = stageOfLayer[g];
  SmallVector<std::pair<int64_t, int64_t>> spans;
  if (failed(fixedSpans(fn, st, *layers, stageOfLayer, spans)))
    return failure();

  // Each value's live positions: p with def < p <= last use (the return,
  // for a result that is not state, at the end).
  int64_t n = int64_t(st.ops.size());
  DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(st.ops))
    index[op] = int64_t(i);
  SmallVector<int64_t> live(n + 2, 0);
  DenseMap<Value, int64_t> lastUse;
  for (auto [i, op] : llvm::enumerate(st.ops))
    for (Value v : op->getOperands())
      lastUse[v] = std::max(lastUse.lookup(v), int64_t(i));
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (!getTiedArgument(fn, unsigned(j)))
      lastUse[v] = n;
  auto sent = [&](Value v) {
    return !st.free.contains(v) && !isa<BlockArgument>(v) && lastUse.count(v);
  };
  // The cut's place weighs every value live across it, the free ones too
  // (recomputed, not sent): the residual stream of the first layer is free
  // (the embedding), and a cut where only a tensor-parallel rank's partial
  // attention is sent, narrower than the residual, would move that layer's
  // feed-forward to the next stage. Weights and constants weigh nothing.
  auto weighed = [&](Value v) {
    return !isa<BlockArgument>(v) && lastUse.count(v) &&
           v.getDefiningOp()->getNumOperands() > 0;
  };
  for (Operation *op : st.ops)
    for (Value v : op->getResults())
      if (weighed(v)) {
        live[index[op] + 1] += bytesOf(v);
        live[lastUse[v] + 1] -= bytesOf(v);
      }
  for (int64_t p = 1; p <= n + 1; ++p)
    live[p] += live[p - 1];
  for (int64_t h = 0; h + 1 < stages; ++h)
    st.cuts.push_back(
        cheapestCut(live, spans[h].second + 1, spans[h + 1].first));

  st.crossing.resize(stages);
  for (Operation *op : st.ops)
    for (Value v : op->getResults()) {
      if (!sent(v))
        continue;
      int64_t def = index[op];
      for (int64_t h = 0; h + 1 < stages; ++h)
        if (def < st.cuts[h] && st.cuts[h] <= lastUse[v])
          st.crossing[h].push_back(v);
    }
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (!getTiedArgument(fn, unsigned(j)) && !st.free.contains(v) &&
        !llvm::is_contained(st.crossing.back(), v))
      st.crossing.back().push_back(v);
  if (st.crossing.back().empty()) {
    fn.emitError("--tg-pipeline-stages: the function returns nothing its "
                 "last stage computes (a decoder returns its logits), so no "
                 "gather would end its stages");
    return failure();
  }
  for (auto [h, values] : llvm::enumerate(st.crossing))
    for (Value v : values)
      if (!tensorType(v).getElementType().isF32()) {
        InFlightDiagnostic d =
            emitError(v.getLoc(), "--tg-pipeline-stages: a value of type ");
        d << v.getType() << " would be sent from stage " << h
          << "; only f32 values are sent";
        return d;
      }
  // A state result is its own stage's.
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    std::optional<unsigned> arg = getTiedArgument(fn, unsigned(j));
    if (!arg)
      continue;
    int64_t at = -1;
    if (Operation *def = v.getDefiningOp())
      at = st.stageOfIndex(index[def]);
    else if (auto it =
                 st.stateStage.find(cast<BlockArgument>(v).getArgNumber());
             it != st.stateStage.end())
      at = it->second;
    if (at != st.stateStage.lookup(*arg)) {
      fn.emitError("--tg-pipeline-stages: the new value of state argument ")
          << *arg << " is not computed by its own stage "
          << st.stateStage.lookup(*arg);
      return failure();
    }
  }
  return st;
}

/// Builds rank \p rank's function of \p fn under \p st before \p fn.
class RankBuilder {
public:
  RankBuilder(func::FuncOp fn, const Staging &st, int64_t rank)
      : fn(fn), st(st), rank(rank), b(fn) {}

  func::FuncOp build();

private:
  func::FuncOp fn;
  const Staging &st;
  int64_t rank;
  OpBuilder b;
  IRMapping map;
  Value lastGathered;

  bool keepsArgument(unsigned i) const {
    auto it = st.stateStage.find(i);
    return it == st.stateStage.end() || it->second == rank;
  }
  Value get(Value v);
  func::FuncOp createStageFunction(FunctionType type);
  void cloneStage();
  Value pack(ArrayRef<Value> values, Location loc);
  Value zeros(int64_t count, Location loc);
  void unpack(Value gathered, int64_t block, ArrayRef<Value> values);
  void exchange(int64_t boundary);
};

/// \p v on this rank: mapped, or (free) computed here.
Value RankBuilder::get(Value v) {
  if (Value m = map.lookupOrNull(v))
    return m;
  assert(st.free.contains(v) && "a value that is neither free nor here");
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    (void)get(operand);
  b.clone(*def, map);
  return map.lookup(v);
}

void RankBuilder::cloneStage() {
  int64_t first = rank ? st.cuts[rank - 1] : 0;
  int64_t last = rank + 1 < st.stages ? st.cuts[rank] : int64_t(st.ops.size());
  for (int64_t i = first; i < last; ++i) {
    Operation *op = st.ops[i];
    if (op->getNumResults() && st.free.contains(op->getResult(0)))
      continue;
    for (Value operand : op->getOperands())
      (void)get(operand);
    b.clone(*op, map);
  }
}

Value RankBuilder::pack(ArrayRef<Value> values, Location loc) {
  SmallVector<Value> flat;
  for (Value v : values) {
    auto type = tensorType(v);
    flat.push_back(ReshapeOp::create(
        b, loc, RankedTensorType::get({type.getNumElements()}, b.getF32Type()),
        get(v)));
  }
  if (flat.size() == 1)
    return flat.front();
  return ConcatOp::create(b, loc, flat, uint64_t(0));
}

/// A block of \p count zeros, made from the rank's last gathered block
/// (times zero) where it has one, so that this gather follows that one.
Value RankBuilder::zeros(int64_t count, Location loc) {
  auto type = RankedTensorType::get({count}, b.getF32Type());
  Value z =
      ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, 0.0f));
  if (!lastGathered)
    return z;
  auto gatheredType = tensorType(lastGathered);
  SmallVector<int64_t> starts(gatheredType.getRank(), 0),
      limits(gatheredType.getRank(), 1);
  Value one =
      SliceOp::create(b, loc, gatheredType.clone(limits), lastGathered,
                      b.getDenseI64ArrayAttr(starts),
                      b.getDenseI64ArrayAttr(limits), DenseI64ArrayAttr());
  one = ReshapeOp::create(b, loc, RankedTensorType::get({1}, b.getF32Type()),
                          one);
  return MulOp::create(b, loc, z, one);
}

/// Maps \p values to their parts of block \p block of \p gathered.
void RankBuilder::unpack(Value gathered, int64_t block,
                         ArrayRef<Value> values) {
  auto type = tensorType(gathered);
  int64_t total = type.getDimSize(1);
  Location loc = gathered.getLoc();
  auto slice = [&](Value from, ArrayRef<int64_t> starts,
                   ArrayRef<int64_t> limits) -> Value {
    SmallVector<int64_t> shape;
    for (auto [s, l] : llvm::zip(starts, limits))
      shape.push_back(l - s);
    return SliceOp::create(b, loc, tensorType(from).clone(shape), from,
                           b.getDenseI64ArrayAttr(starts),
                           b.getDenseI64ArrayAttr(limits), DenseI64ArrayAttr());
  };
  Value row = slice(gathered, {block, 0}, {block + 1, total});
  int64_t offset = 0;
  for (Value v : values) {
    int64_t count = tensorType(v).getNumElements();
    Value part = slice(row, {0, offset}, {1, offset + count});
    map.map(v, ReshapeOp::create(b, loc, v.getType(), part));
    offset += count;
  }
}

/// The gather after stage \p boundary, rooted at rank \p boundary: it sends
/// what crosses, the next rank (every rank after the last stage) takes it.
/// The other ranks' operands, not sent, are zeros made from their last
/// gathered block, so that every gather but the last is read on every rank.
void RankBuilder::exchange(int64_t boundary) {
  ArrayRef<Value> values = st.crossing[boundary];
  if (values.empty())
    return;
  Location loc = values.front().getLoc();
  int64_t count = 0;
  for (Value v : values)
    count += tensorType(v).getNumElements();
  Value block = rank == boundary ? pack(values, loc) : zeros(count, loc);
  lastGathered =
      AllGatherOp::create(b, loc, block, b.getI64IntegerAttr(st.stages),
                          b.getI64IntegerAttr(st.inner), b.getI64IntegerAttr(0),
                          b.getI64IntegerAttr(boundary));
  // After the last stage every rank takes the gathered block, the last
  // rank its own bits back: so every gather's result is read on every rank
  // (a gather nothing reads would be erased on one rank and posted on the
  // others).
  if (boundary + 1 == st.stages || rank == boundary + 1)
    unpack(lastGathered, boundary, values);
}

/// This stage's function of \p type, before \p fn, with \p fn's attributes
/// and the world ranks that run it: those that run \p fn in its world of W
/// (r + k p, k < n; every rank of W where \p fn has no rank) offset by
/// stage x W.
func::FuncOp RankBuilder::createStageFunction(FunctionType type) {
  int64_t first = 0, period = 1, count = st.inner;
  StringRef base = fn.getSymName();
  if (auto r = fn->getAttrOfType<IntegerAttr>("tg.runs_on_rank")) {
    first = r.getInt();
    auto p = fn->getAttrOfType<IntegerAttr>("tg.rank_period");
    period = p ? p.getInt() : st.inner;
    count = llvm::divideCeil(st.inner - first, period);
    std::string suffix = rankFunctionName("", first);
    if (base.ends_with(suffix))
      base = base.drop_back(suffix.size());
  }
  first += rank * st.inner;
  auto copy =
      func::FuncOp::create(b, fn.getLoc(), rankFunctionName(base, first), type);
  for (NamedAttribute a : fn->getDiscardableAttrs())
    copy->setAttr(a.getName(), a.getValue());
  copy->setAttr("tg.runs_on_rank", b.getI64IntegerAttr(first));
  if (count > 1) {
    copy->setAttr("tg.rank_period", b.getI64IntegerAttr(period));
    copy->setAttr("tg.rank_count", b.getI64IntegerAttr(count));
  } else {
    copy->removeAttr("tg.rank_period");
    copy->removeAttr("tg.rank_count");
  }
  return copy;
}

func::FuncOp RankBuilder::build() {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  SmallVector<unsigned> args, results;
  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (keepsArgument(i)) {
      args.push_back(i);
      argTypes.push_back(fn.getArgument(i).getType());
    }
  for (unsigned j = 0, e = ret.getNumOperands(); j < e; ++j) {
    std::optional<unsigned> tied = getTiedArgument(fn, j);
    if (!tied || keepsArgument(*tied)) {
      results.push_back(j);
      resultTypes.push_back(ret.getOperand(j).getType());
    }
  }
  func::FuncOp copy =
      createStageFunction(b.getFunctionType(argTypes, resultTypes));
  Block *entry = copy.addEntryBlock();
  for (auto [k, i] : llvm::enumerate(args)) {
    if (DictionaryAttr attrs = fn.getArgAttrDict(i))
      copy.setArgAttrs(unsigned(k), attrs);
    map.map(fn.getArgument(i), entry->getArgument(k));
  }
  for (auto [k, j] : llvm::enumerate(results)) {
    if (DictionaryAttr attrs = fn.getResultAttrDict(j))
      copy.setResultAttrs(unsigned(k), attrs);
    if (std::optional<unsigned> tied = getTiedArgument(fn, j))
      setTiedResult(copy, unsigned(llvm::find(args, *tied) - args.begin()),
                    unsigned(k));
  }
  b.setInsertionPointToStart(entry);
  for (int64_t h = 0; h < st.stages; ++h) {
    if (h == rank)
      cloneStage();
    exchange(h);
  }
  SmallVector<Value> returned;
  for (unsigned j : results)
    returned.push_back(get(ret.getOperand(j)));
  func::ReturnOp::create(b, ret.getLoc(), returned);
  return copy;
}

struct TGPipelineStagesPass
    : PassWrapper<TGPipelineStagesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TGPipelineStagesPass)

  TGPipelineStagesPass() = default;
  TGPipelineStagesPass(const TGPipelineStagesPass &other)
      : PassWrapper(other) {}
  explicit TGPipelineStagesPass(int64_t s) { stages = s; }

  StringRef getArgument() const override { return "tg-pipeline-stages"; }
  StringRef getDescription() const override {
    return "Cut a decoder program's layers into pipeline stages over a world "
           "of ranks, each rank holding its stage's key/value caches, the "
           "residual stream sent between stages and the logits gathered to "
           "every rank";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<TGDialect>();
  }

  void runOnOperation() override;

  Option<int64_t> stages{
      *this, "stages", llvm::cl::desc("The stages S, one a rank (at least 2)"),
      llvm::cl::init(0)};
};

/// Refuses a module whose state of one name falls in different stages in
/// different functions (prefill's and decode's caches must agree).
LogicalResult
checkStagesAgree(MutableArrayRef<std::pair<func::FuncOp, Staging>> planned) {
  llvm::StringMap<std::pair<int64_t, func::FuncOp>> stageOfName;
  // In argument order (not the map's), so that the diagnostic names the
  // same state every run.
  for (auto &[fn, st] : planned)
    for (unsigned arg = 0, e = fn.getNumArguments(); arg < e; ++arg) {
      auto found = st.stateStage.find(arg);
      if (found == st.stateStage.end())
        continue;
      int64_t stage = found->second;
      std::string name = signatureName(fn.getArgAttrDict(arg), "arg", arg);
      auto [it, isNew] = stageOfName.insert({name, {stage, fn}});
      if (!isNew && it->second.first != stage) {
        fn.emitError("--tg-pipeline-stages: state '")
            << name << "' falls in stage " << stage << " here and in "
            << "stage " << it->second.first << " in @"
            << it->second.second.getSymName();
        return failure();
      }
    }
  return success();
}

void TGPipelineStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (stages < 2 || stages > 4096) {
    module.emitError("--tg-pipeline-stages needs stages=S with S in 2..4096, "
                     "got ")
        << stages.getValue();
    return signalPassFailure();
  }
  std::vector<std::pair<func::FuncOp, Staging>> planned;
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FailureOr<Staging> st = planStages(fn, stages);
    if (failed(st))
      return signalPassFailure();
    planned.push_back({fn, std::move(*st)});
  }
  if (planned.empty()) {
    module.emitError("--tg-pipeline-stages: the module has no function");
    return signalPassFailure();
  }
  if (failed(checkStagesAgree(planned)))
    return signalPassFailure();
  for (auto &[fn, st] : planned) {
    for (int64_t r = 0; r < stages; ++r)
      RankBuilder(fn, st, r).build();
    fn.erase();
  }
  if (failed(verify(module)))
    return signalPassFailure();
}

} // namespace

std::unique_ptr<Pass> tg::createTGPipelineStagesPass(int64_t stages) {
  return std::make_unique<TGPipelineStagesPass>(stages);
}

LogicalResult tg::stageLayers(ModuleOp module, int64_t stages) {
  PassManager pm(module.getContext());
  pm.addPass(createTGPipelineStagesPass(stages));
  return pm.run(module);
}

void tg::registerTGPipelineStagesPass() {
  PassRegistration<TGPipelineStagesPass>();
}
