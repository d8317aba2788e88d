//===- loom-compile.cpp - Loom's ahead-of-time compiler
//--------------------===//
//
// Part of Loom. Compiles a tg module (.mlir) or an ONNX model (.onnx,
// .onnxtext) into one shared object for the runtime (docs/Artifact.md,
// docs/tools/loom-compile.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"
#include "loom/Compiler/Compiler.h"
#include "loom/Compiler/Passes.h"
#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Cost/CostModel.h"
#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/Transforms/CacheInPlace.h"
#include "loom/Dialect/TG/Transforms/CacheParallel.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Transforms/PipelineStages.h"
#include "loom/Dialect/TG/Transforms/TensorParallel.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Pet/Passes.h"
#include "loom/Pipeline/RankPrograms.h"
#include "loom/Placement/KeepFaster.h"
#include "loom/Placement/Passes.h"
#include "loom/Placement/Placement.h"
#include "loom/Search/BatchProducts.h"
#include "loom/Search/Optimize.h"
#include "loom/Search/Passes.h"
#include "loom/Search/Rule.h"
#include "loom/Support/Files.h"
#include "loom/Target/Target.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace loom;
namespace cl = llvm::cl;

static cl::OptionCategory compileCat("loom-compile options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::Required, cl::cat(compileCat));
static cl::opt<std::string> outputFile("o", cl::desc("The artifact to write"),
                                       cl::value_desc("model.so"), cl::Required,
                                       cl::cat(compileCat));
static cl::opt<std::string> targetSpelling(
    "target",
    cl::desc("What to generate code for: cpu (default: this machine's CPU "
             "and features) or cpu:NAME, NAME an LLVM CPU name (znver4, "
             "skylake-avx512, x86-64-v3, ...) or native"),
    cl::value_desc("NAME[:OPTIONS]"), cl::init("cpu"), cl::cat(compileCat));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("The spelling before --target: --cpu=NAME is "
                 "--target=cpu:NAME"),
        cl::value_desc("NAME"), cl::cat(compileCat));
static cl::opt<std::string> dumpKernels(
    "dump-kernels",
    cl::desc("Write into this directory the outlined kernels "
             "(kernels.mlir), the target's kernel pipeline as loom-opt "
             "spells it (pipeline.txt) and what it made of them "
             "(kernels.lowered.mlir)"),
    cl::value_desc("DIR"), cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> weightsStorage(
    "weights",
    cl::desc("Where the artifact keeps its weights: embedded (in the .so, "
             "default) or external (a safetensors file beside it, "
             "memory-mapped at load)"),
    cl::init("embedded"), cl::cat(compileCat));
static cl::opt<std::string>
    weightsFile("weights-file",
                cl::desc("The model's weights (default: the module's "
                         "tg.weights attribute)"),
                cl::init(""), cl::cat(compileCat));
static cl::opt<std::string>
    convBackend("conv-backend",
                cl::desc("Spells the entry conv:<name> of --backends, put "
                         "before the default list (convolutions, pools, "
                         "channel concats and the adds between them)"),
                cl::init(""), cl::cat(compileCat));
static cl::opt<std::string>
    matmulBackend("matmul-backend",
                  cl::desc("Spells the entry matmul:<name> of --backends, "
                           "put before the default list (matrix products)"),
                  cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> backendSet(
    "backends",
    cl::desc("auto: place every fragment on the backend that runs it "
             "fastest (a search, docs/Placement.md); or a backend list in "
             "priority order (docs/Placement.md): registered backends for "
             "every op they run (openblas,onednn; codegen) or for a class "
             "of ops (conv:onednn,matmul:openblas); generated code takes "
             "what no entry gives a library. Default: "
             "conv:onednn,matmul:onednn,loomrt"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> costModel(
    "cost",
    cl::desc("--backends=auto: measured (fragments compiled and timed here, "
             "default) or analytic (rooflines)"),
    cl::init("measured"), cl::cat(compileCat));
static cl::opt<std::string> costTarget(
    "cost-target",
    cl::desc("--backends=auto with --cost=analytic: the roofline fragments "
             "are priced on (cpu, h100, h200; default: cpu for a CPU target, "
             "h100 for a GPU one)"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> costDb(
    "cost-db",
    cl::desc("The cache of measured times: --backends=auto's fragments "
             "and whole trials (default: $XDG_CACHE_HOME/loom/"
             "fragment-costs.json or ~/.cache/loom/fragment-costs.json), and "
             "--superopt's end-to-end runs (only when given)"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<double> searchBudget(
    "search-budget",
    cl::desc("--backends=auto: seconds the measurement may take (the rest "
             "is priced by rooflines)"),
    cl::init(60), cl::cat(compileCat));
static cl::opt<bool> endToEnd(
    "end-to-end",
    cl::desc("--backends=auto with measured costs: also compile and time the "
             "whole model under the cover, each fixed backend set and "
             "runner-up moves, and keep the fastest (default on; "
             "--end-to-end=false for the cover alone)"),
    cl::init(true), cl::cat(compileCat));
static cl::opt<std::string> placementIn(
    "placement-in",
    cl::desc("--backends=auto: apply this placement (JSON) without a search"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> placementOut(
    "placement-out", cl::desc("--backends=auto: write the placement (JSON)"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<std::string> placementReport(
    "placement-report",
    cl::desc("--backends=auto: print every fragment with its backend, time "
             "and alternatives to this file (-: stderr)"),
    cl::init(""), cl::cat(compileCat));
static cl::opt<int> numThreads(
    "num-threads",
    cl::desc("Threads the measured fragments (--backends=auto) and the "
             "end-to-end runs (--superopt, --backends=auto) use (0: all; use "
             "the thread count the model will run with)"),
    cl::init(0), cl::cat(compileCat));
static cl::list<std::string>
    dims("dim", cl::desc("ONNX input: size of a symbolic input dimension"),
         cl::value_desc("NAME=VALUE"), cl::cat(compileCat));
static cl::opt<bool>
    printSchedule("print-schedule",
                  cl::desc("Print each entry's steps and memory plan"),
                  cl::cat(compileCat));
static cl::opt<std::string> stepSources(
    "step-sources",
    cl::desc("Write what each step computes (its tg ops and the names of "
             "the source nodes they came from) as JSON to this file; "
             "loom-bench-cpu --per-op matches profiles to ONNX nodes with it"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(compileCat));
static cl::OptionCategory trainCategory(
    "The optimizer step of a partitioned module's ranks (docs/Pipelines.md "
    "\"The optimizer step\")");
static cl::opt<std::string> optimizerKind(
    "optimizer", cl::init("none"), cl::cat(trainCategory),
    cl::desc("none (the step's results are the gradients), sgd or adam: each "
             "rank ends the step by updating its stages' parameters"));
static cl::opt<double> learningRate("lr", cl::init(0.01),
                                    cl::cat(trainCategory),
                                    cl::desc("Learning rate"));
static cl::opt<double> momentum("momentum", cl::init(0.0),
                                cl::cat(trainCategory),
                                cl::desc("SGD's momentum"));
static cl::opt<double> beta1("beta1", cl::init(0.9), cl::cat(trainCategory),
                             cl::desc("Adam's beta1"));
static cl::opt<double> beta2("beta2", cl::init(0.999), cl::cat(trainCategory),
                             cl::desc("Adam's beta2"));
static cl::opt<double> epsilon("eps", cl::init(1e-8), cl::cat(trainCategory),
                               cl::desc("Adam's epsilon"));
static cl::opt<double> weightDecay("weight-decay", cl::init(0.0),
                                   cl::cat(trainCategory),
                                   cl::desc("L2 weight decay"));

static cl::opt<bool> timeStages("time-stages",
                                cl::desc("Print the time of each stage"),
                                cl::cat(compileCat));
static cl::opt<bool> timePhases(
    "time-phases",
    cl::desc("At the end, print on stderr the wall time of every phase of "
             "the compilation as a tree: reading the input, tg-superopt's "
             "rule loading and search, each version's compile (every pass "
             "of the fragment and kernel pipelines, the LLVM optimisation, "
             "object emission, linking), and the end-to-end runs; unlike "
             "--time-stages the versions still compile concurrently, so "
             "their times overlap"),
    cl::cat(compileCat));
static cl::opt<std::string> superopt(
    "superopt",
    cl::desc("Rewrite the graph first with tg-superopt's proved "
             "substitutions: eqsat (default), backtrack or none. When a "
             "rule fires, the graph as written and the rewritten one are "
             "both compiled, run in turn on the same random inputs here, "
             "and the rewritten one is kept only when its outputs agree and "
             "it is measurably faster (docs/Compiler.md); the choice is "
             "printed to stderr"),
    cl::init("eqsat"), cl::cat(compileCat));
static cl::opt<std::string> superoptReport(
    "superopt-report",
    cl::desc("Write the rewrite's report (rules fired, where, estimated and "
             "measured times, the version kept) as JSON to this file (-: "
             "stdout)"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(compileCat));
static cl::opt<int64_t> petParts(
    "pet",
    cl::desc("PET (docs/Superopt/PET.md): also try the graph with every "
             "convolution and pooling whose input is at least "
             "--pet-min-extent rows high cut into this many pieces folded "
             "into the batch, the wrong rows corrected (--tg-pet, each "
             "application proved and checked); compiled and run in turn "
             "with the others, kept only when measurably faster (0: off, "
             "the default)"),
    cl::init(0), cl::cat(compileCat));
static cl::opt<int64_t> petMinExtent(
    "pet-min-extent",
    cl::desc("--pet: the smallest input height transformed (default 56)"),
    cl::init(56), cl::cat(compileCat));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("The precision of matrix products and convolutions: f32 (the "
             "default: exact f32 arithmetic), bf16 or f16 (an autocast "
             "policy: every f32 product and convolution computed on narrow "
             "operands, accumulated in f32, rounded once to the narrow type "
             "and cast back; weights stored narrow; normalisations, "
             "softmax, reductions and elementwise ops stay f32: "
             "--tg-narrow-products, docs/Precision.md); tf32 (GPU targets: "
             "f32 products and convolutions on operands rounded to TF32, "
             "on tensor cores where the tiled kernels run them). "
             "loom-run --check compares with the graph after this policy"),
    cl::init("f32"), cl::cat(compileCat));
static cl::opt<bool> conv3dAs2d(
    "conv3d-as-2d",
    cl::desc("Rewrite 3-D convolutions as sums of 2-D ones over depth "
             "slices (--tg-conv3d-as-2d), which oneDNN and the vectorised "
             "generated convolutions run (default true; false: 3-D "
             "convolutions on generated code)"),
    cl::init(true), cl::cat(compileCat));
static cl::opt<bool> convOverConcat(
    "conv-over-concat",
    cl::desc("On a CPU target, convolve a channel concatenation's operands "
             "and sum the results where only convolutions read it and that "
             "moves less memory than the copy, and pool before a "
             "concatenation instead of after it (--tg-conv-over-concat; "
             "default true)"),
    cl::init(true), cl::cat(compileCat));
static cl::opt<bool> stateInPlace(
    "state-in-place",
    cl::desc("Update state (an entry argument tied to a result, as a "
             "decoder's key/value cache) in place (default true; false: "
             "each update writes a copy of the state, copied back at the "
             "end of the run, with a remark)"),
    cl::init(true), cl::cat(compileCat));
static cl::opt<bool> concatInPlace(
    "concat-in-place",
    cl::desc("On a CPU target, write the operands of a concatenation whose "
             "operands are contiguous ranges of its result (every "
             "dimension before the axis is 1) in place, so it needs no "
             "step, and make the results of such a split ranges of its "
             "operand (default true; false: every concatenation and split "
             "copies)"),
    cl::init(true), cl::cat(compileCat));
static cl::opt<int64_t> cacheInPlace(
    "cache-in-place",
    cl::desc("C > 0: make the concat(past, new) key/value cache of a "
             "decoder export a cache of C positions updated in place, read "
             "up to a run-time past_length input (--tg-cache-in-place, "
             "docs/Decoding.md); a past it cannot rewrite is compiled as it "
             "is, with a remark saying why (default 0: off)"),
    cl::init(0), cl::cat(compileCat));
static cl::opt<int64_t> cacheParallel(
    "cache-parallel",
    cl::desc("P >= 2: compile a decoder program for a world of P ranks that "
             "hold its key/value caches sharded by position, each attending "
             "over its shard, the partial attentions merged by their "
             "log-sum-exp (--tg-cache-parallel, docs/CacheParallel.md); run "
             "it with loom-generate --ranks=P or under a launcher; with "
             "--tensor-parallel=T, a world of P x T ranks, each shard's T "
             "ranks contiguous (default 0: one process)"),
    cl::init(0), cl::cat(compileCat));
static cl::opt<int64_t> tensorParallel(
    "tensor-parallel",
    cl::desc("T >= 2: compile a decoder program for a world of T ranks that "
             "split its attention heads (and key/value caches) and "
             "feed-forward columns, Megatron's split, the partial sums met "
             "by all-reduces; each entry becomes T entries <entry>.rank<r> "
             "(--tg-tensor-parallel, docs/CacheParallel.md); run it with "
             "loom-generate --ranks=T or under a launcher (default 0: one "
             "process)"),
    cl::init(0), cl::cat(compileCat));
static cl::opt<int64_t> pipelineStages(
    "pipeline-stages",
    cl::desc("S >= 2: compile a decoder program for a world of S ranks, "
             "each a pipeline stage of contiguous layers holding their "
             "key/value caches, the residual stream sent from one stage to "
             "the next and the logits gathered to every rank; each entry "
             "becomes S entries <entry>.rank<s> (--tg-pipeline-stages, "
             "docs/CacheParallel.md); with --tensor-parallel=T and/or "
             "--cache-parallel=P each stage is a group of T x P such ranks, "
             "a world of S x P x T ranks, the stages outermost; run it with "
             "loom-generate --ranks=<its world> or under a launcher "
             "(default 0: one process)"),
    cl::init(0), cl::cat(compileCat));
static cl::opt<std::string> sourceGraph(
    "source",
    cl::desc("What the artifact embeds for loom-run --check: given (the "
             "module as read, before any pass, with the weights it reads; "
             "default), compiled (the module after the compile-time "
             "passes: the check then covers code generation and the runtime "
             "only) or none"),
    cl::init("given"), cl::cat(compileCat));
static cl::opt<bool>
    noSource("no-source",
             cl::desc("The spelling before --source: --source=none"),
             cl::cat(compileCat));

static cl::opt<bool> debugPlantFault(
    "debug-plant-fault", cl::Hidden,
    cl::desc("Testing only (docs/Testing.md): after the compile-time passes, "
             "add 0.5 to the first element of the first f32 constant of "
             "several values (a folded weight), a semantic change that "
             "loom-run --check must catch"),
    cl::cat(compileCat));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "loom-compile") << message << "\n";
  return 1;
}

/// --debug-plant-fault: changes the first element of the first f32
/// constant of several values that the compile-time passes left (a folded
/// weight), as a faulty pass would.
static LogicalResult plantFault(ModuleOp module) {
  tg::ConstantOp target;
  module.walk([&](tg::ConstantOp op) {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || dense.isSplat() || !dense.getElementType().isF32())
      return WalkResult::advance();
    target = op;
    return WalkResult::interrupt();
  });
  if (!target)
    return module.emitError("--debug-plant-fault: the compile-time passes "
                            "left no f32 constant of several values");
  auto dense = cast<DenseElementsAttr>(target.getValue());
  SmallVector<float> values(dense.getValues<float>());
  values[0] += 0.5f;
  target.setValueAttr(
      DenseElementsAttr::get(dense.getType(), ArrayRef<float>(values)));
  return success();
}

/// A partitioned module (one with a pipe.schedule, docs/Pipelines.md)
/// compiles its stage functions only, into one artifact with a rank per
/// schedule device: every other function is made private (not an entry).
static LogicalResult
readPartition(ModuleOp module,
              std::optional<pipeline::PartitionedStep> &out) {
  artifact::Optimizer optimizer;
  optimizer.lr = learningRate;
  optimizer.momentum = momentum;
  optimizer.beta1 = beta1;
  optimizer.beta2 = beta2;
  optimizer.eps = epsilon;
  optimizer.weightDecay = weightDecay;
  if (optimizerKind == "sgd")
    optimizer.kind = artifact::OptimizerKind::Sgd;
  else if (optimizerKind == "adam")
    optimizer.kind = artifact::OptimizerKind::Adam;
  else if (optimizerKind != "none")
    return emitError(module.getLoc(), "loom-compile: --optimizer must be "
                                      "none, sgd or adam, not '")
           << optimizerKind << "'";
  auto schedules = llvm::to_vector(module.getOps<pipe::ScheduleOp>());
  if (schedules.empty()) {
    if (optimizerKind != "none")
      return emitError(module.getLoc(),
                       "loom-compile: --optimizer applies to a partitioned "
                       "module (a pipe.schedule from --pipe-partition); a "
                       "training step of one process is built by "
                       "--tg-autodiff");
    return success();
  }
  if (schedules.size() > 1)
    return schedules[1].emitError(
        "loom-compile: a module with several pipe.schedule ops (compile one "
        "partitioned function at a time)");
  auto step =
      pipeline::readPartitionedStep(module, schedules.front(), optimizer);
  if (failed(step))
    return failure();
  llvm::StringSet<> stages;
  for (const pipeline::StageSignature &s : step->stages)
    for (const std::string &name : {s.forward, s.backward})
      stages.insert(name);
  for (auto fn : module.getOps<func::FuncOp>())
    if (!stages.contains(fn.getName()))
      fn.setPrivate();
  out.emplace(std::move(*step));
  return success();
}

/// Reads the input: a .mlir module (its weights from --weights-file or its
/// tg.weights attribute), or an ONNX model imported with its initializers
/// as the weights. Returns the exit status of a failure, else 0.
int readInput(MLIRContext &context, llvm::SourceMgr &sourceMgr,
              OwningOpRef<ModuleOp> &module,
              std::optional<safetensors::File> &weights) {
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  StringRef path(inputFile);
  if (path.ends_with(".onnx") || path.ends_with(".onnxtext")) {
    ONNXImportOptions options;
    for (const std::string &d : dims) {
      auto [name, value] = StringRef(d).split('=');
      int64_t v;
      if (name.empty() || value.getAsInteger(10, v) || v < 0)
        return fail("--dim expects NAME=VALUE with VALUE >= 0, got '" + d +
                    "'");
      options.dims[name] = v;
    }
    // The initializers are compiled from memory; the attribute only names
    // them (the artifact stores them itself).
    options.weightsAttr =
        llvm::sys::path::stem(inputFile).str() + ".safetensors";
    safetensors::Writer writer;
    module = importONNX(input->getBuffer(), inputFile,
                        path.ends_with(".onnxtext") ? ONNXFormat::Text
                                                    : ONNXFormat::Binary,
                        &context, options, writer);
    if (!module)
      return 1;
    auto parsed =
        safetensors::File::parse(writer.toBuffer(inputFile + " (weights)"));
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    weights.emplace(std::move(*parsed));
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
    if (tg::usesWeights(*module)) {
      auto file = tg::openWeights(*module, weightsFile);
      if (failed(file))
        return 1;
      weights.emplace(std::move(*file));
    }
  }
  return 0;
}

/// The roofline --backends=auto prices fragments on when --cost-target is
/// not given: this machine for a CPU target, an H100 for a GPU one (where
/// nothing can be measured here).
static std::string defaultCostTarget(const target::Target &target) {
  return target.requirements().kind == "cpu" ? "cpu" : "h100";
}

/// The backend list and, with --backends=auto, the placement pass of
/// \p options (whose target is set). Returns the exit status of a failure,
/// else 0.
int configureBackends(compiler::CompileOptions &options) {
  if (!backendSet.empty() && (!convBackend.empty() || !matmulBackend.empty()))
    return fail("give --backends, or --conv-backend and --matmul-backend "
                "(which spell it), not both");
  options.backends = options.backendRegistry().spellList(convBackend,
                                                         matmulBackend);
  // The target's registry: a GPU's default list is generated code alone,
  // and a library of another device named for it is an error of the
  // compiler (checkBackends).
  if (debugPlantFault)
    options.afterPasses = plantFault;
  if (noSource && sourceGraph.getNumOccurrences())
    return fail("--no-source is --source=none: give one of them");
  if (noSource || sourceGraph == "none")
    options.source = compiler::EmbeddedSource::None;
  else if (sourceGraph == "compiled")
    options.source = compiler::EmbeddedSource::Compiled;
  else if (sourceGraph != "given")
    return fail("--source must be given, compiled or none, not '" +
                sourceGraph + "'");
  options.conv3dAs2d = conv3dAs2d;
  options.concatInPlace = concatInPlace;
  options.stateInPlace = stateInPlace;
  options.convOverConcat = convOverConcat;
  std::string defaultCostDb;
  if (backendSet == "auto") {
    if (costDb.empty() && placementIn.empty() && costModel == "measured") {
      SmallString<256> cache;
      if (!llvm::sys::path::cache_directory(cache))
        return fail("no cache directory for the cost database: give "
                    "--cost-db=<file.json>");
      llvm::sys::path::append(cache, "loom");
      if (auto ec = llvm::sys::fs::create_directories(cache))
        return fail("cannot create " + cache + ": " + ec.message());
      llvm::sys::path::append(cache, "fragment-costs.json");
      defaultCostDb = std::string(cache);
    }
    if (!options.target->isHost() && costModel == "measured" &&
        placementIn.empty())
      return fail("--backends=auto with --cost=measured times fragments on "
                  "this machine: it needs --target=cpu (or --cost=analytic, "
                  "or --placement-in)");
    if ((cacheParallel > 0 || tensorParallel > 0 || pipelineStages > 0) &&
        costModel == "measured" && placementIn.empty())
      return fail("--backends=auto with --cost=measured times the program in "
                  "one process, and a program of several ranks "
                  "(--cache-parallel, --tensor-parallel, --pipeline-stages) "
                  "runs on its world: give --cost=analytic (or "
                  "--placement-in)");
    placement::TGPlaceBackendsOptions place;
    place.cost = costModel;
    place.costDb = costDb.empty() ? defaultCostDb : std::string(costDb);
    place.target = costTarget.empty() ? defaultCostTarget(*options.target)
                                      : std::string(costTarget);
    place.budget = searchBudget;
    place.endToEnd = endToEnd;
    place.threads = numThreads;
    place.placementIn = placementIn;
    place.placementOut = placementOut;
    place.report = placementReport;
    options.formFragments = [place](OpPassManager &pm,
                                    const compiler::BackendRegistry &registry) {
      pm.addPass(placement::createTGPlaceBackends(registry, place));
    };
  } else if (!placementIn.empty() || !placementOut.empty() ||
             !placementReport.empty()) {
    return fail("--placement-in, --placement-out and --placement-report "
                "need --backends=auto");
  } else if (!backendSet.empty()) {
    options.backends = backendSet;
  }
  return 0;
}

/// \p seconds for a report: in ms, or in us under 0.1 ms.
static std::string showTime(double seconds) {
  if (std::isinf(seconds))
    return "(did not run)";
  if (seconds < 1e-4)
    return llvm::formatv("{0:f1} us", seconds * 1e6).str();
  return llvm::formatv("{0:f3} ms", seconds * 1e3).str();
}

/// The locations of the tg ops of \p original that \p rewritten no longer
/// has (as many times): where rules fired.
static std::vector<std::string> rewrittenLocations(ModuleOp original,
                                                   ModuleOp rewritten) {
  auto count = [](ModuleOp m) {
    std::map<std::string, int> n;
    m.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "tg" &&
          !isa<tg::WeightOp, tg::ConstantOp>(op)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        op->getLoc().print(os);
        ++n[text];
      }
    });
    return n;
  };
  std::map<std::string, int> after = count(rewritten);
  std::vector<std::string> gone;
  for (auto &[loc, n] : count(original))
    if (after[loc] < n)
      gone.push_back(loc);
  return gone;
}

/// The search's part of the report, in one line per function that
/// changed: rewrites per rule, the cost model's estimate, and where.
static void printRewrites(const llvm::json::Object &report,
                          llvm::ArrayRef<std::string> where) {
  const llvm::json::Array *functions = report.getArray("functions");
  for (const llvm::json::Value &f : functions ? *functions
                                              : llvm::json::Array()) {
    const llvm::json::Object *fn = f.getAsObject();
    const llvm::json::Object *rules =
        fn ? fn->getObject("rules_applied") : nullptr;
    if (!rules || rules->empty())
      continue;
    std::vector<std::pair<int64_t, std::string>> fired;
    for (const auto &[name, n] : *rules)
      fired.push_back({-n.getAsInteger().value_or(0), name.str()});
    llvm::sort(fired);
    llvm::errs() << "loom-compile: superopt @"
                 << fn->getString("function").value_or("?") << ":";
    for (auto [minusN, name] : fired)
      llvm::errs() << " " << name << " x" << -minusN;
    llvm::errs() << llvm::formatv(
        "; estimated {0:f3} -> {1:f3} ms ({2}); ops {3} -> {4}\n",
        fn->getNumber("cost_before").value_or(0) * 1e3,
        fn->getNumber("cost_after").value_or(0) * 1e3,
        report.getString("cost_model").value_or("?"),
        fn->getInteger("ops_before").value_or(0),
        fn->getInteger("ops_after").value_or(0));
  }
  if (!where.empty()) {
    llvm::errs() << "loom-compile: superopt: rewrote the ops at";
    for (const std::string &loc : where.take_front(6))
      llvm::errs() << " " << loc;
    if (where.size() > 6)
      llvm::errs() << " and " << where.size() - 6 << " more";
    llvm::errs() << "\n";
  }
}

/// The least gain the search must estimate, relative to its estimate of the
/// graph as written, for rules' rewrites to be compiled and timed: 1/50 of
/// the kMeasurableGain margin the runs in turn then need, since the estimate
/// errs by far more than that (NasRNN's 0.6% measures 14%, superopt.test's
/// 0.8% measures 60%), yet above the ties of the search's cost that the
/// extraction broke either way (BERT's query, key and value products merged
/// by rule_342~ x4, compute-bound: 4 launches of 50 ns in 27.5 ms, 7e-6,
/// measured 0.97-1.00x).
static constexpr double kMinEstimatedGain = 1e-3;

/// Whether the rewrite of tg-superopt's \p report is worth compiling and
/// timing: batched products (priced by their own step cost, applied only
/// where cheaper; DLRM's save 3.8 us of an estimate of 43 ms, its tables
/// priced as read whole, and run 2x as fast), or rules' rewrites estimated
/// at least kMinEstimatedGain faster.
static bool estimatedGain(const llvm::json::Object &report) {
  const llvm::json::Object *rules = report.getObject("rules_applied");
  if (rules && rules->getInteger(search::kBatchProductsRule).value_or(0) > 0)
    return true;
  double before = report.getNumber("cost_before").value_or(0),
         after = report.getNumber("cost_after").value_or(0);
  return after < before * (1 - kMinEstimatedGain);
}

/// Applies --tg-pet to a copy of \p module; null when it changed nothing.
static FailureOr<OwningOpRef<ModuleOp>> withPet(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  pet::TGPetOptions o;
  o.parts = petParts;
  o.minExtent = petMinExtent;
  pm.addPass(pet::createTGPet(o));
  if (failed(pm.run(*copy)))
    return failure();
  auto count = [](ModuleOp m) {
    int64_t n = 0;
    m.walk([&](Operation *) { ++n; });
    return n;
  };
  if (count(*copy) == count(module))
    return OwningOpRef<ModuleOp>();
  return copy;
}

/// The line of one version against the graph as written.
static void printEndToEnd(llvm::StringRef what,
                          const placement::KeepFasterResult &kept,
                          size_t version) {
  const placement::VersionTiming &base = kept.versions[0],
                                 &other = kept.versions[version];
  if (base.runs == 0 && !base.cached) {
    llvm::errs() << llvm::formatv("loom-compile: {0}: {1} not timed ({2}): "
                                  "kept the graph as written\n",
                                  what, other.name, other.note);
    return;
  }
  llvm::errs() << llvm::formatv(
      "loom-compile: {0}: end to end ({1}): as written {2}, {3} {4} "
      "({5:f2}x{6}): kept {7}\n",
      what,
      base.cached ? std::string("times cached in --cost-db")
                  : llvm::formatv("in turn, {0} runs each", base.runs).str(),
      showTime(base.seconds), other.name, showTime(other.seconds),
      base.seconds / other.seconds,
      !other.note.empty() ? "; " + other.note
      : other.givenError
          ? llvm::formatv(", outputs within {0:e1} of the graph as given's",
                          *other.givenError)
                .str()
          : llvm::formatv(", outputs within {0:e1} of the graph as "
                          "written's",
                          other.error)
                .str(),
      kept.kept ? "the " + kept.versions[kept.kept].name + " graph"
                : std::string("the graph as written"));
}

/// Rewrites \p module with tg-superopt (unless --superopt=none) and, with
/// --pet, that graph with tg-pet; when either changed the graph, compiles
/// the graph as written and the rewritten ones, runs them in turn here and
/// keeps the fastest (placement::compileKeepFaster). Reports to stderr and
/// --superopt-report. False on a failure (diagnosed).
static bool compileRewritten(ModuleOp module, const safetensors::File *weights,
                             const compiler::CompileOptions &options,
                             Timer timing) {
  // The graph as written compiles while the search runs (it is the output
  // when no rule fires, and the baseline of the end-to-end runs otherwise).
  compiler::CompileOptions background = options;
  background.timing = timing.nest("compile: as written");
  std::unique_ptr<placement::BackgroundCompile> asWritten =
      placement::BackgroundCompile::start(module, weights, background,
                                          outputFile);
  Timer superoptTimer = timing.nest("superopt");
  TimingScope superoptPhase(superoptTimer);
  OwningOpRef<ModuleOp> rewritten = module.clone();
  search::ModuleSuperoptOptions search;
  search.search.engine = superopt;
  search.search.progress = true;
  search.search.batchProducts = true;
  // By default a function the search cannot represent is compiled as
  // written without a word (the report lists it); asked for, it is said.
  search.warnSkipped = superopt.getNumOccurrences() > 0;
  search.timing = superoptTimer;
  // Ops priced as the backends run them (the fragment times --backends=auto
  // measured into --cost-db where there are some, rooflines elsewhere).
  std::optional<TimingScope> phase(superoptTimer.nest("calibrate roofline"));
  auto roofline = cost::lookupTarget("cpu");
  phase.reset();
  if (!roofline)
    return fail("--superopt: " + llvm::toString(roofline.takeError())) == 0;
  std::optional<cost::CostDatabase> fragments;
  if (!costDb.empty()) {
    auto loaded = cost::CostDatabase::load(costDb);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError())) == 0;
    fragments.emplace(std::move(*loaded));
  }
  std::unique_ptr<cost::CostModel> cost = placement::createBackendOpCostModel(
      options.backendRegistry(), *roofline,
      fragments ? &*fragments : nullptr, numThreads);
  FailureOr<llvm::json::Object> report =
      superopt == "none"
          ? FailureOr<llvm::json::Object>(llvm::json::Object())
          : search::superoptimizeModule(*rewritten, cost.get(), search);
  if (failed(report))
    return false;
  FailureOr<OwningOpRef<ModuleOp>> pet = OwningOpRef<ModuleOp>();
  if (petParts > 0)
    pet = withPet(*rewritten);
  if (failed(pet))
    return false;
  std::vector<std::string> where = rewrittenLocations(module, *rewritten);
  superoptPhase.stop();
  auto writeReport = [&](llvm::json::Object whole) {
    if (superoptReport.empty())
      return true;
    std::error_code ec;
    llvm::raw_fd_ostream os(superoptReport, ec);
    if (ec)
      return fail("cannot write '" + superoptReport + "': " + ec.message()) ==
             0;
    llvm::json::Array locs;
    for (const std::string &loc : where)
      locs.push_back(loc);
    whole["where"] = std::move(locs);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(whole))) << "\n";
    return true;
  };
  llvm::json::Object whole{{"search", llvm::json::Object(*report)}};
  int64_t fired = 0;
  if (const llvm::json::Object *rules = report->getObject("rules_applied"))
    for (const auto &[name, n] : *rules)
      fired += n.getAsInteger().value_or(0);
  if (fired && !estimatedGain(*report)) {
    printRewrites(*report, where);
    llvm::errs() << "loom-compile: superopt: not compiled (estimated under "
                    "0.1% faster): kept the graph as written\n";
    whole["rewritten"] = "not compiled: estimated under 0.1% faster";
    fired = 0;
  }
  if (fired == 0 && !*pet) {
    whole["kept"] = "as written";
    if (!asWritten) {
      if (failed(compiler::compileToArtifact(module, weights, background,
                                             outputFile)))
        return false;
      return writeReport(std::move(whole));
    }
    TimingScope waiting(timing.nest("wait for the graph as written"));
    if (!asWritten->wait())
      return false; // diagnosed by the compiler
    std::string compiled = asWritten->take();
    if (std::error_code ec = moveIntoPlace(compiled, outputFile)) {
      llvm::sys::fs::remove(compiled);
      return fail("cannot write '" + outputFile + "': " + ec.message()) == 0;
    }
    return writeReport(std::move(whole));
  }
  if (fired)
    printRewrites(*report, where);
  std::vector<placement::ModelVersion> versions = {{"as written", module}};
  if (fired)
    versions.push_back({"rewritten", *rewritten});
  if (*pet)
    versions.push_back({"pet", **pet});
  placement::KeepFasterOptions keep;
  keep.threads = numThreads;
  keep.progress = &llvm::errs();
  keep.db = costDb;
  keep.baseline = asWritten.get();
  keep.timing = timing;
  FailureOr<placement::KeepFasterResult> kept = placement::compileKeepFaster(
      versions, weights, options, outputFile, keep);
  if (failed(kept))
    return false;
  for (size_t v = 1; v < versions.size(); ++v)
    printEndToEnd(versions[v].name == "pet" ? "pet" : "superopt", *kept, v);
  whole["end_to_end"] = kept->toJSON();
  whole["kept"] = kept->versions[kept->kept].name;
  return writeReport(std::move(whole));
}

/// Why --precision cannot be compiled for \p target, if it cannot: TF32
/// is a tensor core's operand format (docs/Precision.md, "TF32").
static std::optional<std::string>
precisionRefusal(const target::Target &target) {
  if (precision == "tf32" && target.isHost())
    return "--precision=tf32 is for GPU targets (TF32 is a tensor core's "
           "operand format; a CPU computes f32 products exactly, the "
           "default), not --target=" +
           target.spelling();
  return std::nullopt;
}

/// --precision's policy on \p module, before anything captures the graph
/// (docs/Precision.md): narrow products, or products on TF32 operands.
static void applyPrecision(MLIRContext &context, ModuleOp module) {
  if (FloatType narrow = tg::narrowTypeNamed(&context, precision))
    tg::narrowProducts(module, narrow);
  else if (precision == "tf32")
    tg::roundProductsToTF32(module);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  compiler::registerCompilerPasses();
  cl::HideUnrelatedOptions(
      {&compileCat, &trainCategory, &target::gpuTargetOptions()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-compile: compile a tg module or an ONNX model into a shared "
      "object for Loom's runtime (CPU, CUDA or Vulkan: --target)\n");
  // Before any work: a bad name is diagnosed at once.
  if (precision != "f32" && precision != "bf16" && precision != "f16" &&
      precision != "tf32")
    return fail("--precision must be f32, bf16, f16 or tf32, not '" +
                precision + "'");
  if (petParts < 0 || petParts == 1)
    return fail("--pet must be 0 (off) or at least 2 pieces, not " +
                std::to_string(petParts));

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  codegen::gpu::registerGPUCodegenDialects(registry);
  registry.insert<tg::TGDialect>();
  registry.insert<pipe::PipeDialect>();
  DefaultTimingManager timingManager;
  timingManager.setEnabled(timePhases);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  Timer timing = timingManager.getRootTimer();
  TimingScope whole(timing);
  std::optional<TimingScope> phase(timing.nest("set up"));
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  if (cpu.getNumOccurrences() && targetSpelling.getNumOccurrences())
    return fail("--cpu=NAME is --target=cpu:NAME: give one of them");
  auto target = target::TargetRegistry::builtin().create(
      cpu.getNumOccurrences() ? "cpu:" + cpu : targetSpelling);
  if (!target)
    return fail("--target: " + llvm::toString(target.takeError()));
  if (std::optional<std::string> refusal = precisionRefusal(**target))
    return fail(*refusal);
  if (superopt != "none" && superopt != "eqsat" && superopt != "backtrack")
    return fail("--superopt must be none, eqsat or backtrack, got '" +
                superopt + "'");
  OwningOpRef<ModuleOp> module;
  std::optional<safetensors::File> weights;
  phase.emplace(timing.nest("read input"));
  if (int rc = readInput(context, sourceMgr, module, weights))
    return rc;
  // Before anything captures the graph: the embedded source and every
  // compiled version have the rewritten signature.
  if (cacheInPlace < 0)
    return fail("--cache-in-place must be a capacity C > 0 (or 0: off)");
  if (cacheInPlace > 0 &&
      failed(tg::makeCachesInPlace(*module, cacheInPlace,
                                   weights ? &*weights : nullptr)))
    return 1;
  applyPrecision(context, *module);
  phase.reset();

  compiler::CompileOptions options;
  std::optional<pipeline::PartitionedStep> partitioned;
  if (failed(readPartition(*module, partitioned)))
    return 1;
  if (partitioned) {
    options.world = [&](artifact::Manifest &m) {
      return pipeline::buildRankPrograms(*partitioned, m);
    };
    for (const pipeline::StageSignature &s : partitioned->stages)
      for (const artifact::TensorDesc &p : s.params)
        options.parameters.push_back(p.name);
  }
  options.target = std::move(*target);
  options.dumpKernelsDir = dumpKernels;
  options.weightsStorage = weightsStorage;
  if (int rc = configureBackends(options))
    return rc;
  if (printSchedule)
    options.scheduleOut = &llvm::outs();
  if (timeStages)
    options.timingOut = &llvm::errs();
  std::unique_ptr<llvm::ToolOutputFile> sourcesFile;
  if (!stepSources.empty()) {
    std::error_code ec;
    sourcesFile = std::make_unique<llvm::ToolOutputFile>(stepSources, ec,
                                                         llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "loom-compile: error: cannot write " << stepSources
                   << ": " << ec.message() << "\n";
      return 1;
    }
    options.stepSourcesOut = &sourcesFile->os();
  }
  const safetensors::File *weightsPtr = weights ? &*weights : nullptr;
  // Every version --superopt and --pet compile embeds the module as read.
  if (options.source == compiler::EmbeddedSource::Given)
    options.given = compiler::captureGivenGraph(*module);
  // After the capture: --check compares every rank with the program of one
  // process, as given. Together: a world of S x P x T ranks, the
  // tensor-parallel ranks of a cache shard contiguous and the stages
  // outermost (world rank = (stage * P + shard) * T + t), so the passes run
  // in that order, each on the world the one before made.
  if (cacheParallel == 1 || cacheParallel < 0)
    return fail("--cache-parallel must be P >= 2 ranks (or 0: off)");
  if (tensorParallel == 1 || tensorParallel < 0)
    return fail("--tensor-parallel must be T >= 2 ranks (or 0: off)");
  if (pipelineStages == 1 || pipelineStages < 0)
    return fail("--pipeline-stages must be S >= 2 ranks (or 0: off)");
  if (tensorParallel > 0 && failed(tg::splitTensors(*module, tensorParallel)))
    return 1;
  if (cacheParallel > 0 && failed(tg::shardCaches(*module, cacheParallel)))
    return 1;
  if (pipelineStages > 0 && failed(tg::stageLayers(*module, pipelineStages)))
    return 1;
  if (superopt != "none" || petParts > 0) {
    std::string why;
    if (partitioned)
      why = "a partitioned module is compiled as written";
    else if (cacheParallel > 0 || tensorParallel > 0 || pipelineStages > 0)
      why = "a program of several ranks: its rewrites cannot be timed in "
            "one process";
    else if (!options.target->isHost())
      why = "--target=" + targetSpelling +
            " runs elsewhere: the rewrite cannot be measured here";
    else if (superopt.getNumOccurrences() == 0 && superoptReport.empty() &&
             petParts == 0 &&
             !llvm::sys::fs::exists(search::defaultRulesPath()))
      why = "no default rule set";
    if (why.empty()) {
      if (!compileRewritten(*module, weightsPtr, options, timing))
        return 1;
      if (sourcesFile)
        sourcesFile->keep();
      return 0;
    }
    if (superopt.getNumOccurrences() || !superoptReport.empty())
      llvm::errs() << "loom-compile: --superopt: " << why << "\n";
  }
  options.timing = timing.nest("compile: as written");
  if (failed(compiler::compileToArtifact(*module, weightsPtr, options,
                                         outputFile)))
    return 1;
  if (sourcesFile)
    sourcesFile->keep();
  return 0;
}
