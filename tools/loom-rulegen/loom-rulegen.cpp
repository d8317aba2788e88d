//===- loom-rulegen.cpp - Generate and verify graph substitutions ---------===//
//
// Part of Loom. TASO's substitution generator: enumerates small tg graphs,
// fingerprints them, pairs equal ones, proves each pair from operator axioms
// with Z3 (the axioms themselves checked by bounded symbolic evaluation),
// prunes, and writes the rules as MLIR. Also re-verifies a rules file
// (--verify-rules) and documents the axioms and operators.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Pet/Pet.h"
#include "loom/Superopt/RuleGen.h"
#include "loom/Superopt/TrialRules.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include "loom/Interpreter/Kernels.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
namespace cl = llvm::cl;

static cl::OptionCategory cat("loom-rulegen options");

static cl::opt<unsigned> maxOps("max-ops",
                                cl::desc("Largest number of operators in a "
                                         "graph (K; default 3)"),
                                cl::init(3), cl::cat(cat));
static cl::opt<unsigned>
    maxParamOps("max-param-ops",
                cl::desc("Largest number of parameter-preparation operators "
                         "(bn_scale, bn_shift, scale_filter) in a graph, on "
                         "top of K (default 3)"),
                cl::init(3), cl::cat(cat));
static cl::opt<unsigned> maxOutputs("max-outputs",
                                    cl::desc("Largest number of outputs of a "
                                             "graph (default 2)"),
                                    cl::init(2), cl::cat(cat));
static cl::opt<std::string>
    ops("ops",
        cl::desc("Comma-separated operators to enumerate, or 'default' / "
                 "'all' (see --list-ops)"),
        cl::init("default"), cl::cat(cat));
static cl::opt<std::string> outputFile("o", cl::desc("Output rules file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(cat));
static cl::opt<std::string> bytecodeOut(
    "bytecode-out",
    cl::desc("Also write the generated rules as MLIR bytecode to this file "
             "(the form tg-superopt loads fastest)"),
    cl::value_desc("file"), cl::init(""), cl::cat(cat));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of the random fingerprint and "
                                       "test inputs (default 1)"),
                              cl::init(1), cl::cat(cat));
static cl::opt<unsigned>
    timeoutMs("timeout-ms",
              cl::desc("Wall-clock limit of one proof, a backstop behind "
                       "--rlimit (default 20000)"),
              cl::init(20000), cl::cat(cat));
static cl::opt<unsigned>
    rlimit("rlimit",
           cl::desc("Z3 resource limit of one proof (deterministic; default "
                    "3000000)"),
           cl::init(3000000), cl::cat(cat));
static cl::list<std::string>
    extraAxioms("axiom",
                cl::desc("An additional axiom, 'name: lhs = rhs where "
                         "x:[a,b] ...' (it is checked like the others)"),
                cl::cat(cat));
static cl::opt<bool> noAxiomCheck("no-axiom-check",
                                  cl::desc("Skip the bounded check of the "
                                           "axioms"),
                                  cl::init(false), cl::cat(cat));
static cl::opt<bool> checkAxiomsOnly("check-axioms",
                                     cl::desc("Only check the axioms and "
                                              "print the result"),
                                     cl::init(false), cl::cat(cat));
static cl::opt<bool> checkTrialRules(
    "check-trial-rules",
    cl::desc("Only check the rules of --tg-fuse-trials the vocabulary can "
             "state (and each --axiom, as one more such rule) by bounded "
             "symbolic evaluation, and print the result"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string>
    verifyFile("verify-rules",
               cl::desc("Re-verify the rules of this file instead of "
                        "generating (proof and numeric check per rule)"),
               cl::value_desc("file"), cl::init(""), cl::cat(cat));
static cl::opt<bool> listAxioms("list-axioms",
                                cl::desc("Print the axioms as Markdown"),
                                cl::init(false), cl::cat(cat));
static cl::opt<bool> listOps("list-ops", cl::desc("Print the operator names"),
                             cl::init(false), cl::cat(cat));
static cl::opt<bool> quiet("quiet", cl::desc("No progress on stderr"),
                           cl::init(false), cl::cat(cat));
static cl::opt<bool>
    showFailures("show-failures",
                 cl::desc("Print every candidate that was not proved, and "
                          "every rule that could not be generalised"),
                 cl::init(false), cl::cat(cat));
static cl::opt<bool> noGeneralize(
    "no-generalize",
    cl::desc("Keep rules at the enumeration's shapes (by default each is "
             "restated, and re-proved, at witness shapes whose independent "
             "dimensions are distinct)"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> noRewriteImplication(
    "no-rewrite-implication",
    cl::desc("Verify and prune rules with a side of more than 3 ops with "
             "Z3 alone (by default each is first derived, if it can be, by "
             "rewriting with the smaller rules kept, and pruned by "
             "rewriting)"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> partial(
    "partial",
    cl::desc("Generate PET's partially equivalent rules instead (split-to-"
             "batch of conv, avgpool, maxpool; docs/Superopt/PET.md): each "
             "with its equal and wrong output boxes, proved, and its "
             "corrected program"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> partialOps(
    "partial-ops",
    cl::desc("Comma-separated operators of --partial (default: conv,"
             "conv_relu,avgpool,maxpool)"),
    cl::init("conv,conv_relu,avgpool,maxpool"), cl::cat(cat));
static cl::opt<unsigned>
    trials("trials",
           cl::desc("--partial: independent evaluations per proved box "
                    "(default 4)"),
           cl::init(4), cl::cat(cat));
static cl::opt<std::string> verifyPartialFile(
    "verify-partial",
    cl::desc("Re-prove the regions and corrections of a partial rules file"),
    cl::value_desc("file"), cl::init(""), cl::cat(cat));

namespace {

/// Options whose names libLLVM registers too (Polly's `-threads`, the
/// statistics' `-stats-json`): the library's are unregistered and this
/// tool's registered in their place, in main(), before parsing.
struct ClashingOptions {
  static void unregister(StringRef name) {
    auto &registered = cl::getRegisteredOptions();
    auto it = registered.find(name);
    if (it != registered.end())
      it->second->removeArgument();
  }
  ClashingOptions() {
    unregister("threads");
    unregister("stats-json");
    threads = std::make_unique<cl::opt<unsigned>>(
        "threads", cl::desc("Worker threads (default 2)"), cl::init(2),
        cl::value_desc("n"), cl::cat(cat));
    statsJson = std::make_unique<cl::opt<std::string>>(
        "stats-json", cl::desc("Write statistics as JSON to this file"),
        cl::value_desc("file"), cl::init(""), cl::cat(cat));
  }
  std::unique_ptr<cl::opt<unsigned>> threads;
  std::unique_ptr<cl::opt<std::string>> statsJson;
};
ClashingOptions *clashing = nullptr;

RuleGenOptions optionsFromFlags() {
  RuleGenOptions o;
  o.ops = ops;
  o.maxOps = maxOps;
  o.maxParamOps = maxParamOps;
  o.maxOutputs = maxOutputs;
  o.seed = seed;
  o.threads = *clashing->threads;
  o.timeoutMs = timeoutMs;
  o.rlimit = rlimit;
  o.checkAxioms = !noAxiomCheck;
  o.generalize = !noGeneralize;
  o.rewriteImplication = !noRewriteImplication;
  o.showFailures = showFailures;
  o.extraAxioms.assign(extraAxioms.begin(), extraAxioms.end());
  o.log = quiet ? nullptr : &llvm::errs();
  return o;
}

int printAxioms() {
  llvm::outs() << "<!-- Generated by `loom-rulegen --list-axioms`; do not "
                  "edit. -->\n\n# Axioms of loom-rulegen\n\n"
                  "Each axiom holds for every shape assignment that types "
                  "its left side; `loom-rulegen` checks each one by "
                  "bounded symbolic evaluation before using it. The "
                  "language is described in "
                  "`include/loom/Superopt/Axioms.h`.\n\n"
                  "| axiom | equation | where | meaning |\n"
                  "| --- | --- | --- | --- |\n";
  for (const Axiom &a : builtinAxioms()) {
    std::string where;
    for (unsigned v = 0; v < a.vars.size(); ++v) {
      const ShapePattern &p = a.varShapes[v];
      std::string s;
      for (unsigned d = 0; d < p.dims.size(); ++d) {
        std::string dim;
        for (auto [sym, c] : p.dims[d].terms)
          dim += (dim.empty() ? (c < 0 ? "-" : "") : (c < 0 ? "-" : "+")) +
                 a.symbols[sym];
        if (p.dims[d].constant || dim.empty())
          dim += (dim.empty() ? "" : "+") + std::to_string(p.dims[d].constant);
        s += (d ? "," : "") + dim;
      }
      if (p.rest >= 0)
        s += std::string(p.dims.empty() ? "" : ",") + "*" + a.lists[p.rest];
      where += (v ? " " : "") + a.vars[v] + ":[" + s + "]" +
               (p.nonNegative ? ">=0" : "");
    }
    llvm::outs() << "| `" << a.name << "` | `" << a.text << "` | `"
                 << (where.empty() ? "-" : where) << "` | " << a.doc << " |\n";
  }
  return 0;
}

int printOps() {
  for (auto &[name, desc] : Universe::allOpNames())
    llvm::outs() << name << ": " << desc << "\n";
  return 0;
}

/// Checks every equation of \p axioms by bounded symbolic evaluation and
/// prints a line per equation; 1 when one fails (or they did not parse).
int printAxiomCheck(MLIRContext &context,
                    llvm::Expected<std::vector<Axiom>> parsed,
                    llvm::StringRef what) {
  if (!parsed) {
    llvm::errs() << "loom-rulegen: error: "
                 << llvm::toString(parsed.takeError()) << "\n";
    return 1;
  }
  const std::vector<Axiom> &axioms = *parsed;
  RuleGenOptions o = optionsFromFlags();
  std::vector<unsigned> ids(axioms.size());
  for (unsigned i = 0; i < ids.size(); ++i)
    ids[i] = i;
  auto u = Universe::createForInputs(&context, {}, o.seed);
  AxiomCheckOptions co;
  co.threads = o.threads;
  int failures = 0;
  for (const AxiomCheckResult &r : checkAxioms(axioms, ids, *u, co)) {
    llvm::outs() << (r.proved ? "ok     " : "FAILED ") << r.name << " ("
                 << r.instances << " shapes)";
    if (!r.proved) {
      llvm::outs() << ": " << r.failure;
      ++failures;
    }
    llvm::outs() << "\n";
  }
  if (failures)
    llvm::errs() << "loom-rulegen: error: " << failures << " " << what
                 << "(s) failed the bounded check\n";
  return failures ? 1 : 0;
}

int runAxiomCheck(MLIRContext &context) {
  return printAxiomCheck(context, axiomsWith(optionsFromFlags().extraAxioms),
                         "axiom");
}

/// The fused-trial rules (TrialRules.h) and the --axiom ones, checked.
int runTrialRuleCheck(MLIRContext &context) {
  return printAxiomCheck(context,
                         trialFusionRules(optionsFromFlags().extraAxioms),
                         "fused-trial rule");
}

/// Checks the axioms given with --axiom by bounded symbolic evaluation before
/// any work uses them, so that a wrong one stops the run at once with its
/// counterexample (the generator checks every axiom again; --verify-rules
/// would otherwise trust them). The built-in axioms are checked by
/// --check-axioms, by the generator and by the test suite.
int checkExtraAxioms(MLIRContext &context, const RuleGenOptions &o) {
  if (o.extraAxioms.empty() || !o.checkAxioms)
    return 0;
  auto axioms = axiomsWith(o.extraAxioms);
  if (!axioms) {
    llvm::errs() << "loom-rulegen: error: "
                 << llvm::toString(axioms.takeError()) << "\n";
    return 1;
  }
  std::vector<unsigned> ids;
  for (unsigned i = builtinAxioms().size(); i < axioms->size(); ++i)
    ids.push_back(i);
  auto u = Universe::createForInputs(&context, {}, o.seed);
  AxiomCheckOptions co;
  co.threads = o.threads;
  int failures = 0;
  for (const AxiomCheckResult &r : checkAxioms(*axioms, ids, *u, co)) {
    if (r.proved)
      continue;
    llvm::errs() << "loom-rulegen: error: axiom '" << r.name
                 << "' failed its bounded check " << r.failure << "\n";
    ++failures;
  }
  return failures ? 1 : 0;
}

pet::PartialGenOptions partialOptionsFromFlags() {
  pet::PartialGenOptions o;
  o.seed = seed;
  o.trials = trials;
  o.ops.clear();
  for (StringRef op : llvm::split(StringRef(partialOps), ','))
    o.ops.push_back(op.trim().str());
  o.log = quiet ? nullptr : &llvm::errs();
  return o;
}

/// --partial: PET's generator.
int runPartial(MLIRContext &context) {
  if (trials == 0) {
    llvm::errs() << "loom-rulegen: error: --trials must be at least 1\n";
    return 1;
  }
  std::string error;
  auto out = mlir::openOutputFile(outputFile, &error);
  if (!out) {
    llvm::errs() << "loom-rulegen: error: " << error << "\n";
    return 1;
  }
  pet::PartialGenStats stats;
  auto rules = pet::generatePartialRules(&context, partialOptionsFromFlags(),
                                         stats);
  if (failed(rules))
    return 1;
  (*rules)->print(out->os());
  out->os() << "\n";
  out->keep();
  if (!quiet)
    llvm::errs() << llvm::formatv(
        "loom-rulegen --partial: {0} instances: {1} do not line up, {2} "
        "fully equivalent, {3} wrong everywhere, {4} partial: {5} proved "
        "({6} boxes), {7} tested only (not multi-linear), {8} not proved, "
        "{9} regions unlike the index arithmetic; {10:f2} s\n",
        stats.enumerated, stats.shapeMismatch, stats.fullyEquivalent,
        stats.nowhereEqual, stats.partial, stats.proved, stats.boxesProved,
        stats.tested, stats.unproved, stats.regionMismatch, stats.seconds);
  return stats.unproved || stats.regionMismatch ? 1 : 0;
}

/// Parses \p path into \p module with diagnostics pointing into it.
OwningOpRef<ModuleOp> parseFile(MLIRContext &context, StringRef path,
                                llvm::SourceMgr &sourceMgr) {
  std::string error;
  auto file = mlir::openInputFile(path, &error);
  if (!file) {
    llvm::errs() << "loom-rulegen: error: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

/// --verify-partial.
int runVerifyPartial(MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseFile(context, verifyPartialFile, sourceMgr);
  if (!module)
    return 1;
  pet::PartialGenOptions o = partialOptionsFromFlags();
  o.log = &llvm::outs();
  FailureOr<unsigned> bad = pet::verifyPartialRules(*module, o);
  return failed(bad) || *bad ? 1 : 0;
}

int runVerify(MLIRContext &context) {
  if (int rc = checkExtraAxioms(context, optionsFromFlags()))
    return rc;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseFile(context, verifyFile, sourceMgr);
  if (!module)
    return 1;
  auto verdicts = verifyRules(*module, optionsFromFlags());
  if (failed(verdicts))
    return 1;
  unsigned bad = 0;
  for (const RuleVerdict &v : *verdicts) {
    llvm::outs() << "rule @" << v.name << ": " << v.status;
    if (v.status == "proved") {
      llvm::outs() << " (";
      for (unsigned i = 0; i < v.axioms.size(); ++i)
        llvm::outs() << (i ? ", " : "") << v.axioms[i];
      llvm::outs() << ")";
    } else {
      ++bad;
      if (!v.detail.empty())
        llvm::outs() << ": " << v.detail;
    }
    llvm::outs() << "\n";
  }
  llvm::outs() << verdicts->size() - bad << " of " << verdicts->size()
               << " rules proved\n";
  return bad ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  ClashingOptions clashingOptions;
  clashing = &clashingOptions;
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-rulegen: generate, verify and prune tg graph substitutions\n");

  DialectRegistry registry;
  registry.insert<tg::TGDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point into the rules file; the generic form of the whole
  // offending rule module adds nothing.
  context.printOpOnDiagnostic(false);
  interp::setNumThreads(1);

  if (listAxioms)
    return printAxioms();
  if (listOps)
    return printOps();
  if (checkAxiomsOnly)
    return runAxiomCheck(context);
  if (checkTrialRules)
    return runTrialRuleCheck(context);
  if (!verifyFile.empty())
    return runVerify(context);
  if (!verifyPartialFile.empty())
    return runVerifyPartial(context);
  if (partial)
    return runPartial(context);

  RuleGenOptions options = optionsFromFlags();
  if (int rc = checkExtraAxioms(context, options))
    return rc;
  // Open the outputs before a run that may take an hour, not after it; a
  // file not kept (the run failed) is removed.
  std::string error;
  auto out = mlir::openOutputFile(outputFile, &error);
  if (!out) {
    llvm::errs() << "loom-rulegen: error: " << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> bytecode;
  if (!bytecodeOut.empty()) {
    bytecode = mlir::openOutputFile(bytecodeOut, &error);
    if (!bytecode) {
      llvm::errs() << "loom-rulegen: error: " << error << "\n";
      return 1;
    }
  }
  std::unique_ptr<llvm::ToolOutputFile> json;
  if (!clashing->statsJson->empty()) {
    json = mlir::openOutputFile(*clashing->statsJson, &error);
    if (!json) {
      llvm::errs() << "loom-rulegen: error: " << error << "\n";
      return 1;
    }
  }
  auto result = generateRules(&context, options);
  if (!result) {
    llvm::errs() << "loom-rulegen: error: "
                 << llvm::toString(result.takeError()) << "\n";
    return 1;
  }
  if (showFailures)
    for (const Failure &f : result->failures)
      llvm::errs() << f.status << ": " << f.source << "  ==>  " << f.target
                   << (f.detail.empty() ? "" : "  [" + f.detail + "]") << "\n";

  OpPrintingFlags flags;
  result->rules->print(out->os(), flags);
  out->os() << "\n";
  out->keep();
  if (bytecode) {
    if (failed(mlir::writeBytecodeToFile(*result->rules, bytecode->os()))) {
      llvm::errs() << "loom-rulegen: error: cannot write bytecode to "
                   << bytecodeOut << "\n";
      return 1;
    }
    bytecode->keep();
  }
  if (json) {
    writeStatsJson(json->os(), options, result->stats);
    json->keep();
  }
  return 0;
}
