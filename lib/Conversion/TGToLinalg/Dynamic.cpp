//===- Dynamic.cpp - Lowering of the ops with data-dependent lengths ------===//
//
// Part of Loom. tg.nonzero, tg.topk and tg.non_max_suppression as scf loops
// over tensors (tensor.extract / tensor.insert, bufferized with the rest of
// the kernel): they compact, select and compare, which linalg's structured
// ops do not express. Each computes loom/Support/DynamicAlgorithms.h's
// semantics (the interpreter's and libloomrt's steps') into results padded with zeros to the static bound, and
// the run-time length as a rank-0 i64 tensor.
//
// The selections (topk, nms) need no sort: the k-th pick is the best
// element that comes after the (k-1)-th in the order of DynamicAlgorithms.h's
// `before` (value, then position), so a pick is one scan. The CPU's default
// backend list gives the three ops to libloomrt's sort-based steps
// (lib/Compiler/Backends/Dynamic.cpp); GPU targets map them to parallel
// kernels first (lib/Codegen/GPU/Selections.cpp), and these one-thread
// loops run there only for an op that class does not take.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "loom/Conversion/TGToLinalg/DynamicOrder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <tuple>

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

/// Scalar and tensor helpers on an ImplicitLocOpBuilder.
struct Scalars : ScalarOps {
  /// A tensor of \p type filled with zeros.
  Value zeros(RankedTensorType type) {
    Value init = tensor::EmptyOp::create(b, type.getShape(), type.getElementType());
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(type.getElementType()));
    return linalg::FillOp::create(b, zero, init).getResult(0);
  }
  /// A rank-0 i64 tensor holding \p v (an index).
  Value lengthTensor(Value v) {
    return tensor::FromElementsOp::create(
        b, RankedTensorType::get({}, b.getI64Type()), ValueRange{toI64(v)});
  }
  /// The value of an optional length operand as an index clamped to
  /// [0, bound]; \p bound without one.
  Value validLength(Value operand, int64_t bound) {
    if (!operand)
      return index(bound);
    Value v = toIndex(tensor::ExtractOp::create(b, operand, ValueRange{}));
    Value clamped = arith::MaxSIOp::create(b, v, index(0));
    return minI(clamped, index(bound));
  }
  Value before(bool largest, Value x, Value i, Value y, Value j) {
    return buildBefore(b, largest, x, i, y, j);
  }
};

/// The number of elements of \p type before and after dimension \p axis.
std::pair<int64_t, int64_t> aroundAxis(RankedTensorType type, int64_t axis) {
  int64_t before = 1, after = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    (d < axis ? before : after) *= d == axis ? 1 : type.getDimSize(d);
  return {before, after};
}

/// A loop over [0, ub) carrying \p init; \p body returns the next values.
SmallVector<Value>
loop(ImplicitLocOpBuilder &b, Value ub, ValueRange init,
     llvm::function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value,
                                           ValueRange)>
         body) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto forOp = scf::ForOp::create(
      b, zero, ub, one, init,
      [&](OpBuilder &nb, Location loc, Value iv, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nb);
        scf::YieldOp::create(ib, body(ib, iv, args));
      });
  return SmallVector<Value>(forOp.getResults());
}

/// An scf.if yielding \p then's values or \p orElse's.
SmallVector<Value>
ifElse(ImplicitLocOpBuilder &b, Value cond,
       llvm::function_ref<SmallVector<Value>(ImplicitLocOpBuilder &)> then,
       llvm::function_ref<SmallVector<Value>(ImplicitLocOpBuilder &)> orElse) {
  auto ifOp = scf::IfOp::create(
      b, cond,
      [&](OpBuilder &nb, Location loc) {
        ImplicitLocOpBuilder ib(loc, nb);
        scf::YieldOp::create(ib, then(ib));
      },
      [&](OpBuilder &nb, Location loc) {
        ImplicitLocOpBuilder ib(loc, nb);
        scf::YieldOp::create(ib, orElse(ib));
      });
  return SmallVector<Value>(ifOp.getResults());
}

Lowered lowerNonZero(NonZeroOp op, OpBuilder &builder) {
  ImplicitLocOpBuilder b(op.getLoc(), builder);
  Scalars s{b};
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getIndices().getType());
  int64_t n = inType.getNumElements(), rank = inType.getRank();
  Value flat = reshapeTo(
      b, b.getLoc(), op.getInput(),
      RankedTensorType::get({n}, inType.getElementType()));
  Type elem = inType.getElementType();
  auto found = loop(
      b, s.index(n), {s.zeros(outType), s.index(0)},
      [&](ImplicitLocOpBuilder &ib, Value i, ValueRange args) {
        Scalars is{ib};
        Value x = tensor::ExtractOp::create(ib, flat, ValueRange{i});
        Value zero = arith::ConstantOp::create(ib, ib.getZeroAttr(elem));
        Value nonZero =
            isa<FloatType>(elem)
                ? Value(arith::CmpFOp::create(ib, arith::CmpFPredicate::UNE, x, zero))
                : is.cmp(arith::CmpIPredicate::ne, x, zero);
        return ifElse(
            ib, nonZero,
            [&](ImplicitLocOpBuilder &tb) -> SmallVector<Value> {
              Scalars ts{tb};
              Value out = args[0], count = args[1], rest = i;
              int64_t stride = n;
              for (int64_t d = 0; d < rank; ++d) {
                stride /= std::max<int64_t>(inType.getDimSize(d), 1);
                Value st = ts.index(std::max<int64_t>(stride, 1));
                Value coord = arith::DivUIOp::create(tb, rest, st);
                rest = arith::RemUIOp::create(tb, rest, st);
                out = tensor::InsertOp::create(tb, ts.toI64(coord), out,
                                               ValueRange{ts.index(d), count});
              }
              return {out, arith::AddIOp::create(tb, count, ts.index(1))};
            },
            [&](ImplicitLocOpBuilder &) -> SmallVector<Value> {
              return {args[0], args[1]};
            });
      });
  return SmallVector<Value>{found[0], s.lengthTensor(found[1])};
}

Lowered lowerTopK(TopKOp op, OpBuilder &builder) {
  ImplicitLocOpBuilder b(op.getLoc(), builder);
  Scalars s{b};
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = inType.getRank();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t dim = inType.getDimSize(axis), k = op.getK();
  int64_t outer, inner;
  std::tie(outer, inner) = aroundAxis(inType, axis);
  Type elem = inType.getElementType();
  Value x = reshapeTo(b, b.getLoc(), op.getInput(),
                      RankedTensorType::get({outer, dim, inner}, elem));
  auto valuesType = RankedTensorType::get({outer, k, inner}, elem);
  auto indicesType = RankedTensorType::get({outer, k, inner}, b.getI64Type());
  Value valid = s.validLength(op.getValid(), dim);
  Value count = s.minI(valid, s.index(k));
  bool largest = op.getLargest();
  auto lines = loop(
      b, s.index(outer * inner), {s.zeros(valuesType), s.zeros(indicesType)},
      [&](ImplicitLocOpBuilder &lb, Value line, ValueRange lineArgs) {
        Scalars ls{lb};
        Value o = arith::DivUIOp::create(lb, line, ls.index(inner));
        Value in = arith::RemUIOp::create(lb, line, ls.index(inner));
        auto at = [&](ImplicitLocOpBuilder &ab, Value p) -> Value {
          return tensor::ExtractOp::create(ab, x, ValueRange{o, p, in});
        };
        // Pick j: the best element after pick j - 1 (prev; -1 at first).
        auto picks = loop(
            lb, count, {lineArgs[0], lineArgs[1], ls.index(-1)},
            [&](ImplicitLocOpBuilder &pb, Value j, ValueRange pickArgs) {
              Scalars ps{pb};
              Value prev = pickArgs[2];
              Value first = ps.cmp(arith::CmpIPredicate::slt, prev, ps.index(0));
              Value prevSafe = arith::MaxSIOp::create(pb, prev, ps.index(0));
              Value prevX = at(pb, prevSafe);
              auto best = loop(
                  pb, valid, {ps.index(-1)},
                  [&](ImplicitLocOpBuilder &sb, Value p, ValueRange scan) {
                    Scalars ss{sb};
                    Value xp = at(sb, p), cur = scan[0];
                    Value curSafe = arith::MaxSIOp::create(sb, cur, ss.index(0));
                    Value after =
                        ss.orI(first, ss.before(largest, prevX, prevSafe, xp, p));
                    Value none = ss.cmp(arith::CmpIPredicate::slt, cur, ss.index(0));
                    Value better = ss.orI(
                        none, ss.before(largest, xp, p, at(sb, curSafe), curSafe));
                    return SmallVector<Value>{
                        ss.select(ss.andI(after, better), p, cur)};
                  })[0];
              Value v = tensor::InsertOp::create(pb, at(pb, best), pickArgs[0],
                                                 ValueRange{o, j, in});
              Value idx = tensor::InsertOp::create(pb, ps.toI64(best), pickArgs[1],
                                                   ValueRange{o, j, in});
              return SmallVector<Value>{v, idx, best};
            });
        return SmallVector<Value>{picks[0], picks[1]};
      });
  auto resultType = [&](Value r) { return cast<RankedTensorType>(r.getType()); };
  return SmallVector<Value>{
      reshapeTo(b, b.getLoc(), lines[0], resultType(op.getValues())),
      reshapeTo(b, b.getLoc(), lines[1], resultType(op.getIndices())),
      s.lengthTensor(count)};
}

Lowered lowerNonMaxSuppression(NonMaxSuppressionOp op, OpBuilder &builder) {
  ImplicitLocOpBuilder b(op.getLoc(), builder);
  Scalars s{b};
  auto boxesType = cast<RankedTensorType>(op.getBoxes().getType());
  auto scoresType = cast<RankedTensorType>(op.getScores().getType());
  if (!boxesType.getElementType().isF32() || !scoresType.getElementType().isF32())
    return op.emitOpError("is lowered for f32 boxes and scores only");
  int64_t batches = scoresType.getDimSize(0), classes = scoresType.getDimSize(1);
  int64_t n = scoresType.getDimSize(2);
  int64_t maxOut = std::min<int64_t>(op.getMaxOutputBoxesPerClass(), n);
  auto outType = cast<RankedTensorType>(op.getSelected().getType());
  Value valid = s.validLength(op.getValid(), n);
  Value picksPerClass = s.minI(valid, s.index(std::max<int64_t>(maxOut, 0)));
  Value iou = f32(b, b.getLoc(), op.getIouThreshold().convertToDouble());
  std::optional<double> scoreThreshold;
  if (auto t = op.getScoreThreshold())
    scoreThreshold = t->convertToDouble();
  auto flagsType = RankedTensorType::get({n}, b.getI1Type());
  auto classes_ = loop(
      b, s.index(batches * classes), {s.zeros(outType), s.index(0)},
      [&](ImplicitLocOpBuilder &cb, Value bc, ValueRange classArgs) {
        Scalars cs{cb};
        Value batch = arith::DivUIOp::create(cb, bc, cs.index(classes));
        Value cls = arith::RemUIOp::create(cb, bc, cs.index(classes));
        auto score = [&](ImplicitLocOpBuilder &ab, Value p) -> Value {
          return tensor::ExtractOp::create(ab, op.getScores(),
                                           ValueRange{batch, cls, p});
        };
        auto box = [&](ImplicitLocOpBuilder &ab, Value p) {
          SmallVector<Value> v;
          for (int64_t c = 0; c < 4; ++c)
            v.push_back(tensor::ExtractOp::create(
                ab, op.getBoxes(), ValueRange{batch, p, Scalars{ab}.index(c)}));
          return v;
        };
        // Per class: the suppressed flags, the last pick, whether done.
        auto picks = loop(
            cb, picksPerClass,
            {classArgs[0], classArgs[1], cs.zeros(flagsType), cs.index(-1),
             arith::ConstantIntOp::create(cb, 0, 1)},
            [&](ImplicitLocOpBuilder &pb, Value, ValueRange a) {
              Scalars ps{pb};
              Value flags = a[2], prev = a[3];
              Value first = ps.cmp(arith::CmpIPredicate::slt, prev, ps.index(0));
              Value prevSafe = arith::MaxSIOp::create(pb, prev, ps.index(0));
              Value prevScore = score(pb, prevSafe);
              Value best = loop(
                  pb, valid, {ps.index(-1)},
                  [&](ImplicitLocOpBuilder &sb, Value p, ValueRange scan) {
                    Scalars ss{sb};
                    Value sp = score(sb, p), cur = scan[0];
                    Value curSafe = arith::MaxSIOp::create(sb, cur, ss.index(0));
                    Value ok = ss.andI(
                        ss.orI(first, ss.before(true, prevScore, prevSafe, sp, p)),
                        ss.notI(tensor::ExtractOp::create(sb, flags, ValueRange{p})));
                    if (scoreThreshold)
                      ok = ss.andI(ok, arith::CmpFOp::create(
                                           sb, arith::CmpFPredicate::OGT, sp,
                                           f32(sb, sb.getLoc(), *scoreThreshold)));
                    Value none = ss.cmp(arith::CmpIPredicate::slt, cur, ss.index(0));
                    Value better = ss.orI(
                        none, ss.before(true, sp, p, score(sb, curSafe), curSafe));
                    return SmallVector<Value>{ss.select(ss.andI(ok, better), p, cur)};
                  })[0];
              Value take = ps.andI(ps.notI(a[4]),
                                   ps.cmp(arith::CmpIPredicate::sge, best, ps.index(0)));
              return ifElse(
                  pb, take,
                  [&](ImplicitLocOpBuilder &tb) -> SmallVector<Value> {
                    Scalars ts{tb};
                    Value out = a[0], row = a[1];
                    Value cells[3] = {batch, cls, best};
                    for (int64_t c = 0; c < 3; ++c)
                      out = tensor::InsertOp::create(tb, ts.toI64(cells[c]), out,
                                                     ValueRange{row, ts.index(c)});
                    SmallVector<Value> chosen = box(tb, best);
                    Value marked = loop(
                        tb, valid, {flags},
                        [&](ImplicitLocOpBuilder &mb, Value p, ValueRange m) {
                          Scalars ms{mb};
                          Value hit = ms.orI(
                              ms.cmp(arith::CmpIPredicate::eq, p, best),
                              buildSuppresses(mb, chosen, box(mb, p),
                                         op.getCenterPointBox() == 1, iou));
                          Value old = tensor::ExtractOp::create(mb, m[0], ValueRange{p});
                          return SmallVector<Value>{tensor::InsertOp::create(
                              mb, ms.orI(old, hit), m[0], ValueRange{p})};
                        })[0];
                    return {out, arith::AddIOp::create(tb, row, ts.index(1)),
                            marked, best, a[4]};
                  },
                  [&](ImplicitLocOpBuilder &eb) -> SmallVector<Value> {
                    return {a[0], a[1], a[2], a[3],
                            arith::ConstantIntOp::create(eb, 1, 1)};
                  });
            });
        return SmallVector<Value>{picks[0], picks[1]};
      });
  return SmallVector<Value>{classes_[0], s.lengthTensor(classes_[1])};
}

} // namespace

/// The updates viewed as [pre, T, post] (T: the index elements) and the
/// output as [pre, dim, post]; for every index t whose wrapped value `at` is
/// in range, out[p, at, q] += updates[p, t, q]. Out-of-range indices add
/// nothing, as in the generic form.
Lowered lowering::lowerScatterAddLoop(ScatterAddOp op, OpBuilder &builder) {
  ImplicitLocOpBuilder b(op.getLoc(), builder);
  Scalars s{b};
  auto outType = cast<RankedTensorType>(op.getType());
  auto idxType = cast<RankedTensorType>(op.getIndices().getType());
  int64_t rank = outType.getRank();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t dim = int64_t(op.getDimSize()), count = idxType.getNumElements();
  int64_t pre, post;
  std::tie(pre, post) = aroundAxis(outType, axis);
  Type elem = outType.getElementType();
  Value updates = reshapeTo(b, b.getLoc(), op.getUpdates(),
                            RankedTensorType::get({pre, count, post}, elem));
  Value indices = reshapeTo(
      b, b.getLoc(), op.getIndices(),
      RankedTensorType::get({count}, idxType.getElementType()));
  auto viewType = RankedTensorType::get({pre, dim, post}, elem);
  auto added = loop(
      b, s.index(count), {s.zeros(viewType)},
      [&](ImplicitLocOpBuilder &tb, Value t, ValueRange acc) {
        Scalars ts{tb};
        Value raw = tensor::ExtractOp::create(tb, indices, ValueRange{t});
        Value wrapped = ts.toIndex(wrapIndex(tb, tb.getLoc(), raw, dim));
        Value inRange = ts.andI(
            ts.cmp(arith::CmpIPredicate::sge, wrapped, ts.index(0)),
            ts.cmp(arith::CmpIPredicate::slt, wrapped, ts.index(dim)));
        return ifElse(
            tb, inRange,
            [&](ImplicitLocOpBuilder &ib) -> SmallVector<Value> {
              Scalars is{ib};
              return loop(ib, is.index(pre), {acc[0]},
                          [&](ImplicitLocOpBuilder &pb, Value p,
                              ValueRange pa) {
                            return loop(
                                pb, Scalars{pb}.index(post), {pa[0]},
                                [&](ImplicitLocOpBuilder &qb, Value q,
                                    ValueRange qa) -> SmallVector<Value> {
                                  Value u = tensor::ExtractOp::create(
                                      qb, updates, ValueRange{p, t, q});
                                  Value old = tensor::ExtractOp::create(
                                      qb, qa[0], ValueRange{p, wrapped, q});
                                  Value sum = arith::AddFOp::create(qb, old, u);
                                  return {tensor::InsertOp::create(
                                      qb, sum, qa[0],
                                      ValueRange{p, wrapped, q})};
                                });
                          });
            },
            [&](ImplicitLocOpBuilder &) -> SmallVector<Value> {
              return {acc[0]};
            });
      });
  return SmallVector<Value>{reshapeTo(b, b.getLoc(), added[0], outType)};
}

void lowering::attachDynamicModels(MLIRContext *context) {
  attach<NonZeroOp, lowerNonZero>(context);
  attach<TopKOp, lowerTopK>(context);
  attach<NonMaxSuppressionOp, lowerNonMaxSuppression>(context);
}
