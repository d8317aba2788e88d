//===- artifact-fuzzer.cpp - Fuzz libloomrt's artifact reader -------------===//
//
// Part of Loom. The first phase of loading an artifact (docs/Artifact.md):
// the bounds-checked ELF section reader, the manifest's JSON reader and
// schema validation (lib/Artifact's one reader), the step sizes and the
// weights binding. A manifest that reads is written again and read back,
// which must succeed. The input is read both as an
// ELF file (its .loom_manifest and .loom_weights sections, when present, go
// through the rest) and as a manifest text. Any crash, sanitizer report or
// hang is a bug; a rejected input is the expected outcome.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Model.h"

#include <cstddef>
#include <cstdint>

using namespace loom;
using namespace loom::rt;

namespace {

/// What the runtime checks of a manifest that reads, short of the code.
void exercise(const artifact::Manifest &m, const uint8_t *weights,
              size_t size) {
  // The writer's text of a valid manifest reads back.
  artifact::Manifest again;
  if (artifact::readManifest(artifact::writeManifest(m), again))
    __builtin_trap();
  for (const artifact::Entry &e : m.entries) {
    std::vector<int64_t> bytes;
    for (const artifact::Buffer &b : e.buffers)
      bytes.push_back(b.bytes);
    (void)checkStepSizes(e, bytes);
  }
  if (weights && m.weights.size <= int64_t(size)) {
    std::map<std::string, WeightView> views;
    (void)bindWeights(weights, size, m.weights, views);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, Section> sections;
  if (!readElfSections(data, size, sections)) {
    auto manifest = sections.find(".loom_manifest");
    if (manifest != sections.end()) {
      artifact::Manifest m;
      Error err = parseManifest(
          std::string_view(reinterpret_cast<const char *>(data) +
                               manifest->second.offset,
                           manifest->second.size),
          m);
      auto weights = sections.find(".loom_weights");
      if (!err)
        exercise(m,
                 weights != sections.end() ? data + weights->second.offset
                                           : nullptr,
                 weights != sections.end() ? weights->second.size : 0);
    }
  }
  artifact::Manifest m;
  Error err =
      parseManifest(std::string_view(reinterpret_cast<const char *>(data), size), m);
  // The same bytes as weights: exercises the safetensors header paths.
  if (!err)
    exercise(m, data, size);
  return 0;
}
