//===- StageWorker.h - A rank serving one stage of a pipeline ---*- C++ -*-===//
//
// Part of Loom. `loom-serve --stage-worker HOST:PORT MODEL.so`, run as a
// rank under any launcher (mpirun, Slurm, torchrun-style variables,
// loom-launch): rank r of a world of W ranks serves stage r mod S of the
// artifact's S stages, as replica r / S (0: the primary; the others its
// standbys). It connects to the front-end at HOST:PORT, says so, and runs
// the stage's forward entry on every job it is sent, until the front-end
// closes the connection (docs/tools/loom-serve.md "Serving a pipeline
// across ranks").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_STAGEWORKER_H
#define LOOM_TOOLS_LOOMSERVE_STAGEWORKER_H

#include <string>

namespace loom::serve {

struct StageWorkerOptions {
  /// HOST:PORT of the front-end's --stage-port.
  std::string frontEnd;
  std::string artifact;
  unsigned threads = 0;
  /// How often the rank says it is alive, in milliseconds.
  int heartbeatMs = 100;
  /// How long the rank tries to reach the front-end.
  double connectSeconds = 60;
};

/// Serves until the front-end ends the connection (0) or a failure (1,
/// after a line "loom-serve: rank R: ...").
int runStageWorker(const StageWorkerOptions &options);

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_STAGEWORKER_H
