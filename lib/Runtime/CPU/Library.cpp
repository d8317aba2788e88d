//===- Library.cpp - The CPU device's oneDNN and OpenBLAS steps -----------===//
//
// Part of Loom. See Cpu.h. Library steps are prepared once per model:
// oneDNN primitives are created at load on the device's engine, with
// constant weights reordered into the layout the primitive prefers
// (prepacking); a run binds the buffers and executes on its queue's stream.
//
//===----------------------------------------------------------------------===//

#include "CPU/Cpu.h"
#include "CPU/CpuFeatures.h"
#include "Environment.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
using dnnl::memory;
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

//===----------------------------------------------------------------------===//
// oneDNN
//===----------------------------------------------------------------------===//

namespace {

/// Runs \p body, which executes oneDNN primitives: a oneDNN error becomes
/// the step's error.
template <typename Body> Error guardOneDnn(Body &&body) {
  try {
    body();
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN failed: ") + e.what());
  }
  return Error::ok();
}

memory::dims dims(const std::vector<int64_t> &v) {
  return memory::dims(v.begin(), v.end());
}

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A dense row-major f32 descriptor of \p shape.
memory::desc rowMajor(const memory::dims &shape) {
  memory::dims strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return memory::desc(shape, memory::data_type::f32, strides);
}

/// A step's post-ops: a residual sum when it has one, or an addend of
/// \p shift's layout (a binary step's shift), then its activation.
dnnl::post_ops postOps(const art::PostOp &a, bool sum,
                       const memory::desc &shift = {}) {
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

/// Every primitive gets its queue's scratchpad (scratchpad_mode::user): the
/// library's own is not safe when two threads run one primitive.
dnnl::primitive_attr userScratchpad(dnnl::post_ops ops = {}) {
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

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
/// LOOM_ONEDNN_REORDER=onednn keeps oneDNN's, to compare.
std::optional<TransposeShape> layoutTranspose(const memory::desc &from,
                                              const memory::desc &to) {
  memory::dims d = from.dims();
  auto f32 = memory::data_type::f32;
  if ((d.size() != 4 && d.size() != 5) || to.dims() != d ||
      from.data_type() != f32 || to.data_type() != f32 ||
      environmentIs("LOOM_ONEDNN_REORDER", "onednn", {"onednn"}) ||
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

/// oneDNN's name of a layout, as its verbose log writes it: one letter a
/// dimension from the outermost stride in, upper case where the dimension
/// is blocked, then the blocks ("abcd", "acdb", "aBcd16b", "ABcd16b16a");
/// the activations' usual ones by their names (nchw, nhwc, nChw16c,
/// nChw8c, ncdhw, ndhwc, nCdhw16c).
std::string layoutName(const memory::desc &md) {
  const dnnl_memory_desc_t &d = md.data;
  if (d.format_kind != dnnl_blocked)
    return d.format_kind == dnnl_format_kind_any ? "any" : "opaque";
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  std::vector<int> order(size_t(d.ndims));
  for (int i = 0; i < d.ndims; ++i)
    order[size_t(i)] = i;
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    return b.strides[x] != b.strides[y] ? b.strides[x] > b.strides[y] : x < y;
  });
  std::string name;
  for (int i : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k)
      blocked |= b.inner_idxs[k] == i;
    name += char((blocked ? 'A' : 'a') + i);
  }
  for (int k = 0; k < b.inner_nblks; ++k)
    name += std::to_string(b.inner_blks[k]) + char('a' + b.inner_idxs[k]);
  static const std::map<std::string, std::string> usual = {
      {"abcd", "nchw"},       {"acdb", "nhwc"},   {"aBcd16b", "nChw16c"},
      {"aBcd8b", "nChw8c"},   {"abcde", "ncdhw"}, {"acdeb", "ndhwc"},
      {"aBcde16b", "nCdhw16c"}};
  auto it = usual.find(name);
  return it == usual.end() ? name : it->second;
}

/// "onednn <primitive kind> <oneDNN's implementation>" of \p prim
/// ("onednn convolution brgconv:avx512_core").
std::string implementationOf(const dnnl::primitive &prim) {
  const_dnnl_primitive_desc_t pd = prim.get_primitive_desc();
  const char *impl = nullptr;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
  dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
  return std::string("onednn ") + dnnl_prim_kind2str(kind) + " " +
         (impl ? impl : "?");
}

/// The level of Loom's own kernels in use ("avx512", "avx2").
std::string kernelLevel() { return std::string(art::cpuIsaName(cpuIsa())); }

/// A reorder between two layouts of one tensor, made once: Loom's
/// transposes where layoutTranspose has them, oneDNN's primitive otherwise.
struct Reorder {
  dnnl::primitive prim;
  std::optional<TransposeShape> transpose;
  memory::desc from, to, scratchpad;

  Reorder() = default;
  Reorder(const dnnl::engine &eng, const memory::desc &from,
          const memory::desc &to)
      : transpose(layoutTranspose(from, to)), from(from), to(to) {
    if (transpose)
      return;
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
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpad,
                          s.scratch(0, bytes)));
    prim.execute(s.stream, args);
  }
};

/// The layouts of a oneDNN step's activations: the one its primitive
/// computes in and the one the buffer holds (equal unless a reorder is
/// needed at the edge of a run of blocked-layout steps).
struct Layouts {
  memory::desc src, srcBuffer, dst, dstBuffer, sumBuffer;
  /// src as the reorder from srcBuffer writes it when their dimensions
  /// differ (a grouped filter gradient reads its [C, G*N, H, W] input as
  /// [N, G, C, H, W]: a reshape of src); empty: src itself.
  memory::desc srcView;
  /// The primitive's arguments the weights, bias and dst buffers bind to (a
  /// backward-weights convolution reads the result gradient in the weights'
  /// place and writes the weights' gradient; a binary step's shift is its
  /// first post-op's operand).
  int weightsArg = DNNL_ARG_WEIGHTS, biasArg = DNNL_ARG_BIAS,
      dstArg = DNNL_ARG_DST;
};

/// The buffers a oneDNN step binds (-1: absent). A binary step's second
/// source takes the weights' place, its shift the bias's.
struct DnnlOperands {
  int64_t src = -1, weights = -1, bias = -1, sum = -1, dst = -1;
  /// Where in its buffer a strided operand starts, in bytes (a matmul's
  /// views).
  int64_t srcOffset = 0, weightsOffset = 0, dstOffset = 0;
};

/// The weights a oneDNN step's primitive reads: their buffer's layout, the
/// primitive's, and the constant weights to prepack once (else null).
struct WeightsLayout {
  memory::desc user, primitive;
  void *constant = nullptr;
};

/// A oneDNN primitive with its bound constant weights and the reorders
/// between its buffers' layouts and its own.
class DnnlStep : public LibraryStep {
public:
  DnnlStep(const dnnl::engine &eng, const DnnlOperands &ids,
           dnnl::primitive prim, const Layouts &layouts,
           const WeightsLayout &weights, memory::desc bias,
           memory::desc scratchpad, bool swishAfter = false)
      : ids(ids), prim(std::move(prim)), io(layouts),
        weightsMd(weights.primitive), biasMd(bias), scratchpadMd(scratchpad),
        swishAfter(swishAfter) {
    if (io.src != io.srcBuffer)
      srcIn = Reorder(eng, io.srcBuffer,
                      io.srcView.is_zero() ? io.src : io.srcView);
    if (io.dst != io.dstBuffer)
      dstOut = Reorder(eng, io.dst, io.dstBuffer);
    if (ids.sum != -1 && io.sumBuffer != io.dst)
      sumIn = Reorder(eng, io.sumBuffer, io.dst);
    if (weights.constant) {
      memory user(weights.user, eng, weights.constant);
      if (weights.user == weights.primitive) {
        packed = user;
      } else {
        dnnl::stream load(eng);
        packedBlock = allocateWeights(weights.primitive.get_size());
        if (!packedBlock)
          throw std::bad_alloc();
        packed = memory(weights.primitive, eng, packedBlock.get());
        dnnl::reorder(user, packed).execute(load, user, packed);
        load.wait();
      }
    } else if (weights.user != weights.primitive) {
      weightsIn = Reorder(eng, weights.user, weights.primitive);
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
    for (auto [reorder, role] : {std::pair{&srcIn, "src"}, {&sumIn, "sum"},
                                 {&weightsIn, "weights"}, {&dstOut, "dst"}})
      if (*reorder)
        d.operands.push_back(reorder->describe(role));
    if (packedBlock)
      d.operands.push_back("weights " + layoutName(weightsMd) +
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
      void *weights = static_cast<char *>(buffers[ids.weights]) +
                      ids.weightsOffset;
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
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpadMd,
                          s.scratch(0, bytes)));
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
  Layouts io;
  memory::desc weightsMd, biasMd, scratchpadMd;
  /// The step's SiLU runs after the primitive, in place on its result in
  /// the primitive's layout (swishAsPass), not as its post-op.
  bool swishAfter;
  Reorder srcIn, dstOut, sumIn, weightsIn;
  /// Constant weights in the primitive's layout, reordered once at load
  /// into packedBlock (allocateWeights: huge pages from 2 MiB), or the
  /// artifact's own bytes where the layouts agree.
  WeightsBlock packedBlock;
  memory packed;
};

memory::desc anyLayout(const memory::desc &md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

/// Whether oneDNN fell back to its reference (unoptimised) implementation.
bool isReference(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

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

/// Whether \p s applies its SiLU as a pass after the primitive: a swish
/// activation, a result of at least kSwishPassElements floats, an AVX-512
/// CPU. LOOM_ONEDNN_SWISH=postop keeps oneDNN's post-op, to compare.
bool swishAsPass(const art::Conv2dStep &s) {
  return s.activation.kind == Activation::Swish &&
         elements(s.dstShape) >= kSwishPassElements &&
         !environmentIs("LOOM_ONEDNN_SWISH", "postop", {"postop"}) &&
         hasSwishPass();
}

/// The plain layout of a convolution's activations of \p rank dimensions:
/// NCHW, or NCDHW for 3-D convolutions (the layout of Loom's buffers).
memory::format_tag plainTag(size_t rank) {
  return rank == 5 ? memory::format_tag::ncdhw : memory::format_tag::nchw;
}

/// The channels-last layout of \p rank dimensions: NHWC or NDHWC.
memory::format_tag channelsLastTag(size_t rank) {
  return rank == 5 ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
}

bool pointwiseKernelFits(const art::Conv2dStep &s);

/// Whether dense 2-D convolution \p s computes faster in nChw16c (oneDNN
/// 2.6's jit:avx512_core) than in the NHWC its brgconv prefers: an output
/// plane of at most 8x8 at a batch of 2 or more (brgconv streams the
/// weights once per image: 512 -> 512 3x3 at 4x4, batch 2, 0.82 -> 0.60
/// ms), or at batch 1 with at least 16 MiB of weights (1024 -> 1024 3x3 at
/// 5x5: 2.6 -> 2.3 ms); channels in whole blocks of 16. Measured with
/// build/bin/loom-bench-small-plane (docs/Runtime.md, "Small planes in
/// nChw16c").
/// At batch 1 a pointwise convolution that Loom's kernel runs stays NHWC
/// (pointwiseKernelFits): on the weights that make such a step blocked it
/// took 0.78-0.96x the time of oneDNN's `jit_1x1` on nChw16c (2048 -> 2048
/// at 4x4 and 5x5 0.78 / 0.79, at 7x7 0.92; 1024 -> 4096 at 7x7 0.84;
/// 4096 -> 1024 at 5x5 0.96; weights from memory, bias + ReLU, 2 threads,
/// `loom-bench-small-plane`). From batch 2 the rule stands: there the
/// kernel ties nChw16c on half the shapes measured, and a run of blocked
/// steps passes its buffers on without reorders.
bool blockedPays(const art::Conv2dStep &s) {
  if (s.srcShape.size() != 4 || s.groups != 1 || s.srcShape[1] % 16 ||
      s.dstShape[1] % 16)
    return false;
  int64_t batch = s.dstShape[0], plane = s.dstShape[2] * s.dstShape[3];
  if (plane > 64)
    return false;
  if (batch >= 2)
    return true;
  return f32Bytes(s.weightsShape) >= (int64_t(16) << 20) &&
         !pointwiseKernelFits(s);
}

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

  /// \p freeWeights: the primitive chooses the weights' layout (constant
  /// weights are reordered into it once, others on every run).
  ConvProblem(const dnnl::engine &eng, const art::Conv2dStep &s,
              bool freeWeights)
      : eng(eng) {
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
    weights = freeWeights ? memory::desc(w, f32, tag::any) : userW;
    bias = memory::desc({s.dstShape[1]}, f32, tag::x);
    strides = dims(s.strides);
    size_t k = s.strides.size();
    for (size_t i = 0; i < k; ++i) {
      dilations.push_back(s.dilations[i] - 1);
      padL.push_back(s.pads[i]);
      padR.push_back(s.pads[k + i]);
    }
    hasBias = s.bias != -1;
    swishPass = swishAsPass(s);
    attr = userScratchpad(
        postOps(swishPass ? art::PostOp{} : s.activation, s.sum != -1));
    // Winograd convolutions are a request: oneDNN 2.6 has them for AVX-512
    // CPUs only (jit_fp32_wino_2x3, jit_wino_4x3), so elsewhere, or with
    // LOOM_ONEDNN_CONV=direct, the step runs oneDNN's direct convolution.
    // They compute in oneDNN's blocked layout (nChw16c) whatever the
    // buffers hold, reordering at their edges: the compiler asks for them
    // only where that still pays (OneDNN.cpp, winogradPays).
    winograd = s.algorithm == art::ConvAlgorithm::Winograd &&
               !environmentIs("LOOM_ONEDNN_CONV", "direct", {"direct"});
    if (winograd) {
      try {
        winograd = !isReference(primitive(anyLayout(src), anyLayout(dst)));
      } catch (const dnnl::error &) {
        winograd = false;
      }
    }
    blocked = !winograd && blockedPays(s) &&
              !environmentIs("LOOM_ONEDNN_SMALL_PLANE", "nhwc", {"nhwc"}) &&
              blockedKernel();
  }

  /// The layout the primitive computes \p plainMd in: nChw16c for a
  /// blocked step, else oneDNN's choice.
  memory::desc own(const memory::desc &plainMd) const {
    if (!blocked)
      return anyLayout(plainMd);
    return memory::desc(plainMd.dims(), plainMd.data_type(),
                        memory::format_tag::nChw16c);
  }

  /// Whether oneDNN prefers NHWC for this convolution (brgconv, AVX-512)
  /// and has a jit kernel for nChw16c: the pair blockedPays was measured on.
  bool blockedKernel() const {
    try {
      auto pd = primitive(anyLayout(src), anyLayout(dst));
      memory::desc nhwc(src.dims(), src.data_type(),
                        memory::format_tag::nhwc);
      if (!(pd.src_desc() == nhwc))
        return false;
      memory::desc b16(src.dims(), src.data_type(),
                       memory::format_tag::nChw16c);
      memory::desc d16(dst.dims(), dst.data_type(),
                       memory::format_tag::nChw16c);
      return std::string(primitive(b16, d16).impl_info_str()).rfind("jit",
                                                                     0) == 0;
    } catch (const dnnl::error &) {
      return false;
    }
  }

  /// The primitive computing from \p srcMd into \p dstMd (either may be
  /// format_tag::any: oneDNN chooses).
  dnnl::convolution_forward::primitive_desc
  primitive(const memory::desc &srcMd, const memory::desc &dstMd) const {
    auto prop = dnnl::prop_kind::forward_inference;
    auto alg = winograd ? dnnl::algorithm::convolution_winograd
                        : dnnl::algorithm::convolution_direct;
    auto desc =
        hasBias ? dnnl::convolution_forward::desc(prop, alg, srcMd, weights,
                                                  bias, dstMd, strides,
                                                  dilations, padL, padR)
                : dnnl::convolution_forward::desc(prop, alg, srcMd, weights,
                                                  dstMd, strides, dilations,
                                                  padL, padR);
    return {desc, attr, eng};
  }
};

/// Whether a conv's primitive may choose its weights' layout: always for
/// constant weights (reordered once at load); for weights computed at run
/// time (a training step's parameters) when they are no larger than the
/// source, so that reordering them on every run costs little beside the
/// convolution. oneDNN has direct (jit) convolutions for blocked weights
/// only: with plain OIHW weights it falls back to im2col + sgemm (the
/// Fashion-MNIST CNN's 1-channel first convolution: 0.74 -> 0.22 ms on one
/// thread).
bool freeWeights(const art::ConvolutionOperands &s,
                 const void *constantWeights) {
  return constantWeights || f32Bytes(s.weightsShape) <= f32Bytes(s.srcShape);
}

/// The layout each activation buffer holds: blocked (oneDNN's preferred
/// layout: nChw16c, nChw8c or NHWC by ISA and shape) where only oneDNN
/// convolutions, pools, concatenations and binary steps touch the buffer, so
/// a run of them passes blocked tensors on and reorders only at its edges;
/// plain NCHW (absent from the map) everywhere else. Kernels, copies,
/// matmuls and the entry's inputs and outputs see plain tensors.
using LayoutPlan = std::map<int64_t, memory::desc>;

/// The layout \p plan gives buffer \p id, or \p plainMd.
memory::desc layoutOf(const LayoutPlan &plan, int64_t id,
                      const memory::desc &plainMd) {
  auto it = plan.find(id);
  return it == plan.end() ? plainMd : it->second;
}

memory::desc plainNCHW(const memory::dims &shape) {
  return memory::desc(shape, memory::data_type::f32, memory::format_tag::nchw);
}

/// \p md's dimensions channels-last: NHWC (NDHWC for 5 dimensions).
memory::desc nhwcOf(const memory::desc &md) {
  return memory::desc(md.dims(), md.data_type(),
                      channelsLastTag(md.dims().size()));
}

/// The primitive of conv step \p s under \p plan: planned buffers are
/// passed in their layout; where a buffer is plain, the primitive still
/// computes in its preferred layout (a reorder at the edge costs less than
/// a convolution on NCHW). A plain source of one channel is also NHWC:
/// passed as it is, it needs no reorder, and oneDNN runs its direct kernel
/// for plain sources on it (Fashion-MNIST's first convolution: 0.23 ms
/// against 0.34-0.53 ms for the NHWC kernel oneDNN prefers, on one thread,
/// before the reorder).
dnnl::convolution_forward::primitive_desc
planned(const ConvProblem &conv, const art::Conv2dStep &s,
        const LayoutPlan &plan) {
  if (conv.winograd || conv.blocked)
    return conv.primitive(conv.own(conv.src), conv.own(conv.dst));
  memory::desc dst = plan.count(s.dst) ? layoutOf(plan, s.dst, conv.dst)
                                       : anyLayout(conv.dst);
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

/// The buffers a step reads and writes with their NCHW dims when it is
/// layout-free (pools, concatenations and binary steps run in whatever
/// layout their buffers get), nullopt for the other kinds.
std::optional<std::vector<std::pair<int64_t, memory::dims>>>
layoutFreeBuffers(const art::Step &step) {
  std::vector<std::pair<int64_t, memory::dims>> out;
  switch (step.kind()) {
  case art::StepKind::Pool2d: {
    const auto &s = *step.getIf<art::Pool2dStep>();
    out.push_back({s.src, dims(s.srcShape)});
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Binary: {
    const auto &s = *step.getIf<art::BinaryStep>();
    out.push_back({s.src0, dims(s.dstShape)});
    out.push_back({s.src1, dims(s.src1Shape)});
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Concat: {
    const auto &s = *step.getIf<art::ConcatStep>();
    memory::dims shape = dims(s.dstShape);
    for (size_t i = 0; i < s.srcs.size(); ++i) {
      shape[1] = s.srcChannels[i];
      out.push_back({s.srcs[i], shape});
    }
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Kernel:
  case art::StepKind::Copy:
  case art::StepKind::Branch:
  case art::StepKind::Jump:
  case art::StepKind::Conv2d:
  case art::StepKind::Conv2dFilterGrad:
  case art::StepKind::Matmul:
  case art::StepKind::Sgemm:
  case art::StepKind::Dispatch:
  case art::StepKind::CublasMatmul:
  case art::StepKind::CudnnConv:
  case art::StepKind::TopK:
  case art::StepKind::NonMaxSuppression:
  case art::StepKind::NonZero:
    return std::nullopt;
  }
  return std::nullopt;
}

/// The arguments of elementwise kernel step \p step (art::KernelStep::
/// elementwise) that hold its full shape: those of the most bytes (the
/// others hold one element, the same bytes in every layout). Empty for any
/// other step.
std::vector<int64_t> elementwiseBuffers(const art::Step &step,
                                        const std::vector<int64_t> &bytes) {
  const auto *k = step.getIf<art::KernelStep>();
  if (!k || !k->elementwise)
    return {};
  int64_t most = 0;
  for (int64_t id : k->args)
    most = std::max(most, bytes[id]);
  std::vector<int64_t> out;
  for (int64_t id : k->args)
    if (bytes[id] == most &&
        std::find(out.begin(), out.end(), id) == out.end())
      out.push_back(id);
  return out;
}

/// What the layout planner knows of a program: the layouts its convolutions
/// want per buffer, the convolutions touching each buffer, and the buffers
/// that must stay plain (weights, biases, anything another step reads).
struct LayoutWants {
  std::map<int64_t, std::vector<memory::desc>> wanted;
  std::map<int64_t, std::vector<const art::Conv2dStep *>> touching;
  std::vector<bool> excluded;
};

/// Whether \p plan may give buffer \p id a layout of \p md.
bool mayPlan(const art::Entry &entry, const std::vector<int64_t> &bufferBytes,
             const LayoutWants &w, int64_t id, const memory::desc &md) {
  return !w.excluded[id] &&
         entry.buffers[id].kind == art::BufferKind::Arena &&
         md.get_size() <= size_t(bufferBytes[id]);
}

/// The tag of a layout the plan gives (channels-last or channel blocks of
/// 16 or 8), nullopt for any other. A tag names its rank: a neighbour of
/// another rank (a reshape's buffer seen by both) takes none.
std::optional<memory::format_tag> plannedTagOf(const memory::desc &md) {
  using tag = memory::format_tag;
  std::array<tag, 3> tags = {tag::nhwc, tag::nChw16c, tag::nChw8c};
  if (md.dims().size() == 5)
    tags = {tag::ndhwc, tag::nCdhw16c, tag::nCdhw8c};
  for (tag t : tags)
    if (md == memory::desc(md.dims(), md.data_type(), t))
      return t;
  return std::nullopt;
}

/// The full arguments (elementwiseBuffers) of elementwise kernel step \p s
/// that no convolution wants a layout for take the layout of one of them
/// that \p plan gives one (the same dimensions: the kernel reads and writes
/// them alike). True when it planned any.
bool adoptForElementwiseKernel(const art::Entry &entry, const art::Step &s,
                               const std::vector<int64_t> &bufferBytes,
                               const LayoutWants &w, LayoutPlan &plan) {
  std::vector<int64_t> full = elementwiseBuffers(s, bufferBytes);
  auto planned = std::find_if(full.begin(), full.end(),
                              [&](int64_t id) { return plan.count(id); });
  if (planned == full.end() || !plannedTagOf(plan.at(*planned)))
    return false;
  memory::desc md = plan.at(*planned);
  bool changed = false;
  for (int64_t id : full) {
    if (plan.count(id) || w.wanted.count(id) ||
        !mayPlan(entry, bufferBytes, w, id, md))
      continue;
    plan.emplace(id, md);
    changed = true;
  }
  return changed;
}

/// Buffers that only pools, concatenations and binary steps touch (no
/// convolution wants a layout for them) take the layout of a planned buffer
/// of the same step, repeated until nothing changes: SqueezeNet's
/// concatenation feeding a max pool feeding convolutions stays in their
/// layout throughout.
void adoptNeighbourLayouts(const art::Entry &entry,
                           const art::Program &program,
                           const std::vector<int64_t> &bufferBytes,
                           const LayoutWants &w, LayoutPlan &plan) {
  using tag = memory::format_tag;
  for (bool changed = true; changed;) {
    changed = false;
    for (const art::Step &s : program.steps) {
      changed |= adoptForElementwiseKernel(entry, s, bufferBytes, w, plan);
      auto buffers = layoutFreeBuffers(s);
      if (!buffers)
        continue;
      std::optional<tag> t;
      size_t rank = 0;
      for (auto &[id, shape] : *buffers)
        if (auto it = plan.find(id); it != plan.end() && !t) {
          t = plannedTagOf(it->second);
          rank = it->second.dims().size();
        }
      if (!t)
        continue;
      for (auto &[id, shape] : *buffers) {
        if (shape.size() != rank)
          continue;
        memory::desc md(shape, memory::data_type::f32, *t);
        if (plan.count(id) || w.wanted.count(id) ||
            !mayPlan(entry, bufferBytes, w, id, md))
          continue;
        plan.emplace(id, md);
        changed = true;
      }
    }
  }
}

/// The layouts conv step \p s asks the plan for: its own (ConvProblem::own:
/// nChw16c for a small-plane step, oneDNN's choice otherwise), or with
/// LOOM_ONEDNN_LAYOUT=blocked the blocked layout nChw16c
/// where oneDNN has more than its reference kernel for it (a plain source
/// of few channels, a stem's, stays plain: oneDNN's kernel from NCHW).
dnnl::convolution_forward::primitive_desc wanted(const ConvProblem &conv,
                                                 const art::Conv2dStep &s) {
  auto pd = conv.primitive(conv.own(conv.src), conv.own(conv.dst));
  if (conv.winograd || conv.blocked || s.srcShape.size() != 4 ||
      !environmentIs("LOOM_ONEDNN_LAYOUT", "blocked", {"plain", "blocked"}))
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

/// The layouts the convolutions of \p program want for their buffers.
LayoutWants collectWants(const dnnl::engine &eng, const art::Entry &entry,
                         const art::Program &program,
                         const std::vector<int64_t> &bufferBytes,
                         const std::vector<void *> &constants) {
  LayoutWants w;
  w.excluded.assign(entry.buffers.size(), false);
  // A buffer sharing bytes with others (a concatenation in place) is read
  // through each of them: it stays plain.
  for (size_t id = 0; id < entry.buffers.size(); ++id)
    w.excluded[id] = entry.buffers[id].shared;
  auto exclude = [&](int64_t id) {
    if (id >= 0 && id < int64_t(w.excluded.size()))
      w.excluded[id] = true;
  };
  for (const art::Step &step : program.steps) {
    // Pools, concatenations, binary steps and elementwise kernels have no
    // preference.
    if (layoutFreeBuffers(step) ||
        !elementwiseBuffers(step, bufferBytes).empty())
      continue;
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    const auto *s = step.getIf<art::Conv2dStep>();
    if (s) {
      try {
        ConvProblem conv(eng, *s, freeWeights(*s, constants[s->weights]));
        // A Winograd convolution computes in its own layout (nChw16c) and
        // asks for it like the others: VGG's runs of Winograd convolutions
        // and max pools otherwise stayed plain, each convolution reordering
        // its source in and its result out, the pools on NCHW. So does a
        // small-plane step computing in nChw16c (blockedPays).
        pd = wanted(conv, *s);
      } catch (const dnnl::error &) {
        // Left to prepareConv, which reports it.
      }
    }
    if (!pd) {
      for (const art::Operand &o : art::operands(step))
        exclude(o.buffer);
      continue;
    }
    w.wanted[s->src].push_back(pd->src_desc());
    w.wanted[s->dst].push_back(pd->dst_desc());
    if (s->sum != -1)
      w.wanted[s->sum].push_back(pd->dst_desc());
    for (int64_t id : {s->src, s->dst, s->sum})
      if (id != -1)
        w.touching[id].push_back(s);
    exclude(s->weights);
    exclude(s->bias);
  }
  return w;
}

/// \p plan with the buffers of \p s that it gives a blocked layout (not
/// NHWC) moved to NHWC.
LayoutPlan withNhwc(const LayoutPlan &plan, const art::Conv2dStep &s) {
  LayoutPlan out = plan;
  for (int64_t id : {s.src, s.dst, s.sum})
    if (auto it = out.find(id); it != out.end())
      it->second = nhwcOf(it->second);
  return out;
}

/// Resolves the convolutions that fall back to oneDNN's reference
/// implementation under \p plan (a planned layout beside an unplanned or
/// differently planned neighbour can leave a pair oneDNN has no kernel for:
/// an NCHW entry input into an NHWC destination; RegNet-Y's 8-channel
/// groups reading the NHWC of the dense convolutions before them and asking
/// for aBcd8b after), until none does: such a convolution's blocked buffers
/// move to NHWC where oneDNN has a kernel for that, else its buffers stay
/// plain and it reorders at its edges. A buffer moves to NHWC at most once
/// and is dropped at most once, so this ends.
void dropReferenceLayouts(const dnnl::engine &eng, const LayoutWants &w,
                          const std::vector<void *> &constants,
                          LayoutPlan &plan) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<const art::Conv2dStep *> convs;
    for (const auto &[id, md] : plan)
      if (auto it = w.touching.find(id); it != w.touching.end())
        convs.insert(it->second.begin(), it->second.end());
    // Judged against the same plan, then changed: the result does not
    // depend on the order of the set. A drop wins over a move.
    std::set<int64_t> dropped, moved;
    for (const art::Conv2dStep *s : convs) {
      ConvProblem conv(eng, *s, freeWeights(*s, constants[s->weights]));
      if (!isReference(planned(conv, *s, plan)))
        continue;
      LayoutPlan nhwc = withNhwc(plan, *s);
      bool moves = false;
      for (int64_t id : {s->src, s->dst, s->sum})
        moves |= plan.count(id) && !(plan.at(id) == nhwc.at(id));
      std::set<int64_t> &into =
          moves && !isReference(planned(conv, *s, nhwc)) ? moved : dropped;
      into.insert({s->src, s->dst, s->sum});
    }
    for (int64_t id : dropped)
      changed |= plan.erase(id) > 0;
    for (int64_t id : moved) {
      auto it = plan.find(id);
      if (it == plan.end())
        continue;
      memory::desc md = nhwcOf(it->second);
      changed |= !(it->second == md);
      it->second = md;
    }
  }
}

/// Drops from \p plan the full arguments (elementwiseBuffers) of every
/// elementwise kernel step whose full arguments do not all hold one layout
/// without padding (plain counts as one): a kernel reads and writes them
/// alike, element for element. True when it dropped any. Dropping only
/// shrinks the plan (planLayouts alternates it with dropReferenceLayouts,
/// which may move a buffer to NHWC once), so the alternation ends.
bool dropMixedKernelLayouts(const art::Program &program,
                            const std::vector<int64_t> &bufferBytes,
                            LayoutPlan &plan) {
  bool changed = false;
  for (const art::Step &s : program.steps) {
    std::vector<int64_t> full = elementwiseBuffers(s, bufferBytes);
    if (full.empty())
      continue;
    auto layout = [&](int64_t id) -> std::optional<memory::desc> {
      auto it = plan.find(id);
      if (it == plan.end())
        return std::nullopt;
      return it->second;
    };
    std::optional<memory::desc> first = layout(full.front());
    bool alike = std::all_of(full.begin(), full.end(), [&](int64_t id) {
      std::optional<memory::desc> md = layout(id);
      return md == first &&
             (!md || md->get_size() == size_t(bufferBytes[id]));
    });
    if (alike)
      continue;
    for (int64_t id : full)
      changed |= plan.erase(id) > 0;
  }
  return changed;
}

/// Whether conv step \p s is pointwise: a 1x1 filter, unit strides and
/// dilations, no padding, no groups (a matrix product over its pixels).
bool isPointwise(const art::Conv2dStep &s) {
  auto allOnes = [](const std::vector<int64_t> &v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  return s.srcShape.size() == 4 && s.groups == 1 && s.weightsShape[2] == 1 &&
         s.weightsShape[3] == 1 && allOnes(s.strides) &&
         allOnes(s.dilations) &&
         std::all_of(s.pads.begin(), s.pads.end(),
                     [](int64_t p) { return p == 0; });
}

/// Whether conv step \p s is a matrix product over the pixels of one image
/// of more than one pixel: 1x1 filter, unit strides and dilations, no
/// padding, no groups, batch 1. (On one pixel, NCHW and NHWC are the same
/// bytes: a squeeze-and-excitation's products keep their convolutions.)
bool isPixelProduct(const art::Conv2dStep &s) {
  return isPointwise(s) && s.srcShape[0] == 1 &&
         s.srcShape[2] * s.srcShape[3] > 1;
}

/// The buffers that stay plain although a convolution wants a layout for
/// them: the result of a layout-free step (a pool, a binary step, a
/// concatenation) whose sources all stay plain, read only by convolutions
/// that are matrix products over the pixels (isPixelProduct), which read a
/// plain source in place. Planned, the step would compute in its sources'
/// plain layout and reorder its result; left plain, nothing is reordered
/// (DenseNet's transitions at batch 1, their batchnorm reading a
/// concatenation in place, their average pool moved before the 1x1
/// convolution: docs/Runtime.md, "1x1 convolutions on plain sources are
/// matrix products"). A source stays plain when it must (a weight, an
/// entry input, a buffer another kind of step reads, a concatenation in
/// place) or when it is such a result or the result of a layout-free step
/// with plain sources that no convolution touches (the transition's
/// batchnorm, which only its pool reads). Where the product is refused at
/// preparation, the convolution reorders its source instead of the step
/// its result: the same reorder.
std::set<int64_t> plainForPixelProducts(const art::Entry &entry,
                                        const art::Program &program,
                                        const LayoutWants &w) {
  std::set<int64_t> out, plainResults;
  auto staysPlain = [&](int64_t id) {
    return id >= 0 && id < int64_t(w.excluded.size()) &&
           (w.excluded[id] ||
            entry.buffers[id].kind != art::BufferKind::Arena ||
            plainResults.count(id));
  };
  for (const art::Step &step : program.steps) {
    auto buffers = layoutFreeBuffers(step);
    if (!buffers || buffers->empty())
      continue;
    // The destination is the last buffer of every layout-free step.
    int64_t dst = buffers->back().first;
    bool sourcesPlain =
        std::all_of(buffers->begin(), buffers->end() - 1,
                    [&](const auto &b) { return staysPlain(b.first); });
    if (!sourcesPlain)
      continue;
    auto touching = w.touching.find(dst);
    if (touching == w.touching.end()) {
      plainResults.insert(dst);
      continue;
    }
    if (std::all_of(touching->second.begin(), touching->second.end(),
                    [&](const art::Conv2dStep *s) {
                      return s->src == dst && s->sum == -1 &&
                             s->srcShape[1] > 1 && isPixelProduct(*s);
                    })) {
      out.insert(dst);
      plainResults.insert(dst);
    }
  }
  return out;
}

LayoutPlan planLayouts(const dnnl::engine &eng, const art::Entry &entry,
                       const art::Program &program,
                       const std::vector<int64_t> &bufferBytes,
                       const std::vector<void *> &constants) {
  LayoutPlan plan;
  if (environmentIs("LOOM_ONEDNN_LAYOUT", "plain", {"plain", "blocked"}))
    return plan;
  LayoutWants w = collectWants(eng, entry, program, bufferBytes, constants);
  std::set<int64_t> keepPlain = plainForPixelProducts(entry, program, w);
  // Where the convolutions touching a buffer prefer different layouts
  // (ResNeXt-50: its narrow groups want aBcd4b or aBcd8b, the dense
  // convolutions around them NHWC), the buffer takes NHWC if one of them
  // prefers it, and the others compute in it too: one layout through the
  // run of convolutions instead of reorders to and from NCHW on both sides
  // of every grouped one (ResNeXt-50: 35.0 -> 28.3 ms).
  for (auto &[id, layouts] : w.wanted) {
    const memory::desc &first = layouts.front();
    memory::desc md = first;
    if (!std::all_of(layouts.begin(), layouts.end(),
                     [&](const memory::desc &l) { return l == first; })) {
      md = nhwcOf(first);
      if (std::find(layouts.begin(), layouts.end(), md) == layouts.end())
        continue;
    }
    memory::desc plainMd(md.dims(), md.data_type(),
                         plainTag(md.dims().size()));
    if (md == plainMd || keepPlain.count(id) ||
        !mayPlan(entry, bufferBytes, w, id, md))
      continue;
    plan.emplace(id, md);
  }
  adoptNeighbourLayouts(entry, program, bufferBytes, w, plan);
  do
    dropReferenceLayouts(eng, w, constants, plan);
  while (dropMixedKernelLayouts(program, bufferBytes, plan));
  return plan;
}

using StepPtr = std::unique_ptr<PreparedStep>;

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
StepPtr pixelProduct(const dnnl::engine &eng, const art::Conv2dStep &s,
                     void *constantWeights, const LayoutPlan &plan,
                     const ConvProblem &conv,
                     const dnnl::convolution_forward::primitive_desc &pd) {
  // The product writes NHWC rows, or a plain buffer's transposed: a
  // destination planned in another layout (nChw8c) keeps the convolution.
  auto dstPlan = plan.find(s.dst);
  if (!constantWeights || conv.winograd || s.sum != -1 ||
      !isPixelProduct(s) || plan.count(s.src) || s.srcShape[1] == 1 ||
      pd.dst_desc() == conv.dst ||
      (dstPlan != plan.end() && !(dstPlan->second == nhwcOf(conv.dst))))
    return nullptr;
  auto f32 = memory::data_type::f32;
  int64_t pixels = s.srcShape[2] * s.srcShape[3], c = s.srcShape[1],
          o = s.dstShape[1];
  Layouts io;
  io.src = io.srcBuffer = memory::desc({pixels, c}, f32, {1, pixels});
  io.dst = rowMajor({pixels, o});
  // A plain destination buffer takes the product's rows transposed.
  io.dstBuffer = plan.count(s.dst) ? io.dst
                                   : memory::desc({pixels, o}, f32, {1, pixels});
  io.sumBuffer = io.dst;
  // OIHW weights of a 1x1 filter, [O, C], read as [C, O].
  memory::desc userW({c, o}, f32, {1, c});
  memory::desc anyW({c, o}, f32, memory::format_tag::any);
  memory::desc biasMd = rowMajor({1, o});
  auto desc = s.bias != -1 ? dnnl::matmul::desc(io.src, anyW, biasMd, io.dst)
                           : dnnl::matmul::desc(io.src, anyW, io.dst);
  dnnl::matmul::primitive_desc mpd;
  try {
    mpd = dnnl::matmul::primitive_desc(desc, conv.attr, eng);
  } catch (const dnnl::error &) {
    return nullptr; // No matmul for it: the convolution runs instead.
  }
  if (isReference(mpd))
    return nullptr;
  return std::make_unique<DnnlStep>(
      eng, DnnlOperands{s.src, s.weights, s.bias, -1, s.dst},
      dnnl::matmul(mpd), io,
      WeightsLayout{userW, mpd.weights_desc(), constantWeights}, biasMd,
      mpd.scratchpad_desc(), conv.swishPass);
}

/// A grouped convolution between NHWC buffers run by
/// groupedConvChannelsLast instead of oneDNN, its constant weights packed
/// once.
class GroupedConvStep : public LibraryStep {
public:
  GroupedConvStep(const art::Conv2dStep &s, const GroupedConvGeometry &g,
                  const float *weights)
      : src(s.src), bias(s.bias), dst(s.dst), g(g),
        packed(packGroupedConvWeights(g, weights)) {}
  StepDescription describe() const override {
    return {"loom grouped convolution " + kernelLevel(), {}, "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    groupedConvChannelsLast(
        g, static_cast<const float *>(buffers[src]), packed.data(),
        bias != -1 ? static_cast<const float *>(buffers[bias]) : nullptr,
        static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, bias, dst;
  GroupedConvGeometry g;
  AlignedFloats packed;
};

bool channelsLastBytes(const LayoutPlan &plan, int64_t id,
                       const art::Shape &shape);

/// Whether groupedConvChannelsLast was measured faster than oneDNN 2.6's
/// jit:avx512_core on \p g, in RegNet-Y-800MF and RegNet-X-400MF: a source
/// plane of at least 56x56 and at most 64 channels (4 groups of 16). There
/// it took 0.64-0.90x oneDNN's time (their first grouped convolutions,
/// 112x112 stride 2: 0.64-0.72x; RegNet-X's 56x56 stride 2: 0.90x), oneDNN
/// reading the large source less well; with more channels or on smaller
/// planes the two were within a few percent either way (0.89-1.10x),
/// oneDNN's kernel computing at about the same rate. docs/Runtime.md,
/// "Grouped convolutions of 16-channel groups".
bool groupedPays(const GroupedConvGeometry &g) {
  return g.channels <= 64 && g.h * g.w >= 56 * 56;
}

/// The geometry groupedConvChannelsLast runs conv step \p s with, or
/// nullopt where oneDNN runs it, on an AVX-512 CPU: a 2-D grouped
/// convolution (groups > 1) whose groups have 16 input and 16 output
/// channels (or multiples of 16), dilation 1, constant weights, no residual sum, no
/// activation or a ReLU, between buffers both channels-last under \p plan,
/// where the kernel was measured faster than oneDNN 2.6's jit:avx512_core
/// (groupedPays). LOOM_ONEDNN_GROUPED=onednn keeps oneDNN's, to compare.
std::optional<GroupedConvGeometry>
channelsLastGrouped(const art::Conv2dStep &s, const void *constantWeights,
                    const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  if (in.size() != 4 || s.groups <= 1 || !constantWeights || s.sum != -1 ||
      s.algorithm != art::ConvAlgorithm::Direct ||
      (s.activation.kind != Activation::None &&
       s.activation.kind != Activation::Relu) ||
      out[1] % (16 * s.groups) != 0 || in[1] % (16 * s.groups) != 0 ||
      std::any_of(s.dilations.begin(), s.dilations.end(),
                  [](int64_t d) { return d != 1; }) ||
      !channelsLastBytes(plan, s.src, in) ||
      !channelsLastBytes(plan, s.dst, out) ||
      environmentIs("LOOM_ONEDNN_GROUPED", "onednn", {"onednn"}) ||
      !hasGroupedConvKernel())
    return std::nullopt;
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
  if (!groupedPays(g))
    return std::nullopt;
  return g;
}

/// A stem convolution run by convolveStem (StemConv.cpp): the NCHW source
/// read in place, the NHWC result written, the weights packed once, a SiLU
/// after it as its own pass (as swishAsPass does for oneDNN's).
class StemConvStep : public LibraryStep {
public:
  StemConvStep(const art::Conv2dStep &s, const StemGeometry &g,
               const StemPostOp &post, const void *weights)
      : src(s.src), bias(s.bias), dst(s.dst), g(g), post(post),
        swish(s.activation.kind == Activation::Swish),
        packed(packStemWeights(g, static_cast<const float *>(weights))) {}
  StepDescription describe() const override {
    return {"loom stem convolution " + kernelLevel() +
                (swish ? " + loom swish " + kernelLevel() : ""),
            {},
            "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    auto *out = static_cast<float *>(buffers[dst]);
    convolveStem(g, static_cast<const float *>(buffers[src]), packed.data(),
                 bias != -1 ? static_cast<const float *>(buffers[bias])
                            : nullptr,
                 post, out);
    if (swish)
      swishInPlace(out, g.batch * g.oh * g.ow * g.outChannels);
    return Error::ok();
  }

private:
  int64_t src, bias, dst;
  StemGeometry g;
  StemPostOp post;
  bool swish;
  std::vector<float> packed;
};

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

/// The most filter taps (kh * kw) of a stem convolveStem runs. Measured in
/// models (LOOM_PROFILE, 2 threads, alternated): the 3x3 stems of MNASNet,
/// RegNet-Y, MobileNet-v2 and -v3-Small, EfficientNet-B0 took 0.58-0.85x
/// the time of the transpose and oneDNN's brgconv; ResNet-50's 7x7 (3 ->
/// 64, compute-bound: both near the machine's peak) 0.99-1.06x, so it
/// stays oneDNN's. Standalone (loom-bench-stem, cold) 5x5 took 0.96-0.98x.
constexpr int64_t kStemMaxTaps = 25;

/// The geometry convolveStem runs conv step \p s with, or nullopt where
/// oneDNN runs it: a dense 2-D convolution (no groups, dilation 1, no
/// residual sum) of 2 to 4 input channels and at most kStemMaxTaps filter
/// taps with constant weights, whose source buffer is plain NCHW (the
/// model's input) and whose destination \p plan makes NHWC, with an
/// activation stemPostOp has, on an AVX-512 CPU.
/// oneDNN's brgconv computes it in NHWC after a reorder of the input (from
/// memory), its kernel for NCHW sources into nChw16c with a reorder of the
/// result after. One channel needs no reorder (planned reads it as NHWC),
/// and there the kernel was no faster than brgconv (docs/Runtime.md, "Stem
/// convolutions").
/// LOOM_ONEDNN_STEM=onednn keeps oneDNN's, to compare.
std::optional<std::pair<StemGeometry, StemPostOp>>
stemConvolution(const art::Conv2dStep &s, const void *constantWeights,
                const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  if (in.size() != 4 || s.groups != 1 || in[1] < 2 || in[1] > 4 ||
      s.weightsShape[2] * s.weightsShape[3] > kStemMaxTaps || s.sum != -1 ||
      !constantWeights || plan.count(s.src) ||
      std::any_of(s.dilations.begin(), s.dilations.end(),
                  [](int64_t d) { return d != 1; }) ||
      environmentIs("LOOM_ONEDNN_STEM", "onednn", {"onednn"}) ||
      !hasStemConvKernel())
    return std::nullopt;
  auto it = plan.find(s.dst);
  if (it == plan.end() || !(it->second == nhwcOf(plainNCHW(dims(out)))))
    return std::nullopt;
  std::optional<StemPostOp> post = stemPostOp(s.activation);
  if (!post)
    return std::nullopt;
  StemGeometry g;
  g.batch = in[0], g.channels = in[1], g.h = in[2], g.w = in[3];
  g.outChannels = out[1], g.oh = out[2], g.ow = out[3];
  g.kh = s.weightsShape[2], g.kw = s.weightsShape[3];
  g.sh = s.strides[0], g.sw = s.strides[1];
  g.padTop = s.pads[0], g.padLeft = s.pads[1];
  return std::make_pair(g, *post);
}

/// A pointwise convolution between NHWC buffers, run by
/// pointwiseChannelsLast on weights packed at load, not by oneDNN; a SiLU
/// as the pass after it (swishInPlace).
class PointwiseStep : public LibraryStep {
public:
  PointwiseStep(const art::Conv2dStep &s, const float *weights,
                const PointwiseEpilogue &activation, bool swish)
      : ids{s.src, -1, s.bias, s.sum, s.dst},
        pixels(s.dstShape[0] * s.dstShape[2] * s.dstShape[3]),
        w(weights, s.dstShape[1], s.srcShape[1]), activation(activation),
        swish(swish) {}
  /// A matrix product of \p rows rows by constant 2-d weights [in][out]
  /// (matmulPointwiseForm).
  PointwiseStep(const art::MatmulStep &s, int64_t rows, const float *weights,
                const PointwiseEpilogue &activation, bool swish)
      : ids{s.src, -1, s.bias, s.sum, s.dst}, pixels(rows),
        w(weights, s.weightsShape[1], s.weightsShape[0],
          PointwiseWeights::Order::InOut),
        activation(activation), swish(swish) {}
  StepDescription describe() const override {
    StepDescription d{"loom pointwise " + kernelLevel(), {}, "team"};
    if (swish)
      d.implementation += " + loom swish " + kernelLevel();
    if (activation.planar)
      d.operands.push_back("dst nchw written by the kernel");
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    PointwiseEpilogue e = activation;
    if (ids.bias != -1)
      e.bias = static_cast<const float *>(buffers[ids.bias]);
    if (ids.sum != -1)
      e.sum = static_cast<const float *>(buffers[ids.sum]);
    auto *dst = static_cast<float *>(buffers[ids.dst]);
    pointwiseChannelsLast(w, pixels, static_cast<const float *>(buffers[ids.src]),
                          e, dst);
    if (swish)
      swishInPlace(dst, pixels * w.out);
    return Error::ok();
  }

private:
  DnnlOperands ids;
  int64_t pixels;
  PointwiseWeights w;
  PointwiseEpilogue activation;
  bool swish;
};

/// The most rows (batch x pixels) on which pointwiseChannelsLast runs a
/// pointwise convolution: 16x16 planes and smaller at batch 1. On the idle
/// machine (2 threads, oneDNN 2.6's brgconv_1x1 on the same NHWC buffers)
/// it took 0.77-0.91x oneDNN's time at 7x7 in MNASNet 1.3, 0.85-0.94x at
/// 14x14 in RegNet-Y-800MF, 0.80-0.94x at 10x10 in EfficientNet-B3, but
/// 0.86-1.01x at 19x19, 0.95-1.19x at 28x28 (MNASNet, RegNet-Y, MobileNet-V2,
/// ResNet-50) and more beyond (docs/Runtime.md, "Pointwise convolutions on
/// small planes").
constexpr int64_t kPointwiseMaxRows = 256;

/// Whether pointwiseChannelsLast runs pointwise convolution \p s rather
/// than oneDNN (see kPointwiseMaxRows).
bool pointwisePays(const art::Conv2dStep &s) {
  return s.dstShape[0] * s.dstShape[2] * s.dstShape[3] <= kPointwiseMaxRows;
}

/// What pointwiseChannelsLast applies after a step's products for its
/// activation \p activation, and whether a SiLU pass follows
/// (swishInPlace); nullopt where the kernel has no epilogue for it.
std::optional<std::pair<PointwiseEpilogue, bool>>
pointwiseEpilogue(const art::PostOp &activation) {
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

/// Whether pointwiseChannelsLast may run conv step \p s, its buffers'
/// layouts and its weights' constness aside: a pointwise convolution
/// (isPointwise) where pointwisePays, whose activation is none, a ReLU, a
/// clip or a SiLU (a pass after it), on an AVX-512 CPU.
/// LOOM_ONEDNN_POINTWISE=onednn keeps oneDNN's convolution, to compare.
bool pointwiseKernelFits(const art::Conv2dStep &s) {
  return isPointwise(s) && pointwisePays(s) &&
         !environmentIs("LOOM_ONEDNN_POINTWISE", "onednn", {"onednn"}) &&
         hasPointwiseKernel() &&
         pointwiseEpilogue(s.activation).has_value();
}

/// The prepared pointwiseChannelsLast form of conv step \p s, or null where
/// oneDNN runs it: a convolution the kernel fits (pointwiseKernelFits)
/// whose constant weights are packed once and whose source, result and
/// addend buffers are all NHWC under \p plan (or whose result is a plain
/// image and which has no addend).
StepPtr pointwiseStep(const art::Conv2dStep &s, void *constantWeights,
                      const LayoutPlan &plan) {
  auto nhwc = [&](int64_t id, const art::Shape &shape) {
    auto it = plan.find(id);
    return it != plan.end() &&
           it->second == nhwcOf(plainNCHW(dims(shape)));
  };
  // A plain result of one image without an addend (a generated kernel
  // reads it) is written channel by channel: no reorder after the step.
  bool planar = !plan.count(s.dst) && s.dstShape[0] == 1 && s.sum == -1;
  if (!constantWeights || !pointwiseKernelFits(s) ||
      !nhwc(s.src, s.srcShape) || (!nhwc(s.dst, s.dstShape) && !planar) ||
      (s.sum != -1 && !nhwc(s.sum, s.dstShape)))
    return nullptr;
  auto [e, swish] = *pointwiseEpilogue(s.activation);
  e.planar = planar;
  return std::make_unique<PointwiseStep>(
      s, static_cast<const float *>(constantWeights), e, swish);
}

StepPtr prepareConv(const dnnl::engine &eng, const art::Conv2dStep &s,
                    void *constantWeights, const LayoutPlan &plan) {
  if (auto stem = stemConvolution(s, constantWeights, plan))
    return std::make_unique<StemConvStep>(s, stem->first, stem->second,
                                          constantWeights);
  if (std::optional<GroupedConvGeometry> g =
          channelsLastGrouped(s, constantWeights, plan))
    return std::make_unique<GroupedConvStep>(
        s, *g, static_cast<const float *>(constantWeights));
  if (StepPtr step = pointwiseStep(s, constantWeights, plan))
    return step;
  ConvProblem conv(eng, s, freeWeights(s, constantWeights));
  auto preferred = planned(conv, s, plan);
  // LOOM_ONEDNN_1X1=conv keeps such steps convolutions, to compare.
  if (!environmentIs("LOOM_ONEDNN_1X1", "conv", {"conv"}))
    if (StepPtr step =
            pixelProduct(eng, s, constantWeights, plan, conv, preferred))
      return step;
  Layouts io;
  io.srcBuffer = layoutOf(plan, s.src, conv.src);
  io.dstBuffer = layoutOf(plan, s.dst, conv.dst);
  io.sumBuffer = s.sum != -1 ? layoutOf(plan, s.sum, conv.dst) : conv.dst;
  io.src = preferred.src_desc();
  io.dst = preferred.dst_desc();
  // A plain one-channel source the primitive reads as NHWC (planned): the
  // same bytes, no reorder.
  if (s.srcShape[1] == 1 && !plan.count(s.src) &&
      io.src == nhwcOf(conv.src))
    io.srcBuffer = io.src;
  return std::make_unique<DnnlStep>(
      eng, DnnlOperands{s.src, s.weights, s.bias, s.sum, s.dst},
      dnnl::convolution_forward(preferred), io,
      WeightsLayout{conv.userW, preferred.weights_desc(), constantWeights},
      conv.bias, preferred.scratchpad_desc(), conv.swishPass);
}

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

/// A pool run by one of Pool.cpp's kernels instead of oneDNN:
/// poolChannelsLast (channels-last buffers) or poolPlanes (plain ones).
class KernelPool : public LibraryStep {
public:
  using Kernel = void (*)(const PoolGeometry &, const float *, float *);
  KernelPool(const art::Pool2dStep &s, const PoolGeometry &g, Kernel kernel)
      : src(s.src), dst(s.dst), g(g), kernel(kernel) {}
  StepDescription describe() const override {
    return {std::string(kernel == poolPlanes ? "loom plane pool "
                                             : "loom channels-last pool ") +
                kernelLevel(),
            {},
            "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    kernel(g, static_cast<const float *>(buffers[src]),
           static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, dst;
  PoolGeometry g;
  Kernel kernel;
};

/// Whether buffer \p id of \p shape (NCHW) holds its floats channels-last
/// under \p plan: planned NHWC, or one pixel a channel plane and NCHW, or
/// nChw16c / nChw8c in whole blocks (the same bytes as NHWC then).
bool channelsLastBytes(const LayoutPlan &plan, int64_t id,
                       const art::Shape &shape) {
  if (shape.size() != 4)
    return false;
  memory::desc plain = plainNCHW(dims(shape));
  memory::desc md = layoutOf(plan, id, plain);
  if (md == nhwcOf(plain))
    return true;
  if (shape[2] * shape[3] != 1)
    return false;
  auto blocked = [&](int64_t block, memory::format_tag tag) {
    return shape[1] % block == 0 &&
           md == memory::desc(plain.dims(), memory::data_type::f32, tag);
  };
  return md == plain || blocked(16, memory::format_tag::aBcd16b) ||
         blocked(8, memory::format_tag::aBcd8b);
}

/// The channel block of buffer \p id of 4-D \p shape where the plan holds it
/// in oneDNN's blocked layout (nChw16c: 16, nChw8c, AVX2's: 8), else 0.
int64_t channelBlockOf(const LayoutPlan &plan, int64_t id,
                       const art::Shape &shape) {
  auto it = plan.find(id);
  if (it == plan.end())
    return 0;
  for (auto [block, tag] :
       {std::pair{int64_t(16), memory::format_tag::aBcd16b},
        std::pair{int64_t(8), memory::format_tag::aBcd8b}})
    if (shape[1] % block == 0 &&
        it->second == memory::desc(dims(shape), memory::data_type::f32, tag))
      return block;
  return 0;
}

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

/// The geometry poolChannelsLast runs pool step \p s with, or nullopt where
/// oneDNN runs it, on an AVX-512 CPU: a max pool whose source and
/// destination buffers are both NHWC under \p plan, or an average pool whose
/// windows lie inside the source and whose buffers are both NHWC or both
/// nChw16c (a result of one pixel in any layout of the same bytes). oneDNN 2.6's NHWC max pool took 1.3-2.2x as
/// long on every window measured (3x3 stride 1 and 2, ceil mode, 5x5 to
/// 147x147 planes, 64 to 832 channels; docs/Runtime.md, "Pooling on
/// channels-last buffers"), its 2x2 stride-2 averages (DenseNet's
/// transitions, NHWC and nChw16c) 3-4.5x ONNX Runtime's and 1.7-4x this
/// kernel's; its padded averages (Inception's 3x3 stride 1) and its blocked
/// (nChw16c) max pools were no clear win or faster, so they stay oneDNN's. LOOM_ONEDNN_POOL=onednn keeps oneDNN's, to
/// compare.
std::optional<PoolGeometry> channelsLastPool(const art::Pool2dStep &s,
                                             const LayoutPlan &plan) {
  auto nhwc = [&](int64_t id, const art::Shape &shape) {
    auto it = plan.find(id);
    return it != plan.end() && it->second == nhwcOf(plainNCHW(dims(shape)));
  };
  bool average = s.algorithm != art::PoolAlgorithm::Max;
  if (s.srcShape.size() != 4 || (average && !windowsInside(s)) ||
      environmentIs("LOOM_ONEDNN_POOL", "onednn", {"onednn"}) ||
      !hasPoolKernel())
    return std::nullopt;
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  // nChw16c: the batch's channel blocks are the outer index.
  int64_t blocks = 1;
  // A result of one pixel a channel: nChw16c and NCHW are the same bytes.
  bool onePixel = out[2] * out[3] == 1 && channelsLastBytes(plan, s.dst, out);
  int64_t block = channelBlockOf(plan, s.src, in);
  if (average && block &&
      (channelBlockOf(plan, s.dst, out) == block || onePixel))
    blocks = in[1] / block;
  else if (!nhwc(s.src, in) || !nhwc(s.dst, out))
    return std::nullopt;
  PoolGeometry g{/*outer=*/in[0] * blocks, in[2], in[3],
                 out[2], out[3], /*channels=*/in[1] / blocks, s.kernel[0],
                 s.kernel[1], s.strides[0], s.strides[1], s.pads[0],
                 s.pads[1]};
  g.average = average;
  return g;
}

/// The geometry poolPlanes runs pool step \p s with, or nullopt where
/// another kernel or oneDNN runs it, on an AVX-512 CPU: a max or average
/// pool whose source and destination buffers are both plain NCHW under
/// \p plan (a generated kernel's result: DenseNet's pre-activation batch
/// norm + ReLU before each transition), every window inside the source,
/// column stride 1 or 2. oneDNN 2.6's `jit:avx512_core` pooling on `abcd`
/// took 2-3x this kernel's time (DenseNet-121's three 2x2 stride-2
/// transition averages: 0.43 against ONNX Runtime's 0.07 ms a run;
/// docs/Runtime.md, "Pooling on plain buffers"). LOOM_ONEDNN_POOL=onednn
/// keeps oneDNN's.
std::optional<PoolGeometry> planePool(const art::Pool2dStep &s,
                                      const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  auto plain = [&](int64_t id, const art::Shape &shape) {
    memory::desc nchw = plainNCHW(dims(shape));
    return layoutOf(plan, id, nchw) == nchw;
  };
  if (in.size() != 4 || !windowsInside(s) || !hasPlanePoolKernel() ||
      (s.strides[1] != 1 && s.strides[1] != 2) || !plain(s.src, in) ||
      !plain(s.dst, out) ||
      environmentIs("LOOM_ONEDNN_POOL", "onednn", {"onednn"}))
    return std::nullopt;
  PoolGeometry g{/*outer=*/in[0] * in[1], in[2], in[3], out[2], out[3],
                 /*channels=*/1, s.kernel[0], s.kernel[1], s.strides[0],
                 s.strides[1], 0, 0};
  g.average = s.algorithm != art::PoolAlgorithm::Max;
  return g;
}

/// How scaleChannelsLast runs a binary step: the buffer as channel groups
/// (NHWC: one an image; nChw16c / nChw8c: C / 16 of 16 channels, C / 8 of
/// 8), the floats between
/// two images' factors and shifts (0: shared by the images), the ReLU.
struct ChannelsLastScaling {
  ChannelsLastPlanes g;
  int64_t groups = 1, scaleImage = 0, shiftImage = 0;
  bool relu = false;
};

/// A global average pool from an NHWC buffer, or a per-channel multiply of
/// one (a squeeze-and-excitation's; a batchnorm's with its shift and ReLU),
/// run by SqueezeExcite.cpp's kernels instead of oneDNN.
class SqueezeExciteStep : public LibraryStep {
public:
  /// The pool: src0 averaged into dst.
  SqueezeExciteStep(int64_t src0, int64_t dst, const ChannelsLastPlanes &g)
      : src0(src0), dst(dst), scaling{g} {}
  /// The multiply: src0 * src1 (+ shift, when not -1) into dst.
  SqueezeExciteStep(int64_t src0, int64_t src1, int64_t shift, int64_t dst,
                    const ChannelsLastScaling &scaling)
      : src0(src0), src1(src1), shift(shift), dst(dst), scaling(scaling) {}
  StepDescription describe() const override {
    return {std::string(src1 ? "loom channel scale " : "loom global average ") +
                kernelLevel(),
            {},
            "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    const auto *in = static_cast<const float *>(buffers[src0]);
    auto *out = static_cast<float *>(buffers[dst]);
    if (!src1)
      return globalAveragePoolChannelsLast(scaling.g, in, out), Error::ok();
    ChannelScale scale;
    scale.scale = static_cast<const float *>(buffers[*src1]);
    scale.scaleImage = scaling.scaleImage;
    if (shift != -1)
      scale.shift = static_cast<const float *>(buffers[shift]);
    scale.shiftImage = scaling.shiftImage;
    scale.relu = scaling.relu;
    scaleChannelsLast(scaling.g, scaling.groups, in, scale, out);
    return Error::ok();
  }

private:
  int64_t src0;
  std::optional<int64_t> src1;
  int64_t shift = -1;
  int64_t dst;
  ChannelsLastScaling scaling;
};

/// The planes globalAveragePoolChannelsLast runs pool step \p s on, or
/// nullopt where oneDNN runs it: an average over the whole plane (no
/// padding) of an NHWC buffer into a channels-last one, on an AVX-512 CPU.
/// oneDNN 2.6 split such pools by channel blocks, each thread reading its
/// blocks of every pixel; in EfficientNet-B0 they took 1.3-2.6x what ONNX
/// Runtime's take (docs/Runtime.md, "Squeeze-and-excitation on
/// channels-last buffers"). LOOM_ONEDNN_POOL=onednn keeps oneDNN's.
std::optional<ChannelsLastPlanes>
channelsLastGlobalAverage(const art::Pool2dStep &s, const LayoutPlan &plan) {
  const art::Shape &in = s.srcShape, &out = s.dstShape;
  if (s.algorithm == art::PoolAlgorithm::Max || in.size() != 4 ||
      out.size() != 4 || out[2] != 1 || out[3] != 1 ||
      s.kernel != art::Shape{in[2], in[3]} ||
      std::any_of(s.pads.begin(), s.pads.end(),
                  [](int64_t p) { return p != 0; }) ||
      !channelsLastBytes(plan, s.src, in) ||
      !channelsLastBytes(plan, s.dst, out) ||
      environmentIs("LOOM_ONEDNN_POOL", "onednn", {"onednn"}) ||
      !hasSqueezeExciteKernels())
    return std::nullopt;
  return ChannelsLastPlanes{in[0], in[2] * in[3], in[1]};
}

/// An onednn.pool2d step: it computes in its source buffer's layout and
/// writes its result in that layout too, reordered where the destination
/// buffer's differs (a max pool, or an average with its windows inside, between NHWC buffers: channelsLastPool;
/// a global average from one: channelsLastGlobalAverage; windows inside
/// plain NCHW buffers: planePool).
StepPtr preparePool(const dnnl::engine &eng, const art::Pool2dStep &s,
                    const LayoutPlan &plan) {
  if (std::optional<ChannelsLastPlanes> g = channelsLastGlobalAverage(s, plan))
    return std::make_unique<SqueezeExciteStep>(s.src, s.dst, *g);
  if (std::optional<PoolGeometry> g = channelsLastPool(s, plan))
    return std::make_unique<KernelPool>(s, *g, poolChannelsLast);
  if (std::optional<PoolGeometry> g = planePool(s, plan))
    return std::make_unique<KernelPool>(s, *g, poolPlanes);
  Layouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src, plainNCHW(dims(s.srcShape)));
  io.dstBuffer = layoutOf(plan, s.dst, plainNCHW(dims(s.dstShape)));
  dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_inference, poolAlgorithm(s.algorithm), io.src,
      anyLayout(io.dstBuffer), dims(s.strides), dims(s.kernel),
      {s.pads[0], s.pads[1]}, {s.pads[2], s.pads[3]});
  dnnl::pooling_forward::primitive_desc pd(desc, userScratchpad(), eng);
  io.dst = pd.dst_desc();
  DnnlOperands ids;
  ids.src = s.src;
  ids.dst = s.dst;
  return std::make_unique<DnnlStep>(eng, ids, dnnl::pooling_forward(pd), io,
                                    WeightsLayout(), memory::desc(),
                                    pd.scratchpad_desc());
}

dnnl::algorithm binaryAlgorithm(art::BinaryAlgorithm a) {
  switch (a) {
  case art::BinaryAlgorithm::Add:
    return dnnl::algorithm::binary_add;
  case art::BinaryAlgorithm::Mul:
    return dnnl::algorithm::binary_mul;
  }
  return dnnl::algorithm::undef;
}

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
std::optional<ChannelsLastScaling>
channelsLastScale(const art::BinaryStep &s, const LayoutPlan &plan) {
  const art::Shape &out = s.dstShape;
  if (s.algorithm != art::BinaryAlgorithm::Mul || out.size() != 4 ||
      (s.activation.kind != Activation::None &&
       s.activation.kind != Activation::Relu) ||
      environmentIs("LOOM_ONEDNN_SCALE", "onednn", {"onednn"}) ||
      !hasSqueezeExciteKernels())
    return std::nullopt;
  std::optional<int64_t> scaleImage = perChannelImage(s.src1Shape, out);
  std::optional<int64_t> shiftImage =
      s.shift == -1 ? std::optional<int64_t>(0)
                    : perChannelImage(s.shiftShape, out);
  if (!scaleImage || !shiftImage ||
      !channelsLastBytes(plan, s.src1, s.src1Shape) ||
      (s.shift != -1 && !channelsLastBytes(plan, s.shift, s.shiftShape)))
    return std::nullopt;
  ChannelsLastScaling scaling;
  scaling.scaleImage = *scaleImage;
  scaling.shiftImage = *shiftImage;
  scaling.relu = s.activation.kind == Activation::Relu;
  if (channelsLastBytes(plan, s.src0, out) &&
      channelsLastBytes(plan, s.dst, out)) {
    scaling.g = ChannelsLastPlanes{out[0], out[2] * out[3], out[1]};
    return scaling;
  }
  int64_t block = channelBlockOf(plan, s.src0, out);
  if (!block || channelBlockOf(plan, s.dst, out) != block)
    return std::nullopt;
  scaling.groups = out[1] / block;
  scaling.g =
      ChannelsLastPlanes{out[0] * scaling.groups, out[2] * out[3], block};
  return scaling;
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
StepPtr prepareBinary(const dnnl::engine &eng, const art::BinaryStep &s,
                      void *constantSrc1, const LayoutPlan &plan) {
  if (std::optional<ChannelsLastScaling> c = channelsLastScale(s, plan))
    return std::make_unique<SqueezeExciteStep>(s.src0, s.src1, s.shift, s.dst,
                                               *c);
  memory::desc plain = plainNCHW(dims(s.dstShape));
  Layouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src0, plain);
  io.dstBuffer = layoutOf(plan, s.dst, plain);
  io.weightsArg = DNNL_ARG_SRC_1;
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
        desc, userScratchpad(postOps(s.activation, false, shift)), eng);
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
  return std::make_unique<DnnlStep>(
      eng, ids, dnnl::binary(pd), io,
      WeightsLayout{src1Buffer, src1, constantSrc1}, shift,
      pd.scratchpad_desc());
}

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
        args.emplace(DNNL_ARG_SCRATCHPAD,
                     s.bind(this, DNNL_ARG_SCRATCHPAD, scratchpad,
                            s.scratch(0, bytes)));
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

/// An onednn.conv2d_filter_grad step: dst [O, C, KH, KW] = the transpose
/// [1, 0, 2, 3] of conv2d(src [C, G*N, H, W], weights [O, N, OH, OW],
/// groups G), which is the filter gradient of the forward convolution x
/// [N, G*C, H, W] -> dz [N, O, OH, OW] in G groups whose stride is this
/// one's dilation and whose dilation is this one's stride: oneDNN's
/// backward-weights primitive, reading src and weights as x and dz with
/// batch and channels exchanged (format bacd; with groups, src as [N, G, C,
/// H, W]), reordered into the layouts it prefers.
StepPtr prepareFilterGrad(const dnnl::engine &eng,
                          const art::Conv2dFilterGradStep &s) {
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
    padR[d] = (y[2 + d] - 1) * strides[d] + (w[2 + d] - 1) * s.strides[d] +
              1 - x[2 + d] - padL[d];
  Layouts io;
  io.dstBuffer = memory::desc(w, f32, memory::format_tag::oihw);
  memory::dims grouped = {n, groups, in[0], in[2], in[3]};
  if (groups == 1) {
    io.srcBuffer = memory::desc(x, f32, memory::format_tag::bacd);
  } else {
    io.srcBuffer = memory::desc(
        grouped, f32,
        memory::dims{in[2] * in[3], n * in[2] * in[3], in[1] * in[2] * in[3],
                     in[3], 1});
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
        {dnnl::prop_kind::forward_training, alg, src, any(w), any(y),
         strides, dilations, padL, padR},
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
  return std::make_unique<DnnlStep>(
      eng, ids, dnnl::convolution_backward_weights(pd), io,
      WeightsLayout{dzBuffer, pd.diff_dst_desc(), nullptr}, memory::desc(),
      pd.scratchpad_desc());
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
    return {"onednn sgemm", {}, "team"};
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
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    rows *= a[i];
  if (w.size() == 2)
    return std::make_unique<DnnlSgemm>(s, rows, k, n);
  if (w.size() != a.size() ||
      !std::equal(w.begin(), w.end() - 2, a.begin()))
    return nullptr;
  // Batches stay on the matmul primitive, which splits them over threads
  // (BERT's 12 heads of 128x64x128: one sgemm per head is 20% slower).
  int64_t m = a[a.size() - 2];
  if (rows != m)
    return nullptr;
  return std::make_unique<DnnlSgemm>(s, m, k, n);
}

/// The matrix-vector form of a matmul step with constant weights, when it
/// has one: 2-d weights, a source of one row (a classifier's fully
/// connected layers at batch 1), no residual sum, no activation but a ReLU.
/// oneDNN's sgemm streams the weights as the artifact holds them, faster
/// than the matmul primitive on its prepacked copy, and needs no copy (2
/// threads, this VM: AlexNet's 9216x4096 3.36 against 5.13 ms, VGG's
/// 25088x4096 14.3 against 17.1, 4096x4096 1.05 against 1.21; from 4 rows
/// the primitive wins, 6.1 against 6.8 ms).
StepPtr gemvForm(const art::MatmulStep &s) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  if (s.sum != -1 || s.scale != 1 || w.size() != 2 || a.empty() ||
      a.back() != w[0] ||
      (s.activation.kind != Activation::None &&
       s.activation.kind != Activation::Relu))
    return nullptr;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    rows *= a[i];
  if (rows != 1)
    return nullptr;
  return std::make_unique<DnnlSgemm>(s, 1, w[0], w[1]);
}

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
      dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg,
                                    md, alpha, beta);
      passes.emplace_back(dnnl::eltwise_forward::primitive_desc(d, eng));
    }
  }
  StepDescription describe() const override {
    StepDescription d = step->describe();
    for (const dnnl::eltwise_forward &p : passes)
      d.implementation += " + " + implementationOf(p);
    return d;
  }
  Error run(Stream &s, void *const *buffers) const override {
    if (Error e = static_cast<const LibraryStep &>(*step).run(s, buffers))
      return e;
    return guardOneDnn([&] {
      memory m = s.bind(this, DNNL_ARG_DST, md, buffers[dst]);
      for (const dnnl::eltwise_forward &p : passes)
        p.execute(s.stream, {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
      s.stream.wait();
    });
  }

private:
  StepPtr step;
  int64_t dst;
  memory::desc md;
  std::vector<dnnl::eltwise_forward> passes;
};

/// The pointwiseChannelsLast form of matmul step \p s, or null where oneDNN
/// runs it: constant 2-d weights [K, N], dense row-major operands (no
/// views), no output scale, 2 to kMatmulPointwiseMaxRows rows (the
/// source's leading dimensions folded; one row is gemvForm's) and at least
/// kMatmulPointwiseMinWeightBytes of weights, on an AVX-512 CPU. The bias and the residual sum are the kernel's epilogue's,
/// and so is the activation where the epilogue has it (pointwiseEpilogue);
/// any other runs after it (WithActivationPass), after the sum as oneDNN's
/// post-ops would.
/// LOOM_ONEDNN_POINTWISE=onednn keeps oneDNN's, to compare.
StepPtr matmulPointwiseForm(const dnnl::engine &eng, const art::MatmulStep &s,
                            void *constantWeights) {
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  if (!constantWeights || s.views || s.scale != 1 || w.size() != 2 ||
      a.empty() || a.back() != w[0] || s.dstShape.size() != a.size() ||
      s.dstShape.back() != w[1] ||
      environmentIs("LOOM_ONEDNN_POINTWISE", "onednn", {"onednn"}) ||
      !hasPointwiseKernel())
    return nullptr;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    rows *= a[i];
  if (rows < 2 || rows > kMatmulPointwiseMaxRows ||
      f32Bytes(w) < kMatmulPointwiseMinWeightBytes)
    return nullptr;
  const auto *weights = static_cast<const float *>(constantWeights);
  if (auto epilogue = pointwiseEpilogue(s.activation))
    return std::make_unique<PointwiseStep>(s, rows, weights, epilogue->first,
                                           epilogue->second);
  auto bare = std::make_unique<PointwiseStep>(s, rows, weights,
                                              PointwiseEpilogue{}, false);
  return std::make_unique<WithActivationPass>(
      eng, std::move(bare), s.activation, s.dst, rowMajor({rows, w[1]}));
}

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
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < a.size(); ++i)
      rows *= a[i];
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
  return memory::desc(dims(v.dims), memory::data_type::f32,
                      dims(v.strides));
}

StepPtr prepareMatmul(const dnnl::engine &eng, const art::MatmulStep &s,
                      void *constantWeights) {
  if (!s.views)
    if (auto step = constantWeights ? gemvForm(s) : sgemmForm(s))
      return step;
  if (auto step = matmulPointwiseForm(eng, s, constantWeights))
    return step;
  auto [src, w, dst] = matmulDims(s);
  if (s.views)
    std::tie(src, w, dst) = std::make_tuple(dims((*s.views)[0].dims),
                                            dims((*s.views)[1].dims),
                                            dims((*s.views)[2].dims));
  size_t rank = dst.size();
  memory::dims bias(rank, 1);
  bias.back() = dst.back();
  Layouts io;
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
      constantWeights = static_cast<char *>(constantWeights) + ids.weightsOffset;
  }
  memory::desc anyW(w, memory::data_type::f32, memory::format_tag::any);
  const memory::desc &wMd = constantWeights ? anyW : userW;
  auto desc = s.bias != -1 ? dnnl::matmul::desc(io.src, wMd, biasMd, io.dst)
                           : dnnl::matmul::desc(io.src, wMd, io.dst);
  dnnl::primitive_attr attr =
      userScratchpad(postOps(s.activation, s.sum != -1));
  if (s.scale != 1)
    attr.set_output_scales(0, {float(s.scale)});
  dnnl::matmul::primitive_desc pd(desc, attr, eng);
  return std::make_unique<DnnlStep>(
      eng, ids, dnnl::matmul(pd), io,
      WeightsLayout{userW, pd.weights_desc(), constantWeights}, biasMd,
      pd.scratchpad_desc());
}

//===----------------------------------------------------------------------===//
// OpenBLAS
//===----------------------------------------------------------------------===//

class BlasSgemm : public LibraryStep {
public:
  explicit BlasSgemm(const art::SgemmStep &s) : spec(s) {}
  StepDescription describe() const override {
    return {"openblas sgemm", {}, "openblas"};
  }
  Error run(Stream &, void *const *buffers) const override {
    int64_t m = spec.aShape[0], k = spec.aShape[1], n = spec.bShape[1];
    auto *a = static_cast<const float *>(buffers[spec.a]);
    auto *b = static_cast<const float *>(buffers[spec.b]);
    auto *c = static_cast<float *>(buffers[spec.c]);
    for (int64_t i = 0; i < spec.batch; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f,
                  a + i * m * k, k, b, n, 0.f, c + i * m * n, n);
    return Error::ok();
  }

private:
  art::SgemmStep spec;
};

/// OpenMP's team size for the calling thread, set for a scope.
class TeamSize {
public:
  explicit TeamSize(int n) : before(omp_get_max_threads()) {
    if (before != n)
      omp_set_num_threads(n);
  }
  ~TeamSize() {
    if (omp_get_max_threads() != before)
      omp_set_num_threads(before);
  }
  TeamSize(const TeamSize &) = delete;
  TeamSize &operator=(const TeamSize &) = delete;

private:
  int before;
};

/// A step run on the calling thread alone (made there too, so that its
/// primitive plans for one thread: oneDNN's convolutions fix their thread
/// count when made, its other primitives read OpenMP's when run).
class OnOneThread final : public LibraryStep {
public:
  explicit OnOneThread(StepPtr step) : step(std::move(step)) {}
  StepDescription describe() const override {
    StepDescription d = step->describe();
    d.threads = "1";
    return d;
  }
  Error run(Stream &s, void *const *buffers) const override {
    TeamSize one(1);
    return static_cast<const LibraryStep &>(*step).run(s, buffers);
  }

private:
  StepPtr step;
};

/// A oneDNN step's work in bytes: the f32 bytes of its operands plus its
/// FLOPs / 8 (oneDNN's kernels do about 8 FLOPs in the time they move a
/// byte of cache-resident data on this VM: a depthwise 3x3 convolution of
/// 116 channels at 14x14, 0.24 MB of work, took 6.2 us on one thread, a
/// 1x1 convolution 116 -> 116 at 14x14, 0.9 MB, 22.6 us). nullopt for the
/// steps never run alone (filter gradients: a training step's, large).
std::optional<double> libraryWork(const art::Step &step) {
  auto bytes = [](std::initializer_list<const std::vector<int64_t> *> v) {
    double n = 0;
    for (const std::vector<int64_t> *shape : v)
      n += 4.0 * double(elements(*shape));
    return n;
  };
  if (const auto *s = step.getIf<art::Conv2dStep>()) {
    double flops = 2.0 * double(elements(s->dstShape)) *
                   double(elements(s->weightsShape) / s->weightsShape[0]);
    return bytes({&s->srcShape, &s->weightsShape, &s->dstShape}) + flops / 8;
  }
  if (const auto *s = step.getIf<art::MatmulStep>()) {
    double flops = 2.0 * double(elements(s->dstShape)) *
                   double(s->srcShape.back());
    return bytes({&s->srcShape, &s->weightsShape, &s->dstShape}) + flops / 8;
  }
  if (const auto *s = step.getIf<art::Pool2dStep>())
    return bytes({&s->srcShape, &s->dstShape}) +
           double(elements(s->dstShape) * elements(s->kernel)) / 8;
  if (const auto *s = step.getIf<art::BinaryStep>())
    return bytes({&s->dstShape, &s->src1Shape, &s->dstShape}) +
           (s->shift != -1 ? bytes({&s->shiftShape}) : 0.0);
  if (const auto *s = step.getIf<art::ConcatStep>())
    return bytes({&s->dstShape, &s->dstShape});
  return std::nullopt;
}

/// The work below which a oneDNN step runs on the calling thread alone:
/// about 6 us of one core, which a second thread does not shorten once it
/// is woken and joined (2 threads against 1, best of 3000 runs, this VM:
/// that depthwise convolution 6.1 against 6.2 us; one of 232 channels at
/// 7x7, 0.12 MB, 3.7 against 2.7 us; a 1x1 convolution 96 -> 4 on one
/// pixel 1.1 against 0.4 us; a 3x3 convolution 128 -> 32 at 7x7, 0.63 MB,
/// 8.8 against 11.6 us). Each such step is also one fork and join fewer
/// that waits when the second core is busy.
constexpr double kWorkAlone = 262144;

/// Whether \p step runs alone on a device of \p threads threads.
/// LOOM_ONEDNN_ALONE=0 keeps every step on the team, to compare.
bool runsAlone(const art::Step &step, int threads) {
  if (threads <= 1 || environmentIs("LOOM_ONEDNN_ALONE", "0", {"0", "1"}))
    return false;
  std::optional<double> work = libraryWork(step);
  return work && *work < kWorkAlone;
}

/// The prepared form of one step (null for kernels, copies and control
/// steps). \p constantOf gives a buffer's address when it is a weight.
template <typename ConstantOf>
StepPtr prepareStep(const dnnl::engine &eng, const art::Step &step,
                    ConstantOf constantOf, const LayoutPlan &plan) {
  switch (step.kind()) {
  case art::StepKind::Kernel:
  case art::StepKind::Copy:
  case art::StepKind::Branch:
  case art::StepKind::Jump:
    return nullptr;
  case art::StepKind::Dispatch: // a GPU's (stepRunsOn): the reader refuses it
  case art::StepKind::CublasMatmul:
  case art::StepKind::CudnnConv:
    return nullptr;
  case art::StepKind::Conv2d: {
    const auto &s = *step.getIf<art::Conv2dStep>();
    return prepareConv(eng, s, constantOf(s.weights), plan);
  }
  case art::StepKind::Conv2dFilterGrad:
    return prepareFilterGrad(eng, *step.getIf<art::Conv2dFilterGradStep>());
  case art::StepKind::Matmul: {
    const auto &s = *step.getIf<art::MatmulStep>();
    return prepareMatmul(eng, s, constantOf(s.weights));
  }
  case art::StepKind::Pool2d:
    return preparePool(eng, *step.getIf<art::Pool2dStep>(), plan);
  case art::StepKind::Concat:
    return std::make_unique<DnnlConcat>(eng, *step.getIf<art::ConcatStep>(),
                                        plan);
  case art::StepKind::Binary: {
    const auto &s = *step.getIf<art::BinaryStep>();
    return prepareBinary(eng, s, constantOf(s.src1), plan);
  }
  case art::StepKind::Sgemm:
    return std::make_unique<BlasSgemm>(*step.getIf<art::SgemmStep>());
  case art::StepKind::TopK:
  case art::StepKind::NonMaxSuppression:
  case art::StepKind::NonZero:
    return prepareDynamicStep(step);
  }
  return nullptr;
}

} // namespace

/// Caps oneDNN's instruction set at the level the runtime uses (cpuIsa())
/// when LOOM_CPU_ISA lowers it, unless ONEDNN_MAX_CPU_ISA already says
/// what oneDNN may use. oneDNN takes the cap only before its first
/// primitive: a later call fails, and the warning says so.
static void capOneDnnIsa() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (cpuIsa() == detectedCpuIsa() || std::getenv("ONEDNN_MAX_CPU_ISA") ||
        std::getenv("DNNL_MAX_CPU_ISA"))
      return;
    dnnl::cpu_isa isa = dnnl::cpu_isa::all;
    switch (cpuIsa()) {
    case art::CpuIsa::Sse42:
      isa = dnnl::cpu_isa::sse41;
      break;
    case art::CpuIsa::Avx2:
      isa = dnnl::cpu_isa::avx2;
      break;
    case art::CpuIsa::Avx512:
      isa = dnnl::cpu_isa::avx512_core;
      break;
    }
    try {
      dnnl::set_max_cpu_isa(isa);
    } catch (const dnnl::error &e) {
      std::fprintf(stderr,
                   "loom: warning: oneDNN keeps its own instruction set "
                   "(LOOM_CPU_ISA=%s came after its first use: %s)\n",
                   std::string(art::cpuIsaName(cpuIsa())).c_str(), e.what());
    }
  });
}

Error cpu::createEngine(Engine &out) {
  capOneDnnIsa();
  try {
    out = dnnl::engine(dnnl::engine::kind::cpu, 0);
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN cannot create its CPU engine: ") +
                         e.what());
  }
  return Error::ok();
}

void cpu::setLibraryThreads(int threads) {
  if (openblas_get_num_threads() != threads)
    openblas_set_num_threads(threads);
}

Error cpu::prepareProgram(const Engine &eng, const art::Entry &entry,
                          const art::Program &program,
                          const std::vector<int64_t> &bufferBytes,
                          const std::vector<void *> &constants,
                          std::vector<StepPtr> &out,
                          std::map<int64_t, std::string> &layouts) {
  auto constantOf = [&](int64_t id) -> void * {
    return entry.buffers[id].kind == art::BufferKind::Weight ? constants[id]
                                                             : nullptr;
  };
  std::vector<void *> constantWeights(entry.buffers.size());
  for (size_t id = 0; id < entry.buffers.size(); ++id)
    constantWeights[id] = constantOf(int64_t(id));
  out.clear();
  try {
    LayoutPlan plan =
        planLayouts(eng, entry, program, bufferBytes, constantWeights);
    for (const auto &[id, md] : plan)
      layouts[id] = layoutName(md);
    int threads = omp_get_max_threads();
    for (const art::Step &step : program.steps) {
      try {
        if (runsAlone(step, threads)) {
          TeamSize one(1);
          StepPtr prepared = prepareStep(eng, step, constantOf, plan);
          out.push_back(prepared ? std::make_unique<OnOneThread>(
                                       std::move(prepared))
                                 : nullptr);
        } else {
          out.push_back(prepareStep(eng, step, constantOf, plan));
        }
      } catch (const dnnl::error &e) {
        return makeError(LOOM_ERROR_LIBRARY,
                         "oneDNN cannot make the primitive of a " +
                             std::string(art::stepKindName(step.kind())) +
                             " step: " + e.what());
      } catch (const std::bad_alloc &) {
        return makeError(LOOM_ERROR_LIBRARY,
                         "out of memory packing the weights of a " +
                             std::string(art::stepKindName(step.kind())) +
                             " step");
      }
    }
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN failed to plan layouts: ") +
                         e.what());
  }
  return Error::ok();
}
