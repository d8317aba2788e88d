//===- FuseTrialsCheck.cpp - Fused trials against separate runs -----------===//
//
// Part of Loom. checkFusedTrials (FuseTrials.h): `loom-run --check-trials`.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/FuseTrials.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using interp::F64Domain;
using Values = std::vector<interp::Tensor<F64Domain>>;

double FusedTrialsResult::relativeError() const {
  return error / std::max(largest, 1e-30);
}

namespace {

/// The trials' tensors stacked along a new leading dimension.
interp::Tensor<F64Domain> stack(const std::vector<Values> &trials,
                                unsigned index) {
  std::vector<int64_t> shape = {int64_t(trials.size())};
  const auto &first = trials.front()[index];
  shape.insert(shape.end(), first.shape.begin(), first.shape.end());
  interp::Tensor<F64Domain> out(shape);
  size_t n = first.data.size();
  for (size_t t = 0; t < trials.size(); ++t)
    std::copy(trials[t][index].data.begin(), trials[t][index].data.end(),
              out.data.begin() + t * n);
  return out;
}

/// The tg.name of argument or result `index` ("" when it has none).
std::string nameOf(DictionaryAttr attrs) {
  if (!attrs)
    return "";
  auto name = attrs.getAs<StringAttr>("tg.name");
  return name ? name.getValue().str() : "";
}

/// For each result of `fn`, the argument of the same tg.name (the value the
/// next step takes), or -1.
std::vector<int> feedback(func::FuncOp fn) {
  llvm::StringMap<int> argOf;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (std::string n = nameOf(fn.getArgAttrDict(i)); !n.empty())
      argOf[n] = int(i);
  std::vector<int> out;
  for (unsigned j = 0; j < fn.getNumResults(); ++j) {
    auto it = argOf.find(nameOf(fn.getResultAttrDict(j)));
    out.push_back(it == argOf.end() ? -1 : it->second);
  }
  return out;
}

/// Trial t's starting value of argument `arg` of `fn`.
interp::Tensor<F64Domain> startValue(func::FuncOp fn, BlockArgument arg,
                                     int64_t t, int64_t trials,
                                     uint64_t seed) {
  unsigned i = arg.getArgNumber();
  if (fn.getArgAttr(i, autodiff::kOptimizerStateAttr))
    return interp::Tensor<F64Domain>(std::vector<int64_t>(
        cast<RankedTensorType>(arg.getType()).getShape().begin(),
        cast<RankedTensorType>(arg.getType()).getShape().end()));
  if (auto nominal =
          fn.getArgAttrOfType<FloatAttr>(i, autodiff::kHyperParameterAttr))
    return interp::Tensor<F64Domain>::fromDoubles(
        {}, {nominal.getValueAsDouble() * (1 - 0.5 * double(t) / trials)});
  auto value = interp::randomArgument<F64Domain>(arg, seed + 104729 * (t + 1));
  // A batchnorm's variance (operand 4) is positive: |v| + 1 (a random
  // negative one would make both sides NaN).
  if (llvm::any_of(arg.getUses(), [](OpOperand &use) {
        return isa<tg::BatchNormOp>(use.getOwner()) &&
               use.getOperandNumber() == 4;
      }))
    for (double &v : value.data)
      v = std::fabs(v) + 1;
  return value;
}

} // namespace

FailureOr<std::vector<FusedTrialsResult>>
tg::checkFusedTrials(func::FuncOp fn, const FusedTrialsCheckOptions &options) {
  auto module = fn->getParentOfType<ModuleOp>();
  if (!module)
    return fn.emitError("--check-trials needs a function in a module");
  if (options.steps < 1)
    return fn.emitError("--check-trials needs at least one step, not ")
           << options.steps;
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  auto f = copy->lookupSymbol<func::FuncOp>(fn.getName());
  autodiff::weightsToArguments(f);
  FailureOr<func::FuncOp> fused = fuseTrials(f, options.fuse);
  if (failed(fused))
    return failure();
  const int64_t trials = options.fuse.trials;
  interp::Interpreter<F64Domain> interpreter(*copy);
  std::vector<int> next = feedback(f);

  // Separate runs: one argument list per trial; shared inputs alike.
  std::vector<Values> separate(trials);
  for (int64_t t = 0; t < trials; ++t)
    for (BlockArgument arg : f.getArguments()) {
      bool own =
          isPerTrialArgument(f, arg.getArgNumber(), options.fuse.perTrialInputs);
      separate[t].push_back(
          startValue(f, arg, own ? t : 0, trials, options.seed));
    }
  std::vector<Values> lastSeparate(trials);
  Values lastFused;
  for (int64_t step = 0; step < options.steps; ++step) {
    Values fusedArgs;
    for (BlockArgument arg : f.getArguments())
      fusedArgs.push_back(
          isPerTrialArgument(f, arg.getArgNumber(), options.fuse.perTrialInputs)
              ? stack(separate, arg.getArgNumber())
              : separate[0][arg.getArgNumber()]);
    auto out = interpreter.run(*fused, fusedArgs);
    if (failed(out))
      return failure();
    lastFused = std::move(*out);
    for (int64_t t = 0; t < trials; ++t) {
      auto r = interpreter.run(f, separate[t]);
      if (failed(r))
        return failure();
      lastSeparate[t] = std::move(*r);
      for (size_t j = 0; j < next.size(); ++j)
        if (next[j] >= 0)
          separate[t][next[j]] = lastSeparate[t][j];
    }
  }

  std::vector<FusedTrialsResult> rows;
  for (unsigned j = 0; j < f.getNumResults(); ++j) {
    FusedTrialsResult row;
    row.name = nameOf(f.getResultAttrDict(j));
    if (row.name.empty())
      row.name = "result" + std::to_string(j);
    size_t n = lastSeparate[0][j].data.size();
    for (int64_t t = 0; t < trials; ++t)
      for (size_t k = 0; k < n; ++k) {
        double want = lastSeparate[t][j].data[k];
        double got = lastFused[j].data[t * n + k];
        row.largest = std::max(row.largest, std::fabs(want));
        double err = std::fabs(got - want);
        row.error = std::isnan(err) ? INFINITY : std::max(row.error, err);
      }
    rows.push_back(row);
  }
  return rows;
}
