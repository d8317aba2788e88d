//===- ScaledError.h - How far a computed value is from a reference -*-===//
//
// Part of Loom. The one error measure of loom-run --compare/--check,
// loom-generate --check and loom-gpu-run --compare (what a lent GPU's
// scripts/gpu-check.sh run checks with): no LLVM, so the runtime-only build
// takes it too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_SCALEDERROR_H
#define LOOM_SUPPORT_SCALEDERROR_H

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom {

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

} // namespace loom

#endif // LOOM_SUPPORT_SCALEDERROR_H
