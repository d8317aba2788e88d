//===- Decoders.cpp - A tokenizer.json's "decoder" ------------------------===//
//
// Part of Loom. See Components.h. Each decoder rewrites the list of the
// tokens' texts, as `tokenizers`' decode_chain does; the tokenizer joins
// what the last one leaves. ByteLevel (GPT-2's alphabet back to bytes),
// ByteFallback (<0xXX> tokens back to bytes), Replace, Fuse, Strip,
// Metaspace and Sequence of them.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

/// All tokens to one string: their bytes in the byte-level alphabet (a
/// token with a character outside it: its own bytes), as lossy UTF-8.
class ByteLevelDecoder : public Decoder {
public:
  void apply(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &t : tokens)
      if (!fromByteLevel(t, bytes))
        bytes += t;
    tokens = {lossyUtf8(bytes)};
  }
};

/// Runs of <0xXX> tokens to their bytes: valid UTF-8 as one token, else a
/// U+FFFD per byte.
class ByteFallback : public Decoder {
public:
  void apply(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    size_t count = 0;
    auto flush = [&] {
      if (!count)
        return;
      if (isUtf8(bytes)) {
        out.push_back(bytes);
      } else {
        for (size_t i = 0; i < count; ++i)
          out.push_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      count = 0;
    };
    for (std::string &t : tokens) {
      StringRef s = t;
      unsigned byte;
      if (s.size() == 6 && s.starts_with("<0x") && s.ends_with(">") &&
          !s.substr(3, 2).getAsInteger(16, byte)) {
        bytes.push_back(char(byte));
        ++count;
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
  }
};

class ReplaceDecoder : public Decoder {
public:
  explicit ReplaceDecoder(Replacement replacement)
      : replacement(std::move(replacement)) {}
  void apply(std::vector<std::string> &tokens) const override {
    for (std::string &t : tokens)
      t = replacement.apply(t);
  }

private:
  Replacement replacement;
};

class Fuse : public Decoder {
public:
  void apply(std::vector<std::string> &tokens) const override {
    tokens = {join(tokens, "")};
  }
};

/// Up to `start` leading and `stop` trailing copies of one character off
/// every token.
class StripDecoder : public Decoder {
public:
  StripDecoder(std::string content, int64_t start, int64_t stop)
      : content(std::move(content)), start(start), stop(stop) {}
  void apply(std::vector<std::string> &tokens) const override {
    for (std::string &t : tokens) {
      StringRef s = t;
      for (int64_t i = 0; i < start && s.starts_with(content); ++i)
        s = s.drop_front(content.size());
      for (int64_t i = 0; i < stop && s.ends_with(content); ++i)
        s = s.drop_back(content.size());
      t = s.str();
    }
  }

private:
  std::string content;
  int64_t start, stop;
};

/// The replacement back to spaces; in the first token it is dropped
/// instead, unless nothing was prepended.
class MetaspaceDecoder : public Decoder {
public:
  MetaspaceDecoder(std::string replacement, bool prepended)
      : replacement(std::move(replacement)), prepended(prepended) {}
  void apply(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      StringRef t = tokens[i];
      std::string out;
      while (!t.empty()) {
        if (t.starts_with(replacement)) {
          if (!(i == 0 && prepended))
            out.push_back(' ');
          t = t.drop_front(replacement.size());
          continue;
        }
        out.push_back(t.front());
        t = t.drop_front();
      }
      tokens[i] = std::move(out);
    }
  }

private:
  std::string replacement;
  bool prepended;
};

Expected<std::unique_ptr<Decoder>> readStrip(const json::Object &o,
                                             const Where &where) {
  auto content = where.string(o, "content");
  if (!content)
    return content.takeError();
  if (characterLength(*content) != content->size())
    return where.key("content").error("is not one character");
  std::optional<int64_t> start = o.getInteger("start"),
                         stop = o.getInteger("stop");
  if (!start || !stop || *start < 0 || *stop < 0)
    return where.error("needs \"start\" and \"stop\", counts at least 0");
  return std::make_unique<StripDecoder>(content->str(), *start, *stop);
}

Expected<std::unique_ptr<Decoder>> readMetaspace(const json::Object &o,
                                                 const Where &where) {
  auto replacement = where.string(o, "replacement");
  if (!replacement)
    return replacement.takeError();
  bool prepended = true;
  if (std::optional<StringRef> scheme = o.getString("prepend_scheme")) {
    prepended = *scheme != "never";
  } else {
    auto prefix = where.boolean(o, "add_prefix_space", true);
    if (!prefix)
      return prefix.takeError();
    prepended = *prefix;
  }
  return std::make_unique<MetaspaceDecoder>(replacement->str(), prepended);
}

Expected<std::unique_ptr<Decoder>>
readOfType(StringRef type, const json::Object &o, const Where &where) {
  if (type == "ByteLevel")
    return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback")
    return std::make_unique<ByteFallback>();
  if (type == "Fuse")
    return std::make_unique<Fuse>();
  if (type == "Replace") {
    auto replacement = Replacement::read(o, where);
    if (!replacement)
      return replacement.takeError();
    return std::make_unique<ReplaceDecoder>(std::move(*replacement));
  }
  if (type == "Strip")
    return readStrip(o, where);
  if (type == "Metaspace")
    return readMetaspace(o, where);
  return where.error("decoder '" + type +
                     "' is not supported (Loom applies ByteLevel, "
                     "ByteFallback, Replace, Fuse, Strip, Metaspace and "
                     "Sequence)");
}

} // namespace

Expected<std::vector<std::unique_ptr<Decoder>>>
loom::tokenizer::readDecoders(const json::Value *value, const Where &where) {
  return readStages<Decoder>(value, where, "decoders", readOfType);
}
