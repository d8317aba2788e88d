//===- ConvBench.h - what the convolution benchmarks share ------*- C++ -*-===//
//
// Part of Loom. What loom-bench-winograd, loom-bench-conv-forms,
// loom-bench-small-plane and loom-bench-squeeze-excite share: a cold L2
// before each run, deterministic data, one timed run, the best of the runs
// within a run count and a time budget, the shapes measured and the parsing
// of their --shape values.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CONV_CONVBENCH_H
#define LOOM_BENCH_CONV_CONVBENCH_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
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

/// The integers of \p text separated by \p separator: between \p least and
/// \p most of them, each all digits (an optional leading '-'), or nullopt.
/// A tool checks their ranges itself.
inline std::optional<std::vector<int64_t>>
integerFields(llvm::StringRef text, char separator, size_t least,
              size_t most) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, separator);
  if (parts.size() < least || parts.size() > most)
    return std::nullopt;
  std::vector<int64_t> fields;
  for (llvm::StringRef part : parts) {
    int64_t v;
    if (part.getAsInteger(10, v))
      return std::nullopt;
    fields.push_back(v);
  }
  return fields;
}

/// Each of \p given (a tool's --shape values) parsed by \p parse (nullopt:
/// malformed or out of range); on the first malformed value, the diagnostic
/// "error: --shape V: expected \p expected" and exit 1.
template <typename Shape, typename Values, typename Parse>
std::vector<Shape> parseShapes(const Values &given, Parse &&parse,
                               const char *expected) {
  std::vector<Shape> shapes;
  for (const std::string &v : given) {
    std::optional<Shape> s = parse(llvm::StringRef(v));
    if (!s) {
      llvm::errs() << "error: --shape " << v << ": expected " << expected
                   << "\n";
      std::exit(1);
    }
    shapes.push_back(*s);
  }
  return shapes;
}

} // namespace loom::convbench

#endif // LOOM_BENCH_CONV_CONVBENCH_H
