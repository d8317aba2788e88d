//===- TensorParallel.cpp - A decoder program split by heads and columns --===//
//
// Part of Loom. --tg-tensor-parallel="ranks=T" (docs/CacheParallel.md,
// "Tensor parallelism"). Megatron's split, found by propagation rather than
// by matching layers:
//
//   - a *split* value is divided along one dimension in T contiguous blocks
//     (or, after a fused product such as GPT-2's QKV, in segments each
//     divided in T blocks); rank r holds block r (of each segment);
//   - every attention is split by heads (its queries, keys, values, output;
//     key/value heads stay with their query group, so T divides the
//     key/value heads), and the split spreads through the ops whose blocks
//     are independent (elementwise ops, transposes, reshapes, slices,
//     splits and concatenations away from the split dimension, cache
//     updates) until it meets
//       * a product whose weights' columns it divides (column-parallel: the
//         weights sliced, its input replicated),
//       * a product that contracts over it (row-parallel: the weights'
//         rows sliced, the result a partial sum, completed by one
//         all-reduce: tg.all_gather, then a sum in rank order, so every
//         rank holds the same bits),
//       * a tied cache argument (the cache holds the rank's heads only),
//       * a result of the function (gathered back whole: the logits of a
//         vocabulary-parallel head);
//   - then every product with 2-d weights is tried as a seed of its own
//     (its input split along the contraction, else its output along the
//     columns): the feed-forward blocks; a seed whose split reaches
//     anything else (a normalisation, a reduction, an input) is dropped and
//     its ops stay replicated.
//
// Each function becomes T functions `<name>.rank<r>`, the same ops on every
// rank with rank r's slices of the weights (folded to constants by
// --tg-fold-weights), so the ranks post their collectives in one order.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/TensorParallel.h"

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// How a value is divided over the ranks: along `dim`, in `segments` (whose
/// sizes sum to the dimension), each cut in T contiguous blocks; rank r
/// holds block r of every segment, in order.
struct Split {
  int64_t dim = 0;
  SmallVector<int64_t, 1> segments;

  bool operator==(const Split &o) const {
    return dim == o.dim && segments == o.segments;
  }
  bool operator!=(const Split &o) const { return !(*this == o); }
  int64_t local(int64_t ranks) const {
    int64_t n = 0;
    for (int64_t s : segments)
      n += s / ranks;
    return n;
  }
};

RankedTensorType tensorType(Value v) {
  return mlir::cast<RankedTensorType>(v.getType());
}

Split whole(Value v, int64_t dim) {
  return Split{dim, {tensorType(v).getDimSize(dim)}};
}

/// The groups of dimensions a reshape keeps together: [in, in_end) of the
/// input holds the elements of [out, out_end) of the output.
struct ReshapeGroup {
  int64_t in, inEnd, out, outEnd;
};

SmallVector<ReshapeGroup> reshapeGroups(ArrayRef<int64_t> in,
                                        ArrayRef<int64_t> out) {
  SmallVector<ReshapeGroup> groups;
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    ReshapeGroup g{int64_t(i), int64_t(i), int64_t(o), int64_t(o)};
    int64_t a = i < in.size() ? in[i++] : 1;
    int64_t b = o < out.size() ? out[o++] : 1;
    while (a != b) {
      if (a < b && i < in.size())
        a *= in[i++];
      else if (b < a && o < out.size())
        b *= out[o++];
      else
        return {}; // not a reshape of the same elements
    }
    g.inEnd = int64_t(i);
    g.outEnd = int64_t(o);
    groups.push_back(g);
  }
  return groups;
}

/// The dimension of \p to that a split of dimension \p dim of \p from
/// (whole, the first dimension above 1 of its reshape group) lands on, or
/// -1 when the blocks do not stay contiguous.
int64_t reshapedDim(ArrayRef<int64_t> from, ArrayRef<int64_t> to, int64_t dim,
                    int64_t ranks) {
  for (const ReshapeGroup &g : reshapeGroups(from, to)) {
    if (dim < g.in || dim >= g.inEnd)
      continue;
    auto lead = [](ArrayRef<int64_t> shape, int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k)
        if (shape[k] != 1)
          return k;
      return int64_t(-1);
    };
    if (lead(from, g.in, g.inEnd) != dim)
      return -1;
    int64_t target = lead(to, g.out, g.outEnd);
    if (target < 0 || to[target] % ranks)
      return -1;
    return target;
  }
  return -1;
}

/// What a function's split is: the values split, the weights to slice (per
/// operand), the products whose sums are partial, the results gathered.
class Plan {
public:
  explicit Plan(int64_t ranks) : ranks(ranks) {}

  /// Splits \p v as \p s with everything that follows; false (with `why`
  /// and `at`) when something it reaches cannot be split.
  bool require(Value v, const Split &s);
  bool requireOperand(OpOperand &o, const Split &s);

  int64_t ranks;
  llvm::MapVector<Value, Split> values;
  llvm::MapVector<OpOperand *, Split> params;
  llvm::SetVector<Operation *> partial;
  llvm::SetVector<OpOperand *> gathered;
  std::string why;
  Operation *at = nullptr;

private:
  bool produce(Value v, const Split &s);
  bool consume(OpOperand &use, const Split &s);
  bool fail(Operation *op, const Twine &reason) {
    at = op;
    why = reason.str();
    return false;
  }
};

bool Plan::requireOperand(OpOperand &o, const Split &s) {
  if (!isParameter(o.get()))
    return require(o.get(), s);
  for (int64_t seg : s.segments)
    if (seg % ranks)
      return fail(o.getOwner(), "a weight's dimension of " + Twine(seg) +
                                    " is not a multiple of the ranks");
  auto [it, inserted] = params.insert({&o, s});
  return inserted || it->second == s ||
         fail(o.getOwner(), "a weight would be split two ways");
}

bool Plan::require(Value v, const Split &s) {
  auto it = values.find(v);
  if (it != values.end())
    return it->second == s ||
           fail(v.getDefiningOp() ? v.getDefiningOp()
                                  : v.getParentBlock()->getParentOp(),
                "a value would be split along two dimensions");
  for (int64_t seg : s.segments)
    if (seg % ranks)
      return fail(v.getDefiningOp() ? v.getDefiningOp()
                                    : v.getParentBlock()->getParentOp(),
                  "a dimension of " + Twine(seg) +
                      " is not a multiple of the ranks");
  values.insert({v, s});
  if (!produce(v, s))
    return false;
  for (OpOperand &use : v.getUses())
    if (!consume(use, s))
      return false;
  return true;
}

/// Where a split of \p v comes from: what its definition must split.
bool Plan::produce(Value v, const Split &s) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (fn && getTiedResult(fn, arg.getArgNumber()))
      return true;
    return fail(arg.getOwner()->getParentOp(),
                "input #" + Twine(arg.getArgNumber()) +
                    " would be split, and it is not state tied to a result");
  }
  Operation *op = v.getDefiningOp();
  int64_t d = s.dim;
  bool single = s.segments.size() == 1;
  if (op->hasTrait<Elementwise>()) {
    int64_t rank = tensorType(v).getRank();
    for (OpOperand &o : op->getOpOperands()) {
      auto t = tensorType(o.get());
      int64_t od = d - (rank - t.getRank());
      if (od < 0 || t.getDimSize(od) == 1)
        continue;
      if (!requireOperand(o, Split{od, s.segments}))
        return false;
    }
    return true;
  }
  return TypeSwitch<Operation *, bool>(op)
      .Case([&](MatmulOp m) {
        int64_t rank = tensorType(v).getRank();
        if (d != rank - 1 || tensorType(m.getRhs()).getRank() != 2 ||
            !isParameter(m.getRhs()))
          return fail(op, "a product would be split other than by the "
                          "columns of 2-d weights");
        return requireOperand(m->getOpOperand(1), Split{1, s.segments});
      })
      .Case([&](TransposeOp t) {
        return requireOperand(t->getOpOperand(0),
                              Split{t.getPerm()[d], s.segments});
      })
      .Case([&](ReshapeOp r) {
        int64_t from = single ? reshapedDim(tensorType(v).getShape(),
                                            tensorType(r.getInput()).getShape(),
                                            d, ranks)
                              : -1;
        if (from < 0)
          return fail(op, "a reshape would not keep the blocks contiguous");
        return requireOperand(r->getOpOperand(0), whole(r.getInput(), from));
      })
      .Case([&](SliceOp sl) {
        auto in = tensorType(sl.getInput());
        if (sl.getStarts()[d] != 0 || sl.getLimits()[d] != in.getDimSize(d) ||
            (sl.getStrides() && (*sl.getStrides())[d] != 1))
          return fail(op, "a slice would cut the split dimension");
        return requireOperand(sl->getOpOperand(0), s);
      })
      .Case([&](SplitOp sp) {
        int64_t axis = sp.getAxis() < 0
                           ? sp.getAxis() + tensorType(v).getRank()
                           : int64_t(sp.getAxis());
        if (axis != d) {
          for (Value r : sp.getResults())
            if (!require(r, s))
              return false;
          return requireOperand(sp->getOpOperand(0), s);
        }
        Split in{d, {}};
        for (Value r : sp.getResults()) {
          if (!require(r, whole(r, d)))
            return false;
          in.segments.push_back(tensorType(r).getDimSize(d));
        }
        return requireOperand(sp->getOpOperand(0), in);
      })
      .Case([&](ConcatOp c) {
        int64_t axis = c.getAxis() < 0 ? c.getAxis() + tensorType(v).getRank()
                                       : int64_t(c.getAxis());
        if (axis != d) {
          for (OpOperand &o : c->getOpOperands())
            if (!requireOperand(o, s))
              return false;
          return true;
        }
        Split want{d, {}};
        for (Value o : c.getOperands())
          want.segments.push_back(tensorType(o).getDimSize(d));
        if (want != s)
          return fail(op, "a concatenation along the split dimension is not "
                          "split by its operands");
        for (OpOperand &o : c->getOpOperands())
          if (!requireOperand(o, whole(o.get(), d)))
            return false;
        return true;
      })
      .Case([&](UpdateSliceOp u) {
        int64_t axis = u.getAxis() < 0 ? u.getAxis() + tensorType(v).getRank()
                                       : u.getAxis();
        if (axis == d)
          return fail(op, "a cache update along the split dimension");
        return requireOperand(u->getOpOperand(0), s) &&
               requireOperand(u->getOpOperand(1), s);
      })
      .Case([&](AttentionOp a) {
        if (d != 1 || !single)
          return fail(op, "an attention would be split other than by heads");
        return requireOperand(a->getOpOperand(0), whole(a.getQ(), 1)) &&
               requireOperand(a->getOpOperand(1), whole(a.getK(), 1)) &&
               requireOperand(a->getOpOperand(2), whole(a.getV(), 1));
      })
      .Default([&](Operation *o) {
        return fail(o, "'" + o->getName().getStringRef() +
                           "' would compute a split value");
      });
}

/// Where a split of a value goes: what its user \p use must split.
bool Plan::consume(OpOperand &use, const Split &s) {
  Operation *op = use.getOwner();
  int64_t d = s.dim;
  if (op->hasTrait<Elementwise>()) {
    Value r = op->getResult(0);
    int64_t rd = d + tensorType(r).getRank() - tensorType(use.get()).getRank();
    return require(r, Split{rd, s.segments});
  }
  return TypeSwitch<Operation *, bool>(op)
      .Case([&](func::ReturnOp ret) {
        auto fn = cast<func::FuncOp>(ret->getParentOp());
        unsigned j = use.getOperandNumber();
        for (BlockArgument arg : fn.getArguments())
          if (getTiedResult(fn, arg.getArgNumber()) == j)
            return require(arg, s);
        if (s.segments.size() != 1)
          return fail(op, "a result split in segments");
        gathered.insert(&use);
        return true;
      })
      .Case([&](MatmulOp m) {
        int64_t rank = tensorType(use.get()).getRank();
        if (use.getOperandNumber() != 0 || d != rank - 1 ||
            tensorType(m.getRhs()).getRank() != 2 || !isParameter(m.getRhs()))
          return fail(op, "a product would read a split value other than "
                          "as the contraction of 2-d weights");
        partial.insert(op);
        return requireOperand(m->getOpOperand(1), Split{0, s.segments});
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPerm();
        int64_t to = std::find(perm.begin(), perm.end(), d) - perm.begin();
        return require(t.getResult(), Split{to, s.segments});
      })
      .Case([&](ReshapeOp r) {
        int64_t to = s.segments.size() == 1
                         ? reshapedDim(tensorType(use.get()).getShape(),
                                       tensorType(r.getResult()).getShape(), d,
                                       ranks)
                         : -1;
        if (to < 0)
          return fail(op, "a reshape would not keep the blocks contiguous");
        return require(r.getResult(), whole(r.getResult(), to));
      })
      .Case([&](SliceOp sl) { return require(sl.getResult(), s); })
      .Case([&](SplitOp sp) {
        for (Value r : sp.getResults()) {
          int64_t axis = sp.getAxis() < 0
                             ? sp.getAxis() + tensorType(r).getRank()
                             : int64_t(sp.getAxis());
          if (!require(r, axis == d ? whole(r, d) : s))
            return false;
        }
        return true;
      })
      .Case([&](ConcatOp c) {
        int64_t rank = tensorType(c.getResult()).getRank();
        int64_t axis = c.getAxis() < 0 ? c.getAxis() + rank : c.getAxis();
        if (axis != d)
          return require(c.getResult(), s);
        Split out{d, {}};
        for (Value o : c.getOperands())
          out.segments.push_back(tensorType(o).getDimSize(d));
        return require(c.getResult(), out);
      })
      .Case([&](UpdateSliceOp u) {
        if (use.getOperandNumber() == 2)
          return fail(op, "a cache update's offsets would be split");
        return require(u.getResult(), s);
      })
      .Case([&](AttentionOp a) {
        if (use.getOperandNumber() > 2)
          return fail(op, "an attention's length would be split");
        return require(a.getResult(), whole(a.getResult(), 1));
      })
      .Default([&](Operation *o) {
        return fail(o, "'" + o->getName().getStringRef() +
                           "' would read a split value");
      });
}

/// Plans \p fn's split: every attention by heads (an error when one cannot
/// be), then every product with 2-d weights that can be.
FailureOr<Plan> planFunction(func::FuncOp fn, int64_t ranks) {
  Plan plan(ranks);
  SmallVector<AttentionOp> attentions;
  SmallVector<MatmulOp> products;
  fn.walk([&](Operation *op) {
    if (auto a = dyn_cast<AttentionOp>(op))
      attentions.push_back(a);
    if (auto m = dyn_cast<MatmulOp>(op))
      if (tensorType(m.getRhs()).getRank() == 2 && isParameter(m.getRhs()))
        products.push_back(m);
  });
  for (AttentionOp a : attentions) {
    int64_t kvHeads = tensorType(a.getK()).getDimSize(1);
    if (kvHeads % ranks) {
      a.emitError("--tg-tensor-parallel: the attention's ")
          << kvHeads << " key/value heads are not a multiple of ranks="
          << ranks;
      return failure();
    }
    if (!plan.require(a.getResult(), whole(a.getResult(), 1))) {
      InFlightDiagnostic err =
          a.emitError("--tg-tensor-parallel: the attention cannot be split "
                      "by heads: ")
          << plan.why;
      if (plan.at && plan.at != a.getOperation())
        err.attachNote(plan.at->getLoc()) << "here";
      return failure();
    }
  }
  for (MatmulOp m : products) {
    if (plan.partial.contains(m) || plan.values.count(m.getResult()))
      continue;
    auto lhs = tensorType(m.getLhs());
    auto out = tensorType(m.getResult());
    // Its input split along the contraction (a block's second product),
    // else its output along the columns (a product whose result is the
    // function's: the logits).
    std::pair<Value, Split> seeds[] = {
        {m.getLhs(), whole(m.getLhs(), lhs.getRank() - 1)},
        {m.getResult(), whole(m.getResult(), out.getRank() - 1)}};
    for (auto &[v, seed] : seeds) {
      Plan tried = plan;
      if (!isParameter(v) && tried.require(v, seed)) {
        plan = std::move(tried);
        break;
      }
    }
  }
  return plan;
}

/// Rank \p rank's slice of the weight read by \p o, split as \p s: block
/// \p rank of each segment, concatenated.
Value sliceWeight(OpBuilder &b, OpOperand &o, const Split &s, int64_t ranks,
                  int64_t rank) {
  Value w = o.get();
  auto type = tensorType(w);
  Location loc = o.getOwner()->getLoc();
  SmallVector<Value> pieces;
  int64_t offset = 0;
  for (int64_t seg : s.segments) {
    int64_t block = seg / ranks;
    SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape());
    starts[s.dim] = offset + rank * block;
    limits[s.dim] = offset + (rank + 1) * block;
    SmallVector<Type, 1> inferred;
    (void)inferSlice(loc, type, starts, limits, std::nullopt, inferred);
    pieces.push_back(SliceOp::create(b, loc, inferred[0], w,
                                     b.getDenseI64ArrayAttr(starts),
                                     b.getDenseI64ArrayAttr(limits),
                                     DenseI64ArrayAttr()));
    offset += seg;
  }
  if (pieces.size() == 1)
    return pieces.front();
  return ConcatOp::create(b, loc, pieces, b.getI64IntegerAttr(s.dim));
}

/// The sum over the ranks of \p partial (every rank the same bits: the
/// gathered blocks summed in rank order).
Value allReduce(OpBuilder &b, Location loc, Value partial, int64_t ranks) {
  Value all = AllGatherOp::create(b, loc, partial, uint64_t(ranks));
  return ReduceSumOp::create(b, loc, all, b.getDenseI64ArrayAttr({0}),
                             b.getBoolAttr(false));
}

/// The whole of \p v, split along \p dim in one segment: every rank's block
/// gathered and put in place.
Value gatherWhole(OpBuilder &b, Location loc, Value v, int64_t dim,
                  int64_t ranks) {
  auto type = tensorType(v);
  Value all = AllGatherOp::create(b, loc, v, uint64_t(ranks));
  // [T, d0, ..., dn] -> [d0, .., T, d_dim, ..] -> merged.
  SmallVector<int64_t> perm;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    if (k == dim)
      perm.push_back(0);
    perm.push_back(k + 1);
  }
  Value moved = TransposeOp::create(b, loc, all, b.getDenseI64ArrayAttr(perm));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] *= ranks;
  return ReshapeOp::create(b, loc, type.clone(shape), moved);
}

/// Rewrites \p fn as rank \p rank's program under \p plan.
void rewrite(func::FuncOp fn, const Plan &plan, int64_t rank) {
  int64_t ranks = plan.ranks;
  OpBuilder b(fn.getContext());
  for (auto &[operand, s] : plan.params) {
    b.setInsertionPoint(operand->getOwner());
    operand->set(sliceWeight(b, *operand, s, ranks, rank));
  }
  for (auto [value, s] : plan.values) {
    Value v = value;
    auto type = tensorType(v);
    SmallVector<int64_t> shape(type.getShape());
    shape[s.dim] = s.local(ranks);
    v.setType(type.clone(shape));
    Operation *op = v.getDefiningOp();
    if (auto sl = dyn_cast_or_null<SliceOp>(op)) {
      SmallVector<int64_t> limits(sl.getLimits());
      limits[s.dim] = shape[s.dim];
      sl.setLimits(limits);
    }
  }
  // A split along its axis: each piece's local size.
  fn.walk([&](SplitOp sp) {
    if (!plan.values.count(sp.getInput()))
      return;
    SmallVector<int64_t> sizes;
    int64_t axis = sp.getAxis() < 0
                       ? sp.getAxis() + tensorType(sp.getInput()).getRank()
                       : int64_t(sp.getAxis());
    for (Value r : sp.getResults())
      sizes.push_back(tensorType(r).getDimSize(axis));
    sp.setSizes(sizes);
  });
  for (Operation *op : plan.partial) {
    b.setInsertionPointAfter(op);
    Value partial = op->getResult(0);
    Value sum = allReduce(b, op->getLoc(), partial, ranks);
    partial.replaceAllUsesExcept(sum, sum.getDefiningOp()
                                          ->getOperand(0)
                                          .getDefiningOp());
  }
  for (OpOperand *use : plan.gathered) {
    b.setInsertionPoint(use->getOwner());
    const Split &s = plan.values.lookup(use->get());
    use->set(gatherWhole(b, use->getOwner()->getLoc(), use->get(), s.dim,
                         ranks));
  }
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  fn.setType(FunctionType::get(fn.getContext(),
                               fn.getBody().front().getArgumentTypes(),
                               ret.getOperandTypes()));
}

struct TGTensorParallelPass
    : PassWrapper<TGTensorParallelPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TGTensorParallelPass)

  TGTensorParallelPass() = default;
  TGTensorParallelPass(const TGTensorParallelPass &other)
      : PassWrapper(other) {}
  explicit TGTensorParallelPass(int64_t t) { ranks = t; }

  StringRef getArgument() const override { return "tg-tensor-parallel"; }
  StringRef getDescription() const override {
    return "Split a decoder program over a world of ranks by attention heads "
           "and feed-forward columns (Megatron's split), one function per "
           "rank, the partial sums met by all-reduces";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<TGDialect>();
  }

  void runOnOperation() override;

  Option<int64_t> ranks{*this, "ranks",
                        llvm::cl::desc("The world's ranks T (at least 2)"),
                        llvm::cl::init(0)};
};

void TGTensorParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (ranks < 2 || ranks > 4096) {
    module.emitError("--tg-tensor-parallel needs ranks=T with T in 2..4096, "
                     "got ")
        << ranks.getValue();
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  bool splitAny = false;
  // Plan on the function as given (every rank's plan is the same), then
  // rewrite a copy per rank.
  for (func::FuncOp fn : functions) {
    if (fn.isExternal())
      continue;
    // Within a world already (--tg-cache-parallel's shards, pipeline
    // stages) the split would need groups of its own: split first.
    if (runsOnWorld(fn)) {
      fn.emitError("--tg-tensor-parallel: the function already runs on a "
                   "world of ranks; split it before --tg-cache-parallel "
                   "shards its caches and --tg-pipeline-stages stages it (a "
                   "world of S x P x T ranks)");
      return signalPassFailure();
    }
    FailureOr<Plan> plan = planFunction(fn, ranks);
    if (failed(plan))
      return signalPassFailure();
    splitAny |= !plan->values.empty();
    OpBuilder b(fn);
    for (int64_t r = 0; r < ranks; ++r) {
      IRMapping map;
      auto copy = cast<func::FuncOp>(b.clone(*fn, map));
      copy.setSymName(rankFunctionName(fn.getSymName(), r));
      copy->setAttr("tg.runs_on_rank", b.getI64IntegerAttr(r));
      Plan mapped(ranks);
      for (auto &[v, s] : plan->values)
        mapped.values.insert({map.lookup(v), s});
      auto operandIn = [&](OpOperand *o) -> OpOperand * {
        return &map.lookup(o->getOwner())->getOpOperand(o->getOperandNumber());
      };
      for (auto &[o, s] : plan->params)
        mapped.params.insert({operandIn(o), s});
      for (Operation *op : plan->partial)
        mapped.partial.insert(map.lookup(op));
      for (OpOperand *o : plan->gathered)
        mapped.gathered.insert(operandIn(o));
      rewrite(copy, mapped, r);
    }
    fn.erase();
  }
  if (!splitAny) {
    module.emitError("--tg-tensor-parallel: nothing in the module splits (no "
                     "attention, no product with 2-d weights whose split "
                     "stays within blocks)");
    return signalPassFailure();
  }
  if (failed(verify(module)))
    return signalPassFailure();
}

} // namespace

bool tg::runsOnWorld(func::FuncOp fn) {
  return fn
      .walk([](Operation *op) {
        return isa<WorldRankOp, AllGatherOp, ShardAttentionOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

FailureOr<int64_t> tg::enlargeWorld(func::FuncOp fn, int64_t outer,
                                    StringRef pass) {
  SmallVector<Operation *> collectives;
  int64_t inner = 0;
  bool agree = true;
  fn.walk([&](Operation *op) {
    int64_t world;
    if (auto r = dyn_cast<WorldRankOp>(op))
      world = r.getWorldSize();
    else if (auto g = dyn_cast<AllGatherOp>(op))
      world = g.getWorldSize();
    else
      return;
    agree &= !inner || inner == world;
    inner = world;
    collectives.push_back(op);
  });
  if (!agree) {
    fn.emitError() << pass
                   << ": the function's collectives run on worlds of "
                      "different sizes";
    return failure();
  }
  if (!inner)
    return int64_t(1);
  if (fn->hasAttr("tg.rank_count")) {
    fn.emitError() << pass
                   << ": the function runs on one block of its world (a "
                      "pipeline stage of parallel ranks): --tg-pipeline-stages "
                      "comes last";
    return failure();
  }
  Builder b(fn.getContext());
  for (Operation *op : collectives)
    op->setAttr("world", b.getI64IntegerAttr(outer * inner));
  if (fn->hasAttr("tg.runs_on_rank") && !fn->hasAttr("tg.rank_period"))
    fn->setAttr("tg.rank_period", b.getI64IntegerAttr(inner));
  return inner;
}

std::string tg::rankFunctionName(llvm::StringRef name, int64_t rank) {
  return (name + ".rank" + Twine(rank)).str();
}

std::unique_ptr<Pass> tg::createTGTensorParallelPass(int64_t ranks) {
  return std::make_unique<TGTensorParallelPass>(ranks);
}

LogicalResult tg::splitTensors(ModuleOp module, int64_t ranks) {
  PassManager pm(module.getContext());
  pm.addPass(createTGTensorParallelPass(ranks));
  return pm.run(module);
}

void tg::registerTGTensorParallelPass() {
  PassRegistration<TGTensorParallelPass>();
}
