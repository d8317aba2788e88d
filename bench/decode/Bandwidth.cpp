//===- Bandwidth.cpp - This machine's copy and read bandwidth -------------===//
//
// Part of Loom. See Bandwidth.h.
//
//===----------------------------------------------------------------------===//

#include "Bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace loom::bench {
namespace {

/// Seconds of `work(begin, end)` run over [0, n) split into `threads` parts,
/// each on a thread of its own.
double timeSplit(int64_t n, unsigned threads,
                 const std::function<void(int64_t, int64_t)> &work) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  int64_t part = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    int64_t begin = std::min<int64_t>(n, t * part);
    int64_t end = std::min<int64_t>(n, begin + part);
    pool.emplace_back([&work, begin, end] { work(begin, end); });
  }
  for (std::thread &t : pool)
    t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

Bandwidth measureBandwidth(int64_t bytes, unsigned threads, unsigned repeat) {
  int64_t words = bytes / 8;
  std::vector<uint64_t> a(words), b(words);
  // Touched before timing (pages mapped), with values a sum cannot fold.
  for (int64_t i = 0; i < words; ++i)
    a[i] = uint64_t(i) * 2654435761u;
  std::memset(b.data(), 1, words * 8);
  Bandwidth r;
  r.bytes = words * 8;
  r.threads = threads;
  r.repeat = repeat;
  double copy = 1e30, read = 1e30;
  std::vector<uint64_t> sums(threads);
  for (unsigned i = 0; i < repeat; ++i) {
    copy = std::min(copy, timeSplit(words, threads, [&](int64_t s, int64_t e) {
                      std::memcpy(b.data() + s, a.data() + s, (e - s) * 8);
                    }));
    read = std::min(read, timeSplit(words, threads, [&](int64_t s, int64_t e) {
                      // Four independent sums: loads are not serialised by one
                      // chain.
                      uint64_t x0 = 0, x1 = 0, x2 = 0, x3 = 0;
                      int64_t j = s;
                      for (; j + 4 <= e; j += 4)
                        x0 += a[j], x1 += a[j + 1], x2 += a[j + 2],
                            x3 += a[j + 3];
                      for (; j < e; ++j)
                        x0 += a[j];
                      sums[s / ((words + threads - 1) / threads)] =
                          x0 + x1 + x2 + x3;
                    }));
  }
  // The sums are used, so the loop is not removed.
  uint64_t all = 0;
  for (uint64_t s : sums)
    all ^= s;
  b[all % words] ^= 1;
  r.copyGBps = 2.0 * double(r.bytes) / copy / 1e9;
  r.copiedGBps = double(r.bytes) / copy / 1e9;
  r.readGBps = double(r.bytes) / read / 1e9;
  return r;
}

} // namespace loom::bench
