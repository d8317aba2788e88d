//===- Zoo.h - The models of loom-zoo ---------------------------*- C++ -*-===//
//
// Part of Loom. Each model is one function in models/<Model>.cpp that builds
// its graph with a GraphBuilder at the shapes of the paper that measures it;
// the table in Zoo.cpp lists them with their options and sources.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_EXAMPLES_ZOO_ZOO_H
#define LOOM_EXAMPLES_ZOO_ZOO_H

#include "loom/Builder/GraphBuilder.h"

#include <optional>
#include <string>

namespace loom::zoo {

/// Command-line settings of a model. Unset ones take the model's default.
struct ModelOptions {
  int64_t batch = 1;
  std::optional<int64_t> seq, layers, hidden, vocab, image, context;
};

/// The options (besides --batch) a model accepts.
enum OptionMask : unsigned {
  kNone = 0,
  kSeq = 1,
  kLayers = 2,
  kHidden = 4,
  kVocab = 8,
  kImage = 16,
  kContext = 32,
};

/// A named result of a model.
struct Output {
  std::string name;
  mlir::Value value;
};
using Outputs = llvm::SmallVector<Output, 3>;

/// Builds a model's graph into `b` and returns its results (empty, with a
/// diagnostic emitted, on error).
using BuildFn = Outputs (*)(GraphBuilder &b, const ModelOptions &options);

struct ModelInfo {
  const char *name;
  /// One line: what it is, at which shape.
  const char *summary;
  /// Where the configuration comes from.
  const char *source;
  /// Which of --seq, --layers, --hidden, --vocab, --image, --context apply
  /// (OptionMask).
  unsigned options;
  /// What those options mean for this model, with their defaults.
  const char *optionHelp;
  BuildFn build;
  /// The name of the (first) function the model is built in: `main`, or
  /// `prefill` for a decoder program (models/Decoder.h).
  const char *entry = "main";
};

/// Every model, in the order `loom-zoo --list` prints them.
llvm::ArrayRef<ModelInfo> models();
/// The model called `name`, or null.
const ModelInfo *findModel(llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Models (one file each under models/)
//===----------------------------------------------------------------------===//

Outputs buildResNet50(GraphBuilder &b, const ModelOptions &o);
Outputs buildResNeXt50(GraphBuilder &b, const ModelOptions &o);
Outputs buildInceptionV3(GraphBuilder &b, const ModelOptions &o);
Outputs buildSqueezeNet(GraphBuilder &b, const ModelOptions &o);
Outputs buildNasNetA(GraphBuilder &b, const ModelOptions &o);
Outputs buildNasRNN(GraphBuilder &b, const ModelOptions &o);
Outputs buildBertBase(GraphBuilder &b, const ModelOptions &o);
Outputs buildBert1Layer(GraphBuilder &b, const ModelOptions &o);
Outputs buildMultiModal(GraphBuilder &b, const ModelOptions &o);
Outputs buildDLRM(GraphBuilder &b, const ModelOptions &o);
Outputs buildCandleUno(GraphBuilder &b, const ModelOptions &o);
Outputs buildGPT2Small(GraphBuilder &b, const ModelOptions &o);
Outputs buildTinyLlama(GraphBuilder &b, const ModelOptions &o);

/// The torchvision ResNet family with bottleneck blocks of [3, 4, 6, 3]
/// (ResNet-50 for groups = 1, width 64; ResNeXt-50 32x4d for groups = 32,
/// width per group 4). Shared by ResNet.cpp and ResNeXt.cpp.
Outputs buildResNetFamily(GraphBuilder &b, const ModelOptions &o,
                          int64_t groups, int64_t widthPerGroup);

/// Checks that an option is within [lo, hi]; reports an error otherwise.
bool checkRange(GraphBuilder &b, llvm::StringRef option, int64_t value,
                int64_t lo, int64_t hi);

} // namespace loom::zoo

#endif // LOOM_EXAMPLES_ZOO_ZOO_H
