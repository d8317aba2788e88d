//===- BenchCPU.cpp - Loom against ONNX Runtime on the CPU ----------------===//
//
// Part of Loom. For every model, on the same .onnx file, the same inputs and
// the same number of threads, side by side in one run: Loom's reference
// interpreter (in this process), ONNX Runtime (CPU, through onnxruntime-node)
// and Loom's compiled path (loom-compile + loom-run; "n/a" while the build
// has no loom-compile): latencies, their ratios, peak memory, compile time
// and the largest difference between the outputs. Prints a table; writes
// JSON with --json. With --placement, a second table: the compiled path with
// each fixed backend set and placed by the search (Placement.h).
// docs/benchmarks/cpu.md records results.
//
//   loom-bench-cpu [--models a,b,model.onnx] [--num-threads 2] [--repeat 10]
//                  [--json out.json] [--quick] [--placement] [--list]
//
// Setup (ONNX Runtime and the real models, into the build tree):
//   LOOM_BUILD_DIR=build scripts/setup-bench.sh
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "Interpret.h"
#include "Models.h"
#include "PerOp.h"
#include "Peers.h"
#include "Placement.h"

#include "loom/Artifact/CpuIsa.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

using namespace llvm;
using namespace loom::bench;

namespace {

cl::OptionCategory benchCat("loom-bench-cpu options");

cl::opt<std::string> modelList(
    "models",
    cl::desc("Comma-separated models: names from --list, patterns of them "
             "('torch-*': the models exported from PyTorch), or paths of "
             ".onnx files (default: every model marked default in --list; "
             "with --quick, the quick subset)"),
    cl::init(""), cl::cat(benchCat));
cl::opt<std::string> isaCap(
    "isa",
    cl::desc("Cap Loom's instruction set for the compiled column (sets "
             "LOOM_CPU_ISA for loom-compile and loom-run: sse4.2, avx2 or "
             "avx512), so that an AVX-512 machine runs the paths an AVX2 one "
             "runs; ONNX Runtime has no such cap and runs as it is"),
    cl::init(""), cl::cat(benchCat));
cl::opt<std::string> cappedColumn(
    "capped",
    cl::desc("Also compile and run Loom capped at this instruction-set level "
             "(LOOM_CPU_ISA for that column's loom-compile and loom-run only: "
             "sse4.2 or avx2), timed in the same alternating --rounds as the "
             "others, and print a table of capped against uncapped latency "
             "per model, with their geometric mean and largest ratio"),
    cl::init(""), cl::cat(benchCat));
cl::opt<bool> listModels("list", cl::desc("List the models and exit"),
                         cl::cat(benchCat));
cl::opt<unsigned> threads("num-threads",
                          cl::desc("Threads of every column (interpreter "
                                   "kernels, ONNX Runtime intra-op, loom-run)"),
                          cl::init(2), cl::cat(benchCat));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Timed runs of ONNX Runtime and of the "
                                  "compiled model (default 10; 3 with --quick)"),
                         cl::init(0), cl::cat(benchCat));
cl::opt<unsigned> warmup("warmup",
                         cl::desc("Untimed runs of ONNX Runtime and of the "
                                  "compiled model first (default 3; 1 with "
                                  "--quick)"),
                         cl::init(~0u), cl::cat(benchCat));
cl::opt<unsigned> rounds(
    "rounds",
    cl::desc("Time ONNX Runtime and the compiled model this many times each, "
             "alternating, and report the median of each one's round "
             "medians (default 1): on a shared machine the load moves "
             "between two runs"),
    cl::init(1), cl::cat(benchCat));
cl::opt<unsigned> interpRepeat(
    "interp-repeat",
    cl::desc("Timed interpreter runs after its warm-up run (default 3; 1 "
             "with --quick)"),
    cl::init(0), cl::cat(benchCat));
cl::opt<double> interpBudget(
    "interp-budget",
    cl::desc("No further timed interpreter run once they took this many "
             "seconds (the interpreter is slow on big models)"),
    cl::init(20), cl::cat(benchCat));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the inputs"), cl::init(0),
                       cl::cat(benchCat));
cl::opt<std::string> jsonFile("json", cl::desc("Write the results as JSON"),
                              cl::init(""), cl::cat(benchCat));
cl::opt<bool> quick("quick",
                    cl::desc("Smoke test: the quick subset of models, fewer "
                             "runs"),
                    cl::cat(benchCat));
cl::opt<bool> noCompiled("no-compiled",
                         cl::desc("Do not measure the compiled path even "
                                  "when loom-compile is built"),
                         cl::cat(benchCat));
cl::opt<bool> placementColumns(
    "placement",
    cl::desc("Also compile and run each model with every fixed backend set "
             "(codegen, onednn, openblas) and placed by the search "
             "(--backends=auto, cold then warm), and print a second table"),
    cl::cat(benchCat));
cl::opt<bool> perOp(
    "per-op",
    cl::desc("Also profile the compiled model (LOOM_PROFILE) and ONNX "
             "Runtime (enableProfiling) and print, per model, each Loom step's "
             "time beside ONNX Runtime's time for the nodes it computes"),
    cl::cat(benchCat));
cl::opt<unsigned> perOpRows(
    "per-op-rows",
    cl::desc("Steps listed per model by --per-op: those where Loom loses "
             "most to ONNX Runtime (default 15)"),
    cl::init(15), cl::cat(benchCat));
cl::opt<bool> noOrt("no-ort", cl::desc("Do not run ONNX Runtime"),
                    cl::cat(benchCat));
cl::list<std::string>
    dims("dim",
         cl::desc("NAME=VALUE: size of a symbolic input dimension of the "
                  ".onnx files named in --models"),
         cl::cat(benchCat));
cl::opt<std::string> workDir("workdir",
                             cl::desc("Where inputs, outputs and artifacts "
                                      "go and stay (default: a temporary "
                                      "directory, removed at the end)"),
                             cl::init(""), cl::cat(benchCat));
cl::opt<std::string> benchDir(
    "bench-dir",
    cl::desc("What scripts/setup-bench.sh installed: models/ and ort/ "
             "(default: <build>/bench-cpu)"),
    cl::init(LOOM_BENCH_CPU_DIR), cl::cat(benchCat));
cl::opt<std::string> zooDir("zoo-dir",
                            cl::desc("Where the zoo models exported to ONNX "
                                     "are kept (default: "
                                     "<bench-dir>/models/zoo)"),
                            cl::init(""), cl::cat(benchCat));
cl::opt<std::string> binDir("bin-dir",
                            cl::desc("Where loom-zoo, loom-translate, "
                                     "loom-compile and loom-run are (default: "
                                     "beside this executable)"),
                            cl::init(""), cl::cat(benchCat));
cl::opt<std::string> nodeTool("node",
                              cl::desc("The node executable (default: node "
                                       "on PATH)"),
                              cl::init(""), cl::cat(benchCat));
cl::opt<std::string>
    ortPackage("ort-package",
               cl::desc("The onnxruntime-node package directory (default: "
                        "<bench-dir>/ort/node_modules/onnxruntime-node)"),
               cl::init(""), cl::cat(benchCat));
cl::opt<std::string> ortScript("ort-script",
                               cl::desc("bench/cpu/ort-run.js"),
                               cl::init(LOOM_BENCH_CPU_ORT_SCRIPT),
                               cl::cat(benchCat));
cl::opt<double> maxError(
    "max-error",
    cl::desc("Fail (exit 1) when the interpreter's outputs differ from ONNX "
             "Runtime's by more than this on some model (0: no check)"),
    cl::init(0), cl::cat(benchCat));
cl::opt<unsigned> timeout("timeout",
                          cl::desc("Seconds allowed to each child process"),
                          cl::init(1800), cl::cat(benchCat));

int fail(const Twine &message) {
  errs() << "loom-bench-cpu: error: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// One model's results
//===----------------------------------------------------------------------===//

struct Row {
  ModelSpec model;
  std::string onnx;
  /// Why the model could not be measured (the row is empty then).
  std::string error;
  std::optional<InterpretResult> interp;
  std::optional<OrtResult> ort;
  std::string ortError;
  std::optional<OutputError> interpVsOrt;
  std::optional<CompiledResult> compiled;
  /// --capped: the compiled column again under LOOM_CPU_ISA.
  std::optional<CompiledResult> capped;
  std::optional<PlacementResult> placement;
  std::optional<PerOpTable> perOp;
  /// Why --per-op has no table, or what it lacks (ONNX Runtime's column).
  std::string perOpNote;
  /// With --rounds: each round's median of ONNX Runtime, of the compiled
  /// model and (--capped) of the capped one, in the order they ran (the
  /// first the measuring run's).
  std::vector<double> ortRoundsMs, compiledRoundsMs, cappedRoundsMs;

  double interpMs() const {
    return interp ? median(interp->seconds) * 1e3 : 0;
  }
};

std::optional<double> ratio(double a, double b) {
  if (a > 0 && b > 0)
    return a / b;
  return std::nullopt;
}

/// Whether \p r was compiled and run.
bool measured(const std::optional<CompiledResult> &r) {
  return r && r->measured();
}

std::string fmtRatio(std::optional<double> r) {
  return r ? formatv(*r >= 10 ? "{0:f1}" : "{0:f2}", *r).str() : "n/a";
}

std::string fmtMB(int64_t kb) {
  return kb > 0 ? formatv("{0:f0}", double(kb) / 1024).str() : "n/a";
}

std::string shapeText(ArrayRef<TensorDesc> tensors) {
  std::string s;
  for (const TensorDesc &t : tensors) {
    if (!s.empty())
      s += ",";
    s += join(map_range(t.shape, [](int64_t d) { return std::to_string(d); }),
              "x");
  }
  return s;
}

const char *kRowFormat =
    "%-16s %-15s %10s %9s %8s %9s %7s %7s | %9s %10s %8s %9s %7s\n";

void printHeader(const std::string &machine, const std::string &load) {
  outs() << "Loom on the CPU against ONNX Runtime: " << threads
         << " thread(s) per column, inputs from seed " << seed
         << (isaCap.empty() ? std::string()
                            : "; Loom capped at LOOM_CPU_ISA=" + isaCap)
         << "\n"
         << "machine: " << machine << "; load average " << load << "\n\n";
  outs() << format(kRowFormat, "model", "input", "interp ms", "ORT ms",
                   "int/ORT", "|int-ORT|", "int MB", "ORT MB", "compile s",
                   "compiled", "comp/ORT", "|cmp-int|", "cmp MB");
}

void printRow(const Row &row) {
  if (!row.interp) {
    outs() << format("%-16s %s\n", row.model.name.c_str(),
                     "(not measured: see the notes)");
    outs().flush();
    return;
  }
  std::string interpMs = fmtMs(row.interpMs());
  if (row.interp->capped)
    interpMs += "*";
  std::optional<double> ortMs;
  if (row.ort)
    ortMs = row.ort->medianMs;
  std::string compileS = "n/a", compiledMs = "n/a", compiledRatio = "n/a",
              compiledErr = "n/a", compiledMB = "n/a";
  if (measured(row.compiled)) {
    compileS = formatv("{0:f1}", row.compiled->compileSeconds).str();
    compiledMs = fmtMs(row.compiled->latencyMs);
    compiledRatio = fmtRatio(ratio(row.compiled->latencyMs, ortMs.value_or(0)));
    compiledErr = fmtError(row.compiled->errorVsInterpreter);
    compiledMB = fmtMB(row.compiled->peakRssKb);
  } else if (row.compiled &&
             row.compiled->status == CompiledResult::Status::Failed) {
    compileS = "failed";
  }
  std::string input = shapeText(row.interp->inputs);
  if (input.size() > 15)
    input = input.substr(0, 14) + "~";
  outs() << format(kRowFormat, row.model.name.c_str(), input.c_str(),
                   interpMs.c_str(), fmtMs(ortMs).c_str(),
                   fmtRatio(ratio(row.interpMs(), ortMs.value_or(0))).c_str(),
                   fmtError(row.interpVsOrt).c_str(),
                   fmtMB(row.interp->peakRssKb).c_str(),
                   fmtMB(row.ort ? row.ort->peakRssKb : 0).c_str(),
                   compileS.c_str(), compiledMs.c_str(), compiledRatio.c_str(),
                   compiledErr.c_str(), compiledMB.c_str());
  outs().flush();
}

/// One model's notes, after a "notes:" line when \p header is not yet set.
void printModelNotes(StringRef model, ArrayRef<std::string> notes,
                     bool &header) {
  if (notes.empty())
    return;
  if (!header)
    outs() << "notes:\n";
  header = true;
  for (const std::string &n : notes)
    outs() << "  " << model << ": " << n << "\n";
}

/// --capped: the capped column's latency over the compiled one's.
std::optional<double> cappedRatio(const Row &row) {
  if (!measured(row.compiled) || !measured(row.capped))
    return std::nullopt;
  return ratio(row.capped->latencyMs, row.compiled->latencyMs);
}

/// --capped: the table of capped against uncapped latency, its geometric
/// mean and largest ratio.
void printCapped(ArrayRef<Row> rows) {
  outs() << "\nLoom capped at LOOM_CPU_ISA=" << cappedColumn
         << " against uncapped, the same machine"
         << (rounds > 1 ? " (medians of " + std::to_string(rounds) +
                              " alternating rounds)"
                        : std::string())
         << ":\n";
  const char *format = "%-28s %12s %12s %16s %9s\n";
  outs() << llvm::format(format, "model", "compiled ms", "capped ms",
                         "capped/compiled", "|cap-int|");
  double logSum = 0, worst = 0;
  int counted = 0;
  for (const Row &row : rows) {
    std::optional<double> r = cappedRatio(row);
    if (r) {
      logSum += std::log(*r);
      worst = std::max(worst, *r);
      ++counted;
    }
    outs() << llvm::format(
        format, row.model.name.c_str(),
        measured(row.compiled) ? fmtMs(row.compiled->latencyMs).c_str() : "n/a",
        measured(row.capped) ? fmtMs(row.capped->latencyMs).c_str() : "n/a",
        fmtRatio(r).c_str(),
        measured(row.capped) ? fmtError(row.capped->errorVsInterpreter).c_str()
                             : "n/a");
  }
  if (counted)
    outs() << formatv("geometric mean capped/compiled {0:f3}, largest {1:f2} "
                      "over {2} model(s)\n",
                      std::exp(logSum / counted), worst, counted);
}

/// The notes under the table: what was not measured and why.
void printNotes(ArrayRef<Row> rows, bool anyCapped) {
  outs() << "\nms: median latency of one inference"
         << (rounds > 1 ? " (ORT and compiled: the median of " +
                              std::to_string(rounds) +
                              " alternating rounds' medians)"
                        : std::string())
         << "; int = Loom's reference "
            "interpreter (f32), ORT = ONNX Runtime "
         << (rows.empty() || !rows.front().ort ? std::string("")
                                               : rows.front().ort->version)
         << " (CPU EP, all graph optimisations), compiled = loom-compile + "
            "loom-run; ratios are latency / ORT latency (> 1: slower than "
            "ORT); |a-b| = largest absolute difference of the outputs; MB = "
            "peak resident memory (interpreter: this process while "
            "interpreting, weights included; ORT: its node process; "
            "compiled: the loom-run process).\n";
  if (anyCapped)
    outs() << "*: fewer timed interpreter runs than --interp-repeat "
              "(--interp-budget reached).\n";
  bool header = false;
  for (const Row &row : rows) {
    std::vector<std::string> notes;
    if (!row.error.empty())
      notes.push_back(row.error);
    if (!row.ortError.empty())
      notes.push_back(row.ortError);
    if (row.interpVsOrt && std::isinf(row.interpVsOrt->maxAbs))
      notes.push_back("interpreter vs ORT: " + row.interpVsOrt->where);
    if (row.compiled && !row.compiled->measured())
      notes.push_back("compiled: " + row.compiled->note);
    if (row.capped && !row.capped->measured())
      notes.push_back("capped: " + row.capped->note);
    if (!row.perOpNote.empty())
      notes.push_back("per op: " + row.perOpNote);
    printModelNotes(row.model.name, notes, header);
  }
  outs().flush();
}

/// The placement table (--placement), with its own notes.
void printPlacement(ArrayRef<Row> rows) {
  printPlacementHeader(outs());
  for (const Row &row : rows)
    if (row.placement)
      printPlacementRow(outs(), row.model.name, *row.placement);
  printPlacementLegend(outs());
  bool header = false;
  for (const Row &row : rows)
    if (row.placement)
      printModelNotes(row.model.name, placementNotes(*row.placement), header);
  outs().flush();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

json::Value optionalNumber(std::optional<double> v) {
  return v ? json::Value(*v) : json::Value(nullptr);
}

json::Array tensorsJSON(ArrayRef<TensorDesc> tensors) {
  json::Array a;
  for (const TensorDesc &t : tensors)
    a.push_back(json::Object{{"name", t.name},
                             {"dtype", t.dtype},
                             {"shape", json::Array(t.shape)}});
  return a;
}

/// The JSON of a compiled column of \p row (the compiled one or --capped).
json::Object compiledJSON(const Row &row,
                          const std::optional<CompiledResult> &result) {
  json::Object c;
  if (!result) {
    c["status"] = "skipped";
  } else {
    const CompiledResult &cr = *result;
    bool ran = measured(result);
    c["status"] = cr.status == CompiledResult::Status::Unavailable ? "n/a"
                  : ran                                            ? "measured"
                                                                   : "failed";
    c["note"] = cr.note;
    c["compile_s"] = cr.status == CompiledResult::Status::Unavailable
                         ? json::Value(nullptr)
                         : json::Value(cr.compileSeconds);
    c["compile_peak_rss_kb"] = cr.compilePeakRssKb;
    c["median_ms"] = ran ? json::Value(cr.latencyMs) : nullptr;
    c["peak_rss_kb"] = ran ? json::Value(cr.peakRssKb) : nullptr;
    c["compiled_over_ort"] =
        ran && row.ort ? optionalNumber(ratio(cr.latencyMs, row.ort->medianMs))
                       : json::Value(nullptr);
    c["compiled_over_interpreter"] =
        ran ? optionalNumber(ratio(cr.latencyMs, row.interpMs()))
            : json::Value(nullptr);
    c["error_vs_interpreter"] = errorJSON(cr.errorVsInterpreter);
  }
  return c;
}

json::Object rowJSON(const Row &row) {
  json::Object dimsObject;
  for (const auto &[name, value] : row.model.dims)
    dimsObject[name] = value;
  json::Object o{{"name", row.model.name},
                 {"source", sourceName(row.model.source)},
                 {"what", row.model.what},
                 {"onnx", row.onnx},
                 {"dims", std::move(dimsObject)}};
  if (row.model.source == ModelSource::Package) {
    o["package"] = row.model.package;
    o["version"] = row.model.version;
    o["file"] = row.model.file;
  }
  if (row.model.source == ModelSource::Zoo)
    o["zoo_args"] = json::Array(row.model.zooArgs);
  if (!row.error.empty())
    o["error"] = row.error;
  if (!row.interp)
    return o;
  const InterpretResult &in = *row.interp;
  o["inputs"] = tensorsJSON(in.inputs);
  o["outputs"] = tensorsJSON(in.outputs);
  o["import_s"] = in.importSeconds;
  json::Array times;
  for (double s : in.seconds)
    times.push_back(s * 1e3);
  o["interpreter"] = json::Object{
      {"median_ms", row.interpMs()},
      {"min_ms", *std::min_element(in.seconds.begin(), in.seconds.end()) * 1e3},
      {"warmup_ms", in.warmupSeconds * 1e3},
      {"runs", int64_t(in.seconds.size())},
      {"capped", in.capped},
      {"times_ms", std::move(times)},
      {"peak_rss_kb", in.peakRssKb},
      {"peak_rss_per_model", in.peakIsPerModel}};
  if (row.ort) {
    o["ort"] = json::Object(row.ort->report);
    o["interpreter_over_ort"] =
        optionalNumber(ratio(row.interpMs(), row.ort->medianMs));
  } else {
    o["ort"] = nullptr;
    if (!row.ortError.empty())
      o["ort_error"] = row.ortError;
  }
  o["error_interpreter_vs_ort"] = errorJSON(row.interpVsOrt);
  o["compiled"] = compiledJSON(row, row.compiled);
  if (!cappedColumn.empty()) {
    o["capped"] = compiledJSON(row, row.capped);
    o["capped_over_compiled"] = optionalNumber(cappedRatio(row));
  }
  if (!row.compiledRoundsMs.empty()) {
    auto array = [](const std::vector<double> &values) {
      json::Array a;
      for (double v : values)
        a.push_back(v);
      return a;
    };
    o["rounds_ms"] = json::Object{{"ort", array(row.ortRoundsMs)},
                                  {"compiled", array(row.compiledRoundsMs)},
                                  {"capped", array(row.cappedRoundsMs)}};
  }
  if (row.placement)
    o["placement"] = placementJSON(*row.placement);
  if (row.perOp)
    o["per_op"] = perOpJSON(*row.perOp);
  else if (perOp)
    o["per_op"] = nullptr;
  if (!row.perOpNote.empty())
    o["per_op_note"] = row.perOpNote;
  return o;
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

/// The models of --models, or the default (or quick) set.
Expected<std::vector<ModelSpec>> selectModels() {
  std::vector<ModelSpec> models;
  if (modelList.empty()) {
    for (const ModelSpec &m : knownModels())
      if (quick ? m.inQuick : m.inDefault)
        models.push_back(m);
    return models;
  }
  std::vector<std::pair<std::string, int64_t>> fileDims;
  for (const std::string &d : dims) {
    auto [name, value] = StringRef(d).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v < 0)
      return createStringError("--dim expects NAME=VALUE with VALUE >= 0, "
                               "got '" + d + "'");
    fileDims.emplace_back(name.str(), v);
  }
  SmallVector<StringRef> names;
  StringRef(modelList).split(names, ',', -1, false);
  for (StringRef name : names) {
    name = name.trim();
    if (const ModelSpec *m = lookupModel(name)) {
      models.push_back(*m);
    } else if (name.find_first_of("*?[") != StringRef::npos &&
               !name.ends_with(".onnx")) {
      auto matched = matchModels(name);
      if (!matched)
        return matched.takeError();
      llvm::append_range(models, *matched);
    } else if (name.ends_with(".onnx")) {
      ModelSpec m;
      m.name = sys::path::stem(name).str();
      m.source = ModelSource::File;
      m.what = "ONNX file " + name.str();
      m.file = name.str();
      m.dims = fileDims;
      models.push_back(std::move(m));
    } else {
      return createStringError("unknown model '" + name +
                               "' (see --list; a file must end in .onnx)");
    }
  }
  return models;
}

void printModelList() {
  outs() << "models of loom-bench-cpu (* default, q quick subset):\n";
  for (const ModelSpec &m : knownModels()) {
    std::string where;
    switch (m.source) {
    case ModelSource::Zoo:
      where = "loom-zoo " + m.zooModel +
              (m.zooArgs.empty() ? "" : " " + join(m.zooArgs, " "));
      break;
    case ModelSource::Package:
      where = m.package + "@" + m.version + " " + m.file;
      break;
    case ModelSource::Torch:
      where = "scripts/export-torch-models.py (PyTorch) torch/" + m.file;
      break;
    case ModelSource::File:
      where = m.file;
      break;
    }
    outs() << format("  %-1s%-1s %-16s %s\n", m.inDefault ? "*" : "",
                     m.inQuick ? "q" : "", m.name.c_str(), m.what.c_str())
           << "       " << where;
    for (const auto &[name, value] : m.dims)
      outs() << " --dim " << name << "=" << value;
    outs() << "\n";
  }
}

std::string machineText(std::string &llvmCpu,
                        llvm::StringMap<bool, MallocAllocator> &features) {
  llvmCpu = sys::getHostCPUName().str();
  features = sys::getHostCPUFeatures();
  std::string f;
  for (const char *name : {"avx2", "fma", "avx512f"})
    f += std::string(" ") + (features.lookup(name) ? "+" : "-") + name;
  return cpuModelName() + " (" + llvmCpu + "," + f + "), " +
         std::to_string(std::thread::hardware_concurrency()) +
         " hardware threads";
}

/// What every model's measurement shares.
struct Session {
  ModelPaths paths;
  std::optional<OrtOptions> ort;
  CompiledOptions compiled;
  /// --capped: the compiled column's options with LOOM_CPU_ISA set.
  std::optional<CompiledOptions> capped;
  std::string dir;
  unsigned interpRuns = 1;
};

/// ONNX Runtime's column, checked to be runnable.
Expected<OrtOptions> ortOptions(unsigned warmupRuns, unsigned repeatRuns) {
  OrtOptions ort;
  ort.node = nodeTool;
  if (ort.node.empty())
    if (auto found = sys::findProgramByName("node"))
      ort.node = *found;
  ort.script = ortScript;
  ort.package = ortPackage;
  if (ort.package.empty()) {
    SmallString<256> p(benchDir);
    sys::path::append(p, "ort", "node_modules", "onnxruntime-node");
    ort.package = std::string(p);
  }
  ort.threads = threads;
  ort.warmup = warmupRuns;
  ort.repeat = repeatRuns;
  ort.timeoutSeconds = timeout;
  if (Error err = checkOrt(ort))
    return createStringError(toString(std::move(err)) + " (or pass --no-ort)");
  return ort;
}

/// Where the models are found or made (loom-zoo, loom-translate beside
/// \p bin).
ModelPaths modelPaths(StringRef bin) {
  auto tool = [&](StringRef name) {
    SmallString<256> p(bin);
    sys::path::append(p, name);
    return std::string(p);
  };
  ModelPaths paths;
  SmallString<256> m(benchDir);
  sys::path::append(m, "models");
  paths.modelsDir = std::string(m);
  sys::path::append(m, "zoo");
  paths.zooDir = zooDir.empty() ? std::string(m) : zooDir.getValue();
  paths.zooTool = tool("loom-zoo");
  paths.translateTool = tool("loom-translate");
  return paths;
}

/// --per-op: profiles the compiled model and ONNX Runtime on `inputs` and
/// joins the profiles into row.perOp; row.perOpNote says what is missing.
void profileModel(const Session &session, Row &row, StringRef onnx,
                  StringRef inputs, StringRef modelDir) {
  auto file = [&](StringRef name) {
    SmallString<256> p(modelDir);
    sys::path::append(p, name);
    return std::string(p);
  };
  if (!measured(row.compiled)) {
    row.perOpNote = "no table: the compiled model was not measured";
    return;
  }
  std::string loomProfile = file("loom-profile.json");
  if (Error err = profileArtifact(session.compiled, modelDir, inputs,
                                  loomProfile)) {
    row.perOpNote = toString(std::move(err));
    return;
  }
  std::string ortProfile;
  if (!session.ort) {
    row.perOpNote = "Loom's steps only: ONNX Runtime is not run (--no-ort)";
  } else if (!row.ort) {
    row.perOpNote = "Loom's steps only: ONNX Runtime did not run the model";
  } else {
    ortProfile = file("ort-profile.json");
    auto profiled = runOrt(*session.ort, onnx, inputs,
                           file("ort-profiled.safetensors"), ortProfile);
    if (!profiled) {
      row.perOpNote = "Loom's steps only: " + toString(profiled.takeError());
      ortProfile.clear();
    }
  }
  auto table = buildPerOpTable(file("steps.json"), loomProfile, ortProfile);
  if (!table) {
    row.perOpNote = toString(table.takeError());
    return;
  }
  row.perOp = std::move(*table);
}

/// --rounds: times ONNX Runtime, the compiled artifact in \p modelDir and
/// (--capped) the capped one in its capped/ again, alternating, until each
/// has `rounds` medians (the measuring runs' the first), and makes each
/// one's latency the median of its rounds. Outputs were compared on the
/// first round; later rounds only time.
void alternateRounds(const Session &session, Row &row, StringRef onnx,
                     StringRef inputs, StringRef modelDir) {
  if (rounds < 2 || !measured(row.compiled))
    return;
  if (row.ort)
    row.ortRoundsMs = {row.ort->medianMs};
  row.compiledRoundsMs = {row.compiled->latencyMs};
  if (measured(row.capped))
    row.cappedRoundsMs = {row.capped->latencyMs};
  SmallString<256> ortOut(modelDir), cappedDir(modelDir);
  sys::path::append(ortOut, "ort.safetensors");
  sys::path::append(cappedDir, "capped");
  // One more round of a compiled column: false (its note saying why) when
  // it failed.
  auto again = [&](const CompiledOptions &options, StringRef dir,
                   CompiledResult &column, std::vector<double> &medians,
                   unsigned r) {
    CompiledResult next = column;
    runArtifact(options, dir, inputs, row.interp->values, next);
    if (!next.measured()) {
      column.note = "round " + std::to_string(r + 1) + ": " + next.note;
      return false;
    }
    medians.push_back(next.latencyMs);
    return true;
  };
  for (unsigned r = 1; r < rounds; ++r) {
    if (row.ort) {
      auto ortRun = runOrt(*session.ort, onnx, inputs, ortOut);
      if (!ortRun) {
        row.ortError = toString(ortRun.takeError());
        break;
      }
      row.ortRoundsMs.push_back(ortRun->medianMs);
    }
    if (!again(session.compiled, modelDir, *row.compiled, row.compiledRoundsMs,
               r))
      break;
    if (measured(row.capped) &&
        !again(*session.capped, cappedDir, *row.capped, row.cappedRoundsMs, r))
      break;
  }
  if (row.ort) {
    row.ort->medianMs = median(row.ortRoundsMs);
    row.ort->report["median_ms"] = row.ort->medianMs;
  }
  row.compiled->latencyMs = median(row.compiledRoundsMs);
  if (measured(row.capped))
    row.capped->latencyMs = median(row.cappedRoundsMs);
}

/// Every column of one model, on the same inputs (files in a directory of
/// its own under the session's).
Error measureModel(const Session &session, Row &row) {
  const ModelSpec &model = row.model;
  auto onnx = prepareModel(model, session.paths, errs());
  if (!onnx)
    return onnx.takeError();
  row.onnx = *onnx;
  SmallString<256> modelDir(session.dir);
  sys::path::append(modelDir, model.name);
  if (std::error_code ec = sys::fs::create_directories(modelDir))
    return createStringError("cannot create " + modelDir + ": " +
                             ec.message());
  auto file = [&](StringRef name) {
    SmallString<256> p(modelDir);
    sys::path::append(p, name);
    return std::string(p);
  };
  std::string inputs = file("inputs.safetensors");

  InterpretOptions io;
  io.dims = model.dims;
  io.seed = seed;
  io.threads = threads;
  io.repeat = session.interpRuns;
  io.budgetSeconds = interpBudget;
  auto interp = interpretModel(*onnx, file("weights.safetensors"), inputs, io);
  if (!interp)
    return interp.takeError();
  row.interp = std::move(*interp);
  if (Error err =
          writeTensors(row.interp->values, file("interpreter.safetensors")))
    return err;

  if (session.ort) {
    auto ortRun = runOrt(*session.ort, *onnx, inputs, file("ort.safetensors"));
    if (ortRun) {
      row.ort = std::move(*ortRun);
      row.interpVsOrt = compareOutputs(row.ort->values, row.interp->values);
    } else {
      row.ortError = toString(ortRun.takeError());
    }
  }
  std::vector<std::string> compileArgs = dimArguments(model);
  if (perOp) {
    compileArgs.push_back("--step-sources");
    compileArgs.push_back(file("steps.json"));
  }
  if (!noCompiled)
    row.compiled = runCompiled(session.compiled, *onnx, compileArgs,
                               modelDir, inputs, row.interp->values);
  if (session.capped)
    row.capped = runCompiled(*session.capped, *onnx, dimArguments(model),
                             file("capped"), inputs, row.interp->values);
  alternateRounds(session, row, *onnx, inputs, modelDir);
  if (perOp)
    profileModel(session, row, *onnx, inputs, modelDir);
  if (!noCompiled && placementColumns)
    row.placement =
        measurePlacement(session.compiled, *onnx, dimArguments(model),
                         modelDir, inputs, row.interp->values);
  return Error::success();
}

/// The run's JSON: options, machine and one object per row.
Error writeJSON(const std::vector<Row> &rows, unsigned ortWarmup,
                unsigned ortRepeat, unsigned interpRuns,
                const std::string &llvmCpu,
                const StringMap<bool, MallocAllocator> &features,
                const std::string &loadBefore, const std::string &loadAfter) {
  std::string ortVersion;
  json::Array rowsJSON;
  for (const Row &row : rows) {
    if (row.ort)
      ortVersion = row.ort->version;
    rowsJSON.push_back(rowJSON(row));
  }
  json::Object root{
      {"benchmark", "loom-bench-cpu"},
      {"threads", int64_t(threads)},
      {"seed", int64_t(seed)},
      {"quick", bool(quick)},
      {"ort_warmup", int64_t(ortWarmup)},
      {"repeat", int64_t(ortRepeat)},
      {"rounds", int64_t(rounds)},
      {"isa", isaCap.empty() ? json::Value(nullptr) : json::Value(isaCap)},
      {"interp_repeat", int64_t(interpRuns)},
      {"interp_budget_s", double(interpBudget)},
      {"onnxruntime", ortVersion.empty() ? json::Value(nullptr)
                                         : json::Value(ortVersion)},
      {"machine",
       json::Object{{"cpu", cpuModelName()},
                    {"llvm_cpu", llvmCpu},
                    {"hardware_threads",
                     int64_t(std::thread::hardware_concurrency())},
                    {"avx2", features.lookup("avx2")},
                    {"fma", features.lookup("fma")},
                    {"avx512f", features.lookup("avx512f")},
                    {"load_average_before", loadBefore},
                    {"load_average_after", loadAfter}}},
      {"models", std::move(rowsJSON)}};
  std::error_code ec;
  raw_fd_ostream os(jsonFile, ec);
  if (ec)
    return createStringError("cannot write " + jsonFile + ": " + ec.message());
  os << formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return Error::success();
}

/// A model that could not be measured fails the run (after the table), and
/// so does an error above --max-error.
int exitStatus(const std::vector<Row> &rows) {
  int status = 0;
  for (const Row &row : rows)
    if (!row.error.empty() || !row.ortError.empty())
      status = 1;
  if (maxError <= 0)
    return status;
  for (const Row &row : rows) {
    if (!row.interpVsOrt)
      continue;
    bool ok = row.interpVsOrt->maxAbs <= maxError;
    outs() << "check: " << row.model.name << ": |interpreter - ORT| "
           << fmtError(row.interpVsOrt) << (ok ? " <= " : " > ")
           << formatv("{0:e1}", double(maxError)) << (ok ? "" : " FAILED")
           << "\n";
    if (!ok)
      status = 1;
  }
  return status;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-cpu: Loom's interpreter and compiled path against ONNX "
      "Runtime on the CPU\n\n"
      "Needs ONNX Runtime and the real models in the build tree: run\n"
      "  LOOM_BUILD_DIR=<build> scripts/setup-bench.sh\n");
  if (listModels) {
    printModelList();
    return 0;
  }
  if (threads == 0)
    return fail("--num-threads must be at least 1");
  if (rounds == 0)
    return fail("--rounds must be at least 1");
  if (placementColumns && noCompiled)
    return fail("--placement measures the compiled path: drop --no-compiled");
  if (perOp && noCompiled)
    return fail("--per-op profiles the compiled path: drop --no-compiled");
  if (!cappedColumn.empty()) {
    if (noCompiled)
      return fail("--capped is a second compiled column: drop --no-compiled");
    if (!isaCap.empty())
      return fail("--capped compares with the uncapped column: drop --isa");
    auto level = loom::artifact::parseCpuIsa(cappedColumn);
    if (!level || *level == loom::artifact::CpuIsa::Avx512)
      return fail("--capped=" + cappedColumn + ": not sse4.2 or avx2");
  }
  if (!isaCap.empty()) {
    if (!loom::artifact::parseCpuIsa(isaCap))
      return fail("--isa=" + isaCap + ": not one of " +
                  loom::artifact::kCpuIsaValues);
    ::setenv(loom::artifact::kCpuIsaVariable, isaCap.c_str(), 1);
  }
  unsigned ortRepeat = repeat ? unsigned(repeat) : quick ? 3 : 10;
  unsigned ortWarmup = warmup != ~0u ? unsigned(warmup) : quick ? 1 : 3;
  unsigned interpRuns = interpRepeat ? unsigned(interpRepeat) : quick ? 1 : 3;

  auto models = selectModels();
  if (!models)
    return fail(toString(models.takeError()));

  // Tools beside this executable unless --bin-dir says otherwise.
  std::string bin = binDir;
  if (bin.empty())
    bin = sys::path::parent_path(
              sys::fs::getMainExecutable(argv[0], (void *)&fail))
              .str();
  Session session;
  session.paths = modelPaths(bin);
  session.interpRuns = interpRuns;
  if (!noOrt) {
    auto ort = ortOptions(ortWarmup, ortRepeat);
    if (!ort)
      return fail(toString(ort.takeError()));
    session.ort = std::move(*ort);
  }
  session.compiled.binDir = bin;
  session.compiled.threads = threads;
  session.compiled.repeat = ortRepeat;
  session.compiled.warmup = ortWarmup;
  session.compiled.timeoutSeconds = timeout;
  if (!cappedColumn.empty()) {
    session.capped = session.compiled;
    session.capped->env = {std::string(loom::artifact::kCpuIsaVariable) + "=" +
                           cappedColumn};
  }

  session.dir = workDir;
  // A model's artifacts take up to gigabytes: a directory of our own making
  // is removed on every way out of main (the user's --workdir is kept).
  struct RemoveTree {
    std::string dir;
    ~RemoveTree() {
      if (!dir.empty())
        sys::fs::remove_directories(dir);
    }
  } temporary;
  if (session.dir.empty()) {
    SmallString<128> tmp;
    if (sys::fs::createUniqueDirectory("loom-bench-cpu", tmp))
      return fail("cannot create a temporary directory");
    session.dir = std::string(tmp);
    temporary.dir = session.dir;
  }
  if (std::error_code ec = sys::fs::create_directories(session.dir))
    return fail("cannot create " + session.dir + ": " + ec.message());

  std::string llvmCpu;
  StringMap<bool, MallocAllocator> features;
  std::string machine = machineText(llvmCpu, features);
  std::string loadBefore = loadAverage();
  printHeader(machine, loadBefore);

  std::vector<Row> rows;
  bool anyCapped = false;
  for (const ModelSpec &model : *models) {
    Row row;
    row.model = model;
    if (Error err = measureModel(session, row))
      row.error = toString(std::move(err));
    anyCapped |= row.interp && row.interp->capped;
    printRow(row);
    rows.push_back(std::move(row));
  }
  std::string loadAfter = loadAverage();
  printNotes(rows, anyCapped);
  if (placementColumns)
    printPlacement(rows);
  if (!cappedColumn.empty())
    printCapped(rows);
  for (const Row &row : rows)
    if (row.perOp)
      printPerOpTable(outs(), row.model.name, *row.perOp, perOpRows);
  outs() << "load average after: " << loadAfter;
  if (temporary.dir.empty())
    outs() << "; inputs, outputs and artifacts in " << session.dir;
  outs() << "\n";
  if (!jsonFile.empty())
    if (Error err = writeJSON(rows, ortWarmup, ortRepeat, interpRuns, llvmCpu,
                              features, loadBefore, loadAfter))
      return fail(toString(std::move(err)));
  return exitStatus(rows);
}
