//===- WeightsMemoryTest.cpp - Memory for weights packed at load ----------===//
//
// Part of Loom. lib/Runtime/CPU/WeightsMemory.cpp: allocateWeights aligns
// blocks of 2 MiB and more to 2 MiB (where transparent huge pages can back
// them), smaller ones to a cache line, and keeps every block to the cache
// line with LOOM_HUGE_PAGES=0; every byte asked for is writable.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/CPU/Cpu.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace loom::rt::cpu;

namespace {

constexpr size_t kTwoMiB = size_t(2) << 20;

uintptr_t address(const WeightsBlock &b) {
  return reinterpret_cast<uintptr_t>(b.get());
}

/// The block, checked non-null and filled end to end (every byte writable).
WeightsBlock filled(size_t bytes) {
  WeightsBlock b = allocateWeights(bytes);
  EXPECT_NE(b.get(), nullptr);
  if (b)
    std::memset(b.get(), 0x5a, bytes);
  return b;
}

TEST(WeightsMemory, LargeBlocksOnHugePageBoundaries) {
  unsetenv("LOOM_HUGE_PAGES");
  for (size_t bytes : {kTwoMiB, kTwoMiB + 4, 3 * kTwoMiB + 100}) {
    WeightsBlock b = filled(bytes);
    EXPECT_EQ(address(b) % kTwoMiB, 0u) << bytes << " bytes";
  }
}

TEST(WeightsMemory, SmallBlocksOnCacheLines) {
  unsetenv("LOOM_HUGE_PAGES");
  for (size_t bytes : {size_t(1), size_t(64), size_t(1000), kTwoMiB - 1}) {
    WeightsBlock b = filled(bytes);
    EXPECT_EQ(address(b) % 64, 0u) << bytes << " bytes";
  }
}

TEST(WeightsMemory, AlignmentBySize) {
  unsetenv("LOOM_HUGE_PAGES");
  EXPECT_EQ(weightsAlignment(kTwoMiB - 1), 64u);
  EXPECT_EQ(weightsAlignment(kTwoMiB), kTwoMiB);
  EXPECT_EQ(weightsAlignment(100 * kTwoMiB), kTwoMiB);
}

TEST(WeightsMemory, SwitchedOffKeepsCacheLines) {
  setenv("LOOM_HUGE_PAGES", "0", 1);
  EXPECT_EQ(weightsAlignment(3 * kTwoMiB), 64u);
  WeightsBlock b = filled(3 * kTwoMiB);
  EXPECT_EQ(address(b) % 64, 0u);
  setenv("LOOM_HUGE_PAGES", "1", 1);
  EXPECT_EQ(weightsAlignment(3 * kTwoMiB), kTwoMiB);
  unsetenv("LOOM_HUGE_PAGES");
}

} // namespace
