//===- OneDnnSteps.cpp - The CPU device's oneDNN steps --------------------===//
//
// Part of Loom. See OneDnnSteps.h. Layer 2 of lib/Runtime/CPU's library
// steps: oneDNN primitives are created at load on the device's engine, with
// constant weights reordered into the layout the primitive prefers
// (prepacking); a run binds the buffers and executes on its queue's stream.
//
//===----------------------------------------------------------------------===//

#include "CPU/OneDnnSteps.h"
#include "CPU/KernelSteps.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

cpu::Stream::~Stream() {
  for (Slot &slot : slots)
    std::free(slot.data);
}

void *cpu::Stream::scratch(int slot, size_t bytes) {
  Slot &s = slots[slot];
  if (s.size < bytes) {
    std::free(s.data);
    s.size = (bytes + 63) / 64 * 64;
    s.data = std::aligned_alloc(64, s.size);
  }
  return s.data;
}

dnnl::memory cpu::Stream::bind(const void *owner, int arg,
                               const dnnl::memory::desc &md, void *data) {
  auto [it, made] = bound.try_emplace({owner, arg});
  // A step's argument keeps its descriptor; the check guards a step made at
  // the address of a freed one.
  if (made || it->second.get_desc() != md)
    it->second = dnnl::memory(md, engine, data);
  else
    it->second.set_data_handle(data);
  return it->second;
}

dnnl::post_ops cpu::postOps(const art::PostOp &a, bool sum,
                            const memory::desc &shift) {
  dnnl::post_ops ops;
  if (sum)
    ops.append_sum(1.f);
  if (!shift.is_zero())
    ops.append_binary(dnnl::algorithm::binary_add, shift);
  auto eltwise = [&](dnnl::algorithm alg, float alpha, float beta) {
    ops.append_eltwise(1.f, alg, alpha, beta);
  };
  switch (a.kind) {
  case Activation::None:
    break;
  case Activation::Relu:
    eltwise(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    break;
  case Activation::Sigmoid:
    eltwise(dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
    break;
  case Activation::Tanh:
    eltwise(dnnl::algorithm::eltwise_tanh, 0.f, 0.f);
    break;
  case Activation::GeluErf:
    eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
    break;
  case Activation::GeluTanh:
    eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    break;
  case Activation::HardSwish:
    eltwise(dnnl::algorithm::eltwise_hardswish, 0.f, 0.f);
    break;
  case Activation::Swish:
    eltwise(dnnl::algorithm::eltwise_swish, 1.f, 0.f);
    break;
  case Activation::Clip:
    eltwise(dnnl::algorithm::eltwise_clip, float(a.alpha), float(a.beta));
    break;
  case Activation::LeakyRelu:
    eltwise(dnnl::algorithm::eltwise_relu, float(a.alpha), 0.f);
    break;
  case Activation::HardSigmoid:
    // oneDNN 2.6 has no hard sigmoid: a linear post-op, then a clip.
    eltwise(dnnl::algorithm::eltwise_linear, float(a.alpha), float(a.beta));
    eltwise(dnnl::algorithm::eltwise_clip, 0.f, 1.f);
    break;
  }
  return ops;
}

dnnl::primitive_attr cpu::userScratchpad(dnnl::post_ops ops) {
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool cpu::isReference(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

std::string cpu::implementationOf(const dnnl::primitive &prim) {
  const_dnnl_primitive_desc_t pd = prim.get_primitive_desc();
  const char *impl = nullptr;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
  dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
  return std::string("onednn ") + dnnl_prim_kind2str(kind) + " " +
         (impl ? impl : "?");
}

namespace {

/// \p v as the shortest decimal that names it ("0", "6", "0.01").
std::string decimal(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(v));
  return text;
}

/// How a binary post-op's second operand \p src1 meets the result of
/// dimensions \p dst: "per-channel" (one value a channel, per image or
/// shared), "full" (the result's dimensions) or "broadcast".
std::string broadcastOf(const dnnl_memory_desc_t &src1,
                        const dnnl_memory_desc_t &dst) {
  if (src1.ndims != dst.ndims || dst.ndims < 2)
    return "broadcast";
  bool full = true, perChannel = src1.dims[1] == dst.dims[1] &&
                                 (src1.dims[0] == 1 || src1.dims[0] == dst.dims[0]);
  for (int i = 0; i < dst.ndims; ++i) {
    full &= src1.dims[i] == dst.dims[i];
    perChannel &= i < 2 || src1.dims[i] == 1;
  }
  return full ? "full" : perChannel ? "per-channel" : "broadcast";
}

} // namespace

std::string cpu::eltwiseName(dnnl::algorithm alg, float alpha, float beta) {
  std::string name = dnnl_alg_kind2str(static_cast<dnnl_alg_kind_t>(alg));
  if (alpha != 0.f || beta != 0.f)
    name += ":" + decimal(alpha);
  if (beta != 0.f)
    name += ":" + decimal(beta);
  return name;
}

std::vector<std::string> cpu::postOpsOf(const dnnl::primitive &prim) {
  const_dnnl_primitive_desc_t pd = prim.get_primitive_desc();
  const_dnnl_primitive_attr_t attr = nullptr;
  const_dnnl_post_ops_t ops = nullptr;
  std::vector<std::string> out;
  if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
      dnnl_primitive_attr_get_post_ops(attr, &ops) != dnnl_success)
    return out;
  const dnnl_memory_desc_t *dst =
      dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  for (int i = 0; i < dnnl_post_ops_len(ops); ++i) {
    dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
    float scale = 1.f, alpha = 0.f, beta = 0.f;
    const dnnl_memory_desc_t *src1 = nullptr;
    switch (dnnl_post_ops_get_kind(ops, i)) {
    case dnnl_sum:
      dnnl_post_ops_get_params_sum(ops, i, &scale);
      out.push_back(scale == 1.f ? "sum" : "sum:" + decimal(scale));
      break;
    case dnnl_eltwise:
      dnnl_post_ops_get_params_eltwise(ops, i, &scale, &alg, &alpha, &beta);
      out.push_back(
          eltwiseName(static_cast<dnnl::algorithm>(alg), alpha, beta));
      break;
    case dnnl_binary:
      dnnl_post_ops_get_params_binary(ops, i, &alg, &src1);
      out.push_back(std::string(dnnl_alg_kind2str(alg)) + " " +
                    (src1 && dst ? broadcastOf(*src1, *dst) : "broadcast"));
      break;
    default:
      // Loom appends no other kind (postOps); named by its kind if one is.
      out.push_back(dnnl_prim_kind2str(dnnl_post_ops_get_kind(ops, i)));
      break;
    }
  }
  return out;
}

namespace {

/// The transposes (transposePlanes) that reorder \p from into \p to, or
/// nullopt where oneDNN's reorder runs: both dense f32 of the same 4 or 5
/// dimensions, two of channels-first (NC[D]HW), channels-last (N[D]HWC)
/// and, with whole blocks of 16 channels, nC[d]hw16c; nothing else changes
/// (no scales, no data type), on an AVX-512 CPU. oneDNN 2.6's jit:uni
/// reorders took 1.2-2.7x the kernel's time in MNASNet, RegNet-Y, MobileNet-v2
/// and ResNet-50 (medians in the model, 2 threads: the 1x3x224x224 input
/// 0.030-0.038 -> 0.025-0.030 ms, ResNet-50's NHWC <-> nChw16c at 56x56
/// around its Winograd steps 0.061 -> 0.022 ms; docs/Runtime.md, "Layout
/// reorders").
/// \p loomReorders false (LOOM_ONEDNN_REORDER=onednn) keeps oneDNN's, to
/// compare.
std::optional<TransposeShape> layoutTranspose(const memory::desc &from,
                                              const memory::desc &to,
                                              bool loomReorders) {
  memory::dims d = from.dims();
  auto f32 = memory::data_type::f32;
  if ((d.size() != 4 && d.size() != 5) || to.dims() != d ||
      from.data_type() != f32 || to.data_type() != f32 || !loomReorders ||
      !hasTransposeKernel())
    return std::nullopt;
  using tag = memory::format_tag;
  bool threeD = d.size() == 5;
  memory::desc plain(d, f32, threeD ? tag::ncdhw : tag::nchw);
  memory::desc last(d, f32, threeD ? tag::ndhwc : tag::nhwc);
  int64_t n = d[0], c = d[1], pixels = 1;
  for (size_t i = 2; i < d.size(); ++i)
    pixels *= d[i];
  if (from == plain && to == last)
    return TransposeShape{n, c, pixels};
  if (from == last && to == plain)
    return TransposeShape{n, pixels, c};
  if (c % 16 != 0)
    return std::nullopt;
  memory::desc blocked(d, f32, threeD ? tag::nCdhw16c : tag::nChw16c);
  if (from == plain && to == blocked)
    return TransposeShape{n * c / 16, 16, pixels};
  if (from == blocked && to == plain)
    return TransposeShape{n * c / 16, pixels, 16};
  if (from == last && to == blocked)
    return TransposeShape{n, pixels, c / 16, 16};
  if (from == blocked && to == last)
    return TransposeShape{n, c / 16, pixels, 16};
  return std::nullopt;
}

/// A reorder between two layouts of one tensor, made once: Loom's
/// transposes where layoutTranspose has them, oneDNN's primitive otherwise.
struct Reorder {
  dnnl::primitive prim;
  std::optional<TransposeShape> transpose;
  memory::desc from, to, scratchpad;

  Reorder() = default;
  Reorder(const PrepareContext &ctx, const memory::desc &from,
          const memory::desc &to)
      : transpose(layoutTranspose(from, to, ctx.policy.loomReorders)),
        from(from), to(to) {
    if (transpose)
      return;
    const dnnl::engine &eng = ctx.engine;
    dnnl::reorder::primitive_desc pd(eng, from, eng, to, userScratchpad());
    prim = dnnl::reorder(pd);
    scratchpad = pd.scratchpad_desc();
  }
  explicit operator bool() const { return prim || transpose; }
  /// "<role> <from>-><to> by <who>", for the plan.
  std::string describe(const std::string &role) const {
    return role + " " + layoutName(from) + "->" + layoutName(to) + " by " +
           (transpose ? "loom transpose " + kernelLevel()
                      : implementationOf(prim));
  }
  void run(Stream &s, void *src, void *dst) const {
    if (transpose) {
      // Whatever the stream ran before has written src.
      s.stream.wait();
      transposePlanes(*transpose, static_cast<const float *>(src),
                      static_cast<float *>(dst));
      return;
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_FROM, s.bind(this, DNNL_ARG_FROM, from, src)},
        {DNNL_ARG_TO, s.bind(this, DNNL_ARG_TO, to, dst)}};
    if (size_t bytes = scratchpad.get_size())
      args.emplace(
          DNNL_ARG_SCRATCHPAD,
          s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpad, s.scratch(0, bytes)));
    prim.execute(s.stream, args);
  }
};

/// A oneDNN primitive with its bound constant weights and the reorders
/// between its buffers' layouts and its own.
class DnnlStep : public LibraryStep {
public:
  DnnlStep(const PrepareContext &ctx, const DnnlOperands &ids,
           dnnl::primitive prim, const StepLayouts &layouts,
           const WeightsLayout &weights, memory::desc bias,
           memory::desc scratchpad, bool swishAfter)
      : ids(ids), prim(std::move(prim)), io(layouts),
        weightsMd(weights.primitive), biasMd(bias), scratchpadMd(scratchpad),
        swishAfter(swishAfter) {
    if (io.src != io.srcBuffer)
      srcIn = Reorder(ctx, io.srcBuffer,
                      io.srcView.is_zero() ? io.src : io.srcView);
    if (io.dst != io.dstBuffer)
      dstOut = Reorder(ctx, io.dst, io.dstBuffer);
    if (ids.sum != -1 && io.sumBuffer != io.dst)
      sumIn = Reorder(ctx, io.sumBuffer, io.dst);
    const dnnl::engine &eng = ctx.engine;
    if (weights.constant) {
      memory user(weights.user, eng, weights.constant);
      if (weights.user == weights.primitive) {
        packed = user;
      } else {
        dnnl::stream load(eng);
        packedBlock =
            allocateWeights(weights.primitive.get_size(), ctx.policy.hugePages);
        if (!packedBlock)
          throw std::bad_alloc();
        packed = memory(weights.primitive, eng, packedBlock.get());
        dnnl::reorder(user, packed).execute(load, user, packed);
        load.wait();
      }
    } else if (weights.user != weights.primitive) {
      weightsIn = Reorder(ctx, weights.user, weights.primitive);
    }
  }

  Error run(Stream &s, void *const *buffers) const override {
    return guardOneDnn([&] { runSteps(s, buffers); });
  }

  StepDescription describe() const override {
    StepDescription d;
    d.implementation = implementationOf(prim);
    if (swishAfter)
      d.implementation += " + loom swish " + kernelLevel();
    d.postOps = postOpsOf(prim);
    if (!io.srcHeld.is_zero())
      d.operands.push_back("src " + layoutName(io.srcHeld) + " read as " +
                           layoutName(io.srcBuffer));
    for (auto [reorder, role] : {std::pair{&srcIn, std::string("src")},
                                 {&sumIn, "sum"},
                                 {&weightsIn, io.weightsRole},
                                 {&dstOut, "dst"}})
      if (*reorder)
        d.operands.push_back(reorder->describe(role));
    if (packedBlock)
      d.operands.push_back(io.weightsRole + " " + layoutName(weightsMd) +
                           " packed at load");
    return d;
  }

private:
  /// Brings the addend into dst (in the primitive's layout).
  void loadSum(Stream &s, void *const *buffers, void *dst) const {
    if (sumIn && buffers[ids.sum] == dst) {
      // Written in place of its addend (the compiler's aliasSums) in
      // another layout: reordered through a scratch buffer.
      void *tmp = s.scratch(3, io.dst.get_size());
      sumIn.run(s, buffers[ids.sum], tmp);
      std::memcpy(dst, tmp, io.dst.get_size());
    } else if (sumIn) {
      sumIn.run(s, buffers[ids.sum], dst);
    } else if (ids.sum != -1 && buffers[ids.sum] != dst) {
      std::memcpy(dst, buffers[ids.sum], io.dst.get_size());
    }
  }

  void runSteps(Stream &s, void *const *buffers) const {
    void *src = static_cast<char *>(buffers[ids.src]) + ids.srcOffset;
    if (srcIn) {
      void *plain = src;
      src = s.scratch(1, io.src.get_size());
      srcIn.run(s, plain, src);
    }
    void *dst = dstOut ? s.scratch(2, io.dst.get_size())
                       : static_cast<char *>(buffers[ids.dst]) + ids.dstOffset;
    loadSum(s, buffers, dst);
    std::unordered_map<int, memory> args;
    args.emplace(DNNL_ARG_SRC, s.bind(this, DNNL_ARG_SRC, io.src, src));
    if (ids.weights != -1) {
      void *weights =
          static_cast<char *>(buffers[ids.weights]) + ids.weightsOffset;
      if (weightsIn) {
        void *plain = weights;
        weights = s.scratch(3, weightsMd.get_size());
        weightsIn.run(s, plain, weights);
      }
      args.emplace(io.weightsArg,
                   packed ? packed
                          : s.bind(this, io.weightsArg, weightsMd, weights));
    }
    if (ids.bias != -1)
      args.emplace(io.biasArg,
                   s.bind(this, io.biasArg, biasMd, buffers[ids.bias]));
    args.emplace(io.dstArg, s.bind(this, io.dstArg, io.dst, dst));
    if (size_t bytes = scratchpadMd.get_size())
      args.emplace(
          DNNL_ARG_SCRATCHPAD,
          s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpadMd, s.scratch(0, bytes)));
    prim.execute(s.stream, args);
    if (swishAfter) {
      s.stream.wait();
      swishInPlace(static_cast<float *>(dst),
                   int64_t(io.dst.get_size() / sizeof(float)));
    }
    if (dstOut)
      dstOut.run(s, dst, static_cast<char *>(buffers[ids.dst]) + ids.dstOffset);
    s.stream.wait();
  }

  DnnlOperands ids;
  dnnl::primitive prim;
  StepLayouts io;
  memory::desc weightsMd, biasMd, scratchpadMd;
  /// The step's SiLU runs after the primitive, in place on its result in
  /// the primitive's layout (Problems.h, swishAsPass), not as its post-op.
  bool swishAfter;
  Reorder srcIn, dstOut, sumIn, weightsIn;
  /// Constant weights in the primitive's layout, reordered once at load
  /// into packedBlock (allocateWeights: huge pages from 2 MiB), or the
  /// artifact's own bytes where the layouts agree.
  WeightsBlock packedBlock;
  memory packed;
};

/// An onednn.concat step along channels, reading and writing its buffers in
/// the layouts they hold (a copy per source when they match).
class DnnlConcat : public LibraryStep {
public:
  DnnlConcat(const dnnl::engine &eng, const art::ConcatStep &s,
             const LayoutPlan &plan)
      : spec(s) {
    memory::dims shape = dims(s.dstShape);
    for (size_t i = 0; i < s.srcs.size(); ++i) {
      shape[1] = s.srcChannels[i];
      srcs.push_back(layoutOf(plan, s.srcs[i], plainNCHW(shape)));
    }
    dst = layoutOf(plan, s.dst, plainNCHW(dims(s.dstShape)));
    dnnl::concat::primitive_desc pd(dst, 1, srcs, eng, userScratchpad());
    prim = dnnl::concat(pd);
    scratchpad = pd.scratchpad_desc();
  }

  StepDescription describe() const override {
    return {implementationOf(prim), {}, "team"};
  }

  Error run(Stream &s, void *const *buffers) const override {
    return guardOneDnn([&] {
      std::unordered_map<int, memory> args;
      for (size_t i = 0; i < srcs.size(); ++i) {
        int arg = DNNL_ARG_MULTIPLE_SRC + int(i);
        args.emplace(arg, s.bind(this, arg, srcs[i], buffers[spec.srcs[i]]));
      }
      args.emplace(DNNL_ARG_DST,
                   s.bind(this, DNNL_ARG_DST, dst, buffers[spec.dst]));
      if (size_t bytes = scratchpad.get_size())
        args.emplace(
            DNNL_ARG_SCRATCHPAD,
            s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpad, s.scratch(0, bytes)));
      prim.execute(s.stream, args);
      s.stream.wait();
    });
  }

private:
  art::ConcatStep spec;
  std::vector<memory::desc> srcs;
  memory::desc dst, scratchpad;
  dnnl::primitive prim;
};

/// The description of a step that is oneDNN's sgemm (\p name), then its
/// bias and ReLU where it has them, applied by Loom's loop after the
/// product on the calling thread.
StepDescription sgemmDescription(const char *name, bool bias, bool relu) {
  StepDescription d{name, {}, "team"};
  if (bias)
    d.postOps.push_back("bias");
  if (relu)
    d.postOps.push_back("relu");
  if (!d.postOps.empty())
    d.implementation += " + loom pass";
  return d;
}

/// A matrix product as oneDNN's sgemm on plain row-major operands, its
/// bias and a ReLU (if the step has them) applied in one pass after it.
/// Two forms use it (sgemmForm, gemvForm).
class DnnlSgemm : public LibraryStep {
public:
  DnnlSgemm(const art::MatmulStep &s, int64_t m, int64_t k, int64_t n)
      : src(s.src), weights(s.weights), bias(s.bias), dst(s.dst), m(m), k(k),
        n(n), relu(s.activation.kind == Activation::Relu) {}
  StepDescription describe() const override {
    return sgemmDescription("onednn sgemm", bias != -1, relu);
  }
  Error run(Stream &, void *const *buffers) const override {
    auto *a = static_cast<const float *>(buffers[src]);
    auto *b = static_cast<const float *>(buffers[weights]);
    auto *c = static_cast<float *>(buffers[dst]);
    if (dnnl_sgemm('N', 'N', m, n, k, 1.f, a, k, b, n, 0.f, c, n) !=
        dnnl_success)
      return makeError(LOOM_ERROR_LIBRARY, "oneDNN's sgemm failed");
    const float *add =
        bias == -1 ? nullptr : static_cast<const float *>(buffers[bias]);
    if (!add && !relu)
      return Error::ok();
    for (int64_t i = 0; i < m * n; ++i) {
      float v = add ? c[i] + add[i % n] : c[i];
      c[i] = relu && v < 0.f ? 0.f : v; // NaN stays NaN, as oneDNN's ReLU
    }
    return Error::ok();
  }

private:
  int64_t src, weights, bias, dst, m, k, n;
  bool relu;
};

/// Adds \p bias[row] (where not null) to each of \p rows rows of \p cols
/// floats at \p out, then a ReLU where \p relu; nothing where neither.
void addRowBias(float *out, int64_t rows, int64_t cols, const float *bias,
                bool relu) {
  if (!bias && !relu)
    return;
  for (int64_t row = 0; row < rows; ++row) {
    float b = bias ? bias[row] : 0.f;
    float *line = out + row * cols;
    for (int64_t i = 0; i < cols; ++i) {
      float v = line[i] + b;
      line[i] = relu && v < 0.f ? 0.f : v; // NaN stays NaN, as oneDNN's ReLU
    }
  }
}

/// A 1x1 convolution of one image between plain NCHW buffers as oneDNN's
/// sgemm dst[O, HW] = W[O, C] x src[C, HW]: the OIHW weights, the source
/// and the result as their buffers hold them, no reorder; its bias (one
/// value a row) and a ReLU applied in one pass after it.
class DnnlPlaneProduct : public LibraryStep {
public:
  DnnlPlaneProduct(const art::Conv2dStep &s)
      : src(s.src), weights(s.weights), bias(s.bias), dst(s.dst),
        o(s.dstShape[1]), c(s.srcShape[1]),
        pixels(s.srcShape[2] * s.srcShape[3]),
        relu(s.activation.kind == Activation::Relu) {}
  StepDescription describe() const override {
    return sgemmDescription("onednn sgemm of the planes", bias != -1, relu);
  }
  Error run(Stream &, void *const *buffers) const override {
    auto *w = static_cast<const float *>(buffers[weights]);
    auto *a = static_cast<const float *>(buffers[src]);
    auto *out = static_cast<float *>(buffers[dst]);
    if (dnnl_sgemm('N', 'N', o, pixels, c, 1.f, w, c, a, pixels, 0.f, out,
                   pixels) != dnnl_success)
      return makeError(LOOM_ERROR_LIBRARY, "oneDNN's sgemm failed");
    addRowBias(out, o, pixels,
               bias == -1 ? nullptr : static_cast<const float *>(buffers[bias]),
               relu);
    return Error::ok();
  }

private:
  int64_t src, weights, bias, dst, o, c, pixels;
  bool relu;
};

/// A convolution of stride 1 between plain NCHW buffers as one sgemm per
/// filter tap over the output pixels whose input pixel for that tap lies
/// inside the image: the taps that read padding are never computed. Tap
/// (ky, kx) adds W[:, :, ky, kx] [O, C] x in[C, its pixels] to those
/// outputs: straight into the result where the tap reads every output's
/// pixel at the same offset in a contiguous run (the centre tap of a
/// "same" convolution), else its pixels gathered into a scratch matrix and
/// its product added back. The weights are repacked once, a tap's [O, C]
/// contiguous; bias and ReLU in one pass of Loom's own after the taps.
class DnnlTapProducts : public LibraryStep {
public:
  DnnlTapProducts(const art::Conv2dStep &s, const float *weights)
      : src(s.src), bias(s.bias), dst(s.dst), batch(s.srcShape[0]),
        c(s.srcShape[1]), h(s.srcShape[2]), w(s.srcShape[3]),
        o(s.dstShape[1]), oh(s.dstShape[2]), ow(s.dstShape[3]),
        relu(s.activation.kind == Activation::Relu) {
    int64_t kh = s.weightsShape[2], kw = s.weightsShape[3];
    for (int64_t ky = 0; ky < kh; ++ky)
      for (int64_t kx = 0; kx < kw; ++kx) {
        Tap t;
        t.dy = ky * s.dilations[0] - s.pads[0];
        t.dx = kx * s.dilations[1] - s.pads[1];
        t.y0 = std::max<int64_t>(0, -t.dy);
        t.y1 = std::min(oh, h - t.dy);
        t.x0 = std::max<int64_t>(0, -t.dx);
        t.x1 = std::min(ow, w - t.dx);
        if (t.y0 >= t.y1 || t.x0 >= t.x1)
          continue; // reads padding only
        t.weights.resize(size_t(o * c));
        for (int64_t i = 0; i < o; ++i)
          for (int64_t j = 0; j < c; ++j)
            t.weights[size_t(i * c + j)] =
                weights[((i * c + j) * kh + ky) * kw + kx];
        taps.push_back(std::move(t));
      }
  }
  StepDescription describe() const override {
    StepDescription d = sgemmDescription("onednn sgemm per tap", bias != -1,
                                         relu);
    d.implementation += " (" + std::to_string(taps.size()) + " taps)";
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    const float *add =
        bias == -1 ? nullptr : static_cast<const float *>(buffers[bias]);
    for (int64_t n = 0; n < batch; ++n) {
      const float *in = static_cast<const float *>(buffers[src]) + n * c * h * w;
      float *out = static_cast<float *>(buffers[dst]) + n * o * oh * ow;
      std::fill(out, out + o * oh * ow, 0.f);
      for (const Tap &t : taps)
        if (Error err = runTap(t, in, out))
          return err;
      addRowBias(out, o, oh * ow, add, relu);
    }
    return Error::ok();
  }

private:
  /// A tap: its offset into the input and the outputs [y0, y1) x [x0, x1)
  /// whose input pixel lies inside the image; its weights [O, C].
  struct Tap {
    int64_t dy, dx, y0, y1, x0, x1;
    std::vector<float> weights;
  };

  /// Adds tap \p t's product to the image \p out.
  Error runTap(const Tap &t, const float *in, float *out) const {
    int64_t rows = t.y1 - t.y0, cols = t.x1 - t.x0, pixels = rows * cols;
    // Every output, each reading the input at one offset in a row-major run.
    if (rows == oh && cols == ow && ow == w && t.dx == 0)
      return sgemm(t, in + t.dy * w, h * w, 1.f, out, oh * ow, oh * ow);
    thread_local std::vector<float> gathered, product;
    gathered.resize(size_t(c * pixels));
    product.resize(size_t(o * pixels));
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = t.y0; y < t.y1; ++y)
        std::memcpy(gathered.data() + ch * pixels + (y - t.y0) * cols,
                    in + (ch * h + y + t.dy) * w + t.x0 + t.dx,
                    size_t(cols) * sizeof(float));
    if (Error err = sgemm(t, gathered.data(), pixels, 0.f, product.data(),
                          pixels, pixels))
      return err;
    for (int64_t i = 0; i < o; ++i)
      for (int64_t y = t.y0; y < t.y1; ++y) {
        float *row = out + (i * oh + y) * ow + t.x0;
        const float *p = product.data() + i * pixels + (y - t.y0) * cols;
        for (int64_t x = 0; x < cols; ++x)
          row[x] += p[x];
      }
    return Error::ok();
  }

  /// result[O, n] = beta * result + tap weights [O, C] x b[C, n] (rows of
  /// b \p ldb apart, of the result \p ldc).
  Error sgemm(const Tap &t, const float *b, int64_t ldb, float beta,
              float *result, int64_t ldc, int64_t n) const {
    if (dnnl_sgemm('N', 'N', o, n, c, 1.f, t.weights.data(), c, b, ldb, beta,
                   result, ldc) != dnnl_success)
      return makeError(LOOM_ERROR_LIBRARY, "oneDNN's sgemm failed");
    return Error::ok();
  }

  int64_t src, bias, dst, batch, c, h, w, o, oh, ow;
  bool relu;
  std::vector<Tap> taps;
};

/// A step, then its activation as oneDNN's eltwise primitives in place on
/// its dense result (the eltwise post-ops postOps makes of the activation,
/// one primitive each): for an activation a kernel's epilogue lacks (a
/// transformer's GELU after matmulPointwiseForm). A pass over a result of
/// few rows, which the step has just written into the cache.
class WithActivationPass final : public LibraryStep {
public:
  WithActivationPass(const dnnl::engine &eng, StepPtr step,
                     const art::PostOp &activation, int64_t dst,
                     const memory::desc &md)
      : step(std::move(step)), dst(dst), md(md) {
    dnnl::post_ops ops = postOps(activation, false);
    for (int i = 0; i < ops.len(); ++i) {
      float scale, alpha, beta;
      dnnl::algorithm alg;
      ops.get_params_eltwise(i, scale, alg, alpha, beta);
      dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, md,
                                    alpha, beta);
      passes.push_back({dnnl::eltwise_forward(
                            dnnl::eltwise_forward::primitive_desc(d, eng)),
                        eltwiseName(alg, alpha, beta)});
    }
  }
  StepDescription describe() const override {
    StepDescription d = step->describe();
    for (const Pass &p : passes)
      d.implementation += " + " + implementationOf(p.prim) + " " + p.name;
    return d;
  }
  Error run(Stream &s, void *const *buffers) const override {
    if (Error e = static_cast<const LibraryStep &>(*step).run(s, buffers))
      return e;
    return guardOneDnn([&] {
      memory m = s.bind(this, DNNL_ARG_DST, md, buffers[dst]);
      for (const Pass &p : passes)
        p.prim.execute(s.stream, {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
      s.stream.wait();
    });
  }

private:
  /// One eltwise primitive of the activation and its algorithm's name
  /// (eltwiseName), which the description gives.
  struct Pass {
    dnnl::eltwise_forward prim;
    std::string name;
  };
  StepPtr step;
  int64_t dst;
  memory::desc md;
  std::vector<Pass> passes;
};

} // namespace

StepPtr cpu::dnnlStep(const PrepareContext &ctx, const DnnlOperands &ids,
                      dnnl::primitive prim, const StepLayouts &layouts,
                      const WeightsLayout &weights, const memory::desc &bias,
                      const memory::desc &scratchpad, bool swishAfter) {
  return std::make_unique<DnnlStep>(ctx, ids, std::move(prim), layouts, weights,
                                    bias, scratchpad, swishAfter);
}

StepPtr cpu::dnnlConcat(const PrepareContext &ctx, const art::ConcatStep &s,
                        const LayoutPlan &plan) {
  return std::make_unique<DnnlConcat>(ctx.engine, s, plan);
}

StepPtr cpu::dnnlSgemm(const art::MatmulStep &s, int64_t m, int64_t k,
                       int64_t n) {
  return std::make_unique<DnnlSgemm>(s, m, k, n);
}

StepPtr cpu::dnnlPlaneProduct(const art::Conv2dStep &s) {
  return std::make_unique<DnnlPlaneProduct>(s);
}

StepPtr cpu::dnnlTapProducts(const art::Conv2dStep &s, const float *weights) {
  return std::make_unique<DnnlTapProducts>(s, weights);
}

StepPtr cpu::withActivationPass(const PrepareContext &ctx, StepPtr step,
                                const art::PostOp &activation, int64_t dst,
                                const memory::desc &md) {
  return std::make_unique<WithActivationPass>(ctx.engine, std::move(step),
                                              activation, dst, md);
}
