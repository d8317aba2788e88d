//===- Interpret.h - The interpreter column of loom-bench-cpu ---*- C++ -*-===//
//
// Part of Loom. Imports an ONNX model in this process (loom::importONNX, as
// loom-translate --import-onnx does), draws its inputs from a seed (as
// loom-run does without --inputs) and writes them to a safetensors file that
// every other column reads, then times Loom's reference interpreter on them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_INTERPRET_H
#define LOOM_BENCH_CPU_INTERPRET_H

#include "BenchSupport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::bench {

struct InterpretOptions {
  /// Sizes of symbolic input dimensions.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Seed of the inputs.
  uint64_t seed = 0;
  /// Kernel threads of the interpreter.
  unsigned threads = 2;
  /// Timed runs after the warm-up run: at most `repeat`, and no more once
  /// the runs so far took `budgetSeconds` (the interpreter is slow on big
  /// models; at least one timed run is always made).
  unsigned repeat = 3;
  double budgetSeconds = 20;
};

/// One tensor of a model's signature.
struct TensorDesc {
  std::string name, dtype;
  std::vector<int64_t> shape;
};

struct InterpretResult {
  std::vector<TensorDesc> inputs, outputs;
  /// Seconds to import the model (parse, check, convert, import).
  double importSeconds = 0;
  /// The warm-up run (it also reads the weights), then the timed runs.
  double warmupSeconds = 0;
  std::vector<double> seconds;
  /// True when the budget stopped the timed runs before `repeat`.
  bool capped = false;
  /// Peak resident set size of this process while interpreting (KiB), and
  /// whether it is this model's own (false: the process's peak since it
  /// started, when the kernel cannot reset it).
  int64_t peakRssKb = 0;
  bool peakIsPerModel = false;
  /// The outputs of the last run, by output name.
  RunTensors values;
};

/// Imports `onnxPath` (its weights are written to `weightsPath`), writes its
/// inputs to `inputsPath` and interprets it. Import and run-time diagnostics
/// are returned as the error.
llvm::Expected<InterpretResult> interpretModel(llvm::StringRef onnxPath,
                                               llvm::StringRef weightsPath,
                                               llvm::StringRef inputsPath,
                                               const InterpretOptions &options);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_INTERPRET_H
