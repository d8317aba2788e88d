//===- Ranks.cpp - The token loop on every rank of a world ----------------===//
//
// Part of Loom. See Ranks.h.
//
//===----------------------------------------------------------------------===//

#include "Ranks.h"

#include "ArtifactSteps.h"

#include "llvm/Support/FormatVariadic.h"

#include <mutex>
#include <optional>
#include <thread>

using namespace loom::generate;

namespace {

/// Closes a world when it goes.
struct WorldCloser {
  void operator()(loom_world *w) const { loom_world_free(w); }
};
using WorldPtr = std::unique_ptr<loom_world, WorldCloser>;

/// The loop on \p world's rank, noting in \p prefillBytes what it had sent
/// after the prefill.
llvm::Expected<LoopResult> loopOn(const loom_model *model,
                                  const DecoderContract &contract,
                                  const Batch &batch, const LoopOptions &loop,
                                  loom_world *world, int64_t *prefillBytes) {
  // A tensor-parallel artifact: this rank's entries.
  std::optional<DecoderContract> own;
  if (contract.rank >= 0 && world) {
    auto mine = readContract(model, contract.path, loom_world_rank(world));
    if (!mine)
      return mine.takeError();
    own = std::move(*mine);
  }
  auto steps = ArtifactSteps::create(model, own ? *own : contract, world);
  if (!steps)
    return steps.takeError();
  LoopOptions options = loop;
  options.onStep = [&, inner = loop.onStep](int64_t step) {
    if (step == 0 && prefillBytes)
      *prefillBytes = loom_world_bytes_sent(world);
    if (inner)
      inner(step);
  };
  return runTokenLoop(**steps, batch, options);
}

/// Every rank a thread: rank 0's loop, after checking that every rank
/// generated its tokens.
llvm::Expected<RanksResult> onThreads(const loom_model *model,
                                      const DecoderContract &contract,
                                      const Batch &batch,
                                      const LoopOptions &loop, int64_t ranks,
                                      double timeout) {
  std::vector<loom_world *> raw(size_t(ranks), nullptr);
  if (loom_world_open_threads(ranks, timeout, raw.data()) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  std::vector<WorldPtr> worlds;
  for (loom_world *w : raw)
    worlds.emplace_back(w);
  std::vector<std::optional<LoopResult>> results(static_cast<size_t>(ranks));
  int64_t prefillBytes = 0;
  std::mutex mutex;
  std::string firstError;
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      LoopOptions own = loop;
      if (r != 0)
        own.onStep = nullptr;
      auto result = loopOn(model, contract, batch, own, worlds[r].get(),
                           r == 0 ? &prefillBytes : nullptr);
      if (result) {
        results[r] = std::move(*result);
        return;
      }
      std::string message = llvm::toString(result.takeError());
      // Its peers see it gone instead of waiting to their deadline.
      loom_world_abort(worlds[r].get());
      std::lock_guard<std::mutex> lock(mutex);
      if (firstError.empty())
        firstError = "rank " + std::to_string(r) + ": " + message;
    });
  for (std::thread &t : threads)
    t.join();
  if (!firstError.empty())
    return llvm::createStringError(firstError);
  for (int64_t r = 1; r < ranks; ++r)
    if (results[r]->tokens != results[0]->tokens)
      return llvm::createStringError(
          "rank " + std::to_string(r) +
          " generated other tokens than rank 0 (the ranks must compute the "
          "same logits)");
  RanksResult out;
  out.loop = std::move(*results[0]);
  out.ranks = ranks;
  out.bytesSent = loom_world_bytes_sent(worlds[0].get());
  out.prefillBytes = prefillBytes;
  out.world = "threads";
  return out;
}

} // namespace

llvm::Expected<RanksResult>
loom::generate::runOnRanks(const loom_model *model, const DecoderContract &contract,
                     const Batch &batch, const LoopOptions &loop,
                     int64_t ranks, double timeout) {
  int64_t compiled = loom_model_world_ranks(model);
  if (ranks != 0 && ranks != compiled)
    return llvm::createStringError(llvm::formatv(
        "--ranks={0}, but the artifact runs on {1} rank{2}", ranks, compiled,
        compiled == 1 ? "" : "s"));
  if (compiled == 1) {
    RanksResult out;
    auto result = loopOn(model, contract, batch, loop, nullptr, nullptr);
    if (!result)
      return result.takeError();
    out.loop = std::move(*result);
    return out;
  }
  // The launcher's world; without a launcher it is one rank, and every
  // rank is a thread of this process instead.
  loom_world *raw = nullptr;
  if (loom_world_open(timeout, &raw) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  WorldPtr world(raw);
  if (loom_world_size(raw) == 1) {
    world.reset();
    return onThreads(model, contract, batch, loop, compiled, timeout);
  }
  RanksResult out;
  out.rank = loom_world_rank(raw);
  out.ranks = loom_world_size(raw);
  out.world = "launcher";
  LoopOptions own = loop;
  if (out.rank != 0)
    own.onStep = nullptr;
  auto result = loopOn(model, contract, batch, own, raw, &out.prefillBytes);
  if (!result) {
    loom_world_abort(raw);
    return llvm::createStringError("rank " + std::to_string(out.rank) + ": " +
                                   llvm::toString(result.takeError()));
  }
  out.loop = std::move(*result);
  out.bytesSent = loom_world_bytes_sent(raw);
  return out;
}
