//===- loom-run.cpp - Run tg functions on the reference interpreter --------===//
//
// Part of Loom. Parses and verifies a .mlir file, optionally canonicalises it,
// and interprets an entry function on inputs read from a safetensors file or
// drawn at random from a seed. Prints a summary (shapes, statistics, time) and
// optionally writes the outputs to a safetensors file.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradientCheck.h"
#include "loom/Dialect/TG/Transforms/FuseTrials.h"
#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/IR/PipeOps.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Pipeline/Executor.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Support/Bounded.h"
#include "loom/Support/SafeTensors.h"

#include "RunArtifact.h"
#include "loom-c/Runtime.h"
#include "RunSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace loom;
using loom::run::fail;
using namespace loom::interp;
namespace cl = llvm::cl;

static cl::OptionCategory runCat("loom-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir | model.so>"),
                                      cl::init("-"), cl::cat(runCat));
static cl::opt<bool> cpuInfo(
    "cpu-info",
    cl::desc("Print the x86-64 instruction-set level the CPU device uses "
             "(this CPU's, capped by LOOM_CPU_ISA) and which hand-written "
             "kernels it has a form of, and exit"),
    cl::init(false), cl::cat(runCat));
static cl::opt<bool> printPlan(
    "print-plan",
    cl::desc("Print the plan the runtime made when it loaded the artifact "
             "(what runs each step: the implementation, the layouts, the "
             "reorders, the threads) for --entry, or for every entry, and "
             "exit without running"),
    cl::init(false), cl::cat(runCat));
static cl::opt<bool> keepState(
    "keep-state",
    cl::desc("With an artifact whose entry updates state in place (an output "
             "tied to an input: a KV cache): carry the state from run to run "
             "(--warmup, --repeat) as a token loop does, instead of starting "
             "every run from the given inputs; not with --check"),
    cl::init(false), cl::cat(runCat));
static cl::opt<std::string>
    entry("entry", cl::desc("Function to run (default: @main, or the only "
                            "function of the module)"),
          cl::init(""), cl::cat(runCat));
static cl::opt<std::string>
    inputsFile("inputs",
               cl::desc("Safetensors file with one tensor per argument, named "
                        "by the argument's tg.name attribute or argN"),
               cl::init(""), cl::cat(runCat));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of the random inputs (when --inputs is not "
                          "given) and of --write-random-weights"),
         cl::init(0), cl::cat(runCat));
static cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Safetensors file for tg.weight (default: the "
                         "module's tg.weights attribute, relative to the "
                         ".mlir file); for an artifact compiled with "
                         "--weights=external, its weights (default: the file "
                         "beside it)"),
                cl::init(""), cl::cat(runCat));
static cl::opt<std::string> writeRandomWeights(
    "write-random-weights",
    cl::desc("Write random weights for every tg.weight of the module to this "
             "safetensors file and exit"),
    cl::init(""), cl::cat(runCat));
static cl::opt<std::string>
    outputsFile("outputs",
                cl::desc("Write the results to this safetensors file (named by "
                         "the result's tg.name attribute or resultN)"),
                cl::init(""), cl::cat(runCat));
static cl::opt<std::string>
    domain("domain",
           cl::desc("Number domain: f32 (default), f64, or modp (exact "
                    "arithmetic modulo 2^61-1, as the rule generator uses)"),
           cl::init("f32"), cl::cat(runCat));
static cl::opt<bool>
    runCanonicalize("canonicalize",
                 cl::desc("Run the canonicalizer before interpreting"),
                 cl::init(false), cl::cat(runCat));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Run this many times and report the "
                                         "best and median time"),
                                cl::init(1), cl::cat(runCat));
static cl::opt<unsigned> warmup(
    "warmup",
    cl::desc("Untimed runs before the --repeat timed ones (an artifact's "
             "first run pays one-time work: the arena's first touch, "
             "oneDNN's lazily made kernels)"),
    cl::init(0), cl::cat(runCat));
static cl::opt<unsigned>
    numThreads("num-threads",
            cl::desc("Kernel threads (default: the hardware's)"),
            cl::init(0), cl::cat(runCat));
static cl::opt<bool> profileOps("profile",
                                cl::desc("Print the time spent per op kind"),
                                cl::init(false), cl::cat(runCat));
static cl::opt<unsigned>
    printValues("print-values",
                cl::desc("Print up to this many leading elements of each "
                         "result (0: none)"),
                cl::init(8), cl::cat(runCat));
static cl::opt<std::string> compareFile(
    "compare",
    cl::desc("Compare the results with the tensors of this safetensors file "
             "(named as --outputs names them); print the largest error and "
             "exit non-zero when it exceeds --tolerance"),
    cl::init(""), cl::cat(runCat));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Largest error --compare accepts: |got - want| / max(1, |want|) "
             "(default 1e-4)"),
    cl::init(1e-4), cl::cat(runCat));
static cl::opt<std::string> device(
    "device",
    cl::desc("With an artifact: the device to run it on, KIND or "
             "KIND:ORDINAL (cpu, cpu:0; default: the one it was compiled "
             "for)"),
    cl::init(""), cl::cat(runCat));
static cl::opt<bool> checkArtifact(
    "check",
    cl::desc("With an artifact (.so): also interpret its embedded source on "
             "the same inputs with its own weights, print both latencies and "
             "the largest error, and exit non-zero when it exceeds "
             "--tolerance"),
    cl::cat(runCat));

static cl::opt<std::string> referenceModule(
    "reference",
    cl::desc("With a multi-rank artifact and --check: the partitioned module "
             "(.mlir) it was compiled from; the reference executor runs it "
             "for the micro-batches' inputs and the unpartitioned step's "
             "gradients, which the ranks' must equal within --tolerance"),
    cl::value_desc("partitioned.mlir"), cl::init(""), cl::cat(runCat));
static cl::opt<double> timeoutSeconds(
    "timeout",
    cl::desc("With a multi-rank artifact: the deadline of every wait for "
             "another rank, in seconds (default 60)"),
    cl::init(60), cl::cat(runCat));
static cl::opt<std::string> stepProfile(
    "step-profile",
    cl::desc("With a multi-rank artifact: record the start and end of every "
             "action of every rank over the steps and write them to this "
             "JSON file (docs/Runtime.md \"Step profile\"; under a launcher "
             "rank 0 writes it), for loom-opt --pipe-simulate=\"profile=FILE\""),
    cl::value_desc("profile.json"), cl::init(""), cl::cat(runCat));

static cl::opt<bool> checkGradientsFlag(
    "check-gradients",
    cl::desc("Compare the gradient --tg-autodiff builds for every float "
             "argument and tg.weight with central finite differences, in f64 "
             "on the interpreter (of the scalar result, or of sum(result * "
             "fixed random tensor) for other results); print the largest "
             "relative error per tensor and exit non-zero when one exceeds "
             "--gradient-tolerance"),
    cl::cat(runCat));
static cl::opt<double> gradientTolerance(
    "gradient-tolerance",
    cl::desc("Largest relative gradient error --check-gradients accepts: max "
             "|autodiff - difference| / max |difference| per tensor, the "
             "divisor at least 1e-3 of the largest over all tensors "
             "(default 1e-5)"),
    cl::init(1e-5), cl::cat(runCat));
static cl::opt<int64_t> gradientSamples(
    "gradient-samples",
    cl::desc("Elements --check-gradients checks per tensor (all of a smaller "
             "one, a random sample of a larger one; default 64)"),
    cl::init(64), cl::cat(runCat));

static cl::opt<int64_t> gradientTensors(
    "gradient-tensors",
    cl::desc("Tensors --check-gradients checks (default 0: all; else a "
             "random choice of this many, with the first and the last)"),
    cl::init(0), cl::cat(runCat));

static cl::opt<bool> gradientBatchnormTraining(
    "batchnorm-training",
    cl::desc("--check-gradients: check tg.batchnorm in its training form "
             "(batch statistics, as --tg-autodiff builds it) instead of as "
             "written"),
    cl::cat(runCat));

static cl::opt<int64_t> checkTrials(
    "check-trials",
    cl::desc("Fuse N trials of the function with --tg-fuse-trials and run "
             "the fused function against N separate runs for --trial-steps "
             "steps, in f64 on the interpreter (parameters and inputs random, "
             "optimizer state zero, hyper-parameters different per trial); "
             "print the largest relative error per result and exit non-zero "
             "when one exceeds --trials-tolerance"),
    cl::init(0), cl::cat(runCat));
static cl::opt<int64_t> trialSteps(
    "trial-steps",
    cl::desc("--check-trials: steps run, each result fed back as the next "
             "step's argument of the same tg.name (default 10)"),
    cl::init(10), cl::cat(runCat));
static cl::opt<double> trialsTolerance(
    "trials-tolerance",
    cl::desc("Largest relative error --check-trials accepts: max |fused - "
             "separate| / max |separate| per result (default 1e-5)"),
    cl::init(1e-5), cl::cat(runCat));
static cl::opt<bool> perTrialInputs(
    "per-trial-inputs",
    cl::desc("--check-trials: give the function's inputs a trial dimension "
             "(different inputs per trial) instead of sharing them"),
    cl::cat(runCat));
static cl::opt<bool> perTrialConvolutions(
    "per-trial-convolutions",
    cl::desc("--check-trials: fuse each convolution as N dense ones on the "
             "trials' slices (--tg-fuse-trials per-trial-convolutions=true)"),
    cl::cat(runCat));
static cl::opt<bool> plantWrongTrialRule(
    "plant-wrong-trial-rule",
    cl::desc("--check-trials, test only: fuse tg.softmax over the wrong axis "
             "(the check must fail)"),
    cl::Hidden, cl::cat(runCat));

static cl::opt<bool> checkPipeline(
    "check-pipeline",
    cl::desc("Run every pipe.schedule of the module (written by "
             "--pipe-partition) with the reference executor, each device in "
             "its own action order on the interpreter (f64), and compare the "
             "parameter gradients of the step with the unpartitioned "
             "function's on the same micro-batches; exit non-zero when one "
             "differs by more than --gradient-tolerance"),
    cl::cat(runCat));

static cl::opt<int64_t> maxElements(
    "max-elements",
    cl::desc("Largest tensor, in elements, the interpreter may allocate"),
    cl::init(int64_t(1) << 28), cl::cat(runCat));

namespace {

std::string argName(func::FuncOp fn, unsigned i) {
  if (auto name = fn.getArgAttrOfType<StringAttr>(i, "tg.name"))
    return name.str();
  return "arg" + std::to_string(i);
}

std::string resultName(func::FuncOp fn, unsigned i) {
  if (auto name = fn.getResultAttrOfType<StringAttr>(i, "tg.name"))
    return name.str();
  return "result" + std::to_string(i);
}

/// The largest |got - want| / max(1, |want|) over \p got and the tensor
/// \p name of \p reference; NaN must meet NaN and infinities be equal.
llvm::Expected<double> scaledError(const safetensors::File &reference,
                                   llvm::StringRef name,
                                   llvm::ArrayRef<int64_t> shape,
                                   llvm::ArrayRef<double> got) {
  const safetensors::TensorInfo *info = reference.lookup(name);
  if (!info)
    return llvm::createStringError("--compare: " + reference.path().str() +
                                   " has no tensor '" + name.str() + "'");
  if (llvm::ArrayRef<int64_t>(info->shape) != shape)
    return llvm::createStringError(
        "--compare: tensor '" + name.str() + "' has shape " +
        safetensors::formatShape(info->shape) + ", the result " +
        safetensors::formatShape(shape));
  auto want = reference.readAsDouble(name);
  if (!want)
    return want.takeError();
  return run::maxScaledError(got, *want);
}

/// Whether result \p i of \p fn holds the run-time length of another.
bool isLengthResult(func::FuncOp fn, unsigned i) {
  for (unsigned j = 0; j < fn.getNumResults(); ++j)
    if (auto bound = tg::getResultBound(fn, j); bound && bound->lengthResult == i)
      return true;
  return false;
}

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The arguments of `fn`, from --inputs or random from --seed; prints one
/// line per argument. Returns non-zero (after a message) on a bad input.
template <class D>
int readArguments(func::FuncOp fn, std::vector<Tensor<D>> &args) {
  FunctionType type = fn.getFunctionType();
  std::optional<safetensors::File> inputs;
  if (!inputsFile.empty()) {
    auto file = safetensors::File::open(inputsFile);
    if (!file)
      return fail(llvm::toString(file.takeError()));
    inputs.emplace(std::move(*file));
  }
  llvm::outs() << "inputs:\n";
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return fail("argument " + std::to_string(i) + " of @" +
                  fn.getSymName().str() + " has type " + typeStr(t) +
                  "; only statically shaped tensors can be interpreted");
    std::vector<int64_t> shape(rt.getShape().begin(), rt.getShape().end());
    int64_t n = checkedNumElements(shape);
    if (n < 0 || n > maxElements)
      return fail("argument " + std::to_string(i) + " (" + typeStr(t) +
                  ") is larger than --max-elements");
    std::string name = argName(fn, i);
    if (inputs) {
      auto dtype = tg::dtypeForElementType(rt.getElementType());
      if (!dtype)
        return fail("argument '" + name + "' has an element type safetensors "
                    "cannot hold");
      if (llvm::Error err = inputs->check(name, *dtype, shape))
        return fail(llvm::toString(std::move(err)));
      auto values = inputs->readAsDouble(name);
      if (!values)
        return fail(llvm::toString(values.takeError()));
      args.push_back(Tensor<D>::fromDoubles(shape, *values));
      llvm::outs() << "  " << name << ": " << t << " from " << inputsFile
                   << "\n";
    } else if (rt.getElementType().isInteger()) {
      int64_t bound = randomIntegerBound(fn.getArgument(i));
      args.push_back(randomArgument<D>(fn.getArgument(i), seed));
      llvm::outs() << "  " << name << ": " << t << " random integers in [0, "
                   << bound << "), seed " << seed << "\n";
    } else {
      args.push_back(randomArgument<D>(fn.getArgument(i), seed));
      llvm::outs() << "  " << name << ": " << t << " random, seed " << seed
                   << "\n";
    }
  }

  return 0;
}

/// Prints the largest relative error of a check's rows (each with `name` and
/// `relativeError()`) and returns the name of the worst row when it exceeds
/// `tolerance` (NaN exceeds any), else "".
template <class Row>
std::string reportWorst(llvm::ArrayRef<Row> rows, double tolerance,
                        double seconds) {
  double worst = 0;
  std::string worstName = rows.empty() ? "" : rows.front().name;
  for (const Row &r : rows)
    if (!(r.relativeError() <= worst)) {
      worst = r.relativeError();
      worstName = r.name;
    }
  llvm::outs() << llvm::format("largest relative error %.3g (%s; tolerance "
                               "%.3g), %.2f s\n",
                               worst, worstName.c_str(), tolerance, seconds);
  return worst <= tolerance ? "" : worstName;
}

int checkGradients(func::FuncOp fn) {
  std::vector<Tensor<F64Domain>> args;
  if (int rc = readArguments(fn, args))
    return rc;
  tg::autodiff::GradientCheckOptions options;
  options.samplesPerTensor = gradientSamples;
  options.tensors = gradientTensors;
  options.batchnormTraining = gradientBatchnormTraining;
  options.seed = seed;
  options.weightsFile = weightsFile;
  auto start = std::chrono::steady_clock::now();
  auto rows = tg::autodiff::checkGradients(fn, args, options);
  if (failed(rows))
    return 1;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  llvm::outs() << llvm::format("gradient check (f64, central differences, "
                               "step %g * max(1, |x|)):\n",
                               options.step);
  llvm::outs() << llvm::format("  %-28s %10s %8s %12s %12s %10s\n", "tensor",
                               "elements", "checked", "max |grad|",
                               "max |error|", "relative");
  for (const auto &r : *rows)
    llvm::outs() << llvm::format("  %-28s %10lld %8lld %12.4g %12.3g %10.3g\n",
                                 r.name.c_str(), (long long)r.elements,
                                 (long long)r.checked, r.largestGradient,
                                 r.largestError, r.relativeError());
  std::string worst = reportWorst(llvm::ArrayRef(*rows), gradientTolerance,
                                  seconds);
  if (!worst.empty())
    return fail("the gradient of '" + worst +
                "' differs from finite differences");
  return 0;
}

int checkFusedTrials(func::FuncOp fn) {
  tg::FusedTrialsCheckOptions options;
  options.fuse.trials = checkTrials;
  options.fuse.perTrialInputs = perTrialInputs;
  options.fuse.perTrialConvolutions = perTrialConvolutions;
  options.fuse.plantWrongRule = plantWrongTrialRule;
  options.steps = trialSteps;
  options.seed = seed;
  auto start = std::chrono::steady_clock::now();
  auto rows = tg::checkFusedTrials(fn, options);
  if (failed(rows))
    return 1;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  llvm::outs() << llvm::format("fused trials check (%lld trials, %lld steps, "
                               "f64, %s inputs):\n",
                               (long long)options.fuse.trials,
                               (long long)options.steps,
                               perTrialInputs ? "per-trial" : "shared");
  llvm::outs() << llvm::format("  %-28s %12s %12s %10s\n", "result",
                               "max |value|", "max |error|", "relative");
  for (const auto &r : *rows)
    llvm::outs() << llvm::format("  %-28s %12.4g %12.3g %10.3g\n",
                                 r.name.c_str(), r.largest, r.error,
                                 r.relativeError());
  std::string worst = reportWorst(llvm::ArrayRef(*rows), trialsTolerance,
                                  seconds);
  if (!worst.empty())
    return fail("the fused trials differ from separate runs in '" + worst +
                "'");
  return 0;
}

/// --check-pipeline: every pipe.schedule of `module` run by the reference
/// executor against the unpartitioned step.
int checkPipelines(ModuleOp module) {
  auto schedules = llvm::to_vector(module.getOps<pipe::ScheduleOp>());
  if (schedules.empty())
    return fail("--check-pipeline: " + inputFile +
                " has no pipe.schedule (write one with loom-opt "
                "--pipe-partition)");
  pipeline::ExecutorOptions eo;
  eo.seed = seed;
  eo.weightsFile = weightsFile;
  double worst = 0;
  for (pipe::ScheduleOp op : schedules) {
    auto start = std::chrono::steady_clock::now();
    auto r = pipeline::executeSchedule(module, op, eo);
    if (failed(r))
      return 1;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    llvm::outs() << "pipeline @" << op.getSymName() << " of @" << r->function
                 << ": " << r->actions << " actions, " << r->microBatches
                 << " micro-batches, " << llvm::format("%.2f", seconds)
                 << " s\n";
    llvm::outs() << llvm::format("  %-40s %s\n", "parameter",
                                 "gradient error vs unpartitioned");
    for (auto &[name, err] : r->errors)
      llvm::outs() << llvm::format("  %-40s %.3g\n", name.c_str(), err);
    llvm::outs() << llvm::format("  largest error %.3g (tolerance %.3g)\n",
                                 r->worst, gradientTolerance.getValue());
    worst = std::max(worst, r->worst);
  }
  if (!(worst <= gradientTolerance))
    return fail("the pipelined step's gradients differ from the "
                "unpartitioned step's");
  return 0;
}

template <class D> int runWith(ModuleOp module, func::FuncOp fn) {
  FunctionType type = fn.getFunctionType();
  if (failed(tg::verifyResultBounds(fn)))
    return 1;
  std::vector<Tensor<D>> args;
  if (int rc = readArguments(fn, args))
    return rc;

  InterpreterOptions options;
  options.weightsFile = weightsFile;
  options.profile = profileOps;
  options.maxElements = maxElements;
  Interpreter<D> interpreter(module, options);
  std::vector<double> times;
  FailureOr<std::vector<Tensor<D>>> results = failure();
  for (unsigned r = 0; r < warmup; ++r)
    if (failed(interpreter.run(fn, args)))
      return 1;
  for (unsigned r = 0; r < std::max(1u, repeat.getValue()); ++r) {
    auto start = std::chrono::steady_clock::now();
    results = interpreter.run(fn, args);
    times.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    if (failed(results))
      return 1;
  }

  std::optional<safetensors::File> reference;
  if (!compareFile.empty()) {
    auto file = safetensors::File::open(compareFile);
    if (!file)
      return fail(llvm::toString(file.takeError()));
    reference.emplace(std::move(*file));
  }
  double worstError = 0;
  llvm::outs() << "outputs:\n";
  safetensors::Writer writer;
  for (auto [i, t] : llvm::enumerate(*results)) {
    std::vector<double> v = t.toDoubles();
    std::vector<int64_t> shape = t.shape;
    Type rtype = type.getResult(i);
    llvm::outs() << "  " << resultName(fn, i) << ": " << rtype;
    if (auto bound = tg::getResultBound(fn, i)) {
      // Only the valid part of a padded result is shown, saved and compared.
      auto length = int64_t(D::toDouble((*results)[bound->lengthResult].data[0]));
      cutToValid(v, shape, bound->dim, length);
      llvm::outs() << run::validShapeText(shape);
    }
    run::printSummary(llvm::outs(), v, printValues);
    if (reference && isLengthResult(fn, i) &&
        !reference->lookup(resultName(fn, i))) {
      // A length the reference does not hold (ONNX Runtime's outputs have
      // their lengths in their shapes, which are compared).
    } else if (reference) {
      auto err = scaledError(*reference, resultName(fn, i), shape, v);
      if (!err)
        return fail(llvm::toString(err.takeError()));
      llvm::outs() << llvm::format("    error vs %s: %.3g\n",
                                   compareFile.c_str(), *err);
      worstError = std::max(worstError, *err);
    }
    if (!outputsFile.empty()) {
      auto rt = cast<RankedTensorType>(rtype);
      auto dtype = tg::dtypeForElementType(rt.getElementType());
      if (!dtype)
        return fail("result " + std::to_string(i) +
                    " has an element type safetensors cannot hold");
      if (llvm::Error err = writer.add(resultName(fn, i), *dtype, shape, v))
        return fail(llvm::toString(std::move(err)));
    }
  }
  if (!outputsFile.empty()) {
    if (llvm::Error err = writer.write(outputsFile))
      return fail(llvm::toString(std::move(err)));
    llvm::outs() << "wrote " << outputsFile << "\n";
  }

  run::printTimes(llvm::outs(), times);
  llvm::outs() << " on " << getNumThreads() << " thread(s), domain "
               << D::name << "\n";

  if (reference) {
    llvm::outs() << llvm::format("compare: largest error %.3g (tolerance "
                                 "%.3g)\n",
                                 worstError, tolerance.getValue());
    if (!(worstError <= tolerance))
      return fail("the results differ from " + compareFile);
  }

  if (profileOps) {
    std::vector<std::pair<std::string, OpProfile>> rows;
    for (auto &e : interpreter.profile())
      rows.emplace_back(e.getKey().str(), e.getValue());
    std::sort(rows.begin(), rows.end(), [](auto &a, auto &b) {
      return a.second.seconds > b.second.seconds;
    });
    double total = 0;
    for (auto &r : rows)
      total += r.second.seconds;
    llvm::outs() << "profile (all runs):\n";
    llvm::outs() << llvm::format("  %-20s %8s %10s %7s\n", "op", "count",
                                 "seconds", "share");
    for (auto &[name, p] : rows)
      llvm::outs() << llvm::format("  %-20s %8lld %10.4f %6.1f%%\n",
                                   name.c_str(), (long long)p.count, p.seconds,
                                   total > 0 ? 100.0 * p.seconds / total : 0.0);
  }
  return 0;
}

/// loom-run on an artifact of loom-compile (RunArtifact.cpp): the options
/// that apply to one, then the run, which ends the process.
int runArtifactMode() {
  if (domain != "f32")
    return fail("an artifact computes in f32; --domain does not apply");
  if (runCanonicalize || !writeRandomWeights.empty())
    return fail("--canonicalize and --write-random-weights apply to .mlir "
                "files, not to a compiled artifact");
  if (profileOps)
    return fail("--profile times the interpreter's ops; for an artifact "
                "set LOOM_PROFILE=1 (docs/Runtime.md)");
  run::ArtifactRunOptions o;
  o.path = inputFile;
  o.entry = entry;
  o.inputsFile = inputsFile;
  o.outputsFile = outputsFile;
  o.compareFile = compareFile;
  o.weightsFile = weightsFile;
  o.seed = seed;
  o.repeat = repeat;
  o.warmup = warmup;
  o.threads = numThreads;
  o.printValues = printValues;
  o.check = checkArtifact;
  o.tolerance = tolerance;
  o.device = device;
  o.reference = referenceModule;
  o.timeout = timeoutSeconds;
  o.stepProfile = stepProfile;
  o.printPlan = printPlan;
  o.keepState = keepState;
  int status = run::runArtifact(o);
  // A GPU device whose work outlived LOOM_DEVICE_TIMEOUT is abandoned, not
  // destroyed (docs/Runtime.md): the driver's threads may still run that
  // work, so the process ends without the static destructors (LLVM's, the
  // driver's) they would race with.
  llvm::outs().flush();
  llvm::errs().flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

} // namespace

/// --cpu-info: "cpu-isa: avx2" and a line per kernel, "kernel NAME: yes"
/// or "kernel NAME: onednn" (the level used has no form of it).
static int printCpuInfo() {
  llvm::outs() << "cpu-isa: " << loom_cpu_isa() << "\n";
  for (int64_t i = 0, n = loom_cpu_num_kernels(); i < n; ++i) {
    const char *name = nullptr;
    int available = 0;
    if (loom_cpu_kernel(i, &name, &available) == LOOM_OK)
      llvm::outs() << "kernel " << name << ": "
                   << (available ? "yes" : "onednn") << "\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(runCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-run: run a tg function on Loom's reference interpreter, or a "
      "compiled artifact\n\n"
      "  loom-run model.mlir                       random inputs (seed 0)\n"
      "  loom-run model.so --check --repeat 10     an artifact of loom-compile, "
      "checked against\n"
      "                                            the interpreter\n"
      "  loom-run model.mlir --inputs in.safetensors --outputs out.safetensors\n"
      "  loom-run model.mlir --write-random-weights model.safetensors\n"
      "  loom-run loss.mlir --check-gradients      autodiff against finite "
      "differences\n\n"
      "Prints the inputs, a summary of every result and the run time. Exits "
      "non-zero, with a diagnostic, on any bad input.\n");

  if (numThreads > 0)
    setNumThreads(numThreads);
  if (cpuInfo)
    return printCpuInfo();
  std::string why;
  switch (run::classifyInput(inputFile, why)) {
  case run::InputKind::Foreign:
    return fail(inputFile + ": not a Loom artifact (" + why + ")");
  case run::InputKind::MLIR:
    break;
  case run::InputKind::Artifact:
    return runArtifactMode();
  }
  if (!device.empty())
    return fail("--device applies to artifacts (.so from loom-compile); the "
                "interpreter runs on the host");
  if (checkArtifact)
    return fail("--check applies to artifacts (.so from loom-compile)");
  if (printPlan)
    return fail("--print-plan applies to artifacts (.so from loom-compile): "
                "the plan is the runtime's, made when it loads one");
  if (keepState)
    return fail("--keep-state applies to artifacts (.so from loom-compile): "
                "the interpreter computes a tied result as a new value");
  if (checkTrials != 0 && domain != "f32" && domain != "f64")
    return fail("--check-trials computes in f64; --domain " + domain +
                " does not apply");
  if (checkGradientsFlag && domain != "f32" && domain != "f64")
    return fail("--check-gradients computes in f64; --domain " + domain +
                " does not apply");
  if (domain != "f32" && domain != "f64" && domain != "modp")
    return fail("unknown --domain '" + domain +
                "' (expected f32, f64 or modp)");

  DialectRegistry registry;
  registry.insert<tg::TGDialect, func::FuncDialect, pipe::PipeDialect>();
  tg::registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic at the module must not print the whole (large) module.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = mlir::openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  // parseSourceFile verifies; keep an explicit check for modules built by
  // other means in the future.
  if (failed(verify(*module)))
    return 1;

  if (!writeRandomWeights.empty()) {
    if (failed(tg::writeRandomWeights(*module, writeRandomWeights, seed)))
      return 1;
    llvm::outs() << "wrote random weights (seed " << seed << ") to "
                 << writeRandomWeights << "\n";
    return 0;
  }

  if (runCanonicalize) {
    int64_t before = 0, after = 0;
    module->walk([&](Operation *) { ++before; });
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(*module)))
      return 1;
    module->walk([&](Operation *) { ++after; });
    llvm::outs() << "canonicalize: " << before << " -> " << after
                 << " operations\n";
  }

  if (checkPipeline)
    return checkPipelines(*module);

  func::FuncOp fn;
  if (!entry.empty()) {
    fn = module->lookupSymbol<func::FuncOp>(entry);
    if (!fn)
      return fail("no function @" + entry + " in " + inputFile);
  } else if (!(fn = module->lookupSymbol<func::FuncOp>("main"))) {
    auto funcs = llvm::to_vector(module->getOps<func::FuncOp>());
    if (funcs.size() != 1)
      return fail("no @main and " + std::to_string(funcs.size()) +
                  " functions in " + inputFile + "; choose one with --entry");
    fn = funcs.front();
  }
  llvm::outs() << "loom-run: " << inputFile << " @" << fn.getSymName()
               << "\n";

  if (checkGradientsFlag)
    return checkGradients(fn);
  if (checkTrials != 0)
    return checkFusedTrials(fn);
  if (domain == "f32")
    return runWith<F32Domain>(*module, fn);
  if (domain == "f64")
    return runWith<F64Domain>(*module, fn);
  if (domain == "modp")
    return runWith<ModPDomain>(*module, fn);
  return fail("unknown --domain '" + domain + "' (expected f32, f64 or modp)");
}
