//===- FilterGrad.cpp - The forms of a filter gradient on the CPU
//----------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.conv2d_filter_grad step (a training step's)
// runs: oneDNN's backward-weights convolution alone, on plain buffers.
//
//===----------------------------------------------------------------------===//

#include "CPU/Forms.h"

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// An onednn.conv2d_filter_grad step: dst [O, C, KH, KW] = the transpose
/// [1, 0, 2, 3] of conv2d(src [C, G*N, H, W], weights [O, N, OH, OW],
/// groups G), which is the filter gradient of the forward convolution x
/// [N, G*C, H, W] -> dz [N, O, OH, OW] in G groups whose stride is this
/// one's dilation and whose dilation is this one's stride: oneDNN's
/// backward-weights primitive, reading src and weights as x and dz with
/// batch and channels exchanged (format bacd; with groups, src as [N, G, C,
/// H, W]), reordered into the layouts it prefers.
StepPtr makeOneDnn(const PrepareContext &ctx,
                   const art::Conv2dFilterGradStep &s, void *,
                   const LayoutPlan &) {
  const dnnl::engine &eng = ctx.engine;
  auto f32 = memory::data_type::f32;
  const std::vector<int64_t> &in = s.srcShape, &dz = s.weightsShape,
                             &dw = s.dstShape;
  int64_t groups = s.groups, n = in[1] / groups;
  memory::dims x = {n, groups * in[0], in[2], in[3]},
               y = {dz[1], dz[0], dz[2], dz[3]}, w = dims(dw);
  memory::dims strides = dims(s.dilations),
               dilations = {s.strides[0] - 1, s.strides[1] - 1},
               padL = {s.pads[0], s.pads[1]}, padR(2);
  for (int d = 0; d < 2; ++d)
    padR[d] = (y[2 + d] - 1) * strides[d] + (w[2 + d] - 1) * s.strides[d] + 1 -
              x[2 + d] - padL[d];
  StepLayouts io;
  io.dstBuffer = memory::desc(w, f32, memory::format_tag::oihw);
  memory::dims grouped = {n, groups, in[0], in[2], in[3]};
  io.srcHeld = memory::desc(dims(in), f32, memory::format_tag::nchw);
  if (groups == 1) {
    io.srcBuffer = memory::desc(x, f32, memory::format_tag::bacd);
  } else {
    io.srcBuffer = memory::desc(grouped, f32,
                                memory::dims{in[2] * in[3], n * in[2] * in[3],
                                             in[1] * in[2] * in[3], in[3], 1});
    w = {groups, dw[0] / groups, dw[1], dw[2], dw[3]};
    io.dstBuffer = memory::desc(w, f32, memory::format_tag::goihw);
  }
  memory::desc dzBuffer(y, f32, memory::format_tag::bacd);
  auto alg = dnnl::algorithm::convolution_direct;
  auto any = [&](const memory::dims &d) {
    return memory::desc(d, f32, memory::format_tag::any);
  };
  auto make = [&](const memory::desc &src) {
    dnnl::convolution_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, alg, src, any(w), any(y), strides,
         dilations, padL, padR},
        eng);
    return dnnl::convolution_backward_weights::primitive_desc(
        {alg, src, any(w), any(y), strides, dilations, padL, padR},
        userScratchpad(), eng, hint);
  };
  auto pd = make(any(x));
  if (groups > 1) {
    // The reorder writes the primitive's src split into its groups: where
    // the primitive's blocked layout cannot be split (channels per group
    // not a multiple of its block), plain NCHW.
    io.srcView = pd.src_desc().reshape(grouped, /*allow_empty=*/true);
    if (io.srcView.is_zero()) {
      pd = make(memory::desc(x, f32, memory::format_tag::nchw));
      io.srcView = pd.src_desc().reshape(grouped);
    }
  }
  io.src = pd.src_desc();
  io.dst = pd.diff_weights_desc();
  io.weightsArg = DNNL_ARG_DIFF_DST;
  io.dstArg = DNNL_ARG_DIFF_WEIGHTS;
  DnnlOperands ids;
  ids.src = s.src;
  ids.weights = s.weights;
  ids.dst = s.dst;
  return dnnlStep(ctx, ids, dnnl::convolution_backward_weights(pd), io,
                  WeightsLayout{dzBuffer, pd.diff_dst_desc(), nullptr},
                  memory::desc(), pd.scratchpad_desc());
}

} // namespace

const FormTable<art::Conv2dFilterGradStep> &cpu::filterGradForms() {
  static const FormTable<art::Conv2dFilterGradStep> forms = {
      // name, fits, pays, wants, make
      {"onednn", nullptr, nullptr, nullptr, makeOneDnn},
  };
  return forms;
}
