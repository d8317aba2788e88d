//===- Ranks.cpp - The token loop on every rank of a world ----------------===//
//
// Part of Loom. See Ranks.h.
//
//===----------------------------------------------------------------------===//

#include "Ranks.h"

#include "ArtifactSteps.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
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

/// The first error of several threads, by who made it (\p who empty: the
/// error says).
class FirstError {
public:
  void note(const std::string &who, llvm::Error e) {
    std::string message = llvm::toString(std::move(e));
    std::lock_guard<std::mutex> lock(mutex);
    if (first.empty())
      first = who.empty() ? message : who + ": " + message;
  }
  llvm::Error take() {
    return first.empty() ? llvm::Error::success()
                         : llvm::createStringError(first);
  }

private:
  std::mutex mutex;
  std::string first;
};

/// "rank R" or, with several groups, "rank R, group G".
std::string whoRuns(int64_t rank, int64_t group, size_t groups) {
  std::string who = "rank " + std::to_string(rank);
  if (groups > 1)
    who += ", group " + std::to_string(group);
  return who;
}

/// This rank's loops of \p batches at once, loop g on worlds[g] (every
/// world aborted when one fails, so that the peers see it gone); progress
/// only from the first. Adds what the rank sent to \p out.
llvm::Error loopsOn(const loom_model *model, const DecoderContract &contract,
                    llvm::ArrayRef<Batch> batches, const LoopOptions &loop,
                    llvm::ArrayRef<loom_world *> worlds, int64_t rank,
                    RanksResult &out) {
  size_t groups = batches.size();
  std::vector<std::optional<LoopResult>> results(groups);
  std::vector<int64_t> prefillBytes(groups, 0);
  FirstError error;
  std::vector<std::thread> threads;
  for (size_t g = 0; g < groups; ++g)
    threads.emplace_back([&, g] {
      LoopOptions own = loop;
      if (rank != 0 || g != 0)
        own.onStep = nullptr;
      auto result = loopOn(model, contract, batches[g], own, worlds[g],
                           worlds[g] ? &prefillBytes[g] : nullptr);
      if (result) {
        results[g] = std::move(*result);
        return;
      }
      for (loom_world *w : worlds)
        loom_world_abort(w);
      error.note(whoRuns(rank, int64_t(g), groups), result.takeError());
    });
  for (std::thread &t : threads)
    t.join();
  if (llvm::Error e = error.take())
    return e;
  for (size_t g = 0; g < groups; ++g) {
    out.loops.push_back(std::move(*results[g]));
    out.bytesSent += loom_world_bytes_sent(worlds[g]);
    out.prefillBytes += prefillBytes[g];
  }
  return llvm::Error::success();
}

using Clock = std::chrono::steady_clock;

/// Every rank a thread (each group's ranks a world of threads of its
/// own): rank 0's loops, after checking that every rank generated their
/// tokens.
llvm::Expected<RanksResult> onThreads(const loom_model *model,
                                      const DecoderContract &contract,
                                      llvm::ArrayRef<Batch> batches,
                                      const LoopOptions &loop, int64_t ranks,
                                      double timeout) {
  size_t groups = batches.size();
  // worlds[r][g]: rank r's world of group g.
  std::vector<std::vector<WorldPtr>> worlds(static_cast<size_t>(ranks));
  for (size_t g = 0; g < groups; ++g) {
    std::vector<loom_world *> raw(size_t(ranks), nullptr);
    if (loom_world_open_threads(ranks, timeout, raw.data()) != LOOM_OK)
      return llvm::createStringError(loom_last_error());
    for (int64_t r = 0; r < ranks; ++r)
      worlds[size_t(r)].emplace_back(raw[size_t(r)]);
  }
  std::vector<RanksResult> results(static_cast<size_t>(ranks));
  FirstError error;
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::vector<loom_world *> own;
      for (WorldPtr &w : worlds[size_t(r)])
        own.push_back(w.get());
      if (llvm::Error e = loopsOn(model, contract, batches, loop, own, r,
                                  results[size_t(r)]))
        error.note("", std::move(e));
    });
  for (std::thread &t : threads)
    t.join();
  if (llvm::Error e = error.take())
    return std::move(e);
  for (int64_t r = 1; r < ranks; ++r)
    for (size_t g = 0; g < groups; ++g)
      if (results[size_t(r)].loops[g].tokens != results[0].loops[g].tokens)
        return llvm::createStringError(
            whoRuns(r, int64_t(g), groups) +
            " generated other tokens than rank 0 (the ranks must compute "
            "the same logits)");
  RanksResult out = std::move(results[0]);
  out.ranks = ranks;
  out.world = "threads";
  out.wallSeconds = secondsSince(start);
  return out;
}

} // namespace

llvm::Expected<RanksResult> loom::generate::runOnRanks(
    const loom_model *model, const DecoderContract &contract,
    llvm::ArrayRef<Batch> batches, const LoopOptions &loop, int64_t ranks,
    double timeout) {
  int64_t compiled = loom_model_world_ranks(model);
  if (ranks != 0 && ranks != compiled)
    return llvm::createStringError(llvm::formatv(
        "--ranks={0}, but the artifact runs on {1} rank{2}", ranks, compiled,
        compiled == 1 ? "" : "s"));
  if (compiled == 1) {
    RanksResult out;
    std::vector<loom_world *> none(batches.size(), nullptr);
    auto start = Clock::now();
    if (llvm::Error e = loopsOn(model, contract, batches, loop, none, 0, out))
      return std::move(e);
    out.wallSeconds = secondsSince(start);
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
    return onThreads(model, contract, batches, loop, compiled, timeout);
  }
  RanksResult out;
  out.rank = loom_world_rank(raw);
  out.ranks = loom_world_size(raw);
  out.world = "launcher";
  // Each further group its own copy of the world, made in the same order
  // on every rank.
  std::vector<WorldPtr> copies;
  std::vector<loom_world *> worlds{raw};
  for (size_t g = 1; g < batches.size(); ++g) {
    loom_world *copy = nullptr;
    if (loom_world_copy(raw, &copy) != LOOM_OK) {
      loom_world_abort(raw);
      return llvm::createStringError("rank " + std::to_string(out.rank) + ": " +
                                     loom_last_error());
    }
    copies.emplace_back(copy);
    worlds.push_back(copy);
  }
  auto start = Clock::now();
  if (llvm::Error e =
          loopsOn(model, contract, batches, loop, worlds, out.rank, out))
    return std::move(e);
  out.wallSeconds = secondsSince(start);
  return out;
}
