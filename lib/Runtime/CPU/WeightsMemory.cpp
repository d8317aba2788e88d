//===- WeightsMemory.cpp - Memory for weights packed at load --------------===//
//
// Part of Loom. See Cpu.h (allocateWeights). A model streams its weights
// from memory on every run: ResNeXt-101 32x8d's last two stages alone read
// 4 MiB a 1x1 convolution, 46 of them. On 4 KiB pages each of those steps
// walks the page tables a thousand times (the TLB holds a few MiB of
// pages); on a transparent huge page one entry covers 2 MiB. This VM's
// kernel gives huge pages only where a process asks (THP mode `madvise`).
//
//===----------------------------------------------------------------------===//

#include "CPU/Cpu.h"
#include "CPU/Policy.h"

#include <algorithm>
#include <cstdlib>
#include <sys/mman.h>

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kCacheLine = 64;

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

} // namespace

size_t cpu::weightsAlignment(size_t bytes, std::optional<bool> hugePages) {
  bool huge = bytes >= kHugePage &&
              (hugePages ? *hugePages : hugePagesFromEnvironment());
  return huge ? kHugePage : kCacheLine;
}

WeightsBlock cpu::allocateWeights(size_t bytes,
                                  std::optional<bool> hugePages) {
  size_t align = weightsAlignment(bytes, hugePages);
  bool huge = align == kHugePage;
  size_t size = roundUp(std::max<size_t>(bytes, 1), align);
  void *p = std::aligned_alloc(align, size);
  if (!p)
    return nullptr;
  // Advice only: where the kernel has no huge page to give, 4 KiB pages.
  if (huge)
    madvise(p, size, MADV_HUGEPAGE);
  return WeightsBlock(p);
}
