//===- Prompts.cpp - The batch of prompts loom-generate runs --------------===//
//
// Part of Loom. See Prompts.h.
//
//===----------------------------------------------------------------------===//

#include "Prompts.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <random>

using namespace loom::generate;

namespace {

/// The sequences of the --prompt-ids values.
llvm::Expected<std::vector<std::vector<int64_t>>>
parsePromptIds(llvm::ArrayRef<std::string> values) {
  std::vector<std::vector<int64_t>> prompts;
  for (llvm::StringRef value : values) {
    llvm::SmallVector<llvm::StringRef> sequences;
    value.split(sequences, ';');
    for (llvm::StringRef sequence : sequences) {
      std::vector<int64_t> ids;
      llvm::SmallVector<llvm::StringRef> items;
      sequence.trim().split(items, ',');
      for (llvm::StringRef item : items) {
        int64_t id;
        if (item.trim().getAsInteger(10, id))
          return llvm::createStringError("--prompt-ids: '" + item.trim() +
                                         "' is not a token id (sequence " +
                                         llvm::Twine(prompts.size()) + ")");
        ids.push_back(id);
      }
      prompts.push_back(std::move(ids));
    }
  }
  return prompts;
}

/// --prompt-length: \p count sequences of \p length ids drawn from
/// std::mt19937_64 seeded with seed + 1, each id a draw modulo V.
std::vector<std::vector<int64_t>> randomPrompts(int64_t count, int64_t length,
                                                uint64_t seed, int64_t vocab) {
  std::mt19937_64 rng(seed + 1);
  std::vector<std::vector<int64_t>> prompts(count);
  for (std::vector<int64_t> &prompt : prompts)
    for (int64_t i = 0; i < length; ++i)
      prompt.push_back(int64_t(rng() % uint64_t(vocab)));
  return prompts;
}

/// Sequence \p s against the contract's bounds.
llvm::Error checkPrompt(const std::vector<int64_t> &prompt, size_t s,
                        int64_t tokens, const DecoderContract &c) {
  std::string where = "sequence " + std::to_string(s);
  int64_t length = int64_t(prompt.size());
  if (length < 1)
    return llvm::createStringError(where + " is empty: a prompt has at "
                                           "least one token");
  if (length > c.promptBound && !c.chunked())
    return llvm::createStringError(
        where + " has " + llvm::Twine(length) +
        " tokens, past the prompt bound " + llvm::Twine(c.promptBound) +
        " (entry 'prefill', input 'input_ids' [B, P])");
  for (int64_t id : prompt)
    if (id < 0 || id >= c.vocab)
      return llvm::createStringError(
          where + ": token id " + llvm::Twine(id) +
          " is outside the vocabulary [0, " + llvm::Twine(c.vocab) +
          ") (entry 'prefill', output 'logits' [B, V])");
  if (length + tokens > c.capacity)
    return llvm::createStringError(
        where + ": " + llvm::Twine(length) + " prompt tokens + " +
        llvm::Twine(tokens) + " generated need " +
        llvm::Twine(length + tokens) + " positions, the cache holds " +
        llvm::Twine(c.capacity));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<Batch>>
loom::generate::makeBatches(const PromptOptions &o, const DecoderContract &c) {
  if (o.promptIds.empty() == (o.promptLength == 0))
    return llvm::createStringError(
        "give the prompts with --prompt-ids or --prompt-length (one of them)");
  if (o.batchPrompts && !o.promptIds.empty())
    return llvm::createStringError("--batch-prompts applies to "
                                   "--prompt-length (--prompt-ids gives "
                                   "each sequence)");
  if (o.tokens < 1)
    return llvm::createStringError("--tokens must be at least 1");
  if (o.groups < 1 || o.groups > 64)
    return llvm::createStringError("--groups must be 1 to 64");
  int64_t most = o.groups * c.batch;
  std::vector<std::vector<int64_t>> prompts;
  if (o.promptIds.empty()) {
    int64_t count = o.batchPrompts ? o.batchPrompts : most;
    if (count < 1 || count > most)
      return llvm::createStringError("--batch-prompts " + llvm::Twine(count) +
                                     ": the artifact runs 1 to " +
                                     llvm::Twine(most) + " sequences" +
                                     (o.groups > 1 ? " in its groups" : ""));
    prompts = randomPrompts(count, o.promptLength, o.seed, c.vocab);
  } else {
    auto parsed = parsePromptIds(o.promptIds);
    if (!parsed)
      return parsed.takeError();
    prompts = std::move(*parsed);
  }
  int64_t count = int64_t(prompts.size());
  if (count > most)
    return llvm::createStringError(
        std::to_string(count) + " sequences, the artifact runs at most " +
        std::to_string(c.batch) +
        " (entry 'prefill', input 'input_ids' [B, P])" +
        (o.groups > 1 ? " a group, " + std::to_string(most) + " in " +
                            std::to_string(o.groups) + " groups"
                      : std::string()));
  if (count <= (o.groups - 1) * c.batch)
    return llvm::createStringError(
        "--groups=" + llvm::Twine(o.groups) + ": " + llvm::Twine(count) +
        " sequences leave a group empty (each holds " + llvm::Twine(c.batch) +
        ", the artifact's batch)");
  for (size_t s = 0; s < prompts.size(); ++s)
    if (llvm::Error e = checkPrompt(prompts[s], s, o.tokens, c))
      return std::move(e);
  std::vector<Batch> batches(size_t(o.groups));
  for (int64_t g = 0; g < o.groups; ++g) {
    Batch &batch = batches[size_t(g)];
    auto first = prompts.begin() + g * c.batch;
    batch.prompts.assign(first, first + std::min(c.batch, count - g * c.batch));
    batch.real = int64_t(batch.prompts.size());
    batch.prompts.resize(c.batch, batch.prompts.front());
  }
  return batches;
}
