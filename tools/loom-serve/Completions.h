//===- Completions.h - OpenAI-style completion requests ---------*- C++ -*-===//
//
// Part of Loom. POST /v1/completions for a decoder artifact
// (docs/tools/loom-serve.md "Completions"): the request read from its JSON
// body and checked (types and ranges, then against the model's contract:
// the vocabulary and the cache's capacity), with a 4xx and a message for
// everything wrong; the completion object, the chunks of a stream and the
// error body, in OpenAI's shapes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_COMPLETIONS_H
#define LOOM_TOOLS_LOOMSERVE_COMPLETIONS_H

#include "Protocol.h"

#include "Contract.h"
#include "Sampler.h"

#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::serve {

/// A completion request, its types and ranges checked.
struct CompletionRequest {
  std::string model;
  /// One or several prompts of token ids: one sequence (and one choice)
  /// each. A request whose prompts are text has them in promptTexts, and
  /// here once its model's tokenizer has encoded them.
  std::vector<std::vector<int64_t>> prompts;
  std::vector<std::string> promptTexts;
  int64_t maxTokens = 16;
  /// sample is false for temperature 0 (greedy); choice i draws from a
  /// generator seeded with seed + i.
  generate::SamplingOptions sampling;
  /// Token ids that end a sequence (finish_reason "stop") once generated.
  std::vector<int64_t> stopTokenIds;
  /// Strings that end a sequence once its text holds one, the text cut
  /// before it (they need the model's tokenizer).
  std::vector<std::string> stopStrings;
  bool stream = false;
};

/// Reads \p body; \p randomSeed is the seed when the request gives none.
std::optional<HttpError> parseCompletionRequest(llvm::StringRef body,
                                                uint64_t randomSeed,
                                                CompletionRequest &request);

/// Encodes \p request's text prompts with \p tokenizer (none: a 400 that
/// says the model has no tokenizer); refuses stop strings without one.
std::optional<HttpError>
applyTokenizer(CompletionRequest &request,
               const tokenizer::Tokenizer *tokenizer);

/// Checks \p request against the decoder \p contract: every id in the
/// vocabulary, every prompt and its tokens within the cache.
std::optional<HttpError>
checkAgainstContract(const CompletionRequest &request,
                     const generate::DecoderContract &contract);

/// What one choice generated.
struct ChoiceResult {
  std::vector<int64_t> tokens;
  /// With a tokenizer: the text each token settled (maybe empty: a
  /// character still being spelt), the choice's text joined.
  std::vector<std::string> pieces;
  std::string text() const;
  /// "length" or "stop"; empty while the sequence runs.
  std::string finishReason;
};

/// The identity of one completion: its id ("cmpl-..."), creation time (s
/// since the epoch) and model.
struct CompletionId {
  std::string id;
  int64_t created;
  std::string model;
};

/// The completion object of a request whose choices all finished.
std::string completionBody(const CompletionId &id,
                           const CompletionRequest &request,
                           llvm::ArrayRef<ChoiceResult> choices);
/// One server-sent event of a stream: choice \p index's new \p tokens and
/// the \p text they settled, and its finish reason when it ended
/// ("data: {...}\n\n").
std::string streamChunk(const CompletionId &id, int64_t index,
                        llvm::ArrayRef<int64_t> tokens, llvm::StringRef text,
                        llvm::StringRef finishReason);
/// GET /v2/models/NAME of a language model: no tensors; its parameters say
/// it is one, where it is served, and its contract's sizes.
std::string languageModelMetadata(llvm::StringRef name,
                                  const generate::DecoderContract &contract);
/// GET /v1/models: OpenAI's list of the language models \p names.
std::string modelList(llvm::ArrayRef<std::string> names);
/// {"error":{"message":...,"type":...,"param":null,"code":...}}; \p code
/// empty: null.
std::string openAIError(llvm::StringRef message,
                        llvm::StringRef type = "invalid_request_error",
                        llvm::StringRef code = "");

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_COMPLETIONS_H
