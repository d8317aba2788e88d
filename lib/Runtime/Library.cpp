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
#include <cstring>
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
  if (alg != dnnl::algorithm::undef)
    ops.append_eltwise(1.f, alg, 0.f, 0.f);
  return ops;
}

/// This thread's scratch memory for oneDNN, at least \p bytes, 64-aligned.
void *threadScratchpad(size_t bytes) {
  struct Buffer {
    void *data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    std::free(buffer.data);
    buffer.size = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, buffer.size);
  }
  return buffer.data;
}

/// A oneDNN primitive with its bound constant weights.
class DnnlStep : public LibraryStep {
public:
  DnnlStep(const StepSpec &s, dnnl::primitive prim, memory::desc src,
           memory::desc weightsUser, memory::desc weights, memory::desc bias,
           memory::desc dst, memory::desc scratchpad, void *constantWeights)
      : spec(s), prim(std::move(prim)), srcMd(src), weightsMd(weights),
        biasMd(bias), dstMd(dst), scratchpadMd(scratchpad) {
    if (constantWeights) {
      memory user(weightsUser, cpuEngine(), constantWeights);
      if (weightsUser == weights) {
        packed = user;
      } else {
        packed = memory(weights, cpuEngine());
        dnnl::reorder(user, packed).execute(threadStream(), user, packed);
        threadStream().wait();
      }
    }
  }

  Error run(void *const *buffers) const override {
    dnnl::engine &eng = cpuEngine();
    void *dst = buffers[spec.dst];
    if (spec.sum != -1 && buffers[spec.sum] != dst)
      std::memcpy(dst, buffers[spec.sum], f32Bytes(spec.dstShape));
    std::unordered_map<int, memory> args;
    args.emplace(DNNL_ARG_SRC, memory(srcMd, eng, buffers[spec.src]));
    args.emplace(DNNL_ARG_WEIGHTS,
                 packed ? packed
                        : memory(weightsMd, eng, buffers[spec.weights]));
    if (spec.bias != -1)
      args.emplace(DNNL_ARG_BIAS, memory(biasMd, eng, buffers[spec.bias]));
    args.emplace(DNNL_ARG_DST, memory(dstMd, eng, dst));
    // The scratchpad is the calling thread's (scratchpad_mode::user): the
    // library's own is not safe when two threads run one primitive.
    if (size_t bytes = scratchpadMd.get_size())
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   memory(scratchpadMd, eng, threadScratchpad(bytes)));
    try {
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
  dnnl::primitive prim;
  memory::desc srcMd, weightsMd, biasMd, dstMd, scratchpadMd;
  memory packed;
};

std::shared_ptr<LibraryStep> prepareConv(const StepSpec &s,
                                         void *constantWeights) {
  memory::dims src = dims(s.srcShape), dst = dims(s.dstShape);
  memory::dims w = dims(s.weightsShape);
  auto tag = memory::format_tag::oihw;
  if (s.groups > 1) {
    w = {s.groups, w[0] / s.groups, w[1], w[2], w[3]};
    tag = memory::format_tag::goihw;
  }
  auto f32 = memory::data_type::f32;
  memory::desc srcMd(src, f32, memory::format_tag::nchw);
  memory::desc dstMd(dst, f32, memory::format_tag::nchw);
  memory::desc userW(w, f32, tag);
  memory::desc anyW(w, f32, memory::format_tag::any);
  memory::desc biasMd({s.dstShape[1]}, f32, memory::format_tag::x);
  memory::dims strides = dims(s.strides);
  memory::dims dil = {s.dilations[0] - 1, s.dilations[1] - 1};
  memory::dims padL = {s.pads[0], s.pads[1]}, padR = {s.pads[2], s.pads[3]};
  auto prop = dnnl::prop_kind::forward_inference;
  auto alg = dnnl::algorithm::convolution_direct;
  const memory::desc &wMd = constantWeights ? anyW : userW;
  auto desc = s.bias != -1
                  ? dnnl::convolution_forward::desc(prop, alg, srcMd, wMd,
                                                    biasMd, dstMd, strides,
                                                    dil, padL, padR)
                  : dnnl::convolution_forward::desc(prop, alg, srcMd, wMd,
                                                    dstMd, strides, dil, padL,
                                                    padR);
  dnnl::primitive_attr attr;
  attr.set_post_ops(postOps(s));
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, cpuEngine());
  return std::make_shared<DnnlStep>(
      s, dnnl::convolution_forward(pd), srcMd, userW, pd.weights_desc(), biasMd,
      dstMd, pd.scratchpad_desc(), constantWeights);
}

std::shared_ptr<LibraryStep> prepareMatmul(const StepSpec &s,
                                           void *constantWeights) {
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
  memory::desc srcMd = rowMajor(src), dstMd = rowMajor(dst),
               userW = rowMajor(w), biasMd = rowMajor(bias);
  memory::desc anyW(w, memory::data_type::f32, memory::format_tag::any);
  const memory::desc &wMd = constantWeights ? anyW : userW;
  auto desc = s.bias != -1 ? dnnl::matmul::desc(srcMd, wMd, biasMd, dstMd)
                           : dnnl::matmul::desc(srcMd, wMd, dstMd);
  dnnl::primitive_attr attr;
  attr.set_post_ops(postOps(s));
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pd(desc, attr, cpuEngine());
  return std::make_shared<DnnlStep>(s, dnnl::matmul(pd), srcMd, userW,
                                    pd.weights_desc(), biasMd, dstMd,
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

Error loom::rt::prepareLibraryStep(const EntrySpec &entry, StepSpec &step,
                                   const std::vector<void *> &constants) {
  auto constantOf = [&](int64_t id) -> void * {
    return entry.buffers[id].kind == BufferSpec::Kind::Weight ? constants[id]
                                                              : nullptr;
  };
  try {
    switch (step.op) {
    case StepSpec::Op::Conv2d:
      step.library = prepareConv(step, constantOf(step.weights));
      break;
    case StepSpec::Op::Matmul:
      step.library = prepareMatmul(step, constantOf(step.weights));
      break;
    case StepSpec::Op::Sgemm:
      step.library = std::make_shared<SgemmStep>(step);
      break;
    default:
      break;
    }
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN cannot make the primitive of a ") +
                         (step.op == StepSpec::Op::Conv2d ? "conv2d"
                                                          : "matmul") +
                         " step: " + e.what());
  }
  return Error::ok();
}
