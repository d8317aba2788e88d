//===- Contract.h - What loom-generate expects of an artifact ---*- C++ -*-===//
//
// Part of Loom. A decoder artifact has a `prefill` and a `decode` entry
// (docs/tools/loom-generate.md "The contract"): their inputs `input_ids`,
// `lengths` (prefill), `positions` (decode; prefill too when it runs a
// prompt in chunks), found by name; every other
// input state tied to an output (the KV cache, whatever its names); the
// output `logits`. The batch, the prompt bound, the vocabulary and the
// cache's capacity come from their shapes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_CONTRACT_H
#define LOOM_TOOLS_LOOM_GENERATE_CONTRACT_H

#include "loom-c/Runtime.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::generate {

/// One entry of the contract: where its inputs and output are.
struct EntryIO {
  /// The artifact's entry, and the function of the program as given that
  /// it compiles (the same but on a tensor-parallel artifact, whose rank r
  /// runs `<function>.rank<r>`).
  std::string name, function;
  int64_t entry = -1;
  /// Input indices of `input_ids`, `positions` and `lengths` (-1: the
  /// entry has none); output index of `logits`.
  int64_t ids = -1, positions = -1, lengths = -1, logits = -1;
  int64_t numInputs = 0, numOutputs = 0;
  /// Per input: whether an output is tied to it (state).
  std::vector<bool> tied;
  /// Per output: the input it is tied to, or -1.
  std::vector<int64_t> tiedInput;
};

struct DecoderContract {
  EntryIO prefill, decode;
  /// B, P, V and C: sequences per batch, the prompt bound, the vocabulary
  /// and the cache's capacity (positions).
  int64_t batch = 0, promptBound = 0, vocab = 0, capacity = 0;
  /// The artifact's path (for messages), and -1, or, for a tensor-parallel
  /// artifact (entries per rank), the rank whose entries these are.
  std::string path;
  int64_t rank = -1;
  /// Whether prefill takes `positions`: it then appends a chunk of up to P
  /// tokens at each sequence's position, and a prompt may be longer than P.
  bool chunked() const { return prefill.positions >= 0; }
};

/// Reads and checks the contract of \p model (loaded from \p path, which
/// the messages name): its entries `prefill` and `decode`, or, where it has
/// entries per rank (`prefill.rank<t>`, loom-compile --tensor-parallel),
/// those world rank \p rank runs (loom_model_entry_runs_on: rank t, or
/// every rank t modulo T with --cache-parallel too).
llvm::Expected<DecoderContract> readContract(const loom_model *model,
                                             llvm::StringRef path,
                                             int64_t rank = 0);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_CONTRACT_H
