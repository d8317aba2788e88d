//===- AttentionKernel.h - tg.attention on the interpreter's tensors -*- C++
//-*-===//
//
// Part of Loom. The reference semantics of tg.attention (TGOps.td), generic
// over the number domain D as the other kernels (Kernels.h) are: for each
// query, the scores of its visible keys (loom/Support/AttentionMask.h), a
// softmax with the maximum subtracted first, and the weighted sum of the
// values, all in D's arithmetic. Written for clarity, not speed: the
// compiled step (lib/Runtime/CPU/Kernels/Attention.cpp) is checked against
// it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_ATTENTIONKERNEL_H
#define LOOM_INTERPRETER_ATTENTIONKERNEL_H

#include "loom/Interpreter/Tensor.h"
#include "loom/Support/AttentionMask.h"

#include <cstdint>
#include <vector>

namespace loom::interp {

/// tg.attention's parameters: the scale, the mask, and each sequence's live
/// length (one per batch; empty: the capacity); tg.shard_attention's also
/// the shard k and v hold (the lengths then in positions of the sequence).
struct AttentionParams {
  double scale = 1;
  bool causal = false;
  std::vector<int64_t> lengths;
  attention::Shard shard;
};

/// q [B, Hq, Sq, D], k and v [B, Hkv, Skv, D] (shapes the verifier checked).
/// With \p lse ([B, Hq, Sq]), each query's log-sum-exp of its scores too
/// (-inf where it sees no key).
template <class D>
Tensor<D> attention(const Tensor<D> &q, const Tensor<D> &k, const Tensor<D> &v,
                    const AttentionParams &p, Tensor<D> *lse = nullptr) {
  using T = typename D::T;
  int64_t batch = q.shape[0], qHeads = q.shape[1], qLen = q.shape[2];
  int64_t dim = q.shape[3], kvHeads = k.shape[1], capacity = k.shape[2];
  int64_t group = qHeads / kvHeads;
  Tensor<D> out(q.shape);
  T scale = D::fromDouble(p.scale);
  std::vector<T> scores(static_cast<size_t>(capacity));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t live = attention::shardLive(
        p.lengths.empty() ? capacity : p.lengths[b], p.shard, capacity);
    for (int64_t h = 0; h < qHeads; ++h) {
      const T *keys =
          k.data.data() + (b * kvHeads + h / group) * capacity * dim;
      const T *values =
          v.data.data() + (b * kvHeads + h / group) * capacity * dim;
      for (int64_t i = 0; i < qLen; ++i) {
        const T *query = q.data.data() + ((b * qHeads + h) * qLen + i) * dim;
        T *o = out.data.data() + ((b * qHeads + h) * qLen + i) * dim;
        int64_t n = attention::shardKeys(
            attention::visibleKeys(live, qLen, i, p.causal), p.shard,
            capacity);
        T *rowLse = lse ? lse->data.data() + (b * qHeads + h) * qLen + i
                        : nullptr;
        if (rowLse)
          *rowLse = D::lowest();
        if (n == 0)
          continue;
        T m = D::lowest();
        for (int64_t j = 0; j < n; ++j) {
          T dot = D::zero();
          for (int64_t d = 0; d < dim; ++d)
            dot = D::add(dot, D::mul(query[d], keys[j * dim + d]));
          scores[j] = D::mul(scale, dot);
          m = D::max(m, scores[j]);
        }
        T sum = D::zero();
        for (int64_t j = 0; j < n; ++j) {
          scores[j] = D::exp(D::sub(scores[j], m));
          sum = D::add(sum, scores[j]);
        }
        if (rowLse)
          *rowLse = D::add(m, D::log(sum));
        for (int64_t j = 0; j < n; ++j) {
          T w = D::div(scores[j], sum);
          for (int64_t d = 0; d < dim; ++d)
            o[d] = D::add(o[d], D::mul(w, values[j * dim + d]));
        }
      }
    }
  }
  return out;
}

} // namespace loom::interp

#endif // LOOM_INTERPRETER_ATTENTIONKERNEL_H
