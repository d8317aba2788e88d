//===- ArtifactSteps.cpp - The entries run through libloomrt --------------===//
//
// Part of Loom. See ArtifactSteps.h.
//
//===----------------------------------------------------------------------===//

#include "ArtifactSteps.h"

using namespace loom::generate;

llvm::Expected<std::unique_ptr<ArtifactSteps>>
ArtifactSteps::create(const loom_model *model, const DecoderContract &contract,
                      loom_world *world) {
  std::unique_ptr<ArtifactSteps> steps(new ArtifactSteps(model, contract));
  if (loom_context_create(model, &steps->context) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  if (world && loom_context_join_world(steps->context, world) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  return steps;
}

ArtifactSteps::~ArtifactSteps() {
  if (context)
    loom_context_free(context);
}

llvm::Error ArtifactSteps::run(const EntryIO &io, const TokenInputs &tokens,
                               std::vector<float> &logits) {
  std::vector<const void *> in(io.numInputs, nullptr);
  std::vector<void *> out(io.numOutputs, nullptr);
  for (int64_t i : {io.ids, io.positions, io.lengths})
    if (i >= 0)
      in[i] = tokens.of(io, i).data();
  logits.resize(contract.batch * contract.vocab);
  extra.resize(io.numOutputs);
  for (int64_t j = 0; j < io.numOutputs; ++j) {
    if (j == io.logits) {
      out[j] = logits.data();
    } else if (io.tiedInput[j] < 0) {
      loom_tensor_desc d;
      loom_entry_output(model, io.entry, j, &d);
      extra[j].resize(d.bytes);
      out[j] = extra[j].data();
    }
  }
  if (loom_run(context, io.entry, in.data(), out.data()) != LOOM_OK)
    return llvm::createStringError(io.name + ": " + loom_last_error());
  return llvm::Error::success();
}
