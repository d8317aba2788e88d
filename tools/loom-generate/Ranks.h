//===- Ranks.h - The token loop on every rank of a world --------*- C++ -*-===//
//
// Part of Loom. An artifact compiled for a world of P ranks
// (loom-compile --cache-parallel=P, docs/CacheParallel.md) runs the token
// loop on every rank: under a launcher this process is one rank of the
// launcher's world; without one, every rank is a thread of this process
// (loom-generate --ranks=P), each with its context. The ranks compute the
// same logits (each merges the same gathered partials), so they sample the
// same tokens; the thread form checks that they did.
//
// With several batches (loom-generate --groups) each rank runs their loops
// at once, each a thread with its own context joined to its own copy of
// the world (loom_world_copy), so that the groups pass through pipeline
// stages one behind another: while stage 1 runs group 0's step, stage 0
// runs group 1's.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_RANKS_H
#define LOOM_TOOLS_LOOM_GENERATE_RANKS_H

#include "TokenLoop.h"

#include "loom-c/Runtime.h"

namespace loom::generate {

/// What the loop gave on the ranks of this process.
struct RanksResult {
  /// The loop of each batch on rank 0, or on this process's rank under a
  /// launcher.
  std::vector<LoopResult> loops;
  int64_t rank = 0, ranks = 1;
  /// Bytes rank `rank` sent to the others over the loops (its gathers, in
  /// every batch's world), and of them in the prefills (step 0).
  int64_t bytesSent = 0, prefillBytes = 0;
  /// How the world was made: "none" (one process), "threads", "launcher".
  std::string world = "none";
  /// From the first loop's start to the last one's end, seconds.
  double wallSeconds = 0;
};

/// Runs the loop of \p model for every batch of \p batches at once, on its
/// loom_model_world_ranks() ranks: \p ranks is --ranks (0: the artifact's
/// count; otherwise it must be that count), every collective bounded by
/// \p timeoutSeconds.
llvm::Expected<RanksResult> runOnRanks(const loom_model *model,
                                       const DecoderContract &contract,
                                       llvm::ArrayRef<Batch> batches,
                                       const LoopOptions &loop, int64_t ranks,
                                       double timeoutSeconds);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_RANKS_H
