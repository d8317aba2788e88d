//===- ServedModel.h - An artifact as loom-serve serves it ------*- C++ -*-===//
//
// Part of Loom. One model of the server: the artifact loaded through the C
// API, the entry it serves and, when the artifact holds the same entry at
// several batch sizes, the batch range the dynamic batcher fills
// (docs/tools/loom-serve.md "The batch range").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H
#define LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H

#include "Signature.h"

#include "loom-c/Runtime.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::serve {

class ServedModel {
public:
  /// Takes \p model (loaded from \p path; freed on an error too);
  /// \p maxBatch caps the batch (0: the artifact's largest).
  static llvm::Expected<std::unique_ptr<ServedModel>>
  create(const std::string &name, const std::string &path, loom_model *model,
         int64_t maxBatch);
  ~ServedModel();

  const ModelSignature &signature() const { return sig; }
  const std::string &name() const { return sig.name; }
  const std::vector<TensorSpec> &inputs() const { return sig.inputs; }
  const std::vector<TensorSpec> &outputs() const { return sig.outputs; }
  bool batched() const { return sig.batched(); }
  int64_t maxBatch() const { return sig.maxBatch; }

  /// Runs \p rows rows (inputs[i]: rows * rowBytes of input i, in rows
  /// order) on the smallest entry that holds them, the rest of its batch
  /// zero; outputs[i] receives the first rows of output i. One caller at a
  /// time (the model's batcher). Returns the entry's batch size.
  llvm::Expected<int64_t> run(int64_t rows,
                              std::vector<std::vector<uint8_t>> &inputs,
                              std::vector<std::vector<uint8_t>> &outputs);

private:
  struct Entry {
    int64_t index;
    int64_t batch;
  };
  ServedModel() = default;
  llvm::Error chooseEntries(int64_t cap);

  ModelSignature sig;
  std::string artifactPath;
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  /// The served entry and its batch range, by ascending batch.
  std::vector<Entry> entries;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H
