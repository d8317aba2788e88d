//===- Sampler.cpp - The next token from a row of logits ------------------===//
//
// Part of Loom. See Sampler.h. A draw is fully specified (the same tokens
// on every platform for a seed): std::mt19937_64 seeded with the seed, one
// 64-bit draw per sampled token, its top 53 bits as u in [0, 1); the
// candidates in descending probability (ties: lower id first), the first
// whose cumulative probability exceeds u times their total is the token.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace loom::generate;

int64_t loom::generate::argmax(llvm::ArrayRef<float> logits) {
  int64_t best = 0;
  for (int64_t i = 1; i < int64_t(logits.size()); ++i)
    if (logits[i] > logits[best] || std::isnan(logits[best]))
      best = i;
  return best;
}

int64_t Sampler::next(llvm::ArrayRef<float> logits) {
  if (!options.sample || options.temperature <= 0)
    return argmax(logits);
  // Temperature: softmax(logits / T), in double.
  int64_t n = int64_t(logits.size());
  double top = logits[argmax(logits)];
  std::vector<double> p(n);
  for (int64_t i = 0; i < n; ++i)
    p[i] = std::exp((double(logits[i]) - top) / options.temperature);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return p[a] > p[b] || (p[a] == p[b] && a < b);
  });
  // Top-k: the k most probable.
  size_t kept =
      options.topK > 0 ? size_t(std::min(options.topK, n)) : order.size();
  // Top-p: the fewest most probable whose probability (renormalised over
  // the top-k) reaches p.
  double total = 0;
  for (size_t i = 0; i < kept; ++i)
    total += p[order[i]];
  if (options.topP < 1) {
    double cumulative = 0;
    for (size_t i = 0; i < kept; ++i) {
      cumulative += p[order[i]];
      if (cumulative >= options.topP * total) {
        kept = i + 1;
        break;
      }
    }
    total = cumulative;
  }
  double u = double(rng() >> 11) * 0x1.0p-53;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += p[order[i]];
    if (cumulative > u * total)
      return order[i];
  }
  return order[kept - 1];
}
