//===- Conv.cpp - The forms of a convolution on the CPU
//--------------------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.conv2d step runs, tried in order: a stem on
// Loom's kernel, a grouped convolution of 16-channel groups, a pointwise
// convolution on Loom's kernel, on AVX2 a dilated convolution as oneDNN's
// sgemm per filter tap and a 1x1 convolution between plain buffers as its
// sgemm of the planes, a 1x1 convolution on a plain source as a oneDNN
// matrix product over its pixels, on AVX2 a Winograd convolution between
// nChw8c buffers on Loom's kernel, and oneDNN's convolution, the only one
// with layouts it wants for the planner.
//
//===----------------------------------------------------------------------===//

#include "CPU/CpuFeatures.h"
#include "CPU/Forms.h"
#include "CPU/KernelSteps.h"

#include <algorithm>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

bool allOnes(const art::Shape &v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

bool unitDilations(const art::Conv2dStep &s) { return allOnes(s.dilations); }

//===----------------------------------------------------------------------===//
// Stem: convolveStem (StemConv.cpp)
//===----------------------------------------------------------------------===//

/// The post-op convolveStem applies for \p a (a SiLU: none, the step runs
/// it after), or nullopt for the activations it has not.
std::optional<StemPostOp> stemPostOp(const art::PostOp &a) {
  using Kind = StemPostOp::Kind;
  switch (a.kind) {
  case Activation::None:
    return StemPostOp{};
  case Activation::Relu:
    return StemPostOp{Kind::Relu};
  case Activation::Clip:
    return StemPostOp{Kind::Clip, float(a.alpha), float(a.beta)};
  case Activation::HardSwish:
    return StemPostOp{Kind::HardSwish};
  case Activation::Swish:
    if (!hasSwishPass())
      return std::nullopt;
    return StemPostOp{};
  case Activation::Sigmoid:
  case Activation::Tanh:
  case Activation::GeluErf:
  case Activation::GeluTanh:
  case Activation::LeakyRelu:
  case Activation::HardSigmoid:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Whether convolveStem can run conv step \p s: a dense 2-D convolution
/// (no groups, dilation 1, no residual sum) of 2 to 4 input channels with
/// constant weights, with an activation stemPostOp has, where the kernel
/// table has the kernel (LOOM_ONEDNN_STEM=onednn keeps oneDNN's, to
/// compare). oneDNN's brgconv computes it in NHWC after a reorder of the
/// input (from memory), its kernel for NCHW sources into nChw16c with a
/// reorder of the result after. One channel needs no reorder (planned reads
/// it as NHWC), and there the kernel was no faster than brgconv
/// (docs/Runtime.md, "Stem convolutions").
bool stemFits(const CpuPolicy &policy, const art::Conv2dStep &s,
              const void *constantWeights) {
  const art::Shape &in = s.srcShape;
  return in.size() == 4 && s.groups == 1 && in[1] >= 2 && in[1] <= 4 &&
         s.sum == -1 && constantWeights && unitDilations(s) &&
         policy.loomStem && hasStemConvKernel() &&
         stemPostOp(s.activation).has_value();
}

/// The most filter taps (kh * kw) of a stem convolveStem runs. Measured in
/// models (LOOM_PROFILE, 2 threads, alternated): the 3x3 stems of MNASNet,
/// RegNet-Y, MobileNet-v2 and -v3-Small, EfficientNet-B0 took 0.58-0.85x
/// the time of the transpose and oneDNN's brgconv; ResNet-50's 7x7 (3 ->
/// 64, compute-bound: both near the machine's peak) 0.99-1.06x, so it
/// stays oneDNN's. Standalone (loom-bench-stem, cold) 5x5 took 0.96-0.98x.
constexpr int64_t kStemMaxTaps = 25;

/// At most kStemMaxTaps filter taps.
bool stemPays(const art::Conv2dStep &s) {
  return s.weightsShape[2] * s.weightsShape[3] <= kStemMaxTaps;
}

/// The stem step where its source buffer is plain NCHW (the model's input)
/// and \p plan makes its destination NHWC.
StepPtr makeStem(const PrepareContext &, const art::Conv2dStep &s,
                 void *constantWeights, const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  if (plan.count(s.src) || !plannedNhwc(plan, s.dst, out))
    return nullptr;
  DenseConvGeometry g;
  g.batch = in[0], g.channels = in[1], g.h = in[2], g.w = in[3];
  g.outChannels = out[1], g.oh = out[2], g.ow = out[3];
  g.kh = s.weightsShape[2], g.kw = s.weightsShape[3];
  g.sh = s.strides[0], g.sw = s.strides[1];
  g.padTop = s.pads[0], g.padLeft = s.pads[1];
  return stemConvStep(s, g, *stemPostOp(s.activation), constantWeights);
}

//===----------------------------------------------------------------------===//
// Grouped: groupedConvChannelsLast (GroupedConv.cpp)
//===----------------------------------------------------------------------===//

/// Whether groupedConvChannelsLast can run conv step \p s: a 2-D grouped
/// convolution (groups > 1) whose groups have 16 input and 16 output
/// channels (or multiples of 16), dilation 1, constant weights, no residual
/// sum, no activation or a ReLU, where the kernel table has the kernel
/// (LOOM_ONEDNN_GROUPED=onednn keeps oneDNN's, to compare).
bool groupedFits(const CpuPolicy &policy, const art::Conv2dStep &s,
                 const void *constantWeights) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  return in.size() == 4 && s.groups > 1 && constantWeights && s.sum == -1 &&
         s.algorithm == art::ConvAlgorithm::Direct &&
         (s.activation.kind == Activation::None ||
          s.activation.kind == Activation::Relu) &&
         out[1] % (16 * s.groups) == 0 && in[1] % (16 * s.groups) == 0 &&
         unitDilations(s) && policy.loomGrouped && hasGroupedConvKernel();
}

/// The geometry groupedConvChannelsLast runs conv step \p s with (one that
/// groupedFits).
GroupedConvGeometry groupedGeometry(const art::Conv2dStep &s) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  GroupedConvGeometry g;
  g.batch = in[0];
  g.channels = in[1];
  g.h = in[2];
  g.w = in[3];
  g.outChannels = out[1];
  g.oh = out[2];
  g.ow = out[3];
  g.groups = s.groups;
  g.groupChannels = in[1] / s.groups;
  g.kh = s.weightsShape[2];
  g.kw = s.weightsShape[3];
  g.sh = s.strides[0];
  g.sw = s.strides[1];
  g.padTop = s.pads[0];
  g.padLeft = s.pads[1];
  g.relu = s.activation.kind == Activation::Relu;
  return g;
}

/// Whether groupedConvChannelsLast was measured faster than oneDNN 2.6's
/// jit:avx512_core on \p g, in RegNet-Y-800MF and RegNet-X-400MF: a source
/// plane of at least 56x56 and at most 64 channels (4 groups of 16). There
/// it took 0.64-0.90x oneDNN's time (their first grouped convolutions,
/// 112x112 stride 2: 0.64-0.72x; RegNet-X's 56x56 stride 2: 0.90x), oneDNN
/// reading the large source less well; with more channels or on smaller
/// planes the two were within a few percent either way (0.89-1.10x),
/// oneDNN's kernel computing at about the same rate. docs/Runtime.md,
/// "Grouped convolutions of 16-channel groups".
bool groupedPays(const art::Conv2dStep &s) {
  GroupedConvGeometry g = groupedGeometry(s);
  return g.channels <= 64 && g.h * g.w >= 56 * 56;
}

/// The grouped step between buffers both channels-last under \p plan.
StepPtr makeGrouped(const PrepareContext &, const art::Conv2dStep &s,
                    void *constantWeights, const LayoutPlan &plan) {
  if (!channelsLastBytes(plan, s.src, s.srcShape) ||
      !channelsLastBytes(plan, s.dst, s.dstShape))
    return nullptr;
  return groupedConvStep(s, groupedGeometry(s),
                         static_cast<const float *>(constantWeights));
}

//===----------------------------------------------------------------------===//
// Pointwise: pointwiseChannelsLast (Pointwise.cpp)
//===----------------------------------------------------------------------===//

/// Constant weights (packed once) and pointwiseKernelFits.
bool pointwiseFits(const CpuPolicy &policy, const art::Conv2dStep &s,
                   const void *constantWeights) {
  return constantWeights && pointwiseKernelFits(s, policy);
}

/// The pointwise step where its source, result and addend buffers are all
/// NHWC under \p plan (or its result is a plain image and it has no
/// addend).
StepPtr makePointwise(const PrepareContext &ctx, const art::Conv2dStep &s,
                      void *constantWeights, const LayoutPlan &plan) {
  // A plain result of one image without an addend (a generated kernel
  // reads it) is written channel by channel: no reorder after the step.
  bool planar = !plan.count(s.dst) && s.dstShape[0] == 1 && s.sum == -1;
  if (!plannedNhwc(plan, s.src, s.srcShape) ||
      (!plannedNhwc(plan, s.dst, s.dstShape) && !planar) ||
      (s.sum != -1 && !plannedNhwc(plan, s.sum, s.dstShape)))
    return nullptr;
  auto [e, swish] = *pointwiseEpilogue(s.activation);
  e.planar = planar;
  return pointwiseConvStep(s, static_cast<const float *>(constantWeights), e,
                           swish, ctx.policy.hugePages);
}

//===----------------------------------------------------------------------===//
// Tap products: oneDNN's sgemm per filter tap, padding never computed
//===----------------------------------------------------------------------===//

/// A dilated 2-D convolution of stride 1, one group, constant weights, no
/// residual sum, no activation but a ReLU (LOOM_ONEDNN_PRODUCT=matmul keeps
/// oneDNN's, to compare).
bool tapProductsFit(const CpuPolicy &policy, const art::Conv2dStep &s,
                    const void *constantWeights) {
  return policy.avx2Products && constantWeights && s.srcShape.size() == 4 &&
         s.groups == 1 && allOnes(s.strides) && !unitDilations(s) &&
         s.sum == -1 &&
         (s.activation.kind == Activation::None ||
          s.activation.kind == Activation::Relu);
}

/// The share of conv step \p s's tap reads (one per output pixel and
/// filter tap) that fall inside its source.
double insideShare(const art::Conv2dStep &s) {
  int64_t h = s.srcShape[2], w = s.srcShape[3], oh = s.dstShape[2],
          ow = s.dstShape[3], kh = s.weightsShape[2], kw = s.weightsShape[3];
  auto inside = [](int64_t offset, int64_t out, int64_t in) {
    return std::max<int64_t>(
        0, std::min(out, in - offset) - std::max<int64_t>(0, -offset));
  };
  int64_t reads = 0;
  for (int64_t ky = 0; ky < kh; ++ky)
    for (int64_t kx = 0; kx < kw; ++kx)
      reads += inside(ky * s.dilations[0] - s.pads[0], oh, h) *
               inside(kx * s.dilations[1] - s.pads[1], ow, w);
  return double(reads) / double(kh * kw * oh * ow);
}

/// On AVX2, where oneDNN 2.6's `jit:avx2` takes a dilated convolution in
/// some geometries only (not DeepLabV3's ASPP: 960 -> 256, 3x3, dilation 12
/// on a 20x20 plane; on nChw8c it falls to its reference one there) and
/// runs the others as im2col and its gemm (`gemm:jit`) over every tap,
/// padding included: where at least half of the taps' reads are padding
/// (that ASPP convolution: 36% inside), the taps' own products skip it
/// (docs/Runtime.md, "Products on AVX2").
bool tapProductsPay(const art::Conv2dStep &s) {
  return cpuIsa() == art::CpuIsa::Avx2 && insideShare(s) <= 0.5;
}

/// The tap products where \p plan leaves source and result plain.
StepPtr makeTapProducts(const PrepareContext &, const art::Conv2dStep &s,
                        void *constantWeights, const LayoutPlan &plan) {
  if (plan.count(s.src) || plan.count(s.dst))
    return nullptr;
  return dnnlTapProducts(s, static_cast<const float *>(constantWeights));
}

//===----------------------------------------------------------------------===//
// Plane product: oneDNN's sgemm of the weights by a plain source's planes
//===----------------------------------------------------------------------===//

/// A product over the pixels (isPixelProduct) of more than one channel,
/// without residual sum, with no activation but a ReLU
/// (LOOM_ONEDNN_PRODUCT=matmul keeps the pixel product below, to compare).
bool planeProductFits(const CpuPolicy &policy, const art::Conv2dStep &s,
                      const void *) {
  return policy.avx2Products && s.sum == -1 && isPixelProduct(s) &&
         s.srcShape[1] != 1 &&
         (s.activation.kind == Activation::None ||
          s.activation.kind == Activation::Relu);
}

/// On AVX2, where oneDNN 2.6's matmul primitive computes with its gemm
/// (`gemm:jit`) and the pixel product below then reorders its result into
/// the plain buffer: there the product of the weights [O, C] by the plain
/// source's planes [C, HW] is oneDNN's sgemm straight into the plain result
/// (docs/Runtime.md, "Products on AVX2").
bool planeProductPays(const art::Conv2dStep &) {
  return cpuIsa() == art::CpuIsa::Avx2;
}

/// The plane product where \p plan leaves source and result plain.
StepPtr makePlaneProduct(const PrepareContext &, const art::Conv2dStep &s,
                         void *, const LayoutPlan &plan) {
  if (plan.count(s.src) || plan.count(s.dst))
    return nullptr;
  return dnnlPlaneProduct(s);
}

//===----------------------------------------------------------------------===//
// Pixel product: a oneDNN matmul over a plain source's pixels
//===----------------------------------------------------------------------===//

/// A product over the pixels (isPixelProduct) of more than one channel
/// with constant weights (prepacked once) and no residual sum
/// (LOOM_ONEDNN_1X1=conv keeps such steps convolutions, to compare).
bool pixelProductFits(const CpuPolicy &policy, const art::Conv2dStep &s,
                      const void *constantWeights) {
  return policy.pixelProducts && constantWeights && s.sum == -1 &&
         isPixelProduct(s) && s.srcShape[1] != 1;
}

/// A 1x1 convolution reading a plain NCHW source that its primitive would
/// first reorder into NHWC, computed instead as the matrix product
/// dst[HW, O] = src[HW, C] x W[C, O] whose source is the NCHW buffer read
/// transposed (strides 1, HW) in place and whose result is NHWC: no reorder
/// of the source (DenseNet's 1x1 convolutions read the generated
/// pre-activation batch norm of every dense layer, a plain tensor of up to
/// 1024 channels; the reorder cost 20-25% of the step). Null where the step
/// is not such a product, its weights are not constant (prepacked once),
/// it has a residual sum, the primitive wants a plain result (its source is
/// then read in place anyway), or oneDNN has no matmul for it but its
/// reference one. The primitive's own layout is NHWC with AVX-512 (brgconv)
/// and nChw8c with AVX2 (jit_1x1:avx2, which reordered the source in and
/// the result out: 1x64x8x8 and 1x32x8x8 around DenseNet's transition
/// product); either way the product reads the plain source in place.
StepPtr makePixelProduct(const PrepareContext &ctx, const art::Conv2dStep &s,
                         void *constantWeights, const LayoutPlan &plan) {
  // The product writes NHWC rows, or a plain buffer's transposed: a
  // destination planned in another layout (nChw8c) keeps the convolution.
  if (plan.count(s.src) ||
      (plan.count(s.dst) && !plannedNhwc(plan, s.dst, s.dstShape)))
    return nullptr;
  ConvProblem conv(ctx, s, constantWeights);
  if (conv.winograd || conv.planned(s, plan).dst_desc() == conv.dst)
    return nullptr;
  auto f32 = memory::data_type::f32;
  int64_t pixels = s.srcShape[2] * s.srcShape[3], c = s.srcShape[1],
          o = s.dstShape[1];
  StepLayouts io;
  io.src = io.srcBuffer = memory::desc({pixels, c}, f32, {1, pixels});
  io.srcHeld = conv.src;
  io.dst = rowMajor({pixels, o});
  // A plain destination buffer takes the product's rows transposed.
  io.dstBuffer =
      plan.count(s.dst) ? io.dst : memory::desc({pixels, o}, f32, {1, pixels});
  io.sumBuffer = io.dst;
  // OIHW weights of a 1x1 filter, [O, C], read as [C, O].
  memory::desc userW({c, o}, f32, {1, c});
  memory::desc anyW({c, o}, f32, memory::format_tag::any);
  memory::desc biasMd = rowMajor({1, o});
  auto desc = s.bias != -1 ? dnnl::matmul::desc(io.src, anyW, biasMd, io.dst)
                           : dnnl::matmul::desc(io.src, anyW, io.dst);
  dnnl::matmul::primitive_desc mpd;
  try {
    mpd = dnnl::matmul::primitive_desc(desc, conv.attr, ctx.engine);
  } catch (const dnnl::error &) {
    return nullptr; // No matmul for it: the convolution runs instead.
  }
  if (isReference(mpd))
    return nullptr;
  return dnnlStep(ctx, DnnlOperands{s.src, s.weights, s.bias, -1, s.dst},
                  dnnl::matmul(mpd), io,
                  WeightsLayout{userW, mpd.weights_desc(), constantWeights},
                  biasMd, mpd.scratchpad_desc(), conv.swishPass);
}

//===----------------------------------------------------------------------===//
// Winograd: convolveWinograd8 (WinogradConv.cpp), between nChw8c buffers
//===----------------------------------------------------------------------===//

/// What convolveWinograd8 applies for \p s's activation (none, a ReLU, a
/// clip), or nullopt.
std::optional<PointwiseEpilogue> winogradClamp(const art::Conv2dStep &s) {
  auto e = pointwiseEpilogue(s.activation);
  if (!e || e->second)
    return std::nullopt;
  return e->first;
}

/// Whether convolveWinograd8 can run conv step \p s: a step the compiler
/// marked Winograd (a dense 3x3 convolution of stride and dilation 1 where
/// oneDNN's Winograd kernel was measured to pay, lib/Compiler/Backends/
/// OneDNN.cpp) and the policy runs as Winograd (LOOM_ONEDNN_CONV=direct:
/// oneDNN's direct convolution, to compare), of whole 8-channel blocks in
/// and out, with constant weights and an activation winogradClamp has, where
/// the kernel table has the kernel (AVX2, where oneDNN 2.6 has no Winograd
/// kernel: docs/Runtime.md, "Winograd convolutions on AVX2").
bool winogradFits(const CpuPolicy &policy, const art::Conv2dStep &s,
                  const void *constantWeights) {
  const art::Shape &in = s.srcShape, &out = s.dstShape, &k = s.weightsShape;
  return s.algorithm == art::ConvAlgorithm::Winograd && policy.winograd &&
         in.size() == 4 && s.groups == 1 && k[2] == 3 && k[3] == 3 &&
         allOnes(s.strides) && unitDilations(s) && in[1] % 8 == 0 &&
         out[1] % 8 == 0 && constantWeights && hasWinogradConvKernel() &&
         winogradClamp(s).has_value();
}

/// The tiles of 4x4 outputs (all images) from which convolveWinograd8
/// computes such tiles (F(4x4, 3x3): 36 products a tile for 16 outputs)
/// rather than tiles of 2x2 (16 for 4). Measured capped to AVX2 (LOOM_PROFILE,
/// per-step minima of alternated runs, Zen 4, 2 threads), 4x4 tiles against
/// 2x2: ResNet-18's 56x56 and 28x28 planes (196 and 49 tiles) 0.54-0.75x at
/// batch 1, 0.84-0.94x at batch 8; DeepLabV3-MobileNetV3's 20x20 (25 tiles)
/// 0.89x; ResNet-18's 14x14 (16 tiles, 2 of each 16 columns wasted) 1.12-
/// 1.15x: the transformed weights, 2.25x larger than 2x2's, are read for few
/// tiles.
constexpr int64_t kWinograd4x4Tiles = 25;

/// The output tile convolveWinograd8 computes \p g with: 4 from
/// kWinograd4x4Tiles tiles of 4x4, else 2.
int winogradTile(const DenseConvGeometry &g) {
  int64_t tiles = g.batch * ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  return tiles >= kWinograd4x4Tiles ? 4 : 2;
}

/// The Winograd step where \p plan holds source, result and addend in
/// nChw8c (what oneDNN's convolution asks for on AVX2).
StepPtr makeWinograd(const PrepareContext &, const art::Conv2dStep &s,
                     void *constantWeights, const LayoutPlan &plan) {
  if (channelBlockOf(plan, s.src, s.srcShape) != 8 ||
      channelBlockOf(plan, s.dst, s.dstShape) != 8 ||
      (s.sum != -1 && channelBlockOf(plan, s.sum, s.dstShape) != 8))
    return nullptr;
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  DenseConvGeometry g;
  g.batch = in[0], g.channels = in[1], g.h = in[2], g.w = in[3];
  g.outChannels = out[1], g.oh = out[2], g.ow = out[3];
  g.kh = 3, g.kw = 3;
  g.padTop = s.pads[0], g.padLeft = s.pads[1];
  return winogradConvStep(s, g, winogradTile(g), *winogradClamp(s),
                          static_cast<const float *>(constantWeights));
}

//===----------------------------------------------------------------------===//
// oneDNN's convolution
//===----------------------------------------------------------------------===//

/// The layouts conv step \p s asks the plan for: its own (ConvProblem::own:
/// nChw16c for a small-plane step, oneDNN's choice otherwise), or with
/// LOOM_ONEDNN_LAYOUT=blocked the blocked layout nChw16c
/// where oneDNN has more than its reference kernel for it (a plain source
/// of few channels, a stem's, stays plain: oneDNN's kernel from NCHW).
dnnl::convolution_forward::primitive_desc wanted(const ConvProblem &conv,
                                                 const art::Conv2dStep &s,
                                                 const CpuPolicy &policy) {
  auto pd = conv.primitive(conv.own(conv.src), conv.own(conv.dst));
  if (conv.winograd || conv.blocked || s.srcShape.size() != 4 ||
      policy.layout != LayoutChoice::Blocked)
    return pd;
  auto blocked = [](const memory::desc &md) {
    return memory::desc(md.dims(), md.data_type(), memory::format_tag::nChw16c);
  };
  try {
    auto b = conv.primitive(s.srcShape[1] <= 4 ? conv.src : blocked(conv.src),
                            blocked(conv.dst));
    if (!isReference(b))
      return b;
  } catch (const dnnl::error &) {
  }
  return pd;
}

/// What oneDNN's convolution wants: wanted's source and destination. A
/// Winograd convolution computes in its own layout (nChw16c) and asks for
/// it like the others: VGG's runs of Winograd convolutions and max pools
/// otherwise stayed plain, each convolution reordering its source in and
/// its result out, the pools on NCHW. So does a small-plane step computing
/// in nChw16c (blockedPays).
std::optional<WantedLayouts> oneDnnWants(const PrepareContext &ctx,
                                         const art::Conv2dStep &s,
                                         const void *constantWeights) {
  auto pd = wanted(ConvProblem(ctx, s, constantWeights), s, ctx.policy);
  return WantedLayouts{pd.src_desc(), pd.dst_desc()};
}

/// oneDNN's convolution, in the layouts \p plan gives its buffers
/// (ConvProblem::planned), reordering at its edges where its primitive
/// computes in others.
StepPtr makeOneDnn(const PrepareContext &ctx, const art::Conv2dStep &s,
                   void *constantWeights, const LayoutPlan &plan) {
  ConvProblem conv(ctx, s, constantWeights);
  auto preferred = conv.planned(s, plan);
  StepLayouts io;
  io.srcBuffer = layoutOf(plan, s.src, conv.src);
  io.dstBuffer = layoutOf(plan, s.dst, conv.dst);
  io.sumBuffer = s.sum != -1 ? layoutOf(plan, s.sum, conv.dst) : conv.dst;
  io.src = preferred.src_desc();
  io.dst = preferred.dst_desc();
  // A plain one-channel source the primitive reads as NHWC (planned): the
  // same bytes, no reorder.
  if (s.srcShape[1] == 1 && !plan.count(s.src) && io.src == nhwcOf(conv.src))
    io.srcBuffer = io.src;
  return dnnlStep(
      ctx, DnnlOperands{s.src, s.weights, s.bias, s.sum, s.dst},
      dnnl::convolution_forward(preferred), io,
      WeightsLayout{conv.userW, preferred.weights_desc(), constantWeights},
      conv.bias, preferred.scratchpad_desc(), conv.swishPass);
}

} // namespace

const FormTable<art::Conv2dStep> &cpu::convForms() {
  static const FormTable<art::Conv2dStep> forms = {
      // name, fits, pays, wants, make
      {"stem", stemFits, stemPays, nullptr, makeStem},
      {"grouped", groupedFits, groupedPays, nullptr, makeGrouped},
      {"pointwise", pointwiseFits, pointwisePays, nullptr, makePointwise},
      {"tap products", tapProductsFit, tapProductsPay, nullptr,
       makeTapProducts},
      {"plane product", planeProductFits, planeProductPays, nullptr,
       makePlaneProduct},
      {"pixel product", pixelProductFits, nullptr, nullptr, makePixelProduct},
      {"winograd", winogradFits, nullptr, nullptr, makeWinograd},
      {"onednn", nullptr, nullptr, oneDnnWants, makeOneDnn},
  };
  return forms;
}
