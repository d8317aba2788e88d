//===- ServedModel.h - An artifact as loom-serve serves it -------*- C++ -*-===//
//
// Part of Loom. One model of the server: the artifact loaded through the C
// API, the entry it serves and, when the artifact holds the same entry at
// several batch sizes, the batch range the dynamic batcher fills
// (docs/tools/loom-serve.md "The batch range").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H
#define LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H

#include "loom-c/Runtime.h"
#include "loom/Support/ElementTypes.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
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

class ServedModel {
public:
  /// Loads \p path with \p threads runtime threads (0: the hardware's);
  /// \p maxBatch caps the batch (0: the artifact's largest).
  static llvm::Expected<std::unique_ptr<ServedModel>>
  load(const std::string &name, const std::string &path, int threads,
       int64_t maxBatch);
  ~ServedModel();

  const std::string &name() const { return modelName; }
  const std::string &path() const { return artifactPath; }
  const std::vector<TensorSpec> &inputs() const { return inputSpecs; }
  const std::vector<TensorSpec> &outputs() const { return outputSpecs; }
  /// Whether dimension 0 is a batch the server may fill.
  bool batched() const { return entries.size() > 1; }
  /// The largest batch a run takes (1 when not batched).
  int64_t maxBatch() const { return batchLimit; }
  /// The batch sizes of the artifact's entries, ascending.
  std::vector<int64_t> batchSizes() const;

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

  std::string modelName, artifactPath;
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  std::vector<Entry> entries;
  std::vector<TensorSpec> inputSpecs, outputSpecs;
  int64_t batchLimit = 1;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_SERVEDMODEL_H
