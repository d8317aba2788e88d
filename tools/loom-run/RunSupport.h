//===- RunSupport.h - What loom-run prints and compares ---------*- C++ -*-===//
//
// Part of Loom. Shared by loom-run's interpreter mode (loom-run.cpp) and its
// artifact mode (RunArtifact.cpp, RunStep.cpp): the error line, the summary
// of a result, and the error measure of --compare and --check.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_RUN_RUNSUPPORT_H
#define LOOM_TOOLS_LOOM_RUN_RUNSUPPORT_H

#include "ScaledError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <ctime>
#include <limits>

namespace loom::run {

/// Prints `loom-run: error: MSG` after what was printed so far; returns the
/// exit status of a failure.
inline int fail(const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "loom-run: error: " << msg << "\n";
  return 1;
}

using tools::maxScaledError;

/// How loom-run shows an output of data-dependent length (the same on the
/// interpreter and on an artifact): its padded type, then " valid AxB" with
/// the shape of its valid part.
inline std::string validShapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = " valid ";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return shape.empty() ? s + "scalar" : s;
}

/// Prints `  mean .. min .. max ..` of the finite values (and how many are
/// not), then up to \p printValues leading values on a line of their own.
inline void printSummary(llvm::raw_ostream &os, llvm::ArrayRef<double> v,
                         unsigned printValues) {
  double sum = 0, lo = 0, hi = 0;
  size_t finite = 0;
  for (double x : v) {
    if (!std::isfinite(x))
      continue;
    sum += x;
    lo = finite == 0 ? x : std::min(lo, x);
    hi = finite == 0 ? x : std::max(hi, x);
    ++finite;
  }
  if (finite)
    os << llvm::format("  mean %.6g  min %.6g  max %.6g", sum / double(finite),
                       lo, hi);
  if (v.size() != finite)
    os << "  (" << v.size() - finite << " non-finite)";
  os << "\n";
  if (printValues > 0) {
    os << "    values:";
    for (size_t k = 0; k < std::min<size_t>(printValues, v.size()); ++k)
      os << llvm::format(" %.6g", v[k]);
    if (v.size() > printValues)
      os << " ...";
    os << "\n";
  }
}

/// The CPU time this process has used (every thread), in seconds.
inline double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

/// `time: best s (best of n; median m s; p99 q s)`: the line loom-bench-cpu
/// and loom-bench-serve read. p99 is the nearest rank (of 20 runs or fewer,
/// the slowest), a tail to compare with a server's.
inline void printTimes(llvm::raw_ostream &os, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  os << llvm::format("time: %.6f s", times.front());
  if (times.size() > 1) {
    size_t rank = (times.size() * 99 + 99) / 100; // ceil(0.99 n), 1-based
    os << llvm::format(" (best of %zu; median %.6f s; p99 %.6f s)",
                       times.size(), times[times.size() / 2],
                       times[std::min(rank, times.size()) - 1]);
  }
}

/// This process's peak resident memory in KiB (VmHWM of /proc/self/status),
/// or -1. Unlike getrusage's ru_maxrss, it does not include the memory of a
/// parent that spawned the process (posix_spawn shares the parent's memory
/// until exec, and Linux carries that high-water mark across exec).
inline int64_t peakResidentKb() {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1)
      break;
  std::fclose(f);
  return kb;
}

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_RUNSUPPORT_H
