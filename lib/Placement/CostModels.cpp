//===- CostModels.cpp - Analytic and measured costs of fragments ----------===//
//
// Part of Loom. See Placement.h.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom-c/Runtime.h"
#include "loom/Compiler/Compiler.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Placement/Placement.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::placement;

FragmentCostModel::~FragmentCostModel() = default;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// Analytic
//===----------------------------------------------------------------------===//

class AnalyticModel : public FragmentCostModel {
public:
  AnalyticModel(const BackendRegistry &backends, cost::RooflineTarget target)
      : backends(backends), target(std::move(target)) {}
  std::string name() const override { return "analytic:" + target.name; }
  LogicalResult estimate(ModuleOp,
                         MutableArrayRef<CostRequest> requests) override {
    for (CostRequest &r : requests) {
      const Backend *backend = backends.lookup(r.call->backend);
      r.seconds = backend ? backend->analyticSeconds(*r.call, target)
                          : std::numeric_limits<double>::infinity();
      r.source = "analytic";
    }
    return success();
  }

private:
  const BackendRegistry &backends;
  cost::RooflineTarget target;
};

//===----------------------------------------------------------------------===//
// Measured
//===----------------------------------------------------------------------===//

/// A probe artifact loaded with the runtime; frees everything it holds.
struct LoadedProbe {
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  ~LoadedProbe() {
    if (context)
      loom_context_free(context);
    if (model)
      loom_model_free(model);
  }
};

/// Seconds per run of \p entry: the median of timed runs after one warm-up
/// (at least 3, more while they take under 50 ms in all, at most 15; one
/// when a run takes over 0.2 s).
std::optional<double> timeEntry(LoadedProbe &probe, int64_t entry,
                                std::mt19937 &rng) {
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<const void *> in;
  std::vector<void *> out;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0, e = loom_entry_num_inputs(probe.model, entry); i < e;
       ++i) {
    loom_tensor_desc desc;
    if (loom_entry_input(probe.model, entry, i, &desc) != LOOM_OK)
      return std::nullopt;
    inputs.emplace_back(std::max<int64_t>(desc.bytes, 1), 0);
    if (StringRef(desc.dtype) == "f32") {
      auto *f = reinterpret_cast<float *>(inputs.back().data());
      for (int64_t k = 0; k < desc.bytes / 4; ++k)
        f[k] = dist(rng);
    }
    in.push_back(inputs.back().data());
  }
  for (int64_t i = 0, e = loom_entry_num_outputs(probe.model, entry); i < e;
       ++i) {
    loom_tensor_desc desc;
    if (loom_entry_output(probe.model, entry, i, &desc) != LOOM_OK)
      return std::nullopt;
    outputs.emplace_back(std::max<int64_t>(desc.bytes, 1), 0);
    out.push_back(outputs.back().data());
  }
  auto run = [&]() -> std::optional<double> {
    auto start = Clock::now();
    if (loom_run(probe.context, entry, in.data(), out.data()) != LOOM_OK)
      return std::nullopt;
    return secondsSince(start);
  };
  auto warm = run();
  if (!warm)
    return std::nullopt;
  std::vector<double> times;
  double spent = 0;
  while (times.size() < 15 &&
         (times.size() < 3 || spent < 0.05) &&
         !(times.size() >= 1 && *warm > 0.2)) {
    auto t = run();
    if (!t)
      return std::nullopt;
    times.push_back(*t);
    spent += *t;
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

class MeasuredModel : public FragmentCostModel {
public:
  MeasuredModel(const BackendRegistry &backends, cost::CostDatabase &db,
                MeasureOptions options,
                std::unique_ptr<FragmentCostModel> fallback)
      : backends(backends), db(db), options(options),
        fallback(std::move(fallback)), machine(machineKey(options.threads)) {}

  std::string name() const override { return "measured:" + machine; }
  LogicalResult estimate(ModuleOp module,
                         MutableArrayRef<CostRequest> requests) override;

private:
  const BackendRegistry &backends;
  cost::CostDatabase &db;
  MeasureOptions options;
  std::unique_ptr<FragmentCostModel> fallback;
  std::string machine;

  std::string dbKey(const CostRequest &r) const {
    return machine + "|" + tg::stringifyBackend(r.call->backend).str() + "|" +
           r.key;
  }
  /// Compiles and times \p batch (indices into \p requests); returns false
  /// when the probe artifact does not compile.
  bool measureBatch(ModuleOp module, MutableArrayRef<CostRequest> requests,
                    ArrayRef<size_t> batch, Clock::time_point start,
                    std::string &error);
};

LogicalResult MeasuredModel::estimate(ModuleOp module,
                                      MutableArrayRef<CostRequest> requests) {
  auto start = Clock::now();
  // Cached ones first; one probe per distinct key.
  llvm::StringMap<size_t> firstOfKey;
  std::vector<size_t> toMeasure;
  for (auto [i, r] : llvm::enumerate(requests)) {
    if (auto seconds = db.lookup(dbKey(r))) {
      r.seconds = *seconds;
      r.source = "cached";
    } else if (firstOfKey.try_emplace(dbKey(r), i).second) {
      toMeasure.push_back(i);
    }
  }
  if (options.progress)
    *options.progress << "tg-place-backends: " << requests.size()
                      << " fragments to price, "
                      << llvm::count_if(requests,
                                        [](const CostRequest &r) {
                                          return r.source == "cached";
                                        })
                      << " cached; measuring " << toMeasure.size()
                      << " distinct ones on " << machine << "\n";
  if (!toMeasure.empty()) {
    std::string error;
    if (!measureBatch(module, requests, toMeasure, start, error)) {
      // One fragment that does not compile must not hide the others' times:
      // measure one at a time, the failing ones cost infinity.
      if (options.progress)
        *options.progress << "tg-place-backends: the probe artifact does not "
                             "compile (" << error
                          << "); measuring one fragment at a time\n";
      for (size_t i : toMeasure) {
        std::string one;
        if (!measureBatch(module, requests, {i}, start, one)) {
          requests[i].seconds = std::numeric_limits<double>::infinity();
          requests[i].source = "does not compile: " + one;
        }
      }
    }
  }
  // Duplicates take their key's time; what the budget left gets analytic.
  SmallVector<size_t> unpriced;
  for (auto [i, r] : llvm::enumerate(requests)) {
    if (!r.source.empty())
      continue;
    const CostRequest &first = requests[firstOfKey.lookup(dbKey(r))];
    if (!first.source.empty() && first.source != "analytic (budget)") {
      r.seconds = first.seconds;
      r.source = first.source;
    } else {
      unpriced.push_back(i);
    }
  }
  if (!unpriced.empty()) {
    std::vector<CostRequest> rest;
    for (size_t i : unpriced)
      rest.push_back(requests[i]);
    if (failed(fallback->estimate(module, rest)))
      return failure();
    for (auto [i, r] : llvm::zip(unpriced, rest)) {
      requests[i].seconds = r.seconds;
      requests[i].source = "analytic (budget)";
    }
  }
  if (auto err = db.save())
    return module.emitError(llvm::toString(std::move(err)));
  if (options.progress)
    *options.progress << llvm::format(
        "tg-place-backends: costs ready in %.1f s\n", secondsSince(start));
  return success();
}

bool MeasuredModel::measureBatch(ModuleOp module,
                                 MutableArrayRef<CostRequest> requests,
                                 ArrayRef<size_t> batch,
                                 Clock::time_point start, std::string &error) {
  // The probes, built in the model's context and compiled in a fresh one
  // (a pass may not load the dialects code generation needs).
  OwningOpRef<ModuleOp> probes = ModuleOp::create(module.getLoc());
  safetensors::Writer writer;
  std::mt19937 rng(12345);
  for (auto [n, i] : llvm::enumerate(batch))
    buildProbe(*requests[i].call, *probes, ("p" + Twine(n)).str(),
               ("p" + Twine(n) + "_w").str(), &writer, &rng,
               /*formFragment=*/true, backends);
  std::string text;
  llvm::raw_string_ostream os(text);
  probes->print(os);

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<tg::TGDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
      diagnostics = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, &context);
  auto weights = safetensors::File::parse(llvm::MemoryBuffer::getMemBufferCopy(
      writer.serialize(), "probe weights"));
  if (!parsed || !weights) {
    if (!weights)
      llvm::consumeError(weights.takeError());
    error = "internal error: the probes do not parse back";
    return false;
  }
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("loom-probe", "so", path)) {
    error = "cannot create a temporary file";
    return false;
  }
  CompileOptions compile;
  compile.embedSource = false;
  compile.backends = &backends;
  if (options.progress)
    *options.progress << "tg-place-backends: compiling " << batch.size()
                      << " probe" << (batch.size() == 1 ? "" : "s") << "\n";
  bool compiled = succeeded(
      compileToArtifact(*parsed, &*weights, compile, path));
  if (!compiled) {
    llvm::sys::fs::remove(path);
    error = diagnostics.empty() ? "compilation failed" : diagnostics;
    return false;
  }
  LoadedProbe probe;
  loom_model_options load{options.threads, nullptr};
  bool loaded = loom_model_load(path.c_str(), &load, &probe.model) == LOOM_OK &&
                loom_context_create(probe.model, &probe.context) == LOOM_OK;
  llvm::sys::fs::remove(path);
  if (!loaded) {
    error = std::string("the probe artifact does not load: ") +
            loom_last_error();
    return false;
  }
  size_t reported = 0;
  for (auto [n, i] : llvm::enumerate(batch)) {
    CostRequest &r = requests[i];
    if (secondsSince(start) > options.budgetSeconds)
      break; // left for the fallback
    int64_t entry =
        loom_model_find_entry(probe.model, ("p" + Twine(n)).str().c_str());
    auto seconds = entry >= 0 ? timeEntry(probe, entry, rng) : std::nullopt;
    if (!seconds) {
      r.seconds = std::numeric_limits<double>::infinity();
      r.source = std::string("does not run: ") + loom_last_error();
      continue;
    }
    r.seconds = *seconds;
    r.source = "measured";
    db.record(dbKey(r), *seconds);
    if (options.progress && (n + 1) * 10 / batch.size() > reported) {
      reported = (n + 1) * 10 / batch.size();
      *options.progress << llvm::format(
          "tg-place-backends: timed %zu/%zu fragments (%.1f s)\n", n + 1,
          batch.size(), secondsSince(start));
    }
  }
  return true;
}

} // namespace

std::string placement::machineKey(int threads) {
  unsigned n = threads > 0 ? unsigned(threads)
                           : std::max(1u, std::thread::hardware_concurrency());
  return llvm::sys::getHostCPUName().str() + "/" + std::to_string(n) + "t";
}

std::unique_ptr<FragmentCostModel>
placement::createAnalyticCostModel(const BackendRegistry &backends,
                                   cost::RooflineTarget target) {
  return std::make_unique<AnalyticModel>(backends, std::move(target));
}

std::unique_ptr<FragmentCostModel> placement::createMeasuredCostModel(
    const BackendRegistry &backends, cost::CostDatabase &db,
    MeasureOptions options, std::unique_ptr<FragmentCostModel> fallback) {
  return std::make_unique<MeasuredModel>(backends, db, options,
                                         std::move(fallback));
}
