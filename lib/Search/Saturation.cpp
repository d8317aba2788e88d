//===- Saturation.cpp - Equality saturation over tg -----------------------===//
//
// Part of Loom. The saturation loop of EGraph.h: match every rule on the
// e-graph (read only; semi-naive: only where something is new), then apply
// every match (add the instantiated target, merge its outputs with the
// matched ones), then rebuild; repeat until nothing changes or a bound is
// reached; then extract. Rounds: the extracted graph seeds a fresh e-graph,
// until a round finds nothing cheaper (docs/Superopt/Search.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Search/EGraph.h"
#include "loom/Search/Extraction.h"
#include "loom/Support/StableSort.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <tuple>
#include <unordered_set>

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

struct PendingRewrite {
  const Rule *rule;
  llvm::SmallVector<ClassId, 4> vars;
  llvm::SmallVector<ClassId, 2> outputs;
  /// The e-nodes the source's output ops matched.
  llvm::SmallVector<uint32_t, 2> outputNodes;
  const Instance *inst;
  /// Its key in appliedKeys (SaturationRound::applicationKey).
  std::vector<uint32_t> key;
};

/// An application whose target output is one of its variables (x -> x
/// after transpose(transpose(x))): it adds no node, only a merge, so its
/// use is seen in the extracted graph by the class no longer choosing the
/// matched node.
struct MergeOnlyOutput {
  int32_t app;
  ClassId cls;
  llvm::SmallVector<uint32_t, 2> matchedNodes;
};

struct RuleSchedule {
  unsigned bannedUntil = 0;
  unsigned timesBanned = 0;
};

struct ApplicationKeyHash {
  size_t operator()(const std::vector<uint32_t> &k) const {
    return llvm::hash_combine_range(k.begin(), k.end());
  }
};

/// The key of the rules whose semi-naive matches start from the same roots:
/// (root shape class, source output index, class levels below the root).
using RootGroup = std::tuple<uint32_t, uint32_t, uint32_t>;
/// Per root group, the roots to match per last full match (the epoch since
/// which a root must have changed; ~0u: all roots).
using RootLists = std::vector<
    llvm::SmallVector<std::pair<uint32_t, std::vector<uint32_t>>, 1>>;
/// EGraph::deepStamps: per level, per class slot, the latest stamp.
using DeepStamps = std::vector<std::vector<uint32_t>>;

/// What matching found in one iteration.
struct IterationMatches {
  std::vector<PendingRewrite> pending;
  /// Some rule sits out a ban (or was banned in this iteration).
  bool anyBanned = false;
  /// The time limit ran out while matching.
  bool timeUp = false;
};

/// What applying the matches of one iteration did.
struct Applied {
  size_t rewrites = 0, merges = 0;
  /// The e-graph reached max-nodes before every match was applied.
  bool full = false;
};

/// The extractions of one round and the one returned.
struct Extractions {
  Extraction greedy, local, ilp;
  bool ranIlp = false, skipIlp = false;
  /// The cheapest one that is no worse than the input; null: the input.
  const Extraction *best = nullptr;
};

/// Whether the source of `rule` is a tree below its root op (a plan of Root
/// then Definer steps) with one output, the root's: its matches can be found
/// semi-naively (see SaturationRound::planSeminaive).
bool isSeminaiveTree(const Rule &rule) {
  bool tree = !rule.plan.empty() &&
              rule.plan[0].kind == MatchStep::Kind::Root &&
              llvm::all_of(llvm::drop_begin(rule.plan), [](const MatchStep &s) {
                return s.kind == MatchStep::Kind::Definer;
              });
  return tree && rule.source.outputs.size() == 1 &&
         !rule.source.outputs[0].isVar() &&
         unsigned(rule.source.outputs[0].op) == rule.plan[0].op;
}

/// One round of equality saturation: an e-graph of the input, saturated by
/// iterations of match, apply and rebuild, then extracted.
class SaturationRound {
public:
  SaturationRound(SearchContext &sc, const RuleSet &rules,
                  const TermGraph &input, const EqsatOptions &options,
                  Instantiator &instantiator)
      : sc(sc), rules(rules), index(sc, rules, options.ruleIndex),
        input(input), options(options), instantiator(instantiator), eg(sc),
        schedule(rules.rules.size()),
        ruleMatches(rules.rules.size(), 0), lastFull(rules.rules.size(), -1),
        seminaiveLevels(rules.rules.size(), -1),
        rootGroup(rules.rules.size(), 0) {
    roots = eg.addGraph(input);
    eg.rebuild();
  }

  Outcome run();

private:
  //===--------------------------------------------------------------------===//
  // Saturation
  //===--------------------------------------------------------------------===//

  /// Finds the rules matched semi-naively and groups them by root.
  void planSeminaive();
  /// Iterates until saturation or a bound; sets `stop` and `iteration`.
  void saturate();
  /// Matches, applies and rebuilds once; true when the search ends here
  /// (`stop` says why).
  bool runIteration();
  /// Matches every rule not banned on the unchanging e-graph.
  IterationMatches matchRules();
  /// Matches one rule into `found`, banning it when it matches too often.
  void matchRule(const Rule &rule, PatternMatcher<EGraphView> &matcher,
                 const EGraphView &view, const DeepStamps &deep,
                 RootLists &rootLists, IterationMatches &found);
  /// The key of match `m` of `rule` in `appliedKeys`: the rule, the matched
  /// e-nodes and the variables' classes as they are now.
  std::vector<uint32_t> applicationKey(const Rule &rule,
                                       const Match<ClassId> &m) const;
  /// The root nodes to match a semi-naive `rule` at (shared by its group).
  const std::vector<uint32_t> &
  rootsToMatch(const Rule &rule, const DeepStamps &deep, RootLists &rootLists);
  /// The live roots of `group` not computed from weights alone and, unless
  /// `deep` is null, with something newer than epoch `since`.
  std::vector<uint32_t> collectRoots(uint32_t group, const DeepStamps *deep,
                                     uint32_t since);
  /// Applies `pending` in order until the e-graph is full.
  Applied applyAll(llvm::ArrayRef<PendingRewrite> pending);
  /// Adds the target of one match and merges its outputs with the matched
  /// ones; returns the number of merges.
  size_t applyRewrite(const PendingRewrite &p);
  /// Records the sizes and times of the iteration just done.
  void recordIteration(size_t matches, double start, double matchEnd,
                       double applyEnd);

  //===--------------------------------------------------------------------===//
  // Extraction and report
  //===--------------------------------------------------------------------===//

  /// The progress line announcing the extraction.
  void printExtractionProgress();
  /// Greedy extraction always, local search and the ILP when asked, and the
  /// cheapest of them.
  void extract(Extractions &ex);
  /// Counts the rule applications that `best`'s graph uses, per rule.
  void countRulesUsed(const Extraction &best, Outcome &out) const;
  /// The counters of the saturation and the extractions.
  void recordStats(const Extractions &ex, double saturationSeconds,
                   Outcome &out) const;
  /// The ten rules that matched most: where matching time goes.
  llvm::json::Object busiestRules() const;

  SearchContext &sc;
  const RuleSet &rules;
  RuleIndex index;
  const TermGraph &input;
  const EqsatOptions &options;
  /// Targets memoised per rule and shapes, shared by the rounds.
  Instantiator &instantiator;
  Stopwatch clock;
  EGraph eg;
  SmallVector<ClassId, 2> roots;

  std::vector<RuleSchedule> schedule;
  std::vector<size_t> ruleMatches;
  /// The rule of each application (indexed by the nodes' origins).
  std::vector<uint32_t> applicationRule;
  std::vector<MergeOnlyOutput> mergeOnly;

  // Applications already made, by (rule, matched e-nodes, variable
  // classes, canonical when matched): the same match found again in a
  // later iteration (multi-output rules are matched in full, and a rule
  // after a ban from its last full match) would add nodes that exist and
  // merge classes that are merged; skip it. A rebuild keeps node ids but
  // canonicalises children, and the key holds the variables' classes as
  // they are then, so a match over merged classes is new.
  std::unordered_set<std::vector<uint32_t>, ApplicationKeyHash> appliedKeys;
  size_t repeats = 0, foldableSkipped = 0;

  // Semi-naive matching (planSeminaive): per rule, the iteration of its last
  // full match and the class levels below the root its matches span (-1:
  // matched in full every time), and its root group.
  std::vector<int64_t> lastFull;
  std::vector<int32_t> seminaiveLevels;
  std::vector<uint32_t> rootGroup;
  std::vector<RootGroup> groups;
  unsigned maxLevels = 0;
  size_t rootsSkipped = 0, foldableRoots = 0;

  std::string stop = "iterations";
  unsigned iteration = 0;
  size_t totalMatches = 0, totalApplied = 0;
  llvm::json::Array perIteration;
};

} // namespace

//===----------------------------------------------------------------------===//
// Saturation
//===----------------------------------------------------------------------===//

// Semi-naive matching. A rule whose source is a tree below its root op (a
// plan of Root then Definer steps) has every match within 2 * (ops - 1)
// class levels below the root node's children: a definer may sit behind a
// projection, one level more. If the rule was matched in full in iteration
// t, a root node made before t + 1 whose children's deep stamps
// (EGraph::deepStamps) predate t + 1 gives only matches found then: they
// are skipped without being enumerated. Multi-root rules (Join steps) are
// matched in full every time. Rules with the same root shape class, output
// and depth share their lists of roots to match (per last full match).
void SaturationRound::planSeminaive() {
  std::map<RootGroup, uint32_t> groupIndex;
  for (const Rule &rule : rules.rules) {
    if (!isSeminaiveTree(rule))
      continue;
    seminaiveLevels[rule.id] = 2 * (rule.plan.size() - 1);
    maxLevels = std::max<unsigned>(maxLevels, seminaiveLevels[rule.id]);
    RootGroup key = std::make_tuple(
        sc.op(rule.source.ops[rule.plan[0].op].op).shapeClass,
        rule.source.outputs[0].index, uint32_t(seminaiveLevels[rule.id]));
    auto [it, fresh] = groupIndex.try_emplace(key, groups.size());
    if (fresh)
      groups.push_back(key);
    rootGroup[rule.id] = it->second;
  }
}

void SaturationRound::saturate() {
  for (; iteration < options.maxIterations; ++iteration) {
    if (clock.seconds() > options.timeLimit) {
      stop = "time";
      break;
    }
    if (runIteration()) {
      ++iteration;
      break;
    }
  }
}

bool SaturationRound::runIteration() {
  // Match (the e-graph does not change while matching).
  double iterationStart = clock.seconds();
  IterationMatches found = matchRules();
  double matchEnd = clock.seconds();
  // Apply: what changes now is stamped with the next epoch.
  eg.setEpoch(iteration + 1);
  size_t nodesBefore = eg.numNodes();
  Applied applied = applyAll(found.pending);
  double applyEnd = clock.seconds();
  eg.rebuild();
  totalApplied += applied.rewrites;
  recordIteration(found.pending.size(), iterationStart, matchEnd, applyEnd);
  if (applied.full) {
    stop = "nodes";
    return true;
  }
  if (found.timeUp) {
    stop = "time";
    return true;
  }
  if (applied.merges == 0 && eg.numNodes() == nodesBefore) {
    if (!found.anyBanned) {
      stop = "saturated";
      return true;
    }
    // Nothing changed but some rules sit out a ban: lift the bans now
    // rather than idle until they expire (egg's BackoffScheduler).
    for (RuleSchedule &rs : schedule)
      rs.bannedUntil = 0;
  }
  return false;
}

IterationMatches SaturationRound::matchRules() {
  IterationMatches found;
  DeepStamps deep;
  if (iteration > 0 && options.seminaive)
    deep = eg.deepStamps(maxLevels);
  RootLists rootLists(groups.size());
  EGraphView view(eg);
  PatternMatcher<EGraphView> matcher(sc, view);
  std::vector<const Rule *> candidates;
  index.candidates([&](uint32_t cls) { return view.hasNodeOfClass(cls); },
                   candidates);
  for (const Rule *candidate : candidates) {
    const Rule &rule = *candidate;
    if (schedule[rule.id].bannedUntil > iteration) {
      found.anyBanned = true;
      continue;
    }
    if (rule.multiPattern && iteration >= options.multiPatternIterations)
      continue;
    matchRule(rule, matcher, view, deep, rootLists, found);
    if (found.timeUp)
      break;
  }
  return found;
}

void SaturationRound::matchRule(const Rule &rule,
                                PatternMatcher<EGraphView> &matcher,
                                const EGraphView &view, const DeepStamps &deep,
                                RootLists &rootLists, IterationMatches &found) {
  RuleSchedule &rs = schedule[rule.id];
  size_t limit = options.matchLimit << rs.timesBanned;
  size_t count = 0, fresh = 0;
  size_t before = found.pending.size();
  bool banned = false;
  auto onMatch = [&](const Match<ClassId> &m) {
    ++count;
    if ((count & 255) == 0 && clock.seconds() > options.timeLimit) {
      found.timeUp = true;
      return false;
    }
    // A match computing on weights only: both sides are free (folded
    // ahead of time), so other forms of it cannot lower the cost.
    if (llvm::all_of(m.outputs,
                     [&](ClassId c) { return eg.eclass(c).foldable; })) {
      ++foldableSkipped;
      return true;
    }
    // The same match as in an earlier iteration (same nodes, same
    // variable classes): applied already.
    std::vector<uint32_t> key = applicationKey(rule, m);
    if (appliedKeys.count(key)) {
      ++repeats;
      return true;
    }
    // Too many new matches in one iteration: the rule is banned for a
    // while (repeats and weight-only matches do not count: they add
    // nothing).
    if (++fresh > limit) {
      banned = true;
      return false;
    }
    if (const Instance *inst = instantiator.instantiate(rule, view, m)) {
      PendingRewrite p{&rule, {}, {}, {}, inst, std::move(key)};
      p.vars.assign(m.vars.begin(), m.vars.end());
      p.outputs.assign(m.outputs.begin(), m.outputs.end());
      for (PatternRef r : rule.source.outputs)
        p.outputNodes.push_back(m.nodes[r.op]);
      found.pending.push_back(std::move(p));
    }
    return true;
  };
  if (seminaiveLevels[rule.id] < 0) {
    matcher.forEachMatch(rule, onMatch);
  } else {
    for (uint32_t n : rootsToMatch(rule, deep, rootLists))
      if (!matcher.forEachMatchAt(rule, n, onMatch))
        break;
  }
  if (!banned && !found.timeUp)
    lastFull[rule.id] = iteration;
  totalMatches += count;
  ruleMatches[rule.id] += count;
  if (banned) {
    // Too many matches: skip this rule for a while (egg's backoff).
    found.pending.resize(before);
    rs.bannedUntil = iteration + 1 + (options.banLength << rs.timesBanned);
    ++rs.timesBanned;
    found.anyBanned = true;
  }
}

std::vector<uint32_t>
SaturationRound::applicationKey(const Rule &rule,
                                const Match<ClassId> &m) const {
  std::vector<uint32_t> key;
  key.reserve(1 + m.nodes.size() + m.vars.size());
  key.push_back(rule.id);
  key.insert(key.end(), m.nodes.begin(), m.nodes.end());
  for (auto [v, b] : llvm::zip(m.vars, m.varBound))
    key.push_back(b ? eg.find(v) : ~0u);
  return key;
}

// Roots with something newer than the rule's last full match (all roots
// before its first), whose output is not computed from weights alone; the
// lists are shared by the rules with the same root shape class, output,
// levels and last full match.
const std::vector<uint32_t> &
SaturationRound::rootsToMatch(const Rule &rule, const DeepStamps &deep,
                              RootLists &rootLists) {
  bool all = lastFull[rule.id] < 0 || deep.empty();
  uint32_t since = all ? ~0u : uint32_t(lastFull[rule.id]);
  uint32_t group = rootGroup[rule.id];
  auto &lists = rootLists[group];
  auto it =
      llvm::find_if(lists, [&](const auto &l) { return l.first == since; });
  if (it != lists.end())
    return it->second;
  lists.emplace_back(since, collectRoots(group, all ? nullptr : &deep, since));
  return lists.back().second;
}

std::vector<uint32_t> SaturationRound::collectRoots(uint32_t group,
                                                    const DeepStamps *deep,
                                                    uint32_t since) {
  auto [shapeClass, outIndex, levels] = groups[group];
  std::vector<uint32_t> list;
  const std::vector<uint32_t> *nodes = eg.nodesOfClass(shapeClass);
  if (!nodes)
    return list;
  for (uint32_t n : *nodes) {
    const ENode &node = eg.node(n);
    if (node.dead)
      continue;
    if (outIndex >= eg.eclass(node.cls).types.size() ||
        eg.eclass(eg.result(n, outIndex)).foldable) {
      ++foldableRoots;
      continue;
    }
    if (deep) {
      uint32_t stamp = node.stamp;
      for (ClassId child : node.children)
        stamp = std::max(stamp, (*deep)[levels][eg.find(child)]);
      if (stamp <= since) {
        ++rootsSkipped;
        continue;
      }
    }
    list.push_back(n);
  }
  return list;
}

Applied SaturationRound::applyAll(ArrayRef<PendingRewrite> pending) {
  Applied applied;
  for (const PendingRewrite &p : pending) {
    if (eg.numNodeSlots() >= options.maxNodes) {
      applied.full = true;
      break;
    }
    applied.merges += applyRewrite(p);
    ++applied.rewrites;
  }
  return applied;
}

size_t SaturationRound::applyRewrite(const PendingRewrite &p) {
  appliedKeys.insert(p.key);
  int32_t app = applicationRule.size();
  applicationRule.push_back(p.rule->id);
  LocationAttr loc = eg.eclass(p.outputs[0]).loc;
  std::vector<SmallVector<ClassId, 1>> results;
  auto resolve = [&](PatternRef r) {
    return r.isVar() ? eg.find(p.vars[r.index]) : results[r.op][r.index];
  };
  for (const Instance::Op &op : p.inst->ops) {
    SmallVector<ClassId, 3> children;
    for (PatternRef r : op.operands)
      children.push_back(resolve(r));
    ClassId c = eg.add(op.op, children, op.types, op.cost, loc, app);
    SmallVector<ClassId, 1> rs;
    if (eg.eclass(c).tuple) {
      for (unsigned i = 0; i < op.types.size(); ++i)
        rs.push_back(eg.projClass(c, i));
    } else {
      rs.push_back(c);
    }
    results.push_back(std::move(rs));
  }
  size_t merges = 0;
  for (auto [k, old, r] : llvm::enumerate(p.outputs, p.inst->outputs)) {
    bool merged = eg.merge(old, resolve(r));
    if (merged && r.isVar())
      mergeOnly.push_back({app, old, {p.outputNodes[k]}});
    merges += merged;
  }
  return merges;
}

void SaturationRound::recordIteration(size_t matches, double start,
                                      double matchEnd, double applyEnd) {
  perIteration.push_back(
      llvm::json::Object{{"matches", int64_t(matches)},
                         {"nodes", int64_t(eg.numNodes())},
                         {"classes", int64_t(eg.numClasses())},
                         {"match_seconds", matchEnd - start},
                         {"apply_seconds", applyEnd - matchEnd},
                         {"rebuild_seconds", clock.seconds() - applyEnd},
                         {"seconds", clock.seconds()}});
  if (options.progress && options.progress->due())
    options.progress->print(llvm::formatv(
        "eqsat: iteration {0}, {1} e-nodes, {2} e-classes, {3:f1} s",
        iteration + 1, eg.numNodes(), eg.numClasses(), clock.seconds()));
}

//===----------------------------------------------------------------------===//
// Extraction and report
//===----------------------------------------------------------------------===//

void SaturationRound::printExtractionProgress() {
  if (!options.progress || !options.progress->due())
    return;
  options.progress->print(llvm::formatv(
      "eqsat: {0} after {1} iterations, {2} e-nodes; extracting ({3})", stop,
      iteration, eg.numNodes(),
      options.extraction == "ilp" && eg.numNodes() <= options.ilpMaxNodes
          ? llvm::formatv("greedy, local search, ILP up to {0} s",
                          options.ilpTimeLimit)
                .str()
      : options.extraction == "ilp"
          ? std::string("greedy, local search; ILP skipped, e-graph above "
                        "ilp-max-nodes")
      : options.extraction == "local" ? std::string("greedy, local search")
                                      : std::string("greedy")));
}

void SaturationRound::extract(Extractions &ex) {
  // Greedy always (it is the fallback), the ILP when asked.
  ex.greedy = extractGreedy(eg, roots);
  // Local search from the greedy choice under the DAG cost: cheap, and it
  // finds the multi-output merges that tree costs hide. It starts from the
  // greedy choice and from the input graph (the previous round's
  // extraction: greedy, blind to sharing, undoes its merges), and keeps the
  // cheaper of the two.
  if (ex.greedy.ok &&
      (options.extraction == "ilp" || options.extraction == "local")) {
    double limit = std::max(0.1, 0.25 * options.ilpTimeLimit);
    ex.local = improveChoice(eg, roots, ex.greedy, limit);
    Extraction seed;
    seed.choice = eg.choiceOf(input);
    if (!seed.choice.empty()) {
      Extraction fromInput = improveChoice(eg, roots, seed, limit);
      if (fromInput.ok &&
          (!ex.local.ok || fromInput.graph.cost < ex.local.graph.cost))
        ex.local = std::move(fromInput);
    }
  }
  ex.skipIlp =
      options.extraction == "ilp" && eg.numNodes() > options.ilpMaxNodes;
  if (options.extraction == "ilp" && !ex.skipIlp) {
    double bound =
        ex.greedy.ok ? std::min(ex.greedy.graph.cost, input.cost) : input.cost;
    ex.ilp = extractILP(eg, roots, options.ilpTimeLimit, bound);
    ex.ranIlp = true;
  }
  // The input graph is always a valid extraction; never return worse.
  const Extraction &greedy = ex.greedy, &local = ex.local, &ilp = ex.ilp;
  if (greedy.ok && greedy.graph.cost <= input.cost)
    ex.best = &greedy;
  if (local.ok && local.graph.cost <= input.cost &&
      (!ex.best || local.graph.cost < ex.best->graph.cost))
    ex.best = &local;
  if (ex.ranIlp && ilp.ok &&
      (!ex.best ? ilp.graph.cost <= input.cost
                : ilp.graph.cost < ex.best->graph.cost))
    ex.best = &ilp;
}

void SaturationRound::countRulesUsed(const Extraction &best,
                                     Outcome &out) const {
  llvm::DenseSet<int32_t> used(best.origins.begin(), best.origins.end());
  for (const MergeOnlyOutput &mo : mergeOnly) {
    ClassId c = eg.find(mo.cls);
    int32_t chosen = c < best.choice.size() ? best.choice[c] : -1;
    if (chosen >= 0 && !llvm::is_contained(mo.matchedNodes, uint32_t(chosen)))
      used.insert(mo.app);
  }
  for (int32_t app : used)
    ++out.rulesApplied[rules.rules[applicationRule[app]].name];
}

void SaturationRound::recordStats(const Extractions &ex,
                                  double saturationSeconds,
                                  Outcome &out) const {
  const Extraction &greedy = ex.greedy, &local = ex.local, &ilp = ex.ilp;
  out.stats["iterations"] = int64_t(iteration);
  out.stats["enodes"] = int64_t(eg.numNodes());
  out.stats["eclasses"] = int64_t(eg.numClasses());
  out.stats["matches"] = int64_t(totalMatches);
  out.stats["rewrites_applied"] = int64_t(totalApplied);
  out.stats["repeated_matches"] = int64_t(repeats);
  out.stats["seminaive_roots_skipped"] = int64_t(rootsSkipped);
  out.stats["foldable_roots_skipped"] = int64_t(foldableRoots);
  out.stats["foldable_matches_skipped"] = int64_t(foldableSkipped);
  out.stats["rejected_instances"] = int64_t(instantiator.numRejected());
  out.stats["saturation_seconds"] = saturationSeconds;
  out.stats["greedy_cost"] = greedy.ok ? llvm::json::Value(greedy.graph.cost)
                                       : llvm::json::Value(nullptr);
  out.stats["greedy_seconds"] = greedy.seconds;
  out.stats["local_cost"] = local.ok ? llvm::json::Value(local.graph.cost)
                                     : llvm::json::Value(nullptr);
  out.stats["local_seconds"] = local.seconds;
  if (ex.skipIlp)
    out.stats["ilp_status"] =
        llvm::formatv("skipped: {0} e-nodes > ilp-max-nodes={1}", eg.numNodes(),
                      options.ilpMaxNodes)
            .str();
  if (ex.ranIlp) {
    out.stats["ilp_status"] = ilp.status;
    out.stats["ilp_cost"] =
        ilp.ok ? llvm::json::Value(ilp.graph.cost) : llvm::json::Value(nullptr);
    out.stats["ilp_seconds"] = ilp.seconds;
    out.stats["ilp_variables"] = int64_t(ilp.variables);
    out.stats["ilp_cycle_classes"] = int64_t(ilp.cycleClasses);
  }
  out.stats["extraction"] = ex.best == &ilp     ? "ilp"
                            : ex.best == &local ? "local"
                            : ex.best           ? "greedy"
                                                : "input";
}

llvm::json::Object SaturationRound::busiestRules() const {
  std::vector<unsigned> busiest;
  for (unsigned i = 0; i < ruleMatches.size(); ++i)
    if (ruleMatches[i])
      busiest.push_back(i);
  loom::stableSort(busiest, [&](unsigned a, unsigned b) {
    return ruleMatches[a] > ruleMatches[b];
  });
  if (busiest.size() > 10)
    busiest.resize(10);
  llvm::json::Object busy;
  for (unsigned i : busiest)
    busy[rules.rules[i].name] = int64_t(ruleMatches[i]);
  return busy;
}

Outcome SaturationRound::run() {
  Outcome out;
  out.costBefore = input.cost;
  planSeminaive();
  saturate();
  double saturationSeconds = clock.seconds();
  printExtractionProgress();
  Extractions ex;
  extract(ex);
  if (ex.best) {
    out.best = ex.best->graph;
    countRulesUsed(*ex.best, out);
  } else {
    out.best = input;
  }
  out.costAfter = out.best.cost;
  out.seconds = clock.seconds();
  out.stopReason = stop;
  recordStats(ex, saturationSeconds, out);
  out.stats["per_iteration"] = std::move(perIteration);
  out.stats["busiest_rules"] = busiestRules();
  return out;
}

//===----------------------------------------------------------------------===//
// Rounds
//===----------------------------------------------------------------------===//

Outcome search::equalitySaturation(SearchContext &sc, const RuleSet &rules,
                                   const TermGraph &input,
                                   const EqsatOptions &options) {
  // Rounds: the graph extracted from one e-graph seeds the next. Multi-
  // pattern rules (applied in a round's first iterations only, as their
  // matches grow quadratically) can then merge again what they merged (two
  // merged convolutions and a third one), and the later e-graphs are kept
  // small, so that the extraction's local search finds their optimum. The
  // first round's e-graph has at most max(5000, 4 x input nodes) e-nodes,
  // the later ones max(1000, 1.5 x input nodes) (both at most max-nodes);
  // the search ends at the first later round that finds nothing cheaper,
  // after `rounds` rounds, or at the time limit. One round is TENSAT's
  // single e-graph, of up to max-nodes e-nodes. Measured on the zoo in
  // docs/benchmarks/superopt.md.
  Stopwatch clock;
  Outcome out;
  out.costBefore = input.cost;
  TermGraph current = input;
  llvm::json::Array rounds;
  Outcome last;
  Instantiator instantiator(sc);
  size_t n = input.nodes.size();
  size_t firstLimit = std::min(options.maxNodes, std::max<size_t>(5000, 4 * n));
  size_t laterLimit =
      std::min(options.maxNodes, std::max<size_t>(1000, 3 * n / 2));
  unsigned numRounds = std::max(1u, options.rounds);
  for (unsigned round = 0; round < numRounds; ++round) {
    EqsatOptions o = options;
    o.timeLimit = options.timeLimit - clock.seconds();
    o.maxNodes = numRounds == 1 ? options.maxNodes
                 : round == 0   ? firstLimit
                                : laterLimit;
    if (round > 0 && o.timeLimit <= 0)
      break;
    last = SaturationRound(sc, rules, current, o, instantiator).run();
    bool improved = last.costAfter < current.cost * (1 - 1e-9);
    rounds.push_back(llvm::json::Object{
        {"max_nodes", int64_t(o.maxNodes)},
        {"cost_before", current.cost},
        {"cost_after", improved ? last.costAfter : current.cost},
        {"stop", last.stopReason},
        {"iterations", last.stats["iterations"]},
        {"enodes", last.stats["enodes"]},
        {"seconds", last.seconds}});
    if (improved) {
      for (auto &[name, count] : last.rulesApplied)
        out.rulesApplied[name] += count;
      current = std::move(last.best);
    } else if (round > 0) {
      break;
    }
  }
  out.best = std::move(current);
  out.costAfter = out.best.cost;
  out.seconds = clock.seconds();
  out.stopReason = last.stopReason;
  out.stats = std::move(last.stats);
  out.stats["rounds"] = std::move(rounds);
  return out;
}
