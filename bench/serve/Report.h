//===- Report.h - loom-bench-serve's rows, as a table and JSON --*- C++ -*-===//
//
// Part of Loom. One row per server mode and concurrency: throughput,
// latency percentiles, the batches the server formed (from /metrics),
// errors and wrong answers; beside them loom-run's floor and how each
// server stopped.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_REPORT_H
#define LOOM_BENCH_SERVE_REPORT_H

#include "Floor.h"
#include "Load.h"
#include "Options.h"
#include "ServerProcess.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

struct LevelRow {
  ServeMode mode = ServeMode::Batched;
  int64_t concurrency = 0;
  LoadResult load;
  /// From /metrics over the measured requests: rows per run, the mean
  /// wait in the queue of a request and the mean time of a run; the
  /// inference requests the server counted (null: /metrics unread).
  std::optional<double> meanBatch, meanQueueMs, meanRunMs, serverRequests;
};

/// What a run was: the model, the servers, the machine.
struct RunSummary {
  std::string model, artifact;
  double compileSeconds = 0;
  int64_t maxBatch = 0;
  std::vector<int64_t> batchSizes;
  std::vector<FloorRow> floor;
  /// Per mode: the server's command line and how it stopped, and how many
  /// inference requests the bench sent it.
  struct Server {
    ServeMode mode;
    std::string command;
    ServerStop stop;
    int64_t sent = 0;
  };
  std::vector<Server> servers;
  std::vector<std::string> notes;
};

/// The table, the floor and the notes, on stdout.
void printReport(const std::vector<LevelRow> &rows, const RunSummary &run);

/// The JSON document: machine, settings, model, floor, servers and rows.
llvm::json::Value reportJSON(const ServeOptions &o,
                             const std::vector<LevelRow> &rows,
                             const RunSummary &run, llvm::json::Object machine);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_REPORT_H
