//===- StageWorker.cpp - A rank serving one stage of a pipeline -----------===//
//
// Part of Loom. See StageWorker.h. Two threads: the main one reads jobs and
// runs them one at a time; the other sends a heartbeat every heartbeatMs,
// also while a job runs, so that the front-end tells a long run from a
// rank that hangs. Writes to the connection take a mutex.
//
//===----------------------------------------------------------------------===//

#include "StageWorker.h"
#include "StageProtocol.h"

#include "../../lib/Runtime/Comm/Launch.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace loom;
using namespace loom::serve;
using namespace loom::serve::stage;
namespace comm = loom::rt::comm;

namespace {

/// A rank's connection to the front-end and what it serves.
class Worker {
public:
  Worker(const StageWorkerOptions &o) : options(o) {}
  ~Worker();
  int run();

private:
  int fail(const llvm::Twine &message);
  bool parseAddress();
  bool setUp();
  bool connect();
  void beat();
  /// Runs one job; false when the connection failed.
  bool serve(const Frame &job);
  bool send(FrameKind kind, uint64_t id,
            const std::vector<const std::vector<uint8_t> *> &parts);

  const StageWorkerOptions &options;
  comm::LaunchInfo launch;
  std::string host;
  int port = 0;
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  StageEntries stages;
  int64_t stageIndex = 0, replica = 0, entry = 0;
  std::vector<loom_tensor_desc> inputs, outputs;
  uint64_t jobBytes = 0;
  comm::Socket socket;
  std::mutex writing;
  std::mutex stopMutex;
  std::condition_variable stopped;
  bool stopping = false;
  std::atomic<bool> launcherGone{false};
};

Worker::~Worker() {
  if (context)
    loom_context_free(context);
  if (model)
    loom_model_free(model);
}

int Worker::fail(const llvm::Twine &message) {
  llvm::errs() << "loom-serve: rank " << launch.rank << ": " << message
               << "\n";
  return 1;
}

bool Worker::setUp() {
  loom_model_options mo = {};
  mo.num_threads = int(options.threads);
  if (loom_model_load(options.artifact.c_str(), &mo, &model) != LOOM_OK)
    return fail(loom_last_error()), false;
  auto found = findStageEntries(model);
  if (!found)
    return fail(llvm::toString(found.takeError())), false;
  stages = std::move(*found);
  int64_t s = int64_t(stages.forward.size());
  if (s == 0)
    return fail(options.artifact +
                " has no stage entries (<function>_s<k>_forward): compile "
                "a module --pipe-partition wrote"),
           false;
  if (launch.size % s != 0)
    return fail("a world of " + llvm::Twine(launch.size) +
                " rank(s) (launcher: " + launch.source + ") cannot serve " +
                llvm::Twine(s) + " stages evenly: run " + llvm::Twine(s) +
                " x (1 + standbys) ranks under a launcher"),
           false;
  stageIndex = launch.rank % s;
  replica = launch.rank / s;
  entry = stages.forward[stageIndex];
  inputs = entryInputs(model, entry);
  outputs = entryOutputs(model, entry);
  for (const loom_tensor_desc &d : inputs)
    jobBytes += uint64_t(d.bytes);
  if (loom_context_create(model, &context) != LOOM_OK)
    return fail(loom_last_error()), false;
  return true;
}

bool Worker::parseAddress() {
  llvm::StringRef address(options.frontEnd);
  auto [h, portText] = address.rsplit(':');
  if (h.empty() || portText.getAsInteger(10, port) || port <= 0 ||
      port > 65535)
    return fail("--stage-worker needs HOST:PORT, got '" + options.frontEnd +
                "'"),
           false;
  host = h.str();
  return true;
}

bool Worker::connect() {
  auto deadline = comm::Clock::now() +
                  std::chrono::duration_cast<comm::Clock::duration>(
                      std::chrono::duration<double>(options.connectSeconds));
  if (rt::Error e = comm::connectBefore(host, port, deadline, socket))
    return fail(e.message), false;
  auto hash = hashArtifact(options.artifact);
  if (!hash)
    return fail(llvm::toString(hash.takeError())), false;
  Hello h{launch.rank, launch.size, stageIndex, replica,
          int64_t(stages.forward.size()), *hash};
  std::vector<uint8_t> payload = encodeHello(h);
  return send(FrameKind::Hello, uint64_t(launch.rank), {&payload});
}

bool Worker::send(FrameKind kind, uint64_t id,
                  const std::vector<const std::vector<uint8_t> *> &parts) {
  std::lock_guard<std::mutex> lock(writing);
  auto deadline = comm::Clock::now() + std::chrono::seconds(60);
  return !writeFrame(socket, kind, id, parts, deadline, "the front-end");
}

void Worker::beat() {
  // Under a launcher, a new parent means the launcher is gone (killed):
  // the rank ends too, as the runtime's ranks do.
  pid_t launcher = launch.source == "none" ? 0 : ::getppid();
  std::unique_lock<std::mutex> lock(stopMutex);
  while (!stopping) {
    stopped.wait_for(lock, std::chrono::milliseconds(options.heartbeatMs));
    if (stopping)
      break;
    if (launcher && ::getppid() != launcher) {
      fail("the launcher (process " + llvm::Twine(launcher) + ") is gone");
      launcherGone = true;
      socket.shutdownBoth();
      break;
    }
    lock.unlock();
    bool sent = send(FrameKind::Heartbeat, 0, {});
    lock.lock();
    if (!sent)
      break;
  }
}

bool Worker::serve(const Frame &job) {
  auto tensors = splitTensors(job.payload, inputs,
                              "job " + std::to_string(job.id));
  std::string error;
  std::vector<std::vector<uint8_t>> results(outputs.size());
  if (!tensors) {
    error = llvm::toString(tensors.takeError());
  } else {
    std::vector<const void *> in;
    for (const std::vector<uint8_t> &t : *tensors)
      in.push_back(t.data());
    std::vector<void *> out;
    for (size_t i = 0; i < outputs.size(); ++i) {
      results[i].resize(outputs[i].bytes);
      out.push_back(results[i].data());
    }
    if (loom_run(context, entry, in.data(), out.data()) != LOOM_OK)
      error = loom_last_error();
  }
  if (!error.empty()) {
    std::vector<uint8_t> text(error.begin(), error.end());
    return send(FrameKind::Failure, job.id, {&text});
  }
  std::vector<const std::vector<uint8_t> *> parts;
  for (const std::vector<uint8_t> &r : results)
    parts.push_back(&r);
  return send(FrameKind::Result, job.id, parts);
}

int Worker::run() {
  if (rt::Error e = comm::readLaunchInfo(comm::processEnvironment(), launch))
    return fail(e.message);
  if (!parseAddress() || !setUp() || !connect())
    return 1;
  // One write of the whole line: a launcher that forwards the ranks'
  // output (mpirun) interleaves what it reads from each, and a line written
  // in pieces came out cut by another rank's.
  std::string line;
  llvm::raw_string_ostream os(line);
  os << "loom-serve: rank " << launch.rank << " of " << launch.size << " ("
     << launch.source << ", pid " << ::getpid() << "): stage " << stageIndex
     << " of " << stages.forward.size() << " ("
     << loom_model_entry_name(model, entry) << "), "
     << (replica == 0 ? std::string("primary")
                      : "standby " + std::to_string(replica))
     << ", for the front-end at " << options.frontEnd << "\n";
  os.flush();
  llvm::outs() << line;
  llvm::outs().flush();
  std::thread heartbeats([this] { beat(); });
  int status = 0;
  for (;;) {
    Frame frame;
    auto forever = comm::Clock::now() + std::chrono::hours(24 * 365);
    if (rt::Error e = readFrame(socket, frame, forever, "the front-end",
                                std::max(jobBytes, kMaxMessageBytes))) {
      if (launcherGone) {
        status = 1;
        break;
      }
      // The front-end ends the connection when it stops, or when it
      // dismissed this rank (too slow to answer): either way, done.
      llvm::outs() << "loom-serve: rank " << launch.rank
                   << ": the front-end closed the connection\n";
      break;
    }
    if (frame.kind == FrameKind::Refusal) {
      status = fail("the front-end turned this rank away: " +
                    std::string(frame.payload.begin(), frame.payload.end()));
      break;
    }
    if (frame.kind != FrameKind::Job) {
      status = fail("the front-end sent a frame that is not a job");
      break;
    }
    if (!serve(frame))
      break;
  }
  {
    std::lock_guard<std::mutex> lock(stopMutex);
    stopping = true;
  }
  stopped.notify_all();
  heartbeats.join();
  return status;
}

} // namespace

int serve::runStageWorker(const StageWorkerOptions &options) {
  Worker w(options);
  return w.run();
}
