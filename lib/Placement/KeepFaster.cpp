//===- KeepFaster.cpp - Compile versions of a model, keep the fastest -----===//
//
// Part of Loom. See KeepFaster.h and docs/Compiler.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Placement/KeepFaster.h"
#include "loom/Support/Files.h"

#include "Probe.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Placement/Placement.h"
#include "loom/Target/Target.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::placement;

namespace {

/// The elements of an entry's tensor of dtype \p dtype held in \p bytes,
/// or nullopt for a dtype the end-to-end checks do not read.
std::optional<std::vector<double>> elementValues(StringRef dtype,
                                                 ArrayRef<uint8_t> bytes) {
  auto load = [&](auto zero) {
    using T = decltype(zero);
    std::vector<double> values(bytes.size() / sizeof(T));
    for (size_t i = 0; i < values.size(); ++i) {
      T x;
      std::memcpy(&x, bytes.data() + i * sizeof(T), sizeof(T));
      values[i] = double(x);
    }
    return values;
  };
  if (dtype == "f32")
    return load(float());
  if (dtype == "f64")
    return load(double());
  if (dtype == "i64")
    return load(int64_t());
  if (dtype == "i32")
    return load(int32_t());
  if (dtype == "i1" || dtype == "i8")
    return load(int8_t());
  return std::nullopt;
}

/// The largest difference of \p got from \p want, relative to max(1,
/// largest finite |want|) (\p exact: infinity where any element differs);
/// infinity where one is NaN and the other not, or the sizes differ.
double scaledError(ArrayRef<double> want, ArrayRef<double> got, bool exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (want.size() != got.size())
    return kInf;
  double scale = 1, worst = 0;
  for (double w : want)
    if (std::isfinite(w))
      scale = std::max(scale, std::fabs(w));
  for (auto [w, g] : llvm::zip(want, got)) {
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g))
        return kInf;
      continue;
    }
    if (w == g)
      continue; // equal infinities too
    if (exact || std::isinf(w) || std::isinf(g))
      return kInf;
    worst = std::max(worst, std::fabs(w - g) / scale);
  }
  return worst;
}

/// The difference of output \p index of \p entry, \p got, from the
/// baseline's \p want (same dtype): scaledError of f32 outputs; other
/// types must be equal bytes (else infinity).
double outputError(const loom_model *model, int64_t entry, int64_t index,
                   ArrayRef<uint8_t> want, ArrayRef<uint8_t> got) {
  loom_tensor_desc desc;
  if (want.size() != got.size() ||
      loom_entry_output(model, entry, index, &desc) != LOOM_OK)
    return std::numeric_limits<double>::infinity();
  if (StringRef(desc.dtype) != "f32")
    return std::memcmp(want.data(), got.data(), want.size()) == 0
               ? 0.0
               : std::numeric_limits<double>::infinity();
  return scaledError(*elementValues("f32", want), *elementValues("f32", got),
                     /*exact=*/false);
}

/// Per entry, per output: its elements.
using EntryValues = std::vector<std::vector<double>>;

/// The interpreter's outputs on the graph as given (\p given: the baseline
/// version, which no pass has changed), per entry of \p model, on the
/// inputs \p inputs the artifacts ran on, with the weights the graph reads
/// from \p weights (written to a temporary file for the interpreter);
/// nullopt with \p why set where it cannot interpret them.
std::optional<std::vector<EntryValues>>
interpretGiven(ModuleOp given, const safetensors::File *weights,
               const loom_model *model,
               ArrayRef<std::vector<std::vector<uint8_t>>> inputs,
               std::string &why) {
  ScopedDiagnosticHandler capture(given.getContext(), [&](Diagnostic &d) {
    if (why.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      why = d.str();
    return success();
  });
  SmallString<128> path;
  std::optional<llvm::FileRemover> remove;
  if (weights && tg::usesWeights(given)) {
    safetensors::Writer writer;
    llvm::StringSet<> seen;
    given.walk([&](tg::WeightOp op) {
      const safetensors::TensorInfo *info = weights->lookup(op.getName());
      if (info && seen.insert(op.getName()).second)
        llvm::consumeError(writer.addRaw(info->name, info->dtype, info->shape,
                                         weights->rawBytes(*info)));
    });
    if (llvm::sys::fs::createTemporaryFile("loom-given-weights",
                                           "safetensors", path)) {
      why = "cannot create a temporary file for the weights";
      return std::nullopt;
    }
    remove.emplace(path);
    if (llvm::Error err = writer.write(path)) {
      why = llvm::toString(std::move(err));
      return std::nullopt;
    }
  }
  interp::InterpreterOptions options;
  options.weightsFile = std::string(path);
  interp::Interpreter<interp::F32Domain> interpreter(given, options);
  std::vector<EntryValues> outputs;
  for (auto [e, entryInputs] : llvm::enumerate(inputs)) {
    const char *name = loom_model_entry_name(model, e);
    auto fn = given.lookupSymbol<func::FuncOp>(name ? name : "");
    if (!fn) {
      why = "the graph as given has no function of entry " + std::to_string(e);
      return std::nullopt;
    }
    std::vector<interp::Tensor<interp::F32Domain>> args;
    for (auto [i, bytes] : llvm::enumerate(entryInputs)) {
      loom_tensor_desc desc;
      loom_entry_input(model, e, i, &desc);
      std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
      // Inputs other than f32 are zeros (makeBuffers).
      std::vector<double> values =
          elementValues(desc.dtype, bytes)
              .value_or(std::vector<double>(interp::numElementsOf(shape)));
      values.resize(interp::numElementsOf(shape));
      args.push_back(
          interp::Tensor<interp::F32Domain>::fromDoubles(shape, values));
    }
    auto results = interpreter.run(fn, args);
    if (failed(results)) {
      if (why.empty())
        why = "the interpreter fails on @" + std::string(name);
      return std::nullopt;
    }
    EntryValues entry;
    for (auto &t : *results)
      entry.push_back(t.toDoubles());
    outputs.push_back(std::move(entry));
  }
  return outputs;
}

/// A temporary artifact path beside \p outputPath (so that the kept one is
/// renamed into place on the same file system).
std::string temporaryBeside(StringRef outputPath, StringRef version) {
  SmallString<256> model(outputPath);
  llvm::sys::path::replace_extension(model, "");
  std::string tag = version.str();
  llvm::replace(tag, ' ', '-');
  SmallString<256> path;
  if (llvm::sys::fs::createUniqueFile(model + "." + tag + "-%%%%%%.so", path))
    return "";
  return std::string(path);
}

/// Compiles \p version into \p path; the time it took, or nullopt.
std::optional<double> compileOne(const ModelVersion &version,
                                 const safetensors::File *weights,
                                 const compiler::CompileOptions &options,
                                 StringRef path) {
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> copy = version.module.clone();
  if (failed(compiler::compileToArtifact(*copy, weights, options, path)))
    return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// A hash of \p module printed without locations.
uint64_t textHash(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return llvm::xxh3_64bits(text);
}

/// Whether \p options write files beside the artifact or print while
/// compiling: then the trials are compiled without them and the winner
/// again with them.
bool writesMoreThanTheArtifact(const compiler::CompileOptions &options) {
  return options.weightsStorage == "external" || options.scheduleOut ||
         options.stepSourcesOut || !options.dumpKernelsDir.empty();
}

} // namespace

double placement::turnSeconds(double baselineCompileSeconds) {
  return std::clamp(0.5 * baselineCompileSeconds, kMinTurnSeconds,
                    kMaxTurnSeconds);
}

/// P(X >= k) for X ~ Binomial(n, 1/2): exact up to 64 trials, the normal
/// approximation (with continuity correction) beyond.
static double coinUpperTail(size_t n, size_t k) {
  if (k == 0)
    return 1;
  if (k > n)
    return 0;
  if (n > 64) {
    double z = (double(k) - 0.5 - 0.5 * double(n)) / (0.5 * std::sqrt(n));
    return 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  double ways = 1, tail = 0; // C(n, j)
  for (size_t j = 0; j <= n; ++j) {
    if (j >= k)
      tail += ways;
    ways = ways * double(n - j) / double(j + 1);
  }
  return std::ldexp(tail, -int(n));
}

TurnVerdict placement::turnVerdict(ArrayRef<double> baseline,
                                   ArrayRef<double> version) {
  size_t n = std::min(baseline.size(), version.size());
  if (n < kMinTurnRounds)
    return TurnVerdict::Undecided;
  size_t faster = 0;
  for (size_t r = 0; r < n; ++r)
    faster += version[r] < kMeasurableGain * baseline[r];
  if (coinUpperTail(n, faster) <= kTurnStopAlpha)
    return TurnVerdict::Faster;
  if (coinUpperTail(n, n - faster) <= kTurnStopAlpha)
    return TurnVerdict::NotFaster;
  return TurnVerdict::Undecided;
}

bool placement::turnsDecided(ArrayRef<std::vector<double>> times) {
  if (times.empty() || times.front().empty())
    return true;
  size_t faster = 0;
  for (const std::vector<double> &version : times.drop_front()) {
    if (version.size() < times.front().size())
      continue; // it failed to run
    switch (turnVerdict(times.front(), version)) {
    case TurnVerdict::Faster:
      ++faster;
      break;
    case TurnVerdict::NotFaster:
      break;
    case TurnVerdict::Undecided:
      return false;
    }
  }
  return faster <= 1;
}

llvm::json::Value KeepFasterResult::toJSON() const {
  llvm::json::Array list;
  for (const VersionTiming &v : versions) {
    llvm::json::Object o{{"name", v.name},
                         {"runs", int64_t(v.runs)},
                         {"compile_seconds", v.compileSeconds},
                         {"error", v.error}};
    if (v.cached)
      o["cached"] = true;
    o["given_error"] = v.givenError && std::isfinite(*v.givenError)
                           ? llvm::json::Value(*v.givenError)
                           : llvm::json::Value(nullptr);
    o["seconds"] = std::isinf(v.seconds) ? llvm::json::Value(nullptr)
                                         : llvm::json::Value(v.seconds);
    if (!v.note.empty())
      o["note"] = v.note;
    list.push_back(std::move(o));
  }
  llvm::json::Object whole{{"versions", std::move(list)},
                            {"kept", versions[kept].name},
                            {"runs_stopped", decidedEarly ? "decided"
                                                          : "at the budget"},
                            {"concurrent_compiles", concurrentCompiles},
                            {"compile_wall_seconds", compileWallSeconds}};
  if (!givenNote.empty())
    whole["given_note"] = givenNote;
  return whole;
}

/// Whether versions may compile on threads sharing the MLIR context (after
/// compiler::prepareConcurrentCompiles): unless LOOM_CONCURRENT_COMPILES=0,
/// which compiles them one after the other.
static bool concurrentCompilesAllowed() {
  const char *allowed = std::getenv("LOOM_CONCURRENT_COMPILES");
  return !allowed || std::strcmp(allowed, "0") != 0;
}

std::unique_ptr<BackgroundCompile>
BackgroundCompile::start(ModuleOp module, const safetensors::File *weights,
                         const compiler::CompileOptions &options,
                         StringRef outputPath) {
  if (!concurrentCompilesAllowed() || options.formFragments ||
      options.timingOut || writesMoreThanTheArtifact(options) ||
      !options.target)
    return nullptr;
  auto target = target::TargetRegistry::builtin().create(
      options.target->spelling());
  if (!target) {
    llvm::consumeError(target.takeError());
    return nullptr;
  }
  compiler::prepareConcurrentCompiles(*module.getContext(), options);
  std::unique_ptr<BackgroundCompile> bg(new BackgroundCompile());
  bg->path = temporaryBeside(outputPath, "as written");
  if (bg->path.empty())
    return nullptr;
  bg->copy = module.clone();
  bg->options = options;
  bg->options.target = std::move(*target);
  bg->weights = weights;
  BackgroundCompile *self = bg.get();
  bg->thread = std::thread([self] {
    auto begin = std::chrono::steady_clock::now();
    if (succeeded(compiler::compileToArtifact(*self->copy, self->weights,
                                              self->options, self->path)))
      self->seconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - begin)
                          .count();
  });
  return bg;
}

BackgroundCompile::~BackgroundCompile() {
  if (thread.joinable())
    thread.join();
  if (!path.empty())
    llvm::sys::fs::remove(path);
}

std::optional<double> BackgroundCompile::wait() {
  if (thread.joinable())
    thread.join();
  return seconds;
}

std::string BackgroundCompile::take() {
  wait();
  return std::exchange(path, std::string());
}

namespace {

/// One comparison: the versions' artifacts in temporaries (removed at the
/// end but for the one moved into place), loaded while they are timed.
class Comparison {
public:
  Comparison(ArrayRef<ModelVersion> versions, const safetensors::File *weights,
             const compiler::CompileOptions &compile,
             const KeepFasterOptions &options)
      : versions(versions), weights(weights), options(options),
        trialOptions(compile) {
    if (writesMoreThanTheArtifact(compile)) {
      trialOptions.weightsStorage = "embedded";
      trialOptions.scheduleOut = nullptr;
      trialOptions.stepSourcesOut = nullptr;
      trialOptions.dumpKernelsDir.clear();
    }
  }
  ~Comparison() {
    loaded.clear();
    for (const std::string &p : paths)
      if (!p.empty())
        llvm::sys::fs::remove(p);
  }

  /// Compiles and loads every version; fails when the baseline does not.
  LogicalResult compileAll(StringRef outputPath);
  /// Compiles the versions \p toCompile; each one's compile time, or
  /// nullopt where it failed (diagnosed).
  std::vector<std::optional<double>> compileVersions(ArrayRef<size_t> toCompile);
  /// Times what loaded in turn (or takes the cached times) and compares
  /// the outputs with the baseline's.
  LogicalResult measure();
  /// Compares every version's outputs in \p times (of \p artifacts) with
  /// the interpreter's on the graph as given.
  void compareWithGiven(ArrayRef<TimedArtifact> times,
                        ArrayRef<ProbeArtifact *> artifacts);
  /// Picks the version to keep.
  void choose();
  /// Puts the kept version at \p outputPath.
  LogicalResult keep(const compiler::CompileOptions &compile,
                     StringRef outputPath);

  KeepFasterResult result;

private:
  ArrayRef<ModelVersion> versions;
  const safetensors::File *weights;
  const KeepFasterOptions &options;
  compiler::CompileOptions trialOptions;
  std::vector<std::string> paths;
  /// The loaded artifacts and the versions they are.
  std::vector<std::unique_ptr<ProbeArtifact>> loaded;
  std::vector<VersionTiming *> timed;

  InFlightDiagnostic error() { return versions.front().module.emitError(); }
};

LogicalResult Comparison::compileAll(StringRef outputPath) {
  size_t n = versions.size();
  result.versions.resize(n);
  std::vector<size_t> toCompile;
  uint64_t baseline = textHash(versions.front().module);
  for (auto [i, version] : llvm::enumerate(versions)) {
    result.versions[i].name = version.name;
    paths.emplace_back();
    if (i > 0 && textHash(version.module) == baseline) {
      result.versions[i].note = "the same graph as the " + versions[0].name;
      continue;
    }
    if (i == 0 && options.baseline)
      continue; // being compiled already
    paths.back() = temporaryBeside(outputPath, version.name);
    if (paths.back().empty())
      return error() << "cannot create a temporary file beside "
                     << outputPath;
    toCompile.push_back(i);
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::optional<double>> took = compileVersions(toCompile);
  if (options.baseline) {
    // Waited for and loaded here, not on a thread of its own while the
    // others compile: loading sets the runtime's thread counts for the
    // loading thread (omp_set_num_threads is per thread), so an artifact
    // loaded on another thread than the runs in turn could run with other
    // threads than asked.
    mlir::TimingScope waiting(
        options.timing.nest("wait for the graph as written"));
    took[0] = options.baseline->wait();
    paths[0] = options.baseline->take();
    toCompile.insert(toCompile.begin(), 0);
    result.concurrentCompiles = true;
  }
  result.compileWallSeconds = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
  if (options.progress && result.concurrentCompiles)
    *options.progress << llvm::format(
        "loom-compile: %zu versions compiled concurrently%s in %.1f s\n",
        toCompile.size(),
        options.baseline ? " (the graph as written during the search)" : "",
        result.compileWallSeconds);
  mlir::TimingScope loading(options.timing.nest("load the artifacts"));
  for (size_t i : toCompile) {
    VersionTiming &timing = result.versions[i];
    if (!took[i]) {
      if (i == 0)
        return failure(); // diagnosed by the compiler
      timing.note = "does not compile";
    } else {
      timing.compileSeconds = *took[i];
      auto artifact = std::make_unique<ProbeArtifact>();
      std::string why;
      if (loadInto(*artifact, paths[i], options.threads, why)) {
        loaded.push_back(std::move(artifact));
        timed.push_back(&timing);
      } else if (i == 0) {
        return error() << why;
      } else {
        timing.note = why;
      }
    }
    if (options.progress)
      *options.progress << llvm::format(
          "loom-compile: %s compiled in %.1f s%s\n",
          versions[i].name.c_str(), timing.compileSeconds,
          timing.note.empty() ? "" : (": " + timing.note).c_str());
  }
  return success();
}

std::vector<std::optional<double>>
Comparison::compileVersions(ArrayRef<size_t> toCompile) {
  std::vector<std::optional<double>> took(versions.size());
  // Concurrently where nothing is measured while compiling (the placement
  // search times fragments) and no stage timings are printed: each version
  // on a thread with a target of its own (an LLVM TargetMachine emits one
  // object at a time: shared, the two objects' symbols collide).
  std::vector<compiler::CompileOptions> own(versions.size(), trialOptions);
  for (size_t i : toCompile)
    own[i].timing = options.timing.nest("compile: " + versions[i].name);
  bool concurrent = toCompile.size() > 1 && !trialOptions.formFragments &&
                    !trialOptions.timingOut && options.concurrentCompiles &&
                    concurrentCompilesAllowed();
  for (size_t i : toCompile) {
    if (!concurrent || !trialOptions.target)
      break;
    auto target = target::TargetRegistry::builtin().create(
        trialOptions.target->spelling());
    if (!target) {
      llvm::consumeError(target.takeError());
      concurrent = false;
      break;
    }
    own[i].target = std::move(*target);
  }
  if (!concurrent) {
    for (size_t i : toCompile)
      took[i] = compileOne(versions[i], weights, own[i], paths[i]);
    return took;
  }
  result.concurrentCompiles = true;
  compiler::prepareConcurrentCompiles(*versions.front().module.getContext(),
                                      trialOptions);
  std::vector<std::thread> threads;
  for (size_t i : toCompile)
    threads.emplace_back([&, i] {
      took[i] = compileOne(versions[i], weights, own[i], paths[i]);
    });
  for (std::thread &t : threads)
    t.join();
  return took;
}

LogicalResult Comparison::measure() {
  if (timed.size() < 2)
    return success(); // nothing to compare the baseline with
  std::optional<cost::CostDatabase> db;
  if (!options.db.empty()) {
    auto opened = cost::CostDatabase::load(options.db);
    if (!opened)
      return error() << llvm::toString(opened.takeError());
    db.emplace(std::move(*opened));
  }
  auto keyOf = [&](VersionTiming *t) {
    const ModelVersion &v = versions[t - result.versions.data()];
    return llvm::formatv("{0}|superopt|{1}|{2:x}|{3:x}",
                         machineKey(options.threads), v.name,
                         textHash(versions.front().module), textHash(v.module))
        .str();
  };
  std::vector<std::optional<double>> cached;
  for (VersionTiming *t : timed)
    cached.push_back(db ? db->lookup(keyOf(t)) : std::nullopt);
  bool allCached = llvm::all_of(
      cached, [](const std::optional<double> &c) { return c.has_value(); });
  std::vector<ProbeArtifact *> artifacts;
  for (auto &a : loaded)
    artifacts.push_back(a.get());
  PhaseTimer runsTimer = options.timing.nest("runs in turn");
  mlir::TimingScope runs(runsTimer);
  TurnPolicy policy{kMinTurnRounds, 4000,
                    turnSeconds(timed.front()->compileSeconds), turnsDecided};
  if (allCached)
    policy = TurnPolicy{1, 1, 0.0};
  policy.timing = runsTimer;
  std::vector<TimedArtifact> times =
      timeInTurn(artifacts, /*shareInputs=*/true, policy);
  const TimedArtifact &base = times.front();
  result.decidedEarly = base.decided;
  for (auto [timing, measured, artifact, c] :
       llvm::zip(timed, times, artifacts, cached)) {
    if (!measured.median || !base.median) {
      timing->note = std::string("does not run: ") + loom_last_error();
      continue;
    }
    timing->seconds = allCached ? *c : *measured.median;
    timing->runs = allCached ? 0 : measured.runs;
    timing->cached = allCached;
    if (db && !allCached)
      db->record(keyOf(timing), *measured.median);
    for (auto [e, entry] : llvm::enumerate(measured.outputs))
      for (auto [k, bytes] : llvm::enumerate(entry))
        timing->error = std::max(
            timing->error, outputError(artifact->model, e, k,
                                       base.outputs[e][k], bytes));
    if (timing->error > options.tolerance)
      timing->note = llvm::formatv("outputs differ from the {0}'s by {1:e}",
                                   result.versions.front().name,
                                   timing->error);
  }
  compareWithGiven(times, artifacts);
  if (db)
    if (llvm::Error err = db->save())
      return error() << llvm::toString(std::move(err));
  return success();
}

void Comparison::compareWithGiven(ArrayRef<TimedArtifact> times,
                                  ArrayRef<ProbeArtifact *> artifacts) {
  std::optional<std::vector<EntryValues>> want =
      interpretGiven(versions.front().module, weights, artifacts.front()->model,
                     times.front().inputs, result.givenNote);
  if (!want) {
    result.givenNote = "the graph as given was not interpreted: " +
                       result.givenNote;
    emitWarning(versions.front().module.getLoc(), "loom-compile: ")
        << result.givenNote
        << "; the versions are compared with the graph as written only";
    return;
  }
  for (auto [timing, measured, artifact] : llvm::zip(timed, times, artifacts)) {
    if (!measured.median)
      continue;
    double worst = 0;
    for (auto [e, entry] : llvm::enumerate(measured.outputs))
      for (auto [k, bytes] : llvm::enumerate(entry)) {
        loom_tensor_desc desc;
        if (loom_entry_output_length(artifact->model, e, k, nullptr) >= 0 ||
            loom_entry_output(artifact->model, e, k, &desc) != LOOM_OK)
          continue; // padded to its bound: its length is compared
        if (std::optional<std::vector<double>> got =
                elementValues(desc.dtype, bytes))
          worst = std::max(worst, scaledError((*want)[e][k], *got,
                                              desc.dtype[0] != 'f'));
      }
    timing->givenError = worst;
    if (!(worst <= options.tolerance) && timing->note.empty() &&
        timing != timed.front())
      timing->note = llvm::formatv("outputs differ from the graph as given's "
                                   "by {0:e}",
                                   worst);
  }
  const VersionTiming &base = *timed.front();
  if (base.givenError && !(*base.givenError <= options.tolerance))
    emitWarning(versions.front().module.getLoc(), "loom-compile: '")
        << base.name << "', compiled, computes another answer than the "
        << "graph as given (the interpreter's outputs on the same inputs "
        << "differ by "
        << llvm::formatv("{0:e1}, above {1:e1}", *base.givenError,
                         options.tolerance)
               .str()
        << "): a compile-time pass, the generated code or the runtime "
           "changes it (loom-run --check on the artifact shows it)";
}

void Comparison::choose() {
  const VersionTiming &base = result.versions.front();
  for (auto [i, v] : llvm::enumerate(result.versions))
    if (i > 0 && v.note.empty() && base.note.empty() &&
        v.seconds < result.versions[result.kept].seconds &&
        v.seconds < kMeasurableGain * base.seconds)
      result.kept = i;
}

LogicalResult Comparison::keep(const compiler::CompileOptions &compile,
                               StringRef outputPath) {
  // Release the artifacts before moving one of them.
  loaded.clear();
  if (writesMoreThanTheArtifact(compile))
    return success(compileOne(versions[result.kept], weights, compile,
                              outputPath)
                       .has_value());
  std::string &winner = paths[result.kept];
  if (std::error_code ec = moveIntoPlace(winner, outputPath))
    return error() << "cannot write " << outputPath << ": " << ec.message();
  winner.clear();
  return success();
}

} // namespace

FailureOr<KeepFasterResult> placement::compileKeepFaster(
    ArrayRef<ModelVersion> versions, const safetensors::File *weights,
    const compiler::CompileOptions &compile, StringRef outputPath,
    const KeepFasterOptions &options) {
  assert(!versions.empty() && "a baseline to compare with");
  Comparison comparison(versions, weights, compile, options);
  if (failed(comparison.compileAll(outputPath)) ||
      failed(comparison.measure()))
    return failure();
  comparison.choose();
  if (failed(comparison.keep(compile, outputPath)))
    return failure();
  return std::move(comparison.result);
}
