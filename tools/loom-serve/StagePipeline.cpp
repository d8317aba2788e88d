//===- StagePipeline.cpp - A model served as stages on ranks --------------===//
//
// Part of Loom. See StagePipeline.h. One thread per stage takes the stage's
// jobs in order, one at a time, and hands each to the next stage's queue,
// so that the stages work on consecutive requests at once; a monitor
// thread reads the heartbeats of the ranks no job occupies (the standbys
// among them), so that a rank that dies or hangs while idle is noticed too
// and readiness stays true to the ranks' state.
//
//===----------------------------------------------------------------------===//

#include "StagePipeline.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <poll.h>

using namespace loom;
using namespace loom::serve;
using namespace loom::serve::stage;
namespace comm = loom::rt::comm;

namespace {

/// One line on standard output, whole, from any thread.
void logLine(const std::string &line) {
  static std::mutex logging;
  std::lock_guard<std::mutex> lock(logging);
  llvm::outs() << line << "\n";
  llvm::outs().flush();
}

bool readable(const comm::Socket &s) {
  pollfd p{s.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

double secondsSince(comm::Clock::time_point t) {
  return std::chrono::duration<double>(comm::Clock::now() - t).count();
}

} // namespace

std::string StagePipeline::Rank::describe() const {
  return "rank " + std::to_string(hello.rank) + " (" +
         (hello.replica == 0 ? std::string("primary")
                             : "standby " + std::to_string(hello.replica)) +
         ")";
}

llvm::Expected<std::unique_ptr<StagePipeline>>
StagePipeline::create(const std::string &name, const std::string &path,
                      loom_model *model, std::chrono::milliseconds stageTimeout,
                      Metrics &metrics) {
  std::unique_ptr<StagePipeline> p(new StagePipeline(metrics));
  p->model = model;
  p->timeout = stageTimeout;
  p->started = comm::Clock::now();
  auto entries = findStageEntries(model);
  if (!entries)
    return entries.takeError();
  int64_t numStages = int64_t(entries->forward.size());
  auto flow = readStageDataflow(model, entries->function, numStages);
  if (!flow)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(flow.takeError()));
  p->flow = std::move(*flow);
  p->sig.name = name;
  p->sig.inputs = p->flow.requestInputs;
  p->sig.outputs = p->flow.requestOutputs;
  auto hash = hashArtifact(path);
  if (!hash)
    return hash.takeError();
  p->hash = *hash;
  p->stages = std::vector<Stage>(numStages);
  for (int64_t k = 0; k < numStages; ++k) {
    Stage &st = p->stages[k];
    st.inputs = entryInputs(model, entries->forward[k]);
    st.outputs = entryOutputs(model, entries->forward[k]);
    uint64_t outputBytes = 0;
    for (const loom_tensor_desc &d : st.outputs)
      outputBytes += uint64_t(d.bytes);
    st.maxReply = std::max(outputBytes, kMaxMessageBytes);
    if (st.inputs.size() != p->flow.inputs[k].size())
      return llvm::createStringError(
          "%s: stage %lld's entry takes %zu inputs, its function %zu",
          path.c_str(), (long long)k, st.inputs.size(),
          p->flow.inputs[k].size());
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      StageSource s = p->flow.inputs[k][i];
      int64_t bytes = s.stage < 0 ? p->sig.inputs[s.index].rowBytes
                                  : p->stages[s.stage].outputs[s.index].bytes;
      if (bytes != st.inputs[i].bytes)
        return llvm::createStringError(
            "%s: stage %lld input %zu holds %lld bytes, its source %lld",
            path.c_str(), (long long)k, i, (long long)st.inputs[i].bytes,
            (long long)bytes);
    }
  }
  for (size_t o = 0; o < p->sig.outputs.size(); ++o) {
    StageSource s = p->flow.outputs[o];
    if (p->stages[s.stage].outputs[s.index].bytes != p->sig.outputs[o].rowBytes)
      return llvm::createStringError("%s: output %zu is not the size of the "
                                     "stage output that is it",
                                     path.c_str(), o);
  }
  for (int64_t k = 0; k < numStages; ++k) {
    metrics.setStageRanks(name, k, 0);
    p->stages[k].thread = std::thread([raw = p.get(), k] {
      raw->runStageThread(size_t(k));
    });
  }
  p->monitorThread = std::thread([raw = p.get()] { raw->monitor(); });
  return std::move(p);
}

StagePipeline::~StagePipeline() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (Stage &st : stages)
    if (st.thread.joinable())
      st.thread.join();
  {
    std::lock_guard<std::mutex> lock(mutex);
    monitorStopping = true;
  }
  wake.notify_all();
  if (monitorThread.joinable())
    monitorThread.join();
  // The ranks see their connection end, and exit.
  for (Stage &st : stages)
    for (std::shared_ptr<Rank> &r : st.ranks)
      r->socket.shutdownBoth();
  if (model)
    loom_model_free(model);
}

llvm::Error StagePipeline::attach(comm::Socket &socket, const Hello &hello) {
  if (hello.artifactHash != hash)
    return llvm::createStringError(
        "rank %lld loaded another artifact than model '%s'",
        (long long)hello.rank, sig.name.c_str());
  if (hello.numStages != int64_t(stages.size()) || hello.stage < 0 ||
      hello.stage >= hello.numStages || hello.replica < 0)
    return llvm::createStringError(
        "rank %lld says stage %lld of %lld, replica %lld: model '%s' has %zu "
        "stages",
        (long long)hello.rank, (long long)hello.stage,
        (long long)hello.numStages, (long long)hello.replica, sig.name.c_str(),
        stages.size());
  auto rank = std::make_shared<Rank>();
  rank->hello = hello;
  rank->lastHeard = comm::Clock::now();
  size_t live = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping)
      return llvm::createStringError("the server is stopping");
    rank->socket = std::move(socket);
    std::vector<std::shared_ptr<Rank>> &ranks = stages[hello.stage].ranks;
    auto at = std::find_if(ranks.begin(), ranks.end(), [&](const auto &r) {
      return r->hello.replica > hello.replica;
    });
    ranks.insert(at, rank);
    for (const std::shared_ptr<Rank> &r : ranks)
      live += r->live;
  }
  metrics.setStageRanks(sig.name, hello.stage, live);
  logLine(llvm::formatv("loom-serve: model '{0}' stage {1}: {2} joined at "
                        "{3:f3} s; {4} live rank(s)",
                        sig.name, hello.stage, rank->describe(),
                        secondsSince(started), live));
  wake.notify_all();
  return llvm::Error::success();
}

std::optional<std::string> StagePipeline::notReady() const {
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t k = 0; k < stages.size(); ++k)
    if (std::none_of(stages[k].ranks.begin(), stages[k].ranks.end(),
                     [](const auto &r) { return bool(r->live); }))
      return "stage " + std::to_string(k) + " of model '" + sig.name +
             "' has no live rank";
  return std::nullopt;
}

std::future<BatchResult>
StagePipeline::submit(std::vector<std::vector<uint8_t>> inputs) {
  auto job = std::make_shared<Job>();
  job->inputs = std::move(inputs);
  job->stageOutputs.resize(stages.size());
  job->queued = comm::Clock::now();
  std::future<BatchResult> answer = job->promise.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping) {
      job->promise.set_value({{}, "the server is stopping", 503});
      return answer;
    }
    job->id = nextId++;
    stages[0].queue.push_back(std::move(job));
    metrics.setQueued(sig.name, stages[0].queue.size());
  }
  wake.notify_all();
  return answer;
}

void StagePipeline::runStageThread(size_t k) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] {
        return !stages[k].queue.empty() ||
               (stopping && (k == 0 || stages[k - 1].done));
      });
      if (stages[k].queue.empty()) {
        stages[k].done = true;
        wake.notify_all();
        return;
      }
      job = std::move(stages[k].queue.front());
      stages[k].queue.pop_front();
      if (k == 0)
        metrics.setQueued(sig.name, stages[0].queue.size());
    }
    if (k == 0)
      job->started = comm::Clock::now();
    if (!runStage(k, *job))
      continue;
    if (k + 1 == stages.size()) {
      finish(*job);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      stages[k + 1].queue.push_back(std::move(job));
    }
    wake.notify_all();
  }
}

std::shared_ptr<StagePipeline::Rank>
StagePipeline::servingRank(size_t k) const {
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::shared_ptr<Rank> &r : stages[k].ranks)
    if (r->live)
      return r;
  return nullptr;
}

bool StagePipeline::runStage(size_t k, Job &job) {
  std::vector<const std::vector<uint8_t> *> parts;
  for (StageSource s : flow.inputs[k])
    parts.push_back(s.stage < 0 ? &job.inputs[s.index]
                                : &job.stageOutputs[s.stage][s.index]);
  for (;;) {
    std::shared_ptr<Rank> rank = servingRank(k);
    if (!rank) {
      job.promise.set_value(
          {{}, "stage " + std::to_string(k) + " has no live rank", 503});
      return false;
    }
    std::lock_guard<std::mutex> use(rank->use);
    if (!rank->live)
      continue;
    Frame reply;
    if (rt::Error e = call(*rank, job.id, parts, stages[k].maxReply, reply)) {
      dismiss(k, *rank, e.message + "; request " + std::to_string(job.id) +
                            " re-executed from stage " + std::to_string(k));
      continue;
    }
    if (reply.kind == FrameKind::Failure) {
      job.promise.set_value(
          {{},
           "stage " + std::to_string(k) + " (" + rank->describe() + "): " +
               std::string(reply.payload.begin(), reply.payload.end()),
           500});
      return false;
    }
    auto outputs = splitTensors(reply.payload, stages[k].outputs,
                                rank->describe() + "'s result");
    if (!outputs) {
      dismiss(k, *rank, llvm::toString(outputs.takeError()));
      continue;
    }
    job.stageOutputs[k] = std::move(*outputs);
    return true;
  }
}

rt::Error StagePipeline::call(Rank &rank, uint64_t id,
                              const std::vector<const std::vector<uint8_t> *> &parts,
                              uint64_t maxReply, Frame &reply) {
  std::string who = rank.describe();
  if (rt::Error e = writeFrame(rank.socket, FrameKind::Job, id, parts,
                               comm::Clock::now() + timeout, who))
    return e;
  for (;;) {
    auto deadline = comm::Clock::now() + timeout;
    if (rt::Error e = readFrame(rank.socket, reply, deadline, who, maxReply)) {
      if (comm::Clock::now() < deadline)
        return e;
      return rt::makeError(LOOM_ERROR_COMMUNICATION,
                           "it said nothing for " +
                               std::to_string(timeout.count()) +
                               " ms, not even a heartbeat (hung or cut off)");
    }
    rank.lastHeard = comm::Clock::now();
    if (reply.kind == FrameKind::Heartbeat)
      continue;
    if ((reply.kind == FrameKind::Result ||
         reply.kind == FrameKind::Failure) &&
        reply.id == id)
      return rt::Error::ok();
    return rt::makeError(LOOM_ERROR_COMMUNICATION,
                         who + " answered another request than " +
                             std::to_string(id));
  }
}

void StagePipeline::dismiss(size_t k, Rank &rank, const std::string &cause) {
  if (!rank.live.exchange(false))
    return;
  rank.socket.shutdownBoth();
  size_t live = 0;
  std::string next = "no rank left: the model is not ready";
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::shared_ptr<Rank> &r : stages[k].ranks)
      if (r->live && live++ == 0)
        next = r->describe() + " serves the stage";
  }
  metrics.countStageFailure(sig.name, k);
  metrics.setStageRanks(sig.name, k, live);
  logLine(llvm::formatv("loom-serve: model '{0}' stage {1}: {2} failed at "
                        "{3:f3} s: {4}; {5}",
                        sig.name, k, rank.describe(), secondsSince(started),
                        cause, next));
}

void StagePipeline::finish(Job &job) {
  BatchResult result;
  for (StageSource s : flow.outputs)
    result.outputs.push_back(std::move(job.stageOutputs[s.stage][s.index]));
  auto now = comm::Clock::now();
  metrics.countRun(sig.name, 1,
                   {std::chrono::duration<double>(job.started - job.queued)
                        .count()},
                   std::chrono::duration<double>(now - job.started).count());
  job.promise.set_value(std::move(result));
}

void StagePipeline::monitor() {
  for (;;) {
    std::vector<std::pair<size_t, std::shared_ptr<Rank>>> ranks;
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (wake.wait_for(lock, std::chrono::milliseconds(50),
                        [&] { return monitorStopping; }))
        return;
      for (size_t k = 0; k < stages.size(); ++k)
        for (const std::shared_ptr<Rank> &r : stages[k].ranks)
          if (r->live)
            ranks.emplace_back(k, r);
    }
    for (auto &[k, rank] : ranks)
      heardFrom(k, *rank);
  }
}

void StagePipeline::heardFrom(size_t k, Rank &rank) {
  std::unique_lock<std::mutex> use(rank.use, std::try_to_lock);
  if (!use.owns_lock() || !rank.live)
    return; // a job occupies it: its stage thread reads it
  while (readable(rank.socket)) {
    Frame frame;
    if (rt::Error e = readFrame(rank.socket, frame,
                                comm::Clock::now() + timeout,
                                rank.describe(), /*maxPayload=*/0))
      return dismiss(k, rank, e.message);
    rank.lastHeard = comm::Clock::now();
    if (frame.kind != FrameKind::Heartbeat)
      return dismiss(k, rank, "it sent a frame outside a job");
  }
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(
      comm::Clock::now() - rank.lastHeard);
  if (silent > timeout)
    dismiss(k, rank,
            "it said nothing for " + std::to_string(silent.count()) +
                " ms (no heartbeat)");
}
