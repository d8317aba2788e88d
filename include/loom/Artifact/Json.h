//===- Json.h - A small JSON reader and writer -------------------*- C++ -*-===//
//
// Part of Loom. The artifact schema and libloomrt depend on no LLVM: this is
// the JSON they need to read and write manifests and to read safetensors
// headers. Strict RFC 8259 (no comments, no trailing commas), depth-limited,
// every failure a message with the byte offset. Objects keep their members
// sorted by name, so printing is deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ARTIFACT_JSON_H
#define LOOM_ARTIFACT_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::artifact {

class Json {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  Json(bool v) : k(Kind::Bool), b(v) {}
  Json(double v) : k(Kind::Number), num(v) {}
  Json(int64_t v) : k(Kind::Number), num(double(v)) {}
  Json(int v) : k(Kind::Number), num(v) {}
  Json(const char *v) : k(Kind::String), str(v) {}
  Json(std::string v) : k(Kind::String), str(std::move(v)) {}
  Json(std::string_view v) : k(Kind::String), str(v) {}
  /// An empty array or object, filled with push and set.
  static Json makeArray() { return Json(Kind::Array); }
  static Json makeObject() { return Json(Kind::Object); }
  /// An array of integers (shapes, buffer ids).
  static Json integers(const std::vector<int64_t> &values);

  /// Appends to an array.
  Json &push(Json v) {
    arr.push_back(std::move(v));
    return *this;
  }
  /// Sets an object's member.
  Json &set(const std::string &key, Json v) {
    obj[key] = std::move(v);
    return *this;
  }

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

  /// The JSON text: objects and arrays holding objects or arrays one member
  /// a line, indented by \p indent spaces per level; other arrays on one
  /// line. Integers that a double holds exactly print without a fraction;
  /// numbers that are not finite print as null (JSON has no infinity).
  std::string print(int indent = 2) const;

private:
  friend class JsonParser;
  explicit Json(Kind kind) : k(kind) {}
  void print(std::string &out, int indent, int depth) const;
  Kind k = Kind::Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> arr;
  std::map<std::string, Json> obj;
};

} // namespace loom::artifact

#endif // LOOM_ARTIFACT_JSON_H
