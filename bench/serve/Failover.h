//===- Failover.h - loom-bench-serve --failover -----------------*- C++ -*-===//
//
// Part of Loom. A model cut into stages (loom-opt --pipe-partition) and
// served across ranks (loom-serve --stage-worker under loom-launch
// --keep-going), measured two ways at one concurrency: the normal case
// without and with standbys, alternated (what standing by costs), and a
// stage's primary failing mid-load (SIGKILL: it dies; SIGSTOP: it hangs):
// the requests lost, answered wrong or twice, the longest time without an
// answer after the failure, and the latencies (docs/benchmarks/serve.md
// "Failover"). Every answer is checked against the model compiled whole.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_FAILOVER_H
#define LOOM_BENCH_SERVE_FAILOVER_H

#include "Options.h"

#include "llvm/Support/JSON.h"

namespace loom::bench {

/// Runs the experiment in `workDir`; prints its tables, writes o.json;
/// the exit status (1 when a request was lost, wrong or answered twice).
int runFailover(const ServeOptions &o, llvm::StringRef workDir,
                llvm::json::Object &machine);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_FAILOVER_H
