//===- Components.h - The stages of a tokenizer.json ------------*- C++ -*-===//
//
// Part of Loom. What lib/Tokenizer's files share: where a component is in
// the file (for errors), a compiled pattern, and the stages a tokenizer
// applies in order. Each stage is read from its JSON object by the file
// that applies it; a `type` it does not know is refused with the types it
// does.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TOKENIZER_COMPONENTS_H
#define LOOM_LIB_TOKENIZER_COMPONENTS_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::tokenizer {

/// A component's place in the file: "tokenizer.json: pre_tokenizer.
/// pretokenizers[1]".
class Where {
public:
  Where(std::string file, std::string path)
      : file(std::move(file)), path(std::move(path)) {}
  Where key(llvm::StringRef k) const;
  Where index(size_t i) const;
  llvm::Error error(const llvm::Twine &message) const;

  /// \p object's member \p k as a string, a bool, an integer; absent or of
  /// another kind: an error that says which.
  llvm::Expected<llvm::StringRef> string(const llvm::json::Object &object,
                                         llvm::StringRef k) const;
  llvm::Expected<bool> boolean(const llvm::json::Object &object,
                               llvm::StringRef k,
                               std::optional<bool> fallback) const;
  llvm::Expected<const llvm::json::Object *>
  object(const llvm::json::Value &value) const;

private:
  std::string file, path;
};

/// A search pattern of the file: {"String": s} (literal) or {"Regex": r}
/// (Oniguruma's syntax, as `tokenizers` compiles it).
class Pattern {
public:
  static llvm::Expected<Pattern> read(const llvm::json::Value &value,
                                      const Where &where);
  static llvm::Expected<Pattern> regex(llvm::StringRef source,
                                       const Where &where);
  static Pattern literalOf(llvm::StringRef text);
  /// \p o's member "pattern".
  static llvm::Expected<Pattern> member(const llvm::json::Object &o,
                                        const Where &where);
  Pattern(Pattern &&);
  Pattern &operator=(Pattern &&);
  ~Pattern();
  /// The non-overlapping matches in \p text, left to right, as byte
  /// ranges [begin, end). An empty pattern matches nothing.
  std::vector<std::pair<size_t, size_t>> matches(llvm::StringRef text) const;

private:
  Pattern();
  std::string literal;
  /// An OnigRegex when the pattern is a regular expression.
  void *compiled = nullptr;
};

/// A pattern and what replaces its matches (the Replace normalizer and
/// decoder): {"pattern": ..., "content": ...}.
class Replacement {
public:
  static llvm::Expected<Replacement> read(const llvm::json::Object &o,
                                          const Where &where);
  std::string apply(llvm::StringRef text) const;

private:
  Replacement(Pattern pattern, std::string content)
      : pattern(std::move(pattern)), content(std::move(content)) {}
  Pattern pattern;
  std::string content;
};

/// A stretch of the text: an added token (its id) or text between them.
struct Piece {
  std::string text;
  std::optional<int64_t> addedId;
};

//===----------------------------------------------------------------------===//
// The stages
//===----------------------------------------------------------------------===//

/// Reads one stage of a kind that is not a Sequence from its \p type: a
/// stage, nullptr for one that changes nothing, or an error (a type the
/// file's reader does not know).
template <typename Stage>
using StageReader = llvm::function_ref<llvm::Expected<std::unique_ptr<Stage>>(
    llvm::StringRef type, const llvm::json::Object &o, const Where &where)>;

/// A stage object, a Sequence's stages (its list under \p listKey) in order.
template <typename Stage>
llvm::Error readStage(const llvm::json::Value &value, const Where &where,
                      llvm::StringRef listKey, StageReader<Stage> readOfType,
                      std::vector<std::unique_ptr<Stage>> &out) {
  auto o = where.object(value);
  if (!o)
    return o.takeError();
  auto type = where.string(**o, "type");
  if (!type)
    return type.takeError();
  if (*type == "Sequence") {
    const llvm::json::Array *list = (*o)->getArray(listKey);
    if (!list)
      return where.key(listKey).error("is not a list");
    for (size_t i = 0; i < list->size(); ++i)
      if (llvm::Error e = readStage((*list)[i], where.key(listKey).index(i),
                                    listKey, readOfType, out))
        return e;
    return llvm::Error::success();
  }
  auto one = readOfType(*type, **o, where);
  if (!one)
    return one.takeError();
  if (*one)
    out.push_back(std::move(*one));
  return llvm::Error::success();
}

/// The stages of a pipeline member (\p value null or absent: none).
template <typename Stage>
llvm::Expected<std::vector<std::unique_ptr<Stage>>>
readStages(const llvm::json::Value *value, const Where &where,
           llvm::StringRef listKey, StageReader<Stage> readOfType) {
  std::vector<std::unique_ptr<Stage>> out;
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::move(out);
  if (llvm::Error e = readStage(*value, where, listKey, readOfType, out))
    return std::move(e);
  return std::move(out);
}

class Normalizer {
public:
  virtual ~Normalizer() = default;
  virtual void apply(std::string &text) const = 0;
};
/// null: none; a Sequence: its stages in order.
llvm::Expected<std::vector<std::unique_ptr<Normalizer>>>
readNormalizers(const llvm::json::Value *value, const Where &where);

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Splits and rewrites \p words; \p first says whether the words come
  /// from the first piece of the text (Metaspace's "first" scheme).
  virtual void apply(std::vector<std::string> &words, bool first) const = 0;
};
llvm::Expected<std::vector<std::unique_ptr<PreTokenizer>>>
readPreTokenizers(const llvm::json::Value *value, const Where &where);

/// The BPE model: a word (one pre-token) to ids.
class Bpe {
public:
  static llvm::Expected<Bpe> read(const llvm::json::Object &model,
                                  const Where &where);
  void encode(llvm::StringRef word, std::vector<int64_t> &ids) const;
  const llvm::StringMap<int64_t> &vocab() const { return tokens; }
  /// The token spelt by \p id, when the vocabulary has one.
  std::optional<llvm::StringRef> token(int64_t id) const;

private:
  struct Merge {
    int64_t rank, result;
  };
  void addSymbols(llvm::StringRef word, std::vector<int64_t> &symbols) const;
  void mergeAll(std::vector<int64_t> &symbols) const;

  llvm::StringMap<int64_t> tokens;
  llvm::DenseMap<int64_t, llvm::StringRef> spelling;
  llvm::DenseMap<std::pair<int64_t, int64_t>, Merge> merges;
  std::optional<int64_t> unknown;
  std::string prefix, suffix;
  bool byteFallback = false, fuseUnknown = false, ignoreMerges = false;
};

class PostProcessor {
public:
  virtual ~PostProcessor() = default;
  /// Adds the special tokens of a single sequence around \p ids.
  virtual void apply(std::vector<int64_t> &ids) const = 0;
};
llvm::Expected<std::vector<std::unique_ptr<PostProcessor>>>
readPostProcessors(const llvm::json::Value *value, const Where &where);

class Decoder {
public:
  virtual ~Decoder() = default;
  /// Rewrites the tokens' text, as `tokenizers`' decode_chain does.
  virtual void apply(std::vector<std::string> &tokens) const = 0;
};
llvm::Expected<std::vector<std::unique_ptr<Decoder>>>
readDecoders(const llvm::json::Value *value, const Where &where);

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

/// The length in bytes of the UTF-8 character that starts \p text (1 for a
/// byte that starts none).
size_t characterLength(llvm::StringRef text);
/// \p text with every byte as GPT-2's byte-level alphabet spells it, and
/// back (a character outside the alphabet: false).
std::string toByteLevel(llvm::StringRef text);
bool fromByteLevel(llvm::StringRef text, std::string &bytes);
/// \p bytes as UTF-8, each invalid sequence replaced by U+FFFD the way
/// Rust's String::from_utf8_lossy does.
std::string lossyUtf8(llvm::StringRef bytes);
/// Whether \p bytes is valid UTF-8, and where it stops being.
bool isUtf8(llvm::StringRef bytes);
std::optional<size_t> firstInvalidUtf8(llvm::StringRef bytes);
/// Whitespace as Rust's char::is_whitespace sees it, of the character that
/// starts \p text (\p length set to its bytes).
bool isWhitespace(llvm::StringRef text, size_t &length);

} // namespace loom::tokenizer

#endif // LOOM_LIB_TOKENIZER_COMPONENTS_H
