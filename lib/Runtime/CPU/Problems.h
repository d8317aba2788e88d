//===- Problems.h - What a CPU step is, and which forms fit it --*- C++ -*-===//
//
// Part of Loom. Layer 3 of lib/Runtime/CPU's library steps (above
// Layouts.h, Policy.h and the steps, OneDnnSteps.h): the facts of a step
// that both the layout planner (Plan.h) and the forms (Forms.h) read,
// whatever the layouts: a convolution as oneDNN sees it (ConvProblem: its
// descriptors, whether it runs Winograd's algorithm or computes in nChw16c,
// its primitive under a given plan), whether it is a pointwise convolution
// or a product over the pixels, and whether Loom's pointwise kernel may run
// it. Nothing here reads a plan that it is not handed, and nothing here
// makes a step: that is the forms', above.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_PROBLEMS_H
#define LOOM_LIB_RUNTIME_CPU_PROBLEMS_H

#include "CPU/OneDnnSteps.h"

#include <optional>
#include <utility>

namespace loom::rt::cpu {

/// Whether a conv's primitive may choose its weights' layout: always for
/// constant weights (reordered once at load); for weights computed at run
/// time (a training step's parameters) when they are no larger than the
/// source, so that reordering them on every run costs little beside the
/// convolution. oneDNN has direct (jit) convolutions for blocked weights
/// only: with plain OIHW weights it falls back to im2col + sgemm (the
/// Fashion-MNIST CNN's 1-channel first convolution: 0.74 -> 0.22 ms on one
/// thread).
bool freeWeights(const artifact::ConvolutionOperands &s,
                 const void *constantWeights);

/// Whether \p s applies its SiLU as a pass after the primitive: a swish
/// activation, a result of at least kSwishPassElements floats, a CPU whose
/// kernel table has the pass, and the policy's swishPass
/// (LOOM_ONEDNN_SWISH=postop keeps oneDNN's post-op, to compare).
bool swishAsPass(const artifact::Conv2dStep &s, const CpuPolicy &policy);

/// Whether conv step \p s is pointwise: a 1x1 filter, unit strides and
/// dilations, no padding, no groups (a matrix product over its pixels).
bool isPointwise(const artifact::Conv2dStep &s);

/// Whether conv step \p s is a matrix product over the pixels of one image
/// of more than one pixel: 1x1 filter, unit strides and dilations, no
/// padding, no groups, batch 1. (On one pixel, NCHW and NHWC are the same
/// bytes: a squeeze-and-excitation's products keep their convolutions.)
bool isPixelProduct(const artifact::Conv2dStep &s);

/// What pointwiseChannelsLast applies after a step's products for its
/// activation \p activation, and whether a SiLU pass follows
/// (swishInPlace); nullopt where the kernel has no epilogue for it.
std::optional<std::pair<PointwiseEpilogue, bool>>
pointwiseEpilogue(const artifact::PostOp &activation);

/// Whether pointwiseChannelsLast can run conv step \p s, its buffers'
/// layouts and its weights' constness aside: a pointwise convolution
/// (isPointwise) whose activation is none, a ReLU, a clip or a SiLU (a
/// pass after it), where the kernel table has the kernel and the policy
/// asks for Loom's (LOOM_ONEDNN_POINTWISE=onednn keeps oneDNN's
/// convolution, to compare).
bool pointwiseKernelFits(const artifact::Conv2dStep &s,
                         const CpuPolicy &policy);

/// Whether pointwiseChannelsLast was measured faster than oneDNN on
/// pointwise convolution \p s (see kPointwiseMaxRows in Problems.cpp).
bool pointwisePays(const artifact::Conv2dStep &s);

/// Whether pointwiseChannelsLast takes conv step \p s where its layouts
/// and weights allow: it fits and pays. The pointwise form's rule, which
/// the choice of nChw16c for small planes (blockedPays) reads too.
bool pointwiseKernelTakes(const artifact::Conv2dStep &s,
                          const CpuPolicy &policy);

/// A conv2d step as oneDNN sees it, activation layouts left to the caller:
/// 2 spatial dimensions, or 3 (oneDNN's 3-D convolution over NCDHW).
struct ConvProblem {
  memory::desc src, dst; ///< plain NC[D]HW: the layout of Loom's buffers
  memory::desc userW, weights, bias;
  memory::dims strides, dilations, padL, padR;
  bool hasBias;
  /// The step asks for Winograd's algorithm and oneDNN has a Winograd
  /// kernel for it on this CPU.
  bool winograd = false;
  /// The step computes in nChw16c whatever its buffers hold (blockedPays):
  /// oneDNN prefers NHWC on this CPU and has a jit kernel for nChw16c.
  bool blocked = false;
  /// The SiLU runs after the primitive, not as its post-op (swishAsPass).
  bool swishPass;
  dnnl::primitive_attr attr;

  const dnnl::engine &eng;

  /// The primitive chooses the weights' layout where freeWeights says
  /// (constant weights are reordered into it once, others on every run).
  ConvProblem(const PrepareContext &ctx, const artifact::Conv2dStep &s,
              const void *constantWeights);

  /// The layout the primitive computes \p plainMd in: nChw16c for a
  /// blocked step, else oneDNN's choice.
  memory::desc own(const memory::desc &plainMd) const;

  /// Whether oneDNN prefers NHWC for this convolution (brgconv, AVX-512)
  /// and has a jit kernel for nChw16c: the pair blockedPays was measured on.
  bool blockedKernel() const;

  /// The primitive computing from \p srcMd into \p dstMd (either may be
  /// format_tag::any: oneDNN chooses).
  dnnl::convolution_forward::primitive_desc
  primitive(const memory::desc &srcMd, const memory::desc &dstMd) const;

  /// The primitive of step \p s under \p plan: planned buffers are passed
  /// in their layout; where a buffer is plain, the primitive still computes
  /// in its preferred layout (a reorder at the edge costs less than a
  /// convolution on NCHW). A plain source of one channel is also NHWC:
  /// passed as it is, it needs no reorder, and oneDNN runs its direct
  /// kernel for plain sources on it (Fashion-MNIST's first convolution:
  /// 0.23 ms against 0.34-0.53 ms for the NHWC kernel oneDNN prefers, on
  /// one thread, before the reorder).
  dnnl::convolution_forward::primitive_desc
  planned(const artifact::Conv2dStep &s, const LayoutPlan &plan) const;
};

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_PROBLEMS_H
