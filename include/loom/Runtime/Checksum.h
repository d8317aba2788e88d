/*===- Checksum.h - The artifact checksum --------------------------*- C -*-===*\
|*                                                                            *|
|* Part of Loom. loom_checksum64 (docs/Artifact.md): little-endian 8-byte    *|
|* words, each mixed into the state by the splitmix64 finaliser, the tail    *|
|* zero-padded to a word, the length mixed in last. Header-only and         *|
|* dependency-free: the compiler and the runtime include it.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LOOM_RUNTIME_CHECKSUM_H
#define LOOM_RUNTIME_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline uint64_t loom_checksum_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The checksum of the `size` bytes at `data`. */
static inline uint64_t loom_checksum64(const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = 0x243f6a8885a308d3ULL;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w = 0;
    for (unsigned b = 0; b < 8; ++b)
      w |= (uint64_t)p[i + b] << (8 * b);
    h = loom_checksum_mix(h + 0x9e3779b97f4a7c15ULL + w);
  }
  if (i < size) {
    uint64_t w = 0;
    for (unsigned b = 0; i + b < size; ++b)
      w |= (uint64_t)p[i + b] << (8 * b);
    h = loom_checksum_mix(h + 0x9e3779b97f4a7c15ULL + w);
  }
  return loom_checksum_mix(h ^ (uint64_t)size);
}

#ifdef __cplusplus
}
#endif

#endif /* LOOM_RUNTIME_CHECKSUM_H */
