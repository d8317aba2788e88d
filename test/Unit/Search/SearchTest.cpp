//===- SearchTest.cpp - Term graphs, matching, e-graphs, extraction -------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Search/Backtracking.h"
#include "loom/Search/EGraph.h"
#include "loom/Search/Extraction.h"
#include "loom/Search/Matcher.h"
#include "loom/Search/Rule.h"
#include "loom/Search/TermGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <atomic>
#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

class SearchTest : public ::testing::Test {
protected:
  SearchTest() : sc(&ctx, nullptr) {
    ctx.loadDialect<tg::TGDialect, func::FuncDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef ir) {
    return parseSourceString<ModuleOp>(ir, &ctx);
  }

  TermGraph graphOf(ModuleOp m, StringRef fn = "main") {
    std::string why;
    auto f = m.lookupSymbol<func::FuncOp>(fn);
    FailureOr<TermGraph> g = TermGraph::fromFunc(sc, f, why);
    EXPECT_TRUE(succeeded(g)) << why;
    return succeeded(g) ? std::move(*g) : TermGraph();
  }

  RuleSet rulesOf(StringRef ir, RuleLoadOptions options = {}) {
    rulesModule = parse(ir);
    EXPECT_TRUE(rulesModule);
    FailureOr<RuleSet> set = loadRules(sc, *rulesModule, options);
    EXPECT_TRUE(succeeded(set));
    return succeeded(set) ? std::move(*set) : RuleSet();
  }

  /// The run time of \p g: its ops' costs, without the stored weights.
  static double runTimeOf(const TermGraph &g) {
    double sum = 0;
    for (const TermNode &node : g.nodes)
      sum += node.foldable ? 0 : node.cost;
    return sum;
  }

  size_t count(const TermGraph &g, StringRef opName) {
    size_t n = 0;
    for (const TermNode &node : g.nodes) {
      const OpInfo &info = sc.op(node.op);
      n += info.isOp() && info.name->getStringRef() == opName;
    }
    return n;
  }

  MLIRContext ctx;
  SearchContext sc;
  OwningOpRef<ModuleOp> rulesModule;
};

/// Two matmuls sharing their input -> one matmul and a split, at witness
/// shapes 4x6 * 6x8 and 4x6 * 6x10.
constexpr const char *kMergeRule = R"mlir(
module {
  module @rule_1 attributes {loom.status = "proved"} {
    func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %x, %w2 : (tensor<4x6xf32>, tensor<6x10xf32>) -> tensor<4x10xf32>
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
    func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %w = tg.concat %w1, %w2 {axis = 1 : i64} : (tensor<6x8xf32>, tensor<6x10xf32>) -> tensor<6x18xf32>
      %m = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x18xf32>) -> tensor<4x18xf32>
      %a, %b = tg.split %m {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
  }
  module @rule_2 attributes {loom.status = "unknown"} {
    func.func @source(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %r = tg.relu %x : tensor<4x6xf32>
      return %r : tensor<4x6xf32>
    }
    func.func @target(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      return %x : tensor<4x6xf32>
    }
  }
}
)mlir";

TEST_F(SearchTest, DimMapIsConsistentAndKeepsZeroAndOne) {
  DimMap d;
  EXPECT_TRUE(d.unify(4, 128));
  EXPECT_TRUE(d.unify(4, 128));
  EXPECT_FALSE(d.unify(4, 64)); // one witness value, one real value
  EXPECT_TRUE(d.unify(6, 128)); // two witness values may meet
  EXPECT_TRUE(d.unify(1, 1));
  EXPECT_FALSE(d.unify(1, 8)); // 1 changes broadcasting
  EXPECT_FALSE(d.unify(0, 3));
  EXPECT_EQ(d.map(4), 128);
  EXPECT_EQ(d.map(1), 1);
  EXPECT_FALSE(d.map(9).has_value());
  size_t m = d.mark();
  EXPECT_TRUE(d.unify(9, 2));
  d.undo(m);
  EXPECT_FALSE(d.map(9).has_value());
}

TEST_F(SearchTest, CanonicalGraphsMergeDuplicatesAndHashCommutatively) {
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = tg.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %b = tg.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %dead = tg.relu %a : tensor<4xf32>
      return %a, %b : tensor<4xf32>, tensor<4xf32>
    }
    func.func @swapped(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = tg.add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %a, %a : tensor<4xf32>, tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m), h = graphOf(*m, "swapped");
  EXPECT_EQ(count(g, "tg.add"), 1u);  // merged
  EXPECT_EQ(count(g, "tg.relu"), 0u); // dead
  EXPECT_EQ(g.outputs[0], g.outputs[1]);
  EXPECT_EQ(g.hash, h.hash);
}

TEST_F(SearchTest, WeightsCostNoRunTimeButTheirStoredBytes) {
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4x6xf32>) -> tensor<4x8xf32> {
      %w = tg.weight "w" : tensor<6x8xf32>
      %t = tg.relu %w : tensor<6x8xf32>
      %y = tg.matmul %x, %t : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  double matmulCost = 0;
  for (const TermNode &n : g.nodes)
    if (sc.op(n.op).isOp() && sc.op(n.op).name->getStringRef() == "tg.matmul")
      matmulCost = n.cost;
  EXPECT_GT(matmulCost, 0);
  // relu(w) is what the compiled model stores (w is folded into it).
  EXPECT_EQ(g.storedBytes(), 6 * 8 * 4);
  EXPECT_DOUBLE_EQ(g.cost, matmulCost + g.storedBytes() * kStoredBytePrice);
}

TEST_F(SearchTest, AStoredConstantCountsOnceHoweverManyOpsReadIt) {
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4x6xf32>, %y: tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
      %w = tg.weight "w" : tensor<6x8xf32>
      %a = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %y, %w : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  sc.setStoredBytePrice(0.25);
  TermGraph g = graphOf(*m);
  EXPECT_EQ(g.storedBytes(), 6 * 8 * 4);
  EXPECT_GT(runTimeOf(g), 0);
  EXPECT_DOUBLE_EQ(g.cost, runTimeOf(g) + 0.25 * 6 * 8 * 4);
}

TEST_F(SearchTest, ExtractionSharesAStoredConstant) {
  // b = y wb may also be computed as y wa (an equivalence assumed here):
  // the same run-time cost, but wa is stored already. Every extractor
  // that counts sharing takes it; the greedy one (a tree cost) need not.
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4x6xf32>, %y: tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
      %wa = tg.weight "wa" : tensor<6x8xf32>
      %wb = tg.weight "wb" : tensor<6x8xf32>
      %a = tg.matmul %x, %wa : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %y, %wb : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  sc.setStoredBytePrice(1e-3);
  TermGraph g = graphOf(*m);
  EGraph eg(sc);
  SmallVector<ClassId, 2> roots = eg.addGraph(g);
  ENode a = eg.node(eg.eclass(roots[0]).nodes[0]);
  ENode b = eg.node(eg.eclass(roots[1]).nodes[0]);
  ClassId wa = a.children[1], y = b.children[0];
  SmallVector<Type, 1> types(eg.eclass(roots[1]).types);
  ClassId alt = eg.add(a.op, {y, wa}, types, a.cost,
                       eg.eclass(roots[1]).loc, -1);
  eg.merge(alt, roots[1]);
  eg.rebuild();
  Extraction greedy = extractGreedy(eg, roots);
  ASSERT_TRUE(greedy.ok);
  Extraction local = improveChoice(eg, roots, greedy, 10);
  Extraction ilp = extractILP(eg, roots, 10, greedy.graph.cost);
  for (const Extraction *e : {&local, &ilp}) {
    ASSERT_TRUE(e->ok);
    EXPECT_EQ(e->graph.storedBytes(), 6 * 8 * 4);
    EXPECT_DOUBLE_EQ(e->graph.cost, runTimeOf(g) + 1e-3 * 6 * 8 * 4);
  }
  EXPECT_DOUBLE_EQ(g.cost, runTimeOf(g) + 2 * 1e-3 * 6 * 8 * 4);
}

TEST_F(SearchTest, LoaderSkipsUnprovedRulesAndUnusableDirections) {
  RuleSet set = rulesOf(kMergeRule);
  EXPECT_EQ(set.numRuleModules, 2u);
  EXPECT_EQ(set.numUnproved, 1u);
  // rule_1 both ways.
  ASSERT_EQ(set.rules.size(), 2u);
  EXPECT_EQ(set.rules[0].name, "rule_1");
  EXPECT_EQ(set.rules[1].name, "rule_1~");
  EXPECT_TRUE(set.rules[0].multiPattern);
  EXPECT_EQ(set.rules[0].source.outputs.size(), 2u);
  RuleLoadOptions forward;
  forward.bothDirections = false;
  EXPECT_EQ(rulesOf(kMergeRule, forward).rules.size(), 1u);
}

TEST_F(SearchTest, MultiOutputRuleAppliesAtRealShapes) {
  RuleSet set = rulesOf(kMergeRule);
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<32x48xf32>) -> (tensor<16x64xf32>, tensor<16x48xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %b = tg.matmul %x, %w2 : (tensor<16x32xf32>, tensor<32x48xf32>) -> tensor<16x48xf32>
      return %a, %b : tensor<16x64xf32>, tensor<16x48xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  TermGraphView view(sc, g);
  PatternMatcher<TermGraphView> matcher(sc, view);
  Instantiator inst(sc);
  std::vector<TermGraph> results;
  matcher.forEachMatch(set.rules[0], [&](const Match<ValueRef> &match) {
    EXPECT_EQ(match.dims.map(6), 32);
    SmallVector<Type> varTypes, outTypes;
    for (ValueRef v : match.vars)
      varTypes.push_back(g.typeOf(v));
    for (ValueRef v : match.outputs)
      outTypes.push_back(g.typeOf(v));
    const Instance *i =
        inst.instantiate(set.rules[0], varTypes, match.dims, outTypes);
    EXPECT_NE(i, nullptr);
    if (i) {
      FailureOr<TermGraph> h = applyRewrite(sc, g, match, *i);
      EXPECT_TRUE(succeeded(h));
      if (succeeded(h))
        results.push_back(std::move(*h));
    }
    return true;
  });
  // Both orders of the two matmuls match.
  ASSERT_EQ(results.size(), 2u);
  const TermGraph &h = results[0];
  EXPECT_EQ(count(h, "tg.matmul"), 1u);
  EXPECT_EQ(count(h, "tg.split"), 1u);
  for (const TermNode &n : h.nodes)
    if (sc.op(n.op).isOp() && sc.op(n.op).name->getStringRef() == "tg.split")
      EXPECT_EQ(sc.op(n.op).shapeValues.size(), 2u);
  // The instantiated split has the real sizes.
  bool found = false;
  for (const TermNode &n : h.nodes)
    if (sc.op(n.op).isOp() && sc.op(n.op).name->getStringRef() == "tg.split") {
      auto sizes = sc.op(n.op).shapeValues;
      found = (sizes[0] == 64 && sizes[1] == 48) ||
              (sizes[0] == 48 && sizes[1] == 64);
    }
  EXPECT_TRUE(found);
}

TEST_F(SearchTest, ConflictingDimensionsRejectTheMatch) {
  // The witness gives w1 and w2 one column count (8); the graph's differ.
  RuleSet set = rulesOf(R"mlir(
    module {
      module @rule_1 attributes {loom.status = "proved"} {
        func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<4x8xf32> {
          %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
          %b = tg.matmul %x, %w2 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
          %s = tg.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
          return %s : tensor<4x8xf32>
        }
        func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<4x8xf32> {
          %w = tg.add %w1, %w2 : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
          %m = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
          return %m : tensor<4x8xf32>
        }
      }
    }
  )mlir");
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<32x64xf32>, %y: tensor<3x32xf32>) -> (tensor<16x64xf32>, tensor<3x64xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %b = tg.matmul %x, %w2 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %s = tg.add %a, %b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
      %c = tg.matmul %y, %w1 : (tensor<3x32xf32>, tensor<32x64xf32>) -> tensor<3x64xf32>
      return %s, %c : tensor<16x64xf32>, tensor<3x64xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  TermGraphView view(sc, g);
  PatternMatcher<TermGraphView> matcher(sc, view);
  unsigned matches = 0;
  matcher.forEachMatch(set.rules[0], [&](const Match<ValueRef> &) {
    ++matches;
    return true;
  });
  EXPECT_EQ(matches, 2u); // add(a, b) in both operand orders
  // 64 = 64 columns: fine. Now a graph whose two weights differ.
  auto m2 = parse(R"mlir(
    func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<32x1xf32>) -> tensor<16x64xf32> {
      %a = tg.matmul %x, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %b = tg.matmul %x, %w2 : (tensor<16x32xf32>, tensor<32x1xf32>) -> tensor<16x1xf32>
      %s = tg.add %a, %b : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
      return %s : tensor<16x64xf32>
    }
  )mlir");
  ASSERT_TRUE(m2);
  TermGraph g2 = graphOf(*m2);
  TermGraphView view2(sc, g2);
  PatternMatcher<TermGraphView> matcher2(sc, view2);
  matches = 0;
  matcher2.forEachMatch(set.rules[0], [&](const Match<ValueRef> &) {
    ++matches;
    return true;
  });
  EXPECT_EQ(matches, 0u); // 8 -> 64 and 8 -> 1 conflict
}

TEST_F(SearchTest, QuietCandidatesLeaveOtherThreadsDiagnostics) {
  // loom-compile compiles the graph as written on a thread of its own while
  // the search runs: the compile's errors must reach the tool's handler,
  // not the search's quieting of its failed candidates.
  std::atomic<unsigned> reached{0};
  ScopedDiagnosticHandler tool(&ctx, [&](Diagnostic &) {
    ++reached;
    return success();
  });
  OpId matmul =
      sc.internOp(OperationName("tg.matmul", &ctx), DictionaryAttr::get(&ctx),
                  /*operand0Rank=*/2);
  Type f32 = Float32Type::get(&ctx);
  Type lhs = RankedTensorType::get({4, 6}, f32);
  std::atomic<bool> compiled{false};
  std::atomic<int64_t> evaluated{0};
  std::thread search([&] {
    // Products whose inner dimensions differ (7.. against 6): invalid
    // candidates, each a new one (evaluate memoises), until the compile's
    // errors are out.
    for (int64_t k = 7; !compiled; ++k) {
      Type rhs = RankedTensorType::get({k, 8}, f32);
      EXPECT_FALSE(sc.evaluate(matmul, {lhs, rhs}, {}).valid);
      ++evaluated;
    }
  });
  // Every tenth error after one more candidate: the threads interleave.
  constexpr unsigned kErrors = 300;
  for (unsigned i = 0; i < kErrors; ++i) {
    for (int64_t seen = evaluated; i % 10 == 0 && evaluated == seen;)
      std::this_thread::yield();
    emitError(UnknownLoc::get(&ctx)) << "a compile error";
  }
  compiled = true;
  search.join();
  EXPECT_EQ(reached, kErrors);
}

TEST_F(SearchTest, EGraphRestoresCongruence) {
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = tg.relu %x : tensor<4xf32>
      %b = tg.relu %y : tensor<4xf32>
      return %a, %b : tensor<4xf32>, tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  EGraph eg(sc);
  SmallVector<ClassId, 2> roots = eg.addGraph(g);
  eg.rebuild();
  EXPECT_NE(eg.find(roots[0]), eg.find(roots[1]));
  // Merge x and y: relu(x) and relu(y) become one class.
  ClassId x = eg.node(eg.eclass(roots[0]).nodes[0]).children[0];
  ClassId y = eg.node(eg.eclass(roots[1]).nodes[0]).children[0];
  EXPECT_TRUE(eg.merge(x, y));
  eg.rebuild();
  EXPECT_EQ(eg.find(roots[0]), eg.find(roots[1]));
  EXPECT_EQ(eg.eclass(roots[0]).nodes.size(), 1u);
}

TEST_F(SearchTest, ExtractionNeverReturnsACycle) {
  // relu(x) merged with x: the class of x now contains relu(itself). Both
  // extractors must pick the argument.
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = tg.relu %x : tensor<4xf32>
      %b = tg.neg %a : tensor<4xf32>
      return %b : tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  EGraph eg(sc);
  SmallVector<ClassId, 2> roots = eg.addGraph(g);
  eg.rebuild();
  ClassId neg = eg.find(roots[0]);
  ClassId relu = eg.node(eg.eclass(neg).nodes[0]).children[0];
  ClassId x = eg.node(eg.eclass(relu).nodes[0]).children[0];
  eg.merge(relu, x);
  eg.rebuild();
  Extraction greedy = extractGreedy(eg, roots);
  ASSERT_TRUE(greedy.ok);
  EXPECT_EQ(count(greedy.graph, "tg.relu"), 0u);
  EXPECT_EQ(count(greedy.graph, "tg.neg"), 1u);
  Extraction ilp = extractILP(eg, roots, 10, greedy.graph.cost);
  ASSERT_TRUE(ilp.ok);
  EXPECT_EQ(ilp.status, "optimal");
  EXPECT_EQ(count(ilp.graph, "tg.relu"), 0u);
}

TEST_F(SearchTest, BothEnginesFindTheMergedGraph) {
  RuleSet set = rulesOf(kMergeRule);
  // Three weights: a 3-way merge (two steps of the 2-way rule) is cheaper
  // per the unit cost model when splits are cheap enough; at least the
  // engines must agree and never return a worse graph.
  auto m = parse(R"mlir(
    func.func @main(%x: tensor<16x32xf32>) -> (tensor<16x64xf32>, tensor<16x48xf32>) {
      %w1 = tg.weight "w1" : tensor<32x64xf32>
      %w2 = tg.weight "w2" : tensor<32x48xf32>
      %a = tg.matmul %x, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %b = tg.matmul %x, %w2 : (tensor<16x32xf32>, tensor<32x48xf32>) -> tensor<16x48xf32>
      return %a, %b : tensor<16x64xf32>, tensor<16x48xf32>
    }
  )mlir");
  ASSERT_TRUE(m);
  TermGraph g = graphOf(*m);
  Outcome bt = backtrackingSearch(sc, set, g, BacktrackOptions());
  EqsatOptions eo;
  Outcome eq = equalitySaturation(sc, set, g, eo);
  EXPECT_LE(bt.costAfter, g.cost);
  EXPECT_LE(eq.costAfter, g.cost);
  EXPECT_LE(eq.costAfter, bt.costAfter * (1 + 1e-12));
}

} // namespace
