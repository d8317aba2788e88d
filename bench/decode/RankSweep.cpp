//===- RankSweep.cpp - loom-bench-decode --ranks: decode on ranks --------===//
//
// Part of Loom. See RankSweep.h.
//
//===----------------------------------------------------------------------===//

#include "RankSweep.h"

#include "ArtifactSteps.h"
#include "BenchSupport.h"
#include "Contract.h"
#include "FedPlan.h"
#include "Prepare.h"
#include "Ranks.h"
#include "TokenLoop.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

using namespace llvm;

namespace loom::bench {
namespace {

struct ModelCloser {
  void operator()(loom_model *m) const { loom_model_free(m); }
};
using ModelPtr = std::unique_ptr<loom_model, ModelCloser>;

Expected<ModelPtr> loadModel(const std::string &path, unsigned threads) {
  loom_model_options options = {};
  options.num_threads = int(threads);
  loom_model *m = nullptr;
  if (loom_model_load(path.c_str(), &options, &m) != LOOM_OK)
    return createStringError(loom_last_error());
  return ModelPtr(m);
}

/// Bytes of the state one rank of \p model holds (its decode entry's tied
/// inputs), and of its weights.
int64_t stateBytes(const loom_model *model, const generate::EntryIO &io) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < io.numInputs; ++i) {
    loom_tensor_desc d;
    if (io.tied[i] && loom_entry_input(model, io.entry, i, &d) == LOOM_OK)
      bytes += d.bytes;
  }
  return bytes;
}

int64_t weightBytes(const loom_model *model) {
  size_t size = 0;
  loom_model_weights(model, &size);
  return int64_t(size);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Threads meeting before each step (std::barrier is C++20).
class StepBarrier {
public:
  explicit StepBarrier(int64_t count) : count(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    int64_t phase = generation;
    if (++arrived == count) {
      arrived = 0;
      ++generation;
      wake.notify_all();
      return;
    }
    wake.wait(lock, [&] { return generation != phase; });
  }

private:
  std::mutex mutex;
  std::condition_variable wake;
  int64_t count, arrived = 0, generation = 0;
};

/// The decode step of every rank at once, timed on rank 0: one context a
/// rank, joined to a world of threads; ranks 1.. are threads waiting at a
/// barrier for each step.
class RankedDecoder {
public:
  static Expected<std::unique_ptr<RankedDecoder>>
  create(const loom_model *model, const generate::DecoderContract &contract,
         int64_t ranks) {
    std::unique_ptr<RankedDecoder> d(new RankedDecoder(contract, ranks));
    d->worlds.assign(size_t(ranks), nullptr);
    if (ranks > 1 &&
        loom_world_open_threads(ranks, 60, d->worlds.data()) != LOOM_OK)
      return createStringError(loom_last_error());
    for (int64_t r = 0; r < ranks; ++r) {
      // A tensor-parallel artifact: each rank's entries.
      auto own = contract.rank < 0
                     ? Expected<generate::DecoderContract>(contract)
                     : generate::readContract(model, contract.path, r);
      if (!own)
        return own.takeError();
      d->contracts.push_back(
          std::make_unique<generate::DecoderContract>(std::move(*own)));
      auto steps = generate::ArtifactSteps::create(model, *d->contracts.back(),
                                                   d->worlds[r]);
      if (!steps)
        return steps.takeError();
      d->steps.push_back(std::move(*steps));
    }
    return d;
  }
  ~RankedDecoder() {
    for (loom_world *w : worlds)
      loom_world_free(w);
  }

  /// Milliseconds of `count` steps at live length `live` after `warmup`,
  /// and the bytes rank 0 sent per timed step.
  Expected<std::vector<double>> decodeTimes(int64_t live, unsigned warmup,
                                            unsigned count, double &bytes) {
    int64_t p = int64_t(steps.size());
    std::vector<int64_t> ids(contract.batch, 0),
        positions(contract.batch, live - 1);
    std::vector<std::vector<float>> logits(static_cast<size_t>(p));
    std::vector<std::string> errors(static_cast<size_t>(p));
    StepBarrier sync(p);
    std::vector<double> ms;
    int64_t before = 0;
    auto rank = [&](int64_t r) {
      for (unsigned i = 0; i < warmup + count; ++i) {
        sync.arriveAndWait();
        if (r == 0 && i == warmup)
          before = loom_world_bytes_sent(worlds[0]);
        auto start = std::chrono::steady_clock::now();
        if (Error e = steps[r]->decode(ids, positions, logits[r])) {
          errors[r] = toString(std::move(e));
          loom_world_abort(worlds[r]);
          return;
        }
        if (r == 0 && i >= warmup)
          ms.push_back(std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count());
      }
    };
    std::vector<std::thread> threads;
    for (int64_t r = 1; r < p; ++r)
      threads.emplace_back(rank, r);
    rank(0);
    for (std::thread &t : threads)
      t.join();
    for (const std::string &e : errors)
      if (!e.empty())
        return createStringError(e);
    bytes = double(loom_world_bytes_sent(worlds[0]) - before) / count;
    return ms;
  }

private:
  RankedDecoder(const generate::DecoderContract &c, int64_t) : contract(c) {}
  generate::DecoderContract contract;
  /// Each rank's (the steps keep a reference).
  std::vector<std::unique_ptr<generate::DecoderContract>> contracts;
  std::vector<loom_world *> worlds;
  std::vector<std::unique_ptr<generate::ArtifactSteps>> steps;
};

/// Greedy tokens of \p model for a fixed prompt, on its ranks.
Expected<std::vector<std::vector<int64_t>>>
greedyTokens(const loom_model *model, const generate::DecoderContract &c) {
  generate::Batch batch;
  for (int64_t b = 0; b < c.batch; ++b)
    batch.prompts.push_back({3, 1, 4, 1, 5, 9, 2, 6});
  batch.real = c.batch;
  generate::LoopOptions loop;
  loop.tokens = std::min<int64_t>(32, c.capacity - 8);
  loop.promptBound = c.promptBound;
  loop.vocab = c.vocab;
  auto result = generate::runOnRanks(model, c, {batch}, loop, 0, 60);
  if (!result)
    return result.takeError();
  return result->loops.front().tokens;
}

/// The peak resident set of the largest rank, MiB: a short greedy
/// generation of \p artifact as processes of their own (one, or \p ranks
/// under loom-launch), whose peak the wait for the launcher reports (the
/// largest of its children's). What a rank holds when it runs alone:
/// weights, its shard of the caches, the arena and the process's code.
/// Measured before this process loads a model: a child reports at least
/// the peak of the process that started it (Linux keeps the spawning
/// memory's high-water mark at exec), so later it would report the models
/// this process holds.
std::optional<double> peakRssMiB(const DecodeOptions &o,
                                 const std::string &artifact, int64_t ranks,
                                 int64_t threads) {
  std::vector<std::string> generate = {
      artifact, "--prompt-ids", "3,1,4,1,5,9,2,6",      "--tokens",
      "8",      "--threads",    std::to_string(threads)};
  std::string program = pathIn(o.binDir, "loom-generate");
  if (ranks > 1) {
    generate.insert(generate.begin(),
                    {"-n", std::to_string(ranks), "--", program});
    program = pathIn(o.binDir, "loom-launch");
  }
  ProcessResult r = runProcess(program, generate, 600);
  if (!r.succeeded() || r.peakRssKb <= 0) {
    errs() << "loom-bench-decode: peak memory of " << ranks
           << " rank(s): " << (r.succeeded() ? "not reported" : r.summary())
           << "\n";
    return std::nullopt;
  }
  return double(r.peakRssKb) / 1024.0;
}

/// The rows of one rank count split as \p parallel ("cp", "tp", "cptp";
/// or "none": the one-process artifact on `ranks` threads).
void measureRanks(const DecodeOptions &o, const std::string &artifact,
                  int64_t ranks, StringRef parallel,
                  std::optional<double> peakRss,
                  const std::vector<std::vector<int64_t>> &reference,
                  std::vector<RanksRow> &rows) {
  bool oneProcess = parallel == "none";
  RanksRow base;
  base.ranks = oneProcess ? 1 : ranks;
  base.threadsPerRank = oneProcess ? ranks : 1;
  base.parallel = parallel.str();
  auto fail = [&](Error e) {
    for (int64_t c : o.contexts) {
      RanksRow row = base;
      row.context = c;
      row.error = toString(std::move(e));
      e = Error::success();
      rows.push_back(row);
    }
  };
  auto model = loadModel(artifact, unsigned(base.threadsPerRank));
  if (!model)
    return fail(model.takeError());
  auto contract = generate::readContract(model->get(), artifact);
  if (!contract)
    return fail(contract.takeError());
  int64_t state = stateBytes(model->get(), contract->decode);
  int64_t weights = weightBytes(model->get());
  std::optional<bool> equal;
  if (auto tokens = greedyTokens(model->get(), *contract))
    equal = *tokens == reference;
  else
    consumeError(tokens.takeError());
  auto decoder = RankedDecoder::create(model->get(), *contract, base.ranks);
  if (!decoder)
    return fail(decoder.takeError());
  for (int64_t c : o.contexts) {
    RanksRow row = base;
    row.context = c;
    row.batch = contract->batch;
    row.peakRssMiBPerRank = peakRss;
    row.tokensEqual = equal;
    // A shard holds C / P positions of the capacity, and one more. A
    // tensor-parallel artifact holds every rank's slices of the weights
    // (and the given ones): what a rank holds is its peak resident set.
    double mib = 1.0 / (1 << 20);
    if (Split s = splitOf(parallel, base.ranks); s.tp == 1 && s.pp == 1) {
      row.memoryMiBPerRank = double(weights + state) * mib;
      int64_t wholeState = base.ranks == 1
                               ? state
                               : state / (contract->capacity / base.ranks + 1) *
                                     contract->capacity;
      row.boundMiBPerRank = double(weights + wholeState / base.ranks) * mib;
    }
    double bytes = 0;
    auto times = (*decoder)->decodeTimes(c, o.warmup, o.steps, bytes);
    if (times) {
      row.decodeMs = median(*times);
      row.bytesPerTokenPerRank = bytes;
    } else {
      row.error = toString(times.takeError());
    }
    outs() << formatv("  {0} rank(s) x {1} thread(s), context {2}: {3} ms, "
                      "{4:F0} bytes/token/rank\n",
                      row.ranks, row.threadsPerRank, c,
                      row.decodeMs ? formatv("{0:F3}", *row.decodeMs).str()
                                   : "-",
                      row.bytesPerTokenPerRank);
    outs().flush();
    rows.push_back(row);
  }
}

} // namespace

int runRanksSweep(const DecodeOptions &o, StringRef workDir,
                  std::vector<RanksRow> &rows,
                  std::vector<PlanChoice> &choices) {
  SmallString<256> dir(workDir);
  sys::path::append(dir, "ranks");
  auto pm = prepareModel(o, o.capacity, dir, /*withOnnx=*/false);
  if (!pm) {
    errs() << "loom-bench-decode: " << toString(pm.takeError()) << "\n";
    return 1;
  }
  if (!pm->loomReason.empty()) {
    errs() << "loom-bench-decode: " << pm->loomReason << "\n";
    return 1;
  }
  std::string source = pathIn(dir, "model.mlir");
  RankArtifacts artifacts;
  for (int64_t p : o.ranks)
    for (const std::string &kind : o.parallels) {
      Split split = splitOf(kind, p);
      if (p == 1 || !split)
        continue;
      std::string out = pathIn(dir, formatv("model-{0}{1}.so", kind, p).str());
      std::vector<std::string> args = {source, "-o", out};
      if (split.cp > 1)
        args.push_back("--cache-parallel=" + std::to_string(split.cp));
      if (split.tp > 1)
        args.push_back("--tensor-parallel=" + std::to_string(split.tp));
      if (split.pp > 1)
        args.push_back("--pipeline-stages=" + std::to_string(split.pp));
      if (!(o.reuse && sys::fs::exists(out))) {
        ProcessResult r =
            runProcess(pathIn(o.binDir, "loom-compile"), args, 3600);
        if (!r.succeeded()) {
          errs() << "loom-bench-decode: loom-compile " << kind << " " << p
                 << ": " << r.summary() << "\n";
          return 1;
        }
      }
      artifacts[{kind, p}] = out;
    }
  if (o.prepareOnly)
    return 0;
  // (split, ranks or threads) -> peak memory, before any load.
  std::map<std::pair<std::string, int64_t>, std::optional<double>> peaks;
  for (int64_t p : o.ranks)
    peaks[{"none", p}] = peakRssMiB(o, pm->artifact, 1, p);
  for (const auto &[key, artifact] : artifacts)
    peaks[key] = peakRssMiB(o, artifact, key.second, 1);
  auto one = loadModel(pm->artifact, 1);
  if (!one) {
    errs() << "loom-bench-decode: " << toString(one.takeError()) << "\n";
    return 1;
  }
  auto contract = generate::readContract(one->get(), pm->artifact);
  if (!contract) {
    errs() << "loom-bench-decode: " << toString(contract.takeError()) << "\n";
    return 1;
  }
  auto reference = greedyTokens(one->get(), *contract);
  if (!reference) {
    errs() << "loom-bench-decode: " << toString(reference.takeError()) << "\n";
    return 1;
  }
  one->reset();
  for (int64_t p : o.ranks) {
    measureRanks(o, pm->artifact, p, "none", peaks[{"none", p}], *reference,
                 rows);
    for (const std::string &kind : o.parallels)
      if (artifacts.count({kind, p}))
        measureRanks(o, artifacts[{kind, p}], p, kind, peaks[{kind, p}],
                     *reference, rows);
  }
  auto fed = feedPlanner(o, source, dir, artifacts, rows);
  if (!fed)
    errs() << "loom-bench-decode: the fed planner: "
           << toString(fed.takeError()) << "\n";
  else
    choices = std::move(*fed);
  return 0;
}

void printRanksTable(const std::vector<RanksRow> &rows) {
  outs() << "\n| ranks x threads | parallel | context | decode ms | "
            "simulated ms (error) | bytes/token/rank | MiB/rank (bound) | "
            "peak RSS MiB/rank | tokens equal |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (const RanksRow &r : rows) {
    std::string simulated = "-";
    if (r.simulatedMs && r.decodeMs) {
      double error = 100.0 * (*r.simulatedMs / *r.decodeMs - 1.0);
      simulated = formatv("{0:F3} ({1}{2:F0}%)", *r.simulatedMs,
                          error >= 0 ? "+" : "", error)
                      .str();
    }
    outs() << formatv(
        "| {0} x {1} | {2} | {3} | {4} | {5} | {6:F0} | {7} ({8}) | "
        "{10} | {9} |\n",
        r.ranks, r.threadsPerRank, r.parallel, r.context,
        r.decodeMs ? formatv("{0:F3}", *r.decodeMs).str() : "- " + r.error,
        simulated, r.bytesPerTokenPerRank,
        r.memoryMiBPerRank ? formatv("{0:F1}", *r.memoryMiBPerRank).str() : "-",
        r.boundMiBPerRank ? formatv("{0:F1}", *r.boundMiBPerRank).str() : "-",
        r.tokensEqual ? (*r.tokensEqual ? "yes" : "NO") : "-",
        r.peakRssMiBPerRank ? formatv("{0:F1}", *r.peakRssMiBPerRank).str()
                            : std::string("-"));
  }
}

json::Value ranksJSON(const DecodeOptions &o, const std::vector<RanksRow> &rows,
                      const std::vector<PlanChoice> &choices,
                      json::Object machine) {
  json::Array out;
  for (const RanksRow &r : rows) {
    json::Object row{
        {"ranks", r.ranks},
        {"threads_per_rank", r.threadsPerRank},
        {"parallel", r.parallel},
        {"context", r.context},
        {"decode_ms",
         r.decodeMs ? json::Value(*r.decodeMs) : json::Value(nullptr)},
        {"bytes_per_token_per_rank", r.bytesPerTokenPerRank},
        {"memory_mib_per_rank", r.memoryMiBPerRank
                                    ? json::Value(*r.memoryMiBPerRank)
                                    : json::Value(nullptr)},
        {"bound_mib_per_rank", r.boundMiBPerRank
                                   ? json::Value(*r.boundMiBPerRank)
                                   : json::Value(nullptr)},
        {"peak_rss_mib_per_rank", r.peakRssMiBPerRank
                                      ? json::Value(*r.peakRssMiBPerRank)
                                      : json::Value(nullptr)},
        {"simulated_ms_per_token",
         r.simulatedMs ? json::Value(*r.simulatedMs) : json::Value(nullptr)},
        {"tokens_equal",
         r.tokensEqual ? json::Value(*r.tokensEqual) : json::Value(nullptr)}};
    if (!r.error.empty())
      row["error"] = r.error;
    out.push_back(std::move(row));
  }
  json::Array planned;
  for (const PlanChoice &c : choices)
    planned.push_back(json::Object{{"ranks", c.ranks},
                                   {"context", c.context},
                                   {"planned", c.planned},
                                   {"measured", c.measured},
                                   {"overall_cp", c.overallCp},
                                   {"overall_tp", c.overallTp},
                                   {"overall_pp", c.overallPp}});
  return json::Object{{"model", o.model.text},
                      {"capacity", o.capacity},
                      {"machine", std::move(machine)},
                      {"rows", std::move(out)},
                      {"choices", std::move(planned)}};
}

} // namespace loom::bench
