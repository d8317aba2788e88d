//===- BenchServe.cpp - loom-bench-serve ----------------------------------===//
//
// Part of Loom. loom-serve's throughput and latency against concurrency on
// loopback: one server with dynamic batching (up to the artifact's largest
// batch, the default queue delay) and one without (--max-batch 1), both
// started here as children; at each concurrency, closed-loop clients send
// each server in turn one-row KServe v2 requests for a duration or a
// request count after a warm-up, and every answer is checked against the
// answer the same input got as a lone request. Beside it, loom-run's
// latency of the same artifact at batch 1 and at the largest batch
// (docs/benchmarks/serve.md). With --failover: a model served across
// ranks with standbys, and a rank failing under load (Failover.h).
//
//   loom-bench-serve --model mlp --concurrency 1,2,4,8,16,32,64
//       --duration-s 5 --json serve.json
//
//===----------------------------------------------------------------------===//

#include "Client.h"
#include "Failover.h"
#include "Floor.h"
#include "KServe.h"
#include "Load.h"
#include "Options.h"
#include "Prepare.h"
#include "Report.h"
#include "ServerProcess.h"

#include "BenchSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <thread>

using namespace llvm;
using namespace loom::bench;

namespace {

/// The served model's name in the URLs.
constexpr const char *kModel = "bench";

int fail(const Twine &message) {
  errs() << "loom-bench-serve: error: " << message << "\n";
  return 1;
}

/// A started server and what the bench sent it.
struct Server {
  ServeMode mode;
  std::vector<std::string> args;
  std::unique_ptr<ServerProcess> process;
  int64_t sent = 0;
};

std::vector<std::string> serverArgs(const ServeOptions &o, ServeMode mode,
                                    const std::string &artifact) {
  std::vector<std::string> args = {std::string(kModel) + "=" + artifact,
                                   "--threads", std::to_string(o.threads),
                                   "--http-threads",
                                   std::to_string(o.httpThreads)};
  switch (mode) {
  case ServeMode::Batched:
    if (o.maxQueueDelayUs >= 0) {
      args.push_back("--max-queue-delay-us");
      args.push_back(std::to_string(o.maxQueueDelayUs));
    }
    break;
  case ServeMode::Unbatched:
    args.push_back("--max-batch");
    args.push_back("1");
    break;
  }
  return args;
}

Error startServers(const ServeOptions &o, const std::string &artifact,
                   StringRef workDir, std::vector<Server> &servers) {
  for (ServeMode mode : o.modes) {
    Server s{mode, serverArgs(o, mode, artifact), nullptr, 0};
    auto p = ServerProcess::start(o.serveBin, s.args, workDir, modeName(mode),
                                  o.timeoutSeconds);
    if (!p)
      return createStringError(std::string(modeName(mode)) +
                               " server: " + toString(p.takeError()));
    s.process = std::move(*p);
    outs() << modeName(mode) << " server on " << s.process->host() << ":"
           << s.process->port() << ": " << s.process->banner();
    servers.push_back(std::move(s));
  }
  outs().flush();
  return Error::success();
}

/// The requests of the run, and each one's answer as a lone request to
/// the first server.
Error makeRequests(const ServeOptions &o, const ModelMeta &meta, Server &first,
                   LoadTarget &target) {
  Connection c(first.process->host(), first.process->port(), o.timeoutSeconds);
  for (unsigned i = 0; i < o.inputs; ++i) {
    auto inputs = randomInputs(meta, o.seed * 1000003ull + i);
    if (!inputs)
      return inputs.takeError();
    target.requests.push_back(encodeRequest(meta, *inputs, o.encoding));
    ++first.sent;
    auto outputs = decodeAnswer(c.post(target.path, target.requests.back()));
    if (!outputs)
      return createStringError("the lone request of input " + Twine(i) + ": " +
                               toString(outputs.takeError()));
    for (const TensorMeta &out : meta.outputs) {
      auto it = outputs->find(out.name);
      if (it == outputs->end() || it->second.shape.empty() ||
          it->second.shape[0] != 1)
        return createStringError("the lone request of input " + Twine(i) +
                                 ": output '" + out.name +
                                 "' is missing or not of one row");
    }
    target.references.push_back(std::move(*outputs));
  }
  return Error::success();
}

/// One level on one server, with the server's counters around it.
LevelRow measureLevel(const ServeOptions &o, LoadTarget target, Server &server,
                      int64_t concurrency, std::vector<std::string> &notes) {
  target.host = server.process->host();
  target.port = server.process->port();
  LoadPlan plan{concurrency, o.warmupRequests, o.durationSeconds, o.requests};
  std::optional<ServerCounters> before, after;
  auto read = [&](bool starting) {
    // A connection of its own, closed at once: loom-serve serves a
    // connection on one HTTP worker for as long as it is kept alive, so a
    // connection the bench kept open would take a worker from the clients
    // (one of them would wait for its keep-alive timeout, 5 s).
    Connection metrics(target.host, target.port, o.timeoutSeconds);
    auto text = metrics.get("/metrics");
    if (!text) {
      notes.push_back(toString(text.takeError()));
      return;
    }
    (starting ? before : after) = parseMetrics(*text, kModel);
  };
  LevelRow row;
  row.mode = server.mode;
  row.concurrency = concurrency;
  row.load = runLoad(target, plan, read);
  server.sent += row.load.sent + row.load.warmupSent;
  if (before && after) {
    double runs = after->runs - before->runs;
    double queued = after->queued - before->queued;
    if (runs > 0) {
      row.meanBatch = (after->rows - before->rows) / runs;
      row.meanRunMs =
          (after->computeSeconds - before->computeSeconds) / runs * 1000;
    }
    if (queued > 0)
      row.meanQueueMs =
          (after->queueSeconds - before->queueSeconds) / queued * 1000;
    row.serverRequests =
        (after->ok + after->refused) - (before->ok + before->refused);
    if (*row.serverRequests != double(row.load.sent))
      notes.push_back(formatv("{0} at {1} clients: the server counted {2} "
                              "inference requests, the clients sent {3}",
                              modeName(server.mode), concurrency,
                              *row.serverRequests, row.load.sent)
                          .str());
  }
  return row;
}

int runBench(const ServeOptions &o, StringRef workDir, json::Object &machine);

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // A server that closes a connection while a client writes to it costs
  // that request (counted as an error), not the bench.
  signal(SIGPIPE, SIG_IGN);
  auto options = parseOptions(argc, argv);
  if (!options)
    return fail(toString(options.takeError()));
  const ServeOptions &o = *options;
  SmallString<256> work(o.workDir);
  bool temporary = work.empty();
  if (temporary) {
    if (sys::fs::createUniqueDirectory("loom-bench-serve", work))
      return fail("cannot create a temporary directory");
  } else if (std::error_code ec = sys::fs::create_directories(work)) {
    return fail("cannot create " + o.workDir + ": " + ec.message());
  }
  json::Object machine{
      {"cpu", cpuModelName()},
      {"load_before", loadAverage()},
      {"hardware_threads", std::thread::hardware_concurrency()}};
  int status = o.failover.enabled ? runFailover(o, work, machine)
                                  : runBench(o, work, machine);
  if (temporary)
    sys::fs::remove_directories(work);
  return status;
}

namespace {

int runBench(const ServeOptions &o, StringRef workDir, json::Object &machine) {
  auto model = prepareModel(o, workDir);
  if (!model)
    return fail(toString(model.takeError()));
  outs() << formatv("loom-bench-serve: {0} on {1}, {2} runtime thread(s), "
                    "{3} HTTP thread(s), {4} tensors; load average before: "
                    "{5}\n",
                    model->description, cpuModelName(), o.threads,
                    o.httpThreads, encodingName(o.encoding),
                    machine["load_before"].getAsString().value_or(""));
  std::vector<Server> servers;
  if (Error e = startServers(o, model->artifact, workDir, servers))
    return fail(toString(std::move(e)));
  // Closed before the load (see measureLevel).
  auto metaBody =
      Connection(servers[0].process->host(), servers[0].process->port(),
                 o.timeoutSeconds)
          .get(std::string("/v2/models/") + kModel);
  if (!metaBody)
    return fail(toString(metaBody.takeError()));
  auto meta = parseModelMeta(*metaBody);
  if (!meta)
    return fail("the model's metadata: " + toString(meta.takeError()));
  RunSummary run;
  run.model = model->description;
  run.artifact = model->artifact;
  run.compileSeconds = model->compileSeconds;
  run.batchSizes = meta->batchSizes;
  if (servers[0].mode == ServeMode::Batched)
    run.maxBatch = meta->maxBatchSize;
  if (meta->batchSizes.size() < 2)
    return fail(model->artifact + " has no batch range (one entry per batch "
                                  "size: docs/tools/loom-serve.md): batching "
                                  "has nothing to join");
  LoadTarget target;
  target.path = std::string("/v2/models/") + kModel + "/infer";
  target.tolerance = o.tolerance;
  target.timeoutSeconds = o.timeoutSeconds;
  if (Error e = makeRequests(o, *meta, servers[0], target))
    return fail(toString(std::move(e)));
  run.floor = measureFloor(o, model->artifact, *meta, meta->batchSizes.back());
  std::vector<LevelRow> rows;
  for (int64_t c : o.concurrency)
    for (Server &s : servers) {
      rows.push_back(measureLevel(o, target, s, c, run.notes));
      const LoadResult &l = rows.back().load;
      outs() << formatv("  {0} at {1} client(s): {2:f1} req/s, p50 {3} ms, "
                        "p99 {4} ms, {5} errors, {6} wrong\n",
                        modeName(s.mode), c, l.requestsPerSecond(),
                        fmtMs(l.percentileMs(50)), fmtMs(l.percentileMs(99)),
                        l.errors, l.wrong);
      outs().flush();
    }
  int64_t errors = 0, wrong = 0;
  for (const LevelRow &r : rows) {
    errors += r.load.errors;
    wrong += r.load.wrong;
  }
  bool stoppedCleanly = true;
  for (Server &s : servers) {
    ServerStop stop = s.process->stop(30);
    stoppedCleanly &= stop.clean && stop.answered == s.sent;
    run.servers.push_back(
        {s.mode, commandLine(o.serveBin, s.args), stop, s.sent});
  }
  printReport(rows, run);
  machine["load_after"] = loadAverage();
  machine["runtime_threads"] = o.threads;
  outs() << "load average after: " << loadAverage() << "\n";
  if (!o.json.empty())
    if (Error e =
            writeJSONFile(o.json, reportJSON(o, rows, run, std::move(machine))))
      return fail(toString(std::move(e)));
  if (errors || wrong)
    return fail(formatv("{0} failed request(s) and {1} wrong answer(s)", errors,
                        wrong));
  if (!stoppedCleanly)
    return fail("a server did not stop cleanly or answered another number "
                "of requests than it was sent");
  return 0;
}

} // namespace
