//===- CacheInPlace.cpp - A concatenated KV cache made a tied one ---------===//
//
// Part of Loom. --tg-cache-in-place (include/loom/Dialect/TG/Transforms/
// CacheInPlace.h; docs/Decoding.md "Exports with a concatenated cache"):
// every layer whose past key and value fit (CacheInPlaceMatch.h) becomes
//
//   present = update_slice(cache [B, H, C, D], new, past_length)
//             (the cache tied to the present)
//   tg.attention(q, present.key, present.value, past_length + S)
//
// with one i64 input `past_length` appended to the function; an attention
// tg.attention cannot express (a soft cap, a mask from an attention_mask
// input) stays explicit over the caches (CacheInPlaceMask.cpp). A layer
// that does not fit is left as it is, with a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "CacheInPlaceMatch.h"

#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/Transforms/CacheInPlace.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <variant>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

/// Where S new positions go, past_length clamped as tg.update_slice clamps
/// its offset (to [0, C - S]), in f32 (exact below 2^24,
/// docs/Decoding.md); and the live length offset + S, i64.
struct LiveLength {
  Value offset, length;
};

LiveLength liveLength(OpBuilder &b, Location loc, Value pastLength,
                      int64_t fresh, int64_t capacity) {
  auto type = cast<RankedTensorType>(pastLength.getType());
  auto f32 = type.clone(b.getF32Type());
  Value x = CastOp::create(b, loc, f32, pastLength);
  Value offset = ClipOp::create(b, loc, f32, x, b.getF64FloatAttr(0),
                                b.getF64FloatAttr(double(capacity - fresh)));
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  Value s = ConstantOp::create(
      b, loc, scalarType, DenseElementsAttr::get(scalarType, float(fresh)));
  x = AddOp::create(b, loc, f32, offset, s);
  return {offset, CastOp::create(b, loc, type, x)};
}

/// Rewrites one attention over its caches: the past arguments become the
/// caches (of \p capacity positions), the concatenations update_slices at
/// \p pastLength, the explicit attention a tg.attention over the live
/// length (or, where it has a pointwise op tg.attention cannot express, the
/// same ops over the caches with a mask built from the offset).
void rewrite(const ExportedAttention &a, Value pastLength,
             const LiveLength &live, int64_t capacity, func::ReturnOp ret) {
  Operation *last = a.ops.back();
  OpBuilder b(last);
  Location loc = last->getLoc();
  auto cacheType = [&](const PastCache &p) {
    auto t = cast<RankedTensorType>(p.past.getType());
    return RankedTensorType::get(
        {t.getDimSize(0), t.getDimSize(1), capacity, t.getDimSize(3)},
        t.getElementType());
  };
  SmallVector<Value, 2> updated;
  for (const PastCache *p : {a.key, a.value}) {
    p->past.setType(cacheType(*p));
    updated.push_back(
        UpdateSliceOp::create(b, p->concat.getLoc(), p->past.getType(), p->past,
                              p->fresh(), pastLength, b.getI64IntegerAttr(2)));
    ret->setOperand(p->result, updated.back());
  }
  Value out = a.isExplicit()
                  ? explicitAttention(b, a, updated[0], updated[1], live.offset)
                  : AttentionOp::create(b, loc, last->getResult(0).getType(),
                                        a.query, updated[0], updated[1],
                                        live.length, b.getF64FloatAttr(a.scale),
                                        b.getBoolAttr(a.causal));
  last->getResult(0).replaceAllUsesWith(out);
  for (Operation *op : llvm::reverse(a.ops)) {
    SmallVector<Value> operands(op->getOperands());
    op->erase();
    for (Value v : operands)
      if (Operation *def = v.getDefiningOp();
          def && isa<ConstantOp>(def) && def->use_empty())
        def->erase();
  }
  a.key->concat->erase();
  a.value->concat->erase();
}

/// Says why a past stays as it is (or how else it is done), at \p where; an
/// imported op's location names its ONNX value, which the message repeats (a
/// file location of an ONNX model has no line).
void remark(Location where, const Twine &why,
            const Twine &outcome = "compiled as it is") {
  InFlightDiagnostic d = emitRemark(where) << why;
  if (auto name = dyn_cast<NameLoc>(where))
    d << " (at ONNX value '" << name.getName().getValue() << "')";
  d << ": " << outcome;
}

/// Says that \p a stays explicit over the caches, and why.
void remarkExplicit(const ExportedAttention &a, int64_t capacity) {
  std::string what =
      a.maskInput
          ? "adds to its scores a mask computed from input '" +
                argName(a.maskInput) + "' (now [batch, " +
                std::to_string(capacity) +
                "], over the caches' positions), which tg.attention has no "
                "place for"
          : "has a '" + a.pointwise->getName().getStringRef().str() +
                "' that tg.attention cannot express";
  remark(a.maskInput ? a.maskChain.back()->getLoc() : a.pointwise->getLoc(),
         "the attention over the present of '" + argName(a.key->past) + "' " +
             what,
         "kept as matmul and softmax over all " + Twine(capacity) +
             " positions of the caches, those past the live length masked "
             "(a step reads the whole cache)");
}

/// Drops the attentions whose mask input also feeds ops the rewrite does
/// not replace (a layer left as it is): the input cannot be retyped.
void keepWholeMaskInputs(SmallVector<ExportedAttention> &attentions) {
  llvm::SmallPtrSet<Operation *, 16> replaced;
  for (const ExportedAttention &a : attentions)
    replaced.insert(a.ops.begin(), a.ops.end());
  auto whole = [&](const ExportedAttention &a) {
    return !a.maskInput ||
           llvm::all_of(a.maskChain.back()->getUsers(),
                        [&](Operation *u) { return replaced.contains(u); });
  };
  for (const ExportedAttention &a : attentions)
    if (!whole(a))
      remark(a.maskChain.back()->getLoc(),
             "the mask input '" + argName(a.maskInput) +
                 "' of the attention over the present of '" +
                 argName(a.key->past) +
                 "' is read by ops the rewrite does not replace");
  llvm::erase_if(attentions,
                 [&](const ExportedAttention &a) { return !whole(a); });
}

/// Retypes a mask input [B, L + S] and the ops from it to [B, C] and
/// [..., C], once.
void retypeMaskInput(const ExportedAttention &a, int64_t capacity) {
  auto withCapacity = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape.back() = capacity;
    v.setType(t.clone(shape));
  };
  if (cast<RankedTensorType>(a.maskInput.getType()).getShape().back() ==
      capacity)
    return;
  withCapacity(a.maskInput);
  for (Operation *op : a.maskChain)
    withCapacity(op->getResult(0));
}

/// The past caches of \p fn, each refused one remarked.
SmallVector<PastCache> pastCaches(func::FuncOp fn, func::ReturnOp ret) {
  SmallVector<PastCache> caches;
  for (BlockArgument arg : fn.getArguments()) {
    auto matched = matchPastCache(arg, ret);
    if (auto *p = std::get_if<PastCache>(&matched))
      caches.push_back(*p);
    else if (auto &r = std::get<Refusal>(matched); !r.why.empty())
      remark(r.where, r.why);
  }
  return caches;
}

/// Whether \p p's present is read as the values of an attention (the
/// right operand of a matmul).
bool readsAsValues(const PastCache &p) {
  Value present = p.concat.getResult();
  return llvm::any_of(present.getUsers(), [&](Operation *u) {
    return isa<MatmulOp>(u) && u->getOperand(1) == present;
  });
}

struct TGCacheInPlacePass
    : PassWrapper<TGCacheInPlacePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TGCacheInPlacePass)

  TGCacheInPlacePass() = default;
  TGCacheInPlacePass(const TGCacheInPlacePass &other) : PassWrapper(other) {}
  TGCacheInPlacePass(int64_t c, bool batched) {
    capacity = c;
    perSequence = batched;
  }

  StringRef getArgument() const override { return "tg-cache-in-place"; }
  StringRef getDescription() const override {
    return "Rewrite a decoder export's concat(past, new) key/value cache "
           "into a cache of fixed capacity updated in place, read by "
           "tg.attention up to a run-time past_length";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<TGDialect>();
  }

  void runOnOperation() override;

  Option<int64_t> capacity{*this, "capacity",
                           llvm::cl::desc("The caches' capacity C in "
                                          "positions (required)"),
                           llvm::cl::init(0)};
  Option<bool> perSequence{
      *this, "per-sequence",
      llvm::cl::desc("past_length is i64 [B] (each sequence's own) instead "
                     "of a rank-0 i64"),
      llvm::cl::init(false)};
};

/// The attentions of \p caches to rewrite (those that fit \p capacity and
/// whose mask input, if any, nothing else reads); every refusal remarked.
SmallVector<ExportedAttention> attentionsToRewrite(ArrayRef<PastCache> caches,
                                                   int64_t capacity) {
  SmallVector<ExportedAttention> attentions;
  for (const PastCache &key : caches) {
    auto matched = matchExportedAttention(key, caches);
    if (auto *a = std::get_if<ExportedAttention>(&matched)) {
      int64_t total = key.pastLength() + key.newLength();
      if (total > capacity)
        remark(key.concat.getLoc(),
               "the present of past input '" + argName(key.past) + "' holds " +
                   Twine(total) +
                   " positions, more than capacity=" + Twine(capacity));
      else
        attentions.push_back(*a);
    } else if (!readsAsValues(key)) {
      // A value present is matched from its key's attention: only keys'
      // refusals are said (a value's own would repeat them).
      auto &r = std::get<Refusal>(matched);
      remark(r.where, r.why);
    }
  }
  keepWholeMaskInputs(attentions);
  return attentions;
}

/// Appends the input past_length (i64, rank 0 or [\p batch]) to \p fn.
Value addPastLength(func::FuncOp fn, bool perSequence, int64_t batch) {
  Builder b(fn.getContext());
  auto type = RankedTensorType::get(perSequence ? ArrayRef<int64_t>{batch}
                                                : ArrayRef<int64_t>{},
                                    b.getI64Type());
  unsigned index = fn.getNumArguments();
  if (failed(fn.insertArgument(index, type,
                               b.getDictionaryAttr(b.getNamedAttr(
                                   "tg.name", b.getStringAttr("past_length"))),
                               fn.getLoc())))
    return {};
  return fn.getArgument(index);
}

/// Erases offset + S where only attentions kept explicit (which read the
/// offset) were rewritten.
void eraseUnusedLengths(const llvm::SmallDenseMap<int64_t, LiveLength> &all) {
  for (const auto &entry : all) {
    Operation *cast = entry.second.length.getDefiningOp();
    if (!cast->use_empty())
      continue;
    Operation *add = cast->getOperand(0).getDefiningOp();
    Operation *fresh = add->getOperand(1).getDefiningOp();
    cast->erase();
    add->erase();
    fresh->erase();
  }
}

void TGCacheInPlacePass::runOnOperation() {
  func::FuncOp fn = getOperation();
  if (capacity <= 0) {
    fn.emitError("--tg-cache-in-place needs capacity=C, the caches' "
                 "positions, at least 1");
    return signalPassFailure();
  }
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return;
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return;
  SmallVector<PastCache> caches = pastCaches(fn, ret);
  SmallVector<ExportedAttention> attentions =
      attentionsToRewrite(caches, capacity);
  if (attentions.empty())
    return;
  for (const ExportedAttention &a : attentions) {
    if (a.isExplicit())
      remarkExplicit(a, capacity);
    if (a.maskInput)
      retypeMaskInput(a, capacity);
  }
  Value pastLength = addPastLength(
      fn, perSequence,
      cast<RankedTensorType>(attentions.front().key->past.getType())
          .getDimSize(0));
  if (!pastLength)
    return signalPassFailure();
  // One live length per count of new tokens, computed first.
  llvm::SmallDenseMap<int64_t, LiveLength> lengths;
  auto start = OpBuilder::atBlockBegin(&fn.getBody().front());
  for (const ExportedAttention &a : attentions) {
    LiveLength &live = lengths[a.key->newLength()];
    if (!live.length)
      live = liveLength(start, fn.getLoc(), pastLength, a.key->newLength(),
                        capacity);
    rewrite(a, pastLength, live, capacity, ret);
  }
  eraseUnusedLengths(lengths);
  fn.setType(FunctionType::get(fn.getContext(),
                               fn.getBody().front().getArgumentTypes(),
                               ret.getOperandTypes()));
  for (const ExportedAttention &a : attentions)
    for (const PastCache *p : {a.key, a.value})
      setTiedResult(fn, p->past.getArgNumber(), p->result);
}

} // namespace

std::unique_ptr<Pass> tg::createTGCacheInPlacePass(int64_t capacity,
                                                   bool perSequence) {
  return std::make_unique<TGCacheInPlacePass>(capacity, perSequence);
}

LogicalResult tg::makeCachesInPlace(ModuleOp module, int64_t capacity,
                                    const safetensors::File *weights,
                                    bool perSequence) {
  PassManager pm(module.getContext());
  if (weights) {
    constexpr int64_t kSmall = int64_t(1) << 20;
    std::unique_ptr<Pass> fold = createTGFoldWeightsPass(weights, kSmall);
    if (failed(fold->initializeOptions(
            "max-moved-bytes=" + std::to_string(kSmall),
            [&](const Twine &message) {
              return module.emitError(message);
            })))
      return failure();
    pm.addPass(std::move(fold));
  }
  pm.addNestedPass<func::FuncOp>(
      createTGCacheInPlacePass(capacity, perSequence));
  return pm.run(module);
}

void tg::registerTGCacheInPlacePass() {
  PassRegistration<TGCacheInPlacePass>();
}
