//===- Activation.h - The activation vocabulary -----------------*- C++ -*-===//
//
// Part of Loom. The C++ side of Activations.def: one enum and its spellings,
// in plain C++ (libloomrt, which has no LLVM, reads them from manifests).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_ACTIVATION_H
#define LOOM_SUPPORT_ACTIVATION_H

#include <optional>
#include <string_view>

namespace loom {

enum class Activation {
#define LOOM_ACTIVATION(Kind, Spelling, NumParameters) Kind,
#include "loom/Support/Activations.def"
};

/// The manifest spelling of \p a ("relu", "gelu_erf", ...).
constexpr std::string_view activationName(Activation a) {
  switch (a) {
#define LOOM_ACTIVATION(Kind, Spelling, NumParameters)                         \
  case Activation::Kind:                                                       \
    return Spelling;
#include "loom/Support/Activations.def"
  }
  return "?";
}

/// How many of (alpha, beta) \p a takes (Activations.def).
constexpr int activationParameters(Activation a) {
  switch (a) {
#define LOOM_ACTIVATION(Kind, Spelling, NumParameters)                         \
  case Activation::Kind:                                                       \
    return NumParameters;
#include "loom/Support/Activations.def"
  }
  return 0;
}

/// The activation spelled \p name, or nullopt.
inline std::optional<Activation> parseActivation(std::string_view name) {
#define LOOM_ACTIVATION(Kind, Spelling, NumParameters)                         \
  if (name == Spelling)                                                        \
    return Activation::Kind;
#include "loom/Support/Activations.def"
  return std::nullopt;
}

} // namespace loom

#endif // LOOM_SUPPORT_ACTIVATION_H
