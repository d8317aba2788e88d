//===- Json.cpp - A small JSON reader and writer --------------------------===//
//
// Part of Loom. See Json.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace loom::artifact;

namespace loom::artifact {

class JsonParser {
public:
  explicit JsonParser(std::string_view text) : text(text) {}

  bool document(Json &out) {
    if (!value(out, 0))
      return false;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the value");
    return true;
  }

  std::string error;

private:
  static constexpr int kMaxDepth = 64;

  bool fail(const std::string &why) {
    if (error.empty())
      error = why + " at byte " + std::to_string(pos);
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool literal(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return fail("invalid literal");
    pos += word.size();
    return true;
  }

  bool value(Json &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than 64");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    switch (c) {
    case 'n':
      out.k = Json::Kind::Null;
      return literal("null");
    case 't':
      out.k = Json::Kind::Bool;
      out.b = true;
      return literal("true");
    case 'f':
      out.k = Json::Kind::Bool;
      out.b = false;
      return literal("false");
    case '"':
      out.k = Json::Kind::String;
      return string(out.str);
    case '[':
      return array(out, depth);
    case '{':
      return object(out, depth);
    default:
      return number(out);
    }
  }

  bool array(Json &out, int depth) {
    out.k = Json::Kind::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    for (;;) {
      out.arr.emplace_back();
      if (!value(out.arr.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(Json &out, int depth) {
    out.k = Json::Kind::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    for (;;) {
      skipSpace();
      std::string key;
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      if (!string(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      Json member;
      if (!value(member, depth + 1))
        return false;
      if (!out.obj.emplace(std::move(key), std::move(member)).second)
        return fail("duplicate member name");
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool hex4(uint32_t &v) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return fail("bad \\u escape");
    }
    return true;
  }

  static void utf8(uint32_t cp, std::string &out) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  bool escape(std::string &out) {
    if (pos >= text.size())
      return fail("unterminated string");
    char e = text[pos++];
    switch (e) {
    case '"': out += '"'; return true;
    case '\\': out += '\\'; return true;
    case '/': out += '/'; return true;
    case 'b': out += '\b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'u': {
      uint32_t cp;
      if (!hex4(cp))
        return false;
      if (cp >= 0xD800 && cp < 0xDC00) {
        uint32_t lo;
        if (text.substr(pos, 2) != "\\u")
          return fail("unpaired surrogate");
        pos += 2;
        if (!hex4(lo) || lo < 0xDC00 || lo >= 0xE000)
          return fail("unpaired surrogate");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        return fail("unpaired surrogate");
      }
      utf8(cp, out);
      return true;
    }
    default:
      return fail("bad escape");
    }
  }

  bool string(std::string &out) {
    ++pos; // the opening quote
    for (;;) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (!escape(out))
        return false;
    }
  }

  bool number(Json &out) {
    size_t start = pos;
    auto digits = [&] {
      size_t s = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos > s;
    };
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    if (pos < text.size() && text[pos] == '0')
      ++pos;
    else if (!digits())
      return fail("invalid value");
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (!digits())
        return fail("invalid number");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        return fail("invalid number");
    }
    std::string s(text.substr(start, pos - start));
    out.k = Json::Kind::Number;
    out.num = std::strtod(s.c_str(), nullptr);
    if (!std::isfinite(out.num))
      return fail("number out of range");
    return true;
  }

  std::string_view text;
  size_t pos = 0;
};

} // namespace loom::artifact

bool Json::isInteger() const {
  return k == Kind::Number && std::floor(num) == num &&
         std::fabs(num) <= 9007199254740992.0; // 2^53: exact in a double
}

const Json *Json::get(const std::string &key) const {
  if (k != Kind::Object)
    return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &it->second;
}

bool Json::parse(std::string_view text, Json &out, std::string &error) {
  JsonParser p(text);
  out = Json();
  if (p.document(out))
    return true;
  error = p.error;
  return false;
}

Json Json::integers(const std::vector<int64_t> &values) {
  Json a = makeArray();
  for (int64_t v : values)
    a.push(v);
  return a;
}

namespace {

void printString(const std::string &s, std::string &out) {
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

void printNumber(double v, std::string &out) {
  char buf[32];
  if (!std::isfinite(v))
    out += "null";
  else if (std::floor(v) == v && std::fabs(v) <= 9007199254740992.0)
    out += std::to_string(static_cast<int64_t>(v));
  else {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
  }
}

} // namespace

void Json::print(std::string &out, int indent, int depth) const {
  auto newline = [&](int level) {
    out += '\n';
    out.append(size_t(indent) * level, ' ');
  };
  switch (k) {
  case Kind::Null:
    out += "null";
    return;
  case Kind::Bool:
    out += b ? "true" : "false";
    return;
  case Kind::Number:
    printNumber(num, out);
    return;
  case Kind::String:
    printString(str, out);
    return;
  case Kind::Array: {
    bool flat = true;
    for (const Json &v : arr)
      flat &= !v.isArray() && !v.isObject();
    out += '[';
    for (size_t i = 0; i < arr.size(); ++i) {
      if (i)
        out += flat ? ", " : ",";
      if (!flat)
        newline(depth + 1);
      arr[i].print(out, indent, depth + 1);
    }
    if (!flat && !arr.empty())
      newline(depth);
    out += ']';
    return;
  }
  case Kind::Object: {
    out += '{';
    bool first = true;
    for (const auto &[key, v] : obj) {
      if (!first)
        out += ',';
      first = false;
      newline(depth + 1);
      printString(key, out);
      out += ": ";
      v.print(out, indent, depth + 1);
    }
    if (!obj.empty())
      newline(depth);
    out += '}';
    return;
  }
  }
}

std::string Json::print(int indent) const {
  std::string out;
  print(out, indent, 0);
  return out;
}
