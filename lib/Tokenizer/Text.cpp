//===- Text.cpp - UTF-8 and GPT-2's byte-level alphabet -------------------===//
//
// Part of Loom. See Components.h. The byte-level alphabet is GPT-2's
// bytes_to_unicode: the printable bytes of Latin-1 stand for themselves,
// the other 68 for the code points 256 on, in byte order.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

#include "llvm/Support/ConvertUTF.h"

#include <array>

using namespace llvm;
using namespace loom::tokenizer;

namespace {

/// The code point of each byte, and the byte of each code point < 512.
struct ByteAlphabet {
  std::array<uint32_t, 256> codePoint;
  std::array<int16_t, 512> byte;
  ByteAlphabet() {
    byte.fill(-1);
    auto printable = [](unsigned b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
             (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 256;
    for (unsigned b = 0; b < 256; ++b)
      codePoint[b] = printable(b) ? b : next++;
    for (unsigned b = 0; b < 256; ++b)
      byte[codePoint[b]] = int16_t(b);
  }
};

const ByteAlphabet &alphabet() {
  static const ByteAlphabet a;
  return a;
}

void appendCodePoint(uint32_t c, std::string &out) {
  char buffer[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
  char *end = buffer;
  ConvertCodePointToUTF8(c, end);
  out.append(buffer, end);
}

/// The code point that starts \p text and its length; nullopt for a byte
/// that starts no valid character.
std::optional<std::pair<uint32_t, size_t>> decodeOne(StringRef text) {
  if (text.empty())
    return std::nullopt;
  const auto *begin = reinterpret_cast<const UTF8 *>(text.data());
  unsigned length = getNumBytesForUTF8(*begin);
  if (length > text.size() || !isLegalUTF8Sequence(begin, begin + length))
    return std::nullopt;
  UTF32 c;
  const UTF8 *source = begin;
  UTF32 *target = &c;
  if (ConvertUTF8toUTF32(&source, begin + length, &target, target + 1,
                         strictConversion) != conversionOK)
    return std::nullopt;
  return std::make_pair(uint32_t(c), size_t(length));
}

/// How many bytes of the invalid sequence that starts \p bytes could still
/// begin a character (at least 1): what one U+FFFD replaces.
size_t validPrefix(StringRef bytes) {
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  unsigned char lead = p[0];
  size_t need = lead >= 0xC2 && lead <= 0xDF   ? 2
                : lead >= 0xE0 && lead <= 0xEF ? 3
                : lead >= 0xF0 && lead <= 0xF4 ? 4
                                               : 1;
  if (need == 1 || bytes.size() < 2)
    return 1;
  unsigned char lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (p[1] < lo || p[1] > hi)
    return 1;
  size_t k = 2;
  while (k < need && k < bytes.size() && (p[k] & 0xC0) == 0x80)
    ++k;
  return k;
}

} // namespace

size_t loom::tokenizer::characterLength(StringRef text) {
  auto c = decodeOne(text);
  return c ? c->second : 1;
}

std::string loom::tokenizer::toByteLevel(StringRef text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char b : text)
    appendCodePoint(alphabet().codePoint[b], out);
  return out;
}

bool loom::tokenizer::fromByteLevel(StringRef text, std::string &bytes) {
  std::string out;
  while (!text.empty()) {
    auto c = decodeOne(text);
    if (!c || c->first >= 512 || alphabet().byte[c->first] < 0)
      return false;
    out.push_back(char(alphabet().byte[c->first]));
    text = text.drop_front(c->second);
  }
  bytes += out;
  return true;
}

std::string loom::tokenizer::lossyUtf8(StringRef bytes) {
  // Rust's from_utf8_lossy replaces each maximal prefix of a valid
  // sequence (or a lone bad byte) by one U+FFFD.
  std::string out;
  while (!bytes.empty()) {
    if (auto c = decodeOne(bytes)) {
      out.append(bytes.data(), c->second);
      bytes = bytes.drop_front(c->second);
      continue;
    }
    out += "\xEF\xBF\xBD";
    bytes = bytes.drop_front(validPrefix(bytes));
  }
  return out;
}

bool loom::tokenizer::isUtf8(StringRef bytes) {
  const auto *p = reinterpret_cast<const UTF8 *>(bytes.data());
  return isLegalUTF8String(&p, p + bytes.size());
}

std::optional<size_t> loom::tokenizer::firstInvalidUtf8(StringRef bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    auto c = decodeOne(bytes.drop_front(at));
    if (!c)
      return at;
    at += c->second;
  }
  return std::nullopt;
}

bool loom::tokenizer::isWhitespace(StringRef text, size_t &length) {
  auto c = decodeOne(text);
  if (!c)
    return false;
  length = c->second;
  uint32_t u = c->first;
  // Unicode's White_Space property, which Rust's is_whitespace is.
  return (u >= 0x09 && u <= 0x0D) || u == 0x20 || u == 0x85 || u == 0xA0 ||
         u == 0x1680 || (u >= 0x2000 && u <= 0x200A) || u == 0x2028 ||
         u == 0x2029 || u == 0x202F || u == 0x205F || u == 0x3000;
}
