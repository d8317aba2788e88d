//===- StagePipeline.h - A model served as stages on ranks ------*- C++ -*-===//
//
// Part of Loom. The front-end of a partitioned artifact served across ranks
// with HAMS-style failover (docs/tools/loom-serve.md "Serving a pipeline
// across ranks"). Ranks (StageWorker) connect and join their stage, the
// first of a stage's ranks by replica serving it and the others standing
// by. A request is a job that visits the stages in order; the front-end
// keeps its inputs and every stage's outputs until it is answered, so that
// when the rank serving a stage fails (its connection ends, or it says
// nothing, not even a heartbeat, for the stage timeout) the next live rank
// of the stage takes over and the job is re-executed there from that
// stage's inputs: stages are functions of their inputs, so the re-execution
// computes what the failed rank would have, and the request is answered
// once, by this process. A stage with no live rank fails its jobs and makes
// the model not ready until a rank joins it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_STAGEPIPELINE_H
#define LOOM_TOOLS_LOOMSERVE_STAGEPIPELINE_H

#include "Batcher.h"
#include "Metrics.h"
#include "StageDataflow.h"
#include "StageProtocol.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace loom::serve {

class StagePipeline {
public:
  /// \p model (loaded from \p path) is read for its stages and freed.
  static llvm::Expected<std::unique_ptr<StagePipeline>>
  create(const std::string &name, const std::string &path, loom_model *model,
         std::chrono::milliseconds stageTimeout, Metrics &metrics);
  /// Answers every job accepted, then ends the ranks' connections.
  ~StagePipeline();

  const ModelSignature &signature() const { return sig; }
  const std::string &name() const { return sig.name; }
  size_t numStages() const { return stages.size(); }
  uint64_t artifactHash() const { return hash; }

  /// A rank that said \p hello on \p socket joins its stage (taking the
  /// socket); an error (the rank is turned away, the socket left to the
  /// caller) when it does not belong to this pipeline.
  llvm::Error attach(rt::comm::Socket &socket, const stage::Hello &hello);
  /// Why the model is not ready (a stage without a live rank), or none.
  std::optional<std::string> notReady() const;
  /// Queues one request (the partitioned function's arguments).
  std::future<BatchResult> submit(std::vector<std::vector<uint8_t>> inputs);

private:
  struct Rank {
    stage::Hello hello;
    rt::comm::Socket socket;
    /// Held by whoever talks to the rank: a stage thread for a job, or the
    /// monitor reading heartbeats.
    std::mutex use;
    std::atomic<bool> live{true};
    rt::comm::Clock::time_point lastHeard;
    std::string describe() const;
  };
  struct Job {
    uint64_t id = 0;
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<std::vector<std::vector<uint8_t>>> stageOutputs;
    std::promise<BatchResult> promise;
    rt::comm::Clock::time_point queued, started;
  };
  struct Stage {
    std::vector<std::shared_ptr<Rank>> ranks; // by replica, then arrival
    std::deque<std::shared_ptr<Job>> queue;
    std::vector<loom_tensor_desc> inputs, outputs;
    /// The largest reply a rank may send: the outputs, or a failure.
    uint64_t maxReply = stage::kMaxMessageBytes;
    bool done = false; // its thread has ended
    std::thread thread;
  };
  StagePipeline(Metrics &metrics) : metrics(metrics) {}
  void runStageThread(size_t k);
  /// Runs \p job's stage \p k on a live rank, failing over as needed;
  /// false when the job failed (its promise is set).
  bool runStage(size_t k, Job &job);
  /// One job on one rank: its reply frame, or why the rank failed.
  rt::Error call(Rank &rank, uint64_t id,
                 const std::vector<const std::vector<uint8_t> *> &parts,
                 uint64_t maxReply, stage::Frame &reply);
  std::shared_ptr<Rank> servingRank(size_t k) const;
  /// Marks \p rank of stage \p k failed and ends its connection.
  void dismiss(size_t k, Rank &rank, const std::string &cause);
  void finish(Job &job);
  void monitor();
  void heardFrom(size_t k, Rank &rank);

  Metrics &metrics;
  ModelSignature sig;
  StageDataflow flow;
  uint64_t hash = 0;
  std::chrono::milliseconds timeout{1000};
  rt::comm::Clock::time_point started;
  std::vector<Stage> stages;
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false, monitorStopping = false;
  uint64_t nextId = 0;
  loom_model *model = nullptr;
  std::thread monitorThread;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_STAGEPIPELINE_H
