//===- Normalizers.cpp - A tokenizer.json's "normalizer" ------------------===//
//
// Part of Loom. See Components.h. Prepend, Replace and Strip, and Sequence
// of them: what the BPE tokenizers of decoder models use (Llama's: "▁"
// before the text, spaces to "▁"). Unicode normalization forms and
// lower-casing need Unicode's tables and are refused.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

class Prepend : public Normalizer {
public:
  explicit Prepend(std::string prefix) : prefix(std::move(prefix)) {}
  void apply(std::string &text) const override {
    if (!text.empty())
      text.insert(0, prefix);
  }

private:
  std::string prefix;
};

class Replace : public Normalizer {
public:
  explicit Replace(Replacement replacement)
      : replacement(std::move(replacement)) {}
  void apply(std::string &text) const override {
    text = replacement.apply(text);
  }

private:
  Replacement replacement;
};

/// Unicode whitespace off the left and/or right.
class Strip : public Normalizer {
public:
  Strip(bool left, bool right) : left(left), right(right) {}
  void apply(std::string &text) const override {
    StringRef t = text;
    size_t length = 0;
    while (left && !t.empty() && isWhitespace(t, length))
      t = t.drop_front(length);
    while (right && !t.empty()) {
      // The last character: back over continuation bytes.
      size_t start = t.size() - 1;
      while (start > 0 && (uint8_t(t[start]) & 0xC0) == 0x80)
        --start;
      if (!isWhitespace(t.drop_front(start), length))
        break;
      t = t.take_front(start);
    }
    text = t.str();
  }

private:
  bool left, right;
};

Expected<std::unique_ptr<Normalizer>>
readOfType(StringRef type, const json::Object &o, const Where &where) {
  if (type == "Prepend") {
    auto prefix = where.string(o, "prepend");
    if (!prefix)
      return prefix.takeError();
    return std::make_unique<Prepend>(prefix->str());
  }
  if (type == "Replace") {
    auto replacement = Replacement::read(o, where);
    if (!replacement)
      return replacement.takeError();
    return std::make_unique<Replace>(std::move(*replacement));
  }
  if (type == "Strip") {
    auto left = where.boolean(o, "strip_left", false);
    auto right = where.boolean(o, "strip_right", false);
    if (!left || !right)
      return joinErrors(left.takeError(), right.takeError());
    return std::make_unique<Strip>(*left, *right);
  }
  return where.error("normalizer '" + type +
                     "' is not supported (Loom applies Sequence, Prepend, "
                     "Replace and Strip; Unicode normalization forms and "
                     "case folding need Unicode's tables)");
}

} // namespace

Expected<std::vector<std::unique_ptr<Normalizer>>>
loom::tokenizer::readNormalizers(const json::Value *value,
                                 const Where &where) {
  return readStages<Normalizer>(value, where, "normalizers", readOfType);
}
