//===- PreTokenizers.cpp - A tokenizer.json's "pre_tokenizer" -------------===//
//
// Part of Loom. See Components.h. ByteLevel (GPT-2's split and byte
// alphabet), Split (a pattern and what becomes of its matches), Metaspace
// (SentencePiece's "▁") and Sequence of them, as `tokenizers` applies
// them to each piece of the text between added tokens.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

/// What Split does with a match (`tokenizers`' SplitDelimiterBehavior).
enum class Behavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

std::optional<Behavior> behaviorNamed(StringRef name) {
  return StringSwitch<std::optional<Behavior>>(name)
      .Case("Removed", Behavior::Removed)
      .Case("Isolated", Behavior::Isolated)
      .Case("MergedWithPrevious", Behavior::MergedWithPrevious)
      .Case("MergedWithNext", Behavior::MergedWithNext)
      .Case("Contiguous", Behavior::Contiguous)
      .Default(std::nullopt);
}

using Segment = std::pair<std::pair<size_t, size_t>, bool>;

/// \p text cut at \p pattern's matches into segments covering all of it,
/// each marked a match (or, inverted, a non-match).
std::vector<Segment> segments(const Pattern &pattern, StringRef text,
                              bool invert) {
  std::vector<Segment> out;
  if (text.empty())
    return {{{0, 0}, false}};
  size_t previous = 0;
  for (auto [b, e] : pattern.matches(text)) {
    if (previous != b)
      out.push_back({{previous, b}, invert});
    out.push_back({{b, e}, !invert});
    previous = e;
  }
  if (previous != text.size())
    out.push_back({{previous, text.size()}, invert});
  return out;
}

/// The pieces Split keeps of \p all, as `tokenizers`' NormalizedString::
/// split forms them; empty pieces are dropped.
std::vector<std::pair<size_t, size_t>> split(std::vector<Segment> all,
                                             Behavior behavior) {
  std::vector<Segment> kept;
  bool previousMatch = false;
  switch (behavior) {
  case Behavior::Isolated:
    kept = std::move(all);
    break;
  case Behavior::Removed:
    for (const Segment &s : all)
      if (!s.second)
        kept.push_back(s);
    break;
  case Behavior::MergedWithPrevious:
    for (const Segment &s : all) {
      if (s.second && !previousMatch && !kept.empty())
        kept.back().first.second = s.first.second;
      else
        kept.push_back({s.first, false});
      previousMatch = s.second;
    }
    break;
  case Behavior::MergedWithNext:
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->second && !previousMatch && !kept.empty())
        kept.back().first.first = it->first.first;
      else
        kept.push_back({it->first, false});
      previousMatch = it->second;
    }
    std::reverse(kept.begin(), kept.end());
    break;
  case Behavior::Contiguous:
    for (const Segment &s : all) {
      if (!kept.empty() && kept.back().second == s.second)
        kept.back().first.second = s.first.second;
      else
        kept.push_back(s);
    }
    break;
  }
  std::vector<std::pair<size_t, size_t>> out;
  for (const Segment &s : kept)
    if (s.first.first != s.first.second)
      out.push_back(s.first);
  return out;
}

/// Every word of \p words cut by \p pattern and \p behavior.
void splitWords(std::vector<std::string> &words, const Pattern &pattern,
                Behavior behavior, bool invert) {
  std::vector<std::string> out;
  for (const std::string &w : words)
    for (auto [b, e] : split(segments(pattern, w, invert), behavior))
      out.push_back(w.substr(b, e - b));
  words = std::move(out);
}

class Split : public PreTokenizer {
public:
  Split(Pattern pattern, Behavior behavior, bool invert)
      : pattern(std::move(pattern)), behavior(behavior), invert(invert) {}
  void apply(std::vector<std::string> &words, bool) const override {
    splitWords(words, pattern, behavior, invert);
  }

private:
  Pattern pattern;
  Behavior behavior;
  bool invert;
};

/// GPT-2's pre-tokenizer: its split (contractions, letters, numbers, other
/// symbols, whitespace), then every byte as the byte-level alphabet spells
/// it.
class ByteLevel : public PreTokenizer {
public:
  ByteLevel(std::optional<Pattern> gpt2, bool addPrefixSpace)
      : gpt2(std::move(gpt2)), addPrefixSpace(addPrefixSpace) {}
  void apply(std::vector<std::string> &words, bool) const override {
    if (addPrefixSpace)
      for (std::string &w : words)
        if (!StringRef(w).starts_with(" "))
          w.insert(0, " ");
    if (gpt2)
      splitWords(words, *gpt2, Behavior::Isolated, false);
    for (std::string &w : words)
      w = toByteLevel(w);
  }

private:
  std::optional<Pattern> gpt2;
  bool addPrefixSpace;
};

/// SentencePiece's convention: spaces become the replacement ("▁"), one is
/// put before the text (always, before the text's first piece only, or
/// never), and each word starts at one.
class Metaspace : public PreTokenizer {
public:
  enum class Scheme { Always, First, Never };
  Metaspace(std::string replacement, Scheme scheme, bool splitAtMarker)
      : replacement(std::move(replacement)), scheme(scheme),
        splits(splitAtMarker), marker(Pattern::literalOf(this->replacement)) {}
  void apply(std::vector<std::string> &words, bool first) const override {
    for (size_t i = 0; i < words.size(); ++i) {
      std::string &w = words[i];
      std::string out;
      for (char c : w)
        if (c == ' ')
          out += replacement;
        else
          out.push_back(c);
      bool prepend = scheme == Scheme::Always ||
                     (scheme == Scheme::First && first && i == 0);
      if (prepend && !StringRef(out).starts_with(replacement))
        out.insert(0, replacement);
      w = std::move(out);
    }
    if (splits)
      splitWords(words, marker, Behavior::MergedWithNext, false);
  }

private:
  std::string replacement;
  Scheme scheme;
  bool splits;
  Pattern marker;
};

const char *kGpt2Split = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
                         "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

Expected<std::unique_ptr<PreTokenizer>> readSplit(const json::Object &o,
                                                  const Where &where) {
  auto pattern = Pattern::member(o, where);
  if (!pattern)
    return pattern.takeError();
  auto name = where.string(o, "behavior");
  if (!name)
    return name.takeError();
  std::optional<Behavior> behavior = behaviorNamed(*name);
  if (!behavior)
    return where.key("behavior").error(
        "'" + *name +
        "' is not Removed, Isolated, MergedWithPrevious, MergedWithNext or "
        "Contiguous");
  auto invert = where.boolean(o, "invert", false);
  if (!invert)
    return invert.takeError();
  return std::make_unique<Split>(std::move(*pattern), *behavior, *invert);
}

Expected<std::unique_ptr<PreTokenizer>> readByteLevel(const json::Object &o,
                                                      const Where &where) {
  auto prefix = where.boolean(o, "add_prefix_space", true);
  auto useRegex = where.boolean(o, "use_regex", true);
  if (!prefix || !useRegex)
    return joinErrors(prefix.takeError(), useRegex.takeError());
  std::optional<Pattern> gpt2;
  if (*useRegex) {
    auto p = Pattern::regex(kGpt2Split, where);
    if (!p)
      return p.takeError();
    gpt2 = std::move(*p);
  }
  return std::make_unique<ByteLevel>(std::move(gpt2), *prefix);
}

Expected<std::unique_ptr<PreTokenizer>> readMetaspace(const json::Object &o,
                                                      const Where &where) {
  auto replacement = where.string(o, "replacement");
  if (!replacement)
    return replacement.takeError();
  auto splits = where.boolean(o, "split", true);
  if (!splits)
    return splits.takeError();
  // Files before tokenizers 0.19 say add_prefix_space instead.
  Metaspace::Scheme scheme = Metaspace::Scheme::Always;
  if (std::optional<StringRef> s = o.getString("prepend_scheme")) {
    if (*s == "first")
      scheme = Metaspace::Scheme::First;
    else if (*s == "never")
      scheme = Metaspace::Scheme::Never;
    else if (*s != "always")
      return where.key("prepend_scheme")
          .error("'" + *s + "' is not always, first or never");
  } else {
    auto prefix = where.boolean(o, "add_prefix_space", true);
    if (!prefix)
      return prefix.takeError();
    if (!*prefix)
      scheme = Metaspace::Scheme::Never;
  }
  return std::make_unique<Metaspace>(replacement->str(), scheme, *splits);
}

Expected<std::unique_ptr<PreTokenizer>>
readOfType(StringRef type, const json::Object &o, const Where &where) {
  if (type == "Split")
    return readSplit(o, where);
  if (type == "ByteLevel")
    return readByteLevel(o, where);
  if (type == "Metaspace")
    return readMetaspace(o, where);
  return where.error("pre-tokenizer '" + type +
                     "' is not supported (Loom applies ByteLevel, Split, "
                     "Metaspace and Sequence)");
}

} // namespace

Expected<std::vector<std::unique_ptr<PreTokenizer>>>
loom::tokenizer::readPreTokenizers(const json::Value *value,
                                   const Where &where) {
  return readStages<PreTokenizer>(value, where, "pretokenizers", readOfType);
}
