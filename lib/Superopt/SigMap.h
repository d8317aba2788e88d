//===- SigMap.h - Open-addressing map from signatures to values -*- C++ -*-===//
//
// Part of Loom. The enumerator's map from a node signature (a 64-bit hash)
// to the index of its first value record (Enumerator.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_SUPEROPT_SIGMAP_H
#define LOOM_LIB_SUPEROPT_SIGMAP_H

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace loom::superopt {

/// Open-addressing map from a node signature to its first value record.
/// The search probes it once per graph it visits; a node-based map costs
/// a cache miss more per probe, which at K=4 is much of the search. Large
/// tables ask for huge pages (fewer TLB misses on random probes).
class SigMap {
public:
  SigMap() { allocate(1 << 12); }
  ~SigMap() { std::free(slots); }
  SigMap(const SigMap &) = delete;
  SigMap &operator=(const SigMap &) = delete;

  /// The value of \p key, or nullptr.
  const uint32_t *find(uint64_t key) const {
    if (key == 0)
      return haveZero ? &zeroValue : nullptr;
    for (size_t i = indexOf(key);; i = (i + 1) & mask) {
      if (slots[i].key == key)
        return &slots[i].value;
      if (slots[i].key == 0)
        return nullptr;
    }
  }

  /// Starts loading the slot of \p key.
  void prefetch(uint64_t key) const {
    __builtin_prefetch(&slots[indexOf(key)]);
  }

  /// Adds \p key (absent).
  void insert(uint64_t key, uint32_t value) {
    if (key == 0) {
      haveZero = true;
      zeroValue = value;
      return;
    }
    if (2 * (count + 1) > mask + 1)
      grow();
    place(key, value);
    ++count;
  }

private:
  struct Slot {
    uint64_t key; ///< 0: empty
    uint32_t value;
  };

  size_t indexOf(uint64_t key) const { return (key ^ (key >> 29)) & mask; }
  void place(uint64_t key, uint32_t value) {
    size_t i = indexOf(key);
    while (slots[i].key != 0)
      i = (i + 1) & mask;
    slots[i] = {key, value};
  }
  void allocate(size_t n) {
    size_t bytes = n * sizeof(Slot);
    constexpr size_t kHuge = size_t(1) << 21;
    if (bytes >= kHuge) {
      slots = static_cast<Slot *>(std::aligned_alloc(kHuge, bytes));
#ifdef MADV_HUGEPAGE
      madvise(slots, bytes, MADV_HUGEPAGE);
#endif
    } else {
      slots = static_cast<Slot *>(std::malloc(bytes));
    }
    std::memset(slots, 0, bytes);
    mask = n - 1;
  }
  void grow() {
    Slot *old = slots;
    size_t oldSize = mask + 1;
    allocate(2 * oldSize);
    for (size_t i = 0; i < oldSize; ++i)
      if (old[i].key != 0)
        place(old[i].key, old[i].value);
    std::free(old);
  }

  Slot *slots = nullptr;
  size_t mask = 0;
  size_t count = 0;
  bool haveZero = false;
  uint32_t zeroValue = 0;
};

} // namespace loom::superopt

#endif // LOOM_LIB_SUPEROPT_SIGMAP_H
