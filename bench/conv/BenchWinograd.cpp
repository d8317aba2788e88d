//===- BenchWinograd.cpp - loom-bench-winograd: Winograd against direct ---===//
//
// Part of Loom. For each dense 3x3 convolution of stride 1 (pad 1) in its
// table, oneDNN's direct convolution against its Winograd one, side by side
// and alternated in one run, the way libloomrt runs a step: the direct
// primitive in the layouts it prefers (format any, what the layout plan
// gives its neighbours), the Winograd one with the reorders from and to
// those layouts counted. Weights are reordered once (constant). Each cell:
// the best of up to --repeat runs alternated (--budget seconds), L2 flushed
// before each (--warm: not), on --num-threads threads: on a shared machine
// the least disturbed run. The measurement behind the oneDNN backend's
// winogradPays (docs/Runtime.md "Winograd convolutions").
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" void omp_set_num_threads(int n);

using namespace llvm;
using namespace loom::convbench;
using dnnl::memory;

static cl::OptionCategory winoCat("loom-bench-winograd options");
static cl::opt<unsigned> threads("num-threads", cl::desc("Threads (default 2)"),
                                 cl::init(2), cl::cat(winoCat));
static cl::opt<unsigned>
    repeat("repeat", cl::desc("Most timed runs per cell (default 400)"),
           cl::init(400), cl::cat(winoCat));
static cl::opt<double>
    budget("budget",
           cl::desc("Seconds per cell, at least 10 runs (default 1.5)"),
           cl::init(1.5), cl::cat(winoCat));
static cl::opt<bool> warm("warm", cl::desc("Do not flush L2 between runs"),
                          cl::cat(winoCat));
static cl::list<std::string>
    extra("shape", cl::desc("in,out,plane: a convolution to add (repeatable)"),
          cl::cat(winoCat));
static cl::list<unsigned> batches("batch",
                                  cl::desc("Batch sizes (default 1 and 2)"),
                                  cl::cat(winoCat));
static cl::opt<bool> onlyExtra("only-shapes",
                               cl::desc("Measure the --shape ones only"),
                               cl::cat(winoCat));

namespace {

struct Shape {
  int64_t in, out, plane;
  std::string where;
};

/// The dense 3x3 stride-1 convolutions of at least 64 channels in
/// torchvision's CNNs at the resolutions of Loom's benchmark sets (ResNet
/// and VGG at 224, GoogLeNet at 160 and 224, Inception-v3 at 299,
/// ResNet-50 stages at 160 (ResNeXt/Wide sweep), SqueezeNet, SSD's VGG-16).
std::vector<Shape> torchvisionShapes() {
  return {
      {64, 64, 56, "ResNet stage 1"},
      {128, 128, 28, "ResNet stage 2"},
      {256, 256, 14, "ResNet stage 3"},
      {512, 512, 7, "ResNet stage 4"},
      {64, 64, 40, "ResNet@160 stage 1"},
      {128, 128, 20, "ResNet@160 2"},
      {256, 256, 10, "ResNet@160 3"},
      {64, 128, 112, "VGG"},
      {128, 256, 56, "VGG"},
      {256, 256, 56, "VGG"},
      {256, 512, 28, "VGG"},
      {512, 512, 28, "VGG"},
      {512, 512, 14, "VGG"},
      {64, 192, 56, "GoogLeNet"},
      {64, 192, 40, "GoogLeNet@160"},
      {96, 128, 28, "GoogLeNet 3a"},
      {128, 192, 28, "GoogLeNet 3b"},
      {96, 208, 14, "GoogLeNet 4a"},
      {112, 224, 14, "GoogLeNet 4b"},
      {128, 256, 14, "GoogLeNet 4c"},
      {144, 288, 14, "GoogLeNet 4d"},
      {160, 320, 14, "GoogLeNet 4e"},
      {160, 320, 7, "GoogLeNet 5a"},
      {192, 384, 7, "GoogLeNet 5b"},
      {96, 128, 20, "GoogLeNet@160 3a"},
      {128, 192, 20, "GoogLeNet@160 3b"},
      {96, 208, 10, "GoogLeNet@160 4a"},
      {112, 224, 10, "GoogLeNet@160 4b"},
      {128, 256, 10, "GoogLeNet@160 4c"},
      {144, 288, 10, "GoogLeNet@160 4d"},
      {160, 320, 10, "GoogLeNet@160 4e"},
      {64, 96, 35, "Inception-v3"},
      {96, 96, 35, "Inception-v3"},
      {448, 384, 8, "Inception-v3 7b"},
      {384, 384, 8, "Inception-v3"},
      {80, 192, 71, "Inception-v3"},
      {64, 256, 13, "SqueezeNet"},
      {48, 192, 13, "SqueezeNet"},
      {256, 256, 25, "FPN-like"},
      {1024, 1024, 19, "SSD fc6-like"},
  };
}

struct Conv {
  dnnl::convolution_forward::primitive_desc pd;
  memory src, weights, bias, dst;
  std::string impl;
};

Conv makeConv(const dnnl::engine &eng, dnnl::algorithm alg, memory::dims wD,
              const memory::desc &srcMd, const memory::desc &dstMd) {
  auto f32 = memory::data_type::f32;
  memory::desc w(wD, f32, memory::format_tag::any);
  memory::desc b({wD[0]}, f32, memory::format_tag::x);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg,
                                    srcMd, w, b, dstMd, {1, 1}, {0, 0}, {1, 1},
                                    {1, 1});
  Conv c{{d, eng}, {}, {}, {}, {}, {}};
  c.impl = c.pd.impl_info_str();
  c.src = memory(c.pd.src_desc(), eng);
  c.weights = memory(c.pd.weights_desc(), eng);
  c.bias = memory(c.pd.bias_desc(), eng);
  c.dst = memory(c.pd.dst_desc(), eng);
  return c;
}

struct Cell {
  double direct, winograd;
  std::string directImpl, winogradImpl;
};

/// Direct and Winograd (its reorders counted) for one shape, alternated.
Cell measure(const dnnl::engine &eng, dnnl::stream &strm, int64_t n,
             const Shape &s) {
  auto f32 = memory::data_type::f32;
  memory::dims srcD{n, s.in, s.plane, s.plane},
      dstD{n, s.out, s.plane, s.plane}, wD{s.out, s.in, 3, 3};
  memory::desc anySrc(srcD, f32, memory::format_tag::any);
  memory::desc anyDst(dstD, f32, memory::format_tag::any);
  Conv direct =
      makeConv(eng, dnnl::algorithm::convolution_direct, wD, anySrc, anyDst);
  Conv wino =
      makeConv(eng, dnnl::algorithm::convolution_winograd, wD, anySrc, anyDst);
  for (Conv *c : {&direct, &wino}) {
    fill(c->src, 1.0f);
    fill(c->weights, 0.1f);
    fill(c->bias, 0.1f);
  }
  // The Winograd step's neighbours keep the direct convolutions' layout.
  memory edgeIn(direct.pd.src_desc(), eng), edgeOut(direct.pd.dst_desc(), eng);
  fill(edgeIn, 1.0f);
  dnnl::reorder toWino(edgeIn, wino.src), fromWino(wino.dst, edgeOut);
  auto args = [](Conv &c) {
    return std::unordered_map<int, memory>{{DNNL_ARG_SRC, c.src},
                                           {DNNL_ARG_WEIGHTS, c.weights},
                                           {DNNL_ARG_BIAS, c.bias},
                                           {DNNL_ARG_DST, c.dst}};
  };
  dnnl::convolution_forward directP(direct.pd), winoP(wino.pd);
  auto time = [&](auto &&body) { return timeRun(strm, warm, body); };
  auto runDirect = [&] { directP.execute(strm, args(direct)); };
  auto runWino = [&] {
    toWino.execute(strm, edgeIn, wino.src);
    winoP.execute(strm, args(wino));
    fromWino.execute(strm, wino.dst, edgeOut);
  };
  runDirect();
  runWino();
  std::vector<double> d, w;
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeat, budget, start); ++i) {
    d.push_back(time(runDirect));
    w.push_back(time(runWino));
  }
  return {best(d), best(w), direct.impl, wino.impl};
}

/// A --shape value, or nullopt where it is malformed or out of range.
std::optional<Shape> parseShape(StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, ',', 3, 3);
  if (!f || (*f)[0] < 1 || (*f)[1] < 1 || (*f)[2] < 1)
    return std::nullopt;
  return Shape{(*f)[0], (*f)[1], (*f)[2], "--shape"};
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM x(argc, argv);
  cl::HideUnrelatedOptions(winoCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "oneDNN's direct against its Winograd 3x3 convolution, per shape\n");
  omp_set_num_threads(threads);
  std::vector<Shape> given = parseShapes<Shape>(
      extra, parseShape,
      "in,out,plane (three positive integers)");
  std::vector<Shape> shapes =
      shapesToMeasure(onlyExtra.getValue(), torchvisionShapes(), given);
  std::vector<unsigned> ns(batches.begin(), batches.end());
  if (ns.empty())
    ns.assign({1u, 2u});
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  outs() << "| in -> out, plane | batch | where | direct ms | Winograd ms | "
            "Winograd/direct | kernels |\n| --- | ---: | --- | ---: | ---: | "
            "---: | --- |\n";
  for (const Shape &s : shapes)
    for (unsigned n : ns) {
      Cell c;
      try {
        c = measure(eng, strm, n, s);
      } catch (const dnnl::error &e) {
        // A CPU without oneDNN's Winograd kernels (AVX2): a row that says so.
        outs() << formatv("| {0} -> {1}, {2}x{2} | {3} | {4} | not measured: "
                          "{5} | | | |\n",
                          s.in, s.out, s.plane, n, s.where, e.what());
        continue;
      }
      outs() << formatv("| {0} -> {1}, {2}x{2} | {3} | {4} | {5:F3} | {6:F3} "
                        "| {7:F2} | {8} / {9} |\n",
                        s.in, s.out, s.plane, n, s.where, c.direct, c.winograd,
                        c.winograd / c.direct, c.directImpl, c.winogradImpl);
      outs().flush();
    }
  return 0;
}
