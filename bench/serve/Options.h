//===- Options.h - The command line of loom-bench-serve ---------*- C++ -*-===//
//
// Part of Loom. What loom-bench-serve measures and with what
// (docs/benchmarks/serve.md "Options"), parsed and checked once.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_OPTIONS_H
#define LOOM_BENCH_SERVE_OPTIONS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::bench {

/// How the requests carry their tensors: KServe's binary tensor extension
/// (raw little-endian bytes after a JSON header, both ways) or JSON arrays.
enum class Encoding { Binary, Json };

/// The server configurations compared at each concurrency.
enum class ServeMode {
  /// The dynamic batcher up to the artifact's largest batch.
  Batched,
  /// --max-batch 1: every request runs alone.
  Unbatched
};

const char *modeName(ServeMode m);
const char *encodingName(Encoding e);

/// --failover: a partitioned model served across ranks (loom-serve
/// --stage-worker under loom-launch), the cost of standbys in the normal
/// case, and a rank failing under load (docs/benchmarks/serve.md
/// "Failover").
struct FailoverOptions {
  bool enabled = false;
  /// Stages the model is cut into, and standbys per stage.
  int64_t stages = 2, standbys = 1;
  /// The stage whose primary fails, when (seconds into the measured load),
  /// and how: SIGKILL (it dies) or SIGSTOP (it hangs).
  int64_t killStage = 0;
  double killAtSeconds = -1; // -1: half the duration
  int killSignal = 9;
  /// loom-serve --stage-timeout-ms.
  int64_t stageTimeoutMs = 1000;
  /// Alternations of the normal case without and with standbys.
  unsigned costRounds = 2;
  /// A loom-zoo model ("resnet50"), or empty: the bundled MLP at batch 1.
  std::string zooModel;
};

struct ServeOptions {
  /// An artifact with a batch range, or empty: the bundled MLP, built and
  /// compiled in the work directory.
  std::string modelFile;
  /// The bundled MLP: layer widths (input, hidden..., output) and the batch
  /// sizes of its entries.
  std::vector<int64_t> mlpDims, batchSizes;
  std::vector<int64_t> concurrency;
  std::vector<ServeMode> modes;
  /// Per level: a measured duration, or (requests > 0) a request count.
  double durationSeconds = 5;
  int64_t requests = 0;
  /// Untimed requests per client before each level.
  unsigned warmupRequests = 2;
  /// Distinct inputs the clients cycle through, and their seed.
  unsigned inputs = 16, seed = 0;
  Encoding encoding = Encoding::Binary;
  /// The server's runtime threads (and loom-run's); its HTTP workers (at
  /// least the largest concurrency by default); its queue delay (-1: the
  /// server's default).
  unsigned threads = 0, httpThreads = 0;
  int64_t maxQueueDelayUs = -1;
  /// loom-run's timed runs for the floor.
  unsigned repeat = 50;
  /// |got - want| <= tolerance * max(1, |want|) for every element.
  double tolerance = 1e-4;
  /// Every request's and every child's deadline, in seconds.
  unsigned timeoutSeconds = 60;
  std::string json, workDir, serveBin, runBin, compileBin;
  FailoverOptions failover;
  /// --failover's tools: the partitioner, the launcher, the zoo.
  std::string optBin, launchBin, zooBin;
};

/// Parses argv (llvm::cl) into options; an error names the bad argument.
llvm::Expected<ServeOptions> parseOptions(int argc, char **argv);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_OPTIONS_H
