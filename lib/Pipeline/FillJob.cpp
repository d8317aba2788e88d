//===- FillJob.cpp - Pricing a bubble-filling job -------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/FillJob.h"
#include "loom/Pipeline/Partition.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

std::optional<double> pipeline::stateFactorOf(llvm::StringRef optimizer) {
  if (optimizer == "adam")
    return 4.0;
  if (optimizer == "sgd-momentum")
    return 3.0;
  if (optimizer == "sgd")
    return 2.0;
  return std::nullopt;
}

/// Bytes of `fn`'s tg.weights and of its arguments marked `role`.
static int64_t bytesMarked(func::FuncOp fn, llvm::StringRef role) {
  int64_t bytes = 0;
  if (role == tg::autodiff::kParameterAttr)
    fn.walk([&](tg::WeightOp w) { bytes += bytesOf(w.getType()); });
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, role))
      bytes += bytesOf(fn.getArgument(i).getType());
  return bytes;
}

/// A training step (--tg-autodiff's, possibly fused): it takes optimizer
/// state or hyper-parameters as arguments.
static bool isTrainingStep(func::FuncOp fn) {
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, tg::autodiff::kOptimizerStateAttr) ||
        fn.getArgAttr(i, tg::autodiff::kHyperParameterAttr))
      return true;
  return false;
}

FailureOr<pipe::FillJob> pipeline::priceFillJob(ModuleOp module,
                                                const FillJobSpec &spec) {
  auto fail = [&](const Twine &message) {
    return module.emitError("bubble filling: ") << message;
  };
  std::optional<double> factor = stateFactorOf(spec.optimizer);
  if (!factor)
    return fail("unknown optimizer '" + spec.optimizer +
                "' (adam, sgd-momentum, sgd)");
  if (spec.microBatches < 1)
    return fail("a trial step needs at least one micro-batch");
  OwningOpRef<ModuleOp> other;
  ModuleOp where = module;
  if (!spec.modulePath.empty()) {
    ParserConfig config(module.getContext());
    other = parseSourceFile<ModuleOp>(spec.modulePath, config);
    if (!other)
      return fail("cannot read the module " + spec.modulePath);
    where = *other;
  }
  auto fn = where.lookupSymbol<func::FuncOp>(spec.function);
  if (!fn || fn.isExternal())
    return fail("no function @" + spec.function +
                (spec.modulePath.empty() ? Twine(" in the module")
                                         : " in " + spec.modulePath));
  auto costs = cost::createCostModel(spec.target, "");
  if (!costs)
    return fail(llvm::toString(costs.takeError()));
  FailureOr<GraphModel> g = modelGraph(fn, *costs->model);
  if (failed(g))
    return failure();
  pipe::FillJob job;
  job.name = "trials";
  job.function = spec.modulePath.empty()
                     ? spec.function
                     : spec.modulePath + ":" + spec.function;
  job.microBatches = spec.microBatches;
  for (const Node &n : g->nodes)
    job.activationBytes += n.activationBytes;
  int64_t parameters = bytesMarked(fn, tg::autodiff::kParameterAttr);
  if (!isTrainingStep(fn)) {
    job.forwardTime = g->totalForward;
    job.backwardTime = g->totalBackward;
    job.staticBytes = int64_t(*factor * double(parameters));
    return job;
  }
  // A whole training step: its F is the step, its B nothing; it holds its
  // parameters, their gradients and its optimizer state.
  if (spec.microBatches != 1)
    return fail("@" + spec.function +
                " is a whole training step: one per trial step "
                "(micro-batches=1)");
  job.forwardTime = g->totalForward;
  job.staticBytes = 2 * parameters +
                    bytesMarked(fn, tg::autodiff::kOptimizerStateAttr);
  return job;
}
