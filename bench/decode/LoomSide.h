//===- LoomSide.h - Loom's decode and prefill through the C API -*- C++ -*-===//
//
// Part of Loom. A decoder artifact (docs/Decoding.md) loaded through
// libloomrt's C API and driven by loom-generate's own runner of its entries
// (tools/loom-generate/ArtifactSteps.h: the cache is the context's state,
// updated in place): a decode step at a live length, a prefill of a prompt
// length, the logits of a prompt.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_LOOMSIDE_H
#define LOOM_BENCH_DECODE_LOOMSIDE_H

#include "ArtifactSteps.h"
#include "Contract.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace loom::bench {

class LoomDecoder {
public:
  /// Loads `path` on `threads` threads and checks loom-generate's contract.
  static llvm::Expected<std::unique_ptr<LoomDecoder>>
  load(const std::string &path, unsigned threads);
  ~LoomDecoder();

  const generate::DecoderContract &contract() const { return shape; }
  /// Bytes of the state (every layer's keys and values) per position.
  int64_t cacheBytesPerPosition() const { return stateBytes / shape.capacity; }
  int64_t cacheBytes() const { return stateBytes; }

  /// Milliseconds of `steps` decode steps at live length `live` (the new
  /// token at position live - 1), after `warmup` untimed ones.
  llvm::Expected<std::vector<double>> decodeTimes(int64_t live, unsigned warmup,
                                                  unsigned steps);
  /// Milliseconds of `repeat` prefills of a prompt of `length` tokens,
  /// after one untimed one.
  llvm::Expected<std::vector<double>> prefillTimes(int64_t length,
                                                   unsigned repeat);
  /// The logits [V] of the last token of `prompt` (prefill).
  llvm::Expected<std::vector<float>> prefillLogits(llvm::ArrayRef<int64_t> ids);

private:
  LoomDecoder() = default;
  /// The inputs of one prefill call at position 0.
  generate::TokenInputs firstChunk(llvm::ArrayRef<int64_t> ids,
                                   llvm::ArrayRef<int64_t> lengths) const;

  loom_model *model = nullptr;
  generate::DecoderContract shape;
  std::unique_ptr<generate::ArtifactSteps> steps;
  int64_t stateBytes = 0;
  /// positions: every chunk at 0 ([B], sized when loaded).
  std::vector<int64_t> zeros;
};

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_LOOMSIDE_H
