//===- Load.cpp - Closed-loop clients against loom-serve ------------------===//
//
// Part of Loom. See Load.h.
//
//===----------------------------------------------------------------------===//

#include "Load.h"

#include "Client.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace loom::bench {

double LoadResult::requestsPerSecond() const {
  return seconds > 0 ? double(sent - errors) / seconds : 0;
}

double LoadResult::percentileMs(double p) const {
  if (latenciesMs.empty())
    return 0;
  size_t rank = size_t(std::ceil(p / 100 * double(latenciesMs.size())));
  return latenciesMs[std::clamp<size_t>(rank, 1, latenciesMs.size()) - 1];
}

namespace {

/// What one client saw.
struct ClientStats {
  int64_t sent = 0, answered = 0, wrong = 0, errors = 0, warmupSent = 0;
  int64_t connections = 0;
  std::vector<double> latenciesMs;
  double worst = 0;
  std::string firstError, firstWrong;
  std::optional<Clock::time_point> lastAnswer;
  std::vector<Clock::time_point> ends;
};

/// The clients' start line: every client arrives after its warm-up; the
/// measurement starts when the bench opens it.
class Gate {
public:
  explicit Gate(int64_t clients) : waiting(clients) {}
  void arrive() {
    std::lock_guard<std::mutex> lock(mutex);
    if (--waiting == 0)
      changed.notify_all();
  }
  void waitForAll() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return waiting == 0; });
  }
  void open(Clock::time_point at) {
    std::lock_guard<std::mutex> lock(mutex);
    start = at;
    opened = true;
    changed.notify_all();
  }
  Clock::time_point waitForOpen() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return opened; });
    return start;
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  int64_t waiting;
  bool opened = false;
  Clock::time_point start;
};

/// One request and its answer, checked.
void exchange(Connection &c, const LoadTarget &t, size_t index, ClientStats &s,
              bool measured) {
  Clock::time_point begin = Clock::now();
  Answer answer = c.post(t.path, t.requests[index]);
  Clock::time_point end = Clock::now();
  if (measured) {
    s.lastAnswer = end;
    s.ends.push_back(end);
  }
  auto outputs = decodeAnswer(answer);
  if (!outputs) {
    ++s.errors;
    std::string why = toString(outputs.takeError());
    if (s.firstError.empty())
      s.firstError = why;
    return;
  }
  if (measured)
    s.latenciesMs.push_back(
        std::chrono::duration<double, std::milli>(end - begin).count());
  if (std::optional<std::string> diff =
          compareAnswer(t.references[index], *outputs, t.tolerance, s.worst)) {
    ++s.wrong;
    if (s.firstWrong.empty())
      s.firstWrong = "input " + std::to_string(index) + ": " + *diff;
  } else if (measured) {
    ++s.answered;
  }
}

void runClient(int64_t id, const LoadTarget &t, const LoadPlan &p, Gate &gate,
               std::atomic<int64_t> &tickets, ClientStats &s) {
  Connection c(t.host, t.port, t.timeoutSeconds);
  size_t next = size_t(id) % t.requests.size();
  auto advance = [&] {
    size_t i = next;
    next = (next + 1) % t.requests.size();
    return i;
  };
  for (unsigned w = 0; w < p.warmupRequests; ++w, ++s.warmupSent)
    exchange(c, t, advance(), s, /*measured=*/false);
  gate.arrive();
  Clock::time_point start = gate.waitForOpen();
  auto end = start + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(p.durationSeconds));
  while (p.requests > 0 ? tickets.fetch_add(1) < p.requests
                        : Clock::now() < end) {
    ++s.sent;
    exchange(c, t, advance(), s, /*measured=*/true);
  }
  s.connections = c.opened();
}

} // namespace

LoadResult runLoad(const LoadTarget &target, const LoadPlan &plan,
                   function_ref<void(bool)> betweenPhases) {
  std::vector<ClientStats> stats(plan.concurrency);
  Gate gate(plan.concurrency);
  std::atomic<int64_t> tickets{0};
  std::vector<std::thread> clients;
  for (int64_t i = 0; i < plan.concurrency; ++i)
    clients.emplace_back(runClient, i, std::cref(target), std::cref(plan),
                         std::ref(gate), std::ref(tickets), std::ref(stats[i]));
  gate.waitForAll();
  betweenPhases(true);
  Clock::time_point start = Clock::now();
  gate.open(start);
  for (std::thread &c : clients)
    c.join();
  betweenPhases(false);

  LoadResult r;
  Clock::time_point last = start;
  for (ClientStats &s : stats) {
    r.sent += s.sent;
    r.answered += s.answered;
    r.wrong += s.wrong;
    r.errors += s.errors;
    r.warmupSent += s.warmupSent;
    r.connections += s.connections;
    r.worstDifference = std::max(r.worstDifference, s.worst);
    llvm::append_range(r.latenciesMs, s.latenciesMs);
    if (r.firstError.empty())
      r.firstError = s.firstError;
    if (r.firstWrong.empty())
      r.firstWrong = s.firstWrong;
    if (s.lastAnswer && *s.lastAnswer > last)
      last = *s.lastAnswer;
    for (Clock::time_point t : s.ends)
      r.endSeconds.push_back(std::chrono::duration<double>(t - start).count());
  }
  std::sort(r.latenciesMs.begin(), r.latenciesMs.end());
  std::sort(r.endSeconds.begin(), r.endSeconds.end());
  r.seconds = std::chrono::duration<double>(last - start).count();
  return r;
}

} // namespace loom::bench
