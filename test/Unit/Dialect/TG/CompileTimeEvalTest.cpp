//===- CompileTimeEvalTest.cpp - The domain a fold computes in ------------===//
//
// Part of Loom. tg::foldDomainOf picks, from an op's element types, the
// interpreter domain in which compile time computes it; evaluateAtCompileTime
// computes there and rounds each result to its element type.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/CompileTimeEval.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

class CompileTimeEvalTest : public ::testing::Test {
protected:
  CompileTimeEvalTest() {
    context.loadDialect<TGDialect, func::FuncDialect>();
  }

  /// The ops of \p body (a function's ops, on arguments %x: f32, %y: f64,
  /// %h: f16, %b: bf16, %i: i64, %j: i32, %c: i1, all rank 0), in order.
  std::vector<Operation *> parse(StringRef body) {
    std::string text =
        "func.func @f(%x: tensor<f32>, %y: tensor<f64>, %h: tensor<f16>, "
        "%b: tensor<bf16>, %i: tensor<i64>, %j: tensor<i32>, "
        "%c: tensor<i1>) {\n" +
        body.str() + "\n  return\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    std::vector<Operation *> ops;
    if (!module)
      return ops;
    module->walk([&](Operation *op) {
      if (isa<TGDialect>(op->getDialect()))
        ops.push_back(op);
    });
    return ops;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

/// Expects foldDomainOf to pick \p domain for every op of \p ops.
void expectDomain(ArrayRef<Operation *> ops, interp::FoldDomain domain) {
  for (Operation *op : ops) {
    std::optional<interp::FoldDomain> d = foldDomainOf(op);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, domain) << op->getName().getStringRef().str();
  }
}

TEST_F(CompileTimeEvalTest, AnOpTouchingF32F16OrBF16FoldsInF32) {
  auto ops = parse(R"(
  %0 = tg.add %x, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = tg.add %h, %h : (tensor<f16>, tensor<f16>) -> tensor<f16>
  %2 = tg.add %b, %b : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  %3 = tg.less %x, %x : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %4 = tg.select %c, %x, %x : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = tg.equal %b, %b : (tensor<bf16>, tensor<bf16>) -> tensor<i1>)");
  ASSERT_EQ(ops.size(), 6u);
  expectDomain(ops, interp::FoldDomain::F32);
}

TEST_F(CompileTimeEvalTest, AnOpOfF64AndIntegersFoldsInF64) {
  auto ops = parse(R"(
  %0 = tg.add %y, %y : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %1 = tg.less %i, %i : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %2 = tg.select %c, %i, %i : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %3 = tg.mod %j, %j : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %4 = tg.less %y, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>)");
  ASSERT_EQ(ops.size(), 5u);
  expectDomain(ops, interp::FoldDomain::F64);
}

TEST_F(CompileTimeEvalTest, ACastFoldsInF64WhateverItsTypes) {
  auto ops = parse(R"(
  %0 = tg.cast %x : tensor<f32> to tensor<i64>
  %1 = tg.cast %y : tensor<f64> to tensor<f16>
  %2 = tg.cast %i : tensor<i64> to tensor<bf16>)");
  ASSERT_EQ(ops.size(), 3u);
  expectDomain(ops, interp::FoldDomain::F64);
}

TEST_F(CompileTimeEvalTest, TheRuleOnElementKinds) {
  using interp::FoldDomain;
  using interp::foldDomainFor;
  EXPECT_EQ(foldDomainFor({ElemKind::I64, ElemKind::F16}, false),
            FoldDomain::F32);
  EXPECT_EQ(foldDomainFor({ElemKind::I64, ElemKind::I1, ElemKind::F64}, false),
            FoldDomain::F64);
  EXPECT_EQ(foldDomainFor({ElemKind::F32, ElemKind::I64}, true),
            FoldDomain::F64);
  EXPECT_EQ(foldDomainFor({}, false), FoldDomain::F64);
}

/// \p op's one result on rank-0 operands \p values.
double evaluateScalar(Operation *op, ArrayRef<double> values) {
  std::vector<KnownTensor> operands;
  for (double v : values)
    operands.push_back(KnownTensor::fromDoubles({}, {v}));
  std::vector<const KnownTensor *> in;
  for (const KnownTensor &t : operands)
    in.push_back(&t);
  auto results = evaluateAtCompileTime(*op, in);
  EXPECT_TRUE(succeeded(results));
  if (failed(results))
    return NAN;
  return results->front()->data.front();
}

TEST_F(CompileTimeEvalTest, F32OpsComputeInF32) {
  auto ops = parse(R"(
  %0 = tg.log %x : tensor<f32>
  %1 = tg.div %x, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = tg.log %y : tensor<f64>
  %3 = tg.div %y, %y : (tensor<f64>, tensor<f64>) -> tensor<f64>)");
  ASSERT_EQ(ops.size(), 4u);
  // T5's bucket quotient, log(2) / log(16) with log(16) an f32 constant:
  // 0.25 in f32, 0.2499999993 in f64.
  double log16 = float(std::log(16.0));
  double log2 = evaluateScalar(ops[0], {2.0});
  EXPECT_EQ(log2, double(std::log(2.0f)));
  EXPECT_EQ(evaluateScalar(ops[1], {log2, log16}), 0.25);
  double wide = evaluateScalar(ops[2], {2.0});
  EXPECT_EQ(wide, std::log(2.0));
  double quotient = evaluateScalar(ops[3], {wide, log16});
  EXPECT_LT(quotient, 0.25);
  EXPECT_EQ(quotient, std::log(2.0) / log16);
}

TEST_F(CompileTimeEvalTest, ResultsAreRoundedToTheirElementType) {
  auto ops = parse(R"(
  %0 = tg.add %h, %h : (tensor<f16>, tensor<f16>) -> tensor<f16>
  %1 = tg.cast %y : tensor<f64> to tensor<f16>
  %2 = tg.add %b, %b : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>)");
  ASSERT_EQ(ops.size(), 3u);
  // 1 + 2^-12 is a quarter of an f16 unit above 1: the sum rounds to 1.
  EXPECT_EQ(evaluateScalar(ops[0], {1.0, std::ldexp(1.0, -12)}), 1.0);
  // Just above half an f16 unit over 1: one rounding from f64 goes up; two
  // (to f32, then f16) would make it a tie and go to 1.
  double v = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(evaluateScalar(ops[1], {v}), 1 + std::ldexp(1.0, -10));
  // bf16 keeps 8 significand bits: 1 + 2^-9 rounds to 1.
  EXPECT_EQ(evaluateScalar(ops[2], {1.0, std::ldexp(1.0, -9)}), 1.0);
}

} // namespace
