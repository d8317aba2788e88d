//===- AttentionMask.h - Which keys a query of tg.attention sees -*- C++
//-*-===//
//
// Part of Loom. The one definition of tg.attention's visible keys
// (TGOps.td), shared by the interpreter (loom/Interpreter/AttentionKernel.h)
// and libloomrt's attention step (lib/Runtime/CPU/Kernels/Attention.cpp):
// query i of a block of qLen queries over a live length L sees the keys
// [0, visibleKeys(L, qLen, i, causal)).
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

} // namespace loom::attention

#endif // LOOM_SUPPORT_ATTENTIONMASK_H
