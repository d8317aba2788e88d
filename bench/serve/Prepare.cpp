//===- Prepare.cpp - The artifact loom-bench-serve serves -----------------===//
//
// Part of Loom. See Prepare.h.
//
//===----------------------------------------------------------------------===//

#include "Prepare.h"

#include "BenchSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace llvm;

namespace loom::bench {
namespace {

std::string tensorType(int64_t rows, int64_t cols) {
  return formatv("tensor<{0}x{1}xf32>", rows, cols).str();
}

/// One function of the module: x [batch, dims[0]] -> y [batch, dims.back()].
void writeFunction(raw_ostream &os, ArrayRef<int64_t> dims, int64_t batch) {
  os << formatv("  func.func @b{0}(%x: {1} {{tg.name = \"x\"}) -> ({2} "
                "{{tg.name = \"y\"}) {{\n",
                batch, tensorType(batch, dims.front()),
                tensorType(batch, dims.back()));
  std::string in = "%x";
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    std::string w = tensorType(dims[l], dims[l + 1]);
    std::string b = formatv("tensor<{0}xf32>", dims[l + 1]).str();
    std::string h = tensorType(batch, dims[l + 1]);
    std::string inType = tensorType(batch, dims[l]);
    os << formatv("    %w{0} = tg.weight \"fc{0}.weight\" : {1}\n", l, w);
    os << formatv("    %b{0} = tg.weight \"fc{0}.bias\" : {1}\n", l, b);
    os << formatv("    %m{0} = tg.matmul {1}, %w{0} : ({2}, {3}) -> {4}\n", l,
                  in, inType, w, h);
    os << formatv("    %a{0} = tg.add %m{0}, %b{0} : ({1}, {2}) -> {1}\n", l, h,
                  b);
    in = formatv("%a{0}", l).str();
    if (l + 2 < dims.size()) {
      os << formatv("    %h{0} = tg.relu %a{0} : {1}\n", l, h);
      in = formatv("%h{0}", l).str();
    }
  }
  os << "    return " << in << " : " << tensorType(batch, dims.back())
     << "\n  }\n";
}

} // namespace

/// fc{i}.weight uniform in +-1/sqrt(fan-in), fc{i}.bias in +-0.1.
Error writeMlpWeights(ArrayRef<int64_t> dims, unsigned seed, StringRef path) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double bound) {
    return (double(rng() >> 11) / double(1ull << 53) * 2 - 1) * bound;
  };
  RunTensors tensors;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    RunTensor w{safetensors::DType::F32, {dims[l], dims[l + 1]}, {}};
    double bound = 1 / std::sqrt(double(dims[l]));
    for (int64_t i = 0; i < dims[l] * dims[l + 1]; ++i)
      w.values.push_back(uniform(bound));
    RunTensor b{safetensors::DType::F32, {dims[l + 1]}, {}};
    for (int64_t i = 0; i < dims[l + 1]; ++i)
      b.values.push_back(uniform(0.1));
    tensors["fc" + std::to_string(l) + ".weight"] = std::move(w);
    tensors["fc" + std::to_string(l) + ".bias"] = std::move(b);
  }
  return writeTensors(tensors, path);
}

namespace {

std::string joined(ArrayRef<int64_t> values, StringRef separator) {
  std::string s;
  for (int64_t v : values)
    s += (s.empty() ? "" : separator.str()) + std::to_string(v);
  return s;
}

} // namespace

std::string mlpModule(ArrayRef<int64_t> dims, ArrayRef<int64_t> batchSizes,
                      StringRef weightsFile) {
  std::string text;
  raw_string_ostream os(text);
  os << "// loom-bench-serve's bundled MLP " << joined(dims, "-")
     << " (relu between layers) at batch sizes " << joined(batchSizes, ", ")
     << ":\n// one entry per batch size, the batch range loom-serve reads.\n";
  os << "module attributes {tg.weights = \"" << weightsFile << "\"} {\n";
  for (int64_t b : batchSizes)
    writeFunction(os, dims, b);
  os << "}\n";
  return text;
}

Error writeMlp(const ServeOptions &o, ArrayRef<int64_t> batchSizes,
               StringRef mlir, StringRef weights) {
  if (Error e = writeMlpWeights(o.mlpDims, o.seed, weights))
    return e;
  std::error_code ec;
  raw_fd_ostream out(mlir, ec);
  if (ec)
    return createStringError("cannot write " + mlir + ": " + ec.message());
  out << mlpModule(o.mlpDims, batchSizes, sys::path::filename(weights));
  return Error::success();
}

std::string mlpDescription(ArrayRef<int64_t> dims) {
  return "mlp " + joined(dims, "-");
}

Expected<PreparedModel> prepareModel(const ServeOptions &o, StringRef workDir) {
  PreparedModel m;
  if (!o.modelFile.empty()) {
    m.artifact = o.modelFile;
    m.description = o.modelFile;
    return m;
  }
  m.description = mlpDescription(o.mlpDims) + ", batch sizes " +
                  joined(o.batchSizes, " ");
  std::string mlir = pathIn(workDir, "mlp.mlir");
  m.artifact = pathIn(workDir, "mlp.so");
  if (Error e = writeMlp(o, o.batchSizes, mlir,
                         pathIn(workDir, "mlp.safetensors")))
    return std::move(e);
  // Nothing in an MLP for the superoptimiser to rewrite: compile it as
  // written (the search would only time the same graph).
  ProcessResult r = runProcess(
      o.compileBin, {mlir, "-o", m.artifact, "--superopt=none"}, 3600);
  if (!r.succeeded())
    return createStringError("loom-compile " + mlir + ": " + r.summary());
  m.compileSeconds = r.seconds;
  return m;
}

} // namespace loom::bench
