//===- Prompts.h - The batch of prompts loom-generate runs ------*- C++ -*-===//
//
// Part of Loom. Prompts given as token ids (--prompt-ids) or drawn from the
// seed (--prompt-length), checked against the artifact's contract before
// anything runs: at most B sequences, each of 1 to P tokens, every id in
// the vocabulary, prompt and generated tokens within the cache's capacity.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_PROMPTS_H
#define LOOM_TOOLS_LOOM_GENERATE_PROMPTS_H

#include "Contract.h"
#include "TokenLoop.h"

#include <string>
#include <vector>

namespace loom::generate {

struct PromptOptions {
  /// --prompt-ids values: sequences separated by ';', ids by ','.
  std::vector<std::string> promptIds;
  /// --prompt-length (0: not given) and --batch-prompts (0: B).
  int64_t promptLength = 0, batchPrompts = 0;
  uint64_t seed = 0;
  /// Tokens to generate per sequence.
  int64_t tokens = 1;
  /// --groups: batches of B run at once (G; 1: one batch).
  int64_t groups = 1;
};

/// The G batches of B prompts: the user's, B a batch in order (G B at
/// most; the last batch may hold fewer, none empty), each batch's last
/// places copies of its first.
llvm::Expected<std::vector<Batch>> makeBatches(const PromptOptions &options,
                                               const DecoderContract &contract);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_PROMPTS_H
