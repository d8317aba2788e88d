//===- TokenLoop.h - Prefill, then one decode step per token ----*- C++ -*-===//
//
// Part of Loom. The token loop of loom-generate over any runner of the two
// entries: the artifact through libloomrt's C API (ArtifactSteps.h) or the
// interpreter on its embedded source (ReferenceSteps.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_TOKENLOOP_H
#define LOOM_TOOLS_LOOM_GENERATE_TOKENLOOP_H

#include "Contract.h"
#include "Sampler.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace loom::generate {

/// The integer inputs of an entry, by the contract's names (empty: the
/// entry has none).
struct TokenInputs {
  /// input_ids: [B, P] (prefill) or [B] (decode), row-major.
  llvm::ArrayRef<int64_t> ids;
  /// positions and lengths: [B].
  llvm::ArrayRef<int64_t> positions, lengths;

  /// The values of input \p i of \p io.
  llvm::ArrayRef<int64_t> of(const EntryIO &io, int64_t i) const {
    return i == io.ids ? ids : i == io.positions ? positions : lengths;
  }
};

/// Runs the entries of a decoder in the contract; the state (the cache)
/// is the runner's, carried from call to call.
class DecoderSteps {
public:
  explicit DecoderSteps(const DecoderContract &contract) : contract(contract) {}
  virtual ~DecoderSteps() = default;
  /// One prefill call (a chunk where prefill takes positions); logits
  /// receives [B, V].
  llvm::Error prefill(const TokenInputs &in, std::vector<float> &logits) {
    return run(contract.prefill, in, logits);
  }
  /// ids: [B]; positions: [B]; logits receives [B, V].
  llvm::Error decode(llvm::ArrayRef<int64_t> ids,
                     llvm::ArrayRef<int64_t> positions,
                     std::vector<float> &logits) {
    return run(contract.decode, {ids, positions, {}}, logits);
  }
  const DecoderContract &getContract() const { return contract; }

protected:
  /// Runs entry \p io on \p in (the inputs it has of them).
  virtual llvm::Error run(const EntryIO &io, const TokenInputs &in,
                          std::vector<float> &logits) = 0;

  DecoderContract contract;
};

/// The prompts of a batch: B of them, `real` given by the user (the rest
/// copies of the first, run and ignored).
struct Batch {
  std::vector<std::vector<int64_t>> prompts;
  int64_t real = 0;
};

struct LoopOptions {
  int64_t tokens = 1, promptBound = 0, vocab = 0;
  SamplingOptions sampling;
  /// Keep every step's logits (for --check).
  bool keepLogits = false;
  /// Called after every step with its index (0: prefill); may be empty.
  std::function<void(int64_t step)> onStep;
};

struct LoopResult {
  /// tokens[s][b]: the token of step s (0: from prefill) for sequence b.
  std::vector<std::vector<int64_t>> tokens;
  /// logits[s]: [B, V] of step s, when kept.
  std::vector<std::vector<float>> logits;
  /// The prefill (with its token chosen) and each decode step, in seconds.
  double prefillSeconds = 0;
  std::vector<double> decodeSeconds;
};

/// The chunks (start, tokens) in which prefill of bound \p p runs a prompt
/// of \p length tokens: starts 0, P, 2P, ... while a whole chunk fits
/// before the last token, then one ending at the last token (which may
/// overlap the one before and writes the same keys and values there
/// again); one chunk at 0 when the prompt fits in one.
std::vector<std::pair<int64_t, int64_t>> promptChunks(int64_t length,
                                                      int64_t p);

/// The seconds from \p start to now on the steady clock: what the loop's
/// timings (and loom-generate's wall time of several loops) measure.
double secondsSince(std::chrono::steady_clock::time_point start);

/// Generates opts.tokens tokens for each sequence of \p batch: prefill
/// gives the first, each decode step (fed the last token) the next.
llvm::Expected<LoopResult> runTokenLoop(DecoderSteps &steps, const Batch &batch,
                                        const LoopOptions &opts);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_TOKENLOOP_H
