//===- LanguageModel.cpp - A decoder artifact as loom-serve serves it -----===//
//
// Part of Loom. See LanguageModel.h.
//
//===----------------------------------------------------------------------===//

#include "LanguageModel.h"

using namespace loom;
using namespace loom::serve;

bool LanguageModel::isDecoder(const loom_model *model) {
  return loom_model_find_entry(model, "prefill") >= 0 &&
         loom_model_find_entry(model, "decode") >= 0;
}

llvm::Expected<std::unique_ptr<LanguageModel>>
LanguageModel::create(const std::string &name, const std::string &path,
                      loom_model *model) {
  std::unique_ptr<LanguageModel> m(new LanguageModel());
  m->modelName = name;
  m->model = model;
  auto contract = generate::readContract(model, path);
  if (!contract)
    return contract.takeError();
  m->decoder = *contract;
  auto steps = generate::ArtifactSteps::create(model, m->decoder);
  if (!steps)
    return steps.takeError();
  m->runner = std::move(*steps);
  return std::move(m);
}

LanguageModel::~LanguageModel() {
  runner.reset(); // the context before its model
  if (model)
    loom_model_free(model);
}

llvm::Error LanguageModel::setTokenizer(tokenizer::Tokenizer t) {
  // Every id the tokenizer gives must be one the model has; a model may
  // have more (a vocabulary padded to a multiple of 64, say), and its
  // tokens past the tokenizer's decode as no text.
  if (t.vocabSize() > decoder.vocab)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the tokenizer has ids up to " + llvm::Twine(t.vocabSize() - 1) +
            ", past model '" + modelName + "''s vocabulary of " +
            llvm::Twine(decoder.vocab));
  text.emplace(std::move(t));
  return llvm::Error::success();
}
