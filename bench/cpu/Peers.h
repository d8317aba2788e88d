//===- Peers.h - ONNX Runtime and compiled columns of loom-bench-cpu -*- C++ -*-===//
//
// Part of Loom. The columns measured in child processes, on the inputs the
// interpreter column wrote:
//
//  - ONNX Runtime (CPU) through bench/cpu/ort-run.js and onnxruntime-node
//    (installed by scripts/setup-bench.sh);
//  - Loom's compiled path: `loom-compile model.onnx -o model.so`, then
//    `loom-run model.so --inputs ... --outputs ... --repeat N
//    --num-threads N`. "n/a" while the build has no loom-compile.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_PEERS_H
#define LOOM_BENCH_CPU_PEERS_H

#include "BenchSupport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

//===----------------------------------------------------------------------===//
// ONNX Runtime
//===----------------------------------------------------------------------===//

struct OrtOptions {
  /// The node executable, bench/cpu/ort-run.js and the onnxruntime-node
  /// package directory.
  std::string node, script, package;
  unsigned threads = 2, warmup = 3, repeat = 10;
  unsigned timeoutSeconds = 1200;
};

struct OrtResult {
  std::string version;
  double sessionMs = 0, medianMs = 0, minMs = 0, p90Ms = 0;
  /// Of the node process, and of node before loading the model.
  int64_t peakRssKb = 0, baselineRssKb = 0;
  /// Everything ort-run.js printed.
  llvm::json::Object report;
  /// The outputs of its last run.
  RunTensors values;
};

/// Why ONNX Runtime cannot be run with `options` (node or the package
/// missing), or success.
llvm::Error checkOrt(const OrtOptions &options);

/// Runs `model` on ONNX Runtime on the tensors of `inputsPath`; its outputs
/// go to `outputsPath`. With `profilePath`, the runs are profiled and the
/// time of each node goes there (ort-run.js --profile).
llvm::Expected<OrtResult> runOrt(const OrtOptions &options,
                                 llvm::StringRef model,
                                 llvm::StringRef inputsPath,
                                 llvm::StringRef outputsPath,
                                 llvm::StringRef profilePath = "");

//===----------------------------------------------------------------------===//
// Loom's compiled path
//===----------------------------------------------------------------------===//

struct CompiledOptions {
  /// Where loom-compile and loom-run are (the build's bin directory).
  std::string binDir;
  unsigned threads = 2, repeat = 10;
  /// Untimed runs before the timed ones (loom-run --warmup).
  unsigned warmup = 0;
  unsigned timeoutSeconds = 1800;
  /// NAME=VALUE settings of loom-compile's and loom-run's environment
  /// (LOOM_CPU_ISA for loom-bench-cpu's --capped column).
  std::vector<std::string> env;
};

struct CompiledResult {
  enum class Status {
    /// No loom-compile in the build: every column "n/a".
    Unavailable,
    /// A step failed: `note` says which and why.
    Failed,
    Measured
  };
  Status status = Status::Unavailable;
  /// Why it is not measured, or remarks.
  std::string note;
  /// Wall-clock seconds of loom-compile, and its peak memory (KiB).
  double compileSeconds = 0;
  int64_t compilePeakRssKb = 0;
  /// loom-run's median (else best) time, and its process's peak memory.
  double latencyMs = 0;
  int64_t peakRssKb = 0;
  /// Its outputs against the interpreter's.
  std::optional<OutputError> errorVsInterpreter;
  /// What loom-compile printed on stderr (the placement's progress).
  std::string compileLog;

  /// Whether it compiled and ran (latency and error are set).
  bool measured() const { return status == Status::Measured; }
};

/// Compiles `model` (with the loom-compile arguments `compileArgs`, e.g. its
/// --dim choices or --backends) into `workDir`/model.so, filling in the
/// compilation's part of `r` (its time, memory and stderr). False, with
/// `r.status` and `r.note` saying why, when it did not compile.
bool compileModel(const CompiledOptions &options, llvm::StringRef model,
                  llvm::ArrayRef<std::string> compileArgs,
                  llvm::StringRef workDir, CompiledResult &r);

/// Runs `workDir`/model.so (compiled by compileModel into `r`) on
/// `inputsPath` and compares its outputs with `interpreterValues`; fills in
/// the run's part of `r` and its status.
void runArtifact(const CompiledOptions &options, llvm::StringRef workDir,
                 llvm::StringRef inputsPath,
                 const RunTensors &interpreterValues, CompiledResult &r);

/// Compiles `model` as compileModel does, runs `workDir`/model.so on
/// `inputsPath` and compares its outputs with `interpreterValues`.
CompiledResult runCompiled(const CompiledOptions &options,
                           llvm::StringRef model,
                           llvm::ArrayRef<std::string> compileArgs,
                           llvm::StringRef workDir, llvm::StringRef inputsPath,
                           const RunTensors &interpreterValues);

/// Runs `workDir`/model.so on `inputsPath` as runArtifact does, with the
/// runtime's profile written to `profilePath` (LOOM_PROFILE=FILE.json).
llvm::Error profileArtifact(const CompiledOptions &options,
                            llvm::StringRef workDir,
                            llvm::StringRef inputsPath,
                            llvm::StringRef profilePath);

/// Reads loom-run's "time: 0.031 s (best of 10; median 0.032 s) ..." line
/// from `output`: the median when given, else the time, in seconds.
std::optional<double> parseLoomRunTime(llvm::StringRef output);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_PEERS_H
