//===- Backtracking.cpp - TASO's cost-based backtracking search -----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Backtracking.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <unordered_set>

using namespace mlir;
using namespace loom;
using namespace loom::search;

TermGraphView::TermGraphView(const SearchContext &sc, const TermGraph &g)
    : g(g), users(g.nodes.size()) {
  for (auto [i, node] : llvm::enumerate(g.nodes)) {
    const OpInfo &info = sc.op(node.op);
    if (info.isOp())
      byClass[info.shapeClass].push_back(i);
    for (ValueRef v : node.operands) {
      auto &u = users[v.node];
      if (u.empty() || u.back() != i)
        u.push_back(i);
    }
  }
}

FailureOr<TermGraph> search::applyRewrite(SearchContext &sc, const TermGraph &g,
                                          const Match<ValueRef> &match,
                                          const Instance &inst) {
  TermGraph h = g;
  uint32_t base = h.nodes.size();
  // New nodes take the location of the first matched output.
  LocationAttr loc = g.nodes[match.outputs[0].node].loc;
  auto resolve = [&](PatternRef r) {
    return r.isVar() ? match.vars[r.index]
                     : ValueRef{base + uint32_t(r.op), r.index};
  };
  for (const Instance::Op &op : inst.ops) {
    TermNode n;
    n.op = op.op;
    for (PatternRef r : op.operands)
      n.operands.push_back(resolve(r));
    n.types = op.types;
    n.cost = op.cost;
    n.loc = loc;
    h.nodes.push_back(std::move(n));
  }
  SmallVector<std::pair<ValueRef, ValueRef>, 2> replace;
  for (auto [old, r] : llvm::zip(match.outputs, inst.outputs))
    replace.push_back({old, resolve(r)});
  auto redirect = [&](ValueRef &v) {
    for (auto &[from, to] : replace)
      if (v == from) {
        v = to;
        return;
      }
  };
  for (TermNode &n : h.nodes)
    for (ValueRef &v : n.operands)
      redirect(v);
  for (ValueRef &v : h.outputs)
    redirect(v);
  if (failed(h.canonicalize(sc)))
    return failure();
  return h;
}

namespace {

struct Entry {
  TermGraph graph;
  /// Index into the history of rewrites (-1: the input).
  int32_t history;
};

/// TASO's search: graphs queued by cost; the cheapest is expanded into its
/// rewrites by every rule, and those cheaper than alpha times the best cost
/// so far (and not too large, and not seen before) are queued in turn.
class BacktrackingSearch {
public:
  BacktrackingSearch(SearchContext &sc, const RuleSet &rules,
                     const TermGraph &input, const BacktrackOptions &options)
      : sc(sc), rules(rules), index(sc, rules, options.ruleIndex),
        input(input), options(options), instantiator(sc), best(input),
        maxOps(std::max(1.0, options.maxGrowth * double(input.numOps(sc)))) {}

  Outcome run();

private:
  /// Queues `g`, reached by rewrite `hist` of the history.
  void push(TermGraph &&g, int32_t hist);
  /// Removes the cheapest queued graph from the queue.
  Entry popCheapest();
  /// Keeps `g` as the best graph when it is cheaper.
  void keepIfBest(const TermGraph &g, int32_t hist);
  /// Queues the rewrites of `entry`'s graph by every rule that are cheaper
  /// than `threshold`; false when the time limit ran out meanwhile.
  bool expand(const Entry &entry, double threshold);
  /// Queues `next`, the rewrite of `entry`'s graph by `rule`, when it is
  /// cheaper than `threshold`, not too large and not seen before.
  void admit(const Entry &entry, const Rule &rule, TermGraph &&next,
             double threshold);
  /// Keeps the cheapest graphs when the queue overflows.
  void trimQueue();
  /// A progress line, when one is due.
  void printProgress();
  /// The counters of the search.
  void recordStats(Outcome &out) const;

  SearchContext &sc;
  const RuleSet &rules;
  RuleIndex index;
  std::vector<const Rule *> candidates;
  const TermGraph &input;
  const BacktrackOptions &options;
  Stopwatch clock;
  Instantiator instantiator;

  // The rewrites that led to each graph, as a tree of (parent, rule).
  std::vector<std::pair<int32_t, uint32_t>> history;
  std::set<std::pair<double, uint64_t>> order; // (cost, sequence number)
  std::map<uint64_t, Entry> queue;
  std::unordered_set<uint64_t> seen;
  uint64_t sequence = 0;

  TermGraph best;
  int32_t bestHistory = -1;
  /// A new graph may have at most this many ops.
  double maxOps;

  unsigned expanded = 0;
  size_t generated = 0, admitted = 0, duplicates = 0, rejectedCycles = 0,
         matches = 0, maxQueue = 1;
};

} // namespace

void BacktrackingSearch::push(TermGraph &&g, int32_t hist) {
  order.insert({g.cost, sequence});
  queue.emplace(sequence, Entry{std::move(g), hist});
  ++sequence;
}

Entry BacktrackingSearch::popCheapest() {
  auto first = order.begin();
  uint64_t seq = first->second;
  order.erase(first);
  Entry entry = std::move(queue[seq]);
  queue.erase(seq);
  return entry;
}

void BacktrackingSearch::keepIfBest(const TermGraph &g, int32_t hist) {
  if (g.cost < best.cost) {
    best = g;
    bestHistory = hist;
  }
}

bool BacktrackingSearch::expand(const Entry &entry, double threshold) {
  const TermGraph &g = entry.graph;
  TermGraphView view(sc, g);
  PatternMatcher<TermGraphView> matcher(sc, view);
  bool timeUp = false;
  index.candidates([&](uint32_t cls) { return view.hasNodeOfClass(cls); },
                   candidates);
  for (const Rule *candidate : candidates) {
    const Rule &rule = *candidate;
    bool go = matcher.forEachMatch(rule, [&](const Match<ValueRef> &m) {
      ++matches;
      // A match computing on weights only: both sides are free (folded
      // ahead of time), so the rewrite cannot lower the cost (as eqsat).
      if (llvm::all_of(m.outputs,
                       [&](ValueRef v) { return g.nodes[v.node].foldable; }))
        return true;
      const Instance *inst = instantiator.instantiate(rule, view, m);
      if (!inst)
        return true;
      FailureOr<TermGraph> next = applyRewrite(sc, g, m, *inst);
      ++generated;
      if (failed(next))
        ++rejectedCycles;
      else
        admit(entry, rule, std::move(*next), threshold);
      if ((generated & 63) == 0 && clock.seconds() > options.timeLimit) {
        timeUp = true;
        return false;
      }
      return true;
    });
    if (!go)
      break;
  }
  return !timeUp;
}

void BacktrackingSearch::admit(const Entry &entry, const Rule &rule,
                               TermGraph &&next, double threshold) {
  bool cheapAndSmall =
      next.cost < threshold && double(next.numOps(sc)) <= maxOps;
  if (!cheapAndSmall)
    return;
  if (!seen.insert(next.hash).second) {
    ++duplicates;
    return;
  }
  history.push_back({entry.history, rule.id});
  push(std::move(next), int32_t(history.size() - 1));
  ++admitted;
}

void BacktrackingSearch::trimQueue() {
  while (order.size() > options.queueCap) {
    auto last = std::prev(order.end());
    queue.erase(last->second);
    order.erase(last);
  }
  maxQueue = std::max(maxQueue, order.size());
}

void BacktrackingSearch::printProgress() {
  if (options.progress && options.progress->due())
    options.progress->print(llvm::formatv(
        "backtracking: {0} graphs expanded, {1} queued, best cost {2:e} "
        "({3:f3}x), {4:f1} s",
        expanded, order.size(), best.cost,
        best.cost > 0 ? input.cost / best.cost : 1.0, clock.seconds()));
}

void BacktrackingSearch::recordStats(Outcome &out) const {
  out.stats["graphs_expanded"] = int64_t(expanded);
  out.stats["graphs_generated"] = int64_t(generated);
  out.stats["graphs_queued"] = int64_t(admitted);
  out.stats["duplicates"] = int64_t(duplicates);
  out.stats["matches"] = int64_t(matches);
  out.stats["rejected_instances"] = int64_t(instantiator.numRejected());
  out.stats["rejected_cycles"] = int64_t(rejectedCycles);
  out.stats["max_queue"] = int64_t(maxQueue);
}

Outcome BacktrackingSearch::run() {
  Outcome out;
  out.costBefore = input.cost;
  seen.insert(input.hash);
  push(TermGraph(input), -1);
  std::string stop = "exhausted";
  while (!order.empty()) {
    if (expanded >= options.budget) {
      stop = "budget";
      break;
    }
    if (clock.seconds() > options.timeLimit) {
      stop = "time";
      break;
    }
    Entry entry = popCheapest();
    ++expanded;
    keepIfBest(entry.graph, entry.history);
    bool inTime = expand(entry, options.alpha * best.cost);
    trimQueue();
    printProgress();
    if (!inTime) {
      stop = "time";
      break;
    }
  }
  // Graphs still queued may be cheaper than the best expanded one.
  for (auto &[seq, e] : queue)
    keepIfBest(e.graph, e.history);

  for (int32_t h = bestHistory; h >= 0; h = history[h].first)
    ++out.rulesApplied[rules.rules[history[h].second].name];
  out.best = std::move(best);
  out.costAfter = out.best.cost;
  out.seconds = clock.seconds();
  out.stopReason = stop;
  recordStats(out);
  return out;
}

Outcome search::backtrackingSearch(SearchContext &sc, const RuleSet &rules,
                                   const TermGraph &input,
                                   const BacktrackOptions &options) {
  return BacktrackingSearch(sc, rules, input, options).run();
}
