//===- BenchPipeline.cpp - Graph pipelining against sequential schedules --===//
//
// Part of Loom. loom-bench-pipeline builds the zoo's multi-branch models
// (multi-modal transformer, DLRM, CANDLE-Uno) and BERT-base with loom-zoo,
// partitions each with loom-opt --pipe-partition for every device count and
// schedule (graph; gpipe, 1f1b, interleaved, zb-h1 on the sequential
// partition) under one memory limit on the h100 target, and prints the
// simulated throughput of graph pipelining beside the best sequential
// schedule, peak memory per device, search time, and the 1F1B bubble beside
// its closed form (p-1)/(m+p-1) for p stages of equal time (the partition's
// stages are not equal: the simulated bubble is the real one). Then it
// times planning 1,024 devices. Everything is simulated: no device is used.
// With --run it measures instead (RunMode.cpp): the compiled pipelined step
// under loom-launch beside the unpartitioned step in one process and the
// simulator's prediction for the cpu target.
// docs/benchmarks/pipeline.md records results.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "BenchPipeline.h"

#include <chrono>
#include <map>
#include <optional>

using namespace llvm;
using namespace loom::bench::pipeline;

namespace {

cl::OptionCategory benchCat("loom-bench-pipeline options");
cl::opt<std::string> modelList(
    "models", cl::desc("Comma-separated zoo models"),
    cl::init("multimodal,dlrm,candle-uno,bert-base"), cl::cat(benchCat));
cl::opt<std::string> deviceList("devices",
                                cl::desc("Comma-separated device counts"),
                                cl::init("4,8,16,32"), cl::cat(benchCat));
cl::opt<int> microBatches("micro-batches", cl::desc("Micro-batches per step"),
                          cl::init(32), cl::cat(benchCat));
cl::opt<double> memoryGiB("memory", cl::desc("GiB per device"),
                          cl::init(80), cl::cat(benchCat));
cl::opt<std::string> target("target", cl::desc("Cost model target"),
                            cl::init("h100"), cl::cat(benchCat));
cl::opt<int> large("large-devices",
                   cl::desc("Device count of the planning-time row (0: none)"),
                   cl::init(1024), cl::cat(benchCat));
cl::opt<std::string> binDir("bin-dir",
                            cl::desc("Where loom-zoo and loom-opt are "
                                     "(default: beside this executable)"),
                            cl::init(""), cl::cat(benchCat));
cl::opt<std::string> jsonFile("json", cl::desc("Write the results as JSON"),
                              cl::init(""), cl::cat(benchCat));
cl::opt<bool> runMode("run",
                      cl::desc("Measure the compiled pipelined step under "
                               "loom-launch instead of simulating (--ranks, "
                               "--schedules, --run-models, --repeat, --trials)"),
                      cl::init(false), cl::cat(benchCat));
cl::opt<std::string> runModels(
    "run-models", cl::desc("--run: comma-separated small models "
                           "(candle-uno, bert-base)"),
    cl::init("candle-uno,bert-base"), cl::cat(benchCat));
cl::opt<std::string> rankList("ranks",
                              cl::desc("--run: comma-separated rank counts"),
                              cl::init("2,4"), cl::cat(benchCat));
cl::opt<std::string> scheduleList(
    "schedules", cl::desc("--run: comma-separated schedules"),
    cl::init("gpipe,1f1b,zb-h1,graph"), cl::cat(benchCat));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("--run: steps per loom-run (its mean)"),
                         cl::init(20), cl::cat(benchCat));
cl::opt<unsigned> trials("trials",
                         cl::desc("--run: runs of every configuration, in "
                                  "turn; the median is reported"),
                         cl::init(3), cl::cat(benchCat));
cl::opt<bool> feedPartitions(
    "feed-partitions",
    cl::desc("--run: partition fed with a pilot 1F1B run's step profile of "
             "each rank count (--pipe-partition profile=); false: the cpu "
             "cost model alone"),
    cl::init(true), cl::cat(benchCat));

/// The micro-batch of each model: the function's batch (loom-zoo --batch).
int microBatchSize(StringRef model) {
  return StringSwitch<int>(model)
      .Cases({"dlrm", "candle-uno"}, 64)
      .Default(8);
}

} // namespace

std::string loom::bench::pipeline::tool(StringRef name, const char *argv0) {
  SmallString<256> path(binDir);
  if (path.empty()) {
    path = sys::fs::getMainExecutable(argv0, (void *)&tool);
    sys::path::remove_filename(path);
  }
  sys::path::append(path, name);
  return std::string(path);
}

int loom::bench::pipeline::run(const std::string &program,
                               ArrayRef<std::string> args, StringRef errPath,
                               StringRef outPath, unsigned seconds) {
  std::vector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {std::nullopt, outPath, errPath};
  std::string message;
  int rc = sys::ExecuteAndWait(program, argv, std::nullopt, redirects, seconds,
                               0, &message);
  if (rc < 0)
    errs() << "loom-bench-pipeline: " << program << ": " << message << "\n";
  return rc;
}

Result loom::bench::pipeline::partition(const std::string &opt, StringRef mlir,
                                       const PartitionRequest &q,
                                       StringRef dir) {
  SmallString<256> report(dir), err(dir);
  sys::path::append(report, "plan.json");
  sys::path::append(err, "stderr.txt");
  std::string options = formatv("devices={0} micro-batches={1} memory={2:f6} "
                                "target={3} schedule={4} report={5}",
                                q.devices, q.microBatches, q.memoryGiB,
                                q.target, q.schedule, report)
                            .str();
  if (!q.profile.empty())
    options += " profile=" + q.profile;
  auto start = std::chrono::steady_clock::now();
  int rc = run(opt,
               {std::string(mlir), "--pipe-partition=" + options, "-o",
                q.output.empty() ? std::string("/dev/null") : q.output},
               err);
  Result r;
  r.wallSeconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (rc != 0) {
    auto text = MemoryBuffer::getFile(err);
    StringRef msg = text ? (*text)->getBuffer() : "";
    size_t at = msg.find("error: ");
    r.error = at == StringRef::npos ? "failed"
                                    : msg.substr(at + 7).split('\n').first.str();
    return r;
  }
  auto text = MemoryBuffer::getFile(report);
  if (!text) {
    r.error = "no report";
    return r;
  }
  auto j = json::parse((*text)->getBuffer());
  if (!j) {
    r.error = toString(j.takeError());
    return r;
  }
  const json::Object *plan = j->getAsObject();
  const json::Object *sim = plan->getObject("simulation");
  r.search = plan->getNumber("search_s").value_or(0);
  if (const json::Array *stages = plan->getArray("stages")) {
    r.stages = stages->size();
    for (const json::Value &st : *stages)
      if (const json::Object *o = st.getAsObject())
        if (const json::Array *d = o->getArray("devices")) {
          r.replicated |= d->size() > 1;
          r.stagePeakGiB = std::max(r.stagePeakGiB,
                                    o->getNumber("peak_bytes").value_or(0) /
                                        double(int64_t(1) << 30));
        }
  }
  if (sim) {
    r.samplesPerSecond = sim->getNumber("samples_per_s").value_or(0);
    r.makespan = sim->getNumber("makespan_s").value_or(0);
    r.bubble = sim->getNumber("mean_bubble").value_or(0);
    if (const json::Array *per = sim->getArray("per_device"))
      for (const json::Value &d : *per)
        if (const json::Object *o = d.getAsObject())
          r.peakGiB = std::max(r.peakGiB,
                               o->getNumber("peak_bytes").value_or(0) /
                                   double(int64_t(1) << 30));
  }
  r.ok = sim != nullptr;
  return r;
}

namespace {
/// The simulation mode's request: the command line's memory and target.
Result simulate(const std::string &opt, StringRef mlir, int devices,
                StringRef schedule, StringRef dir) {
  PartitionRequest q;
  q.devices = devices;
  q.microBatches = microBatches;
  q.memoryGiB = memoryGiB;
  q.target = target;
  q.schedule = schedule.str();
  return partition(opt, mlir, q, dir);
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-pipeline: simulated throughput of graph pipelining against "
      "the best sequential schedule (gpipe, 1f1b, interleaved, zb-h1) on the "
      "zoo's models\n");
  if (runMode) {
    RunOptions ro;
    ro.argv0 = argv[0];
    ro.microBatches = microBatches;
    ro.repeat = repeat;
    ro.trials = trials;
    ro.feedPartitions = feedPartitions;
    ro.json = jsonFile;
    StringRef(runModels).split(ro.models, ',', -1, false);
    StringRef(scheduleList).split(ro.schedules, ',', -1, false);
    SmallVector<StringRef> rankStrs;
    StringRef(rankList).split(rankStrs, ',', -1, false);
    for (StringRef rs : rankStrs) {
      int ranks = 0;
      if (rs.trim().getAsInteger(10, ranks) || ranks < 2) {
        errs() << "loom-bench-pipeline: bad rank count '" << rs
               << "' (at least 2)\n";
        return 2;
      }
      ro.ranks.push_back(ranks);
    }
    return runPipelines(ro);
  }
  std::string zoo = tool("loom-zoo", argv[0]), opt = tool("loom-opt", argv[0]);
  SmallString<256> dir;
  if (sys::fs::createUniqueDirectory("loom-bench-pipeline", dir)) {
    errs() << "loom-bench-pipeline: cannot create a temporary directory\n";
    return 1;
  }
  SmallVector<StringRef> models, deviceStrs;
  StringRef(modelList).split(models, ',', -1, false);
  StringRef(deviceList).split(deviceStrs, ',', -1, false);
  const char *sequential[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
  json::Array rows;
  outs() << formatv("simulated on {0} x {1} GiB, {2} micro-batches per step; "
                    "samples/s of one step\n",
                    target.getValue(), memoryGiB.getValue(),
                    microBatches.getValue());
  outs() << formatv("{0,-11} {1,4} {2,4} {3,11} {4,11} {5,-12} {6,7} {7,9} "
                    "{8,8} {9,7} {10,8}\n",
                    "model", "mb", "dev", "graph", "best seq", "(schedule)",
                    "ratio", "peak GiB", "search s", "bubble", "1f1b cf");
  for (StringRef model : models) {
    SmallString<256> mlir(dir);
    sys::path::append(mlir, model + ".mlir");
    SmallString<256> err(dir);
    sys::path::append(err, "zoo.txt");
    int mb = microBatchSize(model);
    if (run(zoo, {model.str(), "--batch", std::to_string(mb), "-o",
                  std::string(mlir)},
            err) != 0) {
      errs() << "loom-bench-pipeline: loom-zoo " << model << " failed\n";
      return 1;
    }
    for (StringRef ds : deviceStrs) {
      int devices = 0;
      if (ds.trim().getAsInteger(10, devices) || devices < 1) {
        errs() << "loom-bench-pipeline: bad device count '" << ds << "'\n";
        return 2;
      }
      Result graph = simulate(opt, mlir, devices, "graph", dir);
      Result best;
      std::string bestName = "none";
      Result oneF;
      json::Object seqJson;
      for (const char *s : sequential) {
        Result r = simulate(opt, mlir, devices, s, dir);
        seqJson[s] = r.ok ? json::Value(r.samplesPerSecond)
                          : json::Value(r.error);
        if (StringRef(s) == "1f1b")
          oneF = r;
        if (r.ok && r.samplesPerSecond > best.samplesPerSecond) {
          best = r;
          bestName = s;
        }
      }
      double ratio = graph.ok && best.ok && best.samplesPerSecond > 0
                         ? graph.samplesPerSecond / best.samplesPerSecond
                         : 0;
      // The closed form for the 1F1B plan's stage count, equal stages.
      double closed = oneF.ok && oneF.stages > 0
                          ? double(oneF.stages - 1) /
                                (microBatches + oneF.stages - 1)
                          : 0;
      outs() << formatv("{0,-11} {1,4} {2,4} {3,11:f1} {4,11:f1} {5,-12} "
                        "{6,6:f2}x {7,9:f2} {8,8:f3} {9,7:f3} {10,8:f3}\n",
                        model, mb, devices, graph.samplesPerSecond,
                        best.samplesPerSecond, "(" + bestName + ")", ratio,
                        graph.peakGiB, graph.search, graph.bubble, closed);
      if (!graph.ok)
        outs() << "  graph: " << graph.error << "\n";
      rows.push_back(json::Object{{"model", model},
                                  {"micro_batch_size", mb},
                                  {"devices", devices},
                                  {"graph_samples_per_s", graph.samplesPerSecond},
                                  {"graph_stages", graph.stages},
                                  {"graph_bubble", graph.bubble},
                                  {"graph_peak_gib", graph.peakGiB},
                                  {"graph_search_s", graph.search},
                                  {"sequential_samples_per_s", std::move(seqJson)},
                                  {"best_sequential", bestName},
                                  {"ratio", ratio},
                                  {"one_f_one_b_bubble", oneF.bubble},
                                  {"one_f_one_b_closed_form", closed}});
    }
  }
  json::Object largeJson;
  if (large > 0 && !models.empty()) {
    SmallString<256> mlir(dir);
    sys::path::append(mlir, models.back() + ".mlir");
    outs() << formatv("planning {0} devices ({1}, {2} micro-batches): ", large,
                      models.back(), microBatches.getValue());
    for (const char *s : {"graph", "1f1b"}) {
      Result r = simulate(opt, mlir, large, s, dir);
      outs() << formatv("{0} {1:f2} s wall (search {2:f3} s, {3} stages){4}; ",
                        s, r.wallSeconds, r.search, r.stages,
                        r.ok ? "" : " FAILED: " + r.error);
      largeJson[s] = json::Object{{"wall_s", r.wallSeconds},
                                  {"search_s", r.search},
                                  {"stages", r.stages},
                                  {"ok", r.ok}};
    }
    outs() << "\n";
  }
  sys::fs::remove_directories(dir);
  if (!jsonFile.empty()) {
    std::error_code ec;
    raw_fd_ostream os(jsonFile, ec);
    if (ec) {
      errs() << "loom-bench-pipeline: cannot write " << jsonFile << "\n";
      return 1;
    }
    os << formatv("{0:2}", json::Value(json::Object{
                               {"target", target.getValue()},
                               {"memory_gib", memoryGiB.getValue()},
                               {"micro_batches", microBatches.getValue()},
                               {"rows", std::move(rows)},
                               {"large", std::move(largeJson)}}))
       << "\n";
  }
  return 0;
}
