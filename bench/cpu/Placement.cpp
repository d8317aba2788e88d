//===- Placement.cpp - Backend placement columns of loom-bench-cpu --------===//
//
// Part of Loom. See Placement.h.
//
//===----------------------------------------------------------------------===//

#include "Placement.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace llvm;
using namespace loom::bench;

namespace {

bool measured(const CompiledResult &r) {
  return r.status == CompiledResult::Status::Measured;
}

std::string subdir(StringRef workDir, StringRef name) {
  SmallString<256> dir(workDir);
  sys::path::append(dir, name);
  sys::fs::create_directories(dir);
  return std::string(dir);
}

std::string ms(const CompiledResult &r) {
  if (!measured(r))
    return r.status == CompiledResult::Status::Failed ? "failed" : "n/a";
  return formatv(r.latencyMs >= 100 ? "{0:f0}"
                 : r.latencyMs >= 10 ? "{0:f1}"
                 : r.latencyMs >= 1  ? "{0:f2}"
                                     : "{0:f3}",
                 r.latencyMs)
      .str();
}

std::string seconds(std::optional<double> s) {
  return s ? formatv("{0:f2}", *s).str() : "n/a";
}

json::Value resultJSON(const CompiledResult &r) {
  if (!measured(r))
    return json::Object{{"status", r.status == CompiledResult::Status::Failed
                                       ? "failed"
                                       : "unavailable"},
                        {"note", r.note}};
  json::Object o{{"latency_ms", r.latencyMs},
                 {"compile_s", r.compileSeconds},
                 {"peak_rss_kb", r.peakRssKb}};
  if (r.errorVsInterpreter)
    o["max_abs_vs_interpreter"] =
        std::isinf(r.errorVsInterpreter->maxAbs)
            ? json::Value(nullptr)
            : json::Value(r.errorVsInterpreter->maxAbs);
  return o;
}

const char *kFormat = "%-16s %9s %9s %9s %9s %-10s %11s %12s %12s %11s\n";

} // namespace

int PlacementResult::bestFixed() const {
  int best = -1;
  for (auto [i, r] : llvm::enumerate(fixed))
    if (measured(r) && (best < 0 || r.latencyMs < fixed[best].latencyMs))
      best = i;
  return best;
}

std::optional<double> PlacementResult::placedOverBest() const {
  int best = bestFixed();
  if (best < 0 || !measured(placed) || fixed[best].latencyMs <= 0)
    return std::nullopt;
  return placed.latencyMs / fixed[best].latencyMs;
}

std::optional<double> loom::bench::parseSearchSeconds(StringRef log) {
  static const Regex line("tg-place-backends: placed [0-9]+ sites in "
                          "([0-9.]+) s");
  SmallVector<StringRef> m;
  double s;
  if (!line.match(log, &m) || m[1].getAsDouble(s))
    return std::nullopt;
  return s;
}

PlacementResult loom::bench::measurePlacement(
    const CompiledOptions &options, StringRef model,
    ArrayRef<std::string> compileArgs, StringRef workDir, StringRef inputsPath,
    const RunTensors &interpreterValues) {
  PlacementResult result;
  for (const char *set : kFixedBackendSets) {
    std::vector<std::string> args(compileArgs.begin(), compileArgs.end());
    args.push_back(std::string("--backends=") + set);
    result.fixed.push_back(runCompiled(options, model, args,
                                       subdir(workDir, set), inputsPath,
                                       interpreterValues));
  }
  // Cold: an empty cost database; warm: the same database again.
  std::string dir = subdir(workDir, "auto");
  SmallString<256> db(dir);
  sys::path::append(db, "fragment-costs.json");
  sys::fs::remove(db);
  std::vector<std::string> args(compileArgs.begin(), compileArgs.end());
  llvm::append_range(
      args, std::vector<std::string>{
                "--backends=auto", "--cost-db=" + std::string(db),
                "--num-threads=" + std::to_string(options.threads)});
  CompiledResult cold = runCompiled(options, model, args, dir, inputsPath,
                                    interpreterValues);
  result.searchColdSeconds = parseSearchSeconds(cold.compileLog);
  if (!measured(cold)) {
    result.placed = std::move(cold);
    return result;
  }
  result.placed = runCompiled(options, model, args, dir, inputsPath,
                              interpreterValues);
  result.searchWarmSeconds = parseSearchSeconds(result.placed.compileLog);
  return result;
}

void loom::bench::printPlacementHeader(raw_ostream &os) {
  os << "\nBackend placement: ms per inference with each fixed backend set "
        "and placed by the search (--backends=auto), search seconds cold "
        "(empty cost database) and warm\n";
  os << format(kFormat, "model", "codegen", "onednn", "openblas", "placed",
               "best fixed", "placed/best", "search cold", "search warm",
               "|plc-int|");
}

void loom::bench::printPlacementRow(raw_ostream &os, StringRef model,
                                    const PlacementResult &r) {
  int best = r.bestFixed();
  std::optional<double> ratio = r.placedOverBest();
  std::string error = "n/a";
  if (measured(r.placed) && r.placed.errorVsInterpreter)
    error = std::isinf(r.placed.errorVsInterpreter->maxAbs)
                ? "mismatch"
                : formatv("{0:e1}", r.placed.errorVsInterpreter->maxAbs).str();
  os << format(kFormat, model.str().c_str(), ms(r.fixed[0]).c_str(),
               ms(r.fixed[1]).c_str(), ms(r.fixed[2]).c_str(),
               ms(r.placed).c_str(),
               best < 0 ? "n/a" : kFixedBackendSets[best],
               ratio ? formatv("{0:f2}", *ratio).str().c_str() : "n/a",
               seconds(r.searchColdSeconds).c_str(),
               seconds(r.searchWarmSeconds).c_str(), error.c_str());
  os.flush();
}

std::vector<std::string> loom::bench::placementNotes(const PlacementResult &r) {
  std::vector<std::string> notes;
  for (auto [i, f] : llvm::enumerate(r.fixed))
    if (!measured(f))
      notes.push_back(std::string("--backends=") + kFixedBackendSets[i] +
                      ": " + f.note);
  if (!measured(r.placed))
    notes.push_back("--backends=auto: " + r.placed.note);
  return notes;
}

json::Object loom::bench::placementJSON(const PlacementResult &r) {
  json::Object fixed;
  for (auto [i, f] : llvm::enumerate(r.fixed))
    fixed[kFixedBackendSets[i]] = resultJSON(f);
  int best = r.bestFixed();
  auto number = [](std::optional<double> v) {
    return v ? json::Value(*v) : json::Value(nullptr);
  };
  return json::Object{
      {"fixed", std::move(fixed)},
      {"placed", resultJSON(r.placed)},
      {"best_fixed",
       best < 0 ? json::Value(nullptr) : json::Value(kFixedBackendSets[best])},
      {"placed_over_best", number(r.placedOverBest())},
      {"search_cold_s", number(r.searchColdSeconds)},
      {"search_warm_s", number(r.searchWarmSeconds)}};
}
