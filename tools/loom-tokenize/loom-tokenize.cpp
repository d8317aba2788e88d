//===- loom-tokenize.cpp - Text to token ids and back ---------------------===//
//
// Part of Loom. `loom-tokenize --tokenizer tokenizer.json [FILE]` prints
// the ids of FILE's text (standard input by default) as a JSON list;
// `--decode` reads a JSON list of ids and prints their text; `--jsonl`
// reads one JSON string a line and prints, a line each, its ids and their
// text decoded back (docs/tools/loom-tokenize.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

cl::OptionCategory category("loom-tokenize options");
cl::opt<std::string> input(cl::Positional, cl::desc("[input file, - or none "
                                                    "for standard input]"),
                           cl::init("-"), cl::cat(category));
cl::opt<std::string> tokenizerPath("tokenizer", cl::Required,
                                   cl::desc("A HuggingFace tokenizer.json"),
                                   cl::value_desc("file"), cl::cat(category));
cl::alias tokenizerAlias("t", cl::aliasopt(tokenizerPath),
                         cl::desc("Alias for --tokenizer"));
cl::opt<bool> decodeMode("decode",
                         cl::desc("Read a JSON list of ids; print their text"),
                         cl::cat(category));
cl::opt<bool> jsonl("jsonl",
                    cl::desc("Read one JSON string a line; print "
                             "{\"ids\": [...], \"text\": ...} a line"),
                    cl::cat(category));
cl::opt<bool> noSpecial(
    "no-special-tokens",
    cl::desc("Encode without the post-processor's special tokens (a "
             "beginning-of-sequence token, say)"),
    cl::cat(category));
cl::opt<bool> skipSpecial("skip-special-tokens",
                          cl::desc("Decode without the special tokens"),
                          cl::cat(category));

int fail(const Twine &message) {
  WithColor::error(errs(), "loom-tokenize") << message << "\n";
  return 1;
}

void printIds(raw_ostream &os, ArrayRef<int64_t> ids) {
  json::OStream j(os);
  j.array([&] {
    for (int64_t id : ids)
      j.value(id);
  });
}

int decodeIds(const Tokenizer &tokenizer, StringRef text) {
  auto parsed = json::parse(text);
  if (!parsed)
    return fail(input + ": not JSON: " + toString(parsed.takeError()));
  const json::Array *list = parsed->getAsArray();
  if (!list)
    return fail(input + ": not a JSON list of ids");
  std::vector<int64_t> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    std::optional<int64_t> id = (*list)[i].getAsInteger();
    if (!id)
      return fail(input + ": element " + Twine(i) + " is not an integer");
    ids.push_back(*id);
  }
  auto decoded = tokenizer.decode(ids, skipSpecial);
  if (!decoded)
    return fail(input + ": " + toString(decoded.takeError()));
  outs() << *decoded;
  return 0;
}

int encodeLines(const Tokenizer &tokenizer, StringRef text) {
  int64_t number = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    ++number;
    if (line.trim().empty())
      continue;
    auto parsed = json::parse(line);
    std::optional<StringRef> s =
        parsed ? parsed->getAsString() : std::nullopt;
    if (!parsed)
      consumeError(parsed.takeError());
    if (!s)
      return fail(input + ":" + Twine(number) + ": not a JSON string");
    auto ids = tokenizer.encode(*s, !noSpecial);
    if (!ids)
      return fail(input + ":" + Twine(number) + ": " +
                  toString(ids.takeError()));
    auto decoded = tokenizer.decode(*ids, skipSpecial);
    if (!decoded)
      return fail(input + ":" + Twine(number) + ": " +
                  toString(decoded.takeError()));
    json::OStream j(outs());
    j.object([&] {
      j.attributeArray("ids", [&] {
        for (int64_t id : *ids)
          j.value(id);
      });
      j.attribute("text", *decoded);
    });
    outs() << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Text to token ids and back with a HuggingFace tokenizer.json\n\n"
      "  loom-tokenize -t tokenizer.json prompt.txt       ids as a JSON list\n"
      "  loom-tokenize -t tokenizer.json --decode ids.json  the ids' text\n"
      "  loom-tokenize -t tokenizer.json --jsonl texts.jsonl\n");
  if (decodeMode && jsonl)
    return fail("--decode and --jsonl: give one");
  auto tokenizer = Tokenizer::load(tokenizerPath);
  if (!tokenizer)
    return fail(toString(tokenizer.takeError()));
  auto buffer = MemoryBuffer::getFileOrSTDIN(input, /*IsText=*/false);
  if (!buffer)
    return fail(input + ": " + buffer.getError().message());
  StringRef text = (*buffer)->getBuffer();
  if (decodeMode)
    return decodeIds(*tokenizer, text);
  if (jsonl)
    return encodeLines(*tokenizer, text);
  auto ids = tokenizer->encode(text, !noSpecial);
  if (!ids)
    return fail(input + ": " + toString(ids.takeError()));
  printIds(outs(), *ids);
  outs() << "\n";
  return 0;
}
