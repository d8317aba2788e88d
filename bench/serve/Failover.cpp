//===- Failover.cpp - loom-bench-serve --failover -------------------------===//
//
// Part of Loom. See Failover.h. The ranks are relaunched for every run of
// the normal case (without standbys, then with them), the front-end staying
// up: a run starts once the server is ready (every stage has a live rank)
// and the next launch waits until it is not (the front-end has seen the
// ranks go), so that a run is served by its own ranks only.
//
//===----------------------------------------------------------------------===//

#include "Failover.h"

#include "Client.h"
#include "KServe.h"
#include "Load.h"
#include "Prepare.h"
#include "RankJob.h"
#include "ServerProcess.h"

#include "BenchSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <csignal>
#include <thread>

using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace loom::bench {
namespace {

constexpr const char *kPipeline = "bench";
constexpr const char *kWhole = "whole";

int fail(const Twine &message) {
  errs() << "loom-bench-serve: error: " << message << "\n";
  return 1;
}

struct PipelineModel {
  std::string part, whole, description;
};

Error runTool(const std::string &bin, std::vector<std::string> args,
              ProcessResult *result = nullptr) {
  ProcessResult r = runProcess(bin, args, 3600);
  if (!r.succeeded())
    return createStringError(commandLine(bin, args) + ": " + r.summary());
  if (result)
    *result = std::move(r);
  return Error::success();
}

/// The peak MiB of device @d0 in --pipe-partition's simulation table.
std::optional<double> peakMiB(StringRef printed) {
  SmallVector<StringRef> lines;
  printed.split(lines, '\n');
  for (StringRef line : lines) {
    if (!line.consume_front("@d0"))
      continue;
    SmallVector<StringRef> cols;
    line.split(cols, ' ', -1, /*KeepEmpty=*/false);
    double peak = 0;
    if (cols.size() >= 4 && !cols[3].getAsDouble(peak))
      return peak;
  }
  return std::nullopt;
}

/// loom-opt --pipe-partition into exactly o.failover.stages stages of a
/// sequential (gpipe) plan, as many micro-batches as stages (a training
/// step's micro-batches mean nothing to serving, and fewer keep fewer
/// activations): the partitioner prefers replicas of one stage where the
/// model fits a device, so the memory per device is lowered from the whole
/// model's peak until it cuts the model that many ways.
Error cutIntoStages(const ServeOptions &o, const std::string &mlir,
                    const std::string &function, const std::string &out) {
  int64_t s = o.failover.stages;
  std::string want = itostr(s) + " stages,";
  std::optional<double> peak;
  std::string printed;
  for (double fraction = 0; fraction < 0.99;
       fraction = fraction == 0 ? 1.0 / s + 0.05 : fraction + 0.1) {
    double gib = fraction == 0 ? 1024 : *peak * fraction / 1024;
    ProcessResult cut;
    if (Error e = runTool(
            o.optBin,
            {mlir,
             formatv("--pipe-partition=function={0} devices={1} "
                     "micro-batches={1} schedule=gpipe memory={2:e6}",
                     function, s, gib)
                 .str(),
             "-o", out},
            &cut)) {
      consumeError(std::move(e)); // too little memory for any plan
      continue;
    }
    printed = cut.err;
    if (StringRef(cut.err).contains(want))
      return Error::success();
    if (!peak && !(peak = peakMiB(cut.err)))
      break;
  }
  return createStringError(
      "--pipe-partition did not cut the model into " + itostr(s) +
      " stages (a model too small to cut so many ways?); it printed:\n" +
      printed);
}

/// The module (the bundled MLP at batch 1, or a zoo model), cut into
/// o.failover.stages stages, and both compiled.
Expected<PipelineModel> preparePipeline(const ServeOptions &o,
                                        StringRef dir) {
  const FailoverOptions &f = o.failover;
  std::string mlir = pathIn(dir, "model.mlir");
  std::string weights = pathIn(dir, "model.safetensors");
  std::string function = "main";
  PipelineModel m;
  if (f.zooModel.empty()) {
    if (Error e = writeMlp(o, {1}, mlir, weights))
      return std::move(e);
    function = "b1";
    m.description = mlpDescription(o.mlpDims);
  } else {
    if (Error e = runTool(o.zooBin, {f.zooModel, "-o", mlir, "--weights",
                                     weights, "--seed", itostr(o.seed)}))
      return std::move(e);
    m.description = "zoo:" + f.zooModel;
  }
  std::string partMlir = pathIn(dir, "part.mlir");
  if (Error e = cutIntoStages(o, mlir, function, partMlir))
    return std::move(e);
  m.description += ", " + itostr(f.stages) + " stages";
  m.part = pathIn(dir, "part.so");
  m.whole = pathIn(dir, "whole.so");
  // The superoptimiser off: both artifacts run the graphs as written.
  for (auto [in, out] : {std::pair{partMlir, m.part}, std::pair{mlir, m.whole}})
    if (Error e = runTool(o.compileBin, {in, "-o", out, "--weights-file",
                                         weights, "--superopt=none"}))
      return std::move(e);
  return m;
}

/// Waits until the server's readiness is `ready`.
Error waitReadiness(Connection &probe, bool ready, unsigned timeoutSeconds) {
  auto deadline = Clock::now() + std::chrono::seconds(timeoutSeconds);
  do {
    if (bool(probe.get("/v2/health/ready")) == ready)
      return Error::success();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (Clock::now() < deadline);
  return createStringError(formatv("the server was not {0} within {1} s",
                                   ready ? "ready" : "unready",
                                   timeoutSeconds));
}

/// The front-end and what every run needs.
struct Bench {
  const ServeOptions &o;
  std::string dir, stageAddress;
  PipelineModel model;
  std::unique_ptr<ServerProcess> server;
  LoadTarget target;
  unsigned rankThreads = 1;
  int launches = 0;

  Expected<std::unique_ptr<RankJob>> launch(int64_t standbys) {
    int64_t ranks = o.failover.stages * (1 + standbys);
    auto job = RankJob::start(
        o.launchBin, ranks, o.serveBin, stageAddress, model.part, rankThreads,
        pathIn(dir, "ranks-" + itostr(launches++) + ".out"));
    if (!job)
      return job.takeError();
    Connection probe(server->host(), server->port(), o.timeoutSeconds);
    if (Error e = waitReadiness(probe, true, o.timeoutSeconds))
      return std::move(e);
    return job;
  }
  Error end(RankJob &job) {
    job.stop();
    Connection probe(server->host(), server->port(), o.timeoutSeconds);
    return waitReadiness(probe, false, o.timeoutSeconds);
  }
  double answered200() {
    Connection c(server->host(), server->port(), o.timeoutSeconds);
    auto text = c.get("/metrics");
    return text ? parseMetrics(*text, kPipeline).ok : -1;
  }
};

Error startBench(Bench &b) {
  const ServeOptions &o = b.o;
  auto model = preparePipeline(o, b.dir);
  if (!model)
    return model.takeError();
  b.model = std::move(*model);
  b.rankThreads = std::max<unsigned>(1, o.threads / o.failover.stages);
  auto server = ServerProcess::start(
      o.serveBin,
      {std::string(kPipeline) + "=" + b.model.part,
       std::string(kWhole) + "=" + b.model.whole, "--threads",
       itostr(o.threads), "--http-threads", itostr(o.httpThreads),
       "--stage-timeout-ms", itostr(o.failover.stageTimeoutMs)},
      b.dir, "pipeline", o.timeoutSeconds);
  if (!server)
    return server.takeError();
  b.server = std::move(*server);
  StringRef banner = b.server->banner();
  size_t at = banner.find("connect to ");
  if (at == StringRef::npos)
    return createStringError("loom-serve printed no stage address: " +
                             banner);
  b.stageAddress = banner.substr(at + 11).take_until(isSpace).str();
  Connection c(b.server->host(), b.server->port(), o.timeoutSeconds);
  auto body = c.get(std::string("/v2/models/") + kPipeline);
  if (!body)
    return body.takeError();
  auto meta = parseModelMeta(*body);
  if (!meta)
    return meta.takeError();
  b.target.host = b.server->host();
  b.target.port = b.server->port();
  b.target.path = std::string("/v2/models/") + kPipeline + "/infer";
  b.target.tolerance = o.tolerance;
  b.target.timeoutSeconds = o.timeoutSeconds;
  std::string wholePath = std::string("/v2/models/") + kWhole + "/infer";
  for (unsigned i = 0; i < o.inputs; ++i) {
    auto inputs = randomInputs(*meta, o.seed * 1000003ull + i);
    if (!inputs)
      return inputs.takeError();
    b.target.requests.push_back(encodeRequest(*meta, *inputs, o.encoding));
    auto outputs = decodeAnswer(c.post(wholePath, b.target.requests.back()));
    if (!outputs)
      return createStringError("the whole model on input " + Twine(i) + ": " +
                               toString(outputs.takeError()));
    b.target.references.push_back(std::move(*outputs));
  }
  return Error::success();
}

struct CostRow {
  unsigned round = 0;
  int64_t standbys = 0;
  LoadResult load;
};

double medianRate(const std::vector<CostRow> &rows, int64_t standbys) {
  std::vector<double> rates;
  for (const CostRow &r : rows)
    if (r.standbys == standbys)
      rates.push_back(r.load.requestsPerSecond());
  std::sort(rates.begin(), rates.end());
  return rates.empty() ? 0 : rates[(rates.size() - 1) / 2];
}

Expected<std::vector<CostRow>> measureCost(Bench &b) {
  const ServeOptions &o = b.o;
  LoadPlan plan{o.concurrency.back(), o.warmupRequests, o.durationSeconds, 0};
  std::vector<CostRow> rows;
  for (unsigned round = 0; round < o.failover.costRounds; ++round)
    for (int64_t standbys : {int64_t(0), o.failover.standbys}) {
      auto job = b.launch(standbys);
      if (!job)
        return job.takeError();
      rows.push_back({round, standbys, runLoad(b.target, plan, [](bool) {})});
      const LoadResult &l = rows.back().load;
      outs() << formatv("  round {0}, {1} standby(s) per stage: {2:f1} req/s, "
                        "p50 {3} ms, p99 {4} ms, {5} errors, {6} wrong\n",
                        round + 1, standbys, l.requestsPerSecond(),
                        fmtMs(l.percentileMs(50)), fmtMs(l.percentileMs(99)),
                        l.errors, l.wrong);
      outs().flush();
      if (Error e = b.end(**job))
        return std::move(e);
    }
  return rows;
}

/// What the run with a failure measured.
struct FailoverRun {
  LoadResult load;
  double failedAt = -1;    // seconds into the load
  double longestGapAfter = 0, longestGapBefore = 0; // seconds
  double server200 = 0;
  pid_t pid = -1;
  std::string frontEndLine;
};

/// The longest time without an answer ending, after `from` (counted from
/// `from`) and before it.
void gaps(const std::vector<double> &ends, double from, FailoverRun &r) {
  double prev = 0;
  for (double t : ends) {
    if (t < from)
      r.longestGapBefore = std::max(r.longestGapBefore, t - prev);
    else
      r.longestGapAfter = std::max(r.longestGapAfter, t - std::max(prev, from));
    prev = t;
  }
}

Expected<FailoverRun> measureFailover(Bench &b) {
  const ServeOptions &o = b.o;
  const FailoverOptions &f = o.failover;
  auto job = b.launch(f.standbys);
  if (!job)
    return job.takeError();
  FailoverRun r;
  // Rank r serves stage r mod S as replica r / S: the stage's primary is
  // the rank numbered as the stage.
  auto pid = (*job)->pidOf(f.killStage, o.timeoutSeconds);
  if (!pid)
    return pid.takeError();
  r.pid = *pid;
  double before = 0;
  LoadPlan plan{o.concurrency.back(), o.warmupRequests, o.durationSeconds, 0};
  std::thread killer;
  r.load = runLoad(b.target, plan, [&](bool starting) {
    // The server's count of 200s over the measured requests only.
    if (!starting) {
      r.server200 = b.answered200() - before;
      return;
    }
    before = b.answered200();
    Clock::time_point start = Clock::now();
    killer = std::thread([&, start] {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(f.killAtSeconds)));
      ::kill(r.pid, f.killSignal);
      r.failedAt = std::chrono::duration<double>(Clock::now() - start).count();
    });
  });
  killer.join();
  if (f.killSignal == SIGSTOP)
    ::kill(r.pid, SIGKILL);
  gaps(r.load.endSeconds, r.failedAt, r);
  if (Error e = b.end(**job))
    return std::move(e);
  auto log = MemoryBuffer::getFile(pathIn(b.dir, "pipeline.out"));
  if (log) {
    SmallVector<StringRef> lines;
    (*log)->getBuffer().split(lines, '\n');
    std::string rank = "rank " + itostr(f.killStage) + " (primary) failed";
    for (StringRef line : lines) // the last: earlier runs' ranks ended too
      if (line.contains(rank))
        r.frontEndLine = line.str();
  }
  return r;
}

json::Object loadJSON(const LoadResult &l) {
  return json::Object{{"sent", l.sent},
                      {"answered", l.answered},
                      {"wrong", l.wrong},
                      {"errors", l.errors},
                      {"requests_per_second", l.requestsPerSecond()},
                      {"p50_ms", l.percentileMs(50)},
                      {"p99_ms", l.percentileMs(99)},
                      {"max_ms", l.latenciesMs.empty() ? 0.0
                                                       : l.latenciesMs.back()}};
}

void printFailover(const Bench &b, const FailoverRun &r, double cost) {
  const FailoverOptions &f = b.o.failover;
  const LoadResult &l = r.load;
  int64_t duplicated =
      std::max<int64_t>(0, int64_t(r.server200) - (l.answered + l.wrong));
  outs() << formatv(
      "\nfailover: stage {0}'s primary (rank {0}, pid {1}) sent {2} at "
      "{3:f2} s of {4} s\n",
      f.killStage, r.pid, f.killSignal == SIGKILL ? "SIGKILL" : "SIGSTOP",
      r.failedAt, b.o.durationSeconds);
  outs() << "| sent | answered right | wrong | not answered | answered twice "
            "| longest gap after the failure | longest gap before | p50 | "
            "p99 | max |\n|---|---|---|---|---|---|---|---|---|---|\n";
  outs() << formatv("| {0} | {1} | {2} | {3} | {4} | {5:f0} ms | {6:f0} ms | "
                    "{7} ms | {8} ms | {9} ms |\n",
                    l.sent, l.answered, l.wrong, l.errors, duplicated,
                    r.longestGapAfter * 1000, r.longestGapBefore * 1000,
                    fmtMs(l.percentileMs(50)), fmtMs(l.percentileMs(99)),
                    fmtMs(l.latenciesMs.empty() ? 0.0 : l.latenciesMs.back()));
  if (!r.frontEndLine.empty())
    outs() << "front-end: " << r.frontEndLine << "\n";
  outs() << formatv("targets: lost {0} (0), answered twice {1} (0), service "
                    "back in {2:f2} s (5 s), standbys' cost {3:f1}% of "
                    "throughput (at most 5%)\n",
                    l.errors + l.wrong, duplicated, r.longestGapAfter,
                    cost * 100);
}

} // namespace

int runFailover(const ServeOptions &o, StringRef workDir,
                json::Object &machine) {
  const FailoverOptions &f = o.failover;
  Bench b{o, workDir.str(), "", {}, nullptr, {}, 1, 0};
  if (Error e = startBench(b))
    return fail(toString(std::move(e)));
  outs() << formatv("loom-bench-serve --failover: {0}, {1} standby(s) per "
                    "stage, ranks of {2} thread(s), {3} clients, {4} s per "
                    "run, {5} tensors, on {6}; load average before: {7}\n",
                    b.model.description, f.standbys, b.rankThreads,
                    o.concurrency.back(), o.durationSeconds,
                    encodingName(o.encoding), cpuModelName(),
                    machine["load_before"].getAsString().value_or(""));
  outs() << "normal case (no failure), without and with standbys, "
            "alternated:\n";
  auto cost = measureCost(b);
  if (!cost)
    return fail(toString(cost.takeError()));
  double without = medianRate(*cost, 0), with = medianRate(*cost, f.standbys);
  double costFraction = without > 0 ? 1 - with / without : 0;
  outs() << formatv("standbys' cost: {0:f1} req/s with, {1:f1} without "
                    "(medians of {2} rounds): {3:f1}% of throughput\n",
                    with, without, f.costRounds, costFraction * 100);
  auto run = measureFailover(b);
  if (!run)
    return fail(toString(run.takeError()));
  printFailover(b, *run, costFraction);
  ServerStop stop = b.server->stop(30);
  int64_t duplicated = std::max<int64_t>(
      0, int64_t(run->server200) - (run->load.answered + run->load.wrong));
  json::Array normal;
  for (const CostRow &r : *cost) {
    json::Object row = loadJSON(r.load);
    row["round"] = r.round + 1;
    row["standbys"] = r.standbys;
    normal.push_back(std::move(row));
  }
  machine["load_after"] = loadAverage();
  json::Object failover = loadJSON(run->load);
  failover["signal"] = f.killSignal == SIGKILL ? "KILL" : "STOP";
  failover["failed_at_s"] = run->failedAt;
  failover["longest_gap_after_ms"] = run->longestGapAfter * 1000;
  failover["longest_gap_before_ms"] = run->longestGapBefore * 1000;
  failover["answered_twice"] = duplicated;
  failover["front_end"] = run->frontEndLine;
  json::Object report{{"machine", std::move(machine)},
                      {"model", b.model.description},
                      {"stages", f.stages},
                      {"standbys", f.standbys},
                      {"clients", o.concurrency.back()},
                      {"duration_s", o.durationSeconds},
                      {"normal", std::move(normal)},
                      {"standby_cost_fraction", costFraction},
                      {"failover", std::move(failover)}};
  if (!o.json.empty())
    if (Error e = writeJSONFile(o.json, json::Value(std::move(report))))
      return fail(toString(std::move(e)));
  if (run->load.errors || run->load.wrong || duplicated)
    return fail("requests were lost, answered wrong or answered twice");
  if (!stop.clean)
    return fail("the server did not stop cleanly: " + stop.problem);
  return 0;
}

} // namespace loom::bench
