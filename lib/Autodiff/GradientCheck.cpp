//===- GradientCheck.cpp - Autodiff against finite differences ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradientCheck.h"
#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradBuilder.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using namespace loom::tg::autodiff;
using interp::F64Domain;
using Tensor64 = interp::Tensor<F64Domain>;

double TensorGradientCheck::relativeError() const {
  return largestError / std::max(largestGradient, floor);
}

namespace {

/// A function returning the module's value of every weight in `names`, of
/// the types the forward function's trailing arguments have.
func::FuncOp weightReader(ModuleOp module, func::FuncOp forward,
                          ArrayRef<std::string> names) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  unsigned first = forward.getNumArguments() - names.size();
  SmallVector<Type> types;
  for (size_t i = 0; i < names.size(); ++i)
    types.push_back(forward.getArgumentTypes()[first + i]);
  auto fn = func::FuncOp::create(b, forward.getLoc(), "__loom_weights",
                                 b.getFunctionType({}, types));
  SymbolTable(module).insert(fn);
  b.setInsertionPointToStart(fn.addEntryBlock());
  SmallVector<Value> values;
  for (auto [name, type] : llvm::zip(names, types))
    values.push_back(WeightOp::create(b, forward.getLoc(), type,
                                      b.getStringAttr(name)));
  func::ReturnOp::create(b, forward.getLoc(), values);
  return fn;
}

bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

bool isScalarLoss(func::FuncOp fn) {
  if (fn.getNumResults() != 1)
    return false;
  auto rt = cast<RankedTensorType>(fn.getResultTypes()[0]);
  return rt.getRank() == 0 && isa<FloatType>(rt.getElementType());
}

/// `fn` with its results r_i replaced by the scalar sum_i sum(r_i * c_i)
/// for fixed random c_i in [-1, 1) (integer results dropped): the gradient
/// of that scalar is one vector-Jacobian product of `fn`, with a random
/// vector, which checks every VJP on the way as well as a scalar loss does.
FailureOr<func::FuncOp> randomProjection(func::FuncOp fn, uint64_t seed) {
  auto projected = cast<func::FuncOp>(fn->clone());
  projected.setName("__loom_projected");
  SymbolTable(fn->getParentOfType<ModuleOp>()).insert(projected);
  Block &body = projected.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  Location loc = fn.getLoc();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  SmallVector<Value> values, weights;
  for (Value r : ret.getOperands()) {
    if (!isFloatTensor(r.getType()))
      continue;
    auto type = cast<RankedTensorType>(r.getType());
    SmallVector<APFloat> random;
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      random.push_back(
          b.getFloatAttr(type.getElementType(), uniform(rng)).getValue());
    values.push_back(r);
    weights.push_back(ConstantOp::create(
        b, loc, type, cast<ElementsAttr>(DenseElementsAttr::get(type, random))));
  }
  Value total =
      values.empty()
          ? Value()
          : GradBuilder(b, loc).weightedSum(
                values, weights,
                RankedTensorType::get(
                    {}, cast<RankedTensorType>(values.front().getType())
                            .getElementType()));
  if (!total) {
    projected.erase();
    return fn.emitError("cannot check gradients: the function has no float "
                        "result");
  }
  func::ReturnOp::create(b, ret.getLoc(), total);
  ret.erase();
  projected.setType(b.getFunctionType(projected.getArgumentTypes(),
                                      {total.getType()}));
  projected.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  return projected;
}

} // namespace

FailureOr<std::vector<TensorGradientCheck>>
autodiff::checkGradients(func::FuncOp fn, ArrayRef<Tensor64> args,
                         const GradientCheckOptions &options) {
  auto module = fn->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> copy = module.clone();
  auto target = copy->lookupSymbol<func::FuncOp>(fn.getSymName());
  for (StringRef reserved : {"__loom_forward", "__loom_weights", "__loom_grad",
                             "__loom_projected"})
    if (copy->lookupSymbol(reserved))
      return fn.emitError("names starting with __loom_ are reserved");
  if (options.batchnormTraining)
    batchnormToTraining(target);
  if (!isScalarLoss(target)) {
    FailureOr<func::FuncOp> projected =
        randomProjection(target, options.seed + 1);
    if (failed(projected))
      return failure();
    target = *projected;
  }

  // The forward function with its weights as arguments, for the differences.
  auto forward = cast<func::FuncOp>(target->clone());
  forward.setName("__loom_forward");
  SymbolTable(*copy).insert(forward);
  SmallVector<std::string> weightNames = weightsToArguments(forward);

  Options o;
  o.optimizer = Optimizer::None;
  o.wrtArguments = true;
  o.batchnormTraining = false; // check the function as it is written
  o.name = "__loom_grad";
  FailureOr<func::FuncOp> grad = buildTrainStep(target, o);
  if (failed(grad))
    return failure();

  interp::InterpreterOptions io;
  io.weightsFile = options.weightsFile;
  interp::Interpreter<F64Domain> interpreter(*copy, io);
  std::vector<Tensor64> inputs(args.begin(), args.end());
  if (!weightNames.empty()) {
    auto weights = interpreter.run(weightReader(*copy, forward, weightNames),
                                   {});
    if (failed(weights))
      return failure();
    inputs.insert(inputs.end(), weights->begin(), weights->end());
  }
  auto analytic = interpreter.run(*grad, inputs);
  if (failed(analytic))
    return failure();

  // The tensors differentiated, in the order of the gradient results.
  SmallVector<unsigned> wrt;
  SmallVector<std::string> names;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    if (!isFloatTensor(forward.getArgumentTypes()[i]))
      continue;
    wrt.push_back(i);
    auto name = forward.getArgAttrOfType<StringAttr>(i, "tg.name");
    names.push_back(name ? name.str() : "arg" + std::to_string(i));
  }

  std::mt19937_64 rng(options.seed);
  std::vector<bool> chosen(wrt.size(), true);
  if (options.tensors > 0 && options.tensors < int64_t(wrt.size())) {
    std::vector<size_t> middle;
    for (size_t k = 1; k + 1 < wrt.size(); ++k)
      middle.push_back(k);
    std::shuffle(middle.begin(), middle.end(), rng);
    chosen.assign(wrt.size(), false);
    chosen.front() = chosen.back() = true;
    for (int64_t i = 0; i < options.tensors - 2 && i < int64_t(middle.size());
         ++i)
      chosen[middle[i]] = true;
  }
  std::vector<TensorGradientCheck> rows;
  for (auto [k, argIndex] : llvm::enumerate(wrt)) {
    if (!chosen[k])
      continue;
    const Tensor64 &g = (*analytic)[1 + k];
    TensorGradientCheck row;
    row.name = names[k];
    row.elements = inputs[argIndex].numElements();
    std::vector<int64_t> order(row.elements);
    std::iota(order.begin(), order.end(), 0);
    if (row.elements > options.samplesPerTensor) {
      std::shuffle(order.begin(), order.end(), rng);
      order.resize(options.samplesPerTensor);
    }
    for (int64_t e : order) {
      double x = inputs[argIndex].data[e];
      double h = options.step * std::max(1.0, std::abs(x));
      double f[2];
      for (int side = 0; side < 2; ++side) {
        inputs[argIndex].data[e] = side ? x - h : x + h;
        auto out = interpreter.run(forward, inputs);
        if (failed(out))
          return failure();
        f[side] = (*out)[0].data[0];
      }
      inputs[argIndex].data[e] = x;
      double numeric = (f[0] - f[1]) / (2 * h);
      row.largestGradient = std::max(row.largestGradient, std::abs(numeric));
      row.largestError =
          std::max(row.largestError, std::abs(numeric - g.data[e]));
      ++row.checked;
    }
    rows.push_back(row);
  }
  double scale = 0;
  for (const auto &r : rows)
    scale = std::max(scale, r.largestGradient);
  for (auto &r : rows)
    r.floor = std::max(1e-3 * scale, 1e-12);
  return rows;
}
