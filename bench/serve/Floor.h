//===- Floor.h - loom-run's latency of the served artifact ------*- C++ -*-===//
//
// Part of Loom. The floor under a served request: `loom-run MODEL.so
// --entry E --repeat N` on the entry of batch 1 and on the entry of the
// largest batch the batched server runs, with the server's thread count,
// no HTTP, no queue. The entries are found through the C API: those whose
// inputs are the model's (by name) with dimension 0 the batch.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_FLOOR_H
#define LOOM_BENCH_SERVE_FLOOR_H

#include "KServe.h"
#include "Options.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

struct FloorRow {
  int64_t batch = 0;
  std::string entry;
  /// loom-run's median, best and p99 (nearest rank) time of a run, in ms.
  std::optional<double> medianMs, bestMs, p99Ms;
  /// Why there is no time (empty otherwise).
  std::string reason;
  /// Requests a second if every run were full: batch / median.
  std::optional<double> rowsPerSecond() const;
};

/// loom-run at batch 1 and at `maxBatch` (one row when it is 1).
std::vector<FloorRow> measureFloor(const ServeOptions &o,
                                   const std::string &artifact,
                                   const ModelMeta &meta, int64_t maxBatch);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_FLOOR_H
