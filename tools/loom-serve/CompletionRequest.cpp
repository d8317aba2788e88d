//===- CompletionRequest.cpp - Reading a completion request ---------------===//
//
// Part of Loom. See Completions.h. OpenAI's fields with OpenAI's defaults
// (max_tokens 16, temperature 1, top_p 1); top_k, seed and stop_token_ids
// as vLLM spells them; fields the server does not read are ignored, those
// it cannot honour (n > 1, echo, logprobs) refused by name. Text prompts
// and stop strings are read here and need the model's tokenizer, which
// applyTokenizer brings in once the model is known.
//
//===----------------------------------------------------------------------===//

#include "Completions.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace loom;
using namespace loom::serve;
namespace json = llvm::json;

namespace {

HttpError bad(std::string message) { return {400, std::move(message)}; }

const char *kPromptKinds =
    "\"prompt\" must be text or token ids: a string, a list of strings, a "
    "list of integers or a list of lists of integers";

/// A list of integers into \p ids; false when \p v is not one.
bool readIds(const json::Value &v, std::vector<int64_t> &ids) {
  const json::Array *a = v.getAsArray();
  if (!a)
    return false;
  for (const json::Value &x : *a) {
    std::optional<int64_t> n = x.getAsInteger();
    if (!n)
      return false;
    ids.push_back(*n);
  }
  return true;
}

/// A string or a list of strings into \p out; false when \p v is neither.
bool readStrings(const json::Value &v, std::vector<std::string> &out) {
  if (std::optional<llvm::StringRef> s = v.getAsString()) {
    out.push_back(s->str());
    return true;
  }
  const json::Array *a = v.getAsArray();
  if (!a || a->empty() || !(*a)[0].getAsString())
    return false;
  for (const json::Value &x : *a) {
    std::optional<llvm::StringRef> s = x.getAsString();
    if (!s)
      return false;
    out.push_back(s->str());
  }
  return true;
}

/// "prompt": text (a string, or a list of them: one prompt each) or ids (a
/// list of integers, or a list of such lists).
std::optional<HttpError> readPrompts(const json::Object &root,
                                     CompletionRequest &request) {
  const json::Value *prompt = root.get("prompt");
  if (!prompt)
    return bad("the request has no \"prompt\"");
  const json::Array *list = prompt->getAsArray();
  std::vector<int64_t> ids;
  if (readStrings(*prompt, request.promptTexts)) {
    for (size_t i = 0; i < request.promptTexts.size(); ++i)
      if (request.promptTexts[i].empty())
        return bad(llvm::formatv("prompt {0} is empty: a prompt has at least "
                                 "one character",
                                 i));
    return std::nullopt;
  }
  if (list && !list->empty() && (*list)[0].getAsArray()) {
    for (const json::Value &p : *list) {
      ids.clear();
      if (!readIds(p, ids))
        return bad(kPromptKinds);
      request.prompts.push_back(ids);
    }
  } else if (list && readIds(*prompt, ids)) {
    request.prompts.push_back(ids);
  } else {
    return bad(kPromptKinds);
  }
  if (request.prompts.empty())
    return bad("\"prompt\" holds no prompt");
  for (size_t i = 0; i < request.prompts.size(); ++i)
    if (request.prompts[i].empty())
      return bad(llvm::formatv("prompt {0} is empty: a prompt has at least "
                               "one token",
                               i));
  return std::nullopt;
}

/// An optional number field (absent or null: \p value is left alone).
std::optional<HttpError> readNumber(const json::Object &root,
                                    llvm::StringRef key, double &value) {
  const json::Value *v = root.get(key);
  if (!v || v->kind() == json::Value::Null)
    return std::nullopt;
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return bad(("\"" + key + "\" must be a number").str());
  value = *d;
  return std::nullopt;
}

std::optional<HttpError> readInteger(const json::Object &root,
                                     llvm::StringRef key, int64_t &value) {
  const json::Value *v = root.get(key);
  if (!v || v->kind() == json::Value::Null)
    return std::nullopt;
  std::optional<int64_t> n = v->getAsInteger();
  if (!n)
    return bad(("\"" + key + "\" must be an integer").str());
  value = *n;
  return std::nullopt;
}

/// What the server cannot honour: n > 1, echo, logprobs.
std::optional<HttpError> refuseUnsupported(const json::Object &root) {
  int64_t n = 1;
  if (std::optional<HttpError> e = readInteger(root, "n", n))
    return e;
  if (n != 1)
    return bad("\"n\" other than 1 is not supported: give the prompt "
               "several times in a list of prompts");
  if (root.getBoolean("echo").value_or(false))
    return bad("\"echo\" is not supported");
  const json::Value *logprobs = root.get("logprobs");
  if (logprobs && logprobs->kind() != json::Value::Null &&
      logprobs->getAsBoolean() != false)
    return bad("\"logprobs\" is not supported");
  return std::nullopt;
}

std::optional<HttpError> readSampling(const json::Object &root,
                                      uint64_t randomSeed,
                                      generate::SamplingOptions &s) {
  s.temperature = 1.0;
  if (std::optional<HttpError> e =
          readNumber(root, "temperature", s.temperature))
    return e;
  if (std::optional<HttpError> e = readNumber(root, "top_p", s.topP))
    return e;
  if (std::optional<HttpError> e = readInteger(root, "top_k", s.topK))
    return e;
  int64_t seed = int64_t(randomSeed);
  if (std::optional<HttpError> e = readInteger(root, "seed", seed))
    return e;
  s.seed = uint64_t(seed);
  if (!(s.temperature >= 0))
    return bad(llvm::formatv("\"temperature\" must be at least 0, got {0}",
                             s.temperature));
  if (!(s.topP > 0 && s.topP <= 1))
    return bad(llvm::formatv("\"top_p\" must be in (0, 1], got {0}", s.topP));
  if (s.topK < -1)
    return bad(llvm::formatv("\"top_k\" must be at least -1 (-1 and 0: "
                             "every token), got {0}",
                             s.topK));
  s.topK = std::max<int64_t>(s.topK, 0);
  s.sample = s.temperature > 0;
  return std::nullopt;
}

} // namespace

std::optional<HttpError>
serve::parseCompletionRequest(llvm::StringRef body, uint64_t randomSeed,
                              CompletionRequest &request) {
  std::optional<json::Value> parsed;
  if (std::optional<HttpError> e = parseJsonBody(body, parsed))
    return e;
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return bad("the request is not a JSON object");
  std::optional<llvm::StringRef> model = root->getString("model");
  if (!model)
    return bad("the request has no \"model\" string");
  request.model = model->str();
  if (std::optional<HttpError> e = readPrompts(*root, request))
    return e;
  if (std::optional<HttpError> e =
          readInteger(*root, "max_tokens", request.maxTokens))
    return e;
  if (request.maxTokens < 1)
    return bad(llvm::formatv("\"max_tokens\" must be at least 1, got {0}",
                             request.maxTokens));
  if (std::optional<HttpError> e =
          readSampling(*root, randomSeed, request.sampling))
    return e;
  if (const json::Value *stream = root->get("stream");
      stream && stream->kind() != json::Value::Null) {
    std::optional<bool> b = stream->getAsBoolean();
    if (!b)
      return bad("\"stream\" must be true or false");
    request.stream = *b;
  }
  if (const json::Value *stop = root->get("stop_token_ids");
      stop && stop->kind() != json::Value::Null &&
      !readIds(*stop, request.stopTokenIds))
    return bad("\"stop_token_ids\" must be a list of integers");
  if (const json::Value *stop = root->get("stop");
      stop && stop->kind() != json::Value::Null &&
      !(stop->getAsArray() && stop->getAsArray()->empty()) &&
      !readStrings(*stop, request.stopStrings))
    return bad("\"stop\" must be a string or a list of strings");
  for (const std::string &s : request.stopStrings)
    if (s.empty())
      return bad("a \"stop\" string is empty");
  return refuseUnsupported(*root);
}

std::optional<HttpError>
serve::applyTokenizer(CompletionRequest &request,
                      const tokenizer::Tokenizer *tokenizer) {
  if (!tokenizer && !request.promptTexts.empty())
    return bad("model '" + request.model +
               "' has no tokenizer (loom-serve --tokenizer " + request.model +
               "=tokenizer.json): give \"prompt\" as token ids, a list of "
               "integers or a list of such lists");
  if (!tokenizer && !request.stopStrings.empty())
    return bad("model '" + request.model +
               "' has no tokenizer (loom-serve --tokenizer " + request.model +
               "=tokenizer.json) to find \"stop\" strings in its text: give "
               "\"stop_token_ids\"");
  for (size_t i = 0; i < request.promptTexts.size(); ++i) {
    auto ids = tokenizer->encode(request.promptTexts[i]);
    if (!ids)
      return bad(llvm::formatv("prompt {0}: {1}", i,
                               llvm::toString(ids.takeError())));
    if (ids->empty())
      return bad(llvm::formatv("prompt {0} encodes to no token", i));
    request.prompts.push_back(std::move(*ids));
  }
  return std::nullopt;
}

std::optional<HttpError>
serve::checkAgainstContract(const CompletionRequest &request,
                            const generate::DecoderContract &contract) {
  auto outside = [&](int64_t id) { return id < 0 || id >= contract.vocab; };
  for (size_t i = 0; i < request.prompts.size(); ++i) {
    const std::vector<int64_t> &prompt = request.prompts[i];
    for (size_t k = 0; k < prompt.size(); ++k)
      if (outside(prompt[k]))
        return bad(llvm::formatv("prompt {0}: token id {1} (at {2}) is "
                                 "outside the vocabulary [0, {3})",
                                 i, prompt[k], k, contract.vocab));
    int64_t length = int64_t(prompt.size());
    if (!contract.chunked() && length > contract.promptBound)
      return bad(llvm::formatv("prompt {0} has {1} tokens, past the prompt "
                               "bound {2} of a prefill that takes no "
                               "positions",
                               i, length, contract.promptBound));
    if (length + request.maxTokens > contract.capacity)
      return bad(llvm::formatv("prompt {0}: {1} prompt tokens + {2} "
                               "max_tokens need {3} positions, the cache "
                               "holds {4}",
                               i, length, request.maxTokens,
                               length + request.maxTokens, contract.capacity));
  }
  for (int64_t id : request.stopTokenIds)
    if (outside(id))
      return bad(llvm::formatv("stop token id {0} is outside the vocabulary "
                               "[0, {1})",
                               id, contract.vocab));
  return std::nullopt;
}
