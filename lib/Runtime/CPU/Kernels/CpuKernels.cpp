//===- CpuKernels.cpp - The hand-written CPU kernels, one table per ISA ---===//
//
// Part of Loom. See CpuKernels.h. Cpu.h's kernel functions are defined here,
// each a call through the table of the level the runtime uses.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels/CpuKernels.h"
#include "CPU/CpuFeatures.h"

using namespace loom::rt;
using namespace loom::rt::cpu;
using loom::artifact::CpuIsa;

namespace {

CpuKernelTable avx512Table() {
  CpuKernelTable t;
  t.isa = CpuIsa::Avx512;
  t.swishInPlace = avx512::swishInPlace;
  t.poolChannelsLast = avx512::poolChannelsLast;
  t.poolPlanes = avx512::poolPlanes;
  t.globalAveragePoolChannelsLast = avx512::globalAveragePoolChannelsLast;
  t.scaleChannelsLast = avx512::scaleChannelsLast;
  t.pointwiseChannelsLast = avx512::pointwiseChannelsLast;
  t.transposePlanes = avx512::transposePlanes;
  t.groupedConvChannelsLast = avx512::groupedConvChannelsLast;
  t.convolveStem = avx512::convolveStem;
  t.attention = avx512::attention;
  t.gemv = avx512::gemv;
  return t;
}

CpuKernelTable avx2Table() {
  CpuKernelTable t;
  t.isa = CpuIsa::Avx2;
  t.swishInPlace = avx2::swishInPlace;
  t.pointwiseChannelsLast = avx2::pointwiseChannelsLast;
  t.transposePlanes = avx2::transposePlanes;
  t.globalAveragePoolChannelsLast = avx2::globalAveragePoolChannelsLast;
  t.scaleChannelsLast = avx2::scaleChannelsLast;
  t.poolChannelsLast = avx2::poolChannelsLast;
  t.poolPlanes = avx2::poolPlanes;
  t.convolveWinograd8 = avx2::convolveWinograd8;
  t.attention = avx2::attention;
  t.gemv = avx2::gemv;
  return t;
}

CpuKernelTable sse42Table() {
  CpuKernelTable t;
  t.isa = CpuIsa::Sse42;
  t.attention = portable::attention;
  t.gemv = portable::gemv;
  return t;
}

} // namespace

const CpuKernelTable &cpu::cpuKernelsOf(CpuIsa isa) {
  static const CpuKernelTable avx512 = avx512Table(), avx2 = avx2Table(),
                              sse42 = sse42Table();
  switch (isa) {
  case CpuIsa::Avx512:
    return avx512;
  case CpuIsa::Avx2:
    return avx2;
  case CpuIsa::Sse42:
    return sse42;
  }
  return sse42;
}

const CpuKernelTable &cpu::cpuKernels() {
  static const CpuKernelTable &table = cpuKernelsOf(cpuIsa());
  return table;
}

std::vector<std::pair<const char *, bool>>
cpu::kernelForms(const CpuKernelTable &t) {
  return {{"swish", t.swishInPlace != nullptr},
          {"pool-channels-last", t.poolChannelsLast != nullptr},
          {"pool-planes", t.poolPlanes != nullptr},
          {"global-average-pool-channels-last",
           t.globalAveragePoolChannelsLast != nullptr},
          {"scale-channels-last", t.scaleChannelsLast != nullptr},
          {"pointwise", t.pointwiseChannelsLast != nullptr},
          {"transpose", t.transposePlanes != nullptr},
          {"grouped-conv", t.groupedConvChannelsLast != nullptr},
          {"stem-conv", t.convolveStem != nullptr},
          {"winograd-conv", t.convolveWinograd8 != nullptr},
          {"attention", t.attention != nullptr},
          {"gemv", t.gemv != nullptr}};
}

bool cpu::hasSwishPass() { return cpuKernels().swishInPlace; }
void cpu::swishInPlace(float *data, int64_t n) {
  cpuKernels().swishInPlace(data, n);
}

bool cpu::hasPoolKernel() { return cpuKernels().poolChannelsLast; }
bool cpu::hasPlanePoolKernel() { return cpuKernels().poolPlanes; }
void cpu::poolChannelsLast(const PoolGeometry &g, const float *src,
                           float *dst) {
  cpuKernels().poolChannelsLast(g, src, dst);
}
void cpu::poolPlanes(const PoolGeometry &g, const float *src, float *dst) {
  cpuKernels().poolPlanes(g, src, dst);
}

bool cpu::hasSqueezeExciteKernels() {
  return cpuKernels().globalAveragePoolChannelsLast &&
         cpuKernels().scaleChannelsLast;
}
void cpu::globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                        const float *src, float *dst) {
  cpuKernels().globalAveragePoolChannelsLast(g, src, dst);
}
void cpu::scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                            const float *src, const ChannelScale &scale,
                            float *dst) {
  cpuKernels().scaleChannelsLast(g, groups, src, scale, dst);
}

bool cpu::hasPointwiseKernel() { return cpuKernels().pointwiseChannelsLast; }
void cpu::pointwiseChannelsLast(const PointwiseWeights &w, int64_t pixels,
                                const float *src, const PointwiseEpilogue &e,
                                float *dst) {
  cpuKernels().pointwiseChannelsLast(w, pixels, src, e, dst);
}

bool cpu::hasTransposeKernel() { return cpuKernels().transposePlanes; }
void cpu::transposePlanes(const TransposeShape &s, const float *src,
                          float *dst) {
  cpuKernels().transposePlanes(s, src, dst);
}

bool cpu::hasGroupedConvKernel() {
  return cpuKernels().groupedConvChannelsLast;
}
void cpu::groupedConvChannelsLast(const GroupedConvGeometry &g,
                                  const float *src, const float *packed,
                                  const float *bias, float *dst) {
  cpuKernels().groupedConvChannelsLast(g, src, packed, bias, dst);
}

bool cpu::hasStemConvKernel() { return cpuKernels().convolveStem; }
void cpu::convolveStem(const DenseConvGeometry &g, const float *src,
                       const float *packed, const float *bias,
                       const StemPostOp &post, float *dst) {
  cpuKernels().convolveStem(g, src, packed, bias, post, dst);
}

bool cpu::hasWinogradConvKernel() { return cpuKernels().convolveWinograd8; }
void cpu::convolveWinograd8(const DenseConvGeometry &g, int tile,
                            const float *src, const float *packed,
                            const PointwiseEpilogue &e, float *dst) {
  cpuKernels().convolveWinograd8(g, tile, src, packed, e, dst);
}

void cpu::gemv(const GemvShape &s, const float *src, const float *weights,
               const float *bias, float *dst) {
  cpuKernels().gemv(s, src, weights, bias, dst);
}

void cpu::attention(const AttentionGeometry &g, const float *q, const float *k,
                    const float *v, const int64_t *lives, float *dst, float *lse) {
  cpuKernels().attention(g, q, k, v, lives, dst, lse);
}
