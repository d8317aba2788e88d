//===- Groups.h - Groups of sequences in flight, reported as one -*- C++
//-*-===//
//
// Part of Loom. loom-generate --groups=G runs G batches of the artifact's
// batch at once (Ranks.h); the report and --check see them as one batch of
// their real sequences in order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_GROUPS_H
#define LOOM_TOOLS_LOOM_GENERATE_GROUPS_H

#include "Check.h"
#include "TokenLoop.h"

#include "llvm/ADT/ArrayRef.h"

namespace loom::generate {

/// The groups' loops as one: the real sequences of every batch in order,
/// each step's tokens side by side; the prefill the slowest group's, and
/// every group's decode steps (the latency of a group's step). Logits are
/// not kept (--check compares each group: mergeChecks).
struct MergedGroups {
  Batch batch;
  LoopResult loop;
};
MergedGroups mergeGroups(llvm::ArrayRef<Batch> batches,
                         llvm::ArrayRef<LoopResult> loops);

/// The checks of the groups as one over the merged batch: the first group
/// whose tokens differ, else the largest error; sequences numbered in the
/// merged batch (\p batches' real sequences in order).
CheckResult mergeChecks(llvm::ArrayRef<Batch> batches,
                        llvm::ArrayRef<CheckResult> checks);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_GROUPS_H
