//===- artifact-fuzzer.cpp - Fuzz libloomrt's artifact reader -------------===//
//
// Part of Loom. The first phase of loading an artifact (docs/Artifact.md):
// the bounds-checked ELF section reader, the manifest's JSON reader and
// schema validation, and the weights binding. The input is read both as an
// ELF file (its .loom_manifest and .loom_weights sections, when present, go
// through the rest) and as a manifest text. Any crash, sanitizer report or
// hang is a bug; a rejected input is the expected outcome.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Model.h"

#include <cstddef>
#include <cstdint>

using namespace loom::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, Section> sections;
  if (!readElfSections(data, size, sections)) {
    auto manifest = sections.find(".loom_manifest");
    if (manifest != sections.end()) {
      Manifest m;
      Error err = parseManifest(
          std::string_view(reinterpret_cast<const char *>(data) +
                               manifest->second.offset,
                           manifest->second.size),
          m);
      auto weights = sections.find(".loom_weights");
      if (!err && weights != sections.end()) {
        std::map<std::string, WeightView> views;
        (void)bindWeights(data + weights->second.offset, weights->second.size,
                          m, views);
      }
    }
  }
  Manifest m;
  Error err =
      parseManifest(std::string_view(reinterpret_cast<const char *>(data), size), m);
  if (!err && m.weightsSize <= int64_t(size)) {
    // The same bytes as weights: exercises the safetensors header paths.
    std::map<std::string, WeightView> views;
    (void)bindWeights(data, size, m, views);
  }
  return 0;
}
