//===- Optimize.cpp - Superoptimise the functions of a module -------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Optimize.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Search/BatchProducts.h"
#include "loom/Search/RegroupProducts.h"
#include "loom/Search/Rule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

/// The activation of tg.conv's `activation` that \p op applies, if any.
std::optional<tg::Activation> convActivationOf(Operation *op) {
  if (isa<tg::ReluOp>(op))
    return tg::Activation::Relu;
  if (isa<tg::SigmoidOp>(op))
    return tg::Activation::Sigmoid;
  if (isa<tg::TanhOp>(op))
    return tg::Activation::Tanh;
  return std::nullopt;
}

} // namespace

unsigned search::fuseConvActivations(func::FuncOp fn) {
  unsigned fused = 0;
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    std::optional<tg::Activation> act = convActivationOf(&op);
    auto conv = act ? op.getOperand(0).getDefiningOp<tg::ConvOp>() : nullptr;
    if (!conv || conv.getActivation() != tg::Activation::None ||
        !conv->hasOneUse() ||
        conv.getType() != op.getResult(0).getType())
      continue;
    conv.setActivationAttr(tg::ActivationAttr::get(op.getContext(), *act));
    op.getResult(0).replaceAllUsesWith(conv.getResult());
    op.erase();
    ++fused;
  }
  return fused;
}

namespace {

/// Replaces \p out's graph (the search's result, or its start when it found
/// nothing cheaper) by its products regrouped (RegroupProducts.h) when that
/// is cheaper; \p like is a function of the graph's signature.
void regroupBest(SearchContext &sc, func::FuncOp like, Outcome &out) {
  OwningOpRef<func::FuncOp> copy = like.clone();
  out.best.toFunc(sc, *copy);
  size_t regrouped = regroupProducts(*copy);
  if (!regrouped)
    return;
  std::string why;
  FailureOr<TermGraph> g = TermGraph::fromFunc(sc, *copy, why);
  if (failed(g) || g->cost >= out.best.cost)
    return;
  out.best = std::move(*g);
  out.costAfter = out.best.cost;
  out.rulesApplied[kRegroupProductsRule] += regrouped;
}

/// Searches the single-block function \p fn and rewrites it when the search
/// found something cheaper; \p label names it in progress and the report.
/// The search starts from a copy with the activations of convolutions fused
/// (fuseConvActivations): what a library runs, priced as such; \p fn is
/// left as it is unless a rewrite is cheaper than that start.
FunctionResult searchFunction(SearchContext &sc, const RuleSet &rules,
                              func::FuncOp fn, StringRef label,
                              const SuperoptOptions &options) {
  FunctionResult r;
  r.function = label.str();
  std::string why;
  OwningOpRef<func::FuncOp> start = fn.clone();
  unsigned fused =
      start->getBody().hasOneBlock() ? fuseConvActivations(*start) : 0;
  FailureOr<TermGraph> g = TermGraph::fromFunc(sc, *start, why);
  if (failed(g)) {
    r.skipped = why;
    return r;
  }
  std::string prefix = "tg-superopt @" + r.function + ": ";
  Progress progress(options.progress
                        ? std::function<void(const std::string &)>(
                              [&](const std::string &line) {
                                llvm::errs() << prefix << line << "\n";
                              })
                        : nullptr,
                    options.progressAfter);
  r.opsBefore = g->numOps(sc) + fused; // the ops of \p fn
  r.storedBytesBefore = g->storedBytes();
  if (options.engine == "eqsat") {
    EqsatOptions o = options.eqsat;
    o.progress = &progress;
    r.outcome = equalitySaturation(sc, rules, *g, o);
  } else {
    BacktrackOptions o = options.backtrack;
    o.progress = &progress;
    r.outcome = backtrackingSearch(sc, rules, *g, o);
  }
  if (progress.printedAny())
    progress.print(llvm::formatv(
        "{0}: done ({1}), cost {2:e} -> {3:e} ({4:f3}x), {5:f2} s",
        options.engine, r.outcome.stopReason, r.outcome.costBefore,
        std::min(r.outcome.costAfter, r.outcome.costBefore),
        r.outcome.costAfter > 0 && r.outcome.costAfter < r.outcome.costBefore
            ? r.outcome.costBefore / r.outcome.costAfter
            : 1.0,
        r.outcome.seconds));
  if (r.outcome.costAfter >= r.outcome.costBefore) {
    r.outcome.best = *g;
    r.outcome.costAfter = r.outcome.costBefore;
    r.outcome.rulesApplied.clear();
  }
  regroupBest(sc, *start, r.outcome);
  if (r.outcome.costAfter < r.outcome.costBefore) {
    r.outcome.best.toFunc(sc, fn);
    r.opsAfter = r.outcome.best.numOps(sc);
  } else {
    r.opsAfter = r.opsBefore; // \p fn as it was
  }
  r.storedBytesAfter = r.outcome.best.storedBytes();
  return r;
}

/// A maximal run of ops without regions in one block, ending before a
/// region op (tg.if) or the terminator.
struct Segment {
  SmallVector<Operation *> ops;
  Operation *end = nullptr;
};

/// The segments of \p block and of the blocks of its region ops, outermost
/// first.
void collectSegments(Block &block, std::vector<Segment> &out) {
  Segment run;
  for (Operation &op : block) {
    if (!op.getNumRegions() && !op.hasTrait<OpTrait::IsTerminator>()) {
      run.ops.push_back(&op);
      continue;
    }
    run.end = &op;
    if (!run.ops.empty())
      out.push_back(run);
    run.ops.clear();
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        collectSegments(inner, out);
  }
}

/// Searches \p seg as a function of its own: its inputs are the values it
/// reads from elsewhere, its outputs its values read elsewhere (later in
/// the block, inside a region op, by the terminator). A cheaper graph
/// replaces the run in place, so every value keeps its place relative to
/// the region ops.
FunctionResult searchSegment(SearchContext &sc, const RuleSet &rules,
                             const Segment &seg, StringRef label,
                             const SuperoptOptions &options) {
  Block *block = seg.end->getBlock();
  llvm::SmallPtrSet<Operation *, 16> inRun(seg.ops.begin(), seg.ops.end());
  llvm::SetVector<Value> inputs, outputs;
  // Ops without operands defined elsewhere (weights, constants) are copied
  // into the run: rules see a weight as a weight, not as an input.
  llvm::SetVector<Operation *> copied;
  for (Operation *op : seg.ops) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (inRun.count(def))
        continue;
      if (def && def->getNumOperands() == 0 && !def->getNumRegions())
        copied.insert(def);
      else
        inputs.insert(v);
    }
    for (Value v : op->getResults())
      for (OpOperand &use : v.getUses())
        if (!inRun.count(block->findAncestorOpInBlock(*use.getOwner())))
          outputs.insert(v);
  }
  MLIRContext *context = block->getParentOp()->getContext();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(seg.end->getLoc());
  b.setInsertionPointToEnd(scratch->getBody());
  auto fn = func::FuncOp::create(
      b, seg.end->getLoc(), "segment",
      b.getFunctionType(TypeRange(inputs.getArrayRef()),
                        TypeRange(outputs.getArrayRef())));
  Block *body = fn.addEntryBlock();
  IRMapping map;
  map.map(inputs.getArrayRef(), body->getArguments());
  b.setInsertionPointToEnd(body);
  for (Operation *op : llvm::concat<Operation *const>(copied, seg.ops))
    b.clone(*op, map);
  SmallVector<Value> returned;
  for (Value v : outputs)
    returned.push_back(map.lookup(v));
  func::ReturnOp::create(b, seg.end->getLoc(), returned);

  FunctionResult r = searchFunction(sc, rules, fn, label, options);
  if (!r.skipped.empty() || r.outcome.costAfter >= r.outcome.costBefore)
    return r;
  IRMapping back;
  back.map(body->getArguments(), inputs.getArrayRef());
  b.setInsertionPoint(seg.end);
  for (Operation &op : body->without_terminator())
    b.clone(op, back);
  for (auto [v, ret] : llvm::zip(outputs, body->getTerminator()->getOperands()))
    Value(v).replaceAllUsesWith(back.lookupOrDefault(ret));
  for (Operation *op : llvm::reverse(seg.ops))
    op->erase();
  return r;
}

/// Batches the independent products of the searched \p fn
/// (BatchProducts.h) and adds them to its result as the rewrite
/// `batch-products`, one per product replaced.
void batchSearched(SearchContext &sc, func::FuncOp fn, FunctionResult &r) {
  auto ops = [&] { return fn.getBody().front().getOperations().size(); };
  size_t before = ops();
  BatchProductsResult batched = batchProducts(fn, sc.getCostModel());
  if (!batched.groups)
    return;
  r.outcome.rulesApplied[kBatchProductsRule] += batched.products;
  r.outcome.costAfter = std::max(0.0, r.outcome.costAfter - batched.saved);
  r.opsAfter = r.opsAfter + ops() - before;
}

} // namespace

std::vector<FunctionResult>
search::superoptimize(SearchContext &sc, const RuleSet &rules, ModuleOp module,
                      const SuperoptOptions &options) {
  std::vector<FunctionResult> results;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    bool regions = fn.getBody().hasOneBlock() &&
                   llvm::any_of(fn.getBody().front(), [](Operation &op) {
                     return op.getNumRegions() > 0;
                   });
    if (!regions) {
      results.push_back(
          searchFunction(sc, rules, fn, fn.getSymName(), options));
      if (options.batchProducts && results.back().skipped.empty())
        batchSearched(sc, fn, results.back());
      continue;
    }
    // Run-time control flow: the straight-line runs around and inside the
    // regions, each on its own (docs/Superopt).
    std::vector<Segment> segments;
    collectSegments(fn.getBody().front(), segments);
    for (auto [i, seg] : llvm::enumerate(segments))
      results.push_back(searchSegment(
          sc, rules, seg,
          (fn.getSymName() + " segment " + Twine(i + 1) + "/" +
           Twine(segments.size()))
              .str(),
          options));
  }
  return results;
}

llvm::json::Object search::makeReport(const SearchContext &sc,
                                      const RuleSet &rules,
                                      const SuperoptOptions &options,
                                      ArrayRef<FunctionResult> results) {
  double before = 0, after = 0, seconds = 0, storedBefore = 0,
         storedAfter = 0;
  std::map<std::string, unsigned> applied;
  llvm::json::Array functions;
  for (const FunctionResult &r : results) {
    llvm::json::Object f{{"function", r.function}};
    if (!r.skipped.empty()) {
      f["skipped"] = r.skipped;
      functions.push_back(std::move(f));
      continue;
    }
    const Outcome &o = r.outcome;
    before += o.costBefore;
    after += o.costAfter;
    seconds += o.seconds;
    storedBefore += r.storedBytesBefore;
    storedAfter += r.storedBytesAfter;
    llvm::json::Object perRule;
    for (auto &[name, n] : o.rulesApplied) {
      perRule[name] = int64_t(n);
      applied[name] += n;
    }
    f["cost_before"] = o.costBefore;
    f["cost_after"] = o.costAfter;
    f["ratio"] = o.costAfter > 0 ? o.costBefore / o.costAfter : 1.0;
    f["seconds"] = o.seconds;
    f["ops_before"] = int64_t(r.opsBefore);
    f["ops_after"] = int64_t(r.opsAfter);
    f["stored_bytes_before"] = int64_t(r.storedBytesBefore);
    f["stored_bytes_after"] = int64_t(r.storedBytesAfter);
    f["stop"] = o.stopReason;
    f["rules_applied"] = std::move(perRule);
    f["stats"] = llvm::json::Object(o.stats);
    functions.push_back(std::move(f));
  }
  llvm::json::Object perRule;
  for (auto &[name, n] : applied)
    perRule[name] = int64_t(n);
  llvm::json::Object report{{"search", options.engine},
                            {"cost_model", sc.getCostModel()
                                               ? sc.getCostModel()->name()
                                               : std::string("unit")},
                            {"rules_file", rules.path},
                            {"rules", int64_t(rules.rules.size())},
                            {"cost_before", before},
                            {"cost_after", after},
                            {"ratio", after > 0 ? before / after : 1.0},
                            {"seconds", seconds},
                            {"stored_bytes_before", int64_t(storedBefore)},
                            {"stored_bytes_after", int64_t(storedAfter)},
                            {"stored_byte_price", sc.getStoredBytePrice()},
                            {"rules_applied", std::move(perRule)},
                            {"functions", std::move(functions)}};
  if (options.engine == "eqsat")
    report["options"] = llvm::json::Object{
        {"max_nodes", int64_t(options.eqsat.maxNodes)},
        {"max_iterations", int64_t(options.eqsat.maxIterations)},
        {"time_limit", options.eqsat.timeLimit},
        {"extraction", options.eqsat.extraction}};
  else
    report["options"] =
        llvm::json::Object{{"alpha", options.backtrack.alpha},
                           {"budget", int64_t(options.backtrack.budget)},
                           {"time_limit", options.backtrack.timeLimit},
                           {"max_growth", options.backtrack.maxGrowth}};
  return report;
}

FailureOr<llvm::json::Object>
search::superoptimizeModule(ModuleOp module, cost::CostModel *model,
                            const ModuleSuperoptOptions &options) {
  std::string rulesPath = options.rules;
  if (rulesPath.empty()) {
    rulesPath = defaultRulesPath();
    if (rulesPath.empty() || !llvm::sys::fs::exists(rulesPath))
      return module.emitError()
             << "tg-superopt: no default rule set: pass rules=FILE"
             << (rulesPath.empty() ? std::string()
                                   : " (expected the rule generator's "
                                     "default set at '" +
                                         rulesPath + "')");
  }
  SearchContext sc(module.getContext(), model);
  sc.setStoredBytePrice(options.storedBytePrice);
  RuleLoadOptions loadOptions;
  loadOptions.bothDirections = options.bothDirections;
  TimingScope phase(options.timing.nest("load rules"));
  FailureOr<RuleSet> ruleSet = loadRules(sc, rulesPath, loadOptions);
  if (failed(ruleSet))
    return module.emitError()
           << "tg-superopt: cannot load rules from '" << rulesPath << "'";
  phase = TimingScope(options.timing.nest("search"));
  std::vector<FunctionResult> results =
      superoptimize(sc, *ruleSet, module, options.search);
  phase.stop();
  for (const FunctionResult &r : results)
    if (!r.skipped.empty() && options.warnSkipped)
      if (auto fn = module.lookupSymbol<func::FuncOp>(r.function))
        fn.emitWarning() << "tg-superopt: skipped: " << r.skipped;
  return makeReport(sc, *ruleSet, options.search, results);
}
