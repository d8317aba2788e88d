//===- TGOpsTest.cpp - Building tg ops from C++ ----------------------------===//
//
// Part of Loom. Builders infer result types with the same rules the verifier
// uses; folders simplify at construction time through createOrFold.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGActivation.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace loom::tg;

namespace {

class TGOpsTest : public ::testing::Test {
protected:
  TGOpsTest() : builder(&context) {
    context.loadDialect<TGDialect, func::FuncDialect>();
    loc = builder.getUnknownLoc();
    module = ModuleOp::create(loc);
    auto fnType = builder.getFunctionType({}, {});
    fn = func::FuncOp::create(builder, loc, "f", fnType);
    module->push_back(fn);
    builder.setInsertionPointToStart(fn.addEntryBlock());
  }

  Value arg(ArrayRef<int64_t> shape, Type elem = {}) {
    auto type = RankedTensorType::get(shape, elem ? elem : builder.getF32Type());
    return fn.getBody().front().addArgument(type, loc);
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
};

TEST_F(TGOpsTest, BuildersInferBroadcastAndMatmulTypes) {
  Value a = arg({4, 1, 3}), b = arg({5, 3});
  auto add = AddOp::create(builder, loc, a, b);
  EXPECT_EQ(add.getType(),
            RankedTensorType::get({4, 5, 3}, builder.getF32Type()));
  Value m = arg({8, 2, 16}), n = arg({16, 7});
  auto mm = MatmulOp::create(builder, loc, m, n);
  EXPECT_EQ(mm.getType().getShape(), (ArrayRef<int64_t>{8, 2, 7}));
}

TEST_F(TGOpsTest, BuildersInferConvAndPoolTypes) {
  Value x = arg({1, 3, 224, 224}), w = arg({64, 3, 7, 7});
  auto conv = ConvOp::create(
      builder, loc, x, w, /*bias=*/Value(), builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({3, 3, 3, 3}),
      builder.getDenseI64ArrayAttr({1, 1}), builder.getI64IntegerAttr(1),
      ActivationAttr::get(&context, Activation::Relu));
  EXPECT_EQ(conv.getType().getShape(), (ArrayRef<int64_t>{1, 64, 112, 112}));
  auto pool = MaxPoolOp::create(builder, loc, conv.getResult(),
                                  builder.getDenseI64ArrayAttr({3, 3}),
                                  builder.getDenseI64ArrayAttr({2, 2}),
                                  builder.getDenseI64ArrayAttr({1, 1, 1, 1}));
  EXPECT_EQ(pool.getType().getShape(), (ArrayRef<int64_t>{1, 64, 56, 56}));
}

TEST_F(TGOpsTest, SplitBuilderInfersEveryResult) {
  Value x = arg({2, 10});
  auto split = SplitOp::create(builder, loc, x, builder.getI64IntegerAttr(-1),
                               builder.getDenseI64ArrayAttr({3, 7}));
  ASSERT_EQ(split.getNumResults(), 2u);
  EXPECT_EQ(cast<RankedTensorType>(split.getResult(1).getType()).getShape(),
            (ArrayRef<int64_t>{2, 7}));
}

TEST_F(TGOpsTest, CreateOrFoldRemovesIdentities) {
  Value x = arg({2, 3});
  Value t = builder.createOrFold<TransposeOp>(
      loc, x, builder.getDenseI64ArrayAttr({0, 1}));
  EXPECT_EQ(t, x);
  Value r = builder.createOrFold<ReshapeOp>(loc, x.getType(), x);
  EXPECT_EQ(r, x);
  Value n1 = NegOp::create(builder, loc, x);
  Value n2 = builder.createOrFold<NegOp>(loc, n1);
  EXPECT_EQ(n2, x);
}

TEST_F(TGOpsTest, BuiltModuleVerifies) {
  Value x = arg({1, 8}), g = arg({8}), b = arg({8});
  auto ln = LayerNormOp::create(builder, loc, x, g, b,
                                builder.getI64IntegerAttr(-1),
                                builder.getF64FloatAttr(1e-5));
  auto sm = SoftmaxOp::create(builder, loc, ln.getResult(),
                              builder.getI64IntegerAttr(-1));
  fn.setType(builder.getFunctionType(
      fn.getBody().front().getArgumentTypes(), {sm.getType()}));
  func::ReturnOp::create(builder, loc, sm.getResult());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(TGOpsTest, InferenceRejectsBadShapesWithoutALocation) {
  // The inference functions are usable without emitting diagnostics.
  llvm::SmallVector<Type> inferred;
  auto t23 = RankedTensorType::get({2, 3}, builder.getF32Type());
  auto t4 = RankedTensorType::get({4}, builder.getF32Type());
  EXPECT_TRUE(failed(inferBroadcastBinary(std::nullopt, t23, t4, inferred)));
  EXPECT_TRUE(succeeded(inferBroadcastBinary(std::nullopt, t23,
                                             RankedTensorType::get({3}, builder.getF32Type()),
                                             inferred)));
  EXPECT_EQ(inferred.back(), t23);
}

TEST(TGActivationTest, EveryCaseIsSpelledAsLoomsActivation) {
  // tg.conv's `activation` is a subset of loom::Activation: each ODS
  // case maps to the activation of the same spelling (Activations.def).
  unsigned cases = 0;
  for (uint32_t v = 0; v <= getMaxEnumValForActivation(); ++v) {
    std::optional<Activation> a = symbolizeActivation(v);
    ASSERT_TRUE(a) << "no case " << v;
    ++cases;
    EXPECT_EQ(stringifyActivation(*a).str(),
              std::string(loom::activationName(toActivation(*a))));
    EXPECT_EQ(loom::parseActivation(stringifyActivation(*a).str()),
              toActivation(*a));
  }
  EXPECT_GE(cases, 4u);
}

} // namespace
