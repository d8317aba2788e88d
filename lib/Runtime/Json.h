//===- Json.h - A small JSON reader for the runtime -------------*- C++ -*-===//
//
// Part of Loom. libloomrt depends on no LLVM: this is the JSON it needs to
// read manifests and safetensors headers. Strict RFC 8259 (no comments, no
// trailing commas), depth-limited, every failure a message with the byte
// offset.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_JSON_H
#define LOOM_LIB_RUNTIME_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::rt {

class Json {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return k; }
  bool isNull() const { return k == Kind::Null; }
  bool isBool() const { return k == Kind::Bool; }
  bool isNumber() const { return k == Kind::Number; }
  bool isString() const { return k == Kind::String; }
  bool isArray() const { return k == Kind::Array; }
  bool isObject() const { return k == Kind::Object; }

  bool boolean() const { return b; }
  double number() const { return num; }
  /// Whether the number is an integer that int64_t holds exactly.
  bool isInteger() const;
  int64_t integer() const { return static_cast<int64_t>(num); }
  const std::string &string() const { return str; }
  const std::vector<Json> &array() const { return arr; }
  const std::map<std::string, Json> &object() const { return obj; }
  /// The member \p key of an object, or nullptr.
  const Json *get(const std::string &key) const;

  /// Parses \p text; on failure returns false and sets \p error.
  static bool parse(std::string_view text, Json &out, std::string &error);

private:
  friend class JsonParser;
  Kind k = Kind::Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> arr;
  std::map<std::string, Json> obj;
};

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_JSON_H
