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

/* The state before any word. */
#define LOOM_CHECKSUM_START 0x243f6a8885a308d3ULL

/* The state \p h after the `words` little-endian 8-byte words at `data`:
   loom_checksum64's loop, so a checksum taken in pieces of whole words
   (loom_checksum_words, then loom_checksum_end on the rest) equals the
   whole's. */
static inline uint64_t loom_checksum_words(uint64_t h, const void *data,
                                           size_t words) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < 8 * words; i += 8) {
    uint64_t w = 0;
    for (unsigned b = 0; b < 8; ++b)
      w |= (uint64_t)p[i + b] << (8 * b);
    h = loom_checksum_mix(h + 0x9e3779b97f4a7c15ULL + w);
  }
  return h;
}

/* The checksum from state \p h after the last `rest` (< 8) bytes at
   `data` of a total of `size` bytes. */
static inline uint64_t loom_checksum_end(uint64_t h, const void *data,
                                         size_t rest, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  if (rest) {
    uint64_t w = 0;
    for (unsigned b = 0; b < rest; ++b)
      w |= (uint64_t)p[b] << (8 * b);
    h = loom_checksum_mix(h + 0x9e3779b97f4a7c15ULL + w);
  }
  return loom_checksum_mix(h ^ (uint64_t)size);
}

/* The checksum of the `size` bytes at `data`. */
static inline uint64_t loom_checksum64(const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = loom_checksum_words(LOOM_CHECKSUM_START, p, size / 8);
  return loom_checksum_end(h, p + size / 8 * 8, size % 8, size);
}

#ifdef __cplusplus
}

namespace loom {

/* From this size on, a whole file's checksum is worth a thread of its own
   beside the caller's other pass over the bytes (each pass is a serial chain:
   0.2-0.28 s over NasRNN's 75 MB rewritten weights at load average 13). */
inline constexpr size_t kChecksumThreadBytes = 4 << 20;

/* loom_checksum64 of bytes given in pieces of any size: add() them in order,
   then value() is the checksum of the whole (a file checksummed as it is
   written, never held in memory at once). */
class ChecksumStream {
public:
  void add(const void *data, size_t size) {
    const unsigned char *p = (const unsigned char *)data;
    total += size;
    while (size && carried) {
      carry[carried++] = *p++;
      --size;
      if (carried == 8) {
        h = loom_checksum_words(h, carry, 1);
        carried = 0;
      }
    }
    h = loom_checksum_words(h, p, size / 8);
    for (size_t i = size / 8 * 8; i < size; ++i)
      carry[carried++] = p[i];
  }
  uint64_t value() const { return loom_checksum_end(h, carry, carried, total); }

private:
  uint64_t h = LOOM_CHECKSUM_START;
  unsigned char carry[8] = {};
  size_t carried = 0, total = 0;
};

} // namespace loom
#endif

#endif /* LOOM_RUNTIME_CHECKSUM_H */
