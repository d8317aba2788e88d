//===- LanguageModel.h - A decoder served by loom-serve ---------*- C++ -*-===//
//
// Part of Loom. A model of the server whose artifact is a decoder (a
// `prefill` and a `decode` entry over a KV cache kept as state,
// docs/tools/loom-generate.md "The contract"): served by POST
// /v1/completions, not by the KServe endpoints. It holds the loaded
// artifact, its contract, and the one context whose state (the caches of
// the B slots) the model's scheduler owns.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_LANGUAGEMODEL_H
#define LOOM_TOOLS_LOOMSERVE_LANGUAGEMODEL_H

#include "ArtifactSteps.h"
#include "Contract.h"

#include "loom-c/Runtime.h"
#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace loom::serve {

class LanguageModel {
public:
  /// Whether \p model has the entries of a decoder (`prefill`, `decode`).
  static bool isDecoder(const loom_model *model);
  /// Takes \p model (loaded from \p path), checks its contract and makes
  /// its context; frees \p model on an error.
  static llvm::Expected<std::unique_ptr<LanguageModel>>
  create(const std::string &name, const std::string &path, loom_model *model);
  ~LanguageModel();

  const std::string &name() const { return modelName; }
  const generate::DecoderContract &contract() const { return decoder; }
  /// The entries run on the model's context: one caller (the scheduler).
  generate::DecoderSteps &steps() { return *runner; }
  /// The tokenizer of its text prompts, stop strings and completion text
  /// (loom-serve --tokenizer); none: ids only. An error when \p t has more
  /// tokens than the model's vocabulary.
  llvm::Error setTokenizer(tokenizer::Tokenizer t);
  const tokenizer::Tokenizer *tokenizer() const {
    return text ? &*text : nullptr;
  }

private:
  LanguageModel() = default;

  std::string modelName;
  loom_model *model = nullptr;
  generate::DecoderContract decoder;
  std::unique_ptr<generate::ArtifactSteps> runner;
  std::optional<tokenizer::Tokenizer> text;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_LANGUAGEMODEL_H
