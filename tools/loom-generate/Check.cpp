//===- Check.cpp - The artifact's token loop against the interpreter's ----===//
//
// Part of Loom. See Check.h.
//
//===----------------------------------------------------------------------===//

#include "Check.h"
#include "ScaledError.h"

#include <cmath>

using namespace loom::generate;

CheckResult loom::generate::compareLoops(const LoopResult &got,
                                         const LoopResult &want, int64_t real,
                                         int64_t vocab, double tolerance) {
  CheckResult r;
  r.tolerance = tolerance;
  size_t steps = std::min(got.tokens.size(), want.tokens.size());
  for (size_t s = 0; s < steps && r.tokensIdentical(); ++s) {
    ++r.stepsCompared;
    for (int64_t b = 0; b < real; ++b) {
      for (int64_t v = 0; v < vocab; ++v) {
        double g = got.logits[s][b * vocab + v];
        double w = want.logits[s][b * vocab + v];
        double scaled = tools::scaledError(g, w);
        double abs = std::isfinite(scaled) ? std::abs(g - w) : scaled;
        r.maxAbsError = std::max(r.maxAbsError, abs);
        if (scaled > r.maxScaledError) {
          r.maxScaledError = scaled;
          r.worstStep = int64_t(s);
          r.worstSequence = b;
        }
      }
      if (r.tokensIdentical() && got.tokens[s][b] != want.tokens[s][b]) {
        r.mismatchStep = int64_t(s);
        r.mismatchSequence = b;
        r.artifactToken = got.tokens[s][b];
        r.referenceToken = want.tokens[s][b];
      }
    }
  }
  return r;
}
