//===- BenchSqueezeExcite.cpp - SE pools and multiplies, oneDNN vs Loom ---===//
//
// Part of Loom. loom-bench-squeeze-excite: a squeeze-and-excitation's global
// average pool (NHWC [1, C, H, W] -> [1, C, 1, 1]) and its per-channel
// multiply (NHWC x [1, C, 1, 1] -> NHWC), each as oneDNN 2.6's primitive
// (pooling_v2 and binary, as libloomrt made them before) and as libloomrt's
// kernels (lib/Runtime/CPU/Kernels/SqueezeExcite.cpp), the measurement behind
// docs/Runtime.md "Squeeze-and-excitation on channels-last buffers".
//
// Two starting states a run: "cold" (L2 flushed) and "team" (the source just
// written by the team in contiguous halves, as the convolution's SiLU pass
// leaves it in a model: each core holds the pixels it wrote).
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"
#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace loom;
using namespace loom::convbench;
namespace cpu = loom::rt::cpu;
using dnnl::memory;

namespace {

llvm::cl::OptionCategory seCat("loom-bench-squeeze-excite options");
llvm::cl::list<std::string>
    shapeArgs("shape", llvm::cl::desc("CxHxW to measure (repeatable)"),
              llvm::cl::cat(seCat));
llvm::cl::opt<bool> onlyGiven("only",
                              llvm::cl::desc("Only the --shape values"),
                              llvm::cl::cat(seCat));
llvm::cl::opt<unsigned> threadsArg("num-threads",
                                   llvm::cl::desc("Team size (default 2)"),
                                   llvm::cl::init(2), llvm::cl::cat(seCat));
llvm::cl::opt<unsigned> repeatArg("repeat",
                                  llvm::cl::desc("Runs a cell at most"),
                                  llvm::cl::init(200), llvm::cl::cat(seCat));
llvm::cl::opt<double> budgetArg("budget",
                                llvm::cl::desc("Seconds a cell at most"),
                                llvm::cl::init(0.5), llvm::cl::cat(seCat));

struct Shape {
  int64_t c, h, w;
};

/// The squeeze-and-excitation planes of EfficientNet-B0 and -B3,
/// RegNet-Y-400MF and -800MF and MobileNetV3-S (as ONEDNN_VERBOSE named
/// their pools).
std::vector<Shape> builtInShapes() {
  return {{32, 112, 112}, {96, 56, 56},  {144, 56, 56}, {144, 28, 28},
          {240, 28, 28},  {240, 14, 14}, {672, 14, 14}, {1152, 7, 7},
          {40, 150, 150}, {24, 150, 150}, {144, 75, 75}, {192, 38, 38},
          {816, 19, 19},  {2304, 10, 10}, {48, 56, 56}, {104, 28, 28},
          {440, 7, 7},    {64, 56, 56},  {784, 7, 7},   {16, 56, 56},
          {96, 14, 14},   {576, 7, 7}};
}

/// Writes \p n floats at \p p on the team in contiguous halves.
struct TeamWrite {
  float *p;
  int64_t n;
  float v;
};
void teamWriteWorker(void *arg) {
  auto &w = *static_cast<TeamWrite *>(arg);
  int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  for (int64_t i = w.n * t / threads, e = w.n * (t + 1) / threads; i < e; ++i)
    w.p[i] = w.v * float((i * 7919) % 97) / 97.0f - 0.5f * w.v;
}

/// Best microseconds of \p body from the state \p team names.
template <typename Body>
double measure(dnnl::stream &strm, bool team, float *src, int64_t n,
               Body &&body) {
  std::vector<double> times;
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeatArg, budgetArg, start); ++i) {
    flushL2();
    if (team) {
      TeamWrite w{src, n, 1.0f};
      GOMP_parallel(teamWriteWorker, &w, threadsArg, 0);
    }
    times.push_back(timeRun(strm, true, body) * 1000);
  }
  return best(times);
}

/// The largest difference of \p a and \p b (n floats).
float largestDifference(const float *a, const float *b, int64_t n) {
  float d = 0;
  for (int64_t i = 0; i < n; ++i)
    d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

void measureShape(dnnl::engine &eng, dnnl::stream &strm, const Shape &s) {
  memory::dims big = {1, s.c, s.h, s.w}, vec = {1, s.c, 1, 1};
  auto nhwc = memory::format_tag::acdb, nchw = memory::format_tag::abcd;
  memory::desc bigMd(big, memory::data_type::f32, nhwc);
  memory::desc vecMd(vec, memory::data_type::f32, nhwc);
  memory::desc vecPlain(vec, memory::data_type::f32, nchw);
  memory x(bigMd, eng), y(bigMd, eng), y2(bigMd, eng), m(vecMd, eng),
      m2(vecMd, eng), scale(vecPlain, eng);
  fill(x, 2.0f);
  fill(scale, 1.0f);
  dnnl::pooling_forward::primitive_desc poolPd(
      dnnl::pooling_forward::desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::pooling_avg_exclude_padding, bigMd, vecMd, {1, 1},
          {s.h, s.w}, {0, 0}, {0, 0}),
      eng);
  dnnl::pooling_forward pool(poolPd);
  dnnl::binary::primitive_desc mulPd(
      dnnl::binary::desc(dnnl::algorithm::binary_mul, bigMd, vecPlain, bigMd),
      eng);
  dnnl::binary mul(mulPd);
  auto *xp = static_cast<float *>(x.get_data_handle());
  auto *sp = static_cast<const float *>(scale.get_data_handle());
  int64_t n = s.c * s.h * s.w;
  cpu::ChannelsLastPlanes g{1, s.h * s.w, s.c};
  auto onednnPool = [&] {
    pool.execute(strm, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, m}});
  };
  auto loomPool = [&] {
    cpu::globalAveragePoolChannelsLast(
        g, xp, static_cast<float *>(m2.get_data_handle()));
  };
  auto onednnMul = [&] {
    mul.execute(strm,
                {{DNNL_ARG_SRC_0, x},
                 {DNNL_ARG_SRC_1, scale},
                 {DNNL_ARG_DST, y}});
  };
  auto loomMul = [&] {
    cpu::ChannelScale factors;
    factors.scale = sp;
    cpu::scaleChannelsLast(g, 1, xp, factors,
                           static_cast<float *>(y2.get_data_handle()));
  };
  double t[8];
  for (int team = 0; team < 2; ++team) {
    t[team * 4 + 0] = measure(strm, team, xp, n, onednnPool);
    t[team * 4 + 1] = measure(strm, team, xp, n, loomPool);
    t[team * 4 + 2] = measure(strm, team, xp, n, onednnMul);
    t[team * 4 + 3] = measure(strm, team, xp, n, loomMul);
  }
  float dPool = largestDifference(static_cast<float *>(m.get_data_handle()),
                                  static_cast<float *>(m2.get_data_handle()),
                                  s.c);
  float dMul = largestDifference(static_cast<float *>(y.get_data_handle()),
                                 static_cast<float *>(y2.get_data_handle()), n);
  std::printf("| 1x%lldx%lldx%lld | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | "
              "%.1f / %.1f | %.1e %.1e |\n",
              (long long)s.c, (long long)s.h, (long long)s.w, t[0], t[1],
              t[4], t[5], t[2], t[3], t[6], t[7], dPool, dMul);
  std::fflush(stdout);
}

/// A --shape value CxHxW.
std::optional<Shape> parseShape(llvm::StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, 'x', 3, 3);
  if (!f || (*f)[0] < 1 || (*f)[1] < 1 || (*f)[2] < 1)
    return std::nullopt;
  return Shape{(*f)[0], (*f)[1], (*f)[2]};
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(seCat);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-squeeze-excite: a squeeze-and-excitation's global average "
      "pool and per-channel multiply on NHWC, oneDNN against libloomrt's "
      "kernels (microseconds, best of the runs)\n");
  std::vector<Shape> given = parseShapes<Shape>(
      shapeArgs, parseShape, "CxHxW (positive integers)");
  if (!cpu::hasSqueezeExciteKernels()) {
    llvm::errs() << "loom-bench-squeeze-excite: the instruction-set level in use (loom-run --cpu-info) has no squeeze-and-excitation kernels\n";
    return 1;
  }
  omp_set_num_threads(int(threadsArg));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("%u thread(s); us, oneDNN / Loom's kernel; cold: L2 flushed, "
              "team: source written by the team in halves first\n",
              unsigned(threadsArg));
  std::printf("| NHWC source | pool cold | pool team | multiply cold | "
              "multiply team | max diff pool, multiply |\n"
              "| --- | ---: | ---: | ---: | ---: | --- |\n");
  for (const Shape &s : shapesToMeasure(onlyGiven, builtInShapes(), given))
    measureShape(eng, strm, s);
  return 0;
}
