//===- Options.cpp - The command line of loom-bench-serve -----------------===//
//
// Part of Loom. See Options.h.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "ThreadsOption.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <csignal>
#include <thread>

using namespace llvm;

namespace loom::bench {

const char *modeName(ServeMode m) {
  switch (m) {
  case ServeMode::Batched:
    return "batched";
  case ServeMode::Unbatched:
    return "unbatched";
  }
  return "?";
}

const char *encodingName(Encoding e) {
  switch (e) {
  case Encoding::Binary:
    return "binary";
  case Encoding::Json:
    return "json";
  }
  return "?";
}

namespace {

cl::OptionCategory cat("loom-bench-serve options");

cl::opt<std::string> model("model",
                           cl::desc("FILE.so (an artifact with a batch "
                                    "range) or mlp (the bundled MLP, built "
                                    "and compiled by the bench)"),
                           cl::init(""), cl::cat(cat));
cl::opt<std::string> mlpDims("mlp-dims",
                             cl::desc("The bundled MLP's widths: input, "
                                      "hidden..., output"),
                             cl::init("256,1024,1024,16"), cl::cat(cat));
cl::opt<std::string> batchSizes("batch-sizes",
                                cl::desc("The bundled MLP's batch sizes "
                                         "(one entry each)"),
                                cl::init("1,2,4,8"), cl::cat(cat));
cl::opt<std::string> concurrency("concurrency",
                                 cl::desc("Closed-loop clients per level"),
                                 cl::init("1,2,4,8,16,32,64"), cl::cat(cat));
cl::opt<std::string> modes("modes",
                           cl::desc("batched,unbatched (default), batched "
                                    "or unbatched"),
                           cl::init("batched,unbatched"), cl::cat(cat));
cl::opt<double> duration("duration-s",
                         cl::desc("Seconds each level sends requests "
                                  "(default 5)"),
                         cl::init(5), cl::cat(cat));
cl::opt<int64_t> requests("requests",
                          cl::desc("Requests per level instead of "
                                   "--duration-s"),
                          cl::init(0), cl::cat(cat));
cl::opt<unsigned> warmup("warmup-requests",
                         cl::desc("Untimed requests per client before each "
                                  "level (default 2)"),
                         cl::init(2), cl::cat(cat));
cl::opt<unsigned> inputs("inputs",
                         cl::desc("Distinct inputs the clients cycle "
                                  "through (default 16)"),
                         cl::init(16), cl::cat(cat));
cl::opt<unsigned> seed("seed", cl::desc("Seed of the inputs and weights"),
                       cl::init(0), cl::cat(cat));
cl::opt<std::string> encoding("encoding",
                              cl::desc("binary (KServe's binary tensor "
                                       "extension, the default) or json"),
                              cl::init("binary"), cl::cat(cat));
cl::opt<unsigned> httpThreads("http-threads",
                              cl::desc("The server's HTTP workers (default: "
                                       "the largest concurrency plus one, "
                                       "for the bench's reads of /metrics)"),
                              cl::init(0), cl::cat(cat));
cl::opt<int64_t> maxQueueDelay("max-queue-delay-us",
                               cl::desc("The batched server's queue delay "
                                        "(default: loom-serve's)"),
                               cl::init(-1), cl::cat(cat));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("loom-run's timed runs (default 50)"),
                         cl::init(50), cl::cat(cat));
cl::opt<double> tolerance("tolerance",
                          cl::desc("Largest |got - want| / max(1, |want|) "
                                   "of an answer (default 1e-4)"),
                          cl::init(1e-4), cl::cat(cat));
cl::opt<unsigned> timeout("timeout-s",
                          cl::desc("Deadline of each request, server start "
                                   "and child (default 60)"),
                          cl::init(60), cl::cat(cat));
cl::opt<std::string> json("json", cl::desc("Write the rows to this file"),
                          cl::init(""), cl::cat(cat));
cl::opt<std::string> workDir("workdir",
                             cl::desc("Where the bundled model and the "
                                      "servers' logs go (default: a "
                                      "temporary directory, removed)"),
                             cl::init(""), cl::cat(cat));
cl::opt<std::string> serveBin("serve-bin",
                              cl::desc("loom-serve (default: --bin-dir's)"),
                              cl::init(""), cl::cat(cat));
cl::opt<std::string> binDir("bin-dir",
                            cl::desc("Where loom-serve, loom-run and "
                                     "loom-compile are (default: beside this "
                                     "executable)"),
                            cl::init(""), cl::cat(cat));

cl::opt<bool> failover(
    "failover",
    cl::desc("Instead of the batching table: the model (mlp or zoo:NAME) "
             "cut into --stages stages, served across ranks with "
             "--standbys standbys each; the normal case without and with "
             "standbys, then the primary of --kill-stage failing under "
             "load at the largest --concurrency"),
    cl::init(false), cl::cat(cat));
cl::opt<int64_t> stages("stages", cl::desc("--failover: stages (2)"),
                        cl::init(2), cl::cat(cat));
cl::opt<int64_t> standbys("standbys",
                          cl::desc("--failover: standbys per stage (1)"),
                          cl::init(1), cl::cat(cat));
cl::opt<int64_t> killStage("kill-stage",
                           cl::desc("--failover: the stage whose primary "
                                    "fails (0)"),
                           cl::init(0), cl::cat(cat));
cl::opt<double> killAt("kill-at-s",
                       cl::desc("--failover: when it fails, in seconds into "
                                "the measured load (default: half of "
                                "--duration-s)"),
                       cl::init(-1), cl::cat(cat));
cl::opt<std::string> killSignal("kill-signal",
                                cl::desc("--failover: KILL (the rank dies, "
                                         "default) or STOP (it hangs)"),
                                cl::init("KILL"), cl::cat(cat));
cl::opt<int64_t> stageTimeout("stage-timeout-ms",
                              cl::desc("--failover: loom-serve's "
                                       "--stage-timeout-ms (1000)"),
                              cl::init(1000), cl::cat(cat));
cl::opt<unsigned> costRounds("cost-rounds",
                             cl::desc("--failover: alternations of the "
                                      "normal case without and with "
                                      "standbys (2)"),
                             cl::init(2), cl::cat(cat));

/// "1,2,4" -> {1, 2, 4}: integers in [lo, hi], strictly ascending.
Expected<std::vector<int64_t>> parseList(StringRef text, StringRef option,
                                         int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < lo || v > hi)
      return createStringError("--" + option + ": '" + p +
                               "' is not an integer in " + Twine(lo) + ".." +
                               Twine(hi));
    if (!values.empty() && v <= values.back())
      return createStringError("--" + option + ": values must ascend, got " +
                               Twine(v) + " after " + Twine(values.back()));
    values.push_back(v);
  }
  return values;
}

Expected<std::vector<ServeMode>> parseModes(StringRef text) {
  std::vector<ServeMode> out;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef p : parts) {
    ServeMode m;
    if (p == "batched")
      m = ServeMode::Batched;
    else if (p == "unbatched")
      m = ServeMode::Unbatched;
    else
      return createStringError("--modes: unknown mode '" + p +
                               "' (batched or unbatched)");
    if (llvm::is_contained(out, m))
      return createStringError("--modes: '" + p + "' is given twice");
    out.push_back(m);
  }
  return out;
}

std::string besideExecutable(const char *argv0, StringRef dir, StringRef name) {
  static int anchor;
  SmallString<256> p(dir);
  if (p.empty())
    p = sys::path::parent_path(sys::fs::getMainExecutable(argv0, &anchor));
  sys::path::append(p, name);
  return std::string(p);
}

Error parseFailover(ServeOptions &o) {
  FailoverOptions &f = o.failover;
  f.enabled = true;
  f.stages = stages;
  f.standbys = standbys;
  f.killStage = killStage;
  f.killAtSeconds = killAt;
  f.stageTimeoutMs = stageTimeout;
  f.costRounds = costRounds;
  if (killSignal == "KILL")
    f.killSignal = SIGKILL;
  else if (killSignal == "STOP")
    f.killSignal = SIGSTOP;
  else
    return createStringError("--kill-signal: '" + killSignal +
                             "' is not KILL or STOP");
  if (f.stages < 1 || f.stages > 64 || f.standbys < 0 || f.standbys > 8)
    return createStringError("--stages must be in 1..64, --standbys in 0..8");
  if (f.killStage < 0 || f.killStage >= f.stages)
    return createStringError("--kill-stage must be a stage: 0.." +
                             Twine(f.stages - 1));
  if (f.standbys < 1)
    return createStringError("--failover kills a primary: give --standbys "
                             "1 at least");
  if (f.stageTimeoutMs < 1 || f.costRounds < 1)
    return createStringError("--stage-timeout-ms and --cost-rounds must be "
                             "at least 1");
  if (model == "mlp")
    return Error::success();
  if (!StringRef(model).starts_with("zoo:"))
    return createStringError("--failover serves a model it partitions: "
                             "--model mlp or zoo:NAME, not " +
                             model);
  f.zooModel = StringRef(model).drop_front(4).str();
  return Error::success();
}

Error parseModel(ServeOptions &o) {
  if (model.empty())
    return createStringError("--model is required (FILE.so or mlp)");
  if (failover)
    return parseFailover(o);
  if (model == "mlp")
    return Error::success();
  if (!StringRef(model).ends_with(".so"))
    return createStringError("--model " + model +
                             ": not mlp, and an artifact must end in .so");
  if (!sys::fs::exists(model))
    return createStringError("--model " + model + ": no such file");
  o.modelFile = model;
  return Error::success();
}

Error checkRanges(const ServeOptions &o) {
  if (duration.getNumOccurrences() && requests.getNumOccurrences())
    return createStringError("give --duration-s or --requests, not both");
  if (!(o.durationSeconds > 0 && o.durationSeconds <= 3600))
    return createStringError("--duration-s must be in (0, 3600]");
  if (o.requests < 0)
    return createStringError("--requests must be positive");
  if (o.inputs < 1 || o.inputs > 4096)
    return createStringError("--inputs must be in 1..4096");
  if (o.repeat < 1)
    return createStringError("--repeat must be at least 1");
  if (!(o.tolerance >= 0))
    return createStringError("--tolerance must not be negative");
  if (o.timeoutSeconds < 1)
    return createStringError("--timeout-s must be at least 1");
  if (o.mlpDims.size() < 2)
    return createStringError("--mlp-dims needs an input and an output "
                             "width at least");
  if (o.batchSizes.size() < 2 && !o.failover.enabled)
    return createStringError("--batch-sizes needs two sizes at least (one "
                             "size is no batch range)");
  // cpp-httplib serves a connection on one worker for as long as it is
  // kept alive: with no worker beyond the clients', the bench's read of
  // /metrics between the warm-up and the measurement waited for a client's
  // connection to idle out (5 s), and that client's next request raced the
  // server's close of it ("no answer: Write").
  if (o.httpThreads && int64_t(o.httpThreads) <= o.concurrency.back())
    return createStringError(
        "--http-threads " + Twine(o.httpThreads) +
        " leaves no worker beside the largest concurrency " +
        Twine(o.concurrency.back()) +
        " for the bench's reads of /metrics: give at least " +
        Twine(o.concurrency.back() + 1) +
        " (a connection past the workers waits for one, not for the model)");
  return Error::success();
}

} // namespace

Expected<ServeOptions> parseOptions(int argc, char **argv) {
  // libLLVM has a --threads of its own (Polly's): replaced by ours.
  cl::opt<unsigned> &threads = tools::registerThreadsOption(cat);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-serve: loom-serve's throughput and latency against "
      "concurrency, with and without dynamic batching, beside loom-run; "
      "with --failover, a model served across ranks with standbys, and a "
      "rank failing under load\n");
  ServeOptions o;
  if (Error e = parseModel(o))
    return std::move(e);
  // Widths need not ascend: each is checked alone.
  SmallVector<StringRef> parts;
  StringRef(mlpDims).split(parts, ',');
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 1 || v > (1 << 16))
      return createStringError("--mlp-dims: '" + p +
                               "' is not a width in 1..65536");
    o.mlpDims.push_back(v);
  }
  auto sizes = parseList(batchSizes, "batch-sizes", 1, 256);
  if (!sizes)
    return sizes.takeError();
  o.batchSizes = *sizes;
  auto levels = parseList(concurrency, "concurrency", 1, 1024);
  if (!levels)
    return levels.takeError();
  o.concurrency = *levels;
  auto m = parseModes(modes);
  if (!m)
    return m.takeError();
  o.modes = *m;
  if (encoding == "binary")
    o.encoding = Encoding::Binary;
  else if (encoding == "json")
    o.encoding = Encoding::Json;
  else
    return createStringError("--encoding: '" + encoding +
                             "' is not binary or json");
  o.durationSeconds = duration;
  o.requests = requests;
  o.warmupRequests = warmup;
  o.inputs = inputs;
  o.seed = seed;
  o.threads = threads != 0u ? unsigned(threads)
                            : std::max(1u, std::thread::hardware_concurrency());
  o.httpThreads = httpThreads;
  o.maxQueueDelayUs = maxQueueDelay;
  o.repeat = repeat;
  o.tolerance = tolerance;
  o.timeoutSeconds = timeout;
  o.json = json;
  o.workDir = workDir;
  if (Error e = checkRanges(o))
    return std::move(e);
  if (!o.httpThreads)
    o.httpThreads = unsigned(o.concurrency.back() + 1);
  o.serveBin = serveBin.empty()
                   ? besideExecutable(argv[0], binDir, "loom-serve")
                   : serveBin.getValue();
  o.runBin = besideExecutable(argv[0], binDir, "loom-run");
  o.compileBin = besideExecutable(argv[0], binDir, "loom-compile");
  o.optBin = besideExecutable(argv[0], binDir, "loom-opt");
  o.launchBin = besideExecutable(argv[0], binDir, "loom-launch");
  o.zooBin = besideExecutable(argv[0], binDir, "loom-zoo");
  if (o.failover.enabled && o.failover.killAtSeconds < 0)
    o.failover.killAtSeconds = o.durationSeconds / 2;
  if (o.failover.enabled && o.failover.killAtSeconds >= o.durationSeconds)
    return createStringError("--kill-at-s must be within --duration-s");
  if (o.failover.enabled && o.requests > 0)
    return createStringError("--failover measures for --duration-s, not "
                             "--requests");
  std::vector<const std::string *> bins = {&o.serveBin, &o.runBin,
                                           &o.compileBin};
  if (o.failover.enabled)
    bins.insert(bins.end(), {&o.optBin, &o.launchBin, &o.zooBin});
  for (const std::string *bin : bins)
    if (!sys::fs::can_execute(*bin))
      return createStringError(*bin + ": no such executable (give --bin-dir "
                                      "or --serve-bin)");
  if (o.maxQueueDelayUs < -1)
    return createStringError("--max-queue-delay-us must not be negative");
  return o;
}

} // namespace loom::bench
