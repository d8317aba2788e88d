//===- Pool.cpp - The forms of a pool on the CPU
//---------------------------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.pool2d step runs, tried in order: a global
// average of a channels-last buffer, a pool between channels-last (or
// blocked) buffers, a pool between plain buffers, each on Loom's kernels,
// and oneDNN's pooling. A pool wants no layout of its own: it runs in the
// layouts the plan gives its buffers.
//
//===----------------------------------------------------------------------===//

#include "CPU/Forms.h"
#include "CPU/KernelSteps.h"

#include <algorithm>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// Whether every window of pool step \p s lies inside its source: no
/// padding, and no ceil-mode window past the edge (an average then counts
/// the same pixels whether it includes padding or not).
bool windowsInside(const art::Pool2dStep &s) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  return std::all_of(s.pads.begin(), s.pads.end(),
                     [](int64_t p) { return p == 0; }) &&
         (out[2] - 1) * s.strides[0] + s.kernel[0] <= in[2] &&
         (out[3] - 1) * s.strides[1] + s.kernel[1] <= in[3];
}

/// The windows of pool step \p s over \p outer planes of \p channels floats
/// a pixel, as Pool.cpp's kernels take them.
PoolGeometry poolGeometry(const art::Pool2dStep &s, int64_t outer,
                          int64_t channels) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  PoolGeometry g;
  g.outer = outer, g.h = in[2], g.w = in[3], g.oh = out[2], g.ow = out[3];
  g.channels = channels;
  g.kh = s.kernel[0], g.kw = s.kernel[1];
  g.sh = s.strides[0], g.sw = s.strides[1];
  g.padTop = s.pads[0], g.padLeft = s.pads[1];
  g.average = s.algorithm != art::PoolAlgorithm::Max;
  return g;
}

//===----------------------------------------------------------------------===//
// Global average: globalAveragePoolChannelsLast (SqueezeExcite.cpp)
//===----------------------------------------------------------------------===//

/// The planes globalAveragePoolChannelsLast runs pool step \p s on, or
/// nullopt where oneDNN runs it: an average over the whole plane (no
/// padding) of an NHWC buffer into a channels-last one.
/// oneDNN 2.6 split such pools by channel blocks, each thread reading its
/// blocks of every pixel; in EfficientNet-B0 they took 1.3-2.6x what ONNX
/// Runtime's take (docs/Runtime.md, "Squeeze-and-excitation on
/// channels-last buffers"). LOOM_ONEDNN_POOL=onednn keeps oneDNN's.
bool globalAverageFits(const CpuPolicy &policy, const art::Pool2dStep &s,
                       const void *) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  return s.algorithm != art::PoolAlgorithm::Max && in.size() == 4 &&
         out.size() == 4 && out[2] == 1 && out[3] == 1 &&
         s.kernel == art::Shape{in[2], in[3]} &&
         std::all_of(s.pads.begin(), s.pads.end(),
                     [](int64_t p) { return p == 0; }) &&
         policy.loomPools && hasSqueezeExciteKernels();
}

/// The global average between buffers both channels-last under \p plan.
StepPtr makeGlobalAverage(const PrepareContext &, const art::Pool2dStep &s,
                          void *, const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  if (!channelsLastBytes(plan, s.src, in) ||
      !channelsLastBytes(plan, s.dst, out))
    return nullptr;
  return globalAverageStep(s.src, s.dst,
                           ChannelsLastPlanes{in[0], in[2] * in[3], in[1]});
}

//===----------------------------------------------------------------------===//
// Channels-last pool: poolChannelsLast (Pool.cpp)
//===----------------------------------------------------------------------===//

/// The geometry poolChannelsLast runs pool step \p s with, or nullopt where
/// oneDNN runs it: a max pool whose source and
/// destination buffers are both NHWC under \p plan, or an average pool whose
/// windows lie inside the source and whose buffers are both NHWC or both
/// nChw16c (a result of one pixel in any layout of the same bytes).
/// oneDNN 2.6's NHWC max pool took 1.3-2.2x as long on every window measured
/// (3x3 stride 1 and 2, ceil mode, 5x5 to 147x147 planes, 64 to 832 channels;
/// docs/Runtime.md, "Pooling on channels-last buffers"), its 2x2 stride-2
/// averages (DenseNet's transitions, NHWC and nChw16c) 3-4.5x ONNX Runtime's
/// and 1.7-4x this kernel's; its padded averages (Inception's 3x3 stride 1) and
/// its blocked (nChw16c) max pools were no clear win or faster, so they stay
/// oneDNN's. LOOM_ONEDNN_POOL=onednn keeps oneDNN's, to compare.
bool channelsLastFits(const CpuPolicy &policy, const art::Pool2dStep &s,
                      const void *) {
  bool average = s.algorithm != art::PoolAlgorithm::Max;
  return s.srcShape.size() == 4 && (!average || windowsInside(s)) &&
         policy.loomPools && hasPoolKernel();
}

/// The pool where \p plan makes both buffers NHWC, or, for an average,
/// both in one channel-block layout (a result of one pixel in any layout of
/// the same bytes).
StepPtr makeChannelsLast(const PrepareContext &, const art::Pool2dStep &s,
                         void *, const LayoutPlan &plan) {
  bool average = s.algorithm != art::PoolAlgorithm::Max;
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  // nChw16c: the batch's channel blocks are the outer index.
  int64_t blocks = 1;
  // A result of one pixel a channel: nChw16c and NCHW are the same bytes.
  bool onePixel = out[2] * out[3] == 1 && channelsLastBytes(plan, s.dst, out);
  int64_t block = channelBlockOf(plan, s.src, in);
  if (average && block &&
      (channelBlockOf(plan, s.dst, out) == block || onePixel))
    blocks = in[1] / block;
  else if (!plannedNhwc(plan, s.src, in) || !plannedNhwc(plan, s.dst, out))
    return nullptr;
  return kernelPoolStep(s, poolGeometry(s, in[0] * blocks, in[1] / blocks),
                        poolChannelsLast);
}

//===----------------------------------------------------------------------===//
// Plane pool: poolPlanes (Pool.cpp)
//===----------------------------------------------------------------------===//

/// The geometry poolPlanes runs pool step \p s with, or nullopt where
/// another kernel or oneDNN runs it: a max or average
/// pool whose source and destination buffers are both plain NCHW under
/// \p plan (a generated kernel's result: DenseNet's pre-activation batch
/// norm + ReLU before each transition), every window inside the source,
/// column stride 1 or 2. oneDNN 2.6's `jit:avx512_core` pooling on `abcd`
/// took 2-3x this kernel's time (DenseNet-121's three 2x2 stride-2
/// transition averages: 0.43 against ONNX Runtime's 0.07 ms a run); on
/// AVX2 it has only its `simple_nchw` pooling there (5.67 ms against the
/// kernel's 0.61 on a Zen 3; docs/Runtime.md, "Pooling on plain buffers").
/// LOOM_ONEDNN_POOL=onednn keeps oneDNN's.
bool planeFits(const CpuPolicy &policy, const art::Pool2dStep &s,
               const void *) {
  return s.srcShape.size() == 4 && windowsInside(s) && hasPlanePoolKernel() &&
         (s.strides[1] == 1 || s.strides[1] == 2) && policy.loomPools;
}

/// The pool where \p plan leaves both buffers plain.
StepPtr makePlane(const PrepareContext &, const art::Pool2dStep &s, void *,
                  const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  auto plain = [&](int64_t id, const art::Shape &shape) {
    memory::desc nchw = plainNCHW(dims(shape));
    return layoutOf(plan, id, nchw) == nchw;
  };
  if (!plain(s.src, in) || !plain(s.dst, out))
    return nullptr;
  return kernelPoolStep(s, poolGeometry(s, in[0] * in[1], 1), poolPlanes);
}

//===----------------------------------------------------------------------===//
// oneDNN's pooling
//===----------------------------------------------------------------------===//

dnnl::algorithm poolAlgorithm(art::PoolAlgorithm a) {
  switch (a) {
  case art::PoolAlgorithm::Max:
    return dnnl::algorithm::pooling_max;
  case art::PoolAlgorithm::AvgIncludePad:
    return dnnl::algorithm::pooling_avg_include_padding;
  case art::PoolAlgorithm::AvgExcludePad:
    return dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return dnnl::algorithm::undef;
}

/// An onednn.pool2d step: it computes in its source buffer's layout and
/// writes its result in that layout too, reordered where the destination
/// buffer's differs (a max pool, or an average with its windows inside, between
/// NHWC buffers: channelsLastPool; a global average from one:
/// channelsLastGlobalAverage; windows inside plain NCHW buffers: planePool).
StepPtr makeOneDnn(const PrepareContext &ctx, const art::Pool2dStep &s, void *,
                   const LayoutPlan &plan) {
  StepLayouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src, plainNCHW(dims(s.srcShape)));
  io.dstBuffer = layoutOf(plan, s.dst, plainNCHW(dims(s.dstShape)));
  dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_inference, poolAlgorithm(s.algorithm), io.src,
      anyLayout(io.dstBuffer), dims(s.strides), dims(s.kernel),
      {s.pads[0], s.pads[1]}, {s.pads[2], s.pads[3]});
  dnnl::pooling_forward::primitive_desc pd(desc, userScratchpad(), ctx.engine);
  io.dst = pd.dst_desc();
  DnnlOperands ids;
  ids.src = s.src;
  ids.dst = s.dst;
  return dnnlStep(ctx, ids, dnnl::pooling_forward(pd), io, WeightsLayout(),
                  memory::desc(), pd.scratchpad_desc());
}

} // namespace

const FormTable<art::Pool2dStep> &cpu::poolForms() {
  static const FormTable<art::Pool2dStep> forms = {
      // name, fits, pays, wants, make
      {"global average", globalAverageFits, nullptr, nullptr,
       makeGlobalAverage},
      {"channels-last", channelsLastFits, nullptr, nullptr, makeChannelsLast},
      {"planes", planeFits, nullptr, nullptr, makePlane},
      {"onednn", nullptr, nullptr, nullptr, makeOneDnn},
  };
  return forms;
}
