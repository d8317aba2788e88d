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

/// Sorts [first, last) on up to \p threads threads: halves sorted apart,
/// then merged. For a total order the result is std::sort's.
template <class T>
void parallelSort(T *first, T *last, unsigned threads) {
  if (threads < 2 || last - first < (1 << 16)) {
    std::sort(first, last);
    return;
  }
  T *mid = first + (last - first) / 2;
  std::thread left([&] { parallelSort(first, mid, threads / 2); });
  parallelSort(mid, last, threads - threads / 2);
  left.join();
  // Merge: the left run moves out; the right one is consumed in place
  // ahead of the output.
  std::vector<T> run(first, mid);
  T *out = first, *r = mid;
  for (auto l = run.begin(); l != run.end();)
    *out++ = r != last && *r < *l ? *r++ : *l++;
}

} // namespace loom

#endif // LOOM_SUPPORT_THREADS_H
