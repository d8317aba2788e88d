//===- GradientTest.cpp - Every op's gradient exists and is checked -------===//
//
// Part of Loom. Every tg op that maps float operands to a float result has a
// VJP (GradientOpInterface) once the gradient models are registered; the
// gradient check (autodiff::checkGradients) passes with the builtin VJPs on
// a small network, and catches a planted wrong one: a tanh whose VJP uses
// 1 - y instead of 1 - y^2 fails exactly on the tensors upstream of it.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradBuilder.h"
#include "loom/Autodiff/GradientCheck.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace loom;
using namespace loom::tg;
using namespace loom::tg::autodiff;

namespace {

constexpr const char *kNetwork = R"mlir(
func.func @loss(%x: tensor<2x6xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
  %w1 = tg.weight "w1" : tensor<6x5xf32>
  %w2 = tg.weight "w2" : tensor<5x3xf32>
  %h = tg.matmul %x, %w1 : (tensor<2x6xf32>, tensor<6x5xf32>) -> tensor<2x5xf32>
  %a = tg.tanh %h : tensor<2x5xf32>
  %o = tg.matmul %a, %w2 : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %d = tg.sub %o, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tg.mul %d, %d : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tg.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
)mlir";

/// tanh' written as 1 - y: the kind of slip a VJP can have.
VJP wrongTanh(TanhOp op, GradBuilder &g, ValueRange grads,
              ArrayRef<bool> needed) {
  SmallVector<Value> out = noGradients(op);
  if (needed[0])
    out[0] = g.mul(grads[0], g.sub(g.scalarLike(1, op.getOutput()),
                                   op.getOutput()));
  return out;
}

struct Checked {
  std::vector<TensorGradientCheck> rows;
  bool ok = false;
};

Checked check(MLIRContext &context) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kNetwork, &context);
  Checked out;
  if (!module)
    return out;
  auto fn = module->lookupSymbol<func::FuncOp>("loss");
  std::vector<interp::Tensor<interp::F64Domain>> args;
  for (BlockArgument arg : fn.getArguments())
    args.push_back(interp::randomArgument<interp::F64Domain>(arg, 3));
  // The weights come from a file in a real run; here they are arguments of
  // a copy with random values, through weightsToArguments.
  auto withArgs = cast<func::FuncOp>(fn->clone());
  withArgs.setName("loss_args");
  module->push_back(withArgs);
  weightsToArguments(withArgs);
  for (unsigned i = fn.getNumArguments(); i < withArgs.getNumArguments(); ++i)
    args.push_back(
        interp::randomArgument<interp::F64Domain>(withArgs.getArgument(i), 5));
  GradientCheckOptions options;
  auto rows = checkGradients(withArgs, args, options);
  if (failed(rows))
    return out;
  out.rows = *rows;
  out.ok = true;
  return out;
}

double worst(const Checked &c, StringRef name) {
  for (const auto &r : c.rows)
    if (r.name == name)
      return r.relativeError();
  return -1;
}

TEST(Gradient, EveryFloatOpHasAVJP) {
  DialectRegistry registry;
  registry.insert<TGDialect, func::FuncDialect>();
  registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::vector<std::string> missing;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "tg")
      continue;
    // The terminator and the ops autodiff lists with a reason (no operands,
    // i1 results, not built yet: --tg-autodiff reports that reason at the
    // op) have none; every other op has a VJP.
    StringRef op = name.getStringRef();
    if (name.hasTrait<OpTrait::IsTerminator>())
      continue;
    std::optional<StringRef> why = noGradientReason(op);
    if (why)
      EXPECT_FALSE(why->empty()) << op.str();
    if (!why && !name.hasInterface<GradientOpInterface>())
      missing.push_back(op.str());
  }
  EXPECT_TRUE(missing.empty()) << "no VJP: " << llvm::join(missing, ", ");
  // Every listed op is a registered tg op: the list cannot go stale.
  for (const NoGradient &entry : opsWithoutGradient())
    EXPECT_TRUE(RegisteredOperationName::lookup(entry.op, &context))
        << entry.op.str();
}

TEST(Gradient, BuiltinVJPsPassTheCheck) {
  DialectRegistry registry;
  registry.insert<TGDialect, func::FuncDialect>();
  registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  Checked c = check(context);
  ASSERT_TRUE(c.ok);
  ASSERT_EQ(c.rows.size(), 4u); // x, t, w1, w2
  for (const auto &r : c.rows)
    EXPECT_LT(r.relativeError(), 1e-6) << r.name;
}

TEST(Gradient, PlantedWrongVJPIsCaught) {
  DialectRegistry registry;
  registry.insert<TGDialect, func::FuncDialect>();
  // Planted first: the builtin models leave an op that has one alone.
  registry.addExtension(+[](MLIRContext *context, TGDialect *) {
    TanhOp::attachInterface<GradientModel<TanhOp, wrongTanh>>(*context);
  });
  registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  Checked c = check(context);
  ASSERT_TRUE(c.ok);
  // Upstream of the tanh: wrong; downstream: still right.
  EXPECT_GT(worst(c, "arg0"), 1e-2);
  EXPECT_GT(worst(c, "w1"), 1e-2);
  EXPECT_LT(worst(c, "arg1"), 1e-6);
  EXPECT_LT(worst(c, "w2"), 1e-6);
}

} // namespace
