//===- ProverTest.cpp - Z3 proofs of TASO's rules from the axioms ---------===//
//
// Part of Loom. Known TASO substitutions (matmul distributivity, merging two
// matmuls or two convolutions that share an input, conv + batchnorm folding,
// enlarging a 1x1 filter to merge it with a 3x3 one) are proved from the
// axioms; an unsound rule is not, and the numeric check shows a
// counterexample for it. Rewriting with kept rules (Rewrite.h) derives
// their consequences, respecting the shapes they were proved at, and
// nothing else. The operators the prover reasons about are the vocabulary
// derived from the spec structs (OpSpec.h): named after their tg ops, each
// --ops name declared by its spec, and each read back from the tg ops it
// emits as itself.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Prover.h"
#include "loom/Superopt/Rewrite.h"
#include "loom/Superopt/RuleGen.h"
#include "loom/Superopt/RuleSet.h"

#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace loom;
using namespace loom::superopt;

namespace {

/// Builds graphs over a universe by input and operator names.
class Builder {
public:
  explicit Builder(Universe &u) : u(u) {}

  unsigned in(llvm::StringRef name) {
    for (unsigned i = 0; i < u.numInputs(); ++i)
      if (u.inputs()[i].name == name)
        return i;
    ADD_FAILURE() << "no input " << name.str();
    return 0;
  }
  /// Applies op `name` (an --ops name); returns its first result.
  unsigned op(llvm::StringRef name, llvm::ArrayRef<unsigned> operands,
              std::array<int16_t, 2> sizes = {0, 0}) {
    for (const OpDef &d : u.ops())
      if (d.name == name) {
        Node n{d.kind, d.attrs, {operands.begin(), operands.end()}};
        n.attrs.sizes = sizes;
        unsigned first = firstResultOf(g, g.nodes.size(), u.numInputs());
        g.nodes.push_back(n);
        return first;
      }
    ADD_FAILURE() << "no op " << name.str();
    return 0;
  }
  Graph take(llvm::ArrayRef<unsigned> outputs) {
    g.outputs.assign(outputs.begin(), outputs.end());
    Graph r = std::move(g);
    g = Graph();
    return r;
  }

private:
  Universe &u;
  Graph g;
};

class ProverTest : public ::testing::Test {
protected:
  ProverTest() {
    UniverseOptions options;
    auto created = Universe::create(&context, options);
    EXPECT_TRUE(static_cast<bool>(created));
    universe = std::move(*created);
  }

  ProofResult prove(const Graph &source, const Graph &target) {
    EXPECT_TRUE(static_cast<bool>(universe->typeGraph(source)));
    EXPECT_TRUE(static_cast<bool>(universe->typeGraph(target)));
    EXPECT_EQ(fingerprintGraph(*universe, source),
              fingerprintGraph(*universe, target));
    const std::vector<Axiom> &axioms = builtinAxioms();
    std::vector<unsigned> ids(axioms.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::vector<ShapeId> shapes(universe->shapes().size());
    std::iota(shapes.begin(), shapes.end(), 0);
    AxiomBase base(*universe, axioms, ids, shapes);
    Prover prover(*universe, base, ProverOptions());
    return prover.prove(source, target);
  }

  static bool uses(const ProofResult &r, llvm::StringRef axiom) {
    return llvm::is_contained(r.axioms, axiom.str());
  }

  /// Proves source = target and checks that the proof used `axioms`.
  void expectProvedUsing(const Graph &source, const Graph &target,
                         llvm::ArrayRef<llvm::StringRef> axioms) {
    ProofResult r = prove(source, target);
    ASSERT_EQ(r.status, ProofStatus::Proved) << r.reason;
    for (llvm::StringRef a : axioms)
      EXPECT_TRUE(uses(r, a)) << a.str();
  }

  mlir::MLIRContext context;
  std::unique_ptr<Universe> universe;
};

TEST_F(ProverTest, MatmulDistributesOverAdd) {
  Builder b(*universe);
  unsigned x = b.in("x1"), w1 = b.in("w1"), w2 = b.in("w2");
  Graph source =
      b.take({b.op("add", {b.op("matmul", {x, w1}), b.op("matmul", {x, w2})})});
  Graph target = b.take({b.op("matmul", {x, b.op("add", {w1, w2})})});
  expectProvedUsing(source, target, {"matmul-add-right"});
}

TEST_F(ProverTest, TwoMatmulsSharingAnInputMerge) {
  Builder b(*universe);
  unsigned x = b.in("x1"), w1 = b.in("w1"), w2 = b.in("w2");
  Graph source = b.take({b.op("matmul", {x, w1}), b.op("matmul", {x, w2})});
  unsigned split =
      b.op("split1", {b.op("matmul", {x, b.op("concat1", {w1, w2})})}, {4, 4});
  Graph target = b.take({split, split + 1});
  expectProvedUsing(source, target, {"matmul-concat-cols"});
}

TEST_F(ProverTest, TwoConvolutionsSharingAnInputMerge) {
  Builder b(*universe);
  unsigned i = b.in("i1"), f1 = b.in("f1"), f2 = b.in("f2");
  Graph source = b.take({b.op("conv", {i, f1}), b.op("conv", {i, f2})});
  unsigned split =
      b.op("split1", {b.op("conv", {i, b.op("concat0", {f1, f2})})}, {4, 4});
  Graph target = b.take({split, split + 1});
  expectProvedUsing(source, target, {"conv-concat-filters"});
}

TEST_F(ProverTest, OneByOneAndThreeByThreeConvolutionsMergeByEnlarging) {
  Builder b(*universe);
  unsigned i = b.in("i1"), f = b.in("f1"), p = b.in("p1");
  Graph source = b.take({b.op("conv", {i, f}), b.op("conv", {i, p})});
  unsigned split = b.op(
      "split1", {b.op("conv", {i, b.op("concat0", {f, b.op("enlarge", {p})})})},
      {4, 4});
  Graph target = b.take({split, split + 1});
  expectProvedUsing(source, target, {"conv-enlarge"});
}

TEST_F(ProverTest, BatchNormFoldsIntoConvolution) {
  Builder b(*universe);
  unsigned i = b.in("i1"), f = b.in("f1"), g = b.in("bn_gamma"),
           beta = b.in("bn_beta"), m = b.in("bn_mean"), v = b.in("bn_var");
  Graph source =
      b.take({b.op("batchnorm", {b.op("conv", {i, f}), g, beta, m, v})});
  unsigned k = b.op("bn_scale", {g, v});
  unsigned filter = b.op("scale_filter", {f, k});
  unsigned bias = b.op("bn_shift", {beta, m, k});
  Graph target = b.take({b.op("conv_bias", {i, filter, bias})});
  expectProvedUsing(source, target, {"batchnorm-affine", "conv-affine"});
  EXPECT_FALSE(numericCounterexample(*universe, source, target, 7));
}

TEST_F(ProverTest, UnsoundRuleIsNotProvedAndHasACounterexample) {
  Builder b(*universe);
  unsigned x1 = b.in("x1"), x2 = b.in("x2");
  Graph source = b.take({b.op("relu", {b.op("add", {x1, x2})})});
  Graph target =
      b.take({b.op("add", {b.op("relu", {x1}), b.op("relu", {x2})})});
  const std::vector<Axiom> &axioms = builtinAxioms();
  std::vector<unsigned> ids(axioms.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<ShapeId> shapes(universe->shapes().size());
  std::iota(shapes.begin(), shapes.end(), 0);
  AxiomBase base(*universe, axioms, ids, shapes);
  Prover prover(*universe, base, ProverOptions());
  ProofResult r = prover.prove(source, target);
  EXPECT_NE(r.status, ProofStatus::Proved);
  std::optional<std::string> cex =
      numericCounterexample(*universe, source, target, 1);
  ASSERT_TRUE(cex.has_value());
  EXPECT_NE(cex->find("counterexample"), std::string::npos) << *cex;
  EXPECT_NE(cex->find("x1 = "), std::string::npos) << *cex;
}

TEST_F(ProverTest, RewritingDerivesConsequencesOfKeptRules) {
  Builder b(*universe);
  unsigned x = b.in("x1"), w1 = b.in("w1"), w2 = b.in("w2");
  RewriteBase base(*universe);
  // matmul(x, concat(w1, w2)) = concat(matmul(x, w1), matmul(x, w2)) and
  // split(concat(a, b)) = (a, b), at the shapes of x1, w1, w2.
  Graph mmSource = b.take({b.op("matmul", {x, b.op("concat1", {w1, w2})})});
  Graph mmTarget = b.take(
      {b.op("concat1", {b.op("matmul", {x, w1}), b.op("matmul", {x, w2})})});
  base.addRule(mmSource, mmTarget);
  unsigned x2 = b.in("x2"), x3 = b.in("x3");
  unsigned split = b.op("split1", {b.op("concat1", {x2, x3})}, {4, 4});
  Graph scSource = b.take({split, split + 1});
  Graph scTarget = b.take({x2, x3});
  base.addRule(scSource, scTarget);
  // Both directions of the first rule's equation; the second's two
  // equations left to right only (their right sides are variables).
  EXPECT_EQ(base.size(), 4u);

  // Two matmuls sharing an input = a split of one matmul: two steps.
  Graph source = b.take({b.op("matmul", {x, w1}), b.op("matmul", {x, w2})});
  unsigned merged =
      b.op("split1", {b.op("matmul", {x, b.op("concat1", {w1, w2})})}, {4, 4});
  Graph target = b.take({merged, merged + 1});
  EXPECT_TRUE(base.derives(source, target));
  // One step is not enough.
  EXPECT_FALSE(base.derives(source, target, DeriveOptions{1, 2000}));
  // The same rule with the inputs renamed (x2 for x1; w3 for w2) follows
  // too: rewrites are over variables.
  unsigned w3 = b.in("w3");
  Graph renamedSource =
      b.take({b.op("matmul", {x2, w1}), b.op("matmul", {x2, w3})});
  unsigned renamed =
      b.op("split1", {b.op("matmul", {x2, b.op("concat1", {w1, w3})})}, {4, 4});
  Graph renamedTarget = b.take({renamed, renamed + 1});
  EXPECT_TRUE(base.derives(renamedSource, renamedTarget));
}

TEST_F(ProverTest, RewritingRespectsShapesAndDerivesNothingElse) {
  Builder b(*universe);
  unsigned x1 = b.in("x1"), x2 = b.in("x2"), w1 = b.in("w1");
  RewriteBase base(*universe);
  // relu(relu(x)) = relu(x), proved for x of x1's shape [2,4].
  Graph idemSource = b.take({b.op("relu", {b.op("relu", {x1})})});
  Graph idemTarget = b.take({b.op("relu", {x1})});
  base.addRule(idemSource, idemTarget);
  EXPECT_EQ(base.size(), 2u);

  auto relu3 = [&](unsigned v) {
    return b.take({b.op("relu", {b.op("relu", {b.op("relu", {v})})})});
  };
  auto relu1 = [&](unsigned v) { return b.take({b.op("relu", {v})}); };
  // At the same shape (x2), on any variable.
  EXPECT_TRUE(base.derives(relu3(x2), relu1(x2)));
  // Not at another shape (w1 is [4,4]): the rule was not proved there.
  EXPECT_FALSE(base.derives(relu3(w1), relu1(w1)));
  // Not an equation that does not follow: relu(x) = x, relu(x1) = relu(x2).
  EXPECT_FALSE(base.derives(relu3(x1), b.take({x1})));
  EXPECT_FALSE(base.derives(relu3(x1), relu1(x2)));
  // An unsound candidate is not derived from a rule it resembles.
  Graph source = b.take({b.op("relu", {b.op("add", {x1, x2})})});
  Graph target =
      b.take({b.op("add", {b.op("relu", {x1}), b.op("relu", {x2})})});
  EXPECT_FALSE(base.derives(source, target));
}

//===----------------------------------------------------------------------===//
// The vocabulary
//===----------------------------------------------------------------------===//

TEST(VocabularyTest, IsDerivedFromTheSpecs) {
  mlir::MLIRContext context;
  context.loadDialect<loom::tg::TGDialect>();
  llvm::ArrayRef<OpSpec> specs = vocabulary();
  ASSERT_FALSE(specs.empty());
  llvm::StringSet<> names;
  size_t variants = 0;
  for (unsigned i = 0; i < specs.size(); ++i) {
    const OpSpec &s = specs[i];
    EXPECT_EQ(s.kind.index(), i);
    EXPECT_EQ(&specOf(s.kind), &s);
    EXPECT_TRUE(names.insert(s.name).second) << s.name.str();
    EXPECT_EQ(kindNamed(s.name), s.kind);
    // Every spec stands for a tg op of the dialect.
    EXPECT_TRUE(mlir::RegisteredOperationName::lookup(s.tgOp, &context))
        << s.tgOp.str();
    variants += s.variants.size();
  }
  // Names are the tg mnemonics (less `2d`); macros name the op ending them.
  auto tgOpOf = [](llvm::StringRef name) {
    return specOf(*kindNamed(name)).tgOp.str();
  };
  EXPECT_EQ(tgOpOf("matmul"), "tg.matmul");
  EXPECT_EQ(tgOpOf("conv"), "tg.conv");
  EXPECT_EQ(tgOpOf("avgpool"), "tg.avgpool");
  EXPECT_EQ(tgOpOf("smul"), "tg.mul");
  EXPECT_EQ(tgOpOf("bn_shift"), "tg.sub");
  EXPECT_EQ(tgOpOf("const_one"), "tg.constant");
  EXPECT_FALSE(kindNamed("conv"));
  // The --ops names are the specs' variants: a name and a suffix each.
  std::vector<std::pair<std::string, std::string>> ops = Universe::allOpNames();
  EXPECT_EQ(ops.size(), variants);
  size_t k = 0;
  for (const OpSpec &s : specs)
    for (const OpVariant &v : s.variants)
      EXPECT_EQ(ops[k++].first, (s.name + v.suffix).str());
  llvm::SmallVector<llvm::StringRef> defaults = Universe::defaultOpNames();
  EXPECT_TRUE(llvm::is_contained(defaults, "conv_bias_relu"));
  EXPECT_TRUE(llvm::is_contained(defaults, "concat2"));
  EXPECT_FALSE(llvm::is_contained(defaults, "channel_affine"));
}

/// A graph applying \p d once, to the first operands of the roles it takes
/// that type-check: inputs, parameter expressions, or a concatenation of an
/// input with itself (which gives a split a boundary to cut at).
std::optional<Graph> applicationOf(Universe &u, const OpDef &d) {
  unsigned n = u.numInputs();
  std::vector<std::pair<Graph, Role>> values;
  for (unsigned i = 0; i < n; ++i) {
    Graph g;
    g.outputs = {i};
    values.push_back({g, u.inputs()[i].role});
  }
  for (const ParamExpr &pe : u.paramExprs())
    values.push_back({pe.graph, pe.role});
  OpKind concat = *kindNamed("concat");
  for (unsigned i = 0; i < n; ++i)
    for (int axis = 0; axis < u.shapes().rank(u.inputs()[i].shape); ++axis) {
      Graph g;
      g.nodes.push_back({concat, axisAttrs(axis), {i, i}});
      g.outputs = {n};
      values.push_back({g, u.inputs()[i].role});
    }
  const OpSpec &spec = specOf(d.kind);
  unsigned arity = spec.numOperands + (d.attrs.bias ? 1 : 0);
  llvm::SmallVector<unsigned, 5> tuple;
  std::optional<Graph> found;
  auto search = [&](auto &self) -> void {
    if (found)
      return;
    if (tuple.size() == arity) {
      llvm::SmallVector<Role, 5> roles;
      Graph g;
      Node node{d.kind, d.attrs, {}};
      for (unsigned v : tuple) {
        roles.push_back(values[v].second);
        const Graph &operand = values[v].first;
        node.operands.push_back(
            mergeGraph(g, operand, n, u.shapes())[operand.outputs[0]]);
      }
      if (!spec.accepts(d.attrs, roles))
        return;
      unsigned first = firstResultOf(g, g.nodes.size(), n);
      g.nodes.push_back(node);
      for (unsigned r = 0; r < spec.numResults; ++r)
        g.outputs.push_back(first + r);
      llvm::SmallVector<ShapeId, 64> shapes;
      for (const Input &in : u.inputs())
        shapes.push_back(in.shape);
      auto types = u.typeGraphAt(g, shapes);
      if (!types) {
        llvm::consumeError(types.takeError());
        return;
      }
      found = std::move(g);
      return;
    }
    for (unsigned v = 0; v < values.size() && !found; ++v) {
      if (!(spec.operandRoles[tuple.size()] & roleBit(values[v].second)))
        continue;
      tuple.push_back(v);
      self(self);
      tuple.pop_back();
    }
  };
  search(search);
  return found;
}

TEST(VocabularyTest, EveryOperatorReadsBackAsItself) {
  mlir::MLIRContext context;
  context.loadDialect<loom::tg::TGDialect, mlir::func::FuncDialect>();
  UniverseOptions options;
  options.ops = "all";
  auto created = Universe::create(&context, options);
  ASSERT_TRUE(static_cast<bool>(created));
  Universe &u = **created;
  ASSERT_EQ(u.ops().size(), Universe::allOpNames().size());
  for (const OpDef &d : u.ops()) {
    std::optional<Graph> g = applicationOf(u, d);
    ASSERT_TRUE(g) << "no operands for " << d.name;
    RuleRecord rule;
    rule.source = rule.target = *g;
    auto module = emitRules(u, {rule}, mlir::DictionaryAttr::get(&context, {}));
    auto rules = loadRules(*module);
    ASSERT_TRUE(succeeded(rules)) << d.name;
    std::unique_ptr<Universe> ru = Universe::createForInputs(
        &context, inputsOfRuleFunction((*rules)[0].source), 1);
    auto imported = importGraph((*rules)[0].source, *ru);
    ASSERT_TRUE(succeeded(imported)) << d.name;
    EXPECT_EQ(ru->describe(*imported), u.describe(*g)) << d.name;
    EXPECT_EQ(imported->nodes.back().kind, d.kind) << d.name;
  }
}

TEST(VocabularyTest, CostsAreTheWorkOfTheEmittedOps) {
  mlir::MLIRContext context;
  context.loadDialect<loom::tg::TGDialect>();
  ShapeTable t;
  ShapeId x = t.intern({2, 4}), w = t.intern({4, 4}),
          i = t.intern({1, 4, 5, 5}), f = t.intern({4, 4, 3, 3}),
          v = t.intern({4}), xx = t.intern({4, 4});
  auto cost = [&](llvm::StringRef name, const OpAttrs &attrs,
                  llvm::ArrayRef<ShapeId> in, llvm::ArrayRef<ShapeId> out) {
    return costOf(&context, t, *kindNamed(name), attrs, in, out);
  };
  // cost::workOf: a multiply-add is 2 FLOPs; bytes of f32 operands/results.
  OpCost mm = cost("matmul", {}, {x, w}, {x});
  EXPECT_EQ(mm.flops, 2.0 * 2 * 4 * 4);
  EXPECT_EQ(mm.bytes, 4.0 * (8 + 16 + 8));
  // A fused relu costs what a relu does.
  OpCost conv = cost("conv", {}, {i, f}, {i});
  OpCost convRelu = cost("conv", convAttrs(true, false), {i, f}, {i});
  EXPECT_EQ(conv.flops, 2.0 * 100 * 4 * 3 * 3);
  EXPECT_EQ(convRelu.flops, conv.flops + 100);
  // Data movement does no arithmetic; a split's pieces are views.
  EXPECT_EQ(cost("concat", axisAttrs(0), {x, x}, {xx}).flops, 0);
  OpAttrs halves = axisAttrs(0);
  halves.sizes = {2, 2};
  OpCost split = cost("split", halves, {xx}, {x, x});
  EXPECT_EQ(split.flops, 0);
  EXPECT_EQ(split.bytes, 0);
  // Parameter preparation folds into the weights.
  EXPECT_EQ(cost("bn_scale", {}, {v, v}, {v}).flops, 0);
}

} // namespace
