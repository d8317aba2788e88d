//===- TokenLoop.cpp - Prefill, then one decode step per token ------------===//
//
// Part of Loom. See TokenLoop.h.
//
//===----------------------------------------------------------------------===//

#include "TokenLoop.h"

#include <chrono>

using namespace loom::generate;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The next token of every sequence: the real ones sampled in order, the
/// padding copies given their model's token (no draw of the generator, so
/// that the tokens do not depend on the batch's size).
std::vector<int64_t> chooseTokens(Sampler &sampler,
                                  const std::vector<float> &logits,
                                  const Batch &batch, int64_t vocab) {
  int64_t b = int64_t(batch.prompts.size());
  std::vector<int64_t> next(b);
  for (int64_t s = 0; s < b; ++s)
    next[s] = s < batch.real ? sampler.next(llvm::ArrayRef<float>(logits).slice(
                                   s * vocab, vocab))
                             : next[0];
  return next;
}

} // namespace

llvm::Expected<LoopResult>
loom::generate::runTokenLoop(DecoderSteps &steps, const Batch &batch,
                             const LoopOptions &opts) {
  int64_t b = int64_t(batch.prompts.size()), p = opts.promptBound;
  std::vector<int64_t> ids(b * p, 0), lengths(b);
  for (int64_t s = 0; s < b; ++s) {
    const std::vector<int64_t> &prompt = batch.prompts[s];
    std::copy(prompt.begin(), prompt.end(), ids.begin() + s * p);
    lengths[s] = int64_t(prompt.size());
  }
  Sampler sampler(opts.sampling);
  LoopResult result;
  std::vector<float> logits;
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error e = steps.prefill(ids, lengths, logits))
    return std::move(e);
  result.tokens.push_back(chooseTokens(sampler, logits, batch, opts.vocab));
  result.prefillSeconds = secondsSince(start);
  if (opts.keepLogits)
    result.logits.push_back(logits);
  if (opts.onStep)
    opts.onStep(0);
  std::vector<int64_t> positions = lengths;
  for (int64_t step = 1; step < opts.tokens; ++step) {
    start = std::chrono::steady_clock::now();
    if (llvm::Error e = steps.decode(result.tokens.back(), positions, logits))
      return std::move(e);
    result.tokens.push_back(chooseTokens(sampler, logits, batch, opts.vocab));
    result.decodeSeconds.push_back(secondsSince(start));
    if (opts.keepLogits)
      result.logits.push_back(logits);
    for (int64_t &position : positions)
      ++position;
    if (opts.onStep)
      opts.onStep(step);
  }
  return result;
}
