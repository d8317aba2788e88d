//===- Rewrite.cpp - Deriving candidate rules by rewriting ----------------===//
//
// Part of Loom. See Rewrite.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Rewrite.h"
#include "loom/Superopt/Prover.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

using namespace loom;
using namespace loom::superopt;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;

namespace {

constexpr uint32_t kNone = ~0u;
/// Symbols of pattern variables and of the e-graph's input leaves (input i
/// is kInputSym - i); operator symbols are below both.
constexpr uint32_t kVarSym = ~0u;
constexpr uint32_t kInputSym = ~0u - 1;

/// The prover's function symbol: an operator at attributes and operand
/// shapes, and which of its results.
struct SymKey {
  OpKind kind;
  OpAttrs attrs;
  SmallVector<ShapeId, 5> operands;
  unsigned result;

  bool operator==(const SymKey &o) const {
    return kind == o.kind && attrs == o.attrs && operands == o.operands &&
           result == o.result;
  }
};

/// A pattern node: an operator symbol over earlier pattern nodes, or a
/// variable of a shape. A pattern lists children before parents; its root
/// is last.
struct PNode {
  uint32_t sym;
  int32_t var = -1;
  ShapeId shape;
  SmallVector<uint8_t, 3> args;
};

struct Pattern {
  SmallVector<PNode, 8> nodes;
};

/// One direction of one output equation of a rule.
struct Rewrite {
  Pattern lhs, rhs;
  /// The lhs pattern node of each variable.
  SmallVector<uint8_t, 6> varNode;
};

} // namespace

struct RewriteBase::Impl {
  explicit Impl(Universe &u) : u(u) {}

  Universe &u;
  std::vector<SymKey> syms;
  llvm::DenseMap<uint64_t, SmallVector<uint32_t, 1>> symIndex;
  std::vector<Rewrite> rewrites;
  /// Rewrites by the symbol of their lhs root.
  llvm::DenseMap<uint32_t, std::vector<uint32_t>> byRoot;

  static uint64_t hashKey(const SymKey &k, const ShapeTable &shapes) {
    return symbolKey(k.kind, k.attrs, k.operands, k.result, shapes);
  }

  uint32_t lookup(const SymKey &k) const {
    auto it = symIndex.find(hashKey(k, u.shapes()));
    if (it != symIndex.end())
      for (uint32_t id : it->second)
        if (syms[id] == k)
          return id;
    return kNone;
  }

  uint32_t intern(const SymKey &k) {
    uint32_t id = lookup(k);
    if (id != kNone)
      return id;
    id = syms.size();
    syms.push_back(k);
    symIndex[hashKey(k, u.shapes())].push_back(id);
    return id;
  }

  /// The symbol of result \p r of node \p n of a graph typed \p types.
  static SymKey keyOf(const Node &n, unsigned r, const GraphTypes &types) {
    SymKey k{n.kind, n.attrs, {}, r};
    for (unsigned v : n.operands)
      k.operands.push_back(types.shapes[v]);
    return k;
  }

  /// The pattern of value \p value of \p g; input i is variable varOf[i].
  bool pattern(const Graph &g, const GraphTypes &types, unsigned value,
               ArrayRef<int> varOf, Pattern &p) {
    unsigned numInputs = u.numInputs();
    // The node computing each result value.
    SmallVector<unsigned, 8> nodeOf;
    for (unsigned n = 0; n < g.nodes.size(); ++n)
      nodeOf.append(specOf(g.nodes[n].kind).numResults, n);
    llvm::DenseMap<unsigned, unsigned> done;
    // Post-order over the values the output depends on.
    std::function<int(unsigned)> visit = [&](unsigned v) -> int {
      auto it = done.find(v);
      if (it != done.end())
        return it->second;
      PNode pn;
      pn.shape = types.shapes[v];
      if (v < numInputs) {
        pn.sym = kVarSym;
        pn.var = varOf[v];
      } else {
        unsigned n = nodeOf[v - numInputs];
        const Node &node = g.nodes[n];
        pn.sym = intern(keyOf(node, v - firstResultOf(g, n, numInputs), types));
        for (unsigned a : node.operands) {
          int c = visit(a);
          if (c < 0)
            return -1;
          pn.args.push_back(c);
        }
      }
      if (p.nodes.size() >= 255)
        return -1;
      p.nodes.push_back(std::move(pn));
      return done[v] = p.nodes.size() - 1;
    };
    return visit(value) >= 0;
  }

  void addRule(const Graph &source, const Graph &target) {
    auto st = u.typeGraph(source);
    auto tt = u.typeGraph(target);
    if (!st || !tt) {
      llvm::consumeError(st.takeError());
      llvm::consumeError(tt.takeError());
      return;
    }
    // Variables: the inputs either side uses, in input order (as
    // Prover::ruleEquations numbers them).
    std::vector<int> varOf(u.numInputs(), -1);
    int numVars = 0;
    llvm::SmallBitVector used = inputsUsedBy(source, target, u.numInputs());
    for (unsigned i : used.set_bits())
      varOf[i] = numVars++;
    for (unsigned o = 0; o < source.outputs.size(); ++o) {
      Pattern sides[2];
      if (!pattern(source, *st, source.outputs[o], varOf, sides[0]) ||
          !pattern(target, *tt, target.outputs[o], varOf, sides[1]))
        continue;
      for (int d = 0; d < 2; ++d) {
        Rewrite r;
        r.lhs = sides[d];
        r.rhs = sides[1 - d];
        if (r.lhs.nodes.back().sym == kVarSym)
          continue;
        r.varNode.assign(numVars, 255);
        for (unsigned i = 0; i < r.lhs.nodes.size(); ++i)
          if (r.lhs.nodes[i].var >= 0)
            r.varNode[r.lhs.nodes[i].var] = i;
        bool bound = llvm::all_of(r.rhs.nodes, [&](const PNode &pn) {
          return pn.var < 0 || r.varNode[pn.var] != 255;
        });
        if (!bound)
          continue;
        byRoot[r.lhs.nodes.back().sym].push_back(rewrites.size());
        rewrites.push_back(std::move(r));
      }
    }
  }
};

namespace {

/// A small e-graph over symbol ids (hash-consed, with union-find classes),
/// rebuilt in full after each round of merges: candidates are tiny.
class EGraph {
public:
  struct ENode {
    uint32_t sym;
    SmallVector<uint32_t, 3> kids;
    uint32_t cls;
  };

  uint32_t find(uint32_t c) const {
    while (parent[c] != c)
      c = parent[c];
    return c;
  }

  uint32_t add(uint32_t sym, ArrayRef<uint32_t> kids, ShapeId shape) {
    SmallVector<uint32_t, 3> canon;
    for (uint32_t k : kids)
      canon.push_back(find(k));
    uint64_t h = hashOf(sym, canon);
    auto &bucket = memo[h];
    for (uint32_t n : bucket)
      if (nodes[n].sym == sym && nodes[n].kids == canon)
        return find(nodes[n].cls);
    uint32_t c = parent.size();
    parent.push_back(c);
    shapes.push_back(shape);
    bucket.push_back(nodes.size());
    nodes.push_back({sym, std::move(canon), c});
    return c;
  }

  /// Merges two classes; false if they were one already.
  bool merge(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return false;
    if (a > b)
      std::swap(a, b);
    parent[b] = a;
    return true;
  }

  /// Restores congruence (equal symbols over equal classes are one class)
  /// and the hash-consing after merges; fills the class member lists.
  void rebuild() {
    for (bool changed = true; changed;) {
      changed = false;
      memo.clear();
      std::vector<ENode> live;
      for (ENode &n : nodes) {
        for (uint32_t &k : n.kids)
          k = find(k);
        n.cls = find(n.cls);
        auto &bucket = memo[hashOf(n.sym, n.kids)];
        bool dup = false;
        for (uint32_t m : bucket)
          if (live[m].sym == n.sym && live[m].kids == n.kids) {
            changed |= merge(live[m].cls, n.cls);
            dup = true;
            break;
          }
        if (dup)
          continue;
        bucket.push_back(live.size());
        live.push_back(std::move(n));
      }
      nodes = std::move(live);
    }
    members.assign(parent.size(), {});
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      nodes[n].cls = find(nodes[n].cls);
      members[nodes[n].cls].push_back(n);
    }
  }

  std::vector<ENode> nodes;
  std::vector<uint32_t> parent;
  std::vector<ShapeId> shapes;
  std::vector<SmallVector<uint32_t, 2>> members;

private:
  static uint64_t hashOf(uint32_t sym, ArrayRef<uint32_t> kids) {
    uint64_t h = hashMix(0x5eed, sym);
    for (uint32_t k : kids)
      h = hashMix(h, k);
    return h;
  }

  llvm::DenseMap<uint64_t, SmallVector<uint32_t, 1>> memo;
};

/// The variable classes of one match of a rewrite's lhs.
struct Match {
  uint32_t rewrite;
  uint32_t root;
  SmallVector<uint32_t, 6> vars;
};

/// Enumerates the matches of pattern node assignments: `pending` holds
/// (pattern node, class) pairs still to be satisfied from index k on.
template <class Emit>
void matchFrom(const EGraph &eg, const Pattern &p,
               SmallVectorImpl<std::pair<uint8_t, uint32_t>> &pending, size_t k,
               SmallVectorImpl<uint32_t> &assign, Emit &emit) {
  if (k == pending.size()) {
    emit(assign);
    return;
  }
  auto [pi, c] = pending[k];
  if (assign[pi] != kNone) {
    if (assign[pi] == c)
      matchFrom(eg, p, pending, k + 1, assign, emit);
    return;
  }
  const PNode &pn = p.nodes[pi];
  if (pn.var >= 0) {
    if (eg.shapes[c] != pn.shape)
      return;
    assign[pi] = c;
    matchFrom(eg, p, pending, k + 1, assign, emit);
    assign[pi] = kNone;
    return;
  }
  for (uint32_t n : eg.members[c]) {
    const EGraph::ENode &node = eg.nodes[n];
    if (node.sym != pn.sym)
      continue;
    assign[pi] = c;
    size_t old = pending.size();
    for (unsigned i = 0; i < pn.args.size(); ++i)
      pending.push_back({pn.args[i], node.kids[i]});
    matchFrom(eg, p, pending, k + 1, assign, emit);
    pending.resize(old);
    assign[pi] = kNone;
  }
}

} // namespace

RewriteBase::RewriteBase(Universe &u) : impl(std::make_unique<Impl>(u)) {}
RewriteBase::~RewriteBase() = default;

void RewriteBase::addRule(const Graph &source, const Graph &target) {
  impl->addRule(source, target);
}

size_t RewriteBase::size() const { return impl->rewrites.size(); }

bool RewriteBase::derives(const Graph &source, const Graph &target,
                          const DeriveOptions &options) const {
  const Impl &b = *impl;
  Universe &u = b.u;
  auto st = u.typeGraph(source);
  auto tt = u.typeGraph(target);
  if (!st || !tt) {
    llvm::consumeError(st.takeError());
    llvm::consumeError(tt.takeError());
    return false;
  }
  if (b.rewrites.empty() || source.outputs.size() != target.outputs.size())
    return false;

  EGraph eg;
  // Symbols the rewrites do not know get ids of their own above the base's.
  std::vector<SymKey> local;
  auto symOf = [&](const SymKey &k) {
    uint32_t id = b.lookup(k);
    if (id != kNone)
      return id;
    for (uint32_t i = 0; i < local.size(); ++i)
      if (local[i] == k)
        return static_cast<uint32_t>(b.syms.size() + i);
    local.push_back(k);
    return static_cast<uint32_t>(b.syms.size() + local.size() - 1);
  };
  std::vector<uint32_t> inputClass(u.numInputs(), kNone);
  auto insert = [&](const Graph &g, const GraphTypes &types) {
    SmallVector<uint32_t, 16> cls;
    for (unsigned i = 0; i < u.numInputs(); ++i)
      cls.push_back(kNone);
    auto classOf = [&](unsigned v) {
      if (v < u.numInputs() && cls[v] == kNone) {
        if (inputClass[v] == kNone)
          inputClass[v] = eg.add(kInputSym - v, {}, types.shapes[v]);
        cls[v] = inputClass[v];
      }
      return cls[v];
    };
    for (const Node &n : g.nodes) {
      SmallVector<uint32_t, 5> kids;
      for (unsigned v : n.operands)
        kids.push_back(classOf(v));
      for (unsigned r = 0; r < specOf(n.kind).numResults; ++r)
        cls.push_back(eg.add(symOf(Impl::keyOf(n, r, types)), kids,
                             types.shapes[cls.size()]));
    }
    SmallVector<uint32_t, 4> outs;
    for (unsigned o : g.outputs)
      outs.push_back(classOf(o));
    return outs;
  };
  SmallVector<uint32_t, 4> srcOut = insert(source, *st);
  SmallVector<uint32_t, 4> tgtOut = insert(target, *tt);
  auto proved = [&] {
    for (unsigned o = 0; o < srcOut.size(); ++o)
      if (eg.find(srcOut[o]) != eg.find(tgtOut[o]))
        return false;
    return true;
  };
  eg.rebuild();
  if (proved())
    return true;

  std::vector<Match> matches;
  SmallVector<std::pair<uint8_t, uint32_t>, 16> pending;
  SmallVector<uint32_t, 8> assign;
  for (unsigned iter = 0; iter < options.maxIterations; ++iter) {
    // Match every rewrite at every e-node of its root symbol.
    matches.clear();
    for (uint32_t n = 0; n < eg.nodes.size(); ++n) {
      auto it = b.byRoot.find(eg.nodes[n].sym);
      if (it == b.byRoot.end())
        continue;
      const EGraph::ENode &node = eg.nodes[n];
      for (uint32_t ri : it->second) {
        const Rewrite &r = b.rewrites[ri];
        const PNode &root = r.lhs.nodes.back();
        assign.assign(r.lhs.nodes.size(), kNone);
        assign.back() = node.cls;
        pending.clear();
        for (unsigned i = 0; i < root.args.size(); ++i)
          pending.push_back({root.args[i], node.kids[i]});
        auto emit = [&](ArrayRef<uint32_t> a) {
          Match m{ri, node.cls, {}};
          for (uint8_t vn : r.varNode)
            m.vars.push_back(vn == 255 ? kNone : a[vn]);
          matches.push_back(std::move(m));
        };
        matchFrom(eg, r.lhs, pending, 0, assign, emit);
      }
    }
    // Apply them: instantiate the rhs, merge it with the matched class.
    bool changed = false;
    size_t before = eg.nodes.size();
    for (const Match &m : matches) {
      if (eg.nodes.size() >= options.maxNodes)
        break;
      const Pattern &rhs = b.rewrites[m.rewrite].rhs;
      SmallVector<uint32_t, 8> rc;
      for (const PNode &pn : rhs.nodes) {
        if (pn.var >= 0) {
          rc.push_back(m.vars[pn.var]);
          continue;
        }
        SmallVector<uint32_t, 3> kids;
        for (uint8_t a : pn.args)
          kids.push_back(rc[a]);
        rc.push_back(eg.add(pn.sym, kids, pn.shape));
      }
      changed |= eg.merge(m.root, rc.back());
    }
    changed |= eg.nodes.size() != before;
    eg.rebuild();
    if (proved())
      return true;
    if (!changed || eg.nodes.size() >= options.maxNodes)
      return false;
  }
  return false;
}
