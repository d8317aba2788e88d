//===- Library.cpp - oneDNN and OpenBLAS steps, and the thread pool -------===//
//
// Part of Loom. See Model.h. Library steps are prepared once per model:
// oneDNN primitives are created at load, with constant weights reordered
// into the layout the primitive prefers (prepacking); a run binds the
// buffers and executes. Kernels and oneDNN share one thread pool: oneDNN
// from Debian runs on GNU OpenMP, and generated kernels are split over the
// same libgomp team (through its ABI entry GOMP_parallel), so the two never
// compete for the cores.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include <cblas.h>
#include <dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

extern "C" {
void GOMP_parallel(void (*fn)(void *), void *data, unsigned numThreads,
                   unsigned flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
void omp_set_num_threads(int n);
int omp_get_max_threads(void);
}

using namespace loom::rt;
using dnnl::memory;

LibraryStep::~LibraryStep() = default;

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

namespace {

int gThreads = 0;

struct KernelCall {
  loom_kernel_fn fn;
  void *const *buffers;
  int64_t range;
};

void kernelWorker(void *data) {
  auto *call = static_cast<KernelCall *>(data);
  int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
  int64_t chunk = (call->range + n - 1) / n;
  int64_t begin = t * chunk, end = std::min(call->range, begin + chunk);
  if (begin < end)
    call->fn(call->buffers, begin, end);
}

} // namespace

void loom::rt::setThreads(int threads) {
  // Called before every run (OpenMP's team size is per calling thread):
  // only a change reaches OpenMP and OpenBLAS.
  thread_local int applied = -1;
  gThreads = threads > 0 ? threads : 0;
  if (applied == gThreads)
    return;
  applied = gThreads;
  int n = gThreads ? gThreads : omp_get_max_threads();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

void loom::rt::runKernel(loom_kernel_fn fn, void *const *buffers,
                         int64_t range) {
  int64_t threads = gThreads ? gThreads : omp_get_max_threads();
  threads = std::min<int64_t>(threads, range);
  if (threads <= 1) {
    fn(buffers, 0, range);
    return;
  }
  KernelCall call{fn, buffers, range};
  GOMP_parallel(kernelWorker, &call, unsigned(threads), 0);
}

//===----------------------------------------------------------------------===//
// oneDNN
//===----------------------------------------------------------------------===//

namespace {

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

memory::dims dims(const std::vector<int64_t> &v) {
  return memory::dims(v.begin(), v.end());
}

/// A dense row-major f32 descriptor of \p shape.
memory::desc rowMajor(const memory::dims &shape) {
  memory::dims strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return memory::desc(shape, memory::data_type::f32, strides);
}

dnnl::post_ops postOps(const StepSpec &s) {
  dnnl::post_ops ops;
  if (s.sum != -1)
    ops.append_sum(1.f);
  dnnl::algorithm alg = dnnl::algorithm::undef;
  if (s.activation == "relu")
    alg = dnnl::algorithm::eltwise_relu;
  else if (s.activation == "sigmoid")
    alg = dnnl::algorithm::eltwise_logistic;
  else if (s.activation == "tanh")
    alg = dnnl::algorithm::eltwise_tanh;
  else if (s.activation == "gelu_erf")
    alg = dnnl::algorithm::eltwise_gelu_erf;
  else if (s.activation == "gelu_tanh")
    alg = dnnl::algorithm::eltwise_gelu_tanh;
  else if (s.activation == "hardswish")
    alg = dnnl::algorithm::eltwise_hardswish;
  else if (s.activation == "swish")
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  else if (s.activation == "clip")
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip,
                       float(s.activationAlpha), float(s.activationBeta));
  else if (s.activation == "leaky_relu")
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu,
                       float(s.activationAlpha), 0.f);
  else if (s.activation == "hardsigmoid") {
    // oneDNN 2.6 has no hard sigmoid: a linear post-op, then a clip.
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear,
                       float(s.activationAlpha), float(s.activationBeta));
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 1.f);
  }
  if (alg != dnnl::algorithm::undef)
    ops.append_eltwise(1.f, alg, 0.f, 0.f);
  return ops;
}

/// This thread's memory number \p slot, at least \p bytes, 64-aligned: slot
/// 0 is oneDNN's scratchpad, 1, 2 and 3 a step's source, destination and
/// run-time weights in the layout its primitive computes in when the buffer
/// holds another (3 also an addend reordered before the weights are).
void *threadBuffer(int slot, size_t bytes) {
  struct Buffer {
    void *data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffers[4];
  Buffer &buffer = buffers[slot];
  if (buffer.size < bytes) {
    std::free(buffer.data);
    buffer.size = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, buffer.size);
  }
  return buffer.data;
}

/// Every primitive gets the calling thread's scratchpad
/// (scratchpad_mode::user): the library's own is not safe when two threads
/// run one primitive.
dnnl::primitive_attr userScratchpad(dnnl::post_ops ops = {}) {
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// A reorder between two layouts of one tensor, made once.
struct Reorder {
  dnnl::primitive prim;
  memory::desc from, to, scratchpad;

  Reorder() = default;
  Reorder(const memory::desc &from, const memory::desc &to)
      : from(from), to(to) {
    dnnl::reorder::primitive_desc pd(cpuEngine(), from, cpuEngine(), to,
                                     userScratchpad());
    prim = dnnl::reorder(pd);
    scratchpad = pd.scratchpad_desc();
  }
  explicit operator bool() const { return bool(prim); }
  void run(void *src, void *dst) const {
    dnnl::engine &eng = cpuEngine();
    std::unordered_map<int, memory> args{
        {DNNL_ARG_FROM, memory(from, eng, src)},
        {DNNL_ARG_TO, memory(to, eng, dst)}};
    if (size_t bytes = scratchpad.get_size())
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   memory(scratchpad, eng, threadBuffer(0, bytes)));
    prim.execute(threadStream(), args);
  }
};

/// The layouts of a oneDNN step's activations: the one its primitive
/// computes in and the one the buffer holds (equal unless a reorder is
/// needed at the edge of a run of blocked-layout steps).
struct Layouts {
  memory::desc src, srcBuffer, dst, dstBuffer, sumBuffer;
  /// The primitive's arguments the weights and dst buffers bind to (a
  /// backward-weights convolution reads the result gradient in the weights'
  /// place and writes the weights' gradient).
  int weightsArg = DNNL_ARG_WEIGHTS, dstArg = DNNL_ARG_DST;
};

/// A oneDNN primitive with its bound constant weights and the reorders
/// between its buffers' layouts and its own.
class DnnlStep : public LibraryStep {
public:
  DnnlStep(const StepSpec &s, dnnl::primitive prim, const Layouts &layouts,
           memory::desc weightsUser, memory::desc weights, memory::desc bias,
           memory::desc scratchpad, void *constantWeights)
      : spec(s), prim(std::move(prim)), io(layouts), weightsMd(weights),
        biasMd(bias), scratchpadMd(scratchpad) {
    if (io.src != io.srcBuffer)
      srcIn = Reorder(io.srcBuffer, io.src);
    if (io.dst != io.dstBuffer)
      dstOut = Reorder(io.dst, io.dstBuffer);
    if (spec.sum != -1 && io.sumBuffer != io.dst)
      sumIn = Reorder(io.sumBuffer, io.dst);
    if (constantWeights) {
      memory user(weightsUser, cpuEngine(), constantWeights);
      if (weightsUser == weights) {
        packed = user;
      } else {
        packed = memory(weights, cpuEngine());
        dnnl::reorder(user, packed).execute(threadStream(), user, packed);
        threadStream().wait();
      }
    } else if (weightsUser != weights) {
      weightsIn = Reorder(weightsUser, weights);
    }
  }

  Error run(void *const *buffers) const override {
    try {
      runSteps(buffers);
    } catch (const dnnl::error &e) {
      return makeError(LOOM_ERROR_LIBRARY,
                       std::string("oneDNN failed: ") + e.what());
    }
    return Error::ok();
  }

private:
  void runSteps(void *const *buffers) const {
    dnnl::engine &eng = cpuEngine();
    void *src = buffers[spec.src];
    if (srcIn) {
      src = threadBuffer(1, io.src.get_size());
      srcIn.run(buffers[spec.src], src);
    }
    void *dst = dstOut ? threadBuffer(2, io.dst.get_size()) : buffers[spec.dst];
    if (sumIn && buffers[spec.sum] == dst) {
      // Written in place of its addend (the compiler's aliasSums) in
      // another layout: reordered through a scratch buffer.
      void *tmp = threadBuffer(3, io.dst.get_size());
      sumIn.run(buffers[spec.sum], tmp);
      std::memcpy(dst, tmp, io.dst.get_size());
    } else if (sumIn)
      sumIn.run(buffers[spec.sum], dst);
    else if (spec.sum != -1 && buffers[spec.sum] != dst)
      std::memcpy(dst, buffers[spec.sum], io.dst.get_size());
    std::unordered_map<int, memory> args;
    args.emplace(DNNL_ARG_SRC, memory(io.src, eng, src));
    if (spec.weights != -1) {
      void *weights = buffers[spec.weights];
      if (weightsIn) {
        weights = threadBuffer(3, weightsMd.get_size());
        weightsIn.run(buffers[spec.weights], weights);
      }
      args.emplace(io.weightsArg,
                   packed ? packed : memory(weightsMd, eng, weights));
    }
    if (spec.bias != -1)
      args.emplace(DNNL_ARG_BIAS, memory(biasMd, eng, buffers[spec.bias]));
    args.emplace(io.dstArg, memory(io.dst, eng, dst));
    if (size_t bytes = scratchpadMd.get_size())
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   memory(scratchpadMd, eng, threadBuffer(0, bytes)));
    prim.execute(threadStream(), args);
    if (dstOut)
      dstOut.run(dst, buffers[spec.dst]);
    threadStream().wait();
  }

  StepSpec spec;
  dnnl::primitive prim;
  Layouts io;
  memory::desc weightsMd, biasMd, scratchpadMd;
  Reorder srcIn, dstOut, sumIn, weightsIn;
  memory packed;
};

memory::desc anyLayout(const memory::desc &md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

/// Whether oneDNN fell back to its reference (unoptimised) implementation.
bool isReference(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

/// A conv2d step as oneDNN sees it, activation layouts left to the caller.
struct ConvProblem {
  memory::desc src, dst; ///< plain NCHW: the layout of Loom's buffers
  memory::desc userW, weights, bias;
  memory::dims strides, dilations, padL, padR;
  bool hasBias;
  /// The step asks for Winograd's algorithm and oneDNN has a Winograd
  /// kernel for it on this CPU.
  bool winograd = false;
  dnnl::primitive_attr attr;

  /// \p freeWeights: the primitive chooses the weights' layout (constant
  /// weights are reordered into it once, others on every run).
  ConvProblem(const StepSpec &s, bool freeWeights) {
    auto f32 = memory::data_type::f32;
    memory::dims w = dims(s.weightsShape);
    auto tag = memory::format_tag::oihw;
    if (s.groups > 1) {
      w = {s.groups, w[0] / s.groups, w[1], w[2], w[3]};
      tag = memory::format_tag::goihw;
    }
    src = memory::desc(dims(s.srcShape), f32, memory::format_tag::nchw);
    dst = memory::desc(dims(s.dstShape), f32, memory::format_tag::nchw);
    userW = memory::desc(w, f32, tag);
    weights =
        freeWeights ? memory::desc(w, f32, memory::format_tag::any) : userW;
    bias = memory::desc({s.dstShape[1]}, f32, memory::format_tag::x);
    strides = dims(s.strides);
    dilations = {s.dilations[0] - 1, s.dilations[1] - 1};
    padL = {s.pads[0], s.pads[1]};
    padR = {s.pads[2], s.pads[3]};
    hasBias = s.bias != -1;
    attr = userScratchpad(postOps(s));
    // Winograd convolutions are a request: oneDNN 2.6 has them for AVX-512
    // CPUs only (jit_fp32_wino_2x3, jit_wino_4x3), so elsewhere, or with
    // LOOM_ONEDNN_CONV=direct, the step runs oneDNN's direct convolution.
    // They compute in oneDNN's blocked layout (nChw16c) whatever the
    // buffers hold, reordering at their edges: the compiler asks for them
    // only where that still pays (OneDNN.cpp, winogradPays).
    const char *forced = std::getenv("LOOM_ONEDNN_CONV");
    winograd = s.algorithm == "winograd" &&
               !(forced && std::string(forced) == "direct");
    if (winograd) {
      try {
        winograd = !isReference(primitive(anyLayout(src), anyLayout(dst)));
      } catch (const dnnl::error &) {
        winograd = false;
      }
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
    return {desc, attr, cpuEngine()};
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
bool freeWeights(const StepSpec &s, const void *constantWeights) {
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

/// The primitive of conv step \p s under \p plan: planned buffers are
/// passed in their layout; where a buffer is plain, the primitive still
/// computes in its preferred layout (a reorder at the edge costs less than
/// a convolution on NCHW). A plain source of one channel is also NHWC:
/// passed as it is, it needs no reorder, and oneDNN runs its direct kernel
/// for plain sources on it (Fashion-MNIST's first convolution: 0.23 ms
/// against 0.34-0.53 ms for the NHWC kernel oneDNN prefers, on one thread,
/// before the reorder).
dnnl::convolution_forward::primitive_desc
planned(const ConvProblem &conv, const StepSpec &s, const LayoutPlan &plan) {
  if (conv.winograd)
    return conv.primitive(anyLayout(conv.src), anyLayout(conv.dst));
  bool keepSrc = plan.count(s.src) || s.srcShape[1] == 1;
  return conv.primitive(keepSrc ? layoutOf(plan, s.src, conv.src)
                                : anyLayout(conv.src),
                        plan.count(s.dst) ? layoutOf(plan, s.dst, conv.dst)
                                          : anyLayout(conv.dst));
}

/// Pools, concatenations and binary steps run in whatever layout their
/// buffers get.
bool isLayoutFree(const StepSpec &s) {
  return s.op == StepSpec::Op::Pool2d || s.op == StepSpec::Op::Concat ||
         s.op == StepSpec::Op::Binary;
}

/// The buffers a layout-free step reads and writes, with their NCHW dims.
std::vector<std::pair<int64_t, memory::dims>>
layoutFreeBuffers(const StepSpec &s) {
  std::vector<std::pair<int64_t, memory::dims>> out;
  if (s.op == StepSpec::Op::Pool2d) {
    out.push_back({s.src, dims(s.srcShape)});
  } else if (s.op == StepSpec::Op::Binary) {
    out.push_back({s.src, dims(s.dstShape)});
    out.push_back({s.weights, dims(s.dstShape)});
  } else {
    memory::dims shape = dims(s.dstShape);
    for (size_t i = 0; i < s.args.size(); ++i) {
      shape[1] = s.srcChannels[i];
      out.push_back({s.args[i], shape});
    }
  }
  out.push_back({s.dst, dims(s.dstShape)});
  return out;
}

/// Buffers that only pools, concatenations and binary steps touch (no
/// convolution wants a layout for them) take the layout of a planned buffer
/// of the same step, repeated until nothing changes: SqueezeNet's
/// concatenation feeding a max pool feeding convolutions stays in their
/// layout throughout.
void adoptNeighbourLayouts(
    const EntrySpec &entry, const std::vector<int64_t> &bufferBytes,
    const std::vector<bool> &excluded,
    const std::map<int64_t, std::vector<memory::desc>> &wanted,
    LayoutPlan &plan) {
  using tag = memory::format_tag;
  auto tagOf = [](const memory::desc &md) -> std::optional<tag> {
    for (tag t : {tag::nhwc, tag::nChw16c, tag::nChw8c})
      if (md == memory::desc(md.dims(), md.data_type(), t))
        return t;
    return std::nullopt;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const StepSpec &s : entry.steps) {
      if (!isLayoutFree(s))
        continue;
      auto buffers = layoutFreeBuffers(s);
      std::optional<tag> t;
      for (auto &[id, shape] : buffers)
        if (auto it = plan.find(id); it != plan.end() && !t)
          t = tagOf(it->second);
      if (!t)
        continue;
      for (auto &[id, shape] : buffers) {
        memory::desc md(shape, memory::data_type::f32, *t);
        if (plan.count(id) || wanted.count(id) || excluded[id] ||
            entry.buffers[id].kind != BufferSpec::Kind::Arena ||
            md.get_size() > size_t(bufferBytes[id]))
          continue;
        plan.emplace(id, md);
        changed = true;
      }
    }
  }
}

LayoutPlan planLayouts(const EntrySpec &entry,
                       const std::vector<int64_t> &bufferBytes,
                       const std::vector<void *> &constants) {
  LayoutPlan plan;
  if (const char *p = std::getenv("LOOM_ONEDNN_LAYOUT");
      p && std::string(p) == "plain")
    return plan;
  std::map<int64_t, std::vector<memory::desc>> wanted;
  std::map<int64_t, std::vector<const StepSpec *>> touching;
  std::vector<bool> excluded(entry.buffers.size());
  auto exclude = [&](int64_t id) {
    if (id >= 0 && id < int64_t(excluded.size()))
      excluded[id] = true;
  };
  for (const StepSpec &s : entry.steps) {
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    if (s.op == StepSpec::Op::Conv2d) {
      try {
        ConvProblem conv(s, freeWeights(s, constants[s.weights]));
        // A Winograd convolution reorders from and to whatever its
        // neighbours' layouts are: it asks for none.
        if (conv.winograd)
          continue;
        pd = conv.primitive(anyLayout(conv.src), anyLayout(conv.dst));
      } catch (const dnnl::error &) {
        // Left to prepareConv, which reports it.
      }
    }
    // Pools, concatenations and binary steps have no preference.
    if (isLayoutFree(s))
      continue;
    if (!pd) {
      for (int64_t id : {s.src, s.weights, s.bias, s.sum, s.dst, s.a, s.b, s.c})
        exclude(id);
      for (int64_t id : s.args)
        exclude(id);
      continue;
    }
    wanted[s.src].push_back(pd->src_desc());
    wanted[s.dst].push_back(pd->dst_desc());
    if (s.sum != -1)
      wanted[s.sum].push_back(pd->dst_desc());
    for (int64_t id : {s.src, s.dst, s.sum})
      if (id != -1)
        touching[id].push_back(&s);
    exclude(s.weights);
    exclude(s.bias);
  }
  // Where the convolutions touching a buffer prefer different layouts
  // (ResNeXt-50: its narrow groups want aBcd4b or aBcd8b, the dense
  // convolutions around them NHWC), the buffer takes NHWC if one of them
  // prefers it, and the others compute in it too: one layout through the
  // run of convolutions instead of reorders to and from NCHW on both sides
  // of every grouped one (ResNeXt-50: 35.0 -> 28.3 ms). Such a choice is
  // kept only while no convolution touching the buffer falls back to
  // oneDNN's reference implementation under it.
  std::set<int64_t> overruled;
  for (auto &[id, layouts] : wanted) {
    const memory::desc &first = layouts.front();
    memory::desc md = first;
    if (!std::all_of(layouts.begin(), layouts.end(),
                     [&](const memory::desc &l) { return l == first; })) {
      md = memory::desc(first.dims(), first.data_type(),
                        memory::format_tag::nhwc);
      if (std::find(layouts.begin(), layouts.end(), md) == layouts.end())
        continue;
      overruled.insert(id);
    }
    memory::desc plainMd(md.dims(), md.data_type(), memory::format_tag::nchw);
    if (excluded[id] || entry.buffers[id].kind != BufferSpec::Kind::Arena ||
        md == plainMd || md.get_size() > size_t(bufferBytes[id]))
      continue;
    plan.emplace(id, md);
  }
  adoptNeighbourLayouts(entry, bufferBytes, excluded, wanted, plan);
  for (bool changed = true; changed;) {
    changed = false;
    for (int64_t id : overruled) {
      if (!plan.count(id))
        continue;
      const auto &steps = touching[id];
      bool fallsBack =
          std::any_of(steps.begin(), steps.end(), [&](const StepSpec *s) {
            ConvProblem conv(*s, freeWeights(*s, constants[s->weights]));
            return isReference(planned(conv, *s, plan));
          });
      if (fallsBack) {
        plan.erase(id);
        changed = true;
      }
    }
  }
  return plan;
}

std::shared_ptr<LibraryStep> prepareConv(const StepSpec &s,
                                         void *constantWeights,
                                         const LayoutPlan &plan) {
  ConvProblem conv(s, freeWeights(s, constantWeights));
  Layouts io;
  io.srcBuffer = layoutOf(plan, s.src, conv.src);
  io.dstBuffer = layoutOf(plan, s.dst, conv.dst);
  io.sumBuffer = s.sum != -1 ? layoutOf(plan, s.sum, conv.dst) : conv.dst;
  auto preferred = planned(conv, s, plan);
  io.src = preferred.src_desc();
  io.dst = preferred.dst_desc();
  return std::make_shared<DnnlStep>(s, dnnl::convolution_forward(preferred),
                                    io, conv.userW, preferred.weights_desc(),
                                    conv.bias, preferred.scratchpad_desc(),
                                    constantWeights);
}

memory::desc plainNCHW(const memory::dims &shape) {
  return memory::desc(shape, memory::data_type::f32, memory::format_tag::nchw);
}

/// An onednn.pool2d step: it computes in its source buffer's layout and
/// writes its result in that layout too, reordered where the destination
/// buffer's differs.
std::shared_ptr<LibraryStep> preparePool(const StepSpec &s,
                                         const LayoutPlan &plan) {
  Layouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src, plainNCHW(dims(s.srcShape)));
  io.dstBuffer = layoutOf(plan, s.dst, plainNCHW(dims(s.dstShape)));
  auto alg = s.algorithm == "max" ? dnnl::algorithm::pooling_max
             : s.algorithm == "avg_include_pad"
                 ? dnnl::algorithm::pooling_avg_include_padding
                 : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_inference, alg, io.src, anyLayout(io.dstBuffer),
      dims(s.strides), dims(s.kernelSize), {s.pads[0], s.pads[1]},
      {s.pads[2], s.pads[3]});
  dnnl::pooling_forward::primitive_desc pd(desc, userScratchpad(), cpuEngine());
  io.dst = pd.dst_desc();
  return std::make_shared<DnnlStep>(
      s, dnnl::pooling_forward(pd), io, memory::desc(), memory::desc(),
      memory::desc(), pd.scratchpad_desc(), nullptr);
}

/// An onednn.binary step: src0 + src1 computed in src0's buffer layout (the
/// result in that layout too, reordered where the destination buffer's
/// differs), src1 reordered into it where its buffer's layout differs (once
/// at load when it is a weight), an activation as a post-op.
std::shared_ptr<LibraryStep> prepareBinary(const StepSpec &s,
                                           void *constantSrc1,
                                           const LayoutPlan &plan) {
  memory::desc plain = plainNCHW(dims(s.dstShape));
  Layouts io;
  io.srcBuffer = io.src = layoutOf(plan, s.src, plain);
  io.dstBuffer = layoutOf(plan, s.dst, plain);
  io.weightsArg = DNNL_ARG_SRC_1;
  dnnl::binary::desc desc(dnnl::algorithm::binary_add, io.src, io.src,
                          anyLayout(io.dstBuffer));
  dnnl::binary::primitive_desc pd(desc, userScratchpad(postOps(s)),
                                  cpuEngine());
  io.dst = pd.dst_desc();
  return std::make_shared<DnnlStep>(
      s, dnnl::binary(pd), io, layoutOf(plan, s.weights, plain), io.src,
      memory::desc(), pd.scratchpad_desc(), constantSrc1);
}

/// An onednn.concat step along channels, reading and writing its buffers in
/// the layouts they hold (a copy per source when they match).
class ConcatStep : public LibraryStep {
public:
  ConcatStep(const StepSpec &s, const LayoutPlan &plan) : spec(s) {
    memory::dims shape = dims(s.dstShape);
    for (size_t i = 0; i < s.args.size(); ++i) {
      shape[1] = s.srcChannels[i];
      srcs.push_back(layoutOf(plan, s.args[i], plainNCHW(shape)));
    }
    dst = layoutOf(plan, s.dst, plainNCHW(dims(s.dstShape)));
    dnnl::concat::primitive_desc pd(dst, 1, srcs, cpuEngine(),
                                    userScratchpad());
    prim = dnnl::concat(pd);
    scratchpad = pd.scratchpad_desc();
  }

  Error run(void *const *buffers) const override {
    try {
      dnnl::engine &eng = cpuEngine();
      std::unordered_map<int, memory> args;
      for (size_t i = 0; i < srcs.size(); ++i)
        args.emplace(DNNL_ARG_MULTIPLE_SRC + int(i),
                     memory(srcs[i], eng, buffers[spec.args[i]]));
      args.emplace(DNNL_ARG_DST, memory(dst, eng, buffers[spec.dst]));
      if (size_t bytes = scratchpad.get_size())
        args.emplace(DNNL_ARG_SCRATCHPAD,
                     memory(scratchpad, eng, threadBuffer(0, bytes)));
      prim.execute(threadStream(), args);
      threadStream().wait();
    } catch (const dnnl::error &e) {
      return makeError(LOOM_ERROR_LIBRARY,
                       std::string("oneDNN failed: ") + e.what());
    }
    return Error::ok();
  }

private:
  StepSpec spec;
  std::vector<memory::desc> srcs;
  memory::desc dst, scratchpad;
  dnnl::primitive prim;
};

/// An onednn.conv2d_filter_grad step: dst [O, C, KH, KW] = the transpose
/// [1, 0, 2, 3] of conv2d(src [C, N, H, W], weights [O, N, OH, OW]), which
/// is the filter gradient of the forward convolution x [N, C, H, W] -> dz
/// [N, O, OH, OW] whose stride is this one's dilation and whose dilation is
/// this one's stride: oneDNN's backward-weights primitive, reading src and
/// weights as x and dz with batch and channels exchanged (format bacd),
/// reordered into the layouts it prefers.
std::shared_ptr<LibraryStep> prepareFilterGrad(const StepSpec &s) {
  auto f32 = memory::data_type::f32;
  const std::vector<int64_t> &in = s.srcShape, &dz = s.weightsShape,
                             &dw = s.dstShape;
  memory::dims x = {in[1], in[0], in[2], in[3]},
               y = {dz[1], dz[0], dz[2], dz[3]}, w = dims(dw);
  memory::dims strides = dims(s.dilations),
               dilations = {s.strides[0] - 1, s.strides[1] - 1},
               padL = {s.pads[0], s.pads[1]}, padR(2);
  for (int d = 0; d < 2; ++d)
    padR[d] = (y[2 + d] - 1) * strides[d] + (w[2 + d] - 1) * s.strides[d] +
              1 - x[2 + d] - padL[d];
  Layouts io;
  io.srcBuffer = memory::desc(x, f32, memory::format_tag::bacd);
  memory::desc dzBuffer(y, f32, memory::format_tag::bacd);
  io.dstBuffer = memory::desc(w, f32, memory::format_tag::oihw);
  auto alg = dnnl::algorithm::convolution_direct;
  auto any = [&](const memory::dims &d) {
    return memory::desc(d, f32, memory::format_tag::any);
  };
  dnnl::convolution_forward::primitive_desc hint(
      {dnnl::prop_kind::forward_training, alg, any(x), any(w), any(y),
       strides, dilations, padL, padR},
      cpuEngine());
  dnnl::convolution_backward_weights::primitive_desc pd(
      {alg, any(x), any(w), any(y), strides, dilations, padL, padR},
      userScratchpad(), cpuEngine(), hint);
  io.src = pd.src_desc();
  io.dst = pd.diff_weights_desc();
  io.weightsArg = DNNL_ARG_DIFF_DST;
  io.dstArg = DNNL_ARG_DIFF_WEIGHTS;
  return std::make_shared<DnnlStep>(
      s, dnnl::convolution_backward_weights(pd), io, dzBuffer,
      pd.diff_dst_desc(), memory::desc(), pd.scratchpad_desc(), nullptr);
}

/// A matmul whose weights change per run and that has nothing to fuse:
/// oneDNN's sgemm, which needs no reorder of B (the matmul primitive
/// repacks a non-constant B on every run; 2048^3: 51 ms against 47 ms).
class DnnlSgemmStep : public LibraryStep {
public:
  DnnlSgemmStep(const StepSpec &s, int64_t batch, int64_t m, int64_t k,
                int64_t n, bool batchedWeights)
      : spec(s), batch(batch), m(m), k(k), n(n),
        batchedWeights(batchedWeights) {}
  Error run(void *const *buffers) const override {
    auto *a = static_cast<const float *>(buffers[spec.src]);
    auto *b = static_cast<const float *>(buffers[spec.weights]);
    auto *c = static_cast<float *>(buffers[spec.dst]);
    for (int64_t i = 0; i < batch; ++i)
      if (dnnl_sgemm('N', 'N', m, n, k, 1.f, a + i * m * k, k,
                     b + (batchedWeights ? i * k * n : 0), n, 0.f,
                     c + i * m * n, n) != dnnl_success)
        return makeError(LOOM_ERROR_LIBRARY, "oneDNN's sgemm failed");
    return Error::ok();
  }

private:
  StepSpec spec;
  int64_t batch, m, k, n;
  bool batchedWeights;
};

/// The sgemm form of a matmul step, when it has one: no bias, sum or
/// activation, and weights either 2-d (every leading dimension of the
/// source folds into M) or of one batch.
std::shared_ptr<LibraryStep> sgemmForm(const StepSpec &s) {
  if (s.bias != -1 || s.sum != -1 || s.activation != "none")
    return nullptr;
  const std::vector<int64_t> &a = s.srcShape, &w = s.weightsShape;
  int64_t k = a.back(), n = w.back();
  if (w[w.size() - 2] != k)
    return nullptr;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    rows *= a[i];
  if (w.size() == 2)
    return std::make_shared<DnnlSgemmStep>(s, 1, rows, k, n, false);
  if (w.size() != a.size() ||
      !std::equal(w.begin(), w.end() - 2, a.begin()))
    return nullptr;
  // Batches stay on the matmul primitive, which splits them over threads
  // (BERT's 12 heads of 128x64x128: one sgemm per head is 20% slower).
  int64_t m = a[a.size() - 2];
  if (rows != m)
    return nullptr;
  return std::make_shared<DnnlSgemmStep>(s, 1, m, k, n, true);
}

std::shared_ptr<LibraryStep> prepareMatmul(const StepSpec &s,
                                           void *constantWeights) {
  if (!constantWeights)
    if (auto step = sgemmForm(s))
      return step;
  size_t rank = std::max(
      {s.srcShape.size(), s.weightsShape.size(), s.dstShape.size()});
  auto pad = [&](const std::vector<int64_t> &v) {
    memory::dims d(rank - v.size(), 1);
    d.insert(d.end(), v.begin(), v.end());
    return d;
  };
  memory::dims src = pad(s.srcShape), w = pad(s.weightsShape),
               dst = pad(s.dstShape);
  memory::dims bias(rank, 1);
  bias.back() = dst.back();
  Layouts io;
  io.src = io.srcBuffer = rowMajor(src);
  io.dst = io.dstBuffer = io.sumBuffer = rowMajor(dst);
  memory::desc userW = rowMajor(w), biasMd = rowMajor(bias);
  memory::desc anyW(w, memory::data_type::f32, memory::format_tag::any);
  const memory::desc &wMd = constantWeights ? anyW : userW;
  auto desc = s.bias != -1 ? dnnl::matmul::desc(io.src, wMd, biasMd, io.dst)
                           : dnnl::matmul::desc(io.src, wMd, io.dst);
  dnnl::matmul::primitive_desc pd(desc, userScratchpad(postOps(s)),
                                  cpuEngine());
  return std::make_shared<DnnlStep>(s, dnnl::matmul(pd), io, userW,
                                    pd.weights_desc(), biasMd,
                                    pd.scratchpad_desc(), constantWeights);
}

//===----------------------------------------------------------------------===//
// OpenBLAS
//===----------------------------------------------------------------------===//

class SgemmStep : public LibraryStep {
public:
  explicit SgemmStep(const StepSpec &s) : spec(s) {}
  Error run(void *const *buffers) const override {
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
  StepSpec spec;
};

} // namespace

Error loom::rt::prepareLibrarySteps(EntrySpec &entry,
                                    const std::vector<int64_t> &bufferBytes,
                                    const std::vector<void *> &constants) {
  auto constantOf = [&](int64_t id) -> void * {
    return entry.buffers[id].kind == BufferSpec::Kind::Weight ? constants[id]
                                                              : nullptr;
  };
  std::vector<void *> constantWeights(entry.buffers.size());
  for (size_t id = 0; id < entry.buffers.size(); ++id)
    constantWeights[id] = constantOf(int64_t(id));
  LayoutPlan plan = planLayouts(entry, bufferBytes, constantWeights);
  for (StepSpec &step : entry.steps) {
    try {
      switch (step.op) {
      case StepSpec::Op::Conv2d:
        step.library = prepareConv(step, constantOf(step.weights), plan);
        break;
      case StepSpec::Op::Conv2dFilterGrad:
        step.library = prepareFilterGrad(step);
        break;
      case StepSpec::Op::Matmul:
        step.library = prepareMatmul(step, constantOf(step.weights));
        break;
      case StepSpec::Op::Sgemm:
        step.library = std::make_shared<SgemmStep>(step);
        break;
      case StepSpec::Op::Pool2d:
        step.library = preparePool(step, plan);
        break;
      case StepSpec::Op::Concat:
        step.library = std::make_shared<ConcatStep>(step, plan);
        break;
      case StepSpec::Op::Binary:
        step.library = prepareBinary(step, constantOf(step.weights), plan);
        break;
      default:
        break;
      }
    } catch (const dnnl::error &e) {
      return makeError(LOOM_ERROR_LIBRARY,
                       std::string("oneDNN cannot make the primitive of a ") +
                           (step.op == StepSpec::Op::Matmul   ? "matmul"
                            : step.op == StepSpec::Op::Pool2d ? "pool2d"
                            : step.op == StepSpec::Op::Concat ? "concat"
                            : step.op == StepSpec::Op::Binary ? "binary"
                                                              : "conv2d") +
                           " step: " + e.what());
    }
  }
  return Error::ok();
}
