//===- ScaledError.h - The error measure of loom-run and loom-generate -*-===//
//
// Part of Loom. How far a computed value is from a reference one, as
// loom-run --compare/--check and loom-generate --check measure it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_COMMON_SCALEDERROR_H
#define LOOM_TOOLS_COMMON_SCALEDERROR_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::tools {

/// |got - want| / max(1, |want|): absolute near zero, relative for large
/// values; 0 where both are the same non-finite value, infinity where one
/// side is NaN or infinite and the other is not the same.
inline double scaledError(double got, double want) {
  if (!std::isfinite(got) || !std::isfinite(want)) {
    bool same = (std::isnan(got) && std::isnan(want)) || got == want;
    return same ? 0 : std::numeric_limits<double>::infinity();
  }
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

/// The largest scaledError of \p got against \p want, element by element.
inline double maxScaledError(llvm::ArrayRef<double> got,
                             llvm::ArrayRef<double> want) {
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    worst = std::max(worst, scaledError(got[i], want[i]));
  return worst;
}

} // namespace loom::tools

#endif // LOOM_TOOLS_COMMON_SCALEDERROR_H
