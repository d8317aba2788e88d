//===- Hash.h - Structural hashing helpers of the search --------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_HASH_H
#define LOOM_SEARCH_HASH_H

#include <cstdint>

namespace loom::search {

/// Mixes `v` into `h` (splitmix64 finaliser): cheap, and good enough that a
/// 64-bit structural hash names a graph.
inline uint64_t hashMix(uint64_t h, uint64_t v) {
  uint64_t z = h * 0x9e3779b97f4a7c15ULL + v + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace loom::search

#endif // LOOM_SEARCH_HASH_H
