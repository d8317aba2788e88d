//===- Pattern.cpp - Literal and Oniguruma patterns -----------------------===//
//
// Part of Loom. See Components.h. `tokenizers` compiles a file's regular
// expressions with Oniguruma (the onig crate, Ruby syntax, UTF-8), so Loom
// does too: the same engine gives the same matches, Unicode classes
// (\p{L}, \s) and look-ahead included. Matches are found as the onig crate
// iterates them: an empty match right where the last match ended is
// skipped.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

#include <oniguruma.h>

#include <mutex>

using namespace llvm;
using namespace loom::tokenizer;

namespace {

void initializeOniguruma() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

} // namespace

Pattern::Pattern() = default;

Pattern::Pattern(Pattern &&other)
    : literal(std::move(other.literal)), compiled(other.compiled) {
  other.compiled = nullptr;
}

Pattern &Pattern::operator=(Pattern &&other) {
  std::swap(literal, other.literal);
  std::swap(compiled, other.compiled);
  return *this;
}

Pattern::~Pattern() {
  if (compiled)
    onig_free(static_cast<OnigRegex>(compiled));
}

Expected<Pattern> Pattern::regex(StringRef source, const Where &where) {
  initializeOniguruma();
  OnigRegex regex;
  OnigErrorInfo info;
  const auto *begin = reinterpret_cast<const OnigUChar *>(source.data());
  int status = onig_new(&regex, begin, begin + source.size(),
                        ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                        ONIG_SYNTAX_DEFAULT, &info);
  if (status != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, status, &info);
    return where.error("the regular expression '" + source +
                       "' does not compile: " +
                       reinterpret_cast<const char *>(message));
  }
  Pattern p;
  p.compiled = regex;
  return std::move(p);
}

Pattern Pattern::literalOf(StringRef text) {
  Pattern p;
  p.literal = text.str();
  return p;
}

Expected<Pattern> Pattern::read(const json::Value &value, const Where &where) {
  const json::Object *o = value.getAsObject();
  if (o && o->size() == 1) {
    if (std::optional<StringRef> s = o->getString("String"))
      return literalOf(*s);
    if (std::optional<StringRef> r = o->getString("Regex"))
      return regex(*r, where.key("Regex"));
  }
  return where.error("is not a pattern ({\"String\": ...} or "
                     "{\"Regex\": ...})");
}

std::vector<std::pair<size_t, size_t>>
Pattern::matches(StringRef text) const {
  std::vector<std::pair<size_t, size_t>> found;
  if (!compiled) {
    if (literal.empty())
      return found;
    for (size_t at = text.find(literal); at != StringRef::npos;
         at = text.find(literal, at + literal.size()))
      found.push_back({at, at + literal.size()});
    return found;
  }
  auto *regex = static_cast<OnigRegex>(compiled);
  OnigRegion *region = onig_region_new();
  const auto *begin = reinterpret_cast<const OnigUChar *>(text.data());
  const OnigUChar *end = begin + text.size();
  size_t from = 0;
  std::optional<size_t> lastEnd;
  while (from <= text.size()) {
    int at = onig_search(regex, begin, end, begin + from, end, region,
                         ONIG_OPTION_NONE);
    if (at < 0)
      break;
    size_t b = size_t(region->beg[0]), e = size_t(region->end[0]);
    if (b == e && lastEnd == e) {
      // An empty match where the last one ended: try one character on.
      if (from >= text.size())
        break;
      from += characterLength(text.drop_front(from));
      continue;
    }
    found.push_back({b, e});
    lastEnd = e;
    from = e;
    if (b == e) {
      if (from >= text.size())
        break;
      from += characterLength(text.drop_front(from));
    }
  }
  onig_region_free(region, 1);
  return found;
}

Expected<Pattern> Pattern::member(const json::Object &o, const Where &where) {
  const json::Value *p = o.get("pattern");
  if (!p)
    return where.key("pattern").error("is missing");
  return read(*p, where.key("pattern"));
}

Expected<Replacement> Replacement::read(const json::Object &o,
                                        const Where &where) {
  auto pattern = Pattern::member(o, where);
  if (!pattern)
    return pattern.takeError();
  auto content = where.string(o, "content");
  if (!content)
    return content.takeError();
  return Replacement(std::move(*pattern), content->str());
}

std::string Replacement::apply(StringRef text) const {
  std::string out;
  size_t at = 0;
  for (auto [b, e] : pattern.matches(text)) {
    out.append(text.data() + at, b - at);
    out += content;
    at = e;
  }
  out.append(text.data() + at, text.size() - at);
  return out;
}
