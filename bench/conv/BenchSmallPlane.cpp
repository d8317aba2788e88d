//===- BenchSmallPlane.cpp - loom-bench-small-plane: conv forms per shape -===//
//
// Part of Loom. For convolutions with small output planes and many channels
// (ResNet's last stage, Inception-v3's 8x8 blocks), the forms oneDNN 2.6 can
// run them in, side by side and alternated in one run: the convolution on
// NHWC activations (what oneDNN prefers on AVX-512: brgconv), the
// convolution on the blocked layout of the CPU's vectors (nChw16c,
// jit:avx512_core, with AVX-512; nChw8c, jit:avx2, without), and for a 1x1 convolution of
// stride 1 the matrix product over the pixels (M = batch x pixels) on the
// same NHWC bytes with prepacked weights, and dnnl_sgemm on the plain
// weights. Weights in the primitive's layout, made once (constant), rotated
// among copies of --cold-mb so each run reads them from memory as a model's
// run does; post-ops bias + ReLU. Each cell: the best of up to --repeat runs
// alternated (--budget seconds), L2 flushed before each (--warm: not), on
// --num-threads threads. The measurement behind libloomrt's blockedPays
// (docs/Runtime.md, "Small planes in nChw16c"); with the pointwise kernel
// libloomrt runs 1x1 stride-1 convolutions with (Pointwise.cpp, compiled
// in; bias + ReLU too), the one behind its pointwisePays (docs/Runtime.md,
// "Pointwise convolutions on small planes").
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"
#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

extern "C" void omp_set_num_threads(int n);

using namespace llvm;
using dnnl::memory;

static cl::OptionCategory spCat("loom-bench-small-plane options");
static cl::opt<unsigned> threads("num-threads", cl::desc("Threads (default 2)"),
                                 cl::init(2), cl::cat(spCat));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Most timed runs per cell (400)"),
                                cl::init(400), cl::cat(spCat));
static cl::opt<double>
    budget("budget", cl::desc("Seconds per cell, at least 10 runs (1.0)"),
           cl::init(1.0), cl::cat(spCat));
static cl::opt<bool> warm("warm", cl::desc("Do not flush L2 between runs"),
                          cl::cat(spCat));
static cl::opt<unsigned> coldMB(
    "cold-mb",
    cl::desc("Rotate each form's weights among copies of at least this many "
             "MB, so they come from memory as in a model (default 512; 0: "
             "one copy)"),
    cl::init(512), cl::cat(spCat));
static cl::opt<bool>
    huge("huge",
         cl::desc("Weights on transparent huge pages (madvise), as libloomrt "
                  "prepacks them"),
         cl::cat(spCat));
static cl::list<std::string>
    extra("shape",
          cl::desc("in,out,kernel,plane[,batch[,stride]]: a convolution "
                   "(output plane; repeatable)"),
          cl::cat(spCat));
static cl::opt<bool> onlyExtra("only-shapes",
                               cl::desc("Measure the --shape ones only"),
                               cl::cat(spCat));

namespace {

struct Shape {
  int64_t in, out, kernel, plane, batch = 1, stride = 1;
  std::string where;
};

/// Convolutions of at least 256 channels on output planes of 10x10 and
/// below in torchvision's CNNs at the resolutions of Loom's sweep, and
/// neighbours on larger planes (where the layouts' order may turn).
std::vector<Shape> defaultShapes() {
  return {
      {1024, 1024, 3, 5, 1, 1, "Wide-ResNet-50-2@160 layer4 conv2"},
      {2048, 1024, 1, 5, 1, 1, "Wide-ResNet-50-2@160 layer4 conv1"},
      {1024, 2048, 1, 5, 1, 1, "Wide-ResNet-50-2@160 layer4 conv3"},
      {512, 512, 3, 10, 1, 1, "Wide-ResNet-50-2@160 layer3 conv2"},
      {1024, 512, 1, 10, 1, 1, "Wide-ResNet-50-2@160 layer3 conv1"},
      {512, 1024, 1, 10, 1, 1, "Wide-ResNet-50-2@160 layer3 conv3"},
      {512, 512, 3, 4, 2, 1, "ResNet-152@128 b2 layer4 conv2"},
      {2048, 512, 1, 4, 2, 1, "ResNet-152@128 b2 layer4 conv1"},
      {512, 2048, 1, 4, 2, 1, "ResNet-152@128 b2 layer4 conv3"},
      {256, 256, 3, 8, 2, 1, "ResNet-152@128 b2 layer3 conv2"},
      {1024, 256, 1, 8, 2, 1, "ResNet-152@128 b2 layer3 conv1"},
      {256, 1024, 1, 8, 2, 1, "ResNet-152@128 b2 layer3 conv3"},
      {512, 512, 3, 7, 1, 1, "ResNet-50 layer4 conv2"},
      {2048, 512, 1, 7, 1, 1, "ResNet-50 layer4 conv1"},
      {448, 384, 3, 8, 1, 1, "Inception-v3 Mixed_7b 3x3"},
      {1280, 448, 1, 8, 1, 1, "Inception-v3 Mixed_7b 1x1"},
      {2048, 320, 1, 8, 1, 1, "Inception-v3 Mixed_7c 1x1"},
      {2048, 384, 1, 8, 1, 1, "Inception-v3 Mixed_7c 1x1"},
      {784, 784, 1, 7, 1, 1, "RegNet-Y-800MF block4 1x1"},
      {256, 256, 3, 14, 1, 1, "ResNet-50 layer3 conv2"},
      {1024, 256, 1, 14, 1, 1, "ResNet-50 layer3 conv1"},
  };
}

using namespace loom::convbench;

dnnl::primitive_attr reluAttr() {
  dnnl::post_ops po;
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

/// One form of a shape: its primitive and bound memories.
struct Form {
  std::string name, impl;
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  /// Copies of the weights, one per run in turn (--cold-mb).
  std::vector<memory> weights;
  std::vector<std::shared_ptr<void>> hugeBlocks; ///< --huge: their storage
  size_t next = 0;
  /// Runs the form on its next copy of the weights; \p custom: not a
  /// primitive (sgemm).
  std::function<void(const memory &)> custom;
  /// Runs the form on its copy \p i (modulo its copies) of weights it
  /// keeps itself (libloomrt's kernel).
  std::function<void(size_t i)> own;

  void run(dnnl::stream &strm) {
    if (own)
      return own(next++);
    const memory &w = weights[next++ % weights.size()];
    if (custom) {
      custom(w);
      return;
    }
    args[DNNL_ARG_WEIGHTS] = w;
    prim.execute(strm, args);
  }
};

/// How many copies of \p bytes of weights make --cold-mb.
size_t copiesOf(size_t bytes) {
  return coldMB == 0 ? 1
                     : std::max<size_t>(1, (size_t(coldMB) << 20) / bytes + 1);
}

/// \p f's weights as copies of \p md totalling at least --cold-mb.
void copyWeights(Form &f, const dnnl::engine &eng, const memory::desc &md) {
  size_t bytes = md.get_size();
  size_t n = copiesOf(bytes);
  for (size_t i = 0; i < n; ++i) {
    memory m;
    if (huge) {
      size_t rounded = (bytes + (2 << 20) - 1) / (2 << 20) * (2 << 20);
      void *p = std::aligned_alloc(2 << 20, rounded);
      madvise(p, rounded, MADV_HUGEPAGE);
      f.hugeBlocks.emplace_back(p, std::free);
      m = memory(md, eng, p);
    } else {
      m = memory(md, eng);
    }
    fill(m, 0.1f);
    f.weights.push_back(m);
  }
}

/// A form running primitive \p prim of \p pd (source, weights, bias,
/// destination) on memories it owns.
template <typename PrimitiveDesc>
Form primitiveForm(const dnnl::engine &eng, const std::string &name,
                   const PrimitiveDesc &pd, dnnl::primitive prim) {
  Form f;
  f.name = name;
  f.impl = pd.impl_info_str();
  f.prim = std::move(prim);
  copyWeights(f, eng, pd.weights_desc());
  for (auto [arg, md] : {std::pair{DNNL_ARG_SRC, pd.src_desc()},
                         {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                         {DNNL_ARG_BIAS, pd.bias_desc()},
                         {DNNL_ARG_DST, pd.dst_desc()}}) {
    memory m(md, eng);
    fill(m, 0.1f);
    f.args[arg] = m;
  }
  return f;
}

Form convForm(const dnnl::engine &eng, const Shape &s, memory::format_tag act,
              const std::string &name) {
  auto f32 = memory::data_type::f32;
  int64_t inPlane = s.plane * s.stride; // padded by kernel / 2
  memory::desc src({s.batch, s.in, inPlane, inPlane}, f32, act);
  memory::desc dst({s.batch, s.out, s.plane, s.plane}, f32, act);
  memory::desc w({s.out, s.in, s.kernel, s.kernel}, f32,
                 memory::format_tag::any);
  memory::desc b({s.out}, f32, memory::format_tag::x);
  int64_t p = s.kernel / 2;
  int64_t padR = (s.plane - 1) * s.stride + s.kernel - inPlane - p;
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      src, w, b, dst, {s.stride, s.stride}, {p, p}, {padR, padR});
  dnnl::convolution_forward::primitive_desc pd(d, reluAttr(), eng);
  return primitiveForm(eng, name, pd, dnnl::convolution_forward(pd));
}

/// A 1x1 stride-1 convolution as the product [N*HW, C] x [C, O] on NHWC.
Form matmulForm(const dnnl::engine &eng, const Shape &s) {
  auto f32 = memory::data_type::f32;
  int64_t m = s.batch * s.plane * s.plane;
  memory::desc src({m, s.in}, f32, memory::format_tag::ab);
  memory::desc w({s.in, s.out}, f32, memory::format_tag::any);
  memory::desc b({1, s.out}, f32, memory::format_tag::ab);
  memory::desc dst({m, s.out}, f32, memory::format_tag::ab);
  dnnl::matmul::desc d(src, w, b, dst);
  dnnl::matmul::primitive_desc pd(d, reluAttr(), eng);
  return primitiveForm(eng, "matmul", pd, dnnl::matmul(pd));
}

/// A 1x1 stride-1 convolution as dnnl_sgemm on NHWC and the plain OI
/// weights (read transposed), the product alone (no bias, no ReLU: a
/// lower bound of that form).
Form sgemmForm(const dnnl::engine &eng, const Shape &s) {
  auto f32 = memory::data_type::f32;
  int64_t m = s.batch * s.plane * s.plane;
  memory src(memory::desc({m, s.in}, f32, memory::format_tag::ab), eng);
  memory dst(memory::desc({m, s.out}, f32, memory::format_tag::ab), eng);
  fill(src, 0.1f);
  Form f;
  f.name = "sgemm";
  f.impl = "dnnl_sgemm";
  copyWeights(f, eng, memory::desc({s.out, s.in}, f32, memory::format_tag::ab));
  f.custom = [=](const memory &w) {
    auto *a = static_cast<const float *>(src.get_data_handle());
    auto *b = static_cast<const float *>(w.get_data_handle());
    auto *c = static_cast<float *>(dst.get_data_handle());
    dnnl_sgemm('N', 'T', m, s.out, s.in, 1.f, a, s.in, b, s.in, 0.f, c, s.out);
  };
  return f;
}

/// A 1x1 stride-1 convolution by libloomrt's pointwiseChannelsLast on NHWC
/// with bias and ReLU, its weights packed once per copy.
Form loomForm(const Shape &s) {
  int64_t m = s.batch * s.plane * s.plane;
  auto src = std::make_shared<std::vector<float>>(m * s.in, 0.1f);
  auto dst = std::make_shared<std::vector<float>>(m * s.out);
  auto bias = std::make_shared<std::vector<float>>(s.out, 0.1f);
  std::vector<float> oi(s.out * s.in, 0.1f);
  auto copies =
      std::make_shared<std::vector<std::unique_ptr<loom::rt::cpu::PointwiseWeights>>>();
  size_t n = copiesOf(oi.size() * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    copies->push_back(std::make_unique<loom::rt::cpu::PointwiseWeights>(
        oi.data(), s.out, s.in));
  Form f;
  f.name = "loom";
  f.impl = "loom pointwise";
  f.own = [=](size_t i) {
    loom::rt::cpu::PointwiseEpilogue e;
    e.bias = bias->data();
    e.lo = 0.f;
    loom::rt::cpu::pointwiseChannelsLast(*(*copies)[i % copies->size()], m,
                                         src->data(), e, dst->data());
  };
  return f;
}

std::vector<Form> forms(const dnnl::engine &eng, const Shape &s) {
  std::vector<Form> out;
  out.push_back(convForm(eng, s, memory::format_tag::nhwc, "NHWC"));
  bool avx512 = __builtin_cpu_supports("avx512f");
  out.push_back(convForm(eng, s,
                         avx512 ? memory::format_tag::nChw16c
                                : memory::format_tag::nChw8c,
                         avx512 ? "nChw16c" : "nChw8c"));
  if (s.kernel == 1 && s.stride == 1)
    out.push_back(matmulForm(eng, s));
  if (s.kernel == 1 && s.stride == 1)
    out.push_back(sgemmForm(eng, s));
  if (s.kernel == 1 && s.stride == 1 && loom::rt::cpu::hasPointwiseKernel())
    out.push_back(loomForm(s));
  return out;
}

/// Best time of each form, alternated.
std::vector<double> measure(dnnl::stream &strm, std::vector<Form> &fs) {
  std::vector<std::vector<double>> t(fs.size());
  for (Form &f : fs)
    f.run(strm);
  strm.wait();
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeat, budget, start); ++i)
    for (size_t k = 0; k < fs.size(); ++k)
      t[k].push_back(timeRun(strm, warm, [&] { fs[k].run(strm); }));
  std::vector<double> bests;
  for (auto &v : t)
    bests.push_back(best(v));
  return bests;
}

/// A --shape value, or nullopt where it is malformed or out of range.
std::optional<Shape> parseShape(StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, ',', 4, 6);
  if (!f)
    return std::nullopt;
  Shape s{0, 0, 0, 0, 1, 1, "--shape"};
  int64_t *fields[] = {&s.in,    &s.out,   &s.kernel,
                       &s.plane, &s.batch, &s.stride};
  for (size_t i = 0; i < f->size(); ++i)
    *fields[i] = (*f)[i];
  if (s.in < 1 || s.out < 1 || s.kernel < 1 || s.kernel % 2 == 0 ||
      s.plane < 1 || s.batch < 1 || s.stride < 1)
    return std::nullopt;
  return s;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM x(argc, argv);
  cl::HideUnrelatedOptions(spCat);
  cl::ParseCommandLineOptions(
      argc, argv, "oneDNN's forms of small-plane convolutions, per shape\n");
  omp_set_num_threads(threads);
  std::vector<Shape> given = parseShapes<Shape>(
      extra, parseShape,
      "in,out,kernel,plane[,batch[,stride]] (positive "
                  "integers, an odd kernel)");
  std::vector<Shape> shapes =
      shapesToMeasure(onlyExtra.getValue(), defaultShapes(), given);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  outs() << "| conv (in -> out, kernel, plane, batch, stride) | where | NHWC "
            "ms | blocked ms | matmul ms | sgemm ms | loom ms | blocked/NHWC | "
            "loom/NHWC | kernels |\n| --- | --- | ---: | ---: | ---: | ---: | "
            "---: | ---: | ---: | --- |\n";
  for (const Shape &s : shapes) {
    std::vector<Form> fs = forms(eng, s);
    std::vector<double> t = measure(strm, fs);
    std::string mm = fs.size() > 2 ? formatv("{0:F3}", t[2]).str() : "";
    std::string sg = fs.size() > 3 ? formatv("{0:F3}", t[3]).str() : "";
    std::string lm = fs.size() > 4 ? formatv("{0:F3}", t[4]).str() : "";
    std::string ratio =
        fs.size() > 4 ? formatv("{0:F2}", t[4] / t[0]).str() : "";
    std::string impls;
    for (const Form &f : fs)
      impls += (impls.empty() ? "" : " / ") + f.impl;
    outs() << formatv("| {0} -> {1}, {2}x{2}, {3}x{3}, {4}, {5} | {6} | "
                      "{7:F3} | {8:F3} | {9} | {10} | {11} | {12:F2} | {13} | "
                      "{14} |\n",
                      s.in, s.out, s.kernel, s.plane, s.batch, s.stride,
                      s.where, t[0], t[1], mm, sg, lm, t[1] / t[0], ratio,
                      impls);
    outs().flush();
  }
  return 0;
}
