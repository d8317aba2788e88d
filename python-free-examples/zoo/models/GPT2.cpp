//===- GPT2.cpp - GPT-2 (HuggingFace GPT2LMHeadModel) as a decoder --------===//
//
// Part of Loom. GPT-2 small (Radford et al.; the `gpt2` checkpoint's
// configuration): 12 pre-LN layers of hidden 768, 12 heads of 64, an MLP of
// 4 x 768 with GELU's tanh form, vocabulary 50257, layernorm epsilon 1e-5,
// the language-model head tied to the token embedding; 124M parameters.
// Built as a decoder program (Decoder.h: `prefill` and `decode` entries over
// a key/value cache updated in place), per entry:
//
//   embeddings  wte[input_ids] + wpe[positions] (columns of wte^T)
//   12 x        x += c_proj(attention(split(c_attn(ln_1(x)))))
//               x += mlp.c_proj(gelu(mlp.c_fc(ln_2(x))))
//   head        ln_f, then the last token's hidden state times wte^T
//
// Weights are named as in HuggingFace's state_dict (`transformer.h.3.attn.
// c_attn.weight`, ...); GPT-2's Conv1D already stores [in, out]. The
// position table has `--context` rows (1024 in the checkpoint).
//
//===----------------------------------------------------------------------===//

#include "Decoder.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

Value gpt2Layer(GraphBuilder &b, DecoderEntry &entry, const DecoderShape &s,
                Value x, unsigned layer) {
  GraphBuilder::Scope scope = b.scope("transformer.h." + std::to_string(layer));
  Value qkv = b.linear(b.layerNorm(x, "ln_1"), 3 * s.hidden, "attn.c_attn");
  SmallVector<Value> parts = b.split(qkv, 2, {s.hidden, s.hidden, s.hidden});
  if (parts.size() != 3)
    return {};
  Value attended = entry.attend(layer, splitHeads(b, parts[0], s.heads),
                                splitHeads(b, parts[1], s.kvHeads),
                                splitHeads(b, parts[2], s.kvHeads));
  x = b.add(x, b.linear(mergeHeads(b, attended), s.hidden, "attn.c_proj"));
  Value h = b.linear(b.layerNorm(x, "ln_2"), 4 * s.hidden, "mlp.c_fc",
                     Act::GeluTanh);
  return b.add(x, b.linear(h, s.hidden, "mlp.c_proj"));
}

Value gpt2Logits(GraphBuilder &b, DecoderEntry &entry, const DecoderShape &s) {
  // The head reads wte transposed; the embedding gathers its columns, so
  // that the artifact stores the table once (the transpose is folded).
  Value wteT =
      b.transpose(b.weight("transformer.wte.weight", {s.vocab, s.hidden}),
                  {1, 0});
  Value x = b.add(b.transpose(b.gather(wteT, entry.ids(), 1), {1, 2, 0}),
                  entry.positionRows(b.weight("transformer.wpe.weight",
                                              {s.capacity, s.hidden})));
  for (int64_t l = 0; l < s.layers; ++l)
    x = gpt2Layer(b, entry, s, x, l);
  {
    GraphBuilder::Scope scope = b.scope("transformer");
    x = b.layerNorm(x, "ln_f");
  }
  return b.matmul(entry.lastToken(x), wteT);
}

} // namespace

Outputs zoo::buildGPT2Small(GraphBuilder &b, const ModelOptions &o) {
  return buildDecoder(
      b, o, {/*capacity=*/1024, /*layers=*/12, /*hidden=*/768, /*vocab=*/50257,
             /*kvGroup=*/1},
      [&](DecoderEntry &entry, const DecoderShape &shape) {
        return gpt2Logits(b, entry, shape);
      });
}
