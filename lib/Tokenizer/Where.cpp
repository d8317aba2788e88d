//===- Where.cpp - Places in a tokenizer.json and their fields ------------===//
//
// Part of Loom. See Components.h.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

using namespace llvm;
using namespace loom::tokenizer;

Where Where::key(StringRef k) const {
  return Where(file, path.empty() ? k.str() : path + "." + k.str());
}

Where Where::index(size_t i) const {
  return Where(file, path + "[" + std::to_string(i) + "]");
}

Error Where::error(const Twine &message) const {
  std::string at = path.empty() ? file : file + ": " + path;
  return createStringError(inconvertibleErrorCode(), at + ": " + message);
}

Expected<StringRef> Where::string(const json::Object &object,
                                  StringRef k) const {
  if (std::optional<StringRef> s = object.getString(k))
    return *s;
  return key(k).error(object.get(k) ? "is not a string" : "is missing");
}

Expected<bool> Where::boolean(const json::Object &object, StringRef k,
                              std::optional<bool> fallback) const {
  const json::Value *v = object.get(k);
  if ((!v || v->kind() == json::Value::Null) && fallback)
    return *fallback;
  if (!v)
    return key(k).error("is missing");
  if (std::optional<bool> b = v->getAsBoolean())
    return *b;
  return key(k).error("is not true or false");
}

Expected<const json::Object *> Where::object(const json::Value &value) const {
  if (const json::Object *o = value.getAsObject())
    return o;
  return error("is not an object");
}
