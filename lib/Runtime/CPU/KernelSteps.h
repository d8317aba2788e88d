//===- KernelSteps.h - The CPU device's Loom-kernel steps -------*- C++ -*-===//
//
// Part of Loom. Layer 2 of lib/Runtime/CPU's library steps (above Cpu.h and
// its kernels, Kernels/CpuKernels.h; beside OneDnnSteps.h): the prepared
// steps that run Loom's hand-written kernels instead of a oneDNN primitive,
// each with its geometry and its constant weights packed once, and what
// each says it runs (describe()). Which step a form makes, and when, is
// the forms' choice (Forms.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_KERNELSTEPS_H
#define LOOM_LIB_RUNTIME_CPU_KERNELSTEPS_H

#include "CPU/Cpu.h"

#include <memory>
#include <string>

namespace loom::rt::cpu {

using StepPtr = std::unique_ptr<PreparedStep>;

/// The level of Loom's own kernels in use ("avx512", "avx2"), as a step's
/// description names it.
std::string kernelLevel();

/// A grouped convolution between NHWC buffers run by
/// groupedConvChannelsLast instead of oneDNN, its constant \p weights
/// (OIHW) packed once.
StepPtr groupedConvStep(const artifact::Conv2dStep &s,
                        const GroupedConvGeometry &g, const float *weights);

/// A stem convolution run by convolveStem (StemConv.cpp): the NCHW source
/// read in place, the NHWC result written, the weights packed once, a SiLU
/// after it as its own pass (as a oneDNN convolution's swish pass).
StepPtr stemConvStep(const artifact::Conv2dStep &s, const DenseConvGeometry &g,
                     const StemPostOp &post, const void *weights);

/// A 3x3 convolution of stride 1 between nChw8c buffers run by
/// convolveWinograd8 (WinogradConv.cpp) with output tiles of \p tile x
/// \p tile instead of oneDNN, its constant
/// \p weights (OIHW) transformed once, with its residual sum (if any) and
/// \p clamp's activation (lo, hi; its bias and sum pointers unset: the
/// step's own buffers give them).
StepPtr winogradConvStep(const artifact::Conv2dStep &s,
                         const DenseConvGeometry &g, int tile,
                         const PointwiseEpilogue &clamp, const float *weights);

/// A pointwise convolution between NHWC buffers (or into a plain image:
/// \p e.planar), run by pointwiseChannelsLast on weights packed at load
/// (on huge pages with \p hugePages), not by oneDNN; with \p swish a SiLU
/// as the pass after it (swishInPlace).
StepPtr pointwiseConvStep(const artifact::Conv2dStep &s, const float *weights,
                          const PointwiseEpilogue &e, bool swish,
                          bool hugePages);

/// A matrix product of \p rows rows by constant 2-d weights [in][out] on
/// pointwiseChannelsLast, as pointwiseConvStep.
StepPtr pointwiseMatmulStep(const artifact::MatmulStep &s, int64_t rows,
                            const float *weights, const PointwiseEpilogue &e,
                            bool swish, bool hugePages);

/// One of Pool.cpp's kernels: poolChannelsLast or poolPlanes.
using PoolKernel = void (*)(const PoolGeometry &, const float *, float *);

/// A pool run by \p kernel instead of oneDNN: poolChannelsLast
/// (channels-last buffers) or poolPlanes (plain ones).
StepPtr kernelPoolStep(const artifact::Pool2dStep &s, const PoolGeometry &g,
                       PoolKernel kernel);

/// A global average pool from a channels-last buffer \p src into \p dst,
/// run by globalAveragePoolChannelsLast (SqueezeExcite.cpp).
StepPtr globalAverageStep(int64_t src, int64_t dst,
                          const ChannelsLastPlanes &g);

/// How scaleChannelsLast runs a binary step: the buffer as channel groups
/// (NHWC: one an image; nChw16c / nChw8c: C / 16 of 16 channels, C / 8 of
/// 8), the floats between two images' factors and shifts (0: shared by
/// the images), the ReLU.
struct ChannelsLastScaling {
  ChannelsLastPlanes g;
  int64_t groups = 1, scaleImage = 0, shiftImage = 0;
  bool relu = false;
};

/// A per-channel multiply \p src0 * \p src1 (+ \p shift, when not -1) into
/// \p dst (a squeeze-and-excitation's; a batchnorm's with its shift and
/// ReLU), run by scaleChannelsLast (SqueezeExcite.cpp) instead of oneDNN.
StepPtr channelScaleStep(int64_t src0, int64_t src1, int64_t shift, int64_t dst,
                         const ChannelsLastScaling &scaling);

/// A matrix product of \p rows (1 to kGemvMaxRows) rows by 2-d weights
/// [in][out] read as they are, with its bias and a ReLU if it has them, on
/// gemv() (Gemv.cpp): the one-row products of a decode step.
StepPtr gemvStep(const artifact::MatmulStep &s, int64_t rows);

/// A loomrt.attention step, run by attention() (Attention.cpp).
StepPtr attentionStep(const artifact::AttentionStep &s);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_KERNELSTEPS_H
