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
