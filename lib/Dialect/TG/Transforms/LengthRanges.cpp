//===- LengthRanges.cpp - Integer ranges of run-time lengths --------------===//
//
// Part of Loom. The InferIntRangeInterface models of the tg ops that
// produce, combine or move lengths, and the range analysis that also
// follows tg.if. A range describes every element of a tensor (the hull of
// its elements). Integer tensors keep their ranges at their width; a float
// tensor's range, kept at 64 bits, says that every element is an integer
// in it, exactly representable (the importer computes lengths in f64:
// lengthOp in lib/Conversion/ONNXToTG/RunTimeInts.cpp), so an op whose
// float result might not be such an integer (a division, a float outside
// the exact range) leaves its result without a range.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Transforms/LengthRanges.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"

#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/Utils/InferIntRangeCommon.h"

using namespace mlir;
using namespace mlir::dataflow;
using namespace loom::tg;

namespace {

using Ranges = ArrayRef<IntegerValueRange>;
using Range = std::optional<ConstantIntRanges>;

/// The largest magnitude up to which every integer is exact in \p element;
/// none for a type whose values ranges do not describe.
std::optional<int64_t> exactLimit(Type element) {
  if (auto i = dyn_cast<IntegerType>(element)) {
    if (i.getWidth() == 1)
      return 1;
    return i.getWidth() >= 64 ? std::numeric_limits<int64_t>::max()
                              : (int64_t(1) << (i.getWidth() - 1)) - 1;
  }
  if (auto f = dyn_cast<FloatType>(element))
    return int64_t(1) << f.getFPMantissaWidth();
  return std::nullopt;
}

/// The width at which the lattice keeps \p v's range: its element type's
/// for integers, 64 for floats.
unsigned widthOf(Value v) {
  unsigned width = ConstantIntRanges::getStorageBitwidth(v.getType());
  return width ? width : 64;
}

/// \p arg (the range of \p v) at 64 bits; none when unknown (a float's
/// entry state is a range of width 0).
Range wide(const IntegerValueRange &arg, Value v) {
  if (arg.isUninitialized())
    return std::nullopt;
  const ConstantIntRanges &r = arg.getValue();
  unsigned width = r.smin().getBitWidth();
  if (width == 0)
    return std::nullopt;
  if (width == 64)
    return r;
  // i1 counts 0 and 1 (a condition, a mask); wider integers are signed.
  return widthOf(v) == 1 ? intrange::extUIRange(r, 64)
                         : intrange::extSIRange(r, 64);
}

ConstantIntRanges span(int64_t lo, int64_t hi) {
  return ConstantIntRanges::fromSigned(APInt(64, lo, true),
                                       APInt(64, hi, true));
}

/// Sets \p v's range to \p r when \p v holds it exactly; otherwise the full
/// range (of width 0 for a float: no range).
void setRange(SetIntLatticeFn set, Value v, Range r) {
  Type element = getElementTypeOrSelf(v.getType());
  std::optional<int64_t> limit = exactLimit(element);
  int64_t lo = element.isInteger(1) ? 0 : (limit ? -*limit : 0);
  if (r && limit && r->smin().getSExtValue() >= lo &&
      r->smax().getSExtValue() <= *limit) {
    unsigned width = widthOf(v);
    set(v, IntegerValueRange(width == 64 ? *r : intrange::truncRange(*r, width)));
    return;
  }
  set(v, IntegerValueRange::getMaxRange(v));
}

/// Every result of \p op gets \p r (as setRange allows).
void setAll(Operation *op, SetIntLatticeFn set, Range r) {
  for (Value result : op->getResults())
    setRange(set, result, r);
}

/// The union of the ranges of \p op's operands \p first..end; none when one
/// is unknown.
Range hull(Operation *op, Ranges args, unsigned first = 0,
           std::optional<unsigned> end = std::nullopt) {
  Range out;
  for (unsigned i = first; i < end.value_or(args.size()); ++i) {
    Range r = wide(args[i], op->getOperand(i));
    if (!r)
      return std::nullopt;
    out = out ? out->rangeUnion(*r) : *r;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The transfer functions
//===----------------------------------------------------------------------===//

/// Data movement: the result's elements are the operands' elements.
void moves(Operation *op, Ranges args, SetIntLatticeFn set) {
  setAll(op, set, hull(op, args));
}

/// tg.gather and tg.bound: the elements of operand 0.
void movesFirst(Operation *op, Ranges args, SetIntLatticeFn set) {
  setAll(op, set, hull(op, args, 0, 1));
}

void constant(Operation *op, Ranges, SetIntLatticeFn set) {
  auto dense = dyn_cast<DenseElementsAttr>(cast<ConstantOp>(op).getValue());
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  std::optional<int64_t> limit = exactLimit(element);
  Range out;
  auto add = [&](int64_t x) {
    out = out ? out->rangeUnion(span(x, x)) : span(x, x);
  };
  if (dense && isa<IntegerType>(element)) {
    for (const APInt &x : dense.getValues<APInt>())
      add(element.isInteger(1) ? int64_t(x.getZExtValue()) : x.getSExtValue());
  } else if (dense && limit) {
    for (const APFloat &x : dense.getValues<APFloat>()) {
      double d = x.convertToDouble();
      if (!(std::abs(d) <= double(*limit)) || d != std::trunc(d))
        return setAll(op, set, std::nullopt);
      add(int64_t(d));
    }
  }
  setAll(op, set, out);
}

/// tg.cast: integers stay what they are (truncated to a narrower integer
/// when they fit, setRange checks).
void castRange(Operation *op, Ranges args, SetIntLatticeFn set) {
  setAll(op, set, wide(args[0], op->getOperand(0)));
}

template <ConstantIntRanges (*Infer)(ArrayRef<ConstantIntRanges>)>
void binary(Operation *op, Ranges args, SetIntLatticeFn set) {
  Range a = wide(args[0], op->getOperand(0)),
        b = wide(args[1], op->getOperand(1));
  setAll(op, set, a && b ? Range(Infer({*a, *b})) : std::nullopt);
}

ConstantIntRanges add(ArrayRef<ConstantIntRanges> r) {
  return intrange::inferAdd(r);
}
ConstantIntRanges sub(ArrayRef<ConstantIntRanges> r) {
  return intrange::inferSub(r);
}
ConstantIntRanges mul(ArrayRef<ConstantIntRanges> r) {
  return intrange::inferMul(r);
}

template <intrange::CmpPredicate Pred>
void compare(Operation *op, Ranges args, SetIntLatticeFn set) {
  Range a = wide(args[0], op->getOperand(0)),
        b = wide(args[1], op->getOperand(1));
  std::optional<bool> known =
      a && b ? intrange::evaluatePred(Pred, *a, *b) : std::nullopt;
  setAll(op, set, known ? span(*known, *known) : span(0, 1));
}

/// tg.select: the chosen operand when the condition is known; min or max
/// for `select(less(x, y), x, y)` and `select(less(x, y), y, x)` (how the
/// importer writes them: lengthOp); otherwise the union.
void select(Operation *op, Ranges args, SetIntLatticeFn set) {
  auto s = cast<SelectOp>(op);
  Range cond = wide(args[0], s.getCond());
  Range a = wide(args[1], s.getTrueValue()),
        b = wide(args[2], s.getFalseValue());
  if (cond && cond->smin() == cond->smax())
    return setAll(op, set, cond->smin().isZero() ? b : a);
  if (!a || !b)
    return setAll(op, set, std::nullopt);
  if (auto less = s.getCond().getDefiningOp<LessOp>()) {
    if (less.getLhs() == s.getTrueValue() && less.getRhs() == s.getFalseValue())
      return setAll(op, set, intrange::inferMinS({*a, *b}));
    if (less.getLhs() == s.getFalseValue() && less.getRhs() == s.getTrueValue())
      return setAll(op, set, intrange::inferMaxS({*a, *b}));
  }
  setAll(op, set, a->rangeUnion(*b));
}

/// tg.reduce_sum: each result element sums `n` operand elements, each in
/// [lo, hi] (Unique counts its distinct values as a sum of a 0/1 mask).
void reduceSum(Operation *op, Ranges args, SetIntLatticeFn set) {
  Range r = wide(args[0], op->getOperand(0));
  int64_t in = cast<RankedTensorType>(op->getOperand(0).getType())
                   .getNumElements(),
          out = cast<RankedTensorType>(op->getResult(0).getType())
                    .getNumElements();
  if (!r || out == 0)
    return setAll(op, set, std::nullopt);
  ConstantIntRanges n = span(in / out, in / out);
  setAll(op, set, intrange::inferMul({*r, n}));
}

int64_t sizeOf(Value v, int64_t dim) {
  return cast<RankedTensorType>(v.getType()).getDimSize(dim);
}

/// An index into a dimension of at most \p size positions (0 when padding).
ConstantIntRanges indexRange(int64_t size) {
  return span(0, std::max<int64_t>(size - 1, 0));
}

void nonZero(Operation *op, Ranges, SetIntLatticeFn set) {
  auto nz = cast<NonZeroOp>(op);
  auto type = cast<RankedTensorType>(nz.getInput().getType());
  int64_t largest = 1;
  for (int64_t size : type.getShape())
    largest = std::max(largest, size);
  setRange(set, nz.getIndices(), indexRange(largest));
  setRange(set, nz.getCount(), span(0, type.getNumElements()));
}

void topK(Operation *op, Ranges args, SetIntLatticeFn set) {
  auto topk = cast<TopKOp>(op);
  int64_t k = topk.getK();
  auto type = cast<RankedTensorType>(topk.getInput().getType());
  int64_t axis = topk.getAxis() < 0 ? topk.getAxis() + type.getRank()
                                    : topk.getAxis();
  ConstantIntRanges count = span(0, k);
  if (Value valid = topk.getValid())
    if (Range v = wide(args[1], valid))
      count = count.intersection(intrange::inferMinS({span(k, k), *v}));
  setRange(set, topk.getValues(), std::nullopt);
  setRange(set, topk.getIndices(), indexRange(type.getDimSize(axis)));
  setRange(set, topk.getCount(), count);
}

void nonMaxSuppression(Operation *op, Ranges, SetIntLatticeFn set) {
  auto nms = cast<NonMaxSuppressionOp>(op);
  int64_t largest = 1;
  for (Value v : {nms.getBoxes(), nms.getScores()})
    for (int64_t size : cast<RankedTensorType>(v.getType()).getShape())
      largest = std::max(largest, size);
  setRange(set, nms.getSelected(), indexRange(largest));
  setRange(set, nms.getCount(), span(0, sizeOf(nms.getSelected(), 0)));
}

//===----------------------------------------------------------------------===//
// Attaching them
//===----------------------------------------------------------------------===//

using TransferFn = void (*)(Operation *, Ranges, SetIntLatticeFn);

template <class OpT, TransferFn Fn>
struct RangeModel
    : InferIntRangeInterface::ExternalModel<RangeModel<OpT, Fn>, OpT> {
  /// Waits until every operand has a range (the analysis calls again when
  /// one changes): a range set from a partial view could only widen.
  void inferResultRangesFromOptional(Operation *op, Ranges args,
                                     SetIntLatticeFn set) const {
    if (llvm::none_of(args, [](const IntegerValueRange &r) {
          return r.isUninitialized();
        }))
      Fn(op, args, set);
  }
  /// The analysis calls the method above; this one (every argument known)
  /// is the same function.
  void inferResultRanges(Operation *op, ArrayRef<ConstantIntRanges> args,
                         SetIntRangeFn set) const {
    SmallVector<IntegerValueRange> known(args.begin(), args.end());
    Fn(op, known, [&](Value v, const IntegerValueRange &r) {
      if (!r.isUninitialized())
        set(v, r.getValue());
    });
  }
};

template <class OpT, TransferFn Fn> void attach(MLIRContext *context) {
  OpT::template attachInterface<RangeModel<OpT, Fn>>(*context);
}

} // namespace

void loom::tg::registerTGLengthRangeModels(DialectRegistry &registry) {
  using P = intrange::CmpPredicate;
  registry.addExtension(+[](MLIRContext *context, TGDialect *) {
    attach<NonZeroOp, nonZero>(context);
    attach<TopKOp, topK>(context);
    attach<NonMaxSuppressionOp, nonMaxSuppression>(context);
    attach<ConstantOp, constant>(context);
    attach<CastOp, castRange>(context);
    attach<AddOp, binary<add>>(context);
    attach<SubOp, binary<sub>>(context);
    attach<MulOp, binary<mul>>(context);
    attach<MinOp, binary<intrange::inferMinS>>(context);
    attach<MaxOp, binary<intrange::inferMaxS>>(context);
    attach<ReduceSumOp, reduceSum>(context);
    attach<SelectOp, select>(context);
    attach<LessOp, compare<P::slt>>(context);
    attach<LessEqualOp, compare<P::sle>>(context);
    attach<GreaterOp, compare<P::sgt>>(context);
    attach<GreaterEqualOp, compare<P::sge>>(context);
    attach<EqualOp, compare<P::eq>>(context);
    attach<ReshapeOp, moves>(context);
    attach<SliceOp, moves>(context);
    attach<TransposeOp, moves>(context);
    attach<BroadcastToOp, moves>(context);
    attach<ConcatOp, moves>(context);
    attach<GatherOp, movesFirst>(context);
    attach<BoundOp, movesFirst>(context);
  });
}

LogicalResult LengthRangeAnalysis::visitOperation(
    Operation *op, ArrayRef<const IntegerValueRangeLattice *> operands,
    ArrayRef<IntegerValueRangeLattice *> results) {
  auto ifOp = dyn_cast<IfOp>(op);
  if (!ifOp)
    return IntegerRangeAnalysis::visitOperation(op, operands, results);
  Operation *yields[] = {ifOp.getThenBlock().getTerminator(),
                        ifOp.getElseBlock().getTerminator()};
  // Dead-code analysis knows nothing of tg.if: either branch may run.
  for (Operation *yield : yields) {
    auto *live =
        getOrCreate<Executable>(getProgramPointBefore(yield->getBlock()));
    propagateIfChanged(live, live->setToLive());
  }
  for (auto [i, lattice] : llvm::enumerate(results)) {
    Value result = op->getResult(i);
    SmallVector<IntegerValueRange, 2> ins;
    for (Operation *yield : yields)
      ins.push_back(
          getLatticeElementFor(getProgramPointAfter(op), yield->getOperand(i))
              ->getValue());
    // Wait for both branches; a branch's value without a range (a float's
    // entry state has width 0) leaves the result without one.
    if (llvm::any_of(ins, [](auto &r) { return r.isUninitialized(); }))
      continue;
    unsigned width = widthOf(result);
    IntegerValueRange joined = IntegerValueRange::getMaxRange(result);
    if (llvm::all_of(ins, [&](auto &r) {
          return r.getValue().smin().getBitWidth() == width;
        }))
      joined = IntegerValueRange::join(ins[0], ins[1]);
    propagateIfChanged(lattice, lattice->join(joined));
  }
  return success();
}
