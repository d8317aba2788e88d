//===- TokenizerTest.cpp - The tokenizer.json pipeline, case by case ------===//
//
// Part of Loom. Each pipeline stage on the cases HuggingFace's `tokenizers`
// pins in its own tests (the Split behaviours and Metaspace's splits are
// that crate's test vectors), BPE's merge order and fallbacks, the
// decoders' byte handling, the errors a bad file gets, and TextStream's
// held tails and stop strings. test/Tokenizer/conformance.test compares
// whole real tokenizers with HuggingFace's JavaScript port.
//
//===----------------------------------------------------------------------===//

#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

using namespace loom::tokenizer;
namespace json = llvm::json;

namespace {

/// A tokenizer whose vocabulary is \p tokens (ids in order), with
/// ignore_merges so a word in the vocabulary is one token: what
/// encode gives then shows the words the pre-tokenizer made.
std::string wordTokenizer(const std::vector<std::string> &tokens,
                          json::Value preTokenizer,
                          json::Array added = json::Array()) {
  json::Object vocab;
  for (size_t i = 0; i < tokens.size(); ++i)
    vocab[tokens[i]] = int64_t(i);
  json::Object model{{"type", "BPE"},          {"vocab", std::move(vocab)},
                     {"merges", json::Array()}, {"ignore_merges", true},
                     {"unk_token", nullptr}};
  json::Object root{{"model", std::move(model)},
                    {"pre_tokenizer", std::move(preTokenizer)},
                    {"added_tokens", std::move(added)}};
  std::string text;
  llvm::raw_string_ostream(text) << json::Value(std::move(root));
  return text;
}

Tokenizer parse(const std::string &text) {
  auto t = Tokenizer::parse(text, "test.json");
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    std::abort();
  }
  return std::move(*t);
}

/// The tokens \p text encodes to, each spelt out.
std::vector<std::string> words(const Tokenizer &t, llvm::StringRef text) {
  std::vector<std::string> out;
  auto ids = t.encode(text, false);
  EXPECT_TRUE(bool(ids)) << llvm::toString(ids.takeError());
  for (int64_t id : *ids)
    out.push_back(llvm::cantFail(t.decode({id})));
  return out;
}

std::string errorOf(const std::string &text) {
  auto t = Tokenizer::parse(text, "bad.json");
  if (t) {
    ADD_FAILURE() << "no error";
    return "";
  }
  return llvm::toString(t.takeError());
}

using Words = std::vector<std::string>;

const Words kHowAreYou = {"How",  " ",      "are",  "you",    "doing", "?",
                          "How ", "are ",   "you ", " are",   " you",  " doing",
                          "doing?"};

json::Value splitOn(llvm::StringRef behavior, bool invert,
                    llvm::StringRef regex = "\\w+|[^\\w\\s]+") {
  return json::Object{{"type", "Split"},
                      {"pattern", json::Object{{"Regex", regex}}},
                      {"behavior", behavior},
                      {"invert", invert}};
}

} // namespace

// tokenizers' pre_tokenizers/split.rs `basic`: the matches of a words
// regex, inverted, so the spaces are what each behaviour acts on.
TEST(Tokenizer, SplitBehaviours) {
  std::pair<const char *, Words> cases[] = {
      {"Removed", {"How", "are", "you", "doing", "?"}},
      {"Isolated", {"How", " ", "are", " ", "you", " ", "doing", "?"}},
      {"MergedWithPrevious", {"How ", "are ", "you ", "doing", "?"}},
      {"MergedWithNext", {"How", " are", " you", " doing", "?"}},
      {"Contiguous", {"How", " ", "are", " ", "you", " ", "doing?"}},
  };
  for (auto &[behavior, expected] : cases) {
    Tokenizer t = parse(wordTokenizer(kHowAreYou, splitOn(behavior, true)));
    EXPECT_EQ(words(t, "How are you doing?"), expected) << behavior;
  }
}

// split.rs `invert`: splitting on " " and keeping what is not "Hello" agree.
TEST(Tokenizer, SplitInvertedIsTheComplement) {
  Words vocab = {"Hello", " "};
  auto literal = [](const char *s, bool invert) {
    return json::Object{{"type", "Split"},
                        {"pattern", json::Object{{"String", s}}},
                        {"behavior", "Removed"},
                        {"invert", invert}};
  };
  Tokenizer spaces = parse(wordTokenizer(vocab, literal(" ", false)));
  Tokenizer hellos = parse(wordTokenizer(vocab, literal("Hello", true)));
  EXPECT_EQ(words(spaces, "Hello Hello Hello"),
            (Words{"Hello", "Hello", "Hello"}));
  EXPECT_EQ(words(hellos, "Hello Hello Hello"),
            words(spaces, "Hello Hello Hello"));
}

// pre_tokenizers/metaspace.rs `multiple_spaces` and
// `non_legacy_meta_space`: each space starts a word; "first" puts the
// replacement only before the text's first piece, not after an added token.
TEST(Tokenizer, Metaspace) {
  Words vocab = {"▁Hey", "▁", "▁friend!", "▁Hey▁my▁friend▁", "how▁are▁you",
                 "<s>"};
  Tokenizer split = parse(wordTokenizer(
      vocab, json::Object{{"type", "Metaspace"},
                          {"replacement", "▁"},
                          {"prepend_scheme", "always"},
                          {"split", true}}));
  EXPECT_EQ(words(split, "Hey   friend!"),
            (Words{"▁Hey", "▁", "▁", "▁friend!"}));
  json::Array added{json::Object{{"id", 5},
                                 {"content", "<s>"},
                                 {"special", true},
                                 {"normalized", false}}};
  Tokenizer first = parse(wordTokenizer(
      vocab,
      json::Object{{"type", "Metaspace"},
                   {"replacement", "▁"},
                   {"prepend_scheme", "first"},
                   {"split", false}},
      std::move(added)));
  EXPECT_EQ(words(first, "Hey my friend <s>how▁are you"),
            (Words{"▁Hey▁my▁friend▁", "<s>", "how▁are▁you"}));
}

namespace {

/// A BPE tokenizer over single letters with \p merges and options.
std::string bpeTokenizer(const std::vector<std::string> &vocabTokens,
                         const std::vector<std::string> &merges,
                         json::Object options, json::Value decoder = nullptr) {
  json::Object vocab;
  for (size_t i = 0; i < vocabTokens.size(); ++i)
    vocab[vocabTokens[i]] = int64_t(i);
  json::Array m;
  for (const std::string &s : merges)
    m.push_back(s);
  json::Object model{{"type", "BPE"},
                     {"vocab", std::move(vocab)},
                     {"merges", std::move(m)}};
  for (auto &entry : options)
    model[entry.first] = std::move(entry.second);
  json::Object root{{"model", std::move(model)},
                    {"decoder", std::move(decoder)}};
  std::string text;
  llvm::raw_string_ostream(text) << json::Value(std::move(root));
  return text;
}

std::vector<int64_t> ids(const Tokenizer &t, llvm::StringRef text) {
  return llvm::cantFail(t.encode(text, false));
}

} // namespace

// The lowest rank merges first; at equal ranks the leftmost; an overlap
// ("aaa") merges its left pair.
TEST(Tokenizer, BpeMergeOrder) {
  Tokenizer t = parse(bpeTokenizer({"a", "b", "aa", "ab", "aab", "ba"},
                                   {"a a", "a b", "aa b", "b a"}, {}));
  EXPECT_EQ(ids(t, "aaa"), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(ids(t, "aab"), (std::vector<int64_t>{4}));
  EXPECT_EQ(ids(t, "aba"), (std::vector<int64_t>{3, 0}));
  // "a b" outranks "b a": "bab" is b + ab.
  EXPECT_EQ(ids(t, "bab"), (std::vector<int64_t>{1, 3}));
}

// A character outside the vocabulary: its bytes as <0xXX> tokens when the
// model falls back to bytes; else the unknown token, a run of them fused
// with fuse_unk; else nothing.
TEST(Tokenizer, BpeFallbacks) {
  std::vector<std::string> vocab = {"<unk>", "a", "<0x0A>", "<0xC3>",
                                    "<0xA9>"};
  Tokenizer bytes = parse(bpeTokenizer(
      vocab, {}, json::Object{{"byte_fallback", true}, {"unk_token", "<unk>"}}));
  EXPECT_EQ(ids(bytes, "a\né"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(ids(bytes, "ax"), (std::vector<int64_t>{1, 0}));
  Tokenizer fused = parse(
      bpeTokenizer(vocab, {},
                   json::Object{{"unk_token", "<unk>"}, {"fuse_unk", true}}));
  EXPECT_EQ(ids(fused, "xyaz"), (std::vector<int64_t>{0, 1, 0}));
  Tokenizer unfused = parse(
      bpeTokenizer(vocab, {}, json::Object{{"unk_token", "<unk>"}}));
  EXPECT_EQ(ids(unfused, "xyaz"), (std::vector<int64_t>{0, 0, 1, 0}));
  Tokenizer none = parse(bpeTokenizer(vocab, {}, {}));
  EXPECT_EQ(ids(none, "xyaz"), (std::vector<int64_t>{1}));
}

// Bytes that are not UTF-8 decode to U+FFFD: one per byte from
// ByteFallback, one per broken sequence from ByteLevel.
TEST(Tokenizer, DecodersReplaceBrokenCharacters) {
  std::vector<std::string> vocab = {"<0xC3>", "<0xA9>", "a"};
  Tokenizer fallback = parse(bpeTokenizer(
      vocab, {}, json::Object{{"byte_fallback", true}},
      json::Object{{"type", "Sequence"},
                   {"decoders", json::Array{json::Object{
                                                {"type", "ByteFallback"}},
                                            json::Object{{"type", "Fuse"}}}}}));
  EXPECT_EQ(llvm::cantFail(fallback.decode({0, 1, 2})), "éa");
  EXPECT_EQ(llvm::cantFail(fallback.decode({0, 2})), "\xEF\xBF\xBD"
                                                     "a");
  // The byte-level alphabet spells 0xC3 as "Ã" and 0xA9 as "©".
  Tokenizer level = parse(bpeTokenizer({"Ã", "©", "a"}, {}, {},
                                       json::Object{{"type", "ByteLevel"}}));
  EXPECT_EQ(llvm::cantFail(level.decode({0, 1, 2})), "éa");
  EXPECT_EQ(llvm::cantFail(level.decode({0, 2})), "\xEF\xBF\xBD"
                                                  "a");
  auto unknown = level.decode({7});
  ASSERT_FALSE(bool(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "token id 7 is not in the tokenizer's vocabulary");
}

TEST(Tokenizer, TextMustBeUtf8) {
  Tokenizer t = parse(bpeTokenizer({"a"}, {}, {}));
  auto bad = t.encode("aa\xC3", false);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "the text is not UTF-8 at byte 2");
}

TEST(Tokenizer, ErrorsSayWhere) {
  EXPECT_EQ(errorOf("{\"model\": {\"type\": \"Unigram\"}}"),
            "bad.json: model.type: model 'Unigram' is not supported (Loom "
            "applies BPE, the model of GPT-2's, Llama's and most decoder "
            "models' tokenizers)");
  EXPECT_EQ(errorOf("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": "
                    "[\"a b\"]}}"),
            "bad.json: model.merges[0]: merges 'a' and 'b', and it or what "
            "it makes is not in the vocabulary");
  std::string nfc = bpeTokenizer({"a"}, {}, {});
  nfc.insert(1, "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": "
                "[{\"type\": \"NFC\"}]},");
  EXPECT_EQ(errorOf(nfc),
            "bad.json: normalizer.normalizers[0]: normalizer 'NFC' is not "
            "supported (Loom applies Sequence, Prepend, Replace and Strip; "
            "Unicode normalization forms and case folding need Unicode's "
            "tables)");
  std::string regex = wordTokenizer({"a"}, splitOn("Isolated", false, "(a"));
  EXPECT_EQ(errorOf(regex),
            "bad.json: pre_tokenizer.pattern.Regex: the regular expression "
            "'(a' does not compile: end pattern with unmatched parenthesis");
  EXPECT_EQ(errorOf("{\"model\": "),
            "bad.json: not JSON: [1:10, byte=10]: Unexpected EOF");
}

namespace {

/// The byte-level letters of "a", "b", " ", "é" (two bytes) and "!".
std::string streamTokenizer() {
  return bpeTokenizer({"a", "b", "Ġ", "Ã", "©", "!", "ab", "Ġa"},
                      {"a b", "Ġ a"}, {},
                      json::Object{{"type", "ByteLevel"}});
}

std::string pushAll(TextStream &s, const std::vector<int64_t> &ids,
                    std::vector<std::string> *steps = nullptr) {
  std::string out;
  for (int64_t id : ids) {
    std::string piece = llvm::cantFail(s.push(id));
    if (steps)
      steps->push_back(piece);
    out += piece;
  }
  return out;
}

} // namespace

// A character spelt by two tokens comes out whole, once the second came.
TEST(TextStream, HoldsCharactersUntilWhole) {
  Tokenizer t = parse(streamTokenizer());
  TextStream s(t, {0});
  std::vector<std::string> steps;
  pushAll(s, {3, 4, 1, 2, 0}, &steps);
  EXPECT_EQ(steps, (std::vector<std::string>{"", "é", "b", " ", "a"}));
  // A space alone may be the start of more: it is given at once (only
  // U+FFFD and stop strings wait).
  TextStream unfinished(t, {0});
  EXPECT_EQ(pushAll(unfinished, {1, 3}), "b");
  EXPECT_EQ(unfinished.finish(), "\xEF\xBF\xBD");
}

// The first stop string to appear ends the text before it, even across
// tokens; what may still become one waits, and is given if it does not.
TEST(TextStream, StopStrings) {
  Tokenizer t = parse(streamTokenizer());
  TextStream s(t, {0}, {"b a", "!!"});
  std::vector<std::string> steps;
  pushAll(s, {0, 1, 2}, &steps);
  EXPECT_EQ(steps, (std::vector<std::string>{"a", "", ""}));
  EXPECT_FALSE(s.stopped());
  // "ab a": the stop string starts at the b, after the "a" given.
  EXPECT_EQ(llvm::cantFail(s.push(0)), "");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.text(), "a");
  EXPECT_EQ(llvm::cantFail(s.push(1)), "");
  EXPECT_EQ(s.finish(), "");

  TextStream held(t, {0}, {"!!"});
  EXPECT_EQ(pushAll(held, {1, 5}), "b");
  EXPECT_EQ(held.finish(), "!");
  EXPECT_FALSE(held.stopped());
}
