//===- Check.cpp - Every backend's fragments against the interpreter ------===//
//
// Part of Loom. See checkFragments in Placement.h.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom/Compiler/Fragments.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Placement/Placement.h"

#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::placement;

namespace {

std::vector<double> bufferValues(const std::vector<uint8_t> &bytes,
                                 StringRef dtype) {
  std::vector<double> values;
  if (dtype == "f32") {
    values.resize(bytes.size() / 4);
    for (size_t i = 0; i < values.size(); ++i) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      values[i] = f;
    }
  } else if (dtype == "i64") {
    values.resize(bytes.size() / 8);
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      values[i] = double(v);
    }
  }
  return values;
}

std::vector<int64_t> descShape(const loom_tensor_desc &d) {
  return std::vector<int64_t>(d.shape, d.shape + d.rank);
}

/// Runs entry \p n of \p probe and the interpreter on the same inputs.
void checkEntry(ProbeArtifact &probe, func::FuncOp fn,
                interp::Interpreter<interp::F32Domain> &interpreter,
                int64_t entry, std::mt19937 &rng, FragmentCheck &check) {
  auto buffers = makeBuffers(probe.model, entry, rng);
  if (!buffers ||
      loom_run(probe.context, entry, buffers->in.data(),
               buffers->out.data()) != LOOM_OK) {
    check.note = std::string("the compiled fragment does not run: ") +
                 loom_last_error();
    return;
  }
  std::vector<interp::Tensor<interp::F32Domain>> args;
  for (auto [i, bytes] : llvm::enumerate(buffers->inputs)) {
    loom_tensor_desc d;
    loom_entry_input(probe.model, entry, i, &d);
    args.push_back(interp::Tensor<interp::F32Domain>::fromDoubles(
        descShape(d), bufferValues(bytes, d.dtype)));
  }
  auto expected = interpreter.run(fn, args);
  if (failed(expected)) {
    check.note = "the interpreter fails on the fragment";
    return;
  }
  double worst = 0;
  for (auto [i, bytes] : llvm::enumerate(buffers->outputs)) {
    loom_tensor_desc d;
    loom_entry_output(probe.model, entry, i, &d);
    std::vector<double> got = bufferValues(bytes, d.dtype);
    std::vector<double> want = (*expected)[i].toDoubles();
    if (got.size() != want.size()) {
      check.note = "output " + std::to_string(i) + " has another size";
      return;
    }
    double scale = 1, diff = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      scale = std::max(scale, std::fabs(want[k]));
      double e = std::fabs(got[k] - want[k]);
      diff = std::isnan(e) ? INFINITY : std::max(diff, e);
    }
    worst = std::max(worst, diff / scale);
  }
  check.error = worst;
}

} // namespace

FailureOr<std::vector<FragmentCheck>>
placement::checkFragments(ModuleOp module, const BackendRegistry &registry,
                          double tolerance) {
  // Every candidate of every backend at every op, once per distinct key.
  std::vector<LibraryCall> calls;
  std::vector<FragmentCheck> checks;
  llvm::StringSet<> seen;
  auto available = [](Operation *op) { return !staysOutside(op); };
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    for (Operation &op : fn.getBody().front()) {
      if (staysOutside(&op))
        continue;
      for (const auto &backend : registry.all()) {
        SmallVector<LibraryCall> candidates;
        backend->candidates(&op, available, candidates);
        for (LibraryCall &call : candidates) {
          std::string key =
              backend->name().str() + "|" + fragmentKey(call);
          if (!seen.insert(key).second)
            continue;
          FragmentCheck check;
          check.backend = backend->name().str();
          check.pattern = call.pattern();
          llvm::raw_string_ostream os(check.where);
          op.getLoc().print(os);
          checks.push_back(std::move(check));
          calls.push_back(std::move(call));
        }
      }
    }
  }
  if (calls.empty())
    return checks;
  SmallVector<const LibraryCall *> pointers;
  for (const LibraryCall &call : calls)
    pointers.push_back(&call);
  std::string error;
  std::unique_ptr<ProbeArtifact> probe =
      compileProbes(pointers, module, registry, /*threads=*/0, error);
  if (!probe)
    return module.emitError("fragment check: the probes do not compile: ")
           << error;

  // The interpreter runs the probes as built (fragments interpret as their
  // bodies), with the same weights.
  DialectRegistry dialects;
  registerAllDialects(dialects);
  dialects.insert<tg::TGDialect>();
  MLIRContext context(dialects);
  OwningOpRef<ModuleOp> source =
      parseSourceString<ModuleOp>(probe->text, &context);
  SmallString<128> weightsPath;
  int fd;
  if (!source || llvm::sys::fs::createTemporaryFile("loom-check", "safetensors",
                                                    fd, weightsPath))
    return module.emitError("fragment check: cannot prepare the interpreter");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << probe->weights;
  }
  interp::InterpreterOptions options;
  options.weightsFile = std::string(weightsPath);
  interp::Interpreter<interp::F32Domain> interpreter(*source, options);
  std::mt19937 rng(2024);
  for (auto [n, check] : llvm::enumerate(checks)) {
    std::string name = "p" + std::to_string(n);
    int64_t entry = loom_model_find_entry(probe->model, name.c_str());
    auto fn = source->lookupSymbol<func::FuncOp>(name);
    if (entry < 0 || !fn) {
      check.note = "no entry " + name;
      continue;
    }
    checkEntry(*probe, fn, interpreter, entry, rng, check);
    check.passed = check.note.empty() && check.error <= tolerance;
  }
  llvm::sys::fs::remove(weightsPath);
  return checks;
}
