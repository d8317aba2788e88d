//===- Binary.cpp - The forms of a binary step on the CPU
//------------------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.binary step runs, tried in order: a
// per-channel multiply (with a shift and ReLU) of a channels-last or
// blocked buffer on Loom's kernel, and oneDNN's binary primitive. A binary
// step wants no layout of its own: it runs in the layouts the plan gives
// its buffers.
//
//===----------------------------------------------------------------------===//

#include "CPU/Forms.h"
#include "CPU/KernelSteps.h"

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// The floats between two images' values of per-channel \p shape of a
/// binary step with result \p out ([N, C, 1, 1]: C; [1, C, 1, 1]: 0), or
/// nullopt for another shape.
std::optional<int64_t> perChannelImage(const art::Shape &shape,
                                       const art::Shape &out) {
  if (shape == art::Shape{out[0], out[1], 1, 1})
    return out[0] == 1 ? 0 : out[1];
  if (shape == art::Shape{1, out[1], 1, 1})
    return 0;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Channel scale: scaleChannelsLast (SqueezeExcite.cpp)
//===----------------------------------------------------------------------===//

/// How scaleChannelsLast runs binary step \p s, or nullopt where oneDNN
/// runs it: a multiply of a buffer by one value per channel (per image or
/// shared: a squeeze-and-excitation's scales, a batchnorm's factors), then
/// an optional per-channel shift and ReLU, with the source and the result
/// both NHWC or both in one blocked layout (nChw16c, nChw8c), where the
/// level in use has the kernel (CpuKernels.h). oneDNN 2.6's took 2.1-2.2x
/// what ONNX Runtime's take on EfficientNet-B0's big planes, and in
/// DenseNet-161 at batch 2 its binary steps with the shift as a post-op
/// about 1.8x what the generated kernels took (docs/Runtime.md,
/// "Squeeze-and-excitation on channels-last buffers", "Per-channel affine
/// steps"). LOOM_ONEDNN_SCALE=onednn keeps oneDNN's.
bool scaleFits(const CpuPolicy &policy, const art::BinaryStep &s,
               const void *) {
  const art::Shape &out = s.dstShape;
  return s.algorithm == art::BinaryAlgorithm::Mul && out.size() == 4 &&
         (s.activation.kind == Activation::None ||
          s.activation.kind == Activation::Relu) &&
         policy.loomScale && hasSqueezeExciteKernels() &&
         perChannelImage(s.src1Shape, out) &&
         (s.shift == -1 || perChannelImage(s.shiftShape, out));
}

/// The scaling where \p plan holds the factors and the shift channels-last
/// and the source and result both NHWC or both in one channel-block layout.
StepPtr makeScale(const PrepareContext &, const art::BinaryStep &s, void *,
                  const LayoutPlan &plan) {
  const art::Shape &out = s.dstShape;
  if (!channelsLastBytes(plan, s.src1, s.src1Shape) ||
      (s.shift != -1 && !channelsLastBytes(plan, s.shift, s.shiftShape)))
    return nullptr;
  ChannelsLastScaling scaling;
  scaling.scaleImage = *perChannelImage(s.src1Shape, out);
  scaling.shiftImage = s.shift == -1 ? 0 : *perChannelImage(s.shiftShape, out);
  scaling.relu = s.activation.kind == Activation::Relu;
  if (channelsLastBytes(plan, s.src0, out) &&
      channelsLastBytes(plan, s.dst, out)) {
    scaling.g = ChannelsLastPlanes{out[0], out[2] * out[3], out[1]};
  } else {
    int64_t block = channelBlockOf(plan, s.src0, out);
    if (!block || channelBlockOf(plan, s.dst, out) != block)
      return nullptr;
    scaling.groups = out[1] / block;
    scaling.g =
        ChannelsLastPlanes{out[0] * scaling.groups, out[2] * out[3], block};
  }
  return channelScaleStep(s.src0, s.src1, s.shift, s.dst, scaling);
}

//===----------------------------------------------------------------------===//
// oneDNN's binary primitive
//===----------------------------------------------------------------------===//

dnnl::algorithm binaryAlgorithm(art::BinaryAlgorithm a) {
  switch (a) {
  case art::BinaryAlgorithm::Add:
    return dnnl::algorithm::binary_add;
  case art::BinaryAlgorithm::Mul:
    return dnnl::algorithm::binary_mul;
  }
  return dnnl::algorithm::undef;
}

/// An onednn.binary step: src0 + src1 (or *) computed in src0's buffer
/// layout (the result in that layout too, reordered where the destination
/// buffer's differs), the shift and an activation as post-ops. A full src1
/// is reordered into src0's layout where its buffer's differs (once at load
/// when it is a weight); a per-channel one ([N, C, 1, 1] or [1, C, 1, 1], a
/// squeeze-and-excitation's scales, a batchnorm's factors) is read in its
/// buffer's layout, or plain where oneDNN has only its reference kernel for
/// that. The shift ([1, C, 1, 1]) is read plain: on one pixel every layout
/// of it is the same bytes.
StepPtr makeOneDnn(const PrepareContext &ctx, const art::BinaryStep &s,
                   void *constantSrc1, const LayoutPlan &plan) {
  memory::desc plain = plainNCHW(dims(s.dstShape));
  StepLayouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src0, plain);
  io.dstBuffer = layoutOf(plan, s.dst, plain);
  io.weightsArg = DNNL_ARG_SRC_1;
  io.weightsRole = "src1";
  bool broadcast = s.src1Shape != s.dstShape;
  memory::desc src1Plain = plainNCHW(dims(s.src1Shape));
  memory::desc src1Buffer = layoutOf(plan, s.src1, src1Plain);
  memory::desc shift;
  if (s.shift != -1) {
    shift = plainNCHW(dims(s.shiftShape));
    io.biasArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
  }
  auto primitive = [&](const memory::desc &src1) {
    dnnl::binary::desc desc(binaryAlgorithm(s.algorithm), io.src, src1,
                            anyLayout(io.dstBuffer));
    return dnnl::binary::primitive_desc(
        desc, userScratchpad(postOps(s.activation, false, shift)), ctx.engine);
  };
  memory::desc src1 = broadcast ? src1Buffer : io.src;
  dnnl::binary::primitive_desc pd = primitive(src1);
  if (broadcast && isReference(pd)) {
    // On channel blocks oneDNN 2.6 has its jit kernel only for per-channel
    // values in src0's blocks too (DenseNet-161's batchnorms at 8x8 and
    // 4x4, batch 2, nChw16c: ref:any with them plain); else plain.
    std::optional<memory::format_tag> t = plannedTagOf(io.src);
    memory::desc blocked =
        t ? memory::desc(dims(s.src1Shape), memory::data_type::f32, *t)
          : memory::desc();
    dnnl::binary::primitive_desc other =
        blocked.is_zero() ? pd : primitive(blocked);
    if (!blocked.is_zero() && !isReference(other)) {
      src1 = blocked;
      pd = other;
    } else if (src1 != src1Plain) {
      src1 = src1Plain;
      pd = primitive(src1);
    }
  }
  io.dst = pd.dst_desc();
  DnnlOperands ids;
  ids.src = s.src0;
  ids.weights = s.src1;
  ids.bias = s.shift;
  ids.dst = s.dst;
  return dnnlStep(ctx, ids, dnnl::binary(pd), io,
                  WeightsLayout{src1Buffer, src1, constantSrc1}, shift,
                  pd.scratchpad_desc());
}

} // namespace

const FormTable<art::BinaryStep> &cpu::binaryForms() {
  static const FormTable<art::BinaryStep> forms = {
      // name, fits, pays, wants, make
      {"channel scale", scaleFits, nullptr, nullptr, makeScale},
      {"onednn", nullptr, nullptr, nullptr, makeOneDnn},
  };
  return forms;
}
