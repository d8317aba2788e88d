//===- Groups.cpp - Groups of sequences in flight, reported as one --------===//
//
// Part of Loom. See Groups.h.
//
//===----------------------------------------------------------------------===//

#include "Groups.h"

#include <algorithm>

using namespace loom::generate;

MergedGroups loom::generate::mergeGroups(llvm::ArrayRef<Batch> batches,
                                         llvm::ArrayRef<LoopResult> loops) {
  MergedGroups m;
  for (const Batch &b : batches)
    m.batch.prompts.insert(m.batch.prompts.end(), b.prompts.begin(),
                           b.prompts.begin() + b.real);
  m.batch.real = int64_t(m.batch.prompts.size());
  size_t steps = loops.front().tokens.size();
  m.loop.tokens.assign(steps, {});
  for (size_t g = 0; g < loops.size(); ++g) {
    const LoopResult &l = loops[g];
    for (size_t s = 0; s < steps; ++s)
      m.loop.tokens[s].insert(m.loop.tokens[s].end(), l.tokens[s].begin(),
                              l.tokens[s].begin() + batches[g].real);
    m.loop.prefillSeconds = std::max(m.loop.prefillSeconds, l.prefillSeconds);
    m.loop.decodeSeconds.insert(m.loop.decodeSeconds.end(),
                                l.decodeSeconds.begin(), l.decodeSeconds.end());
  }
  return m;
}

CheckResult loom::generate::mergeChecks(llvm::ArrayRef<Batch> batches,
                                        llvm::ArrayRef<CheckResult> checks) {
  CheckResult merged = checks.front();
  merged.maxAbsError = merged.maxScaledError = 0;
  merged.worstStep = merged.worstSequence = 0;
  merged.stepsCompared = 0;
  merged.mismatchStep = merged.mismatchSequence = -1;
  int64_t offset = 0;
  for (size_t g = 0; g < checks.size(); ++g) {
    const CheckResult &c = checks[g];
    merged.stepsCompared = std::max(merged.stepsCompared, c.stepsCompared);
    if (!c.tokensIdentical() && merged.tokensIdentical()) {
      merged.mismatchStep = c.mismatchStep;
      merged.mismatchSequence = offset + c.mismatchSequence;
      merged.artifactToken = c.artifactToken;
      merged.referenceToken = c.referenceToken;
    }
    merged.maxAbsError = std::max(merged.maxAbsError, c.maxAbsError);
    if (c.maxScaledError > merged.maxScaledError || g == 0) {
      merged.maxScaledError = c.maxScaledError;
      merged.worstStep = c.worstStep;
      merged.worstSequence = offset + c.worstSequence;
    }
    offset += batches[g].real;
  }
  return merged;
}
