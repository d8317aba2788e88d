//===- CompiledRun.cpp - A conformance case through loom-compile ----------===//
//
// Part of Loom. See CompiledRun.h.
//
//===----------------------------------------------------------------------===//

#include "CompiledRun.h"

#include "loom-c/Runtime.h"
#include "loom/Compiler/Compiler.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Support/Bounded.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <optional>
#include <string>

using namespace loom;
using namespace loom::conformance;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error runtimeError(const char *what) {
  return fail(llvm::Twine(what) + ": " + loom_last_error());
}

/// \p v as a half-precision float of \p semantics, its bits.
uint16_t halfBits(double v, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(v);
  bool lost;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}

double fromHalfBits(uint16_t bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(semantics, llvm::APInt(16, bits));
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

const llvm::fltSemantics *halfSemantics(llvm::StringRef dtype) {
  if (dtype == "f16")
    return &llvm::APFloat::IEEEhalf();
  if (dtype == "bf16")
    return &llvm::APFloat::BFloat();
  return nullptr;
}

/// Writes \p values as \p dtype elements to \p out (the descriptor's bytes).
bool encode(llvm::StringRef dtype, const std::vector<double> &values,
            char *out) {
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    if (dtype == "f32") {
      float f = float(v);
      std::memcpy(out + 4 * i, &f, 4);
    } else if (dtype == "f64") {
      std::memcpy(out + 8 * i, &v, 8);
    } else if (dtype == "i64") {
      int64_t x = int64_t(v);
      std::memcpy(out + 8 * i, &x, 8);
    } else if (dtype == "i32") {
      int32_t x = int32_t(v);
      std::memcpy(out + 4 * i, &x, 4);
    } else if (dtype == "i1") {
      out[i] = v != 0;
    } else if (auto *semantics = halfSemantics(dtype)) {
      uint16_t bits = halfBits(v, *semantics);
      std::memcpy(out + 2 * i, &bits, 2);
    } else {
      return false;
    }
  }
  return true;
}

/// The \p n elements of \p dtype at \p in, as doubles.
std::optional<std::vector<double>> decode(llvm::StringRef dtype, const char *in,
                                          size_t n) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == "f32") {
      float f;
      std::memcpy(&f, in + 4 * i, 4);
      out[i] = f;
    } else if (dtype == "f64") {
      std::memcpy(&out[i], in + 8 * i, 8);
    } else if (dtype == "i64") {
      int64_t x;
      std::memcpy(&x, in + 8 * i, 8);
      out[i] = double(x);
    } else if (dtype == "i32") {
      int32_t x;
      std::memcpy(&x, in + 4 * i, 4);
      out[i] = double(x);
    } else if (dtype == "i1") {
      out[i] = in[i] != 0;
    } else if (auto *semantics = halfSemantics(dtype)) {
      uint16_t bits;
      std::memcpy(&bits, in + 2 * i, 2);
      out[i] = fromHalfBits(bits, *semantics);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

int64_t elements(const loom_tensor_desc &d) {
  int64_t n = 1;
  for (int64_t k = 0; k < d.rank; ++k)
    n *= d.shape[k];
  return n;
}

/// Runs entry 0 of the artifact at \p path on \p inputs.
llvm::Expected<std::vector<CompiledOutput>>
runArtifact(const std::string &path, const std::vector<ONNXTensor> &inputs) {
  loom_model_options options{1, nullptr, nullptr};
  loom_model *model = nullptr;
  if (loom_model_load(path.c_str(), &options, &model) != LOOM_OK)
    return runtimeError("load failed");
  llvm::scope_exit freeModel([&] { loom_model_free(model); });
  if (loom_entry_num_inputs(model, 0) != int64_t(inputs.size()))
    return fail("the artifact's entry takes " +
                llvm::Twine(loom_entry_num_inputs(model, 0)) +
                " inputs, the "
                "case gives " +
                llvm::Twine(inputs.size()));
  std::vector<std::vector<char>> inBytes, outBytes;
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    loom_tensor_desc d;
    if (loom_entry_input(model, 0, int64_t(i), &d) != LOOM_OK)
      return runtimeError("input");
    if (elements(d) != int64_t(inputs[i].values.size()))
      return fail("input " + llvm::Twine(i) + " has the wrong size");
    inBytes.emplace_back(size_t(std::max<int64_t>(d.bytes, 1)));
    if (!encode(d.dtype, inputs[i].values, inBytes.back().data()))
      return fail(llvm::Twine("input dtype ") + d.dtype + " not handled");
    inPtrs.push_back(inBytes.back().data());
  }
  int64_t numOutputs = loom_entry_num_outputs(model, 0);
  std::vector<loom_tensor_desc> outDescs(numOutputs);
  for (int64_t i = 0; i < numOutputs; ++i) {
    if (loom_entry_output(model, 0, i, &outDescs[i]) != LOOM_OK)
      return runtimeError("output");
    outBytes.emplace_back(size_t(std::max<int64_t>(outDescs[i].bytes, 1)));
    outPtrs.push_back(outBytes.back().data());
  }
  loom_context *context = nullptr;
  if (loom_context_create(model, &context) != LOOM_OK)
    return runtimeError("context");
  llvm::scope_exit freeContext([&] { loom_context_free(context); });
  if (loom_run(context, 0, inPtrs.data(), outPtrs.data()) != LOOM_OK)
    return runtimeError("run failed");
  std::vector<CompiledOutput> results;
  for (int64_t i = 0; i < numOutputs; ++i) {
    const loom_tensor_desc &d = outDescs[i];
    auto values = decode(d.dtype, outBytes[i].data(), size_t(elements(d)));
    if (!values)
      return fail(llvm::Twine("output dtype ") + d.dtype + " not handled");
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    int64_t dim = 0;
    if (loom_entry_output_length(model, 0, i, &dim) >= 0) {
      // The valid part of an output of data-dependent length.
      std::vector<int64_t> actual(d.rank);
      if (loom_output_shape(context, 0, i, actual.data()) != LOOM_OK)
        return runtimeError("output shape");
      std::vector<uint8_t> valid =
          validPart(reinterpret_cast<const uint8_t *>(values->data()), shape,
                    dim, actual[dim], sizeof(double));
      values->assign(reinterpret_cast<const double *>(valid.data()),
                     reinterpret_cast<const double *>(valid.data()) +
                         valid.size() / sizeof(double));
      shape = actual;
    }
    results.push_back({std::move(shape), std::move(*values)});
  }
  return results;
}

} // namespace

llvm::Expected<std::vector<CompiledOutput>>
conformance::compileAndRun(mlir::ModuleOp module, llvm::StringRef weightsPath,
                           const std::vector<ONNXTensor> &inputs,
                           llvm::StringRef backendSet,
                           llvm::StringRef targetSpelling) {
  std::optional<safetensors::File> weights;
  if (tg::usesWeights(module)) {
    auto file = tg::openWeights(module, weightsPath);
    if (failed(file))
      return fail("cannot open the weights");
    weights.emplace(std::move(*file));
  }
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("loom-conformance", dir))
    return fail("cannot create a temporary directory");
  llvm::scope_exit removeDir([&] { llvm::sys::fs::remove_directories(dir); });
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "case.so");
  compiler::CompileOptions options;
  options.source = compiler::EmbeddedSource::None;
  options.backends = backendSet.str();
  if (!targetSpelling.empty()) {
    // A target of its own: cases compile on several threads at once.
    auto target = target::TargetRegistry::builtin().create(targetSpelling);
    if (!target)
      return target.takeError();
    options.target = std::move(*target);
  }
  if (failed(compiler::compileToArtifact(module, weights ? &*weights : nullptr,
                                         options, path)))
    return fail("compile failed");
  return runArtifact(std::string(path), inputs);
}
