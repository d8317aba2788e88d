//===- BenchGemm.cpp - loom-bench-gemm: the GEMM micro-benchmark ----------===//
//
// Part of Loom. C = A x B in fp32 (M = N = K = --size), on --num-threads
// threads, side by side in one run: oneDNN's sgemm and OpenBLAS's sgemm
// called directly (the peers), and the artifact loom-compile makes with
// each --matmul-backend (onednn, openblas, codegen) run through libloomrt.
// Each row: median seconds of --repeat runs after one warm-up, GFLOP/s,
// the share of oneDNN's sgemm, and the largest difference from oneDNN's C.
// Prints a table; --json writes it.
//
//===----------------------------------------------------------------------===//

#include "loom-c/Runtime.h"

#include <cblas.h>
#include <dnnl.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

extern "C" void omp_set_num_threads(int n);

using namespace llvm;

static cl::OptionCategory gemmCat("loom-bench-gemm options");
static cl::opt<int64_t> gemmSize("size", cl::desc("M = N = K (default 2048)"),
                             cl::init(2048), cl::cat(gemmCat));
static cl::opt<unsigned> threads("num-threads",
                                 cl::desc("Threads of every row (default 2)"),
                                 cl::init(2), cl::cat(gemmCat));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Timed runs per row (default 5)"),
                                cl::init(5), cl::cat(gemmCat));
static cl::opt<std::string> binDir(
    "bin-dir", cl::desc("Where loom-compile is (default: beside this program)"),
    cl::cat(gemmCat));
static cl::opt<std::string> jsonFile("json", cl::desc("Write the rows as JSON"),
                                     cl::cat(gemmCat));

namespace {

struct Row {
  explicit Row(std::string name) : name(std::move(name)) {}
  std::string name;
  double seconds = 0;
  double maxDiff = 0;
  std::string error;
};

/// The median of `repeat` timed calls of \p fn after one untimed one.
double medianSeconds(const std::function<bool()> &fn) {
  fn();
  std::vector<double> times;
  for (unsigned i = 0; i < std::max(1u, repeat.getValue()); ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double maxDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

/// Compiles the GEMM with \p backend and runs it through libloomrt.
Row runArtifact(StringRef backend, StringRef dir, StringRef mlir,
                const std::vector<float> &a, const std::vector<float> &b,
                const std::vector<float> &reference) {
  Row row(("loom-compile --matmul-backend=" + backend).str());
  SmallString<256> compile(binDir);
  sys::path::append(compile, "loom-compile");
  SmallString<256> so(dir);
  sys::path::append(so, ("gemm-" + backend + ".so").str());
  std::string backendArg = ("--matmul-backend=" + backend).str();
  SmallVector<StringRef> args{compile, mlir, backendArg, "--no-source", "-o",
                              so};
  std::string message;
  if (sys::ExecuteAndWait(compile, args, std::nullopt, {}, 0, 0, &message)) {
    row.error = "loom-compile failed " + message;
    return row;
  }
  loom_model_options options{int(threads), nullptr, nullptr};
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  if (loom_model_load(so.c_str(), &options, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    row.error = loom_last_error();
    loom_model_free(model);
    return row;
  }
  std::vector<float> c(reference.size());
  const void *inputs[] = {a.data(), b.data()};
  void *outputs[] = {c.data()};
  row.seconds = medianSeconds(
      [&] { return loom_run(context, 0, inputs, outputs) == LOOM_OK; });
  if (loom_run(context, 0, inputs, outputs) != LOOM_OK)
    row.error = loom_last_error();
  row.maxDiff = maxDiff(c, reference);
  loom_context_free(context);
  loom_model_free(model);
  return row;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(gemmCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-gemm: fp32 GEMM through Loom's artifacts against oneDNN's "
      "and OpenBLAS's sgemm\n");
  if (binDir.empty())
    binDir = sys::path::parent_path(
                 sys::fs::getMainExecutable(argv[0], (void *)&main))
                 .str();
  int64_t n = gemmSize;
  std::vector<float> a(n * n), b(n * n), reference(n * n), c(n * n);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float &v : a)
    v = dist(rng);
  for (float &v : b)
    v = dist(rng);
  omp_set_num_threads(int(threads));
  openblas_set_num_threads(int(threads));

  std::vector<Row> rows;
  Row dnnl("oneDNN dnnl_sgemm (peer)");
  dnnl.seconds = medianSeconds([&] {
    return dnnl_sgemm('N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f,
                      reference.data(), n) == dnnl_success;
  });
  rows.push_back(dnnl);
  Row blas("OpenBLAS cblas_sgemm (peer)");
  blas.seconds = medianSeconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f,
                a.data(), n, b.data(), n, 0.f, c.data(), n);
    return true;
  });
  blas.maxDiff = maxDiff(c, reference);
  rows.push_back(blas);

  SmallString<128> dir;
  if (sys::fs::createUniqueDirectory("loom-bench-gemm", dir)) {
    errs() << "loom-bench-gemm: cannot create a temporary directory\n";
    return 1;
  }
  SmallString<128> mlir(dir);
  sys::path::append(mlir, "gemm.mlir");
  {
    std::error_code ec;
    raw_fd_ostream os(mlir, ec);
    std::string t = formatv("tensor<{0}x{0}xf32>", n).str();
    os << "func.func @main(%a: " << t << " {tg.name = \"a\"}, %b: " << t
       << " {tg.name = \"b\"}) -> (" << t << " {tg.name = \"c\"}) {\n"
       << "  %c = tg.matmul %a, %b : (" << t << ", " << t << ") -> " << t
       << "\n  return %c : " << t << "\n}\n";
  }
  for (StringRef backend : {"onednn", "openblas", "codegen"})
    rows.push_back(runArtifact(backend, dir, mlir, a, b, reference));
  sys::fs::remove_directories(dir);

  double flop = 2.0 * double(n) * double(n) * double(n);
  outs() << formatv("fp32 GEMM {0}x{0}x{0} on {1} thread(s), median of {2} "
                    "runs\n\n",
                    n, threads.getValue(), repeat.getValue());
  outs() << formatv("{0,-40} {1,10} {2,9} {3,10} {4,10}\n", "", "ms",
                    "GFLOP/s", "of oneDNN", "max |diff|");
  json::Array array;
  bool failed = false;
  for (const Row &r : rows) {
    if (!r.error.empty()) {
      outs() << formatv("{0,-40} failed: {1}\n", r.name, r.error);
      failed = true;
      continue;
    }
    double gflops = flop / r.seconds * 1e-9;
    double share = rows[0].seconds / r.seconds;
    outs() << formatv("{0,-40} {1,10:f2} {2,9:f1} {3,9:f1}% {4,10:e}\n",
                      r.name, r.seconds * 1e3, gflops, share * 100, r.maxDiff);
    array.push_back(json::Object{{"name", r.name},
                                 {"seconds", r.seconds},
                                 {"gflops", gflops},
                                 {"share_of_onednn_sgemm", share},
                                 {"max_diff", r.maxDiff}});
  }
  if (!jsonFile.empty()) {
    std::error_code ec;
    raw_fd_ostream os(jsonFile, ec);
    if (ec) {
      errs() << "loom-bench-gemm: cannot write " << jsonFile << "\n";
      return 1;
    }
    os << formatv("{0:2}", json::Value(std::move(array))) << "\n";
  }
  return failed ? 1 : 0;
}
