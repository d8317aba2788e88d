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
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_GENERATE_RANKS_H
#define LOOM_TOOLS_LOOM_GENERATE_RANKS_H

#include "TokenLoop.h"

#include "loom-c/Runtime.h"

namespace loom::generate {

/// What the loop gave on the ranks of this process.
struct RanksResult {
  /// The loop of rank 0, or of this process's rank under a launcher.
  LoopResult loop;
  int64_t rank = 0, ranks = 1;
  /// Bytes rank `rank` sent to the others over the loop (its gathers), and
  /// of them in the prefill (step 0).
  int64_t bytesSent = 0, prefillBytes = 0;
  /// How the world was made: "none" (one process), "threads", "launcher".
  std::string world = "none";
};

/// Runs the loop of \p model on its loom_model_world_ranks() ranks:
/// \p ranks is --ranks (0: the artifact's count; otherwise it must be
/// that count), every collective bounded by \p timeoutSeconds.
llvm::Expected<RanksResult> runOnRanks(const loom_model *model,
                                       const DecoderContract &contract,
                                       const Batch &batch,
                                       const LoopOptions &loop, int64_t ranks,
                                       double timeoutSeconds);

} // namespace loom::generate

#endif // LOOM_TOOLS_LOOM_GENERATE_RANKS_H
