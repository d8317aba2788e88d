//===- Llama.cpp - Llama (HuggingFace LlamaForCausalLM) as a decoder ------===//
//
// Part of Loom. TinyLlama-1.1B (TinyLlama/TinyLlama-1.1B's configuration):
// 22 layers of hidden 2048, 32 query heads of 64 over 4 key/value heads
// (grouped-query attention), RMSNorm (epsilon 1e-5), rotary position
// embeddings (theta 10000, HuggingFace's rotate-half form), a SwiGLU MLP of
// 5632, vocabulary 32000, an untied language-model head; 1.1B parameters.
// Built as a decoder program (Decoder.h), per entry:
//
//   embeddings  embed_tokens[input_ids]
//   22 x        x += o_proj(attention(rope(q_proj(n)), rope(k_proj(n)),
//                                     v_proj(n)))        n = rmsnorm(x)
//               x += down_proj(silu(gate_proj(n)) * up_proj(n))
//   head        norm, then the last token's hidden state times lm_head
//
// Smaller shapes (--hidden, --layers, ...) keep 8 query heads per
// key/value head where there are 8 heads or more, and an MLP of 11/4 of the
// hidden width rounded to 64. Weights are named as in HuggingFace's
// state_dict (`model.layers.3.self_attn.q_proj.weight`, stored [in, out]).
//
//===----------------------------------------------------------------------===//

#include "Decoder.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

constexpr double kRopeTheta = 10000.0;
constexpr double kEpsilon = 1e-5;

/// x * rsqrt(mean(x^2) + eps) * name.weight over the last dimension.
Value rmsNorm(GraphBuilder &b, Value x, int64_t hidden, StringRef name) {
  Value meanSquare = b.reduceMean(b.mul(x, x), {-1});
  Value normed = b.mul(x, b.rsqrt(b.add(meanSquare, b.scalar(kEpsilon))));
  return b.mul(normed, b.weight((name + ".weight").str(), {hidden}));
}

/// The rotary tables cos and sin [C, D] of HuggingFace's rotate-half form:
/// column c of position p is the angle p * theta^(-2 (c mod D/2) / D).
std::pair<Value, Value> ropeTables(GraphBuilder &b, int64_t capacity,
                                   int64_t dim) {
  std::vector<float> cosines, sines;
  cosines.reserve(capacity * dim);
  sines.reserve(capacity * dim);
  for (int64_t p = 0; p < capacity; ++p)
    for (int64_t c = 0; c < dim; ++c) {
      double inverse =
          std::pow(kRopeTheta, -2.0 * double(c % (dim / 2)) / double(dim));
      cosines.push_back(float(std::cos(double(p) * inverse)));
      sines.push_back(float(std::sin(double(p) * inverse)));
    }
  return {b.constant(cosines, {capacity, dim}),
          b.constant(sines, {capacity, dim})};
}

/// x * cos + rotate_half(x) * sin for x [B, heads, S, D] and the tables'
/// rows at the entry's positions, [B or 1, 1, S, D].
Value rope(GraphBuilder &b, Value x, Value cos, Value sin, int64_t dim) {
  Value first = b.sliceAxis(x, 3, 0, dim / 2);
  Value second = b.sliceAxis(x, 3, dim / 2, dim);
  Value rotated = b.concat({b.neg(second), first}, 3);
  return b.add(b.mul(x, cos), b.mul(rotated, sin));
}

struct Rope {
  Value cos, sin;
};

/// The rotary rows of the entry's positions, [B or 1, 1, S, D].
Rope ropeRows(GraphBuilder &b, DecoderEntry &entry, const DecoderShape &s) {
  auto [cos, sin] = ropeTables(b, s.capacity, s.headDim());
  auto rows = [&](Value table) -> Value {
    Value r = entry.positionRows(table);
    if (!r)
      return {};
    ArrayRef<int64_t> shape =
        mlir::cast<RankedTensorType>(r.getType()).getShape();
    return b.reshape(r, {shape[0], 1, shape[1], shape[2]});
  };
  return {rows(cos), rows(sin)};
}

int64_t mlpWidth(int64_t hidden) { return (hidden * 11 / 4 + 63) / 64 * 64; }

Value llamaLayer(GraphBuilder &b, DecoderEntry &entry, const DecoderShape &s,
                 const Rope &r, Value x, unsigned layer) {
  GraphBuilder::Scope scope =
      b.scope("model.layers." + std::to_string(layer));
  int64_t d = s.headDim();
  Value n = rmsNorm(b, x, s.hidden, "input_layernorm");
  Value q = splitHeads(
      b, b.linear(n, s.heads * d, "self_attn.q_proj", Act::None, false),
      s.heads);
  Value k = splitHeads(
      b, b.linear(n, s.kvHeads * d, "self_attn.k_proj", Act::None, false),
      s.kvHeads);
  Value v = splitHeads(
      b, b.linear(n, s.kvHeads * d, "self_attn.v_proj", Act::None, false),
      s.kvHeads);
  Value attended = entry.attend(layer, rope(b, q, r.cos, r.sin, d),
                                rope(b, k, r.cos, r.sin, d), v);
  x = b.add(x, b.linear(mergeHeads(b, attended), s.hidden, "self_attn.o_proj",
                        Act::None, false));
  n = rmsNorm(b, x, s.hidden, "post_attention_layernorm");
  int64_t width = mlpWidth(s.hidden);
  Value gate = b.linear(n, width, "mlp.gate_proj", Act::Swish, false);
  Value up = b.linear(n, width, "mlp.up_proj", Act::None, false);
  return b.add(x, b.linear(b.mul(gate, up), s.hidden, "mlp.down_proj",
                           Act::None, false));
}

Value llamaLogits(GraphBuilder &b, DecoderEntry &entry, const DecoderShape &s) {
  Value x;
  {
    GraphBuilder::Scope scope = b.scope("model");
    x = b.embedding(entry.ids(), s.vocab, s.hidden, "embed_tokens");
  }
  Rope r = ropeRows(b, entry, s);
  for (int64_t l = 0; l < s.layers; ++l)
    x = llamaLayer(b, entry, s, r, x, l);
  {
    GraphBuilder::Scope scope = b.scope("model");
    x = rmsNorm(b, x, s.hidden, "norm");
  }
  return b.linear(entry.lastToken(x), s.vocab, "lm_head", Act::None, false);
}

} // namespace

Outputs zoo::buildTinyLlama(GraphBuilder &b, const ModelOptions &o) {
  return buildDecoder(
      b, o, {/*capacity=*/2048, /*layers=*/22, /*hidden=*/2048, /*vocab=*/32000,
             /*kvGroup=*/8},
      [&](DecoderEntry &entry, const DecoderShape &shape) {
        return llamaLogits(b, entry, shape);
      });
}
