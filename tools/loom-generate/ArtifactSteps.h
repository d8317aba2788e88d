//===- ArtifactSteps.h - The entries run through libloomrt ------*- C++ -*-===//
//
// Part of Loom. The decoder's entries run on a context of the artifact
// (include/loom-c/Runtime.h): the state (every input tied to an output) is
// the context's own, passed as null pointers, so prefill writes the cache
// in place and decode reads and appends to it (docs/Runtime.md "State").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_ARTIFACTSTEPS_H
#define LOOM_TOOLS_LOOM_GENERATE_ARTIFACTSTEPS_H

#include "Contract.h"
#include "TokenLoop.h"

#include <memory>

namespace loom::generate {

class ArtifactSteps : public DecoderSteps {
public:
  /// A fresh context of \p model: zero state; joined to \p world (one rank
  /// of an artifact of several, loom_context_join_world) when not null.
  static llvm::Expected<std::unique_ptr<ArtifactSteps>>
  create(const loom_model *model, const DecoderContract &contract,
         loom_world *world = nullptr);
  ~ArtifactSteps() override;

private:
  ArtifactSteps(const loom_model *model, const DecoderContract &contract)
      : DecoderSteps(contract), model(model) {}
  llvm::Error run(const EntryIO &io, const TokenInputs &in,
                  std::vector<float> &logits) override;

  const loom_model *model;
  loom_context *context = nullptr;
  /// Memory for outputs outside the contract (neither state nor logits).
  std::vector<std::vector<uint8_t>> extra;
};

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_ARTIFACTSTEPS_H
