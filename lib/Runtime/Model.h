//===- Model.h - libloomrt's view of a loaded artifact ----------*- C++ -*-===//
//
// Part of Loom. The pieces that read an artifact before its code is loaded
// (ELF sections, the manifest through lib/Artifact's one reader, weights,
// CPU features) and the status every failure carries. The manifest's types
// are the schema's (loom/Artifact/Schema.h); the devices that run it are in
// Device.h. The C API (Runtime.cpp) is a thin layer over these.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_MODEL_H
#define LOOM_LIB_RUNTIME_MODEL_H

#include "loom-c/ArtifactABI.h"
#include "loom-c/Runtime.h"
#include "loom/Artifact/Schema.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::rt {

/// A failure: the C API's status and message.
struct Error {
  loom_status status = LOOM_OK;
  std::string message;
  explicit operator bool() const { return status != LOOM_OK; }
  static Error ok() { return {}; }
};
inline Error makeError(loom_status s, std::string message) {
  return {s, std::move(message)};
}

/// The byte range of a section in the file.
struct Section {
  uint64_t offset = 0, size = 0;
};

/// Reads the section table of an ELF64 x86-64 shared object, bounds-checked.
Error readElfSections(const uint8_t *data, uint64_t size,
                      std::map<std::string, Section> &sections);

/// Parses and validates a manifest (artifact::readManifest: every rule of
/// docs/Artifact.md that can be checked without the weights), as a status.
Error parseManifest(std::string_view text, artifact::Manifest &manifest);

/// The sizes each step of \p entry's programs reads and writes fit its
/// buffers (\p bufferBytes, indexed by buffer id, weights resolved).
Error checkStepSizes(const artifact::Entry &entry,
                     const std::vector<int64_t> &bufferBytes);

/// The bytes of a dense f32 tensor of \p shape (library steps compute in f32).
inline int64_t f32Bytes(const std::vector<int64_t> &shape) {
  int64_t n = 4;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// One tensor of a safetensors file in memory.
struct WeightView {
  const uint8_t *data = nullptr;
  int64_t bytes = 0;
};

/// Gives back the whole pages within [data, data + bytes) of a read-only
/// private file mapping (MADV_DONTNEED): a later read faults them in from
/// the file again. Never on anonymous memory, which it would zero.
void releasePages(const void *data, uint64_t bytes);

/// Reads the safetensors bytes [data, data+size) of a read-only private
/// file mapping, checks them against the manifest's weights (sizes, dtypes,
/// shapes, checksums; the pages given back as they are hashed:
/// releasePages) and returns each tensor's place.
Error bindWeights(const uint8_t *data, uint64_t size,
                  const artifact::Weights &weights,
                  std::map<std::string, WeightView> &views);

/// Sets the calling thread's loom_last_error to \p e's message (after
/// "where: ") and returns its status.
loom_status reportError(const Error &e, const std::string &where);

/// A loaded model's manifest and its weights by name (Runtime.cpp).
const artifact::Manifest &manifestOf(const loom_model &m);
const std::map<std::string, WeightView> &weightsOf(const loom_model &m);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_MODEL_H
