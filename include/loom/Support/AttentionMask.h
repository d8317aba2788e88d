//===- AttentionMask.h - Which keys a query of tg.attention sees -*- C++
//-*-===//
//
// Part of Loom. The one definition of tg.attention's visible keys
// (TGOps.td), shared by the interpreter (loom/Interpreter/AttentionKernel.h)
// and libloomrt's attention step (lib/Runtime/CPU/Kernels/Attention.cpp):
// query i of a block of qLen queries over a live length L sees the keys
// [0, visibleKeys(L, qLen, i, causal)). tg.shard_attention's caches hold one
// shard of a sequence's positions (round-robin: key j of shard s of P is
// position j * P + s); of the first g positions the shard holds the keys
// [0, shardKeys(g, shard, capacity)).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_ATTENTIONMASK_H
#define LOOM_SUPPORT_ATTENTIONMASK_H

#include <algorithm>
#include <cstdint>

namespace loom::attention {

/// A run-time length clamped to [0, capacity].
inline int64_t liveLength(int64_t length, int64_t capacity) {
  return std::clamp<int64_t>(length, 0, capacity);
}

/// The keys query \p i (of \p qLen) sees over live length \p live: all
/// \p live, or with \p causal those up to its own position, the queries
/// being the last qLen positions of the live sequence.
inline int64_t visibleKeys(int64_t live, int64_t qLen, int64_t i, bool causal) {
  if (!causal)
    return live;
  return std::clamp<int64_t>(live - qLen + i + 1, 0, live);
}

/// One shard of a cache sharded round-robin by position over `count`
/// shards: key j is position j * count + index (count 1: the whole cache).
struct Shard {
  int64_t count = 1, index = 0;
};

/// Of the first \p g positions of a sequence, the keys \p shard holds:
/// ceil((g - index) / count), at most \p capacity.
inline int64_t shardKeys(int64_t g, const Shard &shard, int64_t capacity) {
  if (g <= shard.index)
    return 0;
  return std::min((g - shard.index + shard.count - 1) / shard.count, capacity);
}

/// The live length of a sequence whose cache is \p shard with \p capacity
/// keys: clamped to [0, count * capacity] (the positions the shards hold).
inline int64_t shardLive(int64_t length, const Shard &shard, int64_t capacity) {
  return liveLength(length, shard.count * capacity);
}

} // namespace loom::attention

#endif // LOOM_SUPPORT_ATTENTIONMASK_H
