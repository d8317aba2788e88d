//===- CacheInPlaceMatch.cpp - What --tg-cache-in-place recognises --------===//
//
// Part of Loom. See CacheInPlaceMatch.h.
//
//===----------------------------------------------------------------------===//

#include "CacheInPlaceMatch.h"

#include "loom/Dialect/TG/IR/TGTraits.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

int64_t PastCache::pastLength() const {
  return cast<RankedTensorType>(past.getType()).getDimSize(2);
}

int64_t PastCache::newLength() const {
  return cast<RankedTensorType>(fresh().getType()).getDimSize(2);
}

std::string tg::argName(BlockArgument arg) {
  auto fn = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (auto name =
          fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tg.name"))
    return name.str();
  return "arg" + std::to_string(arg.getArgNumber());
}

/// The position of \p v among \p ret's operands when it is there once.
static std::optional<unsigned> returnedOnce(Value v, func::ReturnOp ret) {
  std::optional<unsigned> at;
  for (OpOperand &use : v.getUses()) {
    if (use.getOwner() != ret)
      continue;
    if (at)
      return std::nullopt;
    at = use.getOperandNumber();
  }
  return at;
}

std::variant<PastCache, Refusal> tg::matchPastCache(BlockArgument arg,
                                                    func::ReturnOp ret) {
  std::string name = argName(arg);
  auto concat =
      dyn_cast<ConcatOp>(arg.hasOneUse() ? *arg.getUsers().begin() : nullptr);
  // Unnamed, a past is the first operand of a returned concatenation along
  // axis 2 of a rank-4 tensor: a channel concatenation of a CNN is not one.
  bool feedsReturnedConcat = llvm::any_of(arg.getUsers(), [&](Operation *op) {
    auto c = dyn_cast<ConcatOp>(op);
    auto t = c ? dyn_cast<RankedTensorType>(c.getType()) : nullptr;
    return c && t && t.getRank() == 4 &&
           (int64_t(c.getAxis()) == 2 || int64_t(c.getAxis()) == -2) &&
           op->getOperand(0) == arg &&
           llvm::is_contained(op->getUsers(), ret.getOperation());
  });
  // Integer inputs (past_length, attention masks) and caches already tied
  // (the pass run twice) are no candidates.
  auto fn = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if ((!StringRef(name).starts_with("past") && !feedsReturnedConcat) || !type ||
      !isa<FloatType>(type.getElementType()) ||
      getTiedResult(fn, arg.getArgNumber()))
    return Refusal{arg.getLoc(), ""};
  auto say = [&](Location where, const Twine &why) {
    return Refusal{where, ("past input '" + name + "' " + why).str()};
  };
  if (type.getRank() != 4 || !type.hasStaticShape())
    return say(arg.getLoc(), "is not a [batch, heads, past, head size] "
                             "tensor of static shape");
  if (arg.use_empty())
    return say(arg.getLoc(), "is not read");
  if (!concat) {
    // Said at a reader other than the concatenation.
    auto users = arg.getUsers();
    auto it =
        llvm::find_if(users, [](Operation *op) { return !isa<ConcatOp>(op); });
    Operation *other = it != users.end() ? *it : *std::next(users.begin());
    return say(other->getLoc(), "has readers besides one concatenation");
  }
  if (concat.getInputs().size() != 2 || concat.getInputs()[0] != arg)
    return say(concat.getLoc(), "is not the first of the two operands of "
                                "its concatenation");
  int64_t axis = int64_t(concat.getAxis());
  axis = axis < 0 ? axis + 4 : axis;
  if (axis != 2)
    return say(concat.getLoc(), "is concatenated along axis " + Twine(axis) +
                                    ", not the sequence axis 2");
  if (!cast<RankedTensorType>(concat.getType()).hasStaticShape())
    return say(concat.getLoc(), "has a present of dynamic shape");
  std::optional<unsigned> result = returnedOnce(concat.getResult(), ret);
  if (!result)
    return say(concat.getLoc(), "has a present (its concatenation) that is "
                                "not returned once as an output");
  return PastCache{arg, concat, *result};
}

/// The scalar value of a splat float constant.
static std::optional<double> splatValue(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// A score the mask hides: -inf or below -1e30 (the exporters' fill,
/// float's lowest, whose exp is 0 next to any visible score).
static bool hides(double v) { return v <= -1e30; }

namespace {
/// Which of the [S, L + S] scores a mask lets through.
struct MaskShape {
  int64_t queries, keys, past;
};
} // namespace

/// Whether \p visible (true: the score is seen) is causal (query i sees
/// keys 0 .. past + i) or empty (every key seen), given as a constant of
/// shape [..., S or 1, L + S] with leading 1s; nullopt: neither.
static std::optional<bool>
maskIsCausal(const MaskShape &s,
             llvm::function_ref<std::optional<bool>(int64_t, int64_t)> seen) {
  bool causal = true, empty = true;
  for (int64_t i = 0; i < s.queries; ++i)
    for (int64_t j = 0; j < s.keys; ++j) {
      std::optional<bool> v = seen(i, j);
      if (!v)
        return std::nullopt;
      causal &= *v == (j <= s.past + i);
      empty &= *v;
    }
  if (empty)
    return false;
  if (causal)
    return true;
  return std::nullopt;
}

/// The mask constant \p mask as a function of (query, key), broadcast to
/// [S, L + S]; null when its shape is not one that broadcasts so.
static std::optional<DenseElementsAttr> maskValues(Value mask,
                                                   const MaskShape &s) {
  auto c = mask.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  if (!dense)
    return std::nullopt;
  ArrayRef<int64_t> shape = dense.getType().getShape();
  if (dense.isSplat())
    return dense;
  if (shape.size() < 2 || shape.back() != s.keys ||
      (shape[shape.size() - 2] != s.queries && shape[shape.size() - 2] != 1) ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  return dense;
}

/// Element (i, j) of a mask maskValues accepted.
template <typename T>
static T maskAt(DenseElementsAttr dense, const MaskShape &s, int64_t i,
                int64_t j) {
  if (dense.isSplat())
    return dense.getSplatValue<T>();
  int64_t rows = dense.getType().getShape().drop_back().back();
  return dense.getValues<T>()[(rows == 1 ? 0 : i) * s.keys + j];
}

/// The causality of a select(mask, scores, fill) or scores + mask step,
/// or nullopt (and \p why) when it is not provably causal or empty.
static std::optional<bool> maskStep(Operation *op, Value scores,
                                    const MaskShape &s, std::string &why) {
  if (auto select = dyn_cast<SelectOp>(op)) {
    std::optional<double> fill = splatValue(select.getFalseValue());
    auto dense = maskValues(select.getCond(), s);
    if (select.getTrueValue() != scores || !fill || !hides(*fill) || !dense) {
      why = "selects its scores with a mask that is not a constant over "
            "[queries, keys] or a fill that does not hide them";
      return std::nullopt;
    }
    auto seen = [&](int64_t i, int64_t j) -> std::optional<bool> {
      return maskAt<bool>(*dense, s, i, j);
    };
    std::optional<bool> causal = maskIsCausal(s, seen);
    if (!causal)
      why = "masks its scores neither causally nor not at all";
    return causal;
  }
  auto add = cast<AddOp>(op);
  Value mask = add.getLhs() == scores ? add.getRhs() : add.getLhs();
  auto dense = maskValues(mask, s);
  if (!dense || !isa<FloatType>(dense->getElementType())) {
    why = "adds to its scores a mask that is not a constant over [queries, "
          "keys]";
    return std::nullopt;
  }
  auto seen = [&](int64_t i, int64_t j) -> std::optional<bool> {
    double v = maskAt<APFloat>(*dense, s, i, j).convertToDouble();
    if (v == 0 || hides(v))
      return v == 0;
    return std::nullopt;
  };
  std::optional<bool> causal = maskIsCausal(s, seen);
  if (!causal)
    why = "adds to its scores a mask that is neither causal nor zero";
  return causal;
}

/// The only user of \p v, if it has one use.
static Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// Whether \p op computes each score alone from \p scores (an elementwise
/// op whose other operands are scalars), as a soft cap's tanh does.
static bool isPointwise(Operation *op, Value scores) {
  return op->hasTrait<Elementwise>() && op->getNumResults() == 1 &&
         op->getResult(0).getType() == scores.getType() &&
         llvm::all_of(op->getOperands(),
                      [&](Value v) { return v == scores || splatValue(v); });
}

/// Whether \p mask [..., L + S] is computed from one input [B, L + S] by
/// reshapes keeping the last axis, casts and elementwise ops with scalars,
/// each value read once but the last; fills \p a's maskInput and maskChain.
static bool matchInputMask(Value mask, int64_t keys, ExportedAttention &a) {
  SmallVector<Operation *> chain;
  for (Value v = mask;;) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() == 0 || type.getShape().back() != keys ||
        (v != mask && !v.hasOneUse()))
      return false;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (type.getRank() != 2)
        return false;
      a.maskInput = arg;
      a.maskChain.assign(chain.rbegin(), chain.rend());
      return true;
    }
    Operation *op = v.getDefiningOp();
    Value data;
    if (isa<ReshapeOp, CastOp>(op)) {
      data = op->getOperand(0);
    } else if (op->hasTrait<Elementwise>()) {
      for (Value operand : op->getOperands())
        if (!splatValue(operand) && !data)
          data = operand;
        else if (!splatValue(operand))
          return false;
      if (!data ||
          cast<ShapedType>(data.getType()).getShape() != type.getShape())
        return false;
    } else {
      return false;
    }
    chain.push_back(op);
    v = data;
  }
}

/// Follows the scores from q . k^T to the softmax: scales, one mask,
/// pointwise ops before the mask, softmax over the keys. Fills \p a (scale,
/// causal, mask, pointwise, ops) and returns the softmax, or null with
/// \p why.
static SoftmaxOp scoresToSoftmax(Value scores, const MaskShape &s,
                                 ExportedAttention &a, std::string &why) {
  bool masked = false;
  while (Operation *op = onlyUser(scores)) {
    Value added;
    if (isa<AddOp>(op))
      added =
          op->getOperand(0) == scores ? op->getOperand(1) : op->getOperand(0);
    a.ops.push_back(op);
    if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      if (int64_t axis = int64_t(softmax.getAxis()); axis != 3 && axis != -1) {
        why = "takes its softmax over an axis other than the keys";
        return {};
      }
      return softmax;
    }
    Value other;
    if (isa<DivOp, MulOp>(op))
      other =
          op->getOperand(0) == scores ? op->getOperand(1) : op->getOperand(0);
    // A positive scale only: a negative one would turn hidden scores into
    // the largest.
    if (std::optional<double> c = other ? splatValue(other) : std::nullopt;
        c && *c > 0 && std::isfinite(*c) &&
        (isa<MulOp>(op) || op->getOperand(0) == scores)) {
      a.scale = isa<MulOp>(op) ? a.scale * *c : a.scale / *c;
    } else if (added && !added.getDefiningOp<ConstantOp>() && !a.maskInput) {
      if (!matchInputMask(added, s.keys, a)) {
        why = "adds to its scores a mask that is neither a constant nor "
              "computed elementwise from one input [batch, keys]";
        return {};
      }
      masked = true;
    } else if (isa<SelectOp, AddOp>(op) && !a.mask) {
      std::optional<bool> causal = maskStep(op, scores, s, why);
      if (!causal)
        return {};
      a.causal = *causal;
      a.mask = op;
      masked = true;
    } else if (isPointwise(op, scores) && !masked) {
      // Kept as it is: the attention stays explicit over the caches.
      if (!a.pointwise)
        a.pointwise = op;
    } else if (isPointwise(op, scores)) {
      why = "has a '" + op->getName().getStringRef().str() + "' after its mask";
      return {};
    } else {
      why = "has a '" + op->getName().getStringRef().str() +
            "' between its scores and their softmax";
      return {};
    }
    scores = op->getResult(0);
  }
  why = "has scores read by more than one op";
  return {};
}

std::variant<ExportedAttention, Refusal>
tg::matchExportedAttention(const PastCache &key, ArrayRef<PastCache> caches) {
  ExportedAttention a;
  a.key = &key;
  Value present = key.concat.getResult();
  auto ret = cast<func::ReturnOp>(present.getParentBlock()->getTerminator());
  auto refuse = [&](Operation *at, const Twine &why) {
    return Refusal{
        at ? at->getLoc() : key.concat.getLoc(),
        ("the attention over the present of '" + argName(key.past) + "' " + why)
            .str()};
  };
  SmallVector<Operation *> readers;
  for (Operation *user : present.getUsers())
    if (user != ret)
      readers.push_back(user);
  auto transpose =
      readers.size() == 1 ? dyn_cast<TransposeOp>(readers.front()) : nullptr;
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 1, 3, 2})
    return refuse(readers.empty() ? nullptr : readers.front(),
                  "is not the exporter's q . k^T (one transpose of the "
                  "keys' last two axes, read by one matmul)");
  auto scores = dyn_cast_or_null<MatmulOp>(onlyUser(transpose.getResult()));
  if (!scores || scores.getRhs() != transpose.getResult())
    return refuse(transpose, "is not the exporter's q . k^T (one transpose "
                             "of the keys' last two axes, read by one "
                             "matmul)");
  a.query = scores.getLhs();
  auto qType = dyn_cast<RankedTensorType>(a.query.getType());
  auto kType = cast<RankedTensorType>(key.past.getType());
  if (!qType || qType.getRank() != 4 || !qType.hasStaticShape() ||
      qType.getDimSize(0) != kType.getDimSize(0) ||
      qType.getDimSize(2) != key.newLength() ||
      qType.getDimSize(3) != kType.getDimSize(3) ||
      qType.getDimSize(1) % kType.getDimSize(1))
    return refuse(scores, "has a query that is not [batch, heads, new "
                          "tokens, head size]");
  a.ops = {transpose, scores};
  MaskShape s{key.newLength(), key.pastLength() + key.newLength(),
              key.pastLength()};
  std::string why;
  SoftmaxOp softmax = scoresToSoftmax(scores.getResult(), s, a, why);
  if (!softmax)
    return refuse(a.ops.back(), why);
  auto out = dyn_cast_or_null<MatmulOp>(onlyUser(softmax.getResult()));
  const PastCache *value = nullptr;
  for (const PastCache &c : caches)
    if (out && out.getRhs() == c.concat.getResult())
      value = &c;
  if (!out || out.getLhs() != softmax.getResult() || !value ||
      llvm::range_size(value->concat->getUses()) != 2 || value == &key ||
      value->past.getType() != key.past.getType())
    return refuse(softmax, "does not multiply its probabilities by a value "
                           "present read by nothing else");
  a.value = value;
  a.ops.push_back(out);
  return a;
}
