//===- Problems.cpp - What a CPU step is, and which forms fit it ----------===//
//
// Part of Loom. See Problems.h. Layer 3 of lib/Runtime/CPU's library steps.
//
//===----------------------------------------------------------------------===//

#include "CPU/Problems.h"

#include <algorithm>
#include <string>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// The result size, in floats, from which a convolution's SiLU runs as a
/// pass of its own after the primitive (swishInPlace) instead of as its
/// eltwise_swish post-op. oneDNN 2.6's post-op cost every EfficientNet-B0
/// convolution with a plane about twice what the pass does (1x1 16 -> 96
/// at 112x112: 0.135 ms against 0.069 ms over the bare 0.083 ms; depthwise
/// 3x3 of 480 channels at 14x14: 0.0106 against 0.0061 ms; 2 threads, best
/// of 41); on one thread (no fork) the pass was as cheap at 4096 floats
/// (depthwise 3x3 of 256 channels at 4x4: 0.0017 against 0.0018 ms) and the
/// post-op cheaper on one pixel (a squeeze-and-excitation's 1x1 products).
/// docs/Runtime.md, "SiLU after the convolution".
constexpr int64_t kSwishPassElements = 4096;

/// The most rows (batch x pixels) on which pointwiseChannelsLast runs a
/// pointwise convolution: 16x16 planes and smaller at batch 1. On the idle
/// machine (2 threads, oneDNN 2.6's brgconv_1x1 on the same NHWC buffers)
/// it took 0.77-0.91x oneDNN's time at 7x7 in MNASNet 1.3, 0.85-0.94x at
/// 14x14 in RegNet-Y-800MF, 0.80-0.94x at 10x10 in EfficientNet-B3, but
/// 0.86-1.01x at 19x19, 0.95-1.19x at 28x28 (MNASNet, RegNet-Y, MobileNet-V2,
/// ResNet-50) and more beyond (docs/Runtime.md, "Pointwise convolutions on
/// small planes").
constexpr int64_t kPointwiseMaxRows = 256;

/// Whether dense 2-D convolution \p s computes faster in nChw16c (oneDNN
/// 2.6's jit:avx512_core) than in the NHWC its brgconv prefers: an output
/// plane of at most 8x8 at a batch of 2 or more (brgconv streams the
/// weights once per image: 512 -> 512 3x3 at 4x4, batch 2, 0.82 -> 0.60
/// ms), or at batch 1 with at least 16 MiB of weights (1024 -> 1024 3x3 at
/// 5x5: 2.6 -> 2.3 ms); channels in whole blocks of 16. Measured with
/// build/bin/loom-bench-small-plane (docs/Runtime.md, "Small planes in
/// nChw16c").
/// At batch 1 a pointwise convolution that Loom's kernel runs stays NHWC
/// (pointwiseKernelTakes): on the weights that make such a step blocked it
/// took 0.78-0.96x the time of oneDNN's `jit_1x1` on nChw16c (2048 -> 2048
/// at 4x4 and 5x5 0.78 / 0.79, at 7x7 0.92; 1024 -> 4096 at 7x7 0.84;
/// 4096 -> 1024 at 5x5 0.96; weights from memory, bias + ReLU, 2 threads,
/// `loom-bench-small-plane`). From batch 2 the rule stands: there the
/// kernel ties nChw16c on half the shapes measured, and a run of blocked
/// steps passes its buffers on without reorders.
bool blockedPays(const art::Conv2dStep &s, const CpuPolicy &policy) {
  if (s.srcShape.size() != 4 || s.groups != 1 || s.srcShape[1] % 16 ||
      s.dstShape[1] % 16)
    return false;
  int64_t batch = s.dstShape[0], plane = s.dstShape[2] * s.dstShape[3];
  if (plane > 64)
    return false;
  if (batch >= 2)
    return true;
  return f32Bytes(s.weightsShape) >= (int64_t(16) << 20) &&
         !pointwiseKernelTakes(s, policy);
}

} // namespace

bool cpu::freeWeights(const art::ConvolutionOperands &s,
                      const void *constantWeights) {
  return constantWeights || f32Bytes(s.weightsShape) <= f32Bytes(s.srcShape);
}

bool cpu::swishAsPass(const art::Conv2dStep &s, const CpuPolicy &policy) {
  return s.activation.kind == Activation::Swish &&
         elements(s.dstShape) >= kSwishPassElements && policy.swishPass &&
         hasSwishPass();
}

bool cpu::isPointwise(const art::Conv2dStep &s) {
  auto allOnes = [](const std::vector<int64_t> &v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  return s.srcShape.size() == 4 && s.groups == 1 && s.weightsShape[2] == 1 &&
         s.weightsShape[3] == 1 && allOnes(s.strides) && allOnes(s.dilations) &&
         std::all_of(s.pads.begin(), s.pads.end(),
                     [](int64_t p) { return p == 0; });
}

/// Whether conv step \p s is a matrix product over the pixels of one image
/// of more than one pixel: 1x1 filter, unit strides and dilations, no
/// padding, no groups, batch 1. (On one pixel, NCHW and NHWC are the same
/// bytes: a squeeze-and-excitation's products keep their convolutions.)
bool cpu::isPixelProduct(const art::Conv2dStep &s) {
  return isPointwise(s) && s.srcShape[0] == 1 &&
         s.srcShape[2] * s.srcShape[3] > 1;
}

bool cpu::pointwisePays(const art::Conv2dStep &s) {
  return s.dstShape[0] * s.dstShape[2] * s.dstShape[3] <= kPointwiseMaxRows;
}

std::optional<std::pair<PointwiseEpilogue, bool>>
cpu::pointwiseEpilogue(const art::PostOp &activation) {
  PointwiseEpilogue e;
  switch (activation.kind) {
  case Activation::None:
    return std::make_pair(e, false);
  case Activation::Relu:
    e.lo = 0.f;
    return std::make_pair(e, false);
  case Activation::Clip:
    e.lo = float(activation.alpha);
    e.hi = float(activation.beta);
    return std::make_pair(e, false);
  case Activation::Swish:
    if (!hasSwishPass())
      return std::nullopt;
    return std::make_pair(e, true);
  case Activation::Sigmoid:
  case Activation::Tanh:
  case Activation::GeluErf:
  case Activation::GeluTanh:
  case Activation::HardSwish:
  case Activation::LeakyRelu:
  case Activation::HardSigmoid:
    return std::nullopt;
  }
  return std::nullopt;
}

bool cpu::pointwiseKernelFits(const art::Conv2dStep &s,
                              const CpuPolicy &policy) {
  return isPointwise(s) && policy.loomPointwise && hasPointwiseKernel() &&
         pointwiseEpilogue(s.activation).has_value();
}

bool cpu::pointwiseKernelTakes(const art::Conv2dStep &s,
                               const CpuPolicy &policy) {
  return pointwiseKernelFits(s, policy) && pointwisePays(s);
}

ConvProblem::ConvProblem(const PrepareContext &ctx, const art::Conv2dStep &s,
                         const void *constantWeights)
    : eng(ctx.engine) {
  auto f32 = memory::data_type::f32;
  using tag = memory::format_tag;
  bool threeD = s.srcShape.size() == 5;
  memory::dims w = dims(s.weightsShape);
  tag weightsTag = threeD ? tag::oidhw : tag::oihw;
  if (s.groups > 1) {
    w.insert(w.begin(), s.groups);
    w[1] /= s.groups;
    weightsTag = threeD ? tag::goidhw : tag::goihw;
  }
  src = memory::desc(dims(s.srcShape), f32, plainTag(s.srcShape.size()));
  dst = memory::desc(dims(s.dstShape), f32, plainTag(s.dstShape.size()));
  userW = memory::desc(w, f32, weightsTag);
  weights =
      freeWeights(s, constantWeights) ? memory::desc(w, f32, tag::any) : userW;
  bias = memory::desc({s.dstShape[1]}, f32, tag::x);
  strides = dims(s.strides);
  size_t k = s.strides.size();
  for (size_t i = 0; i < k; ++i) {
    dilations.push_back(s.dilations[i] - 1);
    padL.push_back(s.pads[i]);
    padR.push_back(s.pads[k + i]);
  }
  hasBias = s.bias != -1;
  swishPass = swishAsPass(s, ctx.policy);
  attr = userScratchpad(
      postOps(swishPass ? art::PostOp{} : s.activation, s.sum != -1));
  // Winograd convolutions are a request: oneDNN 2.6 has them for AVX-512
  // CPUs only (jit_fp32_wino_2x3, jit_wino_4x3), so elsewhere, or with
  // LOOM_ONEDNN_CONV=direct, the step runs oneDNN's direct convolution.
  // They compute in oneDNN's blocked layout (nChw16c) whatever the
  // buffers hold, reordering at their edges: the compiler asks for them
  // only where that still pays (OneDNN.cpp, winogradPays).
  winograd = s.algorithm == art::ConvAlgorithm::Winograd && ctx.policy.winograd;
  if (winograd) {
    try {
      winograd = !isReference(primitive(anyLayout(src), anyLayout(dst)));
    } catch (const dnnl::error &) {
      winograd = false;
    }
  }
  blocked = !winograd && blockedPays(s, ctx.policy) &&
            ctx.policy.smallPlaneBlocked && blockedKernel();
}

memory::desc ConvProblem::own(const memory::desc &plainMd) const {
  if (!blocked)
    return anyLayout(plainMd);
  return memory::desc(plainMd.dims(), plainMd.data_type(),
                      memory::format_tag::nChw16c);
}

bool ConvProblem::blockedKernel() const {
  try {
    auto pd = primitive(anyLayout(src), anyLayout(dst));
    memory::desc nhwc(src.dims(), src.data_type(), memory::format_tag::nhwc);
    if (!(pd.src_desc() == nhwc))
      return false;
    memory::desc b16(src.dims(), src.data_type(), memory::format_tag::nChw16c);
    memory::desc d16(dst.dims(), dst.data_type(), memory::format_tag::nChw16c);
    return std::string(primitive(b16, d16).impl_info_str()).rfind("jit", 0) ==
           0;
  } catch (const dnnl::error &) {
    return false;
  }
}

dnnl::convolution_forward::primitive_desc
ConvProblem::primitive(const memory::desc &srcMd,
                       const memory::desc &dstMd) const {
  auto prop = dnnl::prop_kind::forward_inference;
  auto alg = winograd ? dnnl::algorithm::convolution_winograd
                      : dnnl::algorithm::convolution_direct;
  auto desc =
      hasBias
          ? dnnl::convolution_forward::desc(prop, alg, srcMd, weights, bias,
                                            dstMd, strides, dilations, padL,
                                            padR)
          : dnnl::convolution_forward::desc(prop, alg, srcMd, weights, dstMd,
                                            strides, dilations, padL, padR);
  return {desc, attr, eng};
}

dnnl::convolution_forward::primitive_desc
ConvProblem::planned(const art::Conv2dStep &s, const LayoutPlan &plan) const {
  const ConvProblem &conv = *this;
  if (conv.winograd || conv.blocked)
    return conv.primitive(conv.own(conv.src), conv.own(conv.dst));
  memory::desc dst =
      plan.count(s.dst) ? layoutOf(plan, s.dst, conv.dst) : anyLayout(conv.dst);
  if (plan.count(s.src))
    return conv.primitive(layoutOf(plan, s.src, conv.src), dst);
  if (s.srcShape[1] != 1)
    return conv.primitive(anyLayout(conv.src), dst);
  // One channel: NCHW and NHWC are the same bytes, and oneDNN's kernels
  // match on the tag. Beside an NHWC destination the source is described as
  // NHWC too; NCHW next to NHWC has only the reference implementation (the
  // Fashion-MNIST CNN's inference entries: 550 ms against 2 ms a run).
  memory::desc nhwc = nhwcOf(conv.src);
  return conv.primitive(dst == nhwcOf(conv.dst) ? nhwc : conv.src, dst);
}
