//===- Bert.cpp - BERT-base (HuggingFace BertModel) -----------------------===//
//
// Part of Loom. BERT-base (Devlin et al.; bert-base-uncased's configuration)
// at batch 1 and sequence length 128: hidden 768, 12 heads of 64, FFN 3072,
// 12 post-LN encoder layers (GELU, erf form; layernorm epsilon 1e-12), in
// HuggingFace's BertModel layout:
//
//   embeddings  word (30522 x 768, tg.gather) + token type (2 x 768,
//               tg.gather) + position (the first `seq` rows of 512 x 768,
//               tg.slice), LayerNorm
//   encoder     12 x BertLayer (GraphBuilder::transformerLayer)
//   pooler      the first token, dense 768 -> 768, tanh
//
// There is no padding mask (every token attends to every token), so unlike
// HuggingFace's graph no zero mask is added to the scores. Layernorms:
// 1 + 2 x 12 = 25. Matmuls: 12 x (6 dense + 2 attention) + 1 = 97.
// Weights are named as in HuggingFace's state_dict (`encoder.layer.3.
// attention.self.query.weight`, ...) with dense weights stored [in, out].
//
// TASO and TENSAT measure a smaller "BERT" (8 attention-only layers, seq 64,
// hidden 1024); `bert-1layer` is this model with one encoder layer, the
// granularity of python-free-examples/bert_encoder_layer.mlir.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

constexpr int64_t kHidden = 768;
constexpr int64_t kMaxPositions = 512;

Outputs buildBert(GraphBuilder &b, const ModelOptions &o,
                  int64_t defaultLayers) {
  int64_t seq = o.seq.value_or(128), layers = o.layers.value_or(defaultLayers),
          vocab = o.vocab.value_or(30522);
  if (!checkRange(b, "--seq", seq, 1, kMaxPositions) ||
      !checkRange(b, "--layers", layers, 0, 1024) ||
      !checkRange(b, "--vocab", vocab, 1, int64_t(1) << 31))
    return {};
  Type i64 = b.getBuilder().getI64Type();
  Value ids = b.input("input_ids", {o.batch, seq}, i64);
  Value types = b.input("token_type_ids", {o.batch, seq}, i64);

  Value h;
  {
    GraphBuilder::Scope s = b.scope("embeddings");
    Value words = b.embedding(ids, vocab, kHidden, "word_embeddings");
    Value tokenTypes = b.embedding(types, 2, kHidden, "token_type_embeddings");
    Value positions = b.sliceAxis(
        b.weight("position_embeddings.weight", {kMaxPositions, kHidden}), 0, 0,
        seq);
    h = b.add(b.add(words, tokenTypes), positions);
    h = b.layerNorm(h, "LayerNorm", 1e-12);
  }

  TransformerLayerOptions layer;
  layer.numHeads = 12;
  layer.ffnDim = 3072;
  layer.activation = Act::GeluErf;
  layer.epsilon = 1e-12;
  for (int64_t i = 0; i < layers; ++i)
    h = b.transformerLayer(h, "encoder.layer." + std::to_string(i), layer);

  Value first = b.reshape(b.sliceAxis(h, 1, 0, 1), {o.batch, kHidden});
  Value pooled = b.linear(first, kHidden, kHidden, "pooler.dense", Act::Tanh);
  return {{"last_hidden_state", h}, {"pooler_output", pooled}};
}

} // namespace

Outputs zoo::buildBertBase(GraphBuilder &b, const ModelOptions &o) {
  return buildBert(b, o, 12);
}

Outputs zoo::buildBert1Layer(GraphBuilder &b, const ModelOptions &o) {
  return buildBert(b, o, 1);
}
