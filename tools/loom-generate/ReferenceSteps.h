//===- ReferenceSteps.h - The entries run by the interpreter ----*- C++ -*-===//
//
// Part of Loom. loom-generate --check: the `prefill` and `decode` functions
// of the artifact's embedded source run by the reference interpreter with
// the artifact's weights. The interpreter has no state: this carries each
// tied result to the next call's argument of the same name, as the
// runtime's context does (zeros before the first call).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_REFERENCESTEPS_H
#define LOOM_TOOLS_LOOM_GENERATE_REFERENCESTEPS_H

#include "ArtifactSource.h"
#include "Contract.h"
#include "TokenLoop.h"

#include <map>
#include <memory>
#include <string>

namespace loom::generate {

class ReferenceSteps : public DecoderSteps {
public:
  /// Fails when the artifact embeds no source or the source lacks one of
  /// the entries' functions.
  static llvm::Expected<std::unique_ptr<ReferenceSteps>>
  create(const loom_model *model, const DecoderContract &contract);

private:
  ReferenceSteps(const loom_model *model, const DecoderContract &contract)
      : DecoderSteps(contract), model(model) {}
  llvm::Error run(const EntryIO &io, const TokenInputs &in,
                  std::vector<float> &logits) override;

  const loom_model *model;
  std::unique_ptr<tools::ArtifactSource> source;
  std::unique_ptr<tools::SourceInterpreter> interpreter;
  /// The state by name.
  std::map<std::string, tools::RefTensor> state;
};

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_REFERENCESTEPS_H
