//===- CpuKernels.h - The hand-written CPU kernels, one table per ISA -*- C++
//-*-===//
//
// Part of Loom. The CPU device's hand-written kernels (Cpu.h states what each
// computes) are written once per instruction-set level, each level's forms
// in the kernel's file under a namespace of that level (avx512::, avx2::).
// One table per level holds them, null where a level has no form of a
// kernel (oneDNN then runs the operation); cpuKernels() is the table of the
// level the runtime uses (cpuIsa(): the CPU's, capped by LOOM_CPU_ISA),
// chosen once. Callers use Cpu.h's functions, which go through the table,
// and never test the ISA themselves (ONNX Runtime's MLAS platform table is
// the model).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPUKERNELS_H
#define LOOM_LIB_RUNTIME_CPUKERNELS_H

#include "CPU/Cpu.h"
#include "loom/Artifact/CpuIsa.h"

namespace loom::rt::cpu {

/// The kernels of one level, with Cpu.h's signatures; null: no form there.
struct CpuKernelTable {
  artifact::CpuIsa isa = artifact::CpuIsa::Sse42;
  void (*swishInPlace)(float *data, int64_t n) = nullptr;
  void (*poolChannelsLast)(const PoolGeometry &g, const float *src,
                           float *dst) = nullptr;
  void (*poolPlanes)(const PoolGeometry &g, const float *src,
                     float *dst) = nullptr;
  void (*globalAveragePoolChannelsLast)(const ChannelsLastPlanes &g,
                                        const float *src, float *dst) = nullptr;
  void (*scaleChannelsLast)(const ChannelsLastPlanes &g, int64_t groups,
                            const float *src, const ChannelScale &scale,
                            float *dst) = nullptr;
  void (*pointwiseChannelsLast)(const PointwiseWeights &w, int64_t pixels,
                                const float *src, const PointwiseEpilogue &e,
                                float *dst) = nullptr;
  void (*transposePlanes)(const TransposeShape &s, const float *src,
                          float *dst) = nullptr;
  void (*groupedConvChannelsLast)(const GroupedConvGeometry &g,
                                  const float *src, const float *packed,
                                  const float *bias, float *dst) = nullptr;
  void (*convolveStem)(const DenseConvGeometry &g, const float *src,
                       const float *packed, const float *bias,
                       const StemPostOp &post, float *dst) = nullptr;
  void (*convolveWinograd8)(const DenseConvGeometry &g, int tile,
                            const float *src, const float *packed,
                            const PointwiseEpilogue &e, float *dst) = nullptr;
  void (*attention)(const AttentionGeometry &g, const float *q, const float *k,
                    const float *v, const int64_t *lives, float *dst, float *lse) = nullptr;
  void (*gemv)(const GemvShape &s, const float *src, const float *weights,
               const float *bias, float *dst) = nullptr;
};

/// The table of the level the runtime uses (cpuIsa()), chosen once.
const CpuKernelTable &cpuKernels();

/// The table of level \p isa, whatever this CPU has: for tests and
/// benchmarks that compare the forms of one kernel on a CPU that runs them.
const CpuKernelTable &cpuKernelsOf(artifact::CpuIsa isa);

/// The kernels' names and whether the table \p t has each, in the table's
/// order: what `loom-run --cpu-info` prints.
std::vector<std::pair<const char *, bool>> kernelForms(const CpuKernelTable &t);

namespace avx512 {
void swishInPlace(float *data, int64_t n);
void poolChannelsLast(const PoolGeometry &g, const float *src, float *dst);
void poolPlanes(const PoolGeometry &g, const float *src, float *dst);
void globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                   const float *src, float *dst);
void scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                       const float *src, const ChannelScale &scale, float *dst);
void pointwiseChannelsLast(const PointwiseWeights &w, int64_t pixels,
                           const float *src, const PointwiseEpilogue &e,
                           float *dst);
void transposePlanes(const TransposeShape &s, const float *src, float *dst);
void groupedConvChannelsLast(const GroupedConvGeometry &g, const float *src,
                             const float *packed, const float *bias,
                             float *dst);
void convolveStem(const DenseConvGeometry &g, const float *src,
                  const float *packed, const float *bias,
                  const StemPostOp &post, float *dst);
void attention(const AttentionGeometry &g, const float *q, const float *k,
               const float *v, const int64_t *lives, float *dst, float *lse);
void gemv(const GemvShape &s, const float *src, const float *weights,
          const float *bias, float *dst);
} // namespace avx512

namespace avx2 {
void swishInPlace(float *data, int64_t n);
void pointwiseChannelsLast(const PointwiseWeights &w, int64_t pixels,
                           const float *src, const PointwiseEpilogue &e,
                           float *dst);
void transposePlanes(const TransposeShape &s, const float *src, float *dst);
void globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                   const float *src, float *dst);
void scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                       const float *src, const ChannelScale &scale, float *dst);
void poolChannelsLast(const PoolGeometry &g, const float *src, float *dst);
void poolPlanes(const PoolGeometry &g, const float *src, float *dst);
void convolveWinograd8(const DenseConvGeometry &g, int tile, const float *src,
                       const float *packed, const PointwiseEpilogue &e,
                       float *dst);
void attention(const AttentionGeometry &g, const float *q, const float *k,
               const float *v, const int64_t *lives, float *dst, float *lse);
void gemv(const GemvShape &s, const float *src, const float *weights,
          const float *bias, float *dst);
} // namespace avx2

/// Forms in plain C++ for every x86-64 CPU (the SSE4.2 level's).
namespace portable {
void attention(const AttentionGeometry &g, const float *q, const float *k,
               const float *v, const int64_t *lives, float *dst, float *lse);
void gemv(const GemvShape &s, const float *src, const float *weights,
          const float *bias, float *dst);
} // namespace portable

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPUKERNELS_H
