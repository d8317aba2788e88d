//===- Outcome.h - What a search engine returns -----------------*- C++ -*-===//
//
// Part of Loom. Both engines return the best graph they found with the same
// bookkeeping, so that the pass, the report and the benchmark treat them
// alike.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_OUTCOME_H
#define LOOM_SEARCH_OUTCOME_H

#include "loom/Search/TermGraph.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace loom::search {

struct Outcome {
  TermGraph best;
  double costBefore = 0;
  double costAfter = 0;
  double seconds = 0;
  /// Rewrites that produced the returned graph, per rule name.
  std::map<std::string, unsigned> rulesApplied;
  /// Why the search stopped (`exhausted`, `budget`, `time`, `saturated`,
  /// `nodes`, `iterations`).
  std::string stopReason;
  /// Engine-specific counters, for the report.
  llvm::json::Object stats;
};

/// Seconds since construction.
class Stopwatch {
public:
  Stopwatch() : start(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

private:
  std::chrono::steady_clock::time_point start;
};

/// Progress lines for long searches: `report` is called with a line at
/// most every `interval` seconds, after `delay` seconds have passed.
class Progress {
public:
  Progress(std::function<void(const std::string &)> report = nullptr,
           double delay = 2.0, double interval = 2.0)
      : report(std::move(report)), delay(delay), interval(interval) {}
  bool due() {
    if (!report)
      return false;
    double now = clock.seconds();
    if (now < delay || now < last + interval)
      return false;
    last = now;
    return true;
  }
  void print(const std::string &line) {
    if (report) {
      report(line);
      printed = true;
    }
  }
  /// Whether a line was printed (then the caller prints a last one).
  bool printedAny() const { return printed; }

private:
  std::function<void(const std::string &)> report;
  double delay, interval, last = -1e30;
  bool printed = false;
  Stopwatch clock;
};

} // namespace loom::search

#endif // LOOM_SEARCH_OUTCOME_H
