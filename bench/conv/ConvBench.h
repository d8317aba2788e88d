//===- ConvBench.h - what the convolution benchmarks share ------*- C++ -*-===//
//
// Part of Loom. The timing of loom-bench-winograd, loom-bench-conv-forms and
// loom-bench-small-plane:
// a cold L2 before each run, deterministic data, one timed run, the best of
// the runs within a run count and a time budget, the shapes measured.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CONV_CONVBENCH_H
#define LOOM_BENCH_CONV_CONVBENCH_H

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace loom::convbench {

using Clock = std::chrono::steady_clock;

/// Writes a buffer larger than L2 so the next run starts with it cold.
inline void flushL2() {
  static std::vector<char> junk(16 << 20);
  static char v = 0;
  ++v;
  for (size_t i = 0; i < junk.size(); i += 64)
    junk[i] = v;
}

/// Deterministic values in [-v/2, v/2) for \p m.
inline void fill(dnnl::memory &m, float v) {
  auto *p = static_cast<float *>(m.get_data_handle());
  size_t n = m.get_desc().get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i)
    p[i] = v * float((i * 7919) % 97) / 97.0f - 0.5f * v;
}

/// The best of \p v: on a shared machine the least disturbed run.
inline double best(const std::vector<double> &v) {
  return *std::min_element(v.begin(), v.end());
}

/// Milliseconds \p body takes on \p strm, L2 flushed first unless \p warm.
template <typename Body>
double timeRun(dnnl::stream &strm, bool warm, Body &&body) {
  if (!warm)
    flushL2();
  auto t0 = Clock::now();
  body();
  strm.wait();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Whether run \p i of a shape's measurement happens: at most \p repeat
/// runs, at least 10, then only while fewer than \p budget seconds have
/// passed since \p start.
inline bool anotherRun(unsigned i, unsigned repeat, double budget,
                       Clock::time_point start) {
  return i < repeat &&
         (i < 10 ||
          std::chrono::duration<double>(Clock::now() - start).count() < budget);
}

/// The shapes a tool measures: \p given (its --shape values) alone when
/// \p onlyGiven, else its \p builtIn table followed by them.
template <typename Shape>
std::vector<Shape> shapesToMeasure(bool onlyGiven, std::vector<Shape> builtIn,
                                   std::vector<Shape> given) {
  if (onlyGiven)
    return given;
  builtIn.insert(builtIn.end(), given.begin(), given.end());
  return builtIn;
}

} // namespace loom::convbench

#endif // LOOM_BENCH_CONV_CONVBENCH_H
