//===- TextStream.cpp - A completion's text as its tokens come ------------===//
//
// Part of Loom. See include/loom/Tokenizer/Tokenizer.h. Each step decodes
// the prompt's last few ids and the completion together and takes what
// follows those ids' own text (a decoder such as Llama's Strip changes only
// the first token, so a few ids of context are as good as the whole
// prompt); O(completion length) a token, whatever the prompt's length,
// which a completion of a few thousand tokens affords.
//
//===----------------------------------------------------------------------===//

#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

const StringRef kReplacement = "\xEF\xBF\xBD";

/// The prompt's ids decoded before the completion's.
constexpr size_t kPromptContext = 8;

/// The longest tail of \p text that begins one of \p stops.
size_t stopPrefixTail(StringRef text, ArrayRef<std::string> stops) {
  size_t longest = 0;
  for (const std::string &stop : stops)
    for (size_t k = std::min(stop.size() - 1, text.size()); k > longest; --k)
      if (text.ends_with(StringRef(stop).take_front(k))) {
        longest = k;
        break;
      }
  return longest;
}

} // namespace

TextStream::TextStream(const Tokenizer &tokenizer, ArrayRef<int64_t> prompt,
                       std::vector<std::string> stopStrings)
    : tokenizer(tokenizer),
      ids(prompt.take_back(kPromptContext).begin(), prompt.end()),
      promptIds(ids.size()) {
  for (std::string &s : stopStrings)
    if (!s.empty())
      stops.push_back(std::move(s));
  // An id the tokenizer lacks in the context: the completion is decoded
  // alone (push's fallback).
  if (auto text = tokenizer.decode(ids, /*skipSpecialTokens=*/true))
    promptText = std::move(*text);
  else
    consumeError(text.takeError());
}

Expected<std::string> TextStream::push(int64_t id) {
  if (hitStop)
    return std::string();
  ids.push_back(id);
  auto all = tokenizer.decode(ids, /*skipSpecialTokens=*/true);
  if (!all) {
    ids.pop_back(); // the stream goes on without it
    return all.takeError();
  }
  if (StringRef(*all).starts_with(promptText)) {
    decoded = all->substr(promptText.size());
  } else {
    auto own = tokenizer.decode(ArrayRef(ids).drop_front(promptIds), true);
    if (!own)
      return own.takeError();
    decoded = std::move(*own);
  }
  // The first stop string to appear ends the text before it. What was
  // given holds no stop string and ends in no start of one, so one can
  // only start after it.
  size_t cut = std::string::npos;
  for (const std::string &stop : stops)
    cut = std::min(cut, decoded.find(stop, given.size()));
  StringRef settled = decoded;
  if (cut != std::string::npos) {
    hitStop = true;
    settled = settled.take_front(cut);
  } else {
    // A character still being spelt, or what may become a stop string,
    // waits for the next token.
    while (settled.ends_with(kReplacement))
      settled = settled.drop_back(kReplacement.size());
    settled = settled.drop_back(stopPrefixTail(settled, stops));
  }
  if (settled.size() <= given.size() || !settled.starts_with(given))
    return std::string();
  std::string fresh = settled.drop_front(given.size()).str();
  given += fresh;
  return fresh;
}

std::string TextStream::finish() {
  StringRef all = decoded;
  if (hitStop || all.size() <= given.size() || !all.starts_with(given))
    return std::string();
  std::string rest = all.drop_front(given.size()).str();
  given += rest;
  return rest;
}
