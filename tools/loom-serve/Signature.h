//===- Signature.h - What the protocol knows of a model ---------*- C++ -*-===//
//
// Part of Loom. A served model's name, inputs and outputs as the KServe v2
// protocol shows them, and its batch range: all that reading a request and
// writing a response need (Protocol.h), apart from the artifact, so that
// the fuzz target can drive them without one.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_SIGNATURE_H
#define LOOM_TOOLS_LOOMSERVE_SIGNATURE_H

#include "loom/Support/ElementTypes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::serve {

/// An input or output as the protocol shows it.
struct TensorSpec {
  std::string name;
  ElemKind kind;
  /// The shape; dimension 0 is -1 (the request's batch) when batched.
  std::vector<int64_t> shape;
  /// The bytes of one row (dimension 0 index) when batched; of the whole
  /// tensor when not (a request is then one "row").
  int64_t rowBytes = 0;
};

struct ModelSignature {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
  /// The batch sizes of the artifact's entries, ascending; one entry (one
  /// size, or none) when the model is not batched.
  std::vector<int64_t> batchSizes;
  /// The most rows a run takes (1 when not batched).
  int64_t maxBatch = 1;

  /// Whether dimension 0 is a batch the server may fill.
  bool batched() const { return batchSizes.size() > 1; }
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_SIGNATURE_H
