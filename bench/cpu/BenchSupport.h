//===- BenchSupport.h - Processes, memory, outputs of loom-bench-cpu -*- C++
//-*-===//
//
// Part of Loom. What every column of the CPU benchmark needs: running a child
// process with its time and peak memory, this process's peak memory, the
// tensors of a run (read from and written to safetensors files) and the
// largest difference between two runs' outputs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_BENCHSUPPORT_H
#define LOOM_BENCH_CPU_BENCHSUPPORT_H

#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

//===----------------------------------------------------------------------===//
// Child processes
//===----------------------------------------------------------------------===//

/// What a finished child process did.
struct ProcessResult {
  /// The exit status; -1 when the process could not be started, -2 when it
  /// crashed or was killed (the timeout included).
  int exitCode = -1;
  /// Its standard output and error.
  std::string out, err;
  /// Wall-clock seconds from start to exit.
  double seconds = 0;
  /// Peak resident set size in KiB (0 when unknown): the child's, or this
  /// process's peak when larger (Linux keeps the spawning memory's
  /// high-water mark at exec), so measure before this process grows.
  int64_t peakRssKb = 0;
  /// Why it could not be started or did not finish (empty otherwise).
  std::string failure;

  bool succeeded() const { return exitCode == 0; }
  /// A one-line account of a failure: the failure, else the last non-empty
  /// line of stderr, else the exit status.
  std::string summary() const;
};

/// Runs `program` with `args` (not including argv[0]) on every CPU this
/// process started with (not the one a Loom team bound the calling thread
/// to), stdin from /dev/null,
/// stdout and stderr captured, killed after `timeoutSeconds` (0: no limit),
/// in this process's environment plus the NAME=VALUE entries of `extraEnv`.
ProcessResult runProcess(llvm::StringRef program,
                         llvm::ArrayRef<std::string> args,
                         unsigned timeoutSeconds,
                         llvm::ArrayRef<std::string> extraEnv = {});

/// `dir`/`name`, joined with the platform's separator.
std::string pathIn(llvm::StringRef dir, llvm::StringRef name);

/// Writes `value` to `path` as JSON indented by 2, and a newline.
llvm::Error writeJSONFile(llvm::StringRef path, const llvm::json::Value &value);

/// The JSON in the file `path`; an error names the file (and the line and
/// column of bad JSON).
llvm::Expected<llvm::json::Value> readJSONFile(llvm::StringRef path);

/// The command line `program args...`, quoted where needed, for messages.
std::string commandLine(llvm::StringRef program,
                        llvm::ArrayRef<std::string> args);

//===----------------------------------------------------------------------===//
// Memory of this process
//===----------------------------------------------------------------------===//

/// Resets this process's peak resident set size to its current size (Linux:
/// /proc/self/clear_refs, since 4.0). False when the kernel refuses.
bool resetPeakRss();

/// This process's peak resident set size in KiB since the last reset (VmHWM),
/// or since it started when resetting is not possible (getrusage).
int64_t peakRssKb();

//===----------------------------------------------------------------------===//
// Tensors of a run
//===----------------------------------------------------------------------===//

/// One named tensor of a run's inputs or outputs.
struct RunTensor {
  safetensors::DType dtype = safetensors::DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// A run's tensors by name.
using RunTensors = std::map<std::string, RunTensor>;

/// Writes `tensors` to the safetensors file `path`.
llvm::Error writeTensors(const RunTensors &tensors, llvm::StringRef path);

/// Reads every tensor of the safetensors file `path`.
llvm::Expected<RunTensors> readTensors(llvm::StringRef path);

/// The largest difference between two runs' outputs.
struct OutputError {
  /// max |a - b| over every element of every output (infinity when exactly
  /// one of a, b is NaN, or an output is missing or of another shape).
  double maxAbs = 0;
  /// max |reference| over the same elements: the scale of maxAbs.
  double maxRef = 0;
  /// The output where maxAbs is reached, and why it is infinite if it is.
  std::string where;
  /// Number of elements compared.
  int64_t elements = 0;
};

/// Compares `actual` with `reference`, output by output (every output of
/// `reference` must be in `actual`, with the same shape).
OutputError compareOutputs(const RunTensors &reference,
                           const RunTensors &actual);

//===----------------------------------------------------------------------===//
// Statistics and formatting
//===----------------------------------------------------------------------===//

/// The median of `values` (the mean of the two middle ones for an even
/// count); 0 for none.
double median(std::vector<double> values);

/// The load average (/proc/loadavg's first three fields), or "unknown".
std::string loadAverage();

/// The CPU model name (/proc/cpuinfo), or "unknown".
std::string cpuModelName();

/// A latency in ms, with 3 significant digits or so ("n/a" for none).
std::string fmtMs(std::optional<double> ms);

/// An OutputError's maxAbs ("n/a" for none, "mismatch" when infinite).
std::string fmtError(const std::optional<OutputError> &e);

/// An OutputError as JSON (null for none).
llvm::json::Value errorJSON(const std::optional<OutputError> &e);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_BENCHSUPPORT_H
