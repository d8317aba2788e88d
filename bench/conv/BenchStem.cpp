//===- BenchStem.cpp - A stem convolution, oneDNN vs Loom's kernel --------===//
//
// Part of Loom. loom-bench-stem: a CNN's stem convolution from the model's
// NCHW input into NHWC, with its bias and ReLU, as libloomrt ran it before
// (Loom's transposePlanes NCHW -> NHWC, then oneDNN 2.6's primitive on
// NHWC: brgconv on AVX-512; one channel read in place) and as its convolveStem
// (lib/Runtime/ StemConv.cpp, compiled in: the NCHW input read in place). Each
// run starts cold (16 MiB written first: the input comes from memory, as a
// model's does; --warm: not), the two forms alternated; best and median
// microseconds.
// The measurement behind docs/Runtime.md "Stem convolutions".
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"
#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace loom;
using namespace loom::convbench;
namespace cpu = loom::rt::cpu;
using dnnl::memory;

namespace {

llvm::cl::OptionCategory stemCat("loom-bench-stem options");
llvm::cl::list<std::string> shapeArgs(
    "shape", llvm::cl::desc("n,c,o,plane,k,stride,pad to measure (repeatable)"),
    llvm::cl::cat(stemCat));
llvm::cl::opt<bool> onlyGiven("only", llvm::cl::desc("Only the --shape values"),
                              llvm::cl::cat(stemCat));
llvm::cl::opt<unsigned> threadsArg("num-threads",
                                   llvm::cl::desc("Team size (default 2)"),
                                   llvm::cl::init(2), llvm::cl::cat(stemCat));
llvm::cl::opt<bool> warmArg("warm",
                            llvm::cl::desc("Do not write 16 MiB before a run"),
                            llvm::cl::cat(stemCat));
llvm::cl::opt<unsigned> repeatArg("repeat",
                                  llvm::cl::desc("Runs a form at most"),
                                  llvm::cl::init(300), llvm::cl::cat(stemCat));
llvm::cl::opt<double> budgetArg("budget",
                                llvm::cl::desc("Seconds a shape at most"),
                                llvm::cl::init(2), llvm::cl::cat(stemCat));

struct Shape {
  int64_t n, c, o, plane, k, stride, pad;
};

/// torchvision's stems at 224: MNASNet 1.3 (3 -> 40), MobileNet-V2,
/// RegNet-Y-800MF and EfficientNet-B0 (3 -> 32), ResNet-50 (7x7, 3 -> 64);
/// batch 2; one input channel.
std::vector<Shape> builtInShapes() {
  return {{1, 3, 40, 224, 3, 2, 1}, {1, 3, 32, 224, 3, 2, 1},
          {1, 3, 64, 224, 7, 2, 3}, {2, 3, 32, 224, 3, 2, 1},
          {1, 1, 32, 224, 3, 2, 1}, {1, 3, 24, 224, 3, 1, 1}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void measureShape(dnnl::engine &eng, dnnl::stream &strm, const Shape &s) {
  int64_t out = (s.plane + 2 * s.pad - s.k) / s.stride + 1;
  auto f32 = memory::data_type::f32;
  using tag = memory::format_tag;
  memory::dims srcDims = {s.n, s.c, s.plane, s.plane};
  memory::dims dstDims = {s.n, s.o, out, out};
  memory src({srcDims, f32, tag::nchw}, eng),
      nhwc({srcDims, f32, tag::nhwc}, eng);
  memory weights({{s.o, s.c, s.k, s.k}, f32, tag::oihw}, eng);
  memory bias({{s.o}, f32, tag::x}, eng);
  fill(src, 2.f), fill(weights, 1.f), fill(bias, 0.5f);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      {srcDims, f32, tag::nhwc}, {{s.o, s.c, s.k, s.k}, f32, tag::any},
      bias.get_desc(), {dstDims, f32, tag::nhwc}, {s.stride, s.stride}, {0, 0},
      {s.pad, s.pad}, {s.pad, s.pad});
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  memory packedW(pd.weights_desc(), eng), scratch(pd.scratchpad_desc(), eng);
  dnnl::reorder(weights, packedW).execute(strm, weights, packedW);
  memory dst(pd.dst_desc(), eng), dst2(pd.dst_desc(), eng);
  dnnl::convolution_forward conv(pd);
  cpu::DenseConvGeometry g{s.n, s.c, s.plane,  s.plane,  s.o,   out,  out,
                           s.k, s.k, s.stride, s.stride, s.pad, s.pad};
  auto *w = static_cast<const float *>(weights.get_data_handle());
  std::vector<float> packed = cpu::packStemWeights(g, w);
  auto *in = static_cast<const float *>(src.get_data_handle());
  cpu::StemPostOp relu{cpu::StemPostOp::Kind::Relu};
  // One channel: NCHW is NHWC, read in place (as libloomrt does).
  memory plainAsNhwc(nhwc.get_desc(), eng, src.get_data_handle());
  auto onednnRun = [&] {
    if (s.c > 1)
      cpu::transposePlanes({s.n, s.c, s.plane * s.plane}, in,
                           static_cast<float *>(nhwc.get_data_handle()));
    conv.execute(strm, {{DNNL_ARG_SRC, s.c > 1 ? nhwc : plainAsNhwc},
                        {DNNL_ARG_WEIGHTS, packedW},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, scratch}});
  };
  auto loomRun = [&] {
    cpu::convolveStem(g, in, packed.data(),
                      static_cast<const float *>(bias.get_data_handle()), relu,
                      static_cast<float *>(dst2.get_data_handle()));
  };
  onednnRun(), loomRun();
  strm.wait();
  std::vector<double> times[2];
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeatArg, budgetArg, start); ++i) {
    times[0].push_back(timeRun(strm, warmArg, onednnRun) * 1000);
    times[1].push_back(timeRun(strm, warmArg, loomRun) * 1000);
  }
  auto *a = static_cast<const float *>(dst.get_data_handle());
  auto *b = static_cast<const float *>(dst2.get_data_handle());
  double err = 0;
  for (size_t i = 0; i < dst.get_desc().get_size() / sizeof(float); ++i)
    err = std::max(err, double(std::fabs(a[i] - b[i])));
  double flops = 2.0 * s.n * s.o * out * out * s.c * s.k * s.k;
  std::printf("| %lld,%lld,%lld,%lld,%lld,%lld,%lld | %s | %.1f / %.1f | "
              "%.1f / %.1f | %.0f | %.1e |\n",
              (long long)s.n, (long long)s.c, (long long)s.o,
              (long long)s.plane, (long long)s.k, (long long)s.stride,
              (long long)s.pad, pd.impl_info_str(), best(times[0]),
              median(times[0]), best(times[1]), median(times[1]),
              flops / best(times[1]) / 1000, err);
  std::fflush(stdout);
}

/// A --shape value n,c,o,plane,k,stride,pad.
std::optional<Shape> parseShape(llvm::StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, ',', 7, 7);
  if (!f ||
      std::any_of(f->begin(), f->end(), [](int64_t v) { return v < 0; }) ||
      (*f)[0] < 1 || (*f)[1] < 1 || (*f)[1] > 4 || (*f)[2] < 1 || (*f)[3] < 1 ||
      (*f)[4] < 1 || (*f)[5] < 1 || (*f)[3] + 2 * (*f)[6] < (*f)[4])
    return std::nullopt;
  return Shape{(*f)[0], (*f)[1], (*f)[2], (*f)[3], (*f)[4], (*f)[5], (*f)[6]};
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(stemCat);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-stem: a stem convolution (NCHW input, NHWC result, bias "
      "and ReLU), Loom's transpose + oneDNN against libloomrt's "
      "convolveStem (microseconds)\n");
  std::vector<Shape> given = parseShapes<Shape>(
      shapeArgs, parseShape,
      "n,c,o,plane,k,stride,pad (c 1-4, the window inside the padded plane)");
  if (!cpu::hasStemConvKernel() || !cpu::hasTransposeKernel()) {
    llvm::errs() << "loom-bench-stem: the instruction-set level in use (loom-run --cpu-info) has no stem or transpose kernel\n";
    return 1;
  }
  omp_set_num_threads(int(threadsArg));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("%u thread(s); us, best / median, each run %s, the forms "
              "alternated\n",
              unsigned(threadsArg),
              warmArg ? "warm" : "cold (16 MiB written first)");
  std::printf("| n,c,o,plane,k,stride,pad | oneDNN | transpose + oneDNN | "
              "convolveStem | its GFLOP/s | largest difference |\n"
              "| --- | --- | ---: | ---: | ---: | ---: |\n");
  for (const Shape &s : shapesToMeasure(onlyGiven, builtInShapes(), given))
    measureShape(eng, strm, s);
  return 0;
}
