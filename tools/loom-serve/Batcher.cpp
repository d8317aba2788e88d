//===- Batcher.cpp - The dynamic batcher of one model ---------------------===//
//
// Part of Loom. See Batcher.h.
//
//===----------------------------------------------------------------------===//

#include "Batcher.h"

#include "llvm/Support/Error.h"

#include <cstring>

using namespace loom::serve;

Batcher::Batcher(ServedModel &model, Metrics &metrics,
                 std::chrono::microseconds maxDelay)
    : model(model), metrics(metrics), maxDelay(maxDelay) {
  worker = std::thread([this] { work(); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  worker.join();
}

void Batcher::flush() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    flushing = true;
  }
  wake.notify_all();
}

std::future<BatchResult>
Batcher::submit(int64_t rows, std::vector<std::vector<uint8_t>> inputs) {
  Pending p{rows, std::move(inputs), {}, Clock::now()};
  std::future<BatchResult> future = p.promise.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(p));
    metrics.setQueued(model.name(), queue.size());
  }
  wake.notify_all();
  return future;
}

void Batcher::work() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    wake.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, and nothing left to run
    std::vector<Pending> batch = takeBatch(lock);
    lock.unlock();
    runBatch(batch);
    lock.lock();
  }
}

/// The oldest request and those behind it whose rows fit, once the batch
/// is full (no row left, or the next request does not fit: requests run in
/// arrival order), the oldest has waited maxDelay, or the server stops.
std::vector<Batcher::Pending>
Batcher::takeBatch(std::unique_lock<std::mutex> &lock) {
  int64_t limit = model.maxBatch();
  auto full = [&] {
    int64_t rows = 0;
    for (const Pending &p : queue) {
      if (rows + p.rows > limit)
        return true;
      rows += p.rows;
    }
    return rows >= limit;
  };
  if (model.batched()) {
    Clock::time_point deadline = queue.front().queued + maxDelay;
    wake.wait_until(lock, deadline,
                    [&] { return stopping || flushing || full(); });
  }
  std::vector<Pending> batch;
  int64_t rows = 0;
  while (!queue.empty() && rows + queue.front().rows <= limit &&
         (model.batched() || batch.empty())) {
    rows += queue.front().rows;
    batch.push_back(std::move(queue.front()));
    queue.pop_front();
  }
  if (batch.empty()) { // a request larger than the batch (checked before)
    batch.push_back(std::move(queue.front()));
    queue.pop_front();
  }
  metrics.setQueued(model.name(), queue.size());
  return batch;
}

void Batcher::runBatch(std::vector<Pending> &batch) {
  Clock::time_point start = Clock::now();
  std::vector<double> queueSeconds;
  int64_t rows = 0;
  for (const Pending &p : batch) {
    queueSeconds.push_back(
        std::chrono::duration<double>(start - p.queued).count());
    rows += p.rows;
  }
  size_t numInputs = model.inputs().size();
  std::vector<std::vector<uint8_t>> inputs(numInputs), outputs;
  if (batch.size() == 1) {
    inputs = std::move(batch.front().inputs);
  } else {
    for (size_t i = 0; i < numInputs; ++i) {
      inputs[i].reserve(rows * model.inputs()[i].rowBytes);
      for (const Pending &p : batch)
        inputs[i].insert(inputs[i].end(), p.inputs[i].begin(),
                         p.inputs[i].end());
    }
  }
  llvm::Expected<int64_t> ran = model.run(rows, inputs, outputs);
  double compute = std::chrono::duration<double>(Clock::now() - start).count();
  if (!ran) {
    std::string message = llvm::toString(ran.takeError());
    for (Pending &p : batch)
      p.promise.set_value({{}, message});
    return;
  }
  metrics.countRun(model.name(), rows, queueSeconds, compute);
  int64_t offset = 0;
  for (Pending &p : batch) {
    BatchResult result;
    for (size_t o = 0; o < outputs.size(); ++o) {
      int64_t rowBytes = model.outputs()[o].rowBytes;
      const uint8_t *begin = outputs[o].data() + offset * rowBytes;
      result.outputs.emplace_back(begin, begin + p.rows * rowBytes);
    }
    offset += p.rows;
    p.promise.set_value(std::move(result));
  }
}
