//===- Attention.cpp - tg.attention's kernel, per instruction-set level ---===//
//
// Part of Loom. See Cpu.h's attention() and docs/Runtime.md "Attention".
// One algorithm (AttentionImpl.inc), compiled three times over a vector of
// W floats: AVX-512 (16), AVX2 + FMA (8), and plain C++ (1) for every other
// x86-64 CPU.
//
// The design. A tile is up to 64 query rows that read one key/value head
// (the query heads of a group, then their positions), so a decode step of
// grouped-query attention reads each key once for the whole group. Keys go
// by blocks of 64: each row's scores for the block, the block's maximum,
// exp(score - max) and the running sum and output rescaled by exp(old max -
// new max): FlashAttention's online softmax, so no score matrix wider than
// a block exists. A tile of four rows or more gathers each block's keys
// transposed once and takes its rows four at a time (the scores with the
// keys along the vector, the outputs with each value row loaded once for
// the four); a shorter tile (decode without grouped heads, bound by memory)
// takes dot products a row at a time. A row stops at
// its visible keys (loom/Support/AttentionMask.h) and a tile at its rows'
// last visible key: keys past the live length are never read, and a
// causal prefill skips the blocks above the diagonal. When the tiles are
// fewer than the threads (decode at batch 1), each tile's keys are split
// into equal shares, at least 256 keys each, one task a share, and the
// partial (max, sum, output) merged by their log-sum-exp (Flash-Decoding's
// split-KV): the result is the softmax of the union, not an approximation.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"
#include "CPU/Kernels/FloatVec.h"

#include "loom/Support/AttentionMask.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace loom;
using namespace loom::rt;

#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,fma"))),  \
                             apply_to = function)
namespace loom::rt::cpu::avx512 {
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::avx512
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
namespace loom::rt::cpu::avx2 {
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::avx2
#pragma clang attribute pop

namespace loom::rt::cpu::portable {
#include "CPU/Kernels/AttentionImpl.inc"
} // namespace loom::rt::cpu::portable
