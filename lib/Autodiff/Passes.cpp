//===- Passes.cpp - tg-autodiff and tg-weights-to-arguments ---------------===//
//
// Part of Loom. See the descriptions in include/loom/Autodiff/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Passes.h"
#include "loom/Autodiff/Autodiff.h"

namespace loom::autodiff {
#define GEN_PASS_DEF_TGAUTODIFF
#define GEN_PASS_DEF_TGWEIGHTSTOARGUMENTS
#include "loom/Autodiff/Passes.h.inc"
} // namespace loom::autodiff

using namespace mlir;
using namespace loom;

FailureOr<func::FuncOp> tg::autodiff::findFunction(ModuleOp module,
                                                   StringRef name,
                                                   StringRef pass) {
  if (!name.empty()) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    return module.emitError(pass) << ": no function named '" << name << "'";
  }
  auto fns = llvm::to_vector(module.getOps<func::FuncOp>());
  if (fns.size() == 1)
    return fns.front();
  return module.emitError(pass)
         << ": the module has " << fns.size()
         << " functions; name one with function=NAME";
}

namespace {

struct Autodiff : public autodiff::impl::TGAutodiffBase<Autodiff> {
  using TGAutodiffBase::TGAutodiffBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    tg::registerTGGradientInterfaceModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> fn =
        tg::autodiff::findFunction(module, function, "tg-autodiff");
    if (failed(fn))
      return signalPassFailure();
    tg::autodiff::Options o;
    if (optimizer == "none")
      o.optimizer = tg::autodiff::Optimizer::None;
    else if (optimizer == "sgd")
      o.optimizer = tg::autodiff::Optimizer::SGD;
    else if (optimizer == "adam")
      o.optimizer = tg::autodiff::Optimizer::Adam;
    else {
      module.emitError("tg-autodiff: unknown optimizer '")
          << optimizer << "' (none, sgd, adam)";
      return signalPassFailure();
    }
    o.learningRate = lr;
    o.momentum = momentum;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.epsilon = epsilon;
    o.weightDecay = weightDecay;
    o.wrtArguments = wrtArguments;
    o.hyperParameterArguments = hyperParameterArguments;
    o.batchnormTraining = batchnormTraining;
    o.recompute = recompute;
    o.name = name;
    if (failed(tg::autodiff::buildTrainStep(*fn, o)))
      signalPassFailure();
  }
};

struct WeightsToArguments
    : public autodiff::impl::TGWeightsToArgumentsBase<WeightsToArguments> {
  using TGWeightsToArgumentsBase::TGWeightsToArgumentsBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> fn =
        tg::autodiff::findFunction(getOperation(), function,
                                   "tg-weights-to-arguments");
    if (failed(fn))
      return signalPassFailure();
    tg::autodiff::weightsToArguments(*fn);
  }
};

} // namespace
