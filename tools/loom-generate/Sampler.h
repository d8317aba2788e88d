//===- Sampler.h - The next token from a row of logits ----------*- C++ -*-===//
//
// Part of Loom. Greedy decoding (the largest logit, the lowest id on a
// tie), or sampling with a seed, in the order temperature, top-k, top-p
// (docs/tools/loom-generate.md "Sampling").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_SAMPLER_H
#define LOOM_TOOLS_LOOM_GENERATE_SAMPLER_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <random>

namespace loom::generate {

struct SamplingOptions {
  /// False: greedy (the other fields are not read).
  bool sample = false;
  double temperature = 1.0;
  /// 0: every token.
  int64_t topK = 0;
  /// 1: every token.
  double topP = 1.0;
  uint64_t seed = 0;
};

class Sampler {
public:
  explicit Sampler(const SamplingOptions &options)
      : options(options), rng(options.seed) {}

  /// The next token from one sequence's logits (the vocabulary's).
  int64_t next(llvm::ArrayRef<float> logits);

private:
  SamplingOptions options;
  std::mt19937_64 rng;
};

/// The index of the largest value, the lowest one on a tie (NaN is never
/// the largest).
int64_t argmax(llvm::ArrayRef<float> logits);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_SAMPLER_H
