//===- MultiModal.cpp - A two-branch multi-modal transformer --------------===//
//
// Part of Loom. GraphPipe's multi-modal transformer: independent transformer
// encoder branches, one per modality, joined at the end. The configuration
// is the CLIP model of GraphPipe's artifact (cmu-catalyst/FlexFlow,
// examples/cpp/CLIP/clip.cc, CLIPConfig defaults), built here in CLIP's
// layout with the pieces that artifact leaves out (embeddings, layernorms,
// projections, the join):
//
//   text branch    token ids [batch, 76] -> token embedding (49408 x 512,
//                  tg.gather) + positional embedding -> 12 pre-LN
//                  transformer layers (width 512, 8 heads, FFN 2048) ->
//                  final LayerNorm -> last token -> projection 512 -> 512
//   image branch   image [batch, 3, 224, 224] -> patch embedding (conv
//                  16x16/16 -> 1024 x 14 x 14) -> 196 tokens + class token
//                  + positional embedding -> LayerNorm -> 24 pre-LN layers
//                  (width 1024, 16 heads, FFN 4096) -> LayerNorm on the class
//                  token -> projection 1024 -> 512
//   join           both embeddings L2-normalised; logits = 100 * image x
//                  text^T ([batch, batch], CLIP's logits_per_image)
//
// --layers N sets both branches to N layers, --seq the text length, --vocab
// the text vocabulary. The MLPs use GELU (erf form; CLIP's QuickGELU is
// x * sigmoid(1.702 x)). Layernorms: 2 x (12 + 24) + 3 = 75.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

constexpr int64_t kEmbed = 512;

struct Branch {
  int64_t width, heads, layers;
};

Value encoder(GraphBuilder &b, Value x, const Branch &branch) {
  TransformerLayerOptions layer;
  layer.numHeads = branch.heads;
  layer.ffnDim = 4 * branch.width;
  layer.activation = Act::GeluErf;
  layer.epsilon = 1e-5;
  layer.preNorm = true;
  for (int64_t i = 0; i < branch.layers; ++i)
    x = b.transformerLayer(x, "layer." + std::to_string(i), layer);
  return x;
}

/// x / ||x|| along the last dimension.
Value normalize(GraphBuilder &b, Value x) {
  return b.mul(x, b.rsqrt(b.reduceSum(b.mul(x, x), {-1})));
}

Value textBranch(GraphBuilder &b, Value ids, int64_t seq, int64_t vocab,
                 const Branch &branch) {
  GraphBuilder::Scope s = b.scope("text");
  if (!ids)
    return {};
  Value x = b.embedding(ids, vocab, branch.width, "token_embedding");
  x = b.add(x, b.weight("positional_embedding", {seq, branch.width}));
  x = encoder(b, x, branch);
  x = b.layerNorm(x, "ln_final");
  int64_t batch = cast<RankedTensorType>(ids.getType()).getDimSize(0);
  // The features of the last token (CLIP takes the end-of-text token).
  x = b.reshape(b.sliceAxis(x, 1, seq - 1, seq), {batch, branch.width});
  return b.matmul(x, b.weight("text_projection", {branch.width, kEmbed}));
}

Value imageBranch(GraphBuilder &b, Value image, const Branch &branch) {
  GraphBuilder::Scope s = b.scope("visual");
  constexpr int64_t kPatch = 16;
  if (!image)
    return {};
  auto shape = cast<RankedTensorType>(image.getType()).getShape();
  int64_t batch = shape[0], grid = shape[2] / kPatch, tokens = grid * grid;
  Value x = b.conv(image, branch.width, kPatch, "conv1",
                   Conv2dOptions().stride(kPatch));
  x = b.transpose(b.reshape(x, {batch, branch.width, tokens}), {0, 2, 1});
  Value cls = b.broadcastTo(b.weight("class_embedding", {1, 1, branch.width}),
                            {batch, 1, branch.width});
  x = b.concat({cls, x}, 1);
  x = b.add(x, b.weight("positional_embedding", {tokens + 1, branch.width}));
  x = b.layerNorm(x, "ln_pre");
  x = encoder(b, x, branch);
  x = b.reshape(b.sliceAxis(x, 1, 0, 1), {batch, branch.width});
  x = b.layerNorm(x, "ln_post");
  return b.matmul(x, b.weight("proj", {branch.width, kEmbed}));
}

} // namespace

Outputs zoo::buildMultiModal(GraphBuilder &b, const ModelOptions &o) {
  int64_t seq = o.seq.value_or(76), vocab = o.vocab.value_or(49408);
  Branch text{512, 8, o.layers.value_or(12)};
  Branch vision{1024, 16, o.layers.value_or(24)};
  if (!checkRange(b, "--seq", seq, 1, 1 << 16) ||
      !checkRange(b, "--vocab", vocab, 1, int64_t(1) << 31) ||
      !checkRange(b, "--layers", text.layers, 0, 1024))
    return {};
  Value ids = b.input("text", {o.batch, seq}, b.getBuilder().getI64Type());
  Value image = b.input("image", {o.batch, 3, 224, 224});
  Value textEmbeds = normalize(b, textBranch(b, ids, seq, vocab, text));
  Value imageEmbeds = normalize(b, imageBranch(b, image, vision));
  Value logits =
      b.scale(b.matmul(imageEmbeds, b.transpose(textEmbeds, {1, 0})), 100.0);
  return {{"logits_per_image", logits},
          {"image_embeds", imageEmbeds},
          {"text_embeds", textEmbeds}};
}
