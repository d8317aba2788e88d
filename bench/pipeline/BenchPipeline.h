//===- BenchPipeline.h - loom-bench-pipeline's shared pieces ----*- C++ -*-===//
//
// Part of Loom. Running the tools and partitioning, shared by the simulation
// mode (BenchPipeline.cpp) and the measuring mode --run (RunMode.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_PIPELINE_BENCHPIPELINE_H
#define LOOM_BENCH_PIPELINE_BENCHPIPELINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace loom::bench::pipeline {

/// The path of a Loom tool: --bin-dir, else beside this executable.
std::string tool(llvm::StringRef name, const char *argv0);

/// Runs a program; its stdout goes to `outPath`, its stderr to `errPath`;
/// killed after `seconds` (0: no limit). Returns the exit code (negative when
/// it did not start or was killed).
int run(const std::string &program, llvm::ArrayRef<std::string> args,
        llvm::StringRef errPath, llvm::StringRef outPath = "/dev/null",
        unsigned seconds = 0);

/// One loom-opt --pipe-partition run.
struct PartitionRequest {
  int devices = 1, microBatches = 1;
  double memoryGiB = 0;
  std::string target, schedule;
  std::string output; ///< The partitioned module (empty: none).
  /// A step profile the partitioner is fed with (profile=; empty: none).
  std::string profile = {};
};

/// What the plan report says (report=FILE of --pipe-partition).
struct Result {
  bool ok = false;
  std::string error;
  double samplesPerSecond = 0, makespan = 0, bubble = 0, search = 0;
  double peakGiB = 0;
  int stages = 0;
  bool replicated = false; ///< Some stage spans several devices.
  /// The largest stage's peak as the partitioner counts it against the
  /// memory limit (parameters, optimizer state, activations in flight).
  double stagePeakGiB = 0;
  double wallSeconds = 0;
};

Result partition(const std::string &opt, llvm::StringRef mlir,
                 const PartitionRequest &q, llvm::StringRef dir);

/// --run: what to measure.
struct RunOptions {
  const char *argv0 = nullptr;
  llvm::SmallVector<llvm::StringRef> models, schedules;
  llvm::SmallVector<int> ranks;
  int microBatches = 8;
  unsigned repeat = 20, trials = 3;
  /// Partition fed with a pilot run's step profile per rank count.
  bool feedPartitions = true;
  std::string json;
};

/// Measures every model x ranks x schedule; prints the table, writes JSON.
/// Returns the exit code.
int runPipelines(const RunOptions &o);

} // namespace loom::bench::pipeline

#endif
