//===- StageDataflow.h - What a served pipeline's stages exchange -*- C++ -*-===//
//
// Part of Loom. A partitioned artifact's dataflow as the front-end of a
// served pipeline follows it, read from the module the artifact embeds
// (--pipe-partition's stage functions, docs/Pipelines.md "What the pass
// writes"): where each input of each stage comes from (a request input, or
// an output of an earlier stage: loom.source), which stage outputs the
// request's outputs are (loom.returned), and the request's signature (the
// partitioned function's arguments and results).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_STAGEDATAFLOW_H
#define LOOM_TOOLS_LOOMSERVE_STAGEDATAFLOW_H

#include "Signature.h"

#include "loom-c/Runtime.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::serve {

/// A tensor a stage takes: request input `index` (stage -1), or output
/// `index` of stage `stage`.
struct StageSource {
  int64_t stage = -1, index = 0;
};

struct StageDataflow {
  /// Per stage, where each input of its forward entry comes from.
  std::vector<std::vector<StageSource>> inputs;
  /// Per request output, the stage output that is it.
  std::vector<StageSource> outputs;
  /// The request's inputs and outputs (the partitioned function's), one
  /// request a run (no batch range).
  std::vector<TensorSpec> requestInputs, requestOutputs;
};

/// The dataflow of \p model's stage functions of \p function, \p numStages
/// of them. An error when the artifact embeds no source, or its functions
/// are not what --pipe-partition writes (a stage that takes a later one's
/// output, a result no stage returns, parameters as arguments).
llvm::Expected<StageDataflow> readStageDataflow(const loom_model *model,
                                                const std::string &function,
                                                int64_t numStages);

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_STAGEDATAFLOW_H
