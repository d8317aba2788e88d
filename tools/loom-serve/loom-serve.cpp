//===- loom-serve.cpp - Compiled artifacts over the KServe v2 protocol ----===//
//
// Part of Loom. Serves artifacts written by loom-compile over HTTP with the
// KServe v2 inference protocol (JSON tensors and the binary tensor
// extension), batching concurrent requests per model, and decoder
// artifacts with OpenAI-style completions, batching their sequences
// continuously, until SIGTERM or SIGINT, on which it stops accepting,
// answers every request it accepted, and exits 0
// (docs/tools/loom-serve.md).
//
//===----------------------------------------------------------------------===//

#include "LanguageModel.h"
#include "Routes.h"
#include "ServedModel.h"
#include "StageListener.h"
#include "StageWorker.h"
#include "ThreadsOption.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <set>
#include <thread>
#include <unistd.h>

using namespace loom::serve;
namespace cl = llvm::cl;

static cl::OptionCategory serveCat("loom-serve options");
static cl::list<std::string> modelArgs(
    cl::Positional, cl::OneOrMore,
    cl::desc("<[NAME=]model.so>... (NAME: the model's name in the URLs; "
             "default: the file name without .so)"),
    cl::cat(serveCat));
static cl::opt<std::string> host("host",
                                 cl::desc("Address to listen on (default "
                                          "127.0.0.1, loopback only)"),
                                 cl::init("127.0.0.1"), cl::cat(serveCat));
static cl::opt<int> port("port",
                         cl::desc("TCP port (default 8000; 0: a free port, "
                                  "printed as 'loom-serve: listening on "
                                  "HOST:PORT')"),
                         cl::init(8000), cl::cat(serveCat));
static cl::opt<int> httpThreads("http-threads",
                                cl::desc("HTTP worker threads: connections "
                                         "served at once (default 8)"),
                                cl::init(8), cl::cat(serveCat));
static cl::opt<int64_t>
    maxBatch("max-batch",
             cl::desc("Most rows a run of a batched model takes (0, the "
                      "default: the artifact's largest batch size; a model "
                      "without a batch range runs one request a run)"),
             cl::init(0), cl::cat(serveCat));
static cl::opt<int64_t> maxQueueDelayUs(
    "max-queue-delay-us",
    cl::desc("Longest a request waits for others to join its batch, in "
             "microseconds (default 500)"),
    cl::init(500), cl::cat(serveCat));
static cl::opt<uint64_t>
    maxBodyBytes("max-body-bytes",
                 cl::desc("Largest request body; a larger one gets 413 "
                          "(default 64 MiB)"),
                 cl::init(64ull << 20), cl::cat(serveCat));

static cl::list<std::string> tokenizers(
    "tokenizer",
    cl::desc("[NAME=]tokenizer.json: the HuggingFace tokenizer of language "
             "model NAME (without NAME: of the one language model served), "
             "for text prompts, stop strings and completion text"),
    cl::value_desc("[NAME=]file"), cl::cat(serveCat));

static cl::opt<int64_t> maxWaiting(
    "max-waiting",
    cl::desc("Sequences of a language model that may wait for a free slot; "
             "a completion request past them gets 503 (default 64)"),
    cl::init(64), cl::cat(serveCat));

static cl::opt<std::string> stageWorker(
    "stage-worker",
    cl::desc("HOST:PORT: run as a rank serving one stage of MODEL.so (a "
             "partitioned artifact) for the front-end whose --stage-port "
             "that is; rank r of W serves stage r mod S, replica r / S "
             "(0: primary, else standby)"),
    cl::value_desc("HOST:PORT"), cl::cat(serveCat));
static cl::opt<int> stagePort(
    "stage-port",
    cl::desc("Port where the ranks of served pipelines connect (default 0: "
             "a free port, printed as 'loom-serve: ranks of served "
             "pipelines connect to HOST:PORT'), on --host"),
    cl::init(0), cl::cat(serveCat));
static cl::opt<int> stageTimeoutMs(
    "stage-timeout-ms",
    cl::desc("A rank that says nothing, not even a heartbeat, for this "
             "long has failed and its standby takes over (default 1000)"),
    cl::init(1000), cl::cat(serveCat));
static cl::opt<int> stageHeartbeatMs(
    "stage-heartbeat-ms",
    cl::desc("With --stage-worker: how often the rank says it is alive "
             "(default 100; keep it well under the front-end's "
             "--stage-timeout-ms)"),
    cl::init(100), cl::cat(serveCat));

namespace {

/// The pipe the stop signals' handler writes to.
int stopPipe[2] = {-1, -1};

extern "C" void onStopSignal(int) {
  char byte = 1;
  ssize_t written = write(stopPipe[1], &byte, 1);
  (void)written;
}

/// Whether \p name may name a model: letters, digits, '_', '.', '-' (it
/// stands in URLs and in the metrics' labels).
bool validName(llvm::StringRef name) {
  return !name.empty() &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                                "RSTUVWXYZ0123456789_.-") ==
             llvm::StringRef::npos;
}

/// NAME and path of a model argument: NAME=PATH when the text before the
/// first '=' is a valid name, else the path and its stem.
std::pair<std::string, std::string> nameAndPath(llvm::StringRef arg) {
  auto [before, after] = arg.split('=');
  if (!after.empty() && validName(before))
    return {before.str(), after.str()};
  return {llvm::sys::path::stem(arg).str(), arg.str()};
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-serve: error: " << message << "\n";
  return 1;
}

/// What the server serves.
struct Models {
  std::vector<std::unique_ptr<ServedModel>> served;
  std::vector<std::unique_ptr<StagePipeline>> pipelines;
  std::vector<std::unique_ptr<LanguageModel>> languages;
};

/// Loads \p path as model \p name: a language model when it is a decoder
/// (entries 'prefill' and 'decode'), a pipeline served across ranks when
/// it is partitioned (stage entries), else a KServe model; prints its line.
llvm::Error loadModel(const std::string &name, const std::string &path,
                      unsigned threads, Metrics &metrics, Models &all) {
  loom_model_options options = {};
  options.num_threads = int(threads);
  loom_model *loaded = nullptr;
  if (loom_model_load(path.c_str(), &options, &loaded) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  if (int64_t ranks = loom_model_world_ranks(loaded); ranks > 1) {
    loom_model_free(loaded);
    return llvm::createStringError(
        path + " runs on a world of " + std::to_string(ranks) +
        " ranks (a cache-parallel, tensor-parallel or pipeline-stage "
        "decoder, docs/CacheParallel.md): serving "
        "one is not built yet; serve the one-process artifact");
  }
  std::string line;
  llvm::raw_string_ostream os(line);
  os << "loom-serve: model '" << name << "' from " << path;
  if (LanguageModel::isDecoder(loaded)) {
    auto language = LanguageModel::create(name, path, loaded);
    if (!language)
      return language.takeError();
    const loom::generate::DecoderContract &c = (*language)->contract();
    os << ": a language model (POST /v1/completions), " << c.batch
       << " slots, prompt bound " << c.promptBound << ", vocabulary " << c.vocab
       << ", cache of " << c.capacity << " positions\n";
    llvm::outs() << line;
    all.languages.push_back(std::move(*language));
    return llvm::Error::success();
  }
  auto stages = loom::serve::stage::findStageEntries(loaded);
  if (!stages) {
    loom_model_free(loaded);
    return stages.takeError();
  }
  if (!stages->forward.empty()) {
    auto pipeline = StagePipeline::create(
        name, path, loaded, std::chrono::milliseconds(stageTimeoutMs), metrics);
    if (!pipeline)
      return pipeline.takeError();
    os << ": a pipeline of " << stages->forward.size()
       << " stages served across ranks (loom-serve --stage-worker), one "
          "request a run\n";
    llvm::outs() << line;
    all.pipelines.push_back(std::move(*pipeline));
    return llvm::Error::success();
  }
  auto model = ServedModel::create(name, path, loaded, maxBatch);
  if (!model)
    return model.takeError();
  if ((*model)->batched()) {
    os << ": batch sizes";
    for (int64_t b : (*model)->signature().batchSizes)
      os << " " << b;
    os << ", at most " << (*model)->maxBatch() << " rows a run\n";
  } else {
    os << ": no batch range, one request a run\n";
  }
  llvm::outs() << line;
  all.served.push_back(std::move(*model));
  return llvm::Error::success();
}

/// Gives each --tokenizer to its language model; prints a line each.
llvm::Error attachTokenizers(Models &all) {
  for (const std::string &arg : tokenizers) {
    auto [before, after] = llvm::StringRef(arg).split('=');
    std::string name = after.empty() ? "" : before.str();
    std::string path = after.empty() ? arg : after.str();
    LanguageModel *target = nullptr;
    for (const std::unique_ptr<LanguageModel> &m : all.languages)
      if (name.empty() ? all.languages.size() == 1 : m->name() == name)
        target = m.get();
    if (!target && name.empty())
      return llvm::createStringError(
          "--tokenizer " + arg + ": the server has " +
          std::to_string(all.languages.size()) +
          " language models; say whose it is with NAME=" + arg);
    if (!target)
      return llvm::createStringError("--tokenizer " + arg + ": no language "
                                     "model is named '" + name + "'");
    if (target->tokenizer())
      return llvm::createStringError("--tokenizer " + arg + ": model '" +
                                     target->name() +
                                     "' has a tokenizer already");
    auto tokenizer = loom::tokenizer::Tokenizer::load(path);
    if (!tokenizer)
      return tokenizer.takeError();
    int64_t size = tokenizer->vocabSize();
    if (llvm::Error e = target->setTokenizer(std::move(*tokenizer)))
      return llvm::createStringError("--tokenizer " + arg + ": " +
                                     llvm::toString(std::move(e)));
    llvm::outs() << "loom-serve: model '" << target->name()
                 << "' tokenizer from " << path << ": " << size
                 << " tokens (text prompts, stop strings)\n";
  }
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  cl::opt<unsigned> &threads = loom::tools::registerThreadsOption(serveCat);
  cl::HideUnrelatedOptions(serveCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-serve: serve Loom artifacts over the KServe v2 inference "
      "protocol, and decoder artifacts over OpenAI-style completions\n\n"
      "Endpoints: GET /v2/health/live, /v2/health/ready, /v2, "
      "/v2/models/NAME, /v2/models/NAME/ready, /v1/models, /metrics; POST "
      "/v2/models/NAME/infer (JSON tensors or the binary tensor extension), "
      "POST /v1/completions (decoder artifacts: prompts of token ids, or "
      "text with --tokenizer; continuous batching). A partitioned artifact (--pipe-partition) is "
      "served across ranks that run 'loom-serve --stage-worker HOST:PORT "
      "MODEL.so' under a launcher, with standbys that take over a failed "
      "rank's stage. SIGTERM or SIGINT stops the server after it answers "
      "what it accepted.\n");
  if (httpThreads < 1 || maxBatch < 0 || maxQueueDelayUs < 0 || port < 0 ||
      port > 65535 || maxWaiting < 0)
    return fail("--http-threads must be at least 1; --max-batch, "
                "--max-queue-delay-us, --max-waiting and --port must not be "
                "negative (--port at most 65535)");
  if (stagePort < 0 || stagePort > 65535)
    return fail("--stage-port must be 0 (a free port) to 65535");
  if (stageTimeoutMs < 1 || stageHeartbeatMs < 1)
    return fail("--stage-timeout-ms and --stage-heartbeat-ms must be at "
                "least 1");
  if (!stageWorker.empty()) {
    if (modelArgs.size() != 1)
      return fail("--stage-worker serves one stage of one artifact; give "
                  "exactly one MODEL.so");
    StageWorkerOptions options;
    options.frontEnd = stageWorker;
    options.artifact = nameAndPath(modelArgs[0]).second;
    options.threads = threads;
    options.heartbeatMs = stageHeartbeatMs;
    return runStageWorker(options);
  }
  // SIGTERM and SIGINT may reach any thread (the libraries start their own
  // before main): the handler only writes to a pipe, which a thread of
  // ours reads to stop the server (the self-pipe idiom).
  if (pipe(stopPipe) != 0)
    return fail("cannot make a pipe for the stop signals");
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  // A client that goes away before its answer is written is the write's
  // error (EPIPE), not a signal that ends the server.
  signal(SIGPIPE, SIG_IGN);

  Metrics metrics;
  Models all;
  std::set<std::string> names;
  for (const std::string &arg : modelArgs) {
    auto [name, path] = nameAndPath(arg);
    if (!validName(name))
      return fail("model name '" + name + "' (of " + path +
                  ") has characters other than letters, digits, '_', '.' "
                  "and '-'; give one with NAME=" +
                  path);
    if (!names.insert(name).second)
      return fail("two models named '" + name + "'; name them with NAME=PATH");
    if (llvm::Error e = loadModel(name, path, threads, metrics, all))
      return fail(llvm::toString(std::move(e)));
  }
  if (llvm::Error e = attachTokenizers(all))
    return fail(llvm::toString(std::move(e)));

  std::vector<StagePipeline *> pipelines;
  for (const std::unique_ptr<StagePipeline> &p : all.pipelines)
    pipelines.push_back(p.get());
  Service service(metrics, std::move(all.served), std::move(all.pipelines),
                  std::move(all.languages),
                  std::chrono::microseconds(maxQueueDelayUs), maxBodyBytes,
                  size_t(maxWaiting));
  // Declared after the service: it stops accepting ranks before the
  // pipelines it hands them to end.
  std::unique_ptr<StageListener> stageListener;
  if (!pipelines.empty()) {
    auto listener = StageListener::start(host, stagePort, pipelines);
    if (!listener)
      return fail(llvm::toString(listener.takeError()));
    stageListener = std::move(*listener);
    llvm::outs() << "loom-serve: ranks of served pipelines connect to "
                 << host << ":" << stageListener->port() << "\n";
  }
  httplib::Server server;
  // cpp-httplib writes a response's headers and body in two writes: with
  // Nagle's algorithm the body waits for the client's delayed ACK, about
  // 40 ms a request on a kept-alive connection (loom-bench-serve measured
  // 42-44 ms at every concurrency before, 1.1 ms after, for a 0.08 ms model).
  server.set_tcp_nodelay(true);
  int workers = httpThreads;
  server.new_task_queue = [workers] {
    return new httplib::ThreadPool(workers);
  };
  service.install(server);
  int bound = port;
  if (port == 0)
    bound = server.bind_to_any_port(host);
  else if (!server.bind_to_port(host, port))
    bound = -1;
  if (bound < 0)
    return fail("cannot listen on " + host + ":" + std::to_string(port));
  llvm::outs() << "loom-serve: listening on " << host << ":" << bound << "\n";
  llvm::outs().flush();

  std::atomic<bool> done{false};
  std::thread signals([&] {
    char byte;
    while (read(stopPipe[0], &byte, 1) < 0 && errno == EINTR)
      ;
    if (done)
      return;
    // What waits in a queue runs now; the HTTP workers answer it before
    // listen_after_bind returns. stop() does nothing before the server
    // runs: a signal that comes between the bind and the listen loop is
    // repeated until the loop has ended.
    service.flush();
    while (!done) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  bool listened = server.listen_after_bind();
  done = true;
  onStopSignal(0); // wakes the thread when the server stopped on its own
  signals.join();
  uint64_t answered = service.answered();
  llvm::outs() << "loom-serve: stopped after " << answered
               << " inference requests\n";
  return listened ? 0 : fail("the server stopped on an error");
}
