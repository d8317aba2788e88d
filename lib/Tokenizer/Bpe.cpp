//===- Bpe.cpp - The BPE model of a tokenizer.json ------------------------===//
//
// Part of Loom. See Components.h. A word starts as its characters (each a
// token of the vocabulary; else, with byte_fallback, its bytes as <0xXX>
// tokens; else the unknown token, runs of them fused with fuse_unk; else
// dropped, as `tokenizers` drops it), then the adjacent pair of lowest
// merge rank is merged, leftmost first, until no pair has a merge: the
// priority-queue walk of `tokenizers`' Word::merge_all, so that ties and
// overlaps ("aaa") come out as there.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <queue>

using namespace llvm;
using namespace loom::tokenizer;

namespace {

/// Reads a merge, "a b" or ["a", "b"] (files since tokenizers 0.20).
Expected<std::pair<StringRef, StringRef>> readMerge(const json::Value &v,
                                                    const Where &where) {
  if (std::optional<StringRef> s = v.getAsString()) {
    auto [a, b] = s->split(' ');
    if (!a.empty() && !b.empty() && !b.contains(' '))
      return std::make_pair(a, b);
  } else if (const json::Array *pair = v.getAsArray();
             pair && pair->size() == 2 && (*pair)[0].getAsString() &&
             (*pair)[1].getAsString()) {
    return std::make_pair(*(*pair)[0].getAsString(),
                          *(*pair)[1].getAsString());
  }
  return where.error("is not a merge (\"a b\" or [\"a\", \"b\"])");
}

/// An optional string member: absent and null are the empty string.
Expected<std::string> optionalString(const json::Object &o, StringRef key,
                                     const Where &where) {
  const json::Value *v = o.get(key);
  if (!v || v->kind() == json::Value::Null)
    return "";
  if (std::optional<StringRef> s = v->getAsString())
    return s->str();
  return where.key(key).error("is not a string");
}

} // namespace

Expected<Bpe> Bpe::read(const json::Object &model, const Where &where) {
  Bpe bpe;
  const json::Object *vocab = model.getObject("vocab");
  if (!vocab)
    return where.key("vocab").error("is not an object of tokens and ids");
  for (const auto &[token, id] : *vocab) {
    std::optional<int64_t> n = id.getAsInteger();
    if (!n || *n < 0)
      return where.key("vocab").key(token).error(
          "is not an id (an integer at least 0)");
    bpe.tokens[token] = *n;
  }
  for (const auto &entry : bpe.tokens)
    bpe.spelling[entry.second] = entry.first();
  if (const json::Value *dropout = model.get("dropout");
      dropout && dropout->kind() != json::Value::Null)
    return where.key("dropout").error(
        "BPE dropout samples its merges: Loom tokenizes as inference does, "
        "without it (set it to null)");
  auto prefix = optionalString(model, "continuing_subword_prefix", where);
  auto suffix = optionalString(model, "end_of_word_suffix", where);
  auto unknown = optionalString(model, "unk_token", where);
  auto fallback = where.boolean(model, "byte_fallback", false);
  auto fuse = where.boolean(model, "fuse_unk", false);
  auto ignore = where.boolean(model, "ignore_merges", false);
  if (!prefix || !suffix || !unknown || !fallback || !fuse || !ignore)
    return joinErrors(
        joinErrors(joinErrors(prefix.takeError(), suffix.takeError()),
                   joinErrors(unknown.takeError(), fallback.takeError())),
        joinErrors(fuse.takeError(), ignore.takeError()));
  bpe.prefix = *prefix;
  bpe.suffix = *suffix;
  bpe.byteFallback = *fallback;
  bpe.fuseUnknown = *fuse;
  bpe.ignoreMerges = *ignore;
  if (!unknown->empty()) {
    auto it = bpe.tokens.find(*unknown);
    if (it == bpe.tokens.end())
      return where.key("unk_token").error("'" + *unknown +
                                          "' is not in the vocabulary");
    bpe.unknown = it->second;
  }
  const json::Array *merges = model.getArray("merges");
  if (!merges)
    return where.key("merges").error("is not a list");
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    Where at = where.key("merges").index(rank);
    auto merge = readMerge((*merges)[rank], at);
    if (!merge)
      return merge.takeError();
    auto [a, b] = *merge;
    // The merged token drops the second part's subword prefix.
    std::string joined = a.str();
    joined += b.drop_front(
        b.starts_with(bpe.prefix) ? bpe.prefix.size() : size_t(0));
    auto ia = bpe.tokens.find(a), ib = bpe.tokens.find(b),
         ij = bpe.tokens.find(joined);
    if (ia == bpe.tokens.end() || ib == bpe.tokens.end() ||
        ij == bpe.tokens.end())
      return at.error("merges '" + a + "' and '" + b +
                      "', and it or what it makes is not in the vocabulary");
    bpe.merges.try_emplace({ia->second, ib->second},
                           Merge{int64_t(rank), ij->second});
  }
  return std::move(bpe);
}

std::optional<StringRef> Bpe::token(int64_t id) const {
  auto it = spelling.find(id);
  if (it == spelling.end())
    return std::nullopt;
  return it->second;
}

void Bpe::addSymbols(StringRef word, std::vector<int64_t> &symbols) const {
  std::optional<int64_t> pendingUnknown;
  auto flushUnknown = [&] {
    if (pendingUnknown)
      symbols.push_back(*pendingUnknown);
    pendingUnknown.reset();
  };
  for (size_t at = 0; at < word.size();) {
    size_t length = std::min(characterLength(word.drop_front(at)),
                             word.size() - at);
    std::string s = word.substr(at, length).str();
    if (at != 0)
      s.insert(0, prefix);
    if (at + length == word.size())
      s += suffix;
    at += length;
    auto it = tokens.find(s);
    if (it != tokens.end()) {
      flushUnknown();
      symbols.push_back(it->second);
      continue;
    }
    if (byteFallback) {
      std::vector<int64_t> bytes;
      for (unsigned char b : s) {
        auto bt = tokens.find(formatv("<0x{0:X-2}>", unsigned(b)).str());
        if (bt == tokens.end())
          break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == s.size()) {
        // tokenizers leaves a pending unknown pending across these.
        llvm::append_range(symbols, bytes);
        continue;
      }
    }
    if (!unknown)
      continue;
    if (!(pendingUnknown && fuseUnknown))
      flushUnknown();
    pendingUnknown = *unknown;
  }
  flushUnknown();
}

void Bpe::mergeAll(std::vector<int64_t> &symbols) const {
  size_t n = symbols.size();
  // A doubly linked list over the symbols; a merged-away one is dead.
  std::vector<ptrdiff_t> prev(n), next(n);
  std::vector<bool> dead(n, false);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = ptrdiff_t(i) - 1;
    next[i] = i + 1 < n ? ptrdiff_t(i + 1) : -1;
  }
  struct Candidate {
    int64_t rank;
    size_t pos;
    int64_t result;
    bool operator>(const Candidate &o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>,
                      std::greater<Candidate>>
      queue;
  auto consider = [&](size_t left, size_t right) {
    auto it = merges.find({symbols[left], symbols[right]});
    if (it != merges.end())
      queue.push({it->second.rank, left, it->second.result});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(i, i + 1);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    if (dead[top.pos] || next[top.pos] < 0)
      continue;
    size_t right = size_t(next[top.pos]);
    // A stale entry: the pair there no longer makes this token.
    auto it = merges.find({symbols[top.pos], symbols[right]});
    if (it == merges.end() || it->second.result != top.result)
      continue;
    symbols[top.pos] = top.result;
    dead[right] = true;
    next[top.pos] = next[right];
    if (next[right] >= 0)
      prev[size_t(next[right])] = ptrdiff_t(top.pos);
    if (prev[top.pos] >= 0)
      consider(size_t(prev[top.pos]), top.pos);
    if (next[top.pos] >= 0)
      consider(top.pos, size_t(next[top.pos]));
  }
  std::vector<int64_t> alive;
  for (size_t i = 0; i < n; ++i)
    if (!dead[i])
      alive.push_back(symbols[i]);
  symbols = std::move(alive);
}

void Bpe::encode(StringRef word, std::vector<int64_t> &ids) const {
  if (word.empty())
    return;
  if (ignoreMerges) {
    auto it = tokens.find(word);
    if (it != tokens.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  std::vector<int64_t> symbols;
  addSymbols(word, symbols);
  mergeAll(symbols);
  llvm::append_range(ids, symbols);
}
