//===- Matmul.cpp - The forms of a matrix product on the CPU
//---------------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.matmul step runs, tried in order: oneDNN's
// sgemm for one row by constant weights (gemv) or for weights that change
// per run with nothing to fuse, oneDNN's 1x1 convolution over the rows for
// constant weights on AVX2, Loom's pointwise kernel for few rows by large
// constant weights, and oneDNN's matmul primitive. Products run on
// plain row-major buffers: they want no layout, and the plan gives them
// none.
//
//===----------------------------------------------------------------------===//

#include "CPU/CpuFeatures.h"
#include "CPU/Forms.h"
#include "CPU/KernelSteps.h"

#include <algorithm>
#include <array>
#include <tuple>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// The rows of \p shape's matrices folded: the product of every dimension
/// but the last.
int64_t leadingRows(const std::vector<int64_t> &shape) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    rows *= shape[i];
  return rows;
}

/// Whether view \p v reads its buffer as the dense row-major tensor of
/// \p shape: offset 0, as many elements, row-major strides (those of
/// dimensions of size 1 aside).
bool denseView(const art::StridedOperand &v, const art::Shape &shape) {
  if (v.offset != 0 || elements(v.dims) != elements(shape))
    return false;
  int64_t stride = 1;
  for (size_t i = v.dims.size(); i-- > 0;) {
    if (v.dims[i] != 1 && v.strides[i] != stride)
      return false;
    stride *= v.dims[i];
  }
  return true;
}

/// Whether every operand of \p s is its shape's dense row-major tensor: no
/// views, or views that read it so (the compiler keeps the views of an
/// operand reshaped without a copy: a GRU's projections of [seq, 1, in]).
bool denseOperands(const art::MatmulStep &s) {
  return !s.views || (denseView((*s.views)[0], s.srcShape) &&
                      denseView((*s.views)[1], s.weightsShape) &&
                      denseView((*s.views)[2], s.dstShape));
}

//===----------------------------------------------------------------------===//
// oneDNN's sgemm
//===----------------------------------------------------------------------===//

/// The matrix-vector form of a matmul step with constant weights, when it
/// has one: 2-d weights, a source of one row (a classifier's fully
/// connected layers at batch 1, a decoder's products in a decode step), no
/// residual sum, no activation but a ReLU. Loom's gemv (Gemv.cpp) or
/// oneDNN's sgemm (LOOM_ONEDNN_GEMV=onednn) stream the weights as the
/// artifact holds them, faster than the matmul primitive on its prepacked
/// copy, and need no copy (sgemm, 2 threads, this VM: AlexNet's 9216x4096
/// 3.36 against 5.13 ms, VGG's 25088x4096 14.3 against 17.1, 4096x4096 1.05
/// against 1.21; from 4 rows the primitive wins, 6.1 against 6.8 ms); the
/// gemv reads them at nearer memory speed than sgemm (docs/Runtime.md
/// "Products of one row"). Another activation (a decoder's GELU) runs as a
/// pass after it (withActivationPass): packing those weights would be a
/// second copy of them beside the artifact's, which the other one-row
/// products of a decode step read plain.
StepPtr gemvForm(const PrepareContext &ctx, const art::MatmulStep &s) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  if (s.sum != -1 || s.scale != 1 || w.size() != 2 || a.empty() ||
      a.back() != w[0])
    return nullptr;
  int64_t rows = leadingRows(a);
  if (rows != 1)
    return nullptr;
  StepPtr product =
      ctx.policy.loomGemv ? gemvStep(s, 1) : dnnlSgemm(s, 1, w[0], w[1]);
  if (s.activation.kind == Activation::None ||
      s.activation.kind == Activation::Relu)
    return product;
  return withActivationPass(ctx, std::move(product), s.activation, s.dst,
                            rowMajor({1, w[1]}));
}

/// Dense operands (denseOperands) and constant weights.
bool gemvFits(const CpuPolicy &, const art::MatmulStep &s,
              const void *constantWeights) {
  return denseOperands(s) && constantWeights;
}

StepPtr makeGemv(const PrepareContext &ctx, const art::MatmulStep &s, void *,
                 const LayoutPlan &) {
  return gemvForm(ctx, s);
}

/// The sgemm form of a matmul step whose weights change per run and that
/// has nothing to fuse (the matmul primitive repacks a non-constant B on
/// every run; 2048^3: 51 ms against 47 ms): no bias, sum or activation,
/// and weights either 2-d (every leading dimension of the source folds
/// into M) or of one batch.
StepPtr sgemmForm(const art::MatmulStep &s) {
  if (s.bias != -1 || s.sum != -1 || s.activation.kind != Activation::None ||
      s.scale != 1)
    return nullptr;
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  int64_t k = a.back(), n = w.back();
  if (w[w.size() - 2] != k)
    return nullptr;
  int64_t rows = leadingRows(a);
  if (w.size() == 2)
    return dnnlSgemm(s, rows, k, n);
  if (w.size() != a.size() || !std::equal(w.begin(), w.end() - 2, a.begin()))
    return nullptr;
  // Batches stay on the matmul primitive, which splits them over threads
  // (BERT's 12 heads of 128x64x128: one sgemm per head is 20% slower).
  int64_t m = a[a.size() - 2];
  if (rows != m)
    return nullptr;
  return dnnlSgemm(s, m, k, n);
}

/// Dense operands (denseOperands) and weights computed at run time.
bool sgemmFits(const CpuPolicy &, const art::MatmulStep &s,
               const void *constantWeights) {
  return denseOperands(s) && !constantWeights;
}

StepPtr makeSgemm(const PrepareContext &, const art::MatmulStep &s, void *,
                  const LayoutPlan &) {
  return sgemmForm(s);
}

//===----------------------------------------------------------------------===//
// Few rows: pointwiseChannelsLast (Pointwise.cpp)
//===----------------------------------------------------------------------===//

/// Where pointwiseChannelsLast runs a matrix product by constant weights
/// rather than oneDNN's matmul primitive: at most 100 rows and at least 4
/// MiB of weights, a product that streams its weights from memory, which the
/// kernel reads packed on huge pages. There it took 0.60-0.94x the
/// primitive's time (ViT-L/32's 49-50 tokens: 1024 -> 4096 1.50 against 2.12
/// ms, 4096 -> 1024 1.60 against 1.76, 1024 -> 3072 1.09 against 1.26, 1024
/// -> 1024 0.40 against 0.42; 768 -> 2304 at 49 rows 0.60 against 1.00;
/// 512 -> 2048 at 64 0.44 against 0.48; ViT-B/32's 100: 3072 -> 768 1.52
/// against 1.84, 768 -> 3072 1.38 against 1.48); with more rows or smaller
/// weights 0.98-1.07x (121 rows: 512 -> 2048 1.01x, 512 -> 1536 1.07x; 144
/// rows, 768 -> 3072: 1.03x; 1 MiB at 64 rows: 0.98-1.06x) and 1.11x at
/// ViT-B/16's 196 tokens. 2 threads, weights from memory,
/// `loom-bench-small-plane --huge` (the product as a 1x1 convolution of one
/// image: its "matmul" and "loom" columns); docs/Runtime.md, "Matrix
/// products of few rows".
constexpr int64_t kMatmulPointwiseMaxRows = 100;
constexpr int64_t kMatmulPointwiseMinWeightBytes = int64_t(4) << 20;

/// The pointwiseChannelsLast form of matmul step \p s, or null where oneDNN
/// runs it: constant 2-d weights [K, N], dense row-major operands (no
/// views), no output scale, 2 to kMatmulPointwiseMaxRows rows (the
/// source's leading dimensions folded; one row is gemvForm's) and at least
/// kMatmulPointwiseMinWeightBytes of weights.
/// The bias and the residual sum are the kernel's epilogue's,
/// and so is the activation where the epilogue has it (pointwiseEpilogue);
/// any other runs after it (WithActivationPass), after the sum as oneDNN's
/// post-ops would.
/// LOOM_ONEDNN_POINTWISE=onednn keeps oneDNN's, to compare.
bool fewRowsFit(const CpuPolicy &policy, const art::MatmulStep &s,
                const void *constantWeights) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  return constantWeights && denseOperands(s) && s.scale == 1 && w.size() == 2 &&
         !a.empty() && a.back() == w[0] && s.dstShape.size() == a.size() &&
         s.dstShape.back() == w[1] && policy.loomPointwise &&
         hasPointwiseKernel();
}

/// 2 to kMatmulPointwiseMaxRows rows and at least
/// kMatmulPointwiseMinWeightBytes of weights.
bool fewRowsPay(const art::MatmulStep &s) {
  int64_t rows = leadingRows(s.srcShape);
  return rows >= 2 && rows <= kMatmulPointwiseMaxRows &&
         f32Bytes(s.weightsShape) >= kMatmulPointwiseMinWeightBytes;
}

StepPtr makePointwise(const PrepareContext &ctx, const art::MatmulStep &s,
                      void *constantWeights, const LayoutPlan &) {
  // The kernel reads a packed copy: weights several entries read keep one
  // copy, and oneDNN's primitive reads it as it is.
  if (ctx.isShared(constantWeights))
    return nullptr;
  int64_t rows = leadingRows(s.srcShape);
  const auto *weights = static_cast<const float *>(constantWeights);
  bool huge = ctx.policy.hugePages;
  if (auto epilogue = pointwiseEpilogue(s.activation))
    return pointwiseMatmulStep(s, rows, weights, epilogue->first,
                               epilogue->second, huge);
  StepPtr bare =
      pointwiseMatmulStep(s, rows, weights, PointwiseEpilogue{}, false, huge);
  return withActivationPass(ctx, std::move(bare), s.activation, s.dst,
                            rowMajor({rows, s.weightsShape[1]}));
}

//===----------------------------------------------------------------------===//
// Rows as pixels: oneDNN's 1x1 convolution (AVX2)
//===----------------------------------------------------------------------===//

/// Whether a product by constant weights runs as oneDNN's 1x1 convolution
/// over its rows (as the pixels of one NHWC image) rather than its matmul
/// primitive: on AVX2, where oneDNN 2.6 has no brgemm matmul and its matmul
/// primitive computes with its gemm (`gemm:jit`) while the convolution has
/// a JIT kernel of its own (`jit_1x1:avx2`). There the convolution took
/// 0.47-0.86x the primitive's time, bias and ReLU fused in both (ViT-B/16's
/// 196 rows: 768 -> 3072 6.36 against 13.6 ms, 768 -> 2304 4.28 against
/// 5.35, 768 -> 768 1.53 against 1.78, 3072 -> 768 10.8 against 12.9; BERT's
/// 128: 768 -> 3072 7.06 against 10.8; 49 rows: 1024 -> 4096 3.25 against
/// 6.73, 512 -> 2048 0.81 against 1.45; 3136 rows: 96 -> 384 1.62 against
/// 1.78), and against Loom's pointwise kernel's AVX2 form 0.41-0.92x. Zen 3,
/// 2 threads, weights from memory, `loom-bench-small-plane --huge` (its
/// "NHWC" and "matmul" columns; docs/Runtime.md, "Products on AVX2"). With
/// AVX-512 the matmul primitive is brgemm and stays.
bool rowsAsPixelsPay(const art::MatmulStep &) {
  return cpuIsa() == art::CpuIsa::Avx2;
}

/// Constant 2-d weights [K, N], dense row-major operands (denseOperands), no
/// output scale; LOOM_ONEDNN_PRODUCT=matmul keeps the matmul primitive, to
/// compare.
bool rowsAsPixelsFit(const CpuPolicy &policy, const art::MatmulStep &s,
                     const void *constantWeights) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  return constantWeights && denseOperands(s) && s.scale == 1 && w.size() == 2 &&
         !a.empty() && a.back() == w[0] && s.dstShape.size() == a.size() &&
         s.dstShape.back() == w[1] && policy.avx2Products;
}

/// Matmul step \p s as oneDNN's 1x1 convolution of one image of M x 1
/// pixels: its source [M, K] row-major is that image in NHWC, its result
/// [M, N] too, and its weights [K, N] are the filter [N, K, 1, 1] read
/// transposed, packed once at load. Bias, residual sum and activation are
/// the convolution's post-ops as they are the primitive's. Null where the
/// weights are shared (the primitive reads them in place), or oneDNN has
/// only its reference convolution for it.
StepPtr makeRowsAsPixels(const PrepareContext &ctx, const art::MatmulStep &s,
                         void *constantWeights, const LayoutPlan &) {
  if (ctx.isShared(constantWeights))
    return nullptr;
  auto f32 = memory::data_type::f32;
  int64_t rows = leadingRows(s.srcShape), k = s.weightsShape[0],
          n = s.weightsShape[1];
  StepLayouts io;
  io.src = io.srcBuffer =
      memory::desc({1, k, rows, 1}, f32, memory::format_tag::nhwc);
  io.dst = io.dstBuffer = io.sumBuffer =
      memory::desc({1, n, rows, 1}, f32, memory::format_tag::nhwc);
  memory::desc userW({n, k, 1, 1}, f32, memory::dims{1, n, 1, 1});
  memory::desc anyW({n, k, 1, 1}, f32, memory::format_tag::any);
  memory::desc biasMd({n}, f32, memory::format_tag::x);
  auto desc =
      s.bias != -1
          ? dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference,
                dnnl::algorithm::convolution_direct, io.src, anyW, biasMd,
                io.dst, {1, 1}, {0, 0}, {0, 0})
          : dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference,
                dnnl::algorithm::convolution_direct, io.src, anyW, io.dst,
                {1, 1}, {0, 0}, {0, 0});
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(
        desc, userScratchpad(postOps(s.activation, s.sum != -1)),
        ctx.engine);
  } catch (const dnnl::error &) {
    return nullptr; // No convolution for it: the matmul primitive runs.
  }
  if (isReference(pd))
    return nullptr;
  return dnnlStep(ctx, DnnlOperands{s.src, s.weights, s.bias, s.sum, s.dst},
                  dnnl::convolution_forward(pd), io,
                  WeightsLayout{userW, pd.weights_desc(), constantWeights},
                  biasMd, pd.scratchpad_desc());
}

//===----------------------------------------------------------------------===//
// oneDNN's matmul primitive
//===----------------------------------------------------------------------===//

/// The source, weights and result dims of matmul step \p s as its primitive
/// sees them. Against 2-d weights the source's leading dimensions fold into
/// M (the buffers are row-major, so the fold moves nothing): oneDNN 2.6
/// prepacks the weights of a 2-d product only, a 3-d one reads them plain
/// (BERT-base's FFN product, 1x128x768 by 768x3072, 2 threads: 1.62 ->
/// 1.27 ms bare, 1.77 -> 1.52 ms with GELU), and a sequence-first source
/// [S, B, K] would be S broadcast products of B rows (128x1x768: 12.9 ->
/// 1.45 ms). Otherwise every operand is padded with leading ones to the
/// largest rank.
std::array<memory::dims, 3> matmulDims(const art::MatmulStep &s) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  if (w.size() == 2 && a.size() > 2 && s.dstShape.size() == a.size()) {
    int64_t rows = leadingRows(a);
    return {memory::dims{rows, a.back()}, dims(w),
            memory::dims{rows, w.back()}};
  }
  size_t rank = std::max({a.size(), w.size(), s.dstShape.size()});
  auto pad = [&](const std::vector<int64_t> &v) {
    memory::dims d(rank - v.size(), 1);
    d.insert(d.end(), v.begin(), v.end());
    return d;
  };
  return {pad(a), pad(w), pad(s.dstShape)};
}

/// A strided operand's descriptor (docs/Runtime.md, "Views folded into
/// matrix products").
memory::desc stridedDesc(const art::StridedOperand &v) {
  return memory::desc(dims(v.dims), memory::data_type::f32, dims(v.strides));
}

/// Rows from which a product by shared constant weights packs them per
/// run (CpuPolicy::repackShared). The primitive runs GPT-2 small's prefill
/// products 5-12% faster on packed weights than on plain ones, and the
/// reorder costs a read and a write of the weights: the 48 products of its
/// 12 layers, 2 threads, this VM, one sequence of distinct weights as a
/// prefill reads them: at 1,024 rows 540-597 ms plain, 512-561 packed per
/// run, 490-520 packed once; at 512 rows 302 plain, 288 per run; at 256
/// rows the reorder loses (144 plain, 158 per run at best).
constexpr int64_t kRepackSharedMinRows = 512;

/// Whether matmul step \p s, whose constant weights several entries read,
/// packs them per run: 2-d weights and kRepackSharedMinRows rows or more.
bool repacksSharedWeights(const CpuPolicy &policy, const art::MatmulStep &s) {
  return policy.repackShared && s.weightsShape.size() == 2 &&
         leadingRows(s.srcShape) >= kRepackSharedMinRows;
}

StepPtr makeOneDnn(const PrepareContext &ctx, const art::MatmulStep &s,
                   void *constantWeights, const LayoutPlan &) {
  auto [src, w, dst] = matmulDims(s);
  if (s.views)
    std::tie(src, w, dst) =
        std::make_tuple(dims((*s.views)[0].dims), dims((*s.views)[1].dims),
                        dims((*s.views)[2].dims));
  size_t rank = dst.size();
  memory::dims bias(rank, 1);
  bias.back() = dst.back();
  StepLayouts io;
  io.src = io.srcBuffer = s.views ? stridedDesc((*s.views)[0]) : rowMajor(src);
  io.dst = io.dstBuffer = io.sumBuffer =
      s.views ? stridedDesc((*s.views)[2]) : rowMajor(dst);
  memory::desc userW = s.views ? stridedDesc((*s.views)[1]) : rowMajor(w),
               biasMd = rowMajor(bias);
  DnnlOperands ids{s.src, s.weights, s.bias, s.sum, s.dst};
  if (s.views) {
    ids.srcOffset = 4 * (*s.views)[0].offset;
    ids.weightsOffset = 4 * (*s.views)[1].offset;
    ids.dstOffset = 4 * (*s.views)[2].offset;
    if (constantWeights)
      constantWeights =
          static_cast<char *>(constantWeights) + ids.weightsOffset;
  }
  // Constant weights in the layout the primitive wants, packed once at
  // load; those several entries read stay as the artifact holds them (one
  // copy), packed per run into scratch memory where the rows repay it.
  memory::desc anyW(w, memory::data_type::f32, memory::format_tag::any);
  bool shared = ctx.isShared(constantWeights);
  bool repack = shared && !s.views && repacksSharedWeights(ctx.policy, s);
  const memory::desc &wMd =
      (constantWeights && !shared) || repack ? anyW : userW;
  auto desc = s.bias != -1 ? dnnl::matmul::desc(io.src, wMd, biasMd, io.dst)
                           : dnnl::matmul::desc(io.src, wMd, io.dst);
  dnnl::primitive_attr attr =
      userScratchpad(postOps(s.activation, s.sum != -1));
  if (s.scale != 1)
    attr.set_output_scales(0, {float(s.scale)});
  dnnl::matmul::primitive_desc pd(desc, attr, ctx.engine);
  // Repacked weights are the step's run-time weights: reordered into its
  // queue's scratch memory before each run.
  return dnnlStep(ctx, ids, dnnl::matmul(pd), io,
                  WeightsLayout{userW, pd.weights_desc(),
                                repack ? nullptr : constantWeights},
                  biasMd, pd.scratchpad_desc());
}

} // namespace

const FormTable<art::MatmulStep> &cpu::matmulForms() {
  static const FormTable<art::MatmulStep> forms = {
      // name, fits, pays, wants, make
      {"gemv", gemvFits, nullptr, nullptr, makeGemv},
      {"sgemm", sgemmFits, nullptr, nullptr, makeSgemm},
      {"rows as pixels", rowsAsPixelsFit, rowsAsPixelsPay, nullptr,
       makeRowsAsPixels},
      {"pointwise", fewRowsFit, fewRowsPay, nullptr, makePointwise},
      {"onednn", nullptr, nullptr, nullptr, makeOneDnn},
  };
  return forms;
}
