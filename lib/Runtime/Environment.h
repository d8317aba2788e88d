//===- Environment.h - Runtime switches from the environment ----*- C++ -*-===//
//
// Part of Loom. The runtime's comparison switches (LOOM_ONEDNN_LAYOUT,
// LOOM_ONEDNN_ALONE, LOOM_GRAPHS, ...) are environment variables with a
// few known values each. A value outside them is not read as one of them:
// it is ignored, with one warning on stderr per variable, so a misspelt
// switch never silently changes (or silently fails to change) a run.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_ENVIRONMENT_H
#define LOOM_RUNTIME_ENVIRONMENT_H

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace loom::rt {

/// The value of the environment variable \p name when it is one of
/// \p known; std::nullopt when it is unset, empty, or another value (then
/// with a warning naming the variable and the values it takes, once per
/// variable and process).
inline std::optional<std::string_view>
environmentChoice(const char *name,
                  std::initializer_list<std::string_view> known) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return std::nullopt;
  for (std::string_view k : known)
    if (k == value)
      return k;
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (!warned.insert(name).second)
    return std::nullopt;
  std::string values;
  for (std::string_view k : known)
    values += (values.empty() ? "" : ", ") + std::string(k);
  std::fprintf(stderr,
               "loom: warning: %s='%s' is not one of the values it takes "
               "(%s); ignored\n",
               name, value, values.c_str());
  return std::nullopt;
}

/// Whether the switch \p name is set to \p value (one of \p known).
inline bool environmentIs(const char *name, std::string_view value,
                          std::initializer_list<std::string_view> known) {
  std::optional<std::string_view> v = environmentChoice(name, known);
  return v && *v == value;
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_ENVIRONMENT_H
