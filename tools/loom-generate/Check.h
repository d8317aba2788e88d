//===- Check.h - The artifact's token loop against the interpreter's -*-===//
//
// Part of Loom. loom-generate --check: the tokens of every step and
// sequence must be identical; the logits of every step are compared with
// the error measure of loom-run --check (ScaledError.h), the worst one
// reported. Steps after the first differing token are not compared (their
// inputs differ).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_CHECK_H
#define LOOM_TOOLS_LOOM_GENERATE_CHECK_H

#include "TokenLoop.h"

namespace loom::generate {

struct CheckResult {
  double tolerance = 0;
  int64_t stepsCompared = 0;
  /// The first step and sequence whose tokens differ (-1: none), and the
  /// two tokens.
  int64_t mismatchStep = -1, mismatchSequence = -1;
  int64_t artifactToken = 0, referenceToken = 0;
  /// The largest |got - want| and scaledError over the logits, and where
  /// the latter is.
  double maxAbsError = 0, maxScaledError = 0;
  int64_t worstStep = 0, worstSequence = 0;

  bool tokensIdentical() const { return mismatchStep < 0; }
  bool passed() const {
    return tokensIdentical() && maxScaledError <= tolerance;
  }
};

/// Compares the artifact's loop \p got with the interpreter's \p want
/// over the first \p real sequences (both kept their logits).
CheckResult compareLoops(const LoopResult &got, const LoopResult &want,
                         int64_t real, int64_t vocab, double tolerance);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_CHECK_H
