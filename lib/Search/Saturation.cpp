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
  /// (rule, variable classes, output classes) when matched.
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

} // namespace

/// One round: an e-graph of `input`, saturated, and extracted. The
/// instantiator (targets memoised per rule and shapes) is shared by the
/// rounds.
static Outcome saturateRound(SearchContext &sc, const RuleSet &rules,
                             const TermGraph &input,
                             const EqsatOptions &options,
                             Instantiator &instantiator) {
  Stopwatch clock;
  Outcome out;
  out.costBefore = input.cost;
  EGraph eg(sc);
  SmallVector<ClassId, 2> roots = eg.addGraph(input);
  eg.rebuild();
  std::vector<RuleSchedule> schedule(rules.rules.size());
  std::vector<size_t> ruleMatches(rules.rules.size(), 0);
  std::vector<uint32_t> applicationRule;
  std::vector<MergeOnlyOutput> mergeOnly;

  // Applications already made, by (rule, matched e-nodes, variable
  // classes, canonical when matched): the same match found again in a
  // later iteration (multi-output rules are matched in full, and a rule
  // after a ban from its last full match) would add nodes that exist and
  // merge classes that are merged; skip it. A rebuild keeps node ids but
  // canonicalises children, and the key holds the variables' classes as
  // they are then, so a match over merged classes is new.
  struct KeyHash {
    size_t operator()(const std::vector<uint32_t> &k) const {
      return llvm::hash_combine_range(k.begin(), k.end());
    }
  };
  std::unordered_set<std::vector<uint32_t>, KeyHash> appliedKeys;
  size_t repeats = 0, foldableSkipped = 0;

  // Semi-naive matching. A rule whose source is a tree below its root op
  // (a plan of Root then Definer steps) has every match within
  // 2 * (ops - 1) class levels below the root node's children: a definer
  // may sit behind a projection, one level more. If the rule was matched
  // in full in iteration t, a root node made before t + 1 whose children's
  // deep stamps (EGraph::deepStamps) predate t + 1 gives only matches found
  // then: they are skipped without being enumerated. Multi-root rules (Join
  // steps) are matched in full every time.
  std::vector<int64_t> lastFull(rules.rules.size(), -1);
  std::vector<int32_t> seminaiveLevels(rules.rules.size(), -1);
  // Rules with the same root shape class, output and depth share their
  // lists of roots to match (per last full match).
  std::vector<uint32_t> rootGroup(rules.rules.size(), 0);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> groupIndex;
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> groups;
  unsigned maxLevels = 0;
  for (const Rule &rule : rules.rules) {
    bool tree =
        !rule.plan.empty() && rule.plan[0].kind == MatchStep::Kind::Root &&
        llvm::all_of(llvm::drop_begin(rule.plan), [](const MatchStep &s) {
          return s.kind == MatchStep::Kind::Definer;
        });
    if (!tree || rule.source.outputs.size() != 1 ||
        rule.source.outputs[0].isVar() ||
        unsigned(rule.source.outputs[0].op) != rule.plan[0].op)
      continue;
    seminaiveLevels[rule.id] = 2 * (rule.plan.size() - 1);
    maxLevels = std::max<unsigned>(maxLevels, seminaiveLevels[rule.id]);
    auto key = std::make_tuple(
        sc.op(rule.source.ops[rule.plan[0].op].op).shapeClass,
        rule.source.outputs[0].index, uint32_t(seminaiveLevels[rule.id]));
    auto [it, fresh] = groupIndex.try_emplace(key, groups.size());
    if (fresh)
      groups.push_back(key);
    rootGroup[rule.id] = it->second;
  }
  size_t rootsSkipped = 0, foldableRoots = 0;

  std::string stop = "iterations";
  unsigned iteration = 0;
  size_t totalMatches = 0, totalApplied = 0;
  llvm::json::Array perIteration;
  for (; iteration < options.maxIterations; ++iteration) {
    if (clock.seconds() > options.timeLimit) {
      stop = "time";
      break;
    }
    // Match (the e-graph does not change while matching).
    double iterationStart = clock.seconds();
    std::vector<PendingRewrite> pending;
    std::vector<std::vector<uint32_t>> deep;
    if (iteration > 0 && options.seminaive)
      deep = eg.deepStamps(maxLevels);

    std::vector<
        llvm::SmallVector<std::pair<uint32_t, std::vector<uint32_t>>, 1>>
        rootLists(groups.size());
    EGraphView view(eg);
    PatternMatcher<EGraphView> matcher(sc, view);
    SmallVector<Type, 4> varTypes;
    SmallVector<Type, 2> outputTypes;
    bool anyBanned = false, timeUp = false;
    for (const Rule &rule : rules.rules) {
      RuleSchedule &rs = schedule[rule.id];
      if (rs.bannedUntil > iteration) {
        anyBanned = true;
        continue;
      }
      if (rule.multiPattern && iteration >= options.multiPatternIterations)
        continue;
      size_t limit = options.matchLimit << rs.timesBanned;
      size_t count = 0, fresh = 0;
      size_t before = pending.size();
      bool banned = false;
      auto onMatch = [&](const Match<ClassId> &m) {
        ++count;
        if ((count & 255) == 0 && clock.seconds() > options.timeLimit) {
          timeUp = true;
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
        std::vector<uint32_t> key;
        key.reserve(1 + m.nodes.size() + m.vars.size());
        key.push_back(rule.id);
        key.insert(key.end(), m.nodes.begin(), m.nodes.end());
        for (auto [v, b] : llvm::zip(m.vars, m.varBound))
          key.push_back(b ? eg.find(v) : ~0u);
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
        varTypes.clear();
        for (auto [v, b] : llvm::zip(m.vars, m.varBound))
          varTypes.push_back(b ? view.typeOf(v) : Type());
        outputTypes.clear();
        for (ClassId c : m.outputs)
          outputTypes.push_back(view.typeOf(c));
        const Instance *inst =
            instantiator.instantiate(rule, varTypes, m.dims, outputTypes);
        if (inst) {
          PendingRewrite p{&rule, {}, {}, {}, inst, std::move(key)};
          p.vars.assign(m.vars.begin(), m.vars.end());
          p.outputs.assign(m.outputs.begin(), m.outputs.end());
          for (PatternRef r : rule.source.outputs)
            p.outputNodes.push_back(m.nodes[r.op]);
          pending.push_back(std::move(p));
        }
        return true;
      };
      int32_t levels = seminaiveLevels[rule.id];
      if (levels < 0) {
        matcher.forEachMatch(rule, onMatch);
      } else {
        // Roots with something newer than the rule's last full match (all
        // roots before its first), whose output is not computed from
        // weights alone; the lists are shared by the rules with the same
        // root shape class, output, levels and last full match.
        bool all = lastFull[rule.id] < 0 || deep.empty();
        uint32_t since = all ? ~0u : uint32_t(lastFull[rule.id]);
        auto [shapeClass, outIndex, groupLevels] = groups[rootGroup[rule.id]];
        auto &lists = rootLists[rootGroup[rule.id]];
        auto it = llvm::find_if(
            lists, [&](const auto &l) { return l.first == since; });
        bool fresh = it == lists.end();
        if (fresh) {
          lists.emplace_back(since, std::vector<uint32_t>());
          it = std::prev(lists.end());
        }
        if (fresh)
          if (const std::vector<uint32_t> *list = eg.nodesOfClass(shapeClass))
            for (uint32_t n : *list) {
              const ENode &node = eg.node(n);
              if (node.dead)
                continue;
              if (outIndex >= eg.eclass(node.cls).types.size() ||
                  eg.eclass(eg.result(n, outIndex)).foldable) {
                ++foldableRoots;
                continue;
              }
              if (!all) {
                uint32_t stamp = node.stamp;
                for (ClassId child : node.children)
                  stamp = std::max(stamp, deep[levels][eg.find(child)]);
                if (stamp <= since) {
                  ++rootsSkipped;
                  continue;
                }
              }
              it->second.push_back(n);
            }
        for (uint32_t n : it->second)
          if (!matcher.forEachMatchAt(rule, n, onMatch))
            break;
      }
      if (!banned && !timeUp)
        lastFull[rule.id] = iteration;
      totalMatches += count;
      ruleMatches[rule.id] += count;
      if (banned) {
        // Too many matches: skip this rule for a while (egg's backoff).
        pending.resize(before);
        rs.bannedUntil = iteration + 1 + (options.banLength << rs.timesBanned);
        ++rs.timesBanned;
        anyBanned = true;
      }
      if (timeUp)
        break;
    }

    double matchEnd = clock.seconds();
    // Apply: what changes now is stamped with the next epoch.
    eg.setEpoch(iteration + 1);
    size_t nodesBefore = eg.numNodes();
    size_t merges = 0, applied = 0;
    bool full = false;
    for (const PendingRewrite &p : pending) {
      if (eg.numNodeSlots() >= options.maxNodes) {
        full = true;
        break;
      }
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
      for (auto [k, old, r] : llvm::enumerate(p.outputs, p.inst->outputs)) {
        bool merged = eg.merge(old, resolve(r));
        if (merged && r.isVar())
          mergeOnly.push_back({app, old, {p.outputNodes[k]}});
        merges += merged;
      }
      ++applied;
    }
    double applyEnd = clock.seconds();
    eg.rebuild();
    totalApplied += applied;
    perIteration.push_back(
        llvm::json::Object{{"matches", int64_t(pending.size())},
                           {"nodes", int64_t(eg.numNodes())},
                           {"classes", int64_t(eg.numClasses())},
                           {"match_seconds", matchEnd - iterationStart},
                           {"apply_seconds", applyEnd - matchEnd},
                           {"rebuild_seconds", clock.seconds() - applyEnd},
                           {"seconds", clock.seconds()}});
    if (options.progress && options.progress->due())
      options.progress->print(llvm::formatv(
          "eqsat: iteration {0}, {1} e-nodes, {2} e-classes, {3:f1} s",
          iteration + 1, eg.numNodes(), eg.numClasses(), clock.seconds()));
    if (full) {
      stop = "nodes";
      ++iteration;
      break;
    }
    if (timeUp) {
      stop = "time";
      ++iteration;
      break;
    }
    if (merges == 0 && eg.numNodes() == nodesBefore) {
      if (!anyBanned) {
        stop = "saturated";
        ++iteration;
        break;
      }
      // Nothing changed but some rules sit out a ban: lift the bans now
      // rather than idle until they expire (egg's BackoffScheduler).
      for (RuleSchedule &rs : schedule)
        rs.bannedUntil = 0;
    }
  }
  double saturationSeconds = clock.seconds();
  if (options.progress && options.progress->due())
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

  // Extract: greedy always (it is the fallback), the ILP when asked.
  Extraction greedy = extractGreedy(eg, roots);
  // Local search from the greedy choice under the DAG cost: cheap, and it
  // finds the multi-output merges that tree costs hide.
  // Local search from the greedy choice and from the input graph (the
  // previous round's extraction: greedy, blind to sharing, undoes its
  // merges), the cheaper of the two.
  Extraction local;
  if (greedy.ok &&
      (options.extraction == "ilp" || options.extraction == "local")) {
    double limit = std::max(0.1, 0.25 * options.ilpTimeLimit);
    local = improveChoice(eg, roots, greedy, limit);
    Extraction seed;
    seed.choice = eg.choiceOf(input);
    if (!seed.choice.empty()) {
      Extraction fromInput = improveChoice(eg, roots, seed, limit);
      if (fromInput.ok &&
          (!local.ok || fromInput.graph.cost < local.graph.cost))
        local = std::move(fromInput);
    }
  }
  Extraction ilp;
  bool ranIlp = false;
  bool skipIlp =
      options.extraction == "ilp" && eg.numNodes() > options.ilpMaxNodes;
  if (options.extraction == "ilp" && !skipIlp) {
    double bound =
        greedy.ok ? std::min(greedy.graph.cost, input.cost) : input.cost;
    ilp = extractILP(eg, roots, options.ilpTimeLimit, bound);
    ranIlp = true;
  }
  // The input graph is always a valid extraction; never return worse.
  const Extraction *best = nullptr;
  if (greedy.ok && greedy.graph.cost <= input.cost)
    best = &greedy;
  if (local.ok && local.graph.cost <= input.cost &&
      (!best || local.graph.cost < best->graph.cost))
    best = &local;
  if (ranIlp && ilp.ok &&
      (!best ? ilp.graph.cost <= input.cost
             : ilp.graph.cost < best->graph.cost))
    best = &ilp;
  if (best) {
    out.best = best->graph;
    llvm::DenseSet<int32_t> used(best->origins.begin(), best->origins.end());
    for (const MergeOnlyOutput &mo : mergeOnly) {
      ClassId c = eg.find(mo.cls);
      int32_t chosen = c < best->choice.size() ? best->choice[c] : -1;
      if (chosen >= 0 && !llvm::is_contained(mo.matchedNodes, uint32_t(chosen)))
        used.insert(mo.app);
    }
    for (int32_t app : used)
      ++out.rulesApplied[rules.rules[applicationRule[app]].name];
  } else {
    out.best = input;
  }
  out.costAfter = out.best.cost;
  out.seconds = clock.seconds();
  out.stopReason = stop;
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
  if (skipIlp)
    out.stats["ilp_status"] =
        llvm::formatv("skipped: {0} e-nodes > ilp-max-nodes={1}", eg.numNodes(),
                      options.ilpMaxNodes)
            .str();
  if (ranIlp) {
    out.stats["ilp_status"] = ilp.status;
    out.stats["ilp_cost"] =
        ilp.ok ? llvm::json::Value(ilp.graph.cost) : llvm::json::Value(nullptr);
    out.stats["ilp_seconds"] = ilp.seconds;
    out.stats["ilp_variables"] = int64_t(ilp.variables);
    out.stats["ilp_cycle_classes"] = int64_t(ilp.cycleClasses);
  }
  out.stats["extraction"] = best == &ilp     ? "ilp"
                            : best == &local ? "local"
                            : best           ? "greedy"
                                             : "input";
  out.stats["per_iteration"] = std::move(perIteration);
  // The rules that matched most: where matching time goes.
  std::vector<unsigned> busiest;
  for (unsigned i = 0; i < ruleMatches.size(); ++i)
    if (ruleMatches[i])
      busiest.push_back(i);
  llvm::stable_sort(busiest, [&](unsigned a, unsigned b) {
    return ruleMatches[a] > ruleMatches[b];
  });
  if (busiest.size() > 10)
    busiest.resize(10);
  llvm::json::Object busy;
  for (unsigned i : busiest)
    busy[rules.rules[i].name] = int64_t(ruleMatches[i]);
  out.stats["busiest_rules"] = std::move(busy);
  return out;
}

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
    last = saturateRound(sc, rules, current, o, instantiator);
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
