//===- LoomSide.cpp - Loom's decode and prefill through the C API ---------===//
//
// Part of Loom. See LoomSide.h.
//
//===----------------------------------------------------------------------===//

#include "LoomSide.h"

#include <chrono>
#include <functional>

using namespace llvm;

namespace loom::bench {

Expected<std::unique_ptr<LoomDecoder>>
LoomDecoder::load(const std::string &path, unsigned threads) {
  std::unique_ptr<LoomDecoder> d(new LoomDecoder());
  loom_model_options options = {};
  options.num_threads = int(threads);
  if (loom_model_load(path.c_str(), &options, &d->model) != LOOM_OK)
    return createStringError(loom_last_error());
  auto contract = generate::readContract(d->model, path);
  if (!contract)
    return contract.takeError();
  d->shape = *contract;
  d->zeros.assign(d->shape.batch, 0);
  const generate::EntryIO &io = d->shape.decode;
  for (int64_t i = 0; i < io.numInputs; ++i) {
    loom_tensor_desc desc;
    if (io.tied[i] && loom_entry_input(d->model, io.entry, i, &desc) == LOOM_OK)
      d->stateBytes += desc.bytes;
  }
  auto steps = generate::ArtifactSteps::create(d->model, d->shape);
  if (!steps)
    return steps.takeError();
  d->steps = std::move(*steps);
  return d;
}

LoomDecoder::~LoomDecoder() {
  steps.reset();
  if (model)
    loom_model_free(model);
}

/// Milliseconds of each of `repeat` calls of `call` after `warmup` untimed.
static Expected<std::vector<double>>
timeCalls(unsigned warmup, unsigned repeat,
          const std::function<Error()> &call) {
  std::vector<double> ms;
  for (unsigned i = 0; i < warmup + repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Error e = call())
      return std::move(e);
    auto end = std::chrono::steady_clock::now();
    if (i >= warmup)
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
  }
  return ms;
}

generate::TokenInputs LoomDecoder::firstChunk(ArrayRef<int64_t> ids,
                                              ArrayRef<int64_t> lengths) const {
  // A prompt within the bound is one prefill call at position 0 (where the
  // prefill takes positions: docs/Decoding.md "Chunks").
  return {ids,
          steps->getContract().chunked() ? ArrayRef<int64_t>(zeros)
                                         : ArrayRef<int64_t>(),
          lengths};
}

Expected<std::vector<double>>
LoomDecoder::decodeTimes(int64_t live, unsigned warmup, unsigned count) {
  if (live < 1 || live > shape.capacity)
    return createStringError("live length " + Twine(live) +
                             " outside the capacity " + Twine(shape.capacity));
  std::vector<int64_t> ids(shape.batch, 0), positions(shape.batch, live - 1);
  std::vector<float> logits;
  return timeCalls(warmup, count,
                   [&] { return steps->decode(ids, positions, logits); });
}

Expected<std::vector<double>> LoomDecoder::prefillTimes(int64_t length,
                                                        unsigned repeat) {
  if (length < 1 || length > shape.promptBound)
    return createStringError("prompt of " + Twine(length) +
                             " tokens past the prompt bound " +
                             Twine(shape.promptBound));
  std::vector<int64_t> ids(shape.batch * shape.promptBound, 0),
      lengths(shape.batch, length);
  std::vector<float> logits;
  generate::TokenInputs in = firstChunk(ids, lengths);
  return timeCalls(1, repeat, [&] { return steps->prefill(in, logits); });
}

Expected<std::vector<float>>
LoomDecoder::prefillLogits(ArrayRef<int64_t> prompt) {
  if (prompt.empty() || int64_t(prompt.size()) > shape.promptBound)
    return createStringError("a prompt of " + Twine(prompt.size()) +
                             " tokens: outside 1..the prompt bound");
  std::vector<int64_t> ids(shape.batch * shape.promptBound, 0),
      lengths(shape.batch, int64_t(prompt.size()));
  for (int64_t b = 0; b < shape.batch; ++b)
    std::copy(prompt.begin(), prompt.end(),
              ids.begin() + b * shape.promptBound);
  std::vector<float> logits;
  if (Error e = steps->prefill(firstChunk(ids, lengths), logits))
    return std::move(e);
  logits.resize(shape.vocab);
  return logits;
}

} // namespace loom::bench
