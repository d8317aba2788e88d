//===- Load.h - Closed-loop clients against loom-serve ----------*- C++ -*-===//
//
// Part of Loom. One level of load: N client threads, each on its own
// keep-alive connection, each sending its next request as soon as its last
// is answered (a closed loop), for a duration or a request count after a
// warm-up; every answer decoded and compared with the reference of its
// input, every failure and wrong answer counted.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_LOAD_H
#define LOOM_BENCH_SERVE_LOAD_H

#include "KServe.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::bench {

/// Where the requests go and what their answers must be.
struct LoadTarget {
  std::string host, path;
  int port = 0;
  /// The requests the clients cycle through, and each one's answer as a
  /// lone request gave it.
  std::vector<EncodedRequest> requests;
  std::vector<Tensors> references;
  double tolerance = 1e-4;
  unsigned timeoutSeconds = 60;
};

struct LoadPlan {
  int64_t concurrency = 1;
  unsigned warmupRequests = 2;
  /// Measure for durationSeconds, or (requests > 0) that many requests.
  double durationSeconds = 5;
  int64_t requests = 0;
};

struct LoadResult {
  /// Measured requests sent, and of them those answered 200 with the
  /// reference's values (answered) or other values (wrong); errors: no
  /// answer, another status, or an answer that does not decode. The
  /// warm-up's are counted in warmupSent and its failures in errors and
  /// wrong too.
  int64_t sent = 0, answered = 0, wrong = 0, errors = 0, warmupSent = 0;
  /// TCP connections the clients opened (the concurrency, when the server
  /// keeps every connection alive).
  int64_t connections = 0;
  /// From the end of the warm-up to the last measured answer.
  double seconds = 0;
  /// Latency of each measured 200 answer, ascending.
  std::vector<double> latenciesMs;
  /// When each measured request ended (answered or failed), in seconds
  /// from the start of the measurement, ascending.
  std::vector<double> endSeconds;
  /// The largest relative difference from a reference seen.
  double worstDifference = 0;
  std::string firstError, firstWrong;

  double requestsPerSecond() const;
  /// The p-th percentile (nearest rank) of the latencies; 0 for none.
  double percentileMs(double p) const;
};

/// Runs one level; `betweenPhases(true)` is called when every client has
/// done its warm-up and before any measures, `betweenPhases(false)` when
/// every client has finished (the server is then idle both times).
LoadResult runLoad(const LoadTarget &target, const LoadPlan &plan,
                   llvm::function_ref<void(bool)> betweenPhases);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_LOAD_H
