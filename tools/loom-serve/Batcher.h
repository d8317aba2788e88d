//===- Batcher.h - The dynamic batcher of one model -------------*- C++ -*-===//
//
// Part of Loom. Triton's dynamic batcher, for one ServedModel: requests
// wait in a queue; a worker thread takes the oldest and joins the requests
// behind it whose rows still fit the model's largest batch, until the batch
// is full or the oldest has waited the maximum queue delay; it runs them
// once, the rows concatenated along dimension 0, and hands each request its
// own rows of every output. A model that is not batched runs one request a
// run, in arrival order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_BATCHER_H
#define LOOM_TOOLS_LOOMSERVE_BATCHER_H

#include "Metrics.h"
#include "ServedModel.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom::serve {

/// What a run gives one request: its rows of every output, or why not.
struct BatchResult {
  std::vector<std::vector<uint8_t>> outputs;
  std::string error; // non-empty: the run failed
  /// The HTTP status of a failure: 500 (the run failed), 503 (nothing can
  /// run it now: a served pipeline's stage has no live rank).
  int status = 500;
};

class Batcher {
public:
  Batcher(ServedModel &model, Metrics &metrics,
          std::chrono::microseconds maxDelay);
  /// Stops after running every request already queued.
  ~Batcher();

  /// From now on runs what is queued without waiting for the queue delay
  /// (the server is stopping); requests may still come.
  void flush();

  /// Queues \p rows rows (inputs[i]: rows * rowBytes of input i).
  std::future<BatchResult> submit(int64_t rows,
                                  std::vector<std::vector<uint8_t>> inputs);

private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    int64_t rows;
    std::vector<std::vector<uint8_t>> inputs;
    std::promise<BatchResult> promise;
    Clock::time_point queued;
  };
  void work();
  std::vector<Pending> takeBatch(std::unique_lock<std::mutex> &lock);
  void runBatch(std::vector<Pending> &batch);

  ServedModel &model;
  Metrics &metrics;
  std::chrono::microseconds maxDelay;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Pending> queue;
  bool stopping = false, flushing = false;
  std::thread worker;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_BATCHER_H
