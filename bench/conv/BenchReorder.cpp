//===- BenchReorder.cpp - Layout reorders, oneDNN vs Loom's transposes ----===//
//
// Part of Loom. loom-bench-reorder: an activation's reorder between NCHW
// and NHWC, both ways (and NCHW or NHWC <-> nChw16c where C is a multiple
// of 16),
// as oneDNN 2.6's reorder primitive (what libloomrt ran before) and as
// libloomrt's transposePlanes (lib/Runtime/CPU/Kernels/Transpose.cpp, compiled in),
// the measurement behind docs/Runtime.md "Layout reorders". Two starting
// states a run: "cold" (L2 flushed) and "warm" (the same reorder just ran:
// the source in cache, as a model's input is when its stem reads it).
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"
#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>

using namespace loom;
using namespace loom::convbench;
namespace cpu = loom::rt::cpu;
using dnnl::memory;

namespace {

llvm::cl::OptionCategory reorderCat("loom-bench-reorder options");
llvm::cl::list<std::string>
    shapeArgs("shape", llvm::cl::desc("NxCxHxW to measure (repeatable)"),
              llvm::cl::cat(reorderCat));
llvm::cl::opt<bool> onlyGiven("only",
                              llvm::cl::desc("Only the --shape values"),
                              llvm::cl::cat(reorderCat));
llvm::cl::opt<unsigned> threadsArg("num-threads",
                                   llvm::cl::desc("Team size (default 2)"),
                                   llvm::cl::init(2),
                                   llvm::cl::cat(reorderCat));
llvm::cl::opt<unsigned> repeatArg("repeat",
                                  llvm::cl::desc("Runs a cell at most"),
                                  llvm::cl::init(300),
                                  llvm::cl::cat(reorderCat));
llvm::cl::opt<double> budgetArg("budget",
                                llvm::cl::desc("Seconds a cell at most"),
                                llvm::cl::init(0.3),
                                llvm::cl::cat(reorderCat));

struct Shape {
  int64_t n, c, h, w;
};

/// CNN inputs (RGB images at 224, batch 2, 299) and activations at a
/// model's end and middle (MNASNet's last convolution; ResNet-50's
/// Winograd steps on its first three stages).
std::vector<Shape> builtInShapes() {
  return {{1, 3, 224, 224}, {2, 3, 224, 224}, {1, 3, 299, 299},
          {1, 1280, 7, 7},  {1, 64, 56, 56},  {1, 128, 28, 28},
          {1, 256, 14, 14}, {1, 32, 112, 112}, {2, 2048, 7, 7}};
}

/// One direction of a shape: oneDNN's reorder and the transposes.
struct Direction {
  const char *name;
  memory::format_tag from, to;
};

/// Best microseconds of \p body, each run cold (L2 flushed) or warm.
template <typename Body>
double measure(dnnl::stream &strm, bool warm, Body &&body) {
  std::vector<double> times;
  body();
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeatArg, budgetArg, start); ++i)
    times.push_back(timeRun(strm, warm, body) * 1000);
  return best(times);
}

/// The transposes of \p d on shape \p s (as libloomrt's layoutTranspose
/// makes them).
cpu::TransposeShape transposeOf(const Shape &s, const Direction &d) {
  using tag = memory::format_tag;
  int64_t pixels = s.h * s.w;
  if (d.from == tag::nchw && d.to == tag::nhwc)
    return {s.n, s.c, pixels};
  if (d.from == tag::nhwc && d.to == tag::nchw)
    return {s.n, pixels, s.c};
  if (d.from == tag::nChw16c && d.to == tag::nhwc)
    return {s.n, s.c / 16, pixels, 16};
  if (d.from == tag::nhwc && d.to == tag::nChw16c)
    return {s.n, pixels, s.c / 16, 16};
  if (d.to == tag::nChw16c)
    return {s.n * s.c / 16, 16, pixels};
  return {s.n * s.c / 16, pixels, 16};
}

void measureDirection(dnnl::engine &eng, dnnl::stream &strm, const Shape &s,
                      const Direction &d) {
  memory::dims dims = {s.n, s.c, s.h, s.w};
  memory::desc fromMd(dims, memory::data_type::f32, d.from);
  memory::desc toMd(dims, memory::data_type::f32, d.to);
  memory src(fromMd, eng), dst(toMd, eng), dst2(toMd, eng);
  fill(src, 2.0f);
  dnnl::reorder onednn(src, dst);
  cpu::TransposeShape t = transposeOf(s, d);
  auto *in = static_cast<const float *>(src.get_data_handle());
  auto *out = static_cast<float *>(dst2.get_data_handle());
  auto onednnRun = [&] { onednn.execute(strm, src, dst); };
  auto loomRun = [&] { cpu::transposePlanes(t, in, out); };
  double cold[2] = {measure(strm, false, onednnRun),
                    measure(strm, false, loomRun)};
  double warm[2] = {measure(strm, true, onednnRun),
                    measure(strm, true, loomRun)};
  bool same = std::memcmp(dst.get_data_handle(), out, toMd.get_size()) == 0;
  std::printf("| %lldx%lldx%lldx%lld | %s | %.1f / %.1f | %.1f / %.1f | %s |\n",
              (long long)s.n, (long long)s.c, (long long)s.h, (long long)s.w,
              d.name, cold[0], cold[1], warm[0], warm[1],
              same ? "same" : "DIFFERENT");
  std::fflush(stdout);
}

/// A --shape value NxCxHxW.
std::optional<Shape> parseShape(llvm::StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, 'x', 4, 4);
  if (!f || std::any_of(f->begin(), f->end(), [](int64_t v) { return v < 1; }))
    return std::nullopt;
  return Shape{(*f)[0], (*f)[1], (*f)[2], (*f)[3]};
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(reorderCat);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-reorder: an activation's reorder between NCHW and NHWC "
      "(and nChw16c), oneDNN's reorder against libloomrt's transposes "
      "(microseconds, best of the runs)\n");
  std::vector<Shape> given = parseShapes<Shape>(
      shapeArgs, parseShape, "NxCxHxW (positive integers)");
  if (!cpu::hasTransposeKernel()) {
    llvm::errs() << "loom-bench-reorder: the instruction-set level in use (loom-run --cpu-info) has no transpose kernel\n";
    return 1;
  }
  omp_set_num_threads(int(threadsArg));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = memory::format_tag;
  const Direction directions[] = {{"NCHW -> NHWC", tag::nchw, tag::nhwc},
                                  {"NHWC -> NCHW", tag::nhwc, tag::nchw},
                                  {"NCHW -> nChw16c", tag::nchw, tag::nChw16c},
                                  {"nChw16c -> NCHW", tag::nChw16c, tag::nchw},
                                  {"NHWC -> nChw16c", tag::nhwc, tag::nChw16c},
                                  {"nChw16c -> NHWC", tag::nChw16c, tag::nhwc}};
  std::printf("%u thread(s); us, oneDNN / Loom's transposes; cold: L2 "
              "flushed first, warm: the same reorder just ran\n",
              unsigned(threadsArg));
  std::printf("| shape | reorder | cold | warm | results |\n"
              "| --- | --- | ---: | ---: | --- |\n");
  for (const Shape &s : shapesToMeasure(onlyGiven, builtInShapes(), given))
    for (const Direction &d : directions)
      if (s.c % 16 == 0 || (d.from != tag::nChw16c && d.to != tag::nChw16c))
        measureDirection(eng, strm, s, d);
  return 0;
}
