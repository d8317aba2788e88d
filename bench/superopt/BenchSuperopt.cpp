//===- BenchSuperopt.cpp - Both search engines on the model zoo -----------===//
//
// Part of Loom. For every zoo model (built by loom-zoo at the papers'
// shapes) and both engines of --tg-superopt (TASO's backtracking search,
// equality saturation), with the same rules and cost model: the cost before
// and after, the ratio, the search time, and eqsat against backtracking side
// by side. Prints a table; writes JSON with --json.
//
//   loom-bench-superopt [--models a,b] [--target h100] [--rules FILE]
//                       [--json out.json] [--zoo PATH/loom-zoo]
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Search/Optimize.h"
#include "loom/Search/Rule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <thread>

using namespace mlir;
using namespace loom;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory benchCat("loom-bench-superopt options");

cl::opt<std::string> modelList(
    "models", cl::desc("Comma-separated zoo models (default: all of them)"),
    cl::init("resnet50,resnext50-32x4d,inception-v3,squeezenet1.1,nasnet-a,"
             "nasrnn,bert-base,bert-1layer,multimodal,dlrm,candle-uno"),
    cl::cat(benchCat));
cl::opt<std::string> target("target", cl::desc("Cost model: cpu, h100, h200"),
                            cl::init("h100"), cl::cat(benchCat));
cl::opt<std::string>
    rulesFile("rules",
              cl::desc("Rules file (default: the generator's default set, "
                       "else the hand-written fixture of the tests)"),
              cl::init(""), cl::cat(benchCat));
cl::opt<std::string> jsonFile("json", cl::desc("Write the results as JSON"),
                              cl::init(""), cl::cat(benchCat));
cl::opt<std::string> zooTool("zoo",
                             cl::desc("The loom-zoo executable "
                                      "(default: beside this one)"),
                             cl::init(""), cl::cat(benchCat));
cl::opt<std::string> workDir("workdir",
                             cl::desc("Where the models are written "
                                      "(default: a temporary directory)"),
                             cl::init(""), cl::cat(benchCat));
cl::opt<unsigned> budget("budget", cl::desc("Backtracking budget"),
                         cl::init(1000), cl::cat(benchCat));
cl::opt<double> timeLimit("time-limit",
                          cl::desc("Seconds per function per engine"),
                          cl::init(25), cl::cat(benchCat));
cl::opt<double> ilpTimeLimit("ilp-time-limit",
                             cl::desc("Seconds for eqsat's ILP extraction"),
                             cl::init(2), cl::cat(benchCat));
cl::opt<bool> ruleIndex("rule-index",
                        cl::desc("Match only the rules whose op classes the "
                                 "graph has (default; =false: every rule)"),
                        cl::init(true), cl::cat(benchCat));

std::string loadAverage() {
  // /proc files report size 0: read them as a stream.
  std::ifstream in("/proc/loadavg");
  std::string line;
  if (!in || !std::getline(in, line))
    return "unknown";
  return llvm::StringRef(line).trim().str();
}

struct EngineResult {
  double before = 0, after = 0, seconds = 0, loadSeconds = 0;
  std::string stop;
  llvm::json::Object report;
};

/// Reports `message`; returns the exit code of a failure.
int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-bench-superopt: " << message << "\n";
  return 1;
}

/// The loom-zoo executable: --zoo, or the one beside this executable.
std::string zooPath(const char *argv0) {
  if (!zooTool.empty())
    return zooTool;
  std::string self = llvm::sys::fs::getMainExecutable(argv0, (void *)&fail);
  llvm::SmallString<256> p(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(p, "loom-zoo");
  return std::string(p);
}

/// The rules file: --rules, else the generator's default set when it was
/// built, else the hand-written fixture of the tests.
std::string rulesPath() {
  if (!rulesFile.empty())
    return rulesFile;
  std::string rules = search::defaultRulesPath();
  if (rules.empty() || !llvm::sys::fs::exists(rules))
    rules = LOOM_BENCH_FIXTURE_RULES;
  return rules;
}

/// The directory the models are written to: --workdir, else a new temporary
/// one.
llvm::Expected<std::string> workDirectory() {
  std::string dir = workDir;
  if (dir.empty()) {
    llvm::SmallString<128> tmp;
    if (llvm::sys::fs::createUniqueDirectory("loom-bench-superopt", tmp))
      return llvm::createStringError("cannot create a temporary directory");
    dir = std::string(tmp);
  }
  llvm::sys::fs::create_directories(dir);
  return dir;
}

/// The three searches compared, in the order of the table.
enum Engine {
  /// TASO's backtracking search.
  Backtrack,
  /// Eqsat with the pass's defaults (rounds of saturation and extraction).
  Eqsat,
  /// Eqsat with one round (one e-graph, as TENSAT).
  EqsatOneRound,
  NumEngines
};

/// Runs `engine` on the module in `file` (zoo model `model`) with the rules
/// of `rulesPath`; adds the ops of its functions to `ops` for Backtrack. A
/// fresh context, cost model and memo per engine, so that neither profits
/// from the other's work.
llvm::Expected<EngineResult> runEngine(Engine engine, StringRef model,
                                       const std::string &file,
                                       const std::string &rulesPath,
                                       size_t &ops) {
  MLIRContext ctx;
  ctx.loadDialect<tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(file, &ctx);
  if (!module)
    return llvm::createStringError("cannot parse " + file);
  auto t = cost::lookupTarget(target);
  if (!t)
    return t.takeError();
  std::unique_ptr<cost::CostModel> costModel = cost::createRooflineModel(*t);
  search::SearchContext sc(&ctx, costModel.get());
  EngineResult r;
  search::Stopwatch loadClock;
  FailureOr<search::RuleSet> ruleSet =
      search::loadRules(sc, rulesPath, search::RuleLoadOptions());
  r.loadSeconds = loadClock.seconds();
  if (failed(ruleSet))
    return llvm::createStringError("cannot load rules from " + rulesPath);
  search::SuperoptOptions options;
  options.engine = engine == Backtrack ? "backtrack" : "eqsat";
  options.backtrack.budget = budget;
  options.backtrack.timeLimit = timeLimit;
  options.eqsat.timeLimit = timeLimit;
  options.eqsat.ilpTimeLimit = ilpTimeLimit;
  options.backtrack.ruleIndex = ruleIndex;
  options.eqsat.ruleIndex = ruleIndex;
  if (engine == EqsatOneRound)
    options.eqsat.rounds = 1;
  std::vector<search::FunctionResult> fr =
      search::superoptimize(sc, *ruleSet, *module, options);
  for (const search::FunctionResult &f : fr) {
    if (!f.skipped.empty())
      return llvm::createStringError(model + ": @" + f.function +
                                     " skipped: " + f.skipped);
    r.before += f.outcome.costBefore;
    r.after += f.outcome.costAfter;
    r.seconds += f.outcome.seconds;
    r.stop = f.outcome.stopReason;
    ops += engine == Backtrack ? f.opsBefore : 0;
  }
  r.report = search::makeReport(sc, *ruleSet, options, fr);
  return r;
}

/// One model's results side by side: the ratios of eqsat (full and one
/// round) to backtracking.
struct Comparison {
  Comparison(const EngineResult &bt, const EngineResult &eq,
             const EngineResult &lo)
      : btRatio(bt.after > 0 ? bt.before / bt.after : 1),
        eqRatio(eq.after > 0 ? eq.before / eq.after : 1),
        quality(bt.after > 0 ? eq.after / bt.after : 1),
        localQuality(bt.after > 0 ? lo.after / bt.after : 1),
        speedup(speedupOf(bt, eq)), localSpeedup(speedupOf(bt, lo)) {}

  /// Backtracking time over `r`'s. A speedup between two searches that both
  /// end at once (no rule matches) means nothing: 0 ("n/a") when both take
  /// less than 10 ms.
  static double speedupOf(const EngineResult &bt, const EngineResult &r) {
    return bt.seconds < 0.01 && r.seconds < 0.01 ? 0.0
           : r.seconds > 0                       ? bt.seconds / r.seconds
                                                 : 0.0;
  }

  double btRatio, eqRatio, quality, localQuality, speedup, localSpeedup;
};

/// The settings, the machine and the column heads of the table.
void printTableHeader(const std::string &rules, const std::string &loadBefore) {
  llvm::outs() << "tg-superopt engines on the zoo: target " << target
               << ", rules " << rules << "\n"
               << "machine: " << std::thread::hardware_concurrency()
               << " hardware threads, load average " << loadBefore << "\n\n";
  llvm::outs() << llvm::format(
      "%-16s %6s %11s | %11s %7s %8s | %11s %7s %8s | %8s %8s | %8s %8s "
      "%8s\n",
      "model", "ops", "cost(ms)", "bt(ms)", "bt x", "bt s", "eqsat(ms)", "eq x",
      "eq s", "eq/bt", "speedup", "1rnd/bt", "1rnd s", "speedup");
}

/// One model's line of the table.
void printTableRow(StringRef model, size_t ops, const EngineResult &bt,
                   const EngineResult &eq, const EngineResult &lo,
                   const Comparison &c) {
  auto fmtSpeedup = [](double x) {
    return x > 0 ? llvm::formatv("{0:f1}", x).str() : std::string("n/a");
  };
  llvm::outs() << llvm::format(
      "%-16s %6zu %11.4f | %11.4f %7.3f %8.2f | %11.4f %7.3f %8.2f | "
      "%8.4f %8s | %8.4f %8.2f %8s\n",
      model.str().c_str(), ops, bt.before * 1e3, bt.after * 1e3, c.btRatio,
      bt.seconds, eq.after * 1e3, c.eqRatio, eq.seconds, c.quality,
      fmtSpeedup(c.speedup).c_str(), c.localQuality, lo.seconds,
      fmtSpeedup(c.localSpeedup).c_str());
  llvm::outs().flush();
}

/// The JSON of one engine's result (with its cost ratio when given).
llvm::json::Object engineJSON(const EngineResult &r,
                              std::optional<double> ratio) {
  llvm::json::Object o{{"cost_after", r.after},
                       {"seconds", r.seconds},
                       {"stop", r.stop},
                       {"report", llvm::json::Object(r.report)}};
  if (ratio)
    o["ratio"] = *ratio;
  return o;
}

/// One model's object of the --json file.
llvm::json::Object modelJSON(StringRef model, size_t ops,
                             const EngineResult &bt, const EngineResult &eq,
                             const EngineResult &lo, const Comparison &c) {
  return llvm::json::Object{
      {"model", model},
      {"ops", int64_t(ops)},
      {"cost_before", bt.before},
      {"backtrack", engineJSON(bt, c.btRatio)},
      {"eqsat", engineJSON(eq, c.eqRatio)},
      {"eqsat_one_round", engineJSON(lo, std::nullopt)},
      {"rules_load_seconds", bt.loadSeconds},
      {"eqsat_over_backtrack_cost", c.quality},
      {"backtrack_over_eqsat_seconds", c.speedup},
      {"eqsat_one_round_over_backtrack_cost", c.localQuality},
      {"backtrack_over_eqsat_one_round_seconds", c.localSpeedup}};
}

/// The rule loading time and the legend of the table.
void printTableFooter(const llvm::json::Array &rows,
                      const std::string &loadAfter) {
  if (!rows.empty())
    if (const llvm::json::Object *first = rows.front().getAsObject())
      llvm::outs() << "\nrules loaded in "
                   << llvm::formatv(
                          "{0:f3}",
                          first->getNumber("rules_load_seconds").value_or(0))
                   << " s (parse + patterns, per engine run)";
  llvm::outs() << "\ncost in ms of the " << target
               << " roofline; 'x' = cost before / after; eq/bt = eqsat cost "
                  "/ backtracking cost (<= 1: eqsat as good or better); "
                  "speedup = backtracking time / eqsat time (n/a: both under "
                  "10 ms); 1 round = eqsat with a single e-graph (rounds=1). "
                  "Load average after: "
               << loadAfter << "\n";
}

/// Writes --json: the settings, the machine and the rows.
llvm::Error writeJSON(llvm::json::Array rows, const std::string &rules,
                      const std::string &loadBefore,
                      const std::string &loadAfter) {
  std::error_code ec;
  llvm::raw_fd_ostream os(jsonFile, ec);
  if (ec)
    return llvm::createStringError("cannot write " + jsonFile + ": " +
                                   ec.message());
  llvm::json::Object root{
      {"target", target},
      {"rules", rules},
      {"budget", int64_t(budget)},
      {"time_limit", double(timeLimit)},
      {"ilp_time_limit", double(ilpTimeLimit)},
      {"hardware_threads", int64_t(std::thread::hardware_concurrency())},
      {"load_average_before", loadBefore},
      {"load_average_after", loadAfter},
      {"models", std::move(rows)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCat);
  cl::ParseCommandLineOptions(argc, argv,
                              "Loom: tg-superopt engines on the model zoo\n");

  std::string zoo = zooPath(argv[0]);
  if (!llvm::sys::fs::can_execute(zoo))
    return fail("cannot find loom-zoo at '" + zoo + "' (use --zoo)");
  std::string rules = rulesPath();
  llvm::Expected<std::string> dir = workDirectory();
  if (!dir)
    return fail(llvm::toString(dir.takeError()));

  std::string loadBefore = loadAverage();
  printTableHeader(rules, loadBefore);
  llvm::json::Array rows;
  SmallVector<StringRef> models;
  StringRef(modelList).split(models, ',', -1, false);
  for (StringRef model : models) {
    model = model.trim();
    std::string file = (llvm::Twine(*dir) + "/" + model + ".mlir").str();
    std::vector<StringRef> args = {zoo, model, "-o", file};
    std::string err;
    if (llvm::sys::ExecuteAndWait(zoo, args, std::nullopt, {}, 0, 0, &err) !=
        0) {
      llvm::errs() << "loom-bench-superopt: loom-zoo " << model
                   << " failed, skipped: " << err << "\n";
      continue;
    }
    EngineResult results[NumEngines];
    size_t ops = 0;
    for (int e = 0; e < NumEngines; ++e) {
      llvm::Expected<EngineResult> r =
          runEngine(Engine(e), model, file, rules, ops);
      if (!r)
        return fail(llvm::toString(r.takeError()));
      results[e] = std::move(*r);
    }
    const EngineResult &bt = results[Backtrack], &eq = results[Eqsat],
                       &lo = results[EqsatOneRound];
    Comparison c(bt, eq, lo);
    printTableRow(model, ops, bt, eq, lo, c);
    rows.push_back(modelJSON(model, ops, bt, eq, lo, c));
  }
  std::string loadAfter = loadAverage();
  printTableFooter(rows, loadAfter);
  if (!jsonFile.empty())
    if (llvm::Error err =
            writeJSON(std::move(rows), rules, loadBefore, loadAfter))
      return fail(llvm::toString(std::move(err)));
  return 0;
}
