//===- RankJob.h - A served pipeline's ranks as a child ---------*- C++ -*-===//
//
// Part of Loom. loom-launch --keep-going running N ranks of `loom-serve
// --stage-worker`, started and ended by loom-bench-serve --failover; their
// output in a file, from which each rank's pid is read (its line
// "loom-serve: rank R of N (LAUNCHER, pid P): ...").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_RANKJOB_H
#define LOOM_BENCH_SERVE_RANKJOB_H

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <sys/types.h>

namespace loom::bench {

class RankJob {
public:
  /// `launchBin -n ranks --keep-going -- serveBin --stage-worker address
  /// artifact --threads threads`, its output in `outPath`.
  static llvm::Expected<std::unique_ptr<RankJob>>
  start(const std::string &launchBin, int64_t ranks,
        const std::string &serveBin, const std::string &address,
        const std::string &artifact, unsigned threads,
        const std::string &outPath);
  /// Ends the job (stop()).
  ~RankJob();
  RankJob(const RankJob &) = delete;
  RankJob &operator=(const RankJob &) = delete;

  /// The pid of rank `rank`, once it has printed its line (waits up to
  /// `timeoutSeconds`).
  llvm::Expected<pid_t> pidOf(int64_t rank, unsigned timeoutSeconds) const;
  /// SIGTERM to loom-launch (which ends its ranks), SIGKILL after 10 s.
  void stop();

private:
  RankJob() = default;
  pid_t pid = -1;
  std::string outPath;
};

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_RANKJOB_H
