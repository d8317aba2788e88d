//===- Threads.h - Running one worker on several threads --------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_THREADS_H
#define LOOM_SUPPORT_THREADS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace loom {

/// Runs `worker(t)` for t in [0, threads) on as many threads, the caller's
/// (t = 0) among them, and returns when all have finished.
inline void runOnThreads(unsigned threads,
                         llvm::function_ref<void(unsigned)> worker) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t)
    pool.emplace_back([worker, t] { worker(t); });
  worker(0);
  for (std::thread &t : pool)
    t.join();
}

} // namespace loom

#endif // LOOM_SUPPORT_THREADS_H
