//===- TokenLoop.cpp - Prefill, then one decode step per token ------------===//
//
// Part of Loom. See TokenLoop.h.
//
//===----------------------------------------------------------------------===//

#include "TokenLoop.h"

#include <algorithm>
#include <chrono>

using namespace loom::generate;

double
loom::generate::secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

namespace {

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

/// Runs the prompts of \p batch through prefill, in chunks where it takes
/// positions; \p logits receives [B, V], each sequence's row from the
/// chunk that ends its prompt. A sequence with fewer chunks than another
/// runs its last chunk again (the same keys and values written again).
llvm::Error prefillPrompts(DecoderSteps &steps, const Batch &batch, int64_t p,
                           std::vector<float> &logits) {
  const DecoderContract &c = steps.getContract();
  int64_t b = int64_t(batch.prompts.size());
  std::vector<std::vector<std::pair<int64_t, int64_t>>> chunks(b);
  size_t rounds = 1;
  for (int64_t s = 0; s < b; ++s) {
    chunks[s] = promptChunks(int64_t(batch.prompts[s].size()), p);
    rounds = std::max(rounds, chunks[s].size());
  }
  logits.assign(b * c.vocab, 0.f);
  std::vector<float> out;
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<int64_t> ids(b * p, 0), positions(b), lengths(b);
    for (int64_t s = 0; s < b; ++s) {
      auto [start, take] = chunks[s][std::min(round, chunks[s].size() - 1)];
      const std::vector<int64_t> &prompt = batch.prompts[s];
      std::copy(prompt.begin() + start, prompt.begin() + start + take,
                ids.begin() + s * p);
      positions[s] = start;
      lengths[s] = take;
    }
    TokenInputs in{ids,
                   c.chunked() ? llvm::ArrayRef<int64_t>(positions)
                               : llvm::ArrayRef<int64_t>(),
                   lengths};
    if (llvm::Error e = steps.prefill(in, out))
      return e;
    for (int64_t s = 0; s < b; ++s)
      if (round == chunks[s].size() - 1)
        std::copy(out.begin() + s * c.vocab, out.begin() + (s + 1) * c.vocab,
                  logits.begin() + s * c.vocab);
  }
  return llvm::Error::success();
}

} // namespace

std::vector<std::pair<int64_t, int64_t>>
loom::generate::promptChunks(int64_t length, int64_t p) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  int64_t start = 0;
  for (; start + p < length; start += p)
    chunks.push_back({start, p});
  int64_t last = std::max<int64_t>(0, length - p);
  chunks.push_back({last, length - last});
  return chunks;
}

llvm::Expected<LoopResult>
loom::generate::runTokenLoop(DecoderSteps &steps, const Batch &batch,
                             const LoopOptions &opts) {
  int64_t b = int64_t(batch.prompts.size());
  Sampler sampler(opts.sampling);
  LoopResult result;
  std::vector<float> logits;
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error e = prefillPrompts(steps, batch, opts.promptBound, logits))
    return std::move(e);
  result.tokens.push_back(chooseTokens(sampler, logits, batch, opts.vocab));
  result.prefillSeconds = secondsSince(start);
  if (opts.keepLogits)
    result.logits.push_back(logits);
  if (opts.onStep)
    opts.onStep(0);
  std::vector<int64_t> positions(b);
  for (int64_t s = 0; s < b; ++s)
    positions[s] = int64_t(batch.prompts[s].size());
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
