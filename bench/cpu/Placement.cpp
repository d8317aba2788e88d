//===- Placement.cpp - Backend placement columns of loom-bench-cpu --------===//
//
// Part of Loom. See Placement.h.
//
//===----------------------------------------------------------------------===//

#include "Placement.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <cmath>

using namespace llvm;
using namespace loom::bench;

namespace {

/// Rounds of runs of every column (see measurePlacement).
constexpr int kRounds = 3;

/// `name` in the directory `dir`.
std::string inDir(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path);
}

/// The model's loom-compile arguments (its --dim choices), then `extra`.
std::vector<std::string> withArgs(ArrayRef<std::string> compileArgs,
                                  ArrayRef<std::string> extra) {
  std::vector<std::string> args(compileArgs.begin(), compileArgs.end());
  llvm::append_range(args, extra);
  return args;
}

/// The auto column: a cold compilation (the cost database deleted first),
/// then a warm one with the same database, whose artifact is run.
/// The cold and the warm search's compilations (the warm artifact is run).
bool compileAuto(PlacementResult &result, const CompiledOptions &options,
                 StringRef model, ArrayRef<std::string> compileArgs,
                 StringRef workDir) {
  std::string dir = inDir(workDir, "auto");
  std::string db = inDir(dir, "fragment-costs.json");
  sys::fs::remove(db);
  std::vector<std::string> args = withArgs(
      compileArgs, {"--backends=auto", "--cost-db=" + db,
                    "--num-threads=" + std::to_string(options.threads)});
  if (!compileModel(options, model, args, dir, result.cold)) {
    result.placed.status = result.cold.status;
    result.placed.note = "not compiled warm: the cold compilation failed";
    return false;
  }
  result.searchColdSeconds = parseSearchSeconds(result.cold.compileLog);
  if (!compileModel(options, model, args, dir, result.placed))
    return false;
  result.searchWarmSeconds = parseSearchSeconds(result.placed.compileLog);
  return true;
}

/// A column's latency, or why it has none.
std::string latencyText(const CompiledResult &r) {
  if (!r.measured())
    return r.status == CompiledResult::Status::Failed ? "failed" : "n/a";
  return fmtMs(r.latencyMs);
}

std::string secondsText(std::optional<double> s) {
  return s ? formatv("{0:f2}", *s).str() : "n/a";
}

const char *statusText(const CompiledResult &r) {
  return r.measured()                                 ? "measured"
         : r.status == CompiledResult::Status::Failed ? "failed"
                                                      : "n/a";
}

json::Value number(std::optional<double> v) {
  return v ? json::Value(*v) : json::Value(nullptr);
}

/// One column as JSON, in the fields of the row's "compiled" object.
json::Object resultJSON(const CompiledResult &r) {
  bool ok = r.measured();
  bool compiled = r.status != CompiledResult::Status::Unavailable;
  return json::Object{
      {"status", statusText(r)},
      {"note", r.note},
      {"compile_s", compiled ? json::Value(r.compileSeconds) : nullptr},
      {"compile_peak_rss_kb", r.compilePeakRssKb},
      {"latency_ms", ok ? json::Value(r.latencyMs) : nullptr},
      {"peak_rss_kb", ok ? json::Value(r.peakRssKb) : nullptr},
      {"error_vs_interpreter", errorJSON(r.errorVsInterpreter)}};
}

/// The auto column as JSON: the warm compilation, run, and the cold one.
json::Object autoJSON(const PlacementResult &r) {
  json::Object o = resultJSON(r.placed);
  bool cold = r.cold.status != CompiledResult::Status::Unavailable;
  o["compile_cold_s"] = cold ? json::Value(r.cold.compileSeconds) : nullptr;
  o["compile_cold_peak_rss_kb"] = r.cold.compilePeakRssKb;
  if (!r.cold.note.empty()) {
    o["cold_note"] = r.cold.note;
    o["compile_s"] = nullptr;
  }
  return o;
}

/// `label`'s note when `r` is not measured or its outputs do not match.
void addNote(std::vector<std::string> &notes, const Twine &label,
             const CompiledResult &r) {
  if (!r.measured())
    notes.push_back((label + ": " + r.note).str());
  else if (r.errorVsInterpreter && std::isinf(r.errorVsInterpreter->maxAbs))
    notes.push_back(
        (label + " vs interpreter: " + r.errorVsInterpreter->where).str());
}

const char *kFormat = "%-16s %9s %9s %9s %9s %-10s %11s %12s %12s %11s\n";

} // namespace

int PlacementResult::bestFixed() const {
  int best = -1;
  for (auto [i, r] : llvm::enumerate(fixed))
    if (r.measured() && (best < 0 || r.latencyMs < fixed[best].latencyMs))
      best = i;
  return best;
}

std::optional<double> PlacementResult::placedOverBest() const {
  int best = bestFixed();
  if (best < 0 || !placed.measured() || fixed[best].latencyMs <= 0)
    return std::nullopt;
  return placed.latencyMs / fixed[best].latencyMs;
}

std::optional<double> loom::bench::parseSearchSeconds(StringRef log) {
  // tg-place-backends: placed 57 sites in 12.34 s (measured)
  static const Regex line("tg-place-backends: placed [0-9]+ sites in "
                          "([0-9.]+) s");
  SmallVector<StringRef> m;
  double s;
  if (!line.match(log, &m) || m[1].getAsDouble(s))
    return std::nullopt;
  return s;
}

PlacementResult
loom::bench::measurePlacement(const CompiledOptions &options, StringRef model,
                              ArrayRef<std::string> compileArgs,
                              StringRef workDir, StringRef inputsPath,
                              const RunTensors &interpreterValues) {
  PlacementResult result;
  std::vector<std::string> dirs;
  std::vector<bool> compiled;
  for (const char *set : kFixedBackendSets) {
    result.fixed.emplace_back();
    dirs.push_back(inDir(workDir, set));
    compiled.push_back(compileModel(
        options, model,
        withArgs(compileArgs, {std::string("--backends=") + set}), dirs.back(),
        result.fixed.back()));
  }
  dirs.push_back(inDir(workDir, "auto"));
  compiled.push_back(compileAuto(result, options, model, compileArgs, workDir));
  // Every artifact run in turn, kRounds times: runs of one binary minutes
  // apart differ by up to 2x on this shared machine (SqueezeNet's onednn and
  // auto artifacts, byte-identical, measured 4.2 and 8.9 ms one after the
  // other), so each column is the median of its rounds.
  std::vector<std::vector<double>> rounds(dirs.size());
  for (int round = 0; round < kRounds; ++round)
    for (size_t i = 0; i < dirs.size(); ++i) {
      CompiledResult &r = i < result.fixed.size() ? result.fixed[i]
                                                  : result.placed;
      if (!compiled[i] || (round > 0 && !r.measured()))
        continue;
      runArtifact(options, dirs[i], inputsPath, interpreterValues, r);
      if (r.measured())
        rounds[i].push_back(r.latencyMs);
    }
  for (size_t i = 0; i < dirs.size(); ++i) {
    CompiledResult &r = i < result.fixed.size() ? result.fixed[i]
                                                : result.placed;
    if (r.measured() && !rounds[i].empty()) {
      std::sort(rounds[i].begin(), rounds[i].end());
      r.latencyMs = rounds[i][rounds[i].size() / 2];
    }
  }
  return result;
}

void loom::bench::printPlacementHeader(raw_ostream &os) {
  os << "\nBackend placement (ms; placed/best = auto / the fastest fixed "
        "set; search s cold / warm)\n";
  os << format(kFormat, "model", "codegen", "onednn", "openblas", "auto",
               "best fixed", "placed/best", "search cold", "search warm",
               "|auto-int|");
}

void loom::bench::printPlacementRow(raw_ostream &os, StringRef model,
                                    const PlacementResult &r) {
  int best = r.bestFixed();
  std::optional<double> ratio = r.placedOverBest();
  std::string error =
      r.placed.measured() ? fmtError(r.placed.errorVsInterpreter) : "n/a";
  os << format(kFormat, model.str().c_str(), latencyText(r.fixed[0]).c_str(),
               latencyText(r.fixed[1]).c_str(), latencyText(r.fixed[2]).c_str(),
               latencyText(r.placed).c_str(),
               best < 0 ? "n/a" : kFixedBackendSets[best],
               ratio ? formatv("{0:f2}", *ratio).str().c_str() : "n/a",
               secondsText(r.searchColdSeconds).c_str(),
               secondsText(r.searchWarmSeconds).c_str(), error.c_str());
  os.flush();
}

void loom::bench::printPlacementLegend(raw_ostream &os) {
  os << "\nms: median latency of loom-run with the artifact of loom-compile "
        "--backends=SET (codegen: generated code only; onednn: oneDNN "
        "convolutions and matmuls; openblas: OpenBLAS matmuls; the rest "
        "generated), auto = --backends=auto after a warm search; placed/best "
        "> 1: the placement is slower than the best fixed set; search = "
        "loom-compile's own search seconds, cold with an empty cost database "
        "(auto/fragment-costs.json in the model's directory), warm reusing "
        "it; |auto-int| = largest absolute difference of auto's outputs from "
        "the interpreter's (every set's in the JSON).\n";
}

std::vector<std::string> loom::bench::placementNotes(const PlacementResult &r) {
  std::vector<std::string> notes;
  for (auto [i, f] : llvm::enumerate(r.fixed))
    addNote(notes, Twine("--backends=") + kFixedBackendSets[i], f);
  if (!r.cold.note.empty()) {
    notes.push_back("--backends=auto (cold): " + r.cold.note);
    return notes;
  }
  if (!r.searchColdSeconds)
    notes.push_back("--backends=auto (cold): loom-compile printed no "
                    "'tg-place-backends: placed' line");
  addNote(notes, "--backends=auto", r.placed);
  if (r.placed.measured() && !r.searchWarmSeconds)
    notes.push_back("--backends=auto (warm): loom-compile printed no "
                    "'tg-place-backends: placed' line");
  return notes;
}

json::Object loom::bench::placementJSON(const PlacementResult &r) {
  json::Object o;
  for (auto [i, f] : llvm::enumerate(r.fixed))
    o[kFixedBackendSets[i]] = resultJSON(f);
  o["auto"] = autoJSON(r);
  int best = r.bestFixed();
  o["best_fixed"] =
      best < 0 ? json::Value(nullptr) : json::Value(kFixedBackendSets[best]);
  o["placed_over_best"] = number(r.placedOverBest());
  o["search_cold_s"] = number(r.searchColdSeconds);
  o["search_warm_s"] = number(r.searchWarmSeconds);
  return o;
}
