//===- GraphBuilderTest.cpp - The C++ graph builder API
//--------------------===//
//
// Part of Loom. Building graphs with GraphBuilder: names, scopes, shapes,
// padding rules, composites, diagnostics instead of crashes, the writers,
// and numerics of built graphs on the reference interpreter.
//
//===----------------------------------------------------------------------===//

#include "loom/Builder/GraphBuilder.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace loom;

namespace {

class GraphBuilderTest : public ::testing::Test {
protected:
  GraphBuilderTest()
      : handler(&context, [this](Diagnostic &d) {
          diagnostics += d.str() + "\n";
          ++numDiagnostics;
          return success();
        }) {}

  /// A path in a fresh temporary directory.
  std::string tempPath(StringRef name) {
    if (dir.empty()) {
      SmallString<128> d;
      EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("graph-builder", d));
      dir = std::string(d);
    }
    SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  ~GraphBuilderTest() override {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  static unsigned count(ModuleOp module, StringRef opName) {
    return countOps(module).lookup(opName);
  }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::string diagnostics;
  unsigned numDiagnostics = 0;
  std::string dir;
};

TEST_F(GraphBuilderTest, MlpBuildsVerifiesAndNamesEverything) {
  GraphBuilder b(context, "mlp.safetensors");
  Value x = b.input("x", {2, 784});
  Value h = b.linear(x, 784, 256, "fc1", Act::Relu);
  Value y = b.softmax(b.linear(h, 10, "fc2"));
  EXPECT_EQ(shapeOf(y), (ArrayRef<int64_t>{2, 10}));
  auto module = b.finish({y}, {"probs"});
  ASSERT_TRUE(succeeded(module)) << diagnostics;
  ModuleOp m = **module;
  EXPECT_EQ(m->getAttrOfType<StringAttr>("tg.weights").getValue(),
            "mlp.safetensors");
  auto fn = m.lookupSymbol<func::FuncOp>("main");
  ASSERT_TRUE(fn);
  EXPECT_EQ(fn.getArgAttrOfType<StringAttr>(0, "tg.name").getValue(), "x");
  EXPECT_EQ(fn.getResultAttrOfType<StringAttr>(0, "tg.name").getValue(),
            "probs");
  EXPECT_EQ(count(m, "tg.matmul"), 2u);
  EXPECT_EQ(count(m, "tg.add"), 2u);
  EXPECT_EQ(count(m, "tg.relu"), 1u);
  EXPECT_EQ(count(m, "tg.softmax"), 1u);
  std::vector<std::string> names;
  m.walk([&](tg::WeightOp w) { names.push_back(w.getName().str()); });
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias",
                                             "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(numDiagnostics, 0u);
}

TEST_F(GraphBuilderTest, WeightsAreSharedByNameAndConflictsAreErrors) {
  GraphBuilder b(context);
  Value w1 = b.weight("w", {4, 4});
  Value w2 = b.weight("w", {4, 4});
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(b.getWeightNames().size(), 1u);
  EXPECT_FALSE(b.hadError());
  Value bad = b.weight("w", {4, 5});
  EXPECT_FALSE(bad);
  EXPECT_TRUE(b.hadError());
  EXPECT_NE(diagnostics.find("weight 'w' is declared with type "
                             "tensor<4x5xf32>, but it was declared before "
                             "with type tensor<4x4xf32>"),
            std::string::npos)
      << diagnostics;
  EXPECT_TRUE(failed(b.finish({w1})));
}

TEST_F(GraphBuilderTest, ShapeMismatchIsOneDiagnosticThenNullsPropagate) {
  GraphBuilder b(context);
  Value x = b.input("x", {1, 8});
  Value y;
  {
    GraphBuilder::Scope s = b.scope("encoder");
    y = b.linear(x, 16, 4, "fc");
  }
  EXPECT_FALSE(y);
  // Later ops on the null value stay silent.
  Value z = b.relu(b.add(y, y));
  EXPECT_FALSE(z);
  EXPECT_EQ(numDiagnostics, 1u) << diagnostics;
  EXPECT_NE(diagnostics.find("linear 'encoder.fc': the input is 1x8, "
                             "expected 16 features on its last dimension"),
            std::string::npos)
      << diagnostics;
  EXPECT_TRUE(failed(b.finish({z})));
}

TEST_F(GraphBuilderTest, BadOperandsAreTheShapeRulesDiagnostics) {
  GraphBuilder b(context);
  Value a = b.input("a", {2, 3});
  Value c = b.input("c", {4, 5});
  EXPECT_FALSE(b.add(a, c));
  EXPECT_FALSE(b.matmul(a, c));
  EXPECT_FALSE(b.reshape(a, {7}));
  EXPECT_FALSE(b.transpose(a, {0, 0}));
  EXPECT_EQ(numDiagnostics, 4u) << diagnostics;
  EXPECT_NE(diagnostics.find("cannot reshape 2x3 (6 elements) to 7"),
            std::string::npos)
      << diagnostics;
  // A float op on integers is caught by the op verifier and the op removed.
  Value ids = b.input("ids", {2}, b.getBuilder().getI64Type());
  EXPECT_FALSE(b.relu(ids));
  EXPECT_FALSE(b.input("a", {1}));
  EXPECT_NE(diagnostics.find("input 'a' is declared twice"), std::string::npos);
  EXPECT_TRUE(failed(b.finish({a})));
}

TEST_F(GraphBuilderTest, FusedAttentionForDecodeWithGroupedHeads) {
  GraphBuilder b(context);
  Value q = b.input("q", {2, 8, 1, 64});
  Value k = b.input("k", {2, 2, 512, 64});
  Value v = b.input("v", {2, 2, 512, 64});
  Value len = b.input("length", {2}, b.getBuilder().getI64Type());
  Value o = b.fusedAttention(q, k, v, len, std::nullopt, /*causal=*/true);
  ASSERT_TRUE(o) << diagnostics;
  EXPECT_EQ(shapeOf(o), (ArrayRef<int64_t>{2, 8, 1, 64}));
  auto op = o.getDefiningOp<tg::AttentionOp>();
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getScale().convertToDouble(), 0.125); // 1 / sqrt(64)
  EXPECT_TRUE(op.getCausal());
  // Heads that do not group are the shape rule's diagnostic.
  Value bad = b.input("bad", {2, 3, 1, 64});
  EXPECT_FALSE(b.fusedAttention(bad, k, v));
  EXPECT_NE(diagnostics.find("q's 3 heads are not a multiple of k's 2 heads"),
            std::string::npos)
      << diagnostics;
}

TEST_F(GraphBuilderTest, NullOperandsAndUseAfterFinishAreErrors) {
  {
    GraphBuilder b(context);
    EXPECT_FALSE(b.relu(Value()));
    EXPECT_NE(diagnostics.find("tg.relu: operand #0 is a null value"),
              std::string::npos)
        << diagnostics;
    EXPECT_TRUE(b.hadError());
  }
  diagnostics.clear();
  GraphBuilder b(context);
  Value x = b.input("x", {3});
  ASSERT_TRUE(succeeded(b.finish({b.neg(x)})));
  EXPECT_FALSE(b.relu(x));
  EXPECT_NE(diagnostics.find("used after finish()"), std::string::npos)
      << diagnostics;
  EXPECT_TRUE(failed(b.finish({x})));
}

TEST_F(GraphBuilderTest, SamePaddingAndCeilMode) {
  GraphBuilder b(context);
  Value x = b.input("x", {1, 3, 224, 224});
  // TensorFlow SAME: 7x7/2 on 224 -> 112, padding 5 split 2 before, 3 after.
  Value y = b.conv(x, 8, 7, "stem", Conv2dOptions().stride(2).same());
  ASSERT_TRUE(y) << diagnostics;
  EXPECT_EQ(shapeOf(y), (ArrayRef<int64_t>{1, 8, 112, 112}));
  auto conv = y.getDefiningOp<tg::ConvOp>();
  EXPECT_EQ(conv.getPads(), (ArrayRef<int64_t>{2, 2, 3, 3}));
  // Ceil mode: 3x3/2 over 112 keeps the partial last window: 56, not 55.
  Value p = b.maxpool2d(y, Pool2dOptions(3).stride(2).ceil());
  EXPECT_EQ(shapeOf(p), (ArrayRef<int64_t>{1, 8, 56, 56}));
  EXPECT_EQ(p.getDefiningOp<tg::MaxPoolOp>().getPads(),
            (ArrayRef<int64_t>{0, 0, 1, 1}));
  // ... but never a window that starts in the end padding: 3x3/2 over 5
  // (padded 1 before) is 3 windows either way.
  Value small = b.input("s", {1, 1, 5, 5});
  Value q = b.avgpool2d(small, Pool2dOptions(3).stride(2).pad(1).ceil());
  EXPECT_EQ(shapeOf(q), (ArrayRef<int64_t>{1, 1, 3, 3}));
  // Grouped, asymmetric kernels.
  Value g = b.conv(y, 16, {1, 7}, "g", Conv2dOptions().pad(0, 3).group(4));
  EXPECT_EQ(shapeOf(g), (ArrayRef<int64_t>{1, 16, 112, 112}));
  auto gconv = g.getDefiningOp<tg::ConvOp>();
  EXPECT_EQ(cast<RankedTensorType>(gconv.getFilter().getType()).getShape(),
            (ArrayRef<int64_t>{16, 2, 1, 7}));
  EXPECT_EQ(gconv.getGroups(), 4);
  EXPECT_EQ(gconv.getPads(), (ArrayRef<int64_t>{0, 3, 0, 3}));
  EXPECT_FALSE(b.conv(y, 6, 3, "bad", Conv2dOptions().group(4)));
  EXPECT_NE(diagnostics.find("4 groups do not divide 8 input and 6 output "
                             "channels"),
            std::string::npos)
      << diagnostics;
}

TEST_F(GraphBuilderTest, ScopesQualifyNamesAndLocations) {
  GraphBuilder b(context);
  EXPECT_EQ(b.qualify("x"), "x");
  Value x = b.input("x", {1, 4, 8, 8});
  Value y;
  {
    GraphBuilder::Scope s1 = b.scope("layer1");
    GraphBuilder::Scope s2 = b.scope("0");
    EXPECT_EQ(b.qualify("conv1.weight"), "layer1.0.conv1.weight");
    y = b.convBnRelu(x, 4, 3, "conv1", "bn1", Conv2dOptions().pad(1));
    EXPECT_EQ(b.getWeightNames().back(), "layer1.0.bn1.running_var");
  }
  EXPECT_EQ(b.qualify("fc"), "fc");
  ASSERT_TRUE(y) << diagnostics;
  auto relu = y.getDefiningOp<tg::ReluOp>();
  ASSERT_TRUE(relu);
  auto loc = dyn_cast<NameLoc>(relu.getLoc());
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getName().getValue(), "layer1.0");
  EXPECT_EQ(b.getWeightNames().size(), 5u);
}

TEST_F(GraphBuilderTest, TransformerLayersAndAttention) {
  GraphBuilder b(context);
  Value x = b.input("x", {2, 16, 64});
  TransformerLayerOptions post;
  post.numHeads = 4;
  post.ffnDim = 256;
  Value y = b.transformerLayer(x, "layer.0", post);
  TransformerLayerOptions pre = post;
  pre.preNorm = true;
  y = b.transformerLayer(y, "layer.1", pre);
  ASSERT_TRUE(y) << diagnostics;
  EXPECT_EQ(shapeOf(y), (ArrayRef<int64_t>{2, 16, 64}));
  AttentionOptions bad;
  bad.numHeads = 5;
  EXPECT_FALSE(b.attention(y, "attn", bad));
  EXPECT_NE(diagnostics.find("5 heads do not divide the hidden size 64"),
            std::string::npos)
      << diagnostics;
  GraphBuilder ok(context);
  Value z = ok.input("x", {2, 16, 64});
  z = ok.transformerLayer(z, "layer.0", post);
  z = ok.transformerLayer(z, "layer.1", pre);
  auto module = ok.finish({z});
  ASSERT_TRUE(succeeded(module)) << diagnostics;
  EXPECT_EQ(count(**module, "tg.layernorm"), 4u);
  EXPECT_EQ(count(**module, "tg.matmul"), 16u);
  EXPECT_EQ(count(**module, "tg.softmax"), 2u);
  EXPECT_EQ(count(**module, "tg.gelu"), 2u);
  EXPECT_EQ(count(**module, "tg.weight"), 32u);
  // The post-norm layer ends with a layernorm, the pre-norm one with an add.
  auto fn = (*module)->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  EXPECT_TRUE(ret.getOperand(0).getDefiningOp<tg::AddOp>());
}

TEST_F(GraphBuilderTest, WritersRoundTripAndRandomWeightsFit) {
  GraphBuilder b(context, "w.safetensors");
  Value ids = b.input("ids", {2, 5}, b.getBuilder().getI64Type());
  Value e = b.embedding(ids, 100, 8, "emb");
  LstmState s{b.weight("h0", {1, 8}), b.weight("c0", {1, 8})};
  s = b.lstmCell(b.reshape(b.sliceAxis(e, 1, 0, 1), {2, 8}), s, 8, "lstm");
  auto module = b.finish({s.h, s.c}, {"h", "c"});
  ASSERT_TRUE(succeeded(module)) << diagnostics;
  std::string mlirPath = tempPath("m.mlir"), weightsPath = tempPath("w.bin");
  ASSERT_TRUE(succeeded(writeModule(**module, mlirPath, "a header\nline 2")));
  ASSERT_TRUE(succeeded(writeRandomWeights(**module, weightsPath, 7)));

  auto buffer = llvm::MemoryBuffer::getFile(mlirPath);
  ASSERT_TRUE(bool(buffer));
  EXPECT_TRUE((*buffer)->getBuffer().starts_with("// a header\n// line 2\n"));
  ParserConfig config(&context);
  auto parsed = parseSourceFile<ModuleOp>(mlirPath, config);
  ASSERT_TRUE(parsed) << diagnostics;
  std::string a, c;
  llvm::raw_string_ostream(a) << **module;
  llvm::raw_string_ostream(c) << *parsed;
  EXPECT_EQ(a, c);

  auto file = tg::openWeights(*parsed, weightsPath);
  ASSERT_TRUE(succeeded(file)) << diagnostics;
  unsigned checked = 0;
  parsed->walk([&](tg::WeightOp w) {
    EXPECT_TRUE(succeeded(tg::checkWeight(w, *file))) << diagnostics;
    ++checked;
  });
  // emb, h0, c0, and the LSTM's weight_ih, weight_hh, bias.
  EXPECT_EQ(checked, 6u);
  EXPECT_TRUE(failed(writeModule(**module, tempPath("no/such/dir/m.mlir"))));
}

// An LSTM step on the interpreter against the same arithmetic in C++.
TEST_F(GraphBuilderTest, LstmCellComputesTheLstmStep) {
  GraphBuilder b(context);
  Value x = b.input("x", {1, 2});
  Value h0 = b.input("h", {1, 1});
  Value c0 = b.input("c", {1, 1});
  LstmState s = b.lstmCell(x, {h0, c0}, 1, "cell");
  auto module = b.finish({s.h, s.c});
  ASSERT_TRUE(succeeded(module)) << diagnostics;

  // Gates i, f, g, o: x W_ih + h W_hh + b, with W_ih [2, 4], W_hh [1, 4].
  std::vector<double> wih = {0.5, -0.25, 1.0, 0.75, 0.1, 0.2, -0.3, 0.4};
  std::vector<double> whh = {0.3, 0.6, -0.9, 0.2};
  std::vector<double> bias = {0.05, -0.1, 0.15, 0.0};
  safetensors::Writer writer;
  ASSERT_FALSE(
      bool(writer.add("cell.weight_ih", safetensors::DType::F32, {2, 4}, wih)));
  ASSERT_FALSE(
      bool(writer.add("cell.weight_hh", safetensors::DType::F32, {1, 4}, whh)));
  ASSERT_FALSE(
      bool(writer.add("cell.bias", safetensors::DType::F32, {4}, bias)));
  std::string path = tempPath("lstm.safetensors");
  ASSERT_FALSE(bool(writer.write(path)));

  double xv[2] = {0.8, -0.6}, hv = 0.4, cv = -0.2;
  double gate[4];
  for (int j = 0; j < 4; ++j)
    gate[j] = xv[0] * wih[j] + xv[1] * wih[4 + j] + hv * whh[j] + bias[j];
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  double c = sig(gate[1]) * cv + sig(gate[0]) * std::tanh(gate[2]);
  double h = sig(gate[3]) * std::tanh(c);

  using interp::F64Domain;
  interp::InterpreterOptions options;
  options.weightsFile = path;
  interp::Interpreter<F64Domain> interpreter(**module, options);
  auto result = interpreter.run(
      (*module)->lookupSymbol<func::FuncOp>("main"),
      {interp::Tensor<F64Domain>::fromDoubles({1, 2}, {xv[0], xv[1]}),
       interp::Tensor<F64Domain>::fromDoubles({1, 1}, {hv}),
       interp::Tensor<F64Domain>::fromDoubles({1, 1}, {cv})});
  ASSERT_TRUE(succeeded(result)) << diagnostics;
  // The weights pass through f32 storage.
  EXPECT_NEAR((*result)[0].toDoubles()[0], h, 1e-6);
  EXPECT_NEAR((*result)[1].toDoubles()[0], c, 1e-6);
}

/// The value of activation \p a at \p x, written out independently.
double referenceActivation(Activation a, double x, double alpha, double beta) {
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto clamp = [](double v, double lo, double hi) {
    return std::min(std::max(v, lo), hi);
  };
  switch (a) {
  case Activation::None:
    return x;
  case Activation::Relu:
    return std::max(x, 0.0);
  case Activation::Sigmoid:
    return sig(x);
  case Activation::Tanh:
    return std::tanh(x);
  case Activation::GeluErf:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case Activation::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case Activation::HardSwish:
    return x * clamp(x / 6 + 0.5, 0, 1);
  case Activation::Swish:
    return x * sig(x);
  case Activation::Clip:
    return clamp(x, alpha, beta);
  case Activation::HardSigmoid:
    return clamp(alpha * x + beta, 0, 1);
  case Activation::LeakyRelu:
    return x >= 0 ? x : alpha * x;
  }
  return 0;
}

TEST_F(GraphBuilderTest, EveryActivationOfTheVocabulary) {
  // GraphBuilder::activation builds every loom::Activation (Activations.def)
  // with its parameters; the graph computes the activation's definition.
  const Activation all[] = {
#define LOOM_ACTIVATION(Kind, Spelling, NumParameters) Activation::Kind,
#include "loom/Support/Activations.def"
  };
  const double xs[] = {-2, -0.5, 0.25, 3};
  for (Activation a : all) {
    SCOPED_TRACE(std::string(activationName(a)));
    double alpha = a == Activation::Clip ? -1 : 0.25;
    double beta = a == Activation::Clip ? 1 : 0.5;
    GraphBuilder b(context);
    Value x = b.input("x", {4});
    auto module = b.finish({b.activation(x, a, alpha, beta)}, {"y"});
    ASSERT_TRUE(succeeded(module)) << diagnostics;
    using interp::F64Domain;
    interp::InterpreterOptions options;
    interp::Interpreter<F64Domain> interpreter(**module, options);
    auto result = interpreter.run(
        (*module)->lookupSymbol<func::FuncOp>("main"),
        {interp::Tensor<F64Domain>::fromDoubles({4}, {xs[0], xs[1], xs[2],
                                                      xs[3]})});
    ASSERT_TRUE(succeeded(result)) << diagnostics;
    std::vector<double> got = (*result)[0].toDoubles();
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR(got[i], referenceActivation(a, xs[i], alpha, beta), 1e-6)
          << "x = " << xs[i];
  }
}

TEST_F(GraphBuilderTest, DataMovementHelpers) {
  GraphBuilder b(context);
  Value x = b.input("x", {2, 3, 4, 5});
  EXPECT_EQ(shapeOf(b.flatten(x)), (ArrayRef<int64_t>{2, 60}));
  EXPECT_EQ(shapeOf(b.flatten(x, 2)), (ArrayRef<int64_t>{2, 3, 20}));
  EXPECT_EQ(shapeOf(b.sliceAxis(x, -1, 1, 4)), (ArrayRef<int64_t>{2, 3, 4, 3}));
  SmallVector<Value> parts = b.split(x, 1, {1, 2});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(shapeOf(parts[1]), (ArrayRef<int64_t>{2, 2, 4, 5}));
  EXPECT_EQ(shapeOf(b.concat({parts[1], parts[0]}, 1)), shapeOf(x));
  EXPECT_EQ(shapeOf(b.pad(x, {0, 0, 1, 1}, {0, 0, 1, 1})),
            (ArrayRef<int64_t>{2, 3, 6, 7}));
  EXPECT_EQ(shapeOf(b.reduceMean(x, {2, 3}, /*keepDims=*/false)),
            (ArrayRef<int64_t>{2, 3}));
  EXPECT_EQ(shapeOf(b.broadcastTo(b.weight("v", {1, 5}), {4, 5})),
            (ArrayRef<int64_t>{4, 5}));
  Value idx = b.constantI64({2, 0}, {2});
  EXPECT_EQ(shapeOf(b.gather(x, idx, 1)), (ArrayRef<int64_t>{2, 2, 4, 5}));
  EXPECT_EQ(shapeOf(b.scale(x, 0.5)), shapeOf(x));
  EXPECT_EQ(shapeOf(b.globalAvgPool(x)), (ArrayRef<int64_t>{2, 3, 1, 1}));
  EXPECT_FALSE(b.constant({1.0f, 2.0f}, {3}));
  EXPECT_NE(diagnostics.find("constant of shape 3 needs 3 values, got 2"),
            std::string::npos)
      << diagnostics;
}

} // namespace
