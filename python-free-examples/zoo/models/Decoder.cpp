//===- Decoder.cpp - The prefill and decode entries of zoo decoders -------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Decoder.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

std::optional<DecoderShape> zoo::decoderShape(GraphBuilder &b,
                                              const ModelOptions &o,
                                              const DecoderDefaults &defaults) {
  DecoderShape shape;
  shape.batch = o.batch;
  shape.promptBound = o.seq.value_or(shape.promptBound);
  shape.capacity = o.context.value_or(defaults.capacity);
  shape.layers = o.layers.value_or(defaults.layers);
  shape.hidden = o.hidden.value_or(defaults.hidden);
  shape.vocab = o.vocab.value_or(defaults.vocab);
  // Positions and rows of [B * P, H] stay below 2^24 (indexExpr).
  if (!checkRange(b, "--context", shape.capacity, 1, int64_t(1) << 20) ||
      !checkRange(b, "--batch", shape.batch, 1, (int64_t(1) << 24) / shape.capacity) ||
      !checkRange(b, "--seq", shape.promptBound, 1, shape.capacity) ||
      !checkRange(b, "--layers", shape.layers, 1, 1024) ||
      !checkRange(b, "--hidden", shape.hidden, 2, 65536) ||
      !checkRange(b, "--vocab", shape.vocab, 2, int64_t(1) << 31))
    return std::nullopt;
  int64_t headDim = shape.hidden >= 128 ? 64 : shape.hidden / 2;
  if (shape.hidden % headDim) {
    b.fail("--hidden " + llvm::Twine(shape.hidden) +
           " is not a multiple of the head size " + llvm::Twine(headDim));
    return std::nullopt;
  }
  shape.heads = shape.hidden / headDim;
  int64_t group = std::min(defaults.kvGroup, shape.heads);
  while (shape.heads % group)
    --group;
  shape.kvHeads = shape.heads / group;
  return shape;
}

DecoderEntry::DecoderEntry(GraphBuilder &b, const DecoderShape &shape,
                           Phase phase)
    : b(b), shape(shape), entryPhase(phase),
      seq(phase == Phase::Prefill ? shape.promptBound : 1) {
  Type i64 = b.getBuilder().getI64Type();
  idsInput = b.input("input_ids", {shape.batch, seq}, i64);
  positions = b.input("positions", {shape.batch}, i64);
  if (phase == Phase::Prefill)
    lengths = b.input("lengths", {shape.batch}, i64);
  for (int64_t l = 0; l < shape.layers; ++l)
    for (const char *part : {"key", "value"}) {
      std::string name = "cache." + std::to_string(l) + "." + part;
      Value cache = b.input(name, {shape.batch, shape.kvHeads, shape.capacity,
                                   shape.headDim()});
      b.tie(cache, name);
      caches.push_back(cache);
      updated.push_back(cache);
      cacheNames.push_back(name);
    }
}

/// `clamp(x, lo, hi) + offset` for i64 `x` (a null offset: 0), through f32
/// (tg's arithmetic is on floats): exact for results below 2^24, which the
/// shape's ranges keep. The clamp keeps a bad length or position from
/// reading outside a table (update_slice and attention clamp their own).
static Value indexExpr(GraphBuilder &b, Value x, int64_t lo, int64_t hi,
                       Value offset = {}) {
  Type f32 = b.getBuilder().getF32Type(), i64 = b.getBuilder().getI64Type();
  Value y = b.clip(b.cast(x, f32), double(lo), double(hi));
  return b.cast(offset ? b.add(y, offset) : y, i64);
}

Value DecoderEntry::positionRows(Value table) {
  if (!table)
    return {};
  auto type = mlir::cast<RankedTensorType>(table.getType());
  int64_t rows = type.getDimSize(0);
  // Row clamp(positions[b], 0, rows - S) + j for token j of sequence b.
  SmallVector<float> steps;
  for (int64_t j = 0; j < seq; ++j)
    steps.push_back(float(j));
  Value at = indexExpr(b, b.reshape(positions, {shape.batch, 1}), 0,
                       rows - seq, b.constant(steps, {1, seq}));
  return b.gather(table, at, 0);
}

Value DecoderEntry::attend(unsigned layer, Value q, Value k, Value v) {
  Value &keys = updated[2 * layer], &values = updated[2 * layer + 1];
  keys = b.updateSlice(keys, k, positions, 2);
  values = b.updateSlice(values, v, positions, 2);
  // The S tokens are the last of the live sequence: positions + S (the
  // offset clamped as tg.update_slice clamps it).
  if (!liveLength)
    liveLength = indexExpr(b, positions, 0, shape.capacity - seq,
                           b.scalar(double(seq)));
  return b.fusedAttention(q, keys, values, liveLength, std::nullopt,
                          /*causal=*/true);
}

Value DecoderEntry::lastToken(Value h) {
  if (!h)
    return {};
  int64_t hidden = mlir::cast<RankedTensorType>(h.getType()).getDimSize(2);
  if (entryPhase == Phase::Decode)
    return b.reshape(h, {shape.batch, hidden});
  // Row b * P + lengths[b] - 1 of h seen as [B * P, H].
  SmallVector<float> rowStarts;
  for (int64_t i = 0; i < shape.batch; ++i)
    rowStarts.push_back(float(i * seq - 1));
  Value rows =
      indexExpr(b, lengths, 1, seq, b.constant(rowStarts, {shape.batch}));
  return b.gather(b.reshape(h, {shape.batch * seq, hidden}), rows, 0);
}

Outputs DecoderEntry::outputs(Value logits) {
  Outputs out = {{"logits", logits}};
  for (auto [name, cache] : llvm::zip(cacheNames, updated))
    out.push_back({name, cache});
  return out;
}

Outputs zoo::buildDecoder(GraphBuilder &b, const ModelOptions &o,
                          const DecoderDefaults &defaults, DecoderBody body) {
  std::optional<DecoderShape> shape = decoderShape(b, o, defaults);
  if (!shape)
    return {};
  Outputs prefill;
  {
    DecoderEntry entry(b, *shape, DecoderEntry::Phase::Prefill);
    prefill = entry.outputs(body(entry, *shape));
  }
  SmallVector<Value> values;
  SmallVector<StringRef> names;
  for (const Output &out : prefill) {
    values.push_back(out.value);
    names.push_back(out.name);
  }
  if (!b.nextFunction("decode", values, names))
    return {};
  DecoderEntry entry(b, *shape, DecoderEntry::Phase::Decode);
  return entry.outputs(body(entry, *shape));
}

Value zoo::splitHeads(GraphBuilder &b, Value x, int64_t heads) {
  if (!x)
    return {};
  ArrayRef<int64_t> s = mlir::cast<RankedTensorType>(x.getType()).getShape();
  return b.transpose(b.reshape(x, {s[0], s[1], heads, s[2] / heads}),
                     {0, 2, 1, 3});
}

Value zoo::mergeHeads(GraphBuilder &b, Value x) {
  if (!x)
    return {};
  ArrayRef<int64_t> s = mlir::cast<RankedTensorType>(x.getType()).getShape();
  return b.reshape(b.transpose(x, {0, 2, 1, 3}), {s[0], s[2], s[1] * s[3]});
}
