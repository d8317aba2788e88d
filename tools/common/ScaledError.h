//===- ScaledError.h - The error measure of loom-run and loom-generate -*-===//
//
// Part of Loom. The largest of loom/Support/ScaledError.h's errors over
// tensors, as loom-run --compare/--check and loom-generate --check take it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_COMMON_SCALEDERROR_H
#define LOOM_TOOLS_COMMON_SCALEDERROR_H

#include "loom/Support/ScaledError.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>

namespace loom::tools {

using loom::scaledError;

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
