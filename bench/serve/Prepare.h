//===- Prepare.h - The artifact loom-bench-serve serves ---------*- C++ -*-===//
//
// Part of Loom. The model of a run: an artifact given with --model, or the
// bundled MLP (--model mlp): a module with one function per batch size
// (docs/tools/loom-serve.md "The batch range"), random weights from the
// seed in safetensors, compiled by loom-compile in the work directory.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_PREPARE_H
#define LOOM_BENCH_SERVE_PREPARE_H

#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace loom::bench {

struct PreparedModel {
  std::string artifact;
  /// "mlp 256-1024-1024-16, batch sizes 1 2 4 8" or the file's path.
  std::string description;
  /// loom-compile's wall time (0 for a given artifact).
  double compileSeconds = 0;
};

/// The artifact of `o`, made in `workDir` when it is the bundled MLP.
llvm::Expected<PreparedModel> prepareModel(const ServeOptions &o,
                                           llvm::StringRef workDir);

/// The bundled MLP at `batchSizes` (mlpModule) in `mlir`, its weights
/// (writeMlpWeights, o.seed) in `weights`, beside it.
llvm::Error writeMlp(const ServeOptions &o, llvm::ArrayRef<int64_t> batchSizes,
                     llvm::StringRef mlir, llvm::StringRef weights);
/// "mlp 256-1024-1024-16".
std::string mlpDescription(llvm::ArrayRef<int64_t> dims);

/// The bundled MLP's weights: fc{i}.weight uniform in +-1/sqrt(fan-in),
/// fc{i}.bias in +-0.1, from `seed`.
llvm::Error writeMlpWeights(llvm::ArrayRef<int64_t> dims, unsigned seed,
                            llvm::StringRef path);

/// The bundled MLP's module: @bN for every N of `batchSizes`, reading the
/// weights fc{i}.weight [in, out] and fc{i}.bias [out] from `weightsFile`,
/// relu between layers.
std::string mlpModule(llvm::ArrayRef<int64_t> dims,
                      llvm::ArrayRef<int64_t> batchSizes,
                      llvm::StringRef weightsFile);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_PREPARE_H
