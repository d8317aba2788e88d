//===- Extraction.cpp - The cheapest graph in an e-graph ------------------===//
//
// Part of Loom. See Extraction.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Extraction.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <z3++.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

/// Whether node `n` may be chosen for its class: live, and computed from
/// weights alone when its class can be.
bool isCandidate(const EGraph &eg, uint32_t n) {
  const ENode &node = eg.node(n);
  if (node.dead)
    return false;
  return !eg.eclass(node.cls).foldable || eg.isFoldable(n);
}

double effectiveCost(const EGraph &eg, uint32_t n) {
  return eg.isFoldable(n) ? 0.0 : eg.node(n).cost;
}

/// Per class slot, the price of storing it (TermGraph.h): the class's
/// bytes times the stored-byte price when it is foldable, else 0. A class
/// pays it once when a node that is not foldable reads it.
std::vector<double> storedPrices(const EGraph &eg) {
  std::vector<double> price(eg.numClassSlots(), 0.0);
  for (ClassId c = 0; c < price.size(); ++c)
    if (eg.find(c) == c && eg.eclass(c).foldable)
      price[c] = bytesOf(eg.eclass(c).types) *
                 eg.context().getStoredBytePrice();
  return price;
}

} // namespace

FailureOr<TermGraph> search::buildChoice(const EGraph &eg,
                                         ArrayRef<ClassId> roots,
                                         ArrayRef<int32_t> choice,
                                         std::vector<int32_t> *origins) {
  SearchContext &sc = eg.context();
  size_t slots = eg.numClassSlots();
  std::vector<uint8_t> state(slots, 0);
  std::vector<ValueRef> ref(slots);
  TermGraph g;
  llvm::DenseSet<int32_t> seenOrigins;
  std::vector<ClassId> stack;
  for (ClassId root : roots) {
    root = eg.find(root);
    if (state[root] == 2)
      continue;
    stack.push_back(root);
    state[root] = 1;
    while (!stack.empty()) {
      ClassId c = stack.back();
      int32_t n = c < choice.size() ? choice[c] : -1;
      if (n < 0)
        return failure();
      const ENode &node = eg.node(n);
      bool ready = true;
      for (ClassId child : node.children) {
        child = eg.find(child);
        if (state[child] == 1)
          return failure(); // cyclic
        if (state[child] == 0) {
          state[child] = 1;
          stack.push_back(child);
          ready = false;
          break;
        }
      }
      if (!ready)
        continue;
      stack.pop_back();
      state[c] = 2;
      const OpInfo &info = sc.op(node.op);
      if (node.origin >= 0 && origins && seenOrigins.insert(node.origin).second)
        origins->push_back(node.origin);
      if (info.isProj()) {
        ref[c] = ValueRef{ref[eg.find(node.children[0])].node, info.index};
        continue;
      }
      TermNode t;
      t.op = node.op;
      for (ClassId child : node.children)
        t.operands.push_back(ref[eg.find(child)]);
      const EClass &ec = eg.eclass(c);
      t.types.assign(ec.types.begin(), ec.types.end());
      t.cost = node.cost;
      t.loc = ec.loc;
      ref[c] = ValueRef{uint32_t(g.nodes.size()), 0};
      g.nodes.push_back(std::move(t));
    }
  }
  for (ClassId root : roots)
    g.outputs.push_back(ref[eg.find(root)]);
  if (failed(g.canonicalize(sc)))
    return failure();
  return g;
}

/// Builds the graph of \p choice into \p e (ok when the choice is complete
/// and acyclic) and records the time.
static void finishExtraction(Extraction &e, const EGraph &eg,
                             ArrayRef<ClassId> roots,
                             std::vector<int32_t> choice,
                             const Stopwatch &clock) {
  FailureOr<TermGraph> g = buildChoice(eg, roots, choice, &e.origins);
  e.choice = std::move(choice);
  if (succeeded(g)) {
    e.ok = true;
    e.graph = std::move(*g);
  }
  e.seconds = clock.seconds();
}

Extraction search::extractGreedy(const EGraph &eg, ArrayRef<ClassId> roots) {
  Stopwatch clock;
  size_t slots = eg.numClassSlots();
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> cost(slots, inf);
  std::vector<uint32_t> depth(slots, 0);
  std::vector<int32_t> choice(slots, -1);
  std::vector<double> stored = storedPrices(eg);
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t n = 0; n < eg.numNodeSlots(); ++n) {
      if (!isCandidate(eg, n))
        continue;
      const ENode &node = eg.node(n);
      bool foldable = eg.isFoldable(n);
      double sum = foldable ? 0.0 : node.cost;
      uint32_t d = 0;
      bool ok = true;
      for (ClassId child : node.children) {
        child = eg.find(child);
        if (cost[child] == inf) {
          ok = false;
          break;
        }
        sum += cost[child] + (foldable ? 0.0 : stored[child]);
        d = std::max(d, depth[child] + 1);
      }
      if (!ok)
        continue;
      ClassId c = eg.find(node.cls);
      if (sum < cost[c] || (sum == cost[c] && d < depth[c])) {
        cost[c] = sum;
        depth[c] = d;
        choice[c] = n;
        changed = true;
      }
    }
  }
  Extraction e;
  e.status = "greedy";
  finishExtraction(e, eg, roots, std::move(choice), clock);
  return e;
}

namespace {

/// The local search of improveChoice: moves that lower the DAG cost of a
/// complete choice, until none does or the time is up.
class LocalSearch {
public:
  LocalSearch(const EGraph &eg, ArrayRef<ClassId> roots,
              std::vector<int32_t> start, double timeLimit)
      : eg(eg), roots(roots), timeLimit(timeLimit), slots(eg.numClassSlots()),
        choice(std::move(start)), cands(slots), stored(storedPrices(eg)),
        stamp(slots, 0), onStack(slots, 0), storedStamp(slots, 0),
        reach(slots, 0) {
    choice.resize(slots, -1);
    collectCandidates();
  }

  /// Improves the choice to a local optimum (or until the time limit).
  std::vector<int32_t> run(const Stopwatch &clock);

private:
  /// The nodes each class may choose, and the classes of each tuple's
  /// results.
  void collectCandidates();
  /// The DAG cost of the current choice, or infinity when it is incomplete
  /// or cyclic. Stamps the classes it reaches with `epoch`.
  double dagCost();
  /// Takes the classes the last dagCost() reached as those that matter:
  /// only they affect the cost, moves elsewhere are not evaluated.
  void accept();
  /// Makes every class holding a result of `tuple` choose its projection
  /// (and `tuple` a node, if it has none); true when that changes anything.
  /// restore() undoes it.
  bool applyGroup(ClassId tuple,
                  ArrayRef<std::pair<ClassId, uint32_t>> results);
  void restore();
  /// Applies the best group move while one lowers the cost; true when any
  /// did.
  bool improveByGroups(const Stopwatch &clock);
  /// Switches each reached class to the cheapest of its other nodes, where
  /// that lowers the cost; true when any did.
  bool improveBySingleMoves(const Stopwatch &clock);

  const EGraph &eg;
  ArrayRef<ClassId> roots;
  double timeLimit;
  size_t slots;
  std::vector<int32_t> choice;
  /// Candidates per class, and the (class, projection node) of each result
  /// of a tuple class.
  std::vector<std::vector<uint32_t>> cands;
  llvm::DenseMap<ClassId, std::vector<std::pair<ClassId, uint32_t>>> tuples;
  /// storedPrices().
  std::vector<double> stored;
  /// dagCost()'s marks: reached, on the DFS stack, and stored (priced), in
  /// `epoch`.
  std::vector<uint32_t> stamp, onStack, storedStamp;
  uint32_t epoch = 0;
  std::vector<std::pair<ClassId, uint32_t>> stack;
  std::vector<uint8_t> reach;
  /// The choices applyGroup() overwrote.
  std::vector<std::pair<ClassId, int32_t>> saved;
  double best = 0;
};

} // namespace

void LocalSearch::collectCandidates() {
  SearchContext &sc = eg.context();
  for (uint32_t n = 0; n < eg.numNodeSlots(); ++n) {
    if (!isCandidate(eg, n))
      continue;
    const ENode &node = eg.node(n);
    ClassId c = eg.find(node.cls);
    cands[c].push_back(n);
    if (sc.op(node.op).isProj())
      tuples[eg.find(node.children[0])].push_back({c, n});
  }
}

double LocalSearch::dagCost() {
  ++epoch;
  double total = 0;
  for (ClassId root : roots) {
    root = eg.find(root);
    if (stamp[root] == epoch)
      continue;
    stamp[root] = epoch;
    onStack[root] = epoch;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto &[c, next] = stack.back();
      int32_t n = choice[c];
      if (n < 0) {
        stack.clear();
        return std::numeric_limits<double>::infinity();
      }
      const ENode &node = eg.node(n);
      if (next < node.children.size()) {
        ClassId child = eg.find(node.children[next++]);
        if (stamp[child] == epoch) {
          if (onStack[child] == epoch) {
            stack.clear();
            return std::numeric_limits<double>::infinity(); // a cycle
          }
          continue;
        }
        stamp[child] = epoch;
        onStack[child] = epoch;
        stack.push_back({child, 0});
        continue;
      }
      if (!eg.isFoldable(n)) {
        total += node.cost;
        for (ClassId child : node.children) {
          child = eg.find(child);
          if (stored[child] > 0 && storedStamp[child] != epoch) {
            storedStamp[child] = epoch;
            total += stored[child];
          }
        }
      }
      onStack[c] = 0;
      stack.pop_back();
    }
  }
  return total;
}

void LocalSearch::accept() {
  for (size_t c = 0; c < slots; ++c)
    reach[c] = stamp[c] == epoch;
}

bool LocalSearch::applyGroup(ClassId tuple,
                             ArrayRef<std::pair<ClassId, uint32_t>> results) {
  saved.clear();
  bool changes = false;
  for (auto [c, pn] : results) {
    saved.push_back({c, choice[c]});
    changes |= choice[c] != int32_t(pn);
    choice[c] = pn;
  }
  if (choice[tuple] < 0 && !cands[tuple].empty()) {
    saved.push_back({tuple, choice[tuple]});
    choice[tuple] = cands[tuple][0];
  }
  return changes;
}

void LocalSearch::restore() {
  for (auto it = saved.rbegin(); it != saved.rend(); ++it)
    choice[it->first] = it->second;
}

// Group moves: every result of one multi-result node at once, the best
// first (first-improvement took whichever merge it met first, and a merge
// blocks the others of its e-classes).
bool LocalSearch::improveByGroups(const Stopwatch &clock) {
  bool improved = false;
  while (clock.seconds() < timeLimit) {
    double bestMove = best * (1 - 1e-12);
    const std::vector<std::pair<ClassId, uint32_t>> *pick = nullptr;
    ClassId pickTuple = 0;
    for (auto &entry : tuples) {
      if (llvm::none_of(entry.second, [&](auto r) { return reach[r.first]; }))
        continue;
      bool changes = applyGroup(entry.first, entry.second);
      double cost = changes ? dagCost() : best;
      restore();
      if (cost < bestMove) {
        bestMove = cost;
        pick = &entry.second;
        pickTuple = entry.first;
      }
    }
    if (!pick)
      break;
    applyGroup(pickTuple, *pick);
    best = dagCost();
    accept();
    improved = true;
  }
  return improved;
}

bool LocalSearch::improveBySingleMoves(const Stopwatch &clock) {
  bool improved = false;
  for (ClassId c = 0; c < slots && clock.seconds() < timeLimit; ++c) {
    if (cands[c].size() < 2 || !reach[c])
      continue;
    int32_t old = choice[c];
    bool moved = false;
    for (uint32_t n : cands[c]) {
      if (int32_t(n) == old)
        continue;
      choice[c] = n;
      double cost = dagCost();
      if (cost < best * (1 - 1e-12)) {
        best = cost;
        old = n;
        improved = true;
        moved = true;
      }
    }
    choice[c] = old;
    if (moved) {
      dagCost();
      accept();
    }
  }
  return improved;
}

std::vector<int32_t> LocalSearch::run(const Stopwatch &clock) {
  best = dagCost();
  accept();
  bool improved = true;
  while (improved && clock.seconds() < timeLimit) {
    bool byGroups = improveByGroups(clock);
    bool bySingleMoves = improveBySingleMoves(clock);
    improved = byGroups || bySingleMoves;
  }
  return std::move(choice);
}

Extraction search::improveChoice(const EGraph &eg, ArrayRef<ClassId> roots,
                                 const Extraction &start, double timeLimit) {
  Stopwatch clock;
  std::vector<int32_t> choice =
      LocalSearch(eg, roots, start.choice, timeLimit).run(clock);
  Extraction e;
  e.status = "local";
  finishExtraction(e, eg, roots, std::move(choice), clock);
  return e;
}

namespace {

/// Tarjan's strongly connected components of a graph given by successor
/// lists (here: the class graph, edges from a candidate node's class to its
/// children's classes). Returns the component of each vertex.
std::vector<int32_t>
stronglyConnectedComponents(const std::vector<std::vector<uint32_t>> &succ) {
  size_t n = succ.size();
  std::vector<int32_t> comp(n, -1), low(n, 0), num(n, -1);
  std::vector<uint8_t> onStack(n, 0);
  std::vector<uint32_t> stack;
  int32_t counter = 0, components = 0;
  // Iterative Tarjan: (vertex, next successor position).
  std::vector<std::pair<uint32_t, uint32_t>> call;
  for (uint32_t s = 0; s < n; ++s) {
    if (num[s] >= 0)
      continue;
    call.push_back({s, 0});
    num[s] = low[s] = counter++;
    stack.push_back(s);
    onStack[s] = 1;
    while (!call.empty()) {
      auto &[v, pos] = call.back();
      if (pos < succ[v].size()) {
        uint32_t w = succ[v][pos++];
        if (num[w] < 0) {
          num[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = 1;
          call.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], num[w]);
        }
        continue;
      }
      if (low[v] == num[v]) {
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = 0;
          comp[w] = components;
        } while (w != v);
        ++components;
      }
      uint32_t done = v;
      call.pop_back();
      if (!call.empty())
        low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  return comp;
}

/// The Z3 variables of the ILP: per class (indexed like
/// ILPExtractor::classes) whether it is chosen, whether it is stored and, in
/// a cycle, its level; per candidate node whether it is chosen.
struct ILPVariables {
  /// Per class also whether it is stored (a priced foldable class that a
  /// chosen run-time node reads; true for the others).
  std::vector<z3::expr> x, level, stored;
  std::vector<std::vector<z3::expr>> y;
};

/// TENSAT's ILP extraction, solved by Z3 as weighted MaxSAT (Extraction.h).
class ILPExtractor {
public:
  ILPExtractor(const EGraph &eg, ArrayRef<ClassId> roots)
      : eg(eg), roots(roots), stored(storedPrices(eg)) {
    collectClasses();
    findComponents();
    findForced();
  }

  /// The number of classes whose node is left to the solver.
  size_t numChoices() const;
  /// The extraction when no class has a choice: every class its only
  /// candidate.
  std::vector<int32_t> onlyChoice() const;
  /// The number of classes in a cycle of the class graph.
  size_t numCycleClasses() const;
  /// Solves with Z3's MaxSAT engine `engine` in `seconds`; unless unsat,
  /// `choice` is the model's node per class slot (-1: none).
  z3::check_result solve(const char *engine, double seconds,
                         std::vector<int32_t> &choice);
  /// The number of Z3 variables of the last solve().
  size_t numVariables() const { return variables; }

private:
  /// The classes a solution may need: reachable from the roots through
  /// candidate nodes; and the candidates of each.
  void collectClasses();
  /// The successor lists of the class graph and its strongly connected
  /// components.
  void findComponents();
  // Forced classes and nodes: a root is in every solution, and so is the
  // only candidate of a class in every solution, and its children. Their
  // cost is a constant of the objective: without soft constraints for them
  // the MaxSAT solver does not spend a core on each.
  void findForced();
  bool isCyclic(size_t k) const { return compSize[comp[k]] > 1; }
  /// Declares the variables (class and node choices, then the levels).
  ILPVariables declareVariables(z3::context &ctx) const;
  /// A chosen class chooses one candidate, a chosen node chooses its
  /// children's classes (below it, within a cycle), and a node's cost is
  /// a soft constraint unless it is forced.
  void addClassConstraints(size_t k, z3::context &ctx, z3::optimize &opt,
                           const ILPVariables &vars) const;
  /// The node chosen per class slot in `model`.
  void readChoice(const z3::model &model, const ILPVariables &vars,
                  std::vector<int32_t> &choice) const;

  const EGraph &eg;
  ArrayRef<ClassId> roots;
  /// storedPrices(), per class slot.
  std::vector<double> stored;
  std::vector<ClassId> classes;
  llvm::DenseMap<ClassId, uint32_t> index;
  /// Per class: its candidate nodes, its successor classes, its component,
  /// and whether it is forced.
  std::vector<std::vector<uint32_t>> cands, succ;
  std::vector<int32_t> comp;
  std::vector<uint8_t> forced;
  /// The size of each component.
  std::vector<uint32_t> compSize;
  size_t variables = 0;
};

} // namespace

void ILPExtractor::collectClasses() {
  auto visit = [&](ClassId c) {
    c = eg.find(c);
    auto [it, inserted] = index.try_emplace(c, classes.size());
    if (inserted) {
      classes.push_back(c);
      cands.emplace_back();
    }
    return it->second;
  };
  for (ClassId r : roots)
    visit(r);
  for (size_t k = 0; k < classes.size(); ++k) {
    for (uint32_t n : eg.eclass(classes[k]).nodes) {
      if (!isCandidate(eg, n))
        continue;
      cands[k].push_back(n);
      for (ClassId child : eg.node(n).children)
        visit(child);
    }
  }
}

void ILPExtractor::findComponents() {
  succ.resize(classes.size());
  for (size_t k = 0; k < classes.size(); ++k) {
    for (uint32_t n : cands[k])
      for (ClassId child : eg.node(n).children)
        succ[k].push_back(index.lookup(eg.find(child)));
    llvm::sort(succ[k]);
    succ[k].erase(std::unique(succ[k].begin(), succ[k].end()), succ[k].end());
  }
  comp = stronglyConnectedComponents(succ);
  for (int32_t c : comp) {
    if (size_t(c) >= compSize.size())
      compSize.resize(c + 1, 0);
    ++compSize[c];
  }
}

void ILPExtractor::findForced() {
  forced.assign(classes.size(), 0);
  std::vector<uint32_t> work;
  for (ClassId r : roots) {
    uint32_t k = index.lookup(eg.find(r));
    if (!forced[k]) {
      forced[k] = 1;
      work.push_back(k);
    }
  }
  while (!work.empty()) {
    uint32_t k = work.back();
    work.pop_back();
    if (cands[k].size() != 1)
      continue;
    for (ClassId child : eg.node(cands[k][0]).children) {
      uint32_t ck = index.lookup(eg.find(child));
      if (!forced[ck]) {
        forced[ck] = 1;
        work.push_back(ck);
      }
    }
  }
}

size_t ILPExtractor::numChoices() const {
  size_t choices = 0;
  for (size_t k = 0; k < classes.size(); ++k)
    choices += !forced[k] || cands[k].size() > 1;
  return choices;
}

std::vector<int32_t> ILPExtractor::onlyChoice() const {
  std::vector<int32_t> choice(eg.numClassSlots(), -1);
  for (size_t k = 0; k < classes.size(); ++k)
    if (!cands[k].empty())
      choice[classes[k]] = cands[k][0];
  return choice;
}

size_t ILPExtractor::numCycleClasses() const {
  size_t count = 0;
  for (size_t k = 0; k < classes.size(); ++k)
    count += isCyclic(k);
  return count;
}

ILPVariables ILPExtractor::declareVariables(z3::context &ctx) const {
  ILPVariables vars;
  vars.y.resize(classes.size());
  for (size_t k = 0; k < classes.size(); ++k) {
    vars.x.push_back(ctx.bool_const(("c" + std::to_string(k)).c_str()));
    for (uint32_t n : cands[k])
      vars.y[k].push_back(ctx.bool_const(("n" + std::to_string(n)).c_str()));
  }
  for (size_t k = 0; k < classes.size(); ++k)
    vars.stored.push_back(
        stored[classes[k]] > 0
            ? ctx.bool_const(("s" + std::to_string(k)).c_str())
            : ctx.bool_val(true));
  for (size_t k = 0; k < classes.size(); ++k)
    vars.level.push_back(isCyclic(k)
                             ? ctx.int_const(("t" + std::to_string(k)).c_str())
                             : ctx.int_val(0));
  return vars;
}

void ILPExtractor::addClassConstraints(size_t k, z3::context &ctx,
                                       z3::optimize &opt,
                                       const ILPVariables &vars) const {
  // Objective weights in nanoseconds: precise enough, and few distinct
  // values help the solver.
  const double unit = 1e-9;
  const std::vector<z3::expr> &x = vars.x, &level = vars.level;
  z3::expr_vector choices(ctx);
  for (const z3::expr &v : vars.y[k])
    choices.push_back(v);
  if (choices.empty()) {
    opt.add(!x[k]);
    return;
  }
  opt.add(z3::implies(x[k], z3::mk_or(choices)));
  if (choices.size() > 1)
    opt.add(z3::atmost(choices, 1));
  if (isCyclic(k))
    opt.add(level[k] >= 0 && level[k] < ctx.int_val(int(compSize[comp[k]])));
  if (stored[classes[k]] > 0) {
    long long w =
        std::max(1LL, (long long)std::llround(stored[classes[k]] / unit));
    opt.add_soft(!vars.stored[k], std::to_string(w).c_str());
  }
  for (size_t j = 0; j < cands[k].size(); ++j) {
    uint32_t n = cands[k][j];
    const z3::expr &yn = vars.y[k][j];
    opt.add(z3::implies(yn, x[k]));
    for (ClassId child : eg.node(n).children) {
      uint32_t ck = index.lookup(eg.find(child));
      if (ck == k) {
        opt.add(!yn); // a node cannot use its own class
        continue;
      }
      opt.add(z3::implies(yn, x[ck]));
      if (stored[classes[ck]] > 0 && !eg.isFoldable(n))
        opt.add(z3::implies(yn, vars.stored[ck]));
      if (comp[ck] == comp[k])
        opt.add(z3::implies(yn, level[k] > level[ck]));
    }
    double c = effectiveCost(eg, n);
    if (forced[k] && cands[k].size() == 1) {
      opt.add(yn); // a constant of the objective
    } else if (c > 0) {
      long long w = std::max(1LL, (long long)std::llround(c / unit));
      opt.add_soft(!yn, std::to_string(w).c_str());
    }
  }
}

void ILPExtractor::readChoice(const z3::model &model, const ILPVariables &vars,
                              std::vector<int32_t> &choice) const {
  choice.assign(eg.numClassSlots(), -1);
  for (size_t k = 0; k < classes.size(); ++k) {
    if (!model.eval(vars.x[k], true).is_true())
      continue;
    for (size_t j = 0; j < cands[k].size(); ++j)
      if (model.eval(vars.y[k][j], true).is_true()) {
        choice[classes[k]] = cands[k][j];
        break;
      }
  }
}

z3::check_result ILPExtractor::solve(const char *engine, double seconds,
                                     std::vector<int32_t> &choice) {
  z3::context ctx;
  z3::optimize opt(ctx);
  z3::params params(ctx);
  params.set("timeout", unsigned(std::max(1.0, seconds * 1000)));
  params.set("maxsat_engine", engine);
  opt.set(params);
  ILPVariables vars = declareVariables(ctx);
  for (ClassId r : roots)
    opt.add(vars.x[index.lookup(eg.find(r))]);
  variables = 0;
  for (size_t k = 0; k < classes.size(); ++k) {
    variables += 1 + vars.y[k].size();
    addClassConstraints(k, ctx, opt, vars);
  }
  z3::check_result result = opt.check();
  if (result == z3::unsat)
    return result;
  readChoice(opt.get_model(), vars, choice);
  return result;
}

Extraction search::extractILP(const EGraph &eg, ArrayRef<ClassId> roots,
                              double timeLimit, double upperBound) {
  Stopwatch clock;
  Extraction e;
  ILPExtractor ilp(eg, roots);
  if (ilp.numChoices() == 0) {
    // One extraction only: no solver needed.
    e.status = "optimal";
    finishExtraction(e, eg, roots, ilp.onlyChoice(), clock);
    return e;
  }
  e.cycleClasses = ilp.numCycleClasses();

  // Core-guided MaxSAT (maxres) proves optimality quickly on most e-graphs
  // but has no solution to offer when it runs out of time; then weighted
  // MaxSAT by successive bounded SAT calls (wmax), which finds good
  // solutions early, gets the rest of the time.
  (void)upperBound;
  std::vector<int32_t> choice;
  z3::check_result result =
      ilp.solve("maxres", std::max(0.2, 0.5 * timeLimit), choice);
  e.status = "optimal";
  if (result == z3::unknown) {
    e.status = "timeout";
    result =
        ilp.solve("wmax", std::max(0.2, timeLimit - clock.seconds()), choice);
  }
  e.variables = ilp.numVariables();
  if (result == z3::unsat) {
    e.status = "failed";
    e.seconds = clock.seconds();
    return e;
  }
  finishExtraction(e, eg, roots, std::move(choice), clock);
  if (!e.ok && result == z3::sat)
    e.status = "failed";
  return e;
}
