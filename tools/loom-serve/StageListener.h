//===- StageListener.h - Where a served pipeline's ranks connect -*- C++ -*-===//
//
// Part of Loom. loom-serve's --stage-port: a thread accepts the ranks of
// every served pipeline, reads each one's hello and hands it to the
// pipeline whose artifact it loaded (a rank of no served pipeline, or one
// that does not fit it, is turned away with a line saying why).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_STAGELISTENER_H
#define LOOM_TOOLS_LOOMSERVE_STAGELISTENER_H

#include "StagePipeline.h"

#include <atomic>
#include <thread>
#include <vector>

namespace loom::serve {

class StageListener {
public:
  /// Listens on \p host:\p port (0: a free port) for \p pipelines' ranks.
  static llvm::Expected<std::unique_ptr<StageListener>>
  start(const std::string &host, int port,
        std::vector<StagePipeline *> pipelines);
  /// Stops accepting (ranks already joined stay).
  ~StageListener();
  int port() const { return bound; }

private:
  StageListener() = default;
  void acceptRanks();
  void admit(rt::comm::Socket socket);

  rt::comm::Socket listener;
  int bound = 0;
  std::vector<StagePipeline *> pipelines;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_STAGELISTENER_H
