//===- Metrics.h - loom-serve's Prometheus metrics --------------*- C++ -*-===//
//
// Part of Loom. What GET /metrics reports, in Prometheus' text format:
// requests per model and status code, and per model the batch sizes the
// batcher ran (a histogram of rows per run), the time requests waited in
// the queue, the time the runs took, and the requests in the queue now.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_METRICS_H
#define LOOM_TOOLS_LOOMSERVE_METRICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::serve {

class Metrics {
public:
  /// One answered inference request of \p model with HTTP status \p code
  /// ("": a model the server does not have, or a body over the limit).
  void countRequest(const std::string &model, int code);
  /// One run of \p model on \p rows rows of \p requests requests, which
  /// took \p computeSeconds; \p queueSeconds: each request's wait.
  void countRun(const std::string &model, int64_t rows,
                const std::vector<double> &queueSeconds, double computeSeconds);
  /// \p model's requests waiting in its queue now.
  void setQueued(const std::string &model, size_t requests);
  /// Everything, in Prometheus' text exposition format.
  std::string render() const;

private:
  struct ModelStats {
    std::vector<uint64_t> batchBuckets; // counts of rows <= kBatchBounds[i]
    uint64_t runs = 0, rows = 0, queued = 0, waiting = 0;
    double queueSeconds = 0, computeSeconds = 0;
  };
  /// A summary (sum and count) per model of what \p sumAndCount reads.
  template <class F>
  void writeSummary(llvm::raw_ostream &os, llvm::StringRef name,
                    llvm::StringRef help, F sumAndCount) const;

  mutable std::mutex mutex;
  std::map<std::pair<std::string, int>, uint64_t> requests;
  std::map<std::string, ModelStats> models;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_METRICS_H
