//===- FedPlan.cpp - The planner fed by the rank sweep's runs -------------===//
//
// Part of Loom. See FedPlan.h.
//
//===----------------------------------------------------------------------===//

#include "FedPlan.h"

#include "Bandwidth.h"
#include "BenchSupport.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <unistd.h>

using namespace llvm;

namespace loom::bench {
namespace {

/// decode ms = interceptMs + slopeMs * context, least squares.
struct Fit {
  double interceptMs = 0, slopeMs = 0;
};

/// The fit of the one-process rows of \p threads threads, or an error
/// when they hold fewer than two contexts or do not grow with it.
Expected<Fit> fitRows(const std::vector<RanksRow> &rows, int64_t threads) {
  std::vector<std::pair<double, double>> points;
  for (const RanksRow &r : rows)
    if (r.ranks == 1 && r.threadsPerRank == threads && r.decodeMs)
      points.push_back({double(r.context), *r.decodeMs});
  if (points.size() < 2)
    return createStringError(
        formatv("a device of {0} thread(s) is fitted on two contexts or more "
                "(--contexts)",
                threads));
  double n = double(points.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double det = n * sxx - sx * sx;
  Fit f;
  f.slopeMs = det > 0 ? (n * sxy - sx * sy) / det : 0;
  f.interceptMs = (sy - f.slopeMs * sx) / n;
  if (!(f.slopeMs > 0) || !(f.interceptMs > 0))
    return createStringError(formatv(
        "the rows of {0} thread(s) give no positive weight and cache time "
        "(intercept {1:F3} ms, {2:E2} ms a position): the times do not grow "
        "with the context",
        threads, f.interceptMs, f.slopeMs));
  return f;
}

/// Seconds of one exchange between \p ranks ranks, measured: a profiled
/// generation of the artifact compiled for them (loom-generate --ranks,
/// LOOM_PROFILE=FILE.json), the median over its decode entry's
/// loomrt.all_gather steps of each step's median on rank 0. What an
/// exchange costs beside its bytes is mostly the wait for the slower rank,
/// which a meeting of idle threads would not show.
Expected<double> gatherSeconds(const DecodeOptions &o, StringRef artifact,
                               StringRef kind, int64_t ranks, StringRef dir) {
  std::string profile =
      pathIn(dir, formatv("profile-{0}{1}.json", kind, ranks).str());
  ProcessResult r =
      runProcess(pathIn(o.binDir, "loom-generate"),
                 {artifact.str(), "--ranks", std::to_string(ranks),
                  "--prompt-ids", "3,1,4,1,5,9,2,6", "--tokens", "16"},
                 600, {"LOOM_PROFILE=" + profile});
  if (!r.succeeded())
    return createStringError("loom-generate --ranks " + std::to_string(ranks) +
                             ": " + r.summary());
  std::string rank0 =
      pathIn(dir, formatv("profile-{0}{1}.rank0.json", kind, ranks).str());
  auto value = readJSONFile(rank0);
  if (!value)
    return value.takeError();
  std::vector<double> gathers;
  const json::Object *top = value->getAsObject();
  if (const json::Array *entries = top ? top->getArray("entries") : nullptr)
    for (const json::Value &e : *entries) {
      const json::Object *entry = e.getAsObject();
      const json::Array *steps = entry ? entry->getArray("steps") : nullptr;
      std::optional<StringRef> name =
          entry ? entry->getString("name") : std::nullopt;
      // decode, or rank 0's decode.rank0 (tensor parallelism).
      if (!steps || !name || (*name != "decode" && *name != "decode.rank0"))
        continue;
      for (const json::Value &s : *steps)
        if (const json::Object *step = s.getAsObject();
            step && step->getString("kind") == StringRef("loomrt.all_gather"))
          if (auto ms = step->getNumber("median_ms"))
            gathers.push_back(*ms * 1e-3);
    }
  if (gathers.empty())
    return createStringError(rank0 + ": no loomrt.all_gather in the decode "
                                     "entry");
  return median(gathers);
}

/// The key of a planner's estimate: (batch, context, cp, tp, pp).
using EstimateKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

/// The planner's estimate of row \p r.
EstimateKey estimateKey(int64_t batch, const RanksRow &r) {
  Split s = splitOf(r.parallel, r.ranks);
  return {batch, r.context, s.cp, s.tp, s.pp};
}

/// A row's split as the choices name it: "cp 2", "tp 2", "pp 2", "cp 2 x
/// tp 2" ("cp 1": one process).
std::string splitName(const RanksRow &r) {
  Split s = splitOf(r.parallel, r.ranks);
  if (s.cp > 1 && s.tp > 1)
    return "cp " + std::to_string(s.cp) + " x tp " + std::to_string(s.tp);
  if (s.pp > 1)
    return "pp " + std::to_string(s.pp);
  return s.tp > 1 ? "tp " + std::to_string(s.tp) : "cp " + std::to_string(s.cp);
}

/// What loom-plan-decode says of the decoder and of one machine.
struct PlannerRun {
  json::Object decoder;
  /// ms per token by (batch, context, cp, tp, pp).
  std::map<EstimateKey, double> ms;
  /// The chosen (cp, tp, pp) by (batch, context).
  std::map<std::pair<int64_t, int64_t>, std::tuple<int64_t, int64_t, int64_t>>
      chosen;
};

Expected<PlannerRun> runPlanner(const DecodeOptions &o, StringRef source,
                                StringRef machine, StringRef contexts,
                                int64_t batch, StringRef out) {
  ProcessResult r = runProcess(pathIn(o.binDir, "loom-plan-decode"),
                               {source.str(), "--machine", machine.str(),
                                "--contexts", contexts.str(), "--batch",
                                std::to_string(batch), "--json", out.str()},
                               600);
  if (!r.succeeded())
    return createStringError("loom-plan-decode: " + r.summary());
  auto value = readJSONFile(out);
  if (!value)
    return value.takeError();
  PlannerRun run;
  const json::Object *top = value->getAsObject();
  const json::Array *estimates = top ? top->getArray("estimates") : nullptr;
  if (!estimates || !top->getObject("decoder"))
    return createStringError(out + ": not loom-plan-decode's JSON");
  run.decoder = *top->getObject("decoder");
  for (const json::Value &e : *estimates) {
    const json::Object *x = e.getAsObject();
    auto b = x ? x->getInteger("batch") : std::nullopt;
    auto c = x ? x->getInteger("context") : std::nullopt;
    auto cp = x ? x->getInteger("cp") : std::nullopt;
    auto tp = x ? x->getInteger("tp") : std::nullopt;
    auto pp = x ? x->getInteger("pp") : std::nullopt;
    auto ms = x ? x->getNumber("ms_per_token") : std::nullopt;
    auto chosen = x ? x->getBoolean("chosen") : std::nullopt;
    if (!b || !c || !cp || !tp || !pp || !ms || !chosen)
      return createStringError(out + ": an estimate without its fields");
    run.ms[{*b, *c, *cp, *tp, *pp}] = *ms;
    if (*chosen)
      run.chosen[{*b, *c}] = {*cp, *tp, *pp};
  }
  return run;
}

/// A machine file of \p devices devices, each fitted by \p f.
json::Object machineOf(StringRef name, int64_t devices, const Fit &f,
                       const json::Object &decoder, int64_t batch,
                       double linkLatency, double linkBandwidth) {
  double weightsRead = *decoder.getNumber("weight_bytes_read");
  double position = *decoder.getNumber("cache_bytes_per_position") * batch;
  double memory = double(sysconf(_SC_PHYS_PAGES)) *
                  double(sysconf(_SC_PAGESIZE)) / double(devices);
  return json::Object{
      {"name", name},
      {"devices", devices},
      {"memory_bandwidth", weightsRead / (f.interceptMs * 1e-3)},
      {"cache_bandwidth", position / (f.slopeMs * 1e-3)},
      {"memory_bytes", memory},
      {"intra_host",
       json::Object{{"bandwidth", linkBandwidth}, {"latency", linkLatency}}}};
}

} // namespace

Expected<std::vector<PlanChoice>>
feedPlanner(const DecodeOptions &o, StringRef source, StringRef dir,
            const RankArtifacts &artifacts,
            std::vector<RanksRow> &rows) {
  if (rows.empty())
    return std::vector<PlanChoice>{};
  int64_t batch = rows.front().batch;
  std::string contexts;
  for (int64_t c : o.contexts)
    contexts += (contexts.empty() ? "" : ",") + std::to_string(c);
  // The decoder's figures, as the planner reads them.
  auto figures = runPlanner(o, source, "h100x8", contexts, batch,
                            pathIn(dir, "plan-decoder.json"));
  if (!figures)
    return figures.takeError();
  Bandwidth copy = measureBandwidth(int64_t(32) << 20, 1, 3);
  // The one-process rows' thread counts; the rank counts (1 included).
  std::set<int64_t> threadCounts, rankCounts = {1};
  for (const RanksRow &r : rows) {
    if (r.ranks == 1)
      threadCounts.insert(r.threadsPerRank);
    else
      rankCounts.insert(r.ranks);
  }
  std::map<int64_t, Fit> fits;
  for (int64_t t : threadCounts) {
    auto f = fitRows(rows, t);
    if (!f) {
      outs() << "  fed planner: " << toString(f.takeError()) << "\n";
      continue;
    }
    fits[t] = *f;
    outs() << formatv("  fed planner: a device of {0} thread(s): {1:F3} ms "
                      "of weights, {2:F2} us a position of cache\n",
                      t, f->interceptMs, f->slopeMs * 1e3);
  }
  // Each machine: its name, devices, the fit that feeds it, and the rows it
  // simulates.
  std::vector<PlanChoice> choices;
  auto simulate = [&](int64_t devices, int64_t threads) -> Error {
    std::string name = formatv("fed-{0}x{1}t", devices, threads).str();
    double latency = 1e-6; // no exchange on one device
    if (devices > 1) {
      // The exchange of the first split swept (cache parallelism's where
      // both are).
      const std::string &kind = o.parallels.front();
      auto gather = gatherSeconds(o, artifacts.at({kind, devices}), kind,
                                  devices, dir);
      if (!gather)
        return gather.takeError();
      latency = *gather;
      outs() << formatv("  fed planner: an exchange between {0} ranks: "
                        "{1:F1} us (loomrt.all_gather of {2}, measured)\n",
                        devices, latency * 1e6, kind);
    }
    std::string file = pathIn(dir, name + ".json");
    if (Error e = writeJSONFile(
            file, machineOf(name, devices, fits[threads], figures->decoder,
                            batch, latency, copy.copiedGBps * 1e9)))
      return e;
    auto plan = runPlanner(o, source, file, contexts, batch,
                           pathIn(dir, name + "-plan.json"));
    if (!plan)
      return plan.takeError();
    for (RanksRow &r : rows) {
      bool mine = threads == 1 ? r.threadsPerRank == 1 && r.ranks == devices
                               : r.ranks == 1 && r.threadsPerRank == threads;
      auto it = plan->ms.find(estimateKey(batch, r));
      if (mine && it != plan->ms.end())
        r.simulatedMs = it->second;
    }
    if (threads != 1 || devices == 1)
      return Error::success();
    for (int64_t c : o.contexts) {
      PlanChoice choice;
      choice.ranks = devices;
      choice.context = c;
      double planned = 0, measured = 0;
      for (const RanksRow &r : rows) {
        if (r.context != c || r.threadsPerRank != 1 || !r.decodeMs ||
            r.ranks > devices)
          continue;
        auto est = plan->ms.find(estimateKey(batch, r));
        if (est == plan->ms.end())
          continue; // not a split the planner prices (a power of two)
        std::string split = splitName(r);
        if (choice.planned.empty() || est->second < planned)
          choice.planned = split, planned = est->second;
        if (choice.measured.empty() || *r.decodeMs < measured)
          choice.measured = split, measured = *r.decodeMs;
      }
      auto overall = plan->chosen.find({batch, c});
      if (overall != plan->chosen.end())
        std::tie(choice.overallCp, choice.overallTp, choice.overallPp) =
            overall->second;
      choices.push_back(choice);
    }
    return Error::success();
  };
  for (const auto &fitted : fits) {
    int64_t threads = fitted.first;
    std::vector<int64_t> machines = {1};
    if (threads == 1)
      machines.assign(rankCounts.begin(), rankCounts.end());
    for (int64_t devices : machines)
      if (Error e = simulate(devices, threads))
        return std::move(e);
  }
  return choices;
}

void printPlanChoices(const std::vector<PlanChoice> &choices) {
  if (choices.empty())
    return;
  outs() << "\n| ranks | context | planner's choice (measured splits) | "
            "measured faster | agree | planner's choice (every split) |\n"
            "| ---: | ---: | --- | --- | --- | --- |\n";
  for (const PlanChoice &c : choices)
    outs() << formatv(
        "| {0} | {1} | {2} | {3} | {4} | {5} |\n", c.ranks, c.context,
        c.planned, c.measured, c.planned == c.measured ? "yes" : "NO",
        c.overallCp ? formatv("cp {0} x tp {1} x pp {2}", c.overallCp,
                              c.overallTp, c.overallPp)
                          .str()
                    : std::string("none fits"));
}

} // namespace loom::bench
