//===- Tokenizer.cpp - A tokenizer.json read and applied ------------------===//
//
// Part of Loom. See include/loom/Tokenizer/Tokenizer.h and
// docs/Tokenizer.md. Encoding follows `tokenizers`' order: the text is cut
// at its added tokens (leftmost, longest first; lstrip, rstrip and
// single_word as the file says), the pieces between them are normalized
// (then cut at the added tokens marked `normalized`), pre-tokenized into
// words, and each word is encoded by the BPE model; the post-processor puts
// its special tokens around the ids.
//
//===----------------------------------------------------------------------===//

#include "loom/Tokenizer/Tokenizer.h"

#include "Components.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

struct AddedToken {
  int64_t id;
  std::string content;
  bool special, lstrip, rstrip, singleWord, normalized;
};

/// Whether the character that ends (or starts) \p text is a letter or a
/// number, as Rust's char::is_alphanumeric says.
bool wordCharacterAt(StringRef text, bool atEnd) {
  static const Pattern word =
      cantFail(Pattern::regex("\\A[\\p{Alphabetic}\\p{N}]\\z", Where("", "")));
  if (text.empty())
    return false;
  size_t start = 0;
  if (atEnd) {
    start = text.size() - 1;
    while (start > 0 && (uint8_t(text[start]) & 0xC0) == 0x80)
      --start;
  }
  StringRef c = text.substr(start, characterLength(text.drop_front(start)));
  return !word.matches(c).empty();
}

/// Where the whitespace that ends \p text starts.
size_t trailingWhitespace(StringRef text) {
  size_t at = text.size();
  while (at > 0) {
    size_t start = at - 1;
    while (start > 0 && (uint8_t(text[start]) & 0xC0) == 0x80)
      --start;
    size_t length;
    if (!isWhitespace(text.substr(start, at - start), length))
      break;
    at = start;
  }
  return at;
}

/// The length of the whitespace that starts \p text.
size_t leadingWhitespace(StringRef text) {
  size_t at = 0, length = 0;
  while (at < text.size() && isWhitespace(text.drop_front(at), length))
    at += length;
  return at;
}

} // namespace

namespace loom::tokenizer {

struct TokenizerImpl {
  std::vector<AddedToken> added;
  DenseMap<int64_t, size_t> addedById;
  StringMap<int64_t> addedByContent;
  std::vector<std::unique_ptr<Normalizer>> normalizers;
  std::vector<std::unique_ptr<PreTokenizer>> preTokenizers;
  std::optional<Bpe> bpe;
  std::vector<std::unique_ptr<PostProcessor>> postProcessors;
  std::vector<std::unique_ptr<Decoder>> decoders;
  int64_t vocabSize = 0;

  Error readAdded(const json::Value *value, const Where &where);
  void cutAtAdded(StringRef text, bool normalizedTokens,
                  std::vector<Piece> &out) const;
  void encodePiece(std::string text, bool first,
                   std::vector<int64_t> &ids) const;
};

} // namespace loom::tokenizer

Error TokenizerImpl::readAdded(const json::Value *value, const Where &where) {
  if (!value || value->kind() == json::Value::Null)
    return Error::success();
  const json::Array *list = value->getAsArray();
  if (!list)
    return where.error("is not a list");
  for (size_t i = 0; i < list->size(); ++i) {
    Where at = where.index(i);
    auto o = at.object((*list)[i]);
    if (!o)
      return o.takeError();
    std::optional<int64_t> id = (*o)->getInteger("id");
    auto content = at.string(**o, "content");
    if (!content)
      return content.takeError();
    if (!id || *id < 0)
      return at.key("id").error("is not an id (an integer at least 0)");
    if (content->empty())
      return at.key("content").error("is empty");
    AddedToken t{*id, content->str(), false, false, false, false, false};
    bool *flags[] = {&t.special, &t.lstrip, &t.rstrip, &t.singleWord,
                     &t.normalized};
    const char *names[] = {"special", "lstrip", "rstrip", "single_word",
                           "normalized"};
    for (int k = 0; k < 5; ++k) {
      auto b = at.boolean(**o, names[k], k == 4 ? !t.special : false);
      if (!b)
        return b.takeError();
      *flags[k] = *b;
    }
    addedById[t.id] = added.size();
    addedByContent[t.content] = t.id;
    added.push_back(std::move(t));
  }
  return Error::success();
}

void TokenizerImpl::cutAtAdded(StringRef text, bool normalizedTokens,
                               std::vector<Piece> &out) const {
  size_t from = 0; // the start of the text not cut yet
  size_t scan = 0;
  while (scan < text.size()) {
    // The longest added token that starts here.
    const AddedToken *best = nullptr;
    for (const AddedToken &t : added)
      if (t.normalized == normalizedTokens &&
          text.drop_front(scan).starts_with(t.content) &&
          (!best || t.content.size() > best->content.size()))
        best = &t;
    if (!best) {
      ++scan;
      continue;
    }
    size_t start = scan, stop = scan + best->content.size();
    if (best->singleWord && (wordCharacterAt(text.take_front(start), true) ||
                             wordCharacterAt(text.drop_front(stop), false))) {
      // Not a word of its own: left in the text, and the search goes on
      // after it, as the matcher's iteration in `tokenizers` does.
      scan = stop;
      continue;
    }
    if (best->lstrip)
      start = std::max(trailingWhitespace(text.take_front(start)), from);
    if (best->rstrip)
      stop += leadingWhitespace(text.drop_front(stop));
    if (from < start)
      out.push_back({text.substr(from, start - from).str(), std::nullopt});
    out.push_back({best->content, best->id});
    from = scan = stop;
  }
  if (from < text.size())
    out.push_back({text.drop_front(from).str(), std::nullopt});
}

void TokenizerImpl::encodePiece(std::string text, bool first,
                                std::vector<int64_t> &ids) const {
  std::vector<std::string> words{std::move(text)};
  for (const auto &p : preTokenizers)
    p->apply(words, first);
  for (const std::string &w : words)
    bpe->encode(w, ids);
}

Tokenizer::Tokenizer(std::unique_ptr<TokenizerImpl> impl)
    : impl(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer &&) = default;
Tokenizer &Tokenizer::operator=(Tokenizer &&) = default;
Tokenizer::~Tokenizer() = default;

Expected<Tokenizer> Tokenizer::load(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError(buffer.getError(),
                             path + ": " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

Expected<Tokenizer> Tokenizer::parse(StringRef text, StringRef name) {
  Where top(name.str(), "");
  auto parsed = json::parse(text);
  if (!parsed)
    return top.error("not JSON: " + toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return top.error("is not a JSON object");
  auto impl = std::make_unique<TokenizerImpl>();
  const json::Object *model = root->getObject("model");
  if (!model)
    return top.key("model").error("is missing");
  std::optional<StringRef> type = model->getString("type");
  if (type && *type != "BPE")
    return top.key("model").key("type").error(
        "model '" + *type +
        "' is not supported (Loom applies BPE, the model of GPT-2's, "
        "Llama's and most decoder models' tokenizers)");
  auto bpe = Bpe::read(*model, top.key("model"));
  if (!bpe)
    return bpe.takeError();
  impl->bpe = std::move(*bpe);
  if (Error e = impl->readAdded(root->get("added_tokens"),
                                top.key("added_tokens")))
    return std::move(e);
  auto normalizers =
      readNormalizers(root->get("normalizer"), top.key("normalizer"));
  auto pre = readPreTokenizers(root->get("pre_tokenizer"),
                               top.key("pre_tokenizer"));
  auto post = readPostProcessors(root->get("post_processor"),
                                 top.key("post_processor"));
  auto decoders = readDecoders(root->get("decoder"), top.key("decoder"));
  if (!normalizers || !pre || !post || !decoders)
    return joinErrors(
        joinErrors(normalizers.takeError(), pre.takeError()),
        joinErrors(post.takeError(), decoders.takeError()));
  impl->normalizers = std::move(*normalizers);
  impl->preTokenizers = std::move(*pre);
  impl->postProcessors = std::move(*post);
  impl->decoders = std::move(*decoders);
  // A normalized added token is matched in normalized text.
  for (AddedToken &t : impl->added)
    if (t.normalized)
      for (const auto &n : impl->normalizers)
        n->apply(t.content);
  for (const auto &entry : impl->bpe->vocab())
    impl->vocabSize = std::max(impl->vocabSize, entry.second + 1);
  for (const AddedToken &t : impl->added)
    impl->vocabSize = std::max(impl->vocabSize, t.id + 1);
  return Tokenizer(std::move(impl));
}

Expected<std::vector<int64_t>>
Tokenizer::encode(StringRef text, bool addSpecialTokens) const {
  if (std::optional<size_t> bad = firstInvalidUtf8(text))
    return createStringError(inconvertibleErrorCode(),
                             "the text is not UTF-8 at byte " + Twine(*bad));
  std::vector<int64_t> ids;
  std::vector<Piece> pieces;
  impl->cutAtAdded(text, /*normalizedTokens=*/false, pieces);
  bool first = true;
  for (Piece &piece : pieces) {
    if (piece.addedId) {
      ids.push_back(*piece.addedId);
      first = false;
      continue;
    }
    for (const auto &n : impl->normalizers)
      n->apply(piece.text);
    std::vector<Piece> inner;
    impl->cutAtAdded(piece.text, /*normalizedTokens=*/true, inner);
    for (Piece &p : inner) {
      if (p.addedId)
        ids.push_back(*p.addedId);
      else
        impl->encodePiece(std::move(p.text), first, ids);
      first = false;
    }
  }
  if (addSpecialTokens)
    for (const auto &p : impl->postProcessors)
      p->apply(ids);
  return std::move(ids);
}

Expected<std::string> Tokenizer::decode(ArrayRef<int64_t> ids,
                                        bool skipSpecialTokens) const {
  std::vector<std::string> tokens;
  for (int64_t id : ids) {
    auto added = impl->addedById.find(id);
    if (added != impl->addedById.end()) {
      const AddedToken &t = impl->added[added->second];
      if (!(skipSpecialTokens && t.special))
        tokens.push_back(t.content);
      continue;
    }
    std::optional<StringRef> token = impl->bpe->token(id);
    if (!token)
      return createStringError(inconvertibleErrorCode(),
                               "token id " + Twine(id) +
                                   " is not in the tokenizer's vocabulary");
    tokens.push_back(token->str());
  }
  if (impl->decoders.empty())
    return join(tokens, " ");
  for (const auto &d : impl->decoders)
    d->apply(tokens);
  return join(tokens, "");
}

int64_t Tokenizer::vocabSize() const { return impl->vocabSize; }

std::optional<int64_t> Tokenizer::tokenId(StringRef token) const {
  auto added = impl->addedByContent.find(token);
  if (added != impl->addedByContent.end())
    return added->second;
  auto it = impl->bpe->vocab().find(token);
  if (it == impl->bpe->vocab().end())
    return std::nullopt;
  return it->second;
}

bool Tokenizer::isSpecial(int64_t id) const {
  auto it = impl->addedById.find(id);
  return it != impl->addedById.end() && impl->added[it->second].special;
}
