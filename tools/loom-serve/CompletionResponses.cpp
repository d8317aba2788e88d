//===- CompletionResponses.cpp - Completion objects and stream chunks -----===//
//
// Part of Loom. See Completions.h. The generated ids are in each choice's
// "token_ids" (an extension), its text in "text" (empty when the model has
// no tokenizer).
//
//===----------------------------------------------------------------------===//

#include "Completions.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom;
using namespace loom::serve;
namespace json = llvm::json;

namespace {

/// The fields every completion object and chunk starts with.
void writeHead(json::OStream &j, const CompletionId &id) {
  j.attribute("id", id.id);
  j.attribute("object", "text_completion");
  j.attribute("created", id.created);
  j.attribute("model", id.model);
}

void writeChoice(json::OStream &j, int64_t index,
                 llvm::ArrayRef<int64_t> tokens, llvm::StringRef text,
                 llvm::StringRef finish) {
  j.object([&] {
    j.attribute("index", index);
    j.attribute("text", text);
    j.attributeArray("token_ids", [&] {
      for (int64_t t : tokens)
        j.value(t);
    });
    j.attribute("logprobs", nullptr);
    if (finish.empty())
      j.attribute("finish_reason", nullptr);
    else
      j.attribute("finish_reason", finish);
  });
}

} // namespace

std::string ChoiceResult::text() const {
  std::string all;
  for (const std::string &p : pieces)
    all += p;
  return all;
}

std::string serve::completionBody(const CompletionId &id,
                                  const CompletionRequest &request,
                                  llvm::ArrayRef<ChoiceResult> choices) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  int64_t promptTokens = 0, completionTokens = 0;
  for (const std::vector<int64_t> &p : request.prompts)
    promptTokens += int64_t(p.size());
  for (const ChoiceResult &c : choices)
    completionTokens += int64_t(c.tokens.size());
  j.object([&] {
    writeHead(j, id);
    j.attributeArray("choices", [&] {
      for (size_t i = 0; i < choices.size(); ++i)
        writeChoice(j, int64_t(i), choices[i].tokens, choices[i].text(),
                    choices[i].finishReason);
    });
    j.attributeObject("usage", [&] {
      j.attribute("prompt_tokens", promptTokens);
      j.attribute("completion_tokens", completionTokens);
      j.attribute("total_tokens", promptTokens + completionTokens);
    });
  });
  os.flush();
  return text;
}

std::string serve::streamChunk(const CompletionId &id, int64_t index,
                               llvm::ArrayRef<int64_t> tokens,
                               llvm::StringRef text,
                               llvm::StringRef finishReason) {
  std::string event = "data: ";
  llvm::raw_string_ostream os(event);
  json::OStream j(os);
  j.object([&] {
    writeHead(j, id);
    j.attributeArray("choices",
                     [&] { writeChoice(j, index, tokens, text, finishReason); });
  });
  os << "\n\n";
  os.flush();
  return event;
}

std::string
serve::languageModelMetadata(llvm::StringRef name,
                             const generate::DecoderContract &contract) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attribute("name", name);
    j.attributeArray("versions", [&] { j.value("1"); });
    j.attribute("platform", "loom");
    j.attributeArray("inputs", [] {});
    j.attributeArray("outputs", [] {});
    j.attributeObject("parameters", [&] {
      j.attribute("language_model", true);
      j.attribute("endpoint", "/v1/completions");
      j.attribute("slots", contract.batch);
      j.attribute("prompt_bound", contract.promptBound);
      j.attribute("vocab", contract.vocab);
      j.attribute("capacity", contract.capacity);
    });
  });
  os.flush();
  return text;
}

std::string serve::modelList(llvm::ArrayRef<std::string> names) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attribute("object", "list");
    j.attributeArray("data", [&] {
      for (const std::string &name : names)
        j.object([&] {
          j.attribute("id", name);
          j.attribute("object", "model");
          j.attribute("created", 0);
          j.attribute("owned_by", "loom");
        });
    });
  });
  os.flush();
  return text;
}

std::string serve::openAIError(llvm::StringRef message, llvm::StringRef type,
                               llvm::StringRef code) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attributeObject("error", [&] {
      j.attribute("message", message);
      j.attribute("type", type);
      j.attribute("param", nullptr);
      if (code.empty())
        j.attribute("code", nullptr);
      else
        j.attribute("code", code);
    });
  });
  os.flush();
  return text;
}
