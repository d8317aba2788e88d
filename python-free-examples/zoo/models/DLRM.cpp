//===- DLRM.cpp - A deep learning recommendation model --------------------===//
//
// Part of Loom. DLRM (Naumov et al.) in the multi-branch form GraphPipe
// trains: the DLRM example of GraphPipe's artifact (cmu-catalyst/FlexFlow,
// examples/cpp/DLRM/dlrm.cc) pairs every sparse feature with a dense one, 7
// of each, so that the graph has 14 parallel branches:
//
//   sparse branch i  ids [batch, 1] (bag size 1) -> embedding table
//                    `emb_l.i` (1,000,000 x 64, tg.gather) -> [batch, 1, 64]
//   dense branch i   features [batch, 4] -> bottom MLP `bot_l.i`
//                    4 -> 64 -> 64 (relu, no bias, as in the artifact)
//   interaction      the 14 vectors stacked [batch, 14, 64], Z = T x T^T
//                    (a batched tg.matmul), the 91 entries below the
//                    diagonal picked with tg.gather (DLRM's "dot"
//                    interaction), concatenated after the 7 dense vectors
//                    -> [batch, 7 x 64 + 91 = 539]
//   top MLP          `top_l`: 539 -> 64 (relu) -> 2 (sigmoid), no bias
//
// The artifact concatenates the 14 vectors instead (its interaction "cat";
// the dot interaction is DLRM's default and what the DLRM paper describes).
// --vocab sets the rows of every table (default 1,000,000, the artifact's
// table size: 7 x 256 MB of weights).
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {
constexpr int64_t kBranches = 7, kDenseIn = 4, kFeature = 64;
} // namespace

Outputs zoo::buildDLRM(GraphBuilder &b, const ModelOptions &o) {
  int64_t vocab = o.vocab.value_or(1000000);
  if (!checkRange(b, "--vocab", vocab, 1, int64_t(1) << 31))
    return {};
  Type i64 = b.getBuilder().getI64Type();
  MlpOptions bottom;
  bottom.hidden = bottom.last = Act::Relu;
  bottom.bias = false;
  SmallVector<Value> dense, features;
  for (int64_t i = 0; i < kBranches; ++i) {
    std::string n = std::to_string(i);
    Value ids = b.input("sparse" + n, {o.batch, 1}, i64);
    features.push_back(b.embedding(ids, vocab, kFeature, "emb_l." + n));
    Value x = b.input("dense" + n, {o.batch, kDenseIn});
    x = b.mlp(x, {kFeature, kFeature}, "bot_l." + n, bottom);
    dense.push_back(x);
    features.push_back(b.reshape(x, {o.batch, 1, kFeature}));
  }

  // Dot interaction: all pairwise dot products, the strictly lower triangle.
  const int64_t n = 2 * kBranches;
  Value t = b.concat(features, 1);
  Value z = b.reshape(b.matmul(t, b.transpose(t, {0, 2, 1})), {o.batch, n * n});
  SmallVector<int64_t> pairs;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      pairs.push_back(i * n + j);
  Value indices = b.constantI64(pairs, {int64_t(pairs.size())});
  dense.push_back(b.gather(z, indices, 1));

  MlpOptions top;
  top.hidden = Act::Relu;
  top.last = Act::Sigmoid;
  top.bias = false;
  Value p = b.mlp(b.concat(dense, 1), {kFeature, 2}, "top_l", top);
  return {{"probability", p}};
}
