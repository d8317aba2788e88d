//===- GradientCheck.cpp - Autodiff against finite differences ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/GradientCheck.h"
#include "loom/Autodiff/Autodiff.h"
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
  return largestError / std::max(largestGradient, 1e-8);
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

} // namespace

FailureOr<std::vector<TensorGradientCheck>>
autodiff::checkGradients(func::FuncOp fn, ArrayRef<Tensor64> args,
                         const GradientCheckOptions &options) {
  auto module = fn->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> copy = module.clone();
  auto target = copy->lookupSymbol<func::FuncOp>(fn.getSymName());
  if (copy->lookupSymbol("__loom_forward") ||
      copy->lookupSymbol("__loom_weights") || copy->lookupSymbol("__loom_grad"))
    return fn.emitError("names starting with __loom_ are reserved");

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
  std::vector<TensorGradientCheck> rows;
  for (auto [k, argIndex] : llvm::enumerate(wrt)) {
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
  return rows;
}
