//===- ContextWorld.h - The world a context's collectives run over -*- C++ -*-===//
//
// Part of Loom. An artifact compiled for a world of ranks (cache
// parallelism, docs/CacheParallel.md) holds loomrt.world_rank and
// loomrt.all_gather steps; the runtime runs them over the world the
// context joined (loom_context_join_world, include/loom-c/Runtime.h), not
// on a device. Without a world a context is rank 0 of 1.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CONTEXTWORLD_H
#define LOOM_LIB_RUNTIME_CONTEXTWORLD_H

#include "Device.h"
#include "loom/Artifact/Schema.h"

struct loom_world;

namespace loom::rt {

/// Writes the context's rank (0 without a world) at \p dst.
Error runWorldRank(loom_world *world, const artifact::WorldRankStep &s,
                   Device &device, Queue &queue, void *dst);

/// Gathers \p src of every rank of \p world into \p dst, by rank.
Error runAllGather(loom_world *world, const artifact::AllGatherStep &s,
                   Device &device, Queue &queue, const void *src, void *dst);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_CONTEXTWORLD_H
