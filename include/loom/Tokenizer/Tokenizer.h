//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// Part of Loom. A tokenizer read from a HuggingFace `tokenizer.json` (the
// file language models ship with), applied as the `tokenizers` library
// applies it (docs/Tokenizer.md): added tokens split out first, then the
// normalizer, the pre-tokenizer, the BPE model and the post-processor; ids
// back to text through the decoder. What a file asks for and Loom does not
// do (another model type, a normalizer that needs Unicode tables) is
// refused when the file is read, with where in the file it is, never
// approximated.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOKENIZER_TOKENIZER_H
#define LOOM_TOKENIZER_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom::tokenizer {

struct TokenizerImpl;

class Tokenizer {
public:
  /// Reads \p path; an error names the file and, for what it cannot apply,
  /// the JSON path of the component ("pre_tokenizer.pretokenizers[1]").
  static llvm::Expected<Tokenizer> load(llvm::StringRef path);
  /// The same from the file's text; \p name is what errors call it.
  static llvm::Expected<Tokenizer> parse(llvm::StringRef text,
                                         llvm::StringRef name);

  Tokenizer(Tokenizer &&);
  Tokenizer &operator=(Tokenizer &&);
  ~Tokenizer();

  /// The ids of \p text; with \p addSpecialTokens the post-processor's
  /// tokens around them (a beginning-of-sequence token, say), as
  /// `tokenizer.encode(text)` gives them. Text that is not UTF-8 is an
  /// error that says at which byte.
  llvm::Expected<std::vector<int64_t>>
  encode(llvm::StringRef text, bool addSpecialTokens = true) const;
  /// The text of \p ids through the decoder; \p skipSpecialTokens drops the
  /// added tokens marked special. Bytes that are not UTF-8 (a character
  /// cut between two ids) come out as U+FFFD, as `tokenizers` writes them.
  /// Ids no token has are an error.
  llvm::Expected<std::string> decode(llvm::ArrayRef<int64_t> ids,
                                     bool skipSpecialTokens = false) const;

  /// One more than the largest id of a token (the model's and the added).
  int64_t vocabSize() const;
  /// The id of the token spelt \p token (a model's or an added one).
  std::optional<int64_t> tokenId(llvm::StringRef token) const;
  /// Whether \p id is an added token marked special (an end of text, say).
  bool isSpecial(int64_t id) const;

private:
  explicit Tokenizer(std::unique_ptr<TokenizerImpl> impl);
  std::unique_ptr<TokenizerImpl> impl;
};

/// The text of a sequence's generated tokens as they come, as servers
/// stream it: each step gives what is new and settled. Text is decoded
/// after the prompt's last few ids (a decoder may drop a leading space of
/// the first token only), skipping special tokens; a tail that ends inside a
/// character (U+FFFD) waits for the next token; with stop strings, a tail
/// that may still become one waits too, and the first stop string that
/// appears ends the text before it.
class TextStream {
public:
  TextStream(const Tokenizer &tokenizer, llvm::ArrayRef<int64_t> prompt,
             std::vector<std::string> stops = {});

  /// Takes the next generated id; returns the text it settled (maybe
  /// empty). After a stop string appeared, nothing more. An id the
  /// tokenizer lacks is an error, and the stream goes on as if it had not
  /// come.
  llvm::Expected<std::string> push(int64_t id);
  /// The text not given yet, once no id will follow (a held tail, or the
  /// U+FFFD of a character the sequence never finished).
  std::string finish();
  /// Whether a stop string appeared.
  bool stopped() const { return hitStop; }
  /// Everything given so far (what push and finish returned, joined).
  const std::string &text() const { return given; }

private:
  const Tokenizer &tokenizer;
  /// The prompt's last ids (the context), then the completion's.
  std::vector<int64_t> ids;
  size_t promptIds;
  std::string promptText;
  std::vector<std::string> stops;
  /// The completion's text as last decoded, and how much of it was given.
  std::string decoded, given;
  bool hitStop = false;
};

} // namespace loom::tokenizer

#endif // LOOM_TOKENIZER_TOKENIZER_H
