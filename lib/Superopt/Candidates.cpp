//===- Candidates.cpp - Candidate rules and their pruning -----------------===//
//
// Part of Loom. See Candidates.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Candidates.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <numeric>

using namespace loom;
using namespace loom::superopt;
using interp::ModPDomain;
using llvm::ArrayRef;
using llvm::SmallVector;

double superopt::graphCost(Universe &u, const Graph &g) {
  auto types = u.typeGraph(g);
  if (!types) {
    llvm::consumeError(types.takeError());
    return 0;
  }
  double cost = 0;
  unsigned numInputs = u.numInputs();
  for (unsigned n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    const OpSpec &spec = specOf(node.kind);
    if (spec.paramPrep)
      continue;
    SmallVector<ShapeId, 5> in, out;
    for (unsigned v : node.operands)
      in.push_back(types->shapes[v]);
    unsigned first = firstResultOf(g, n, numInputs);
    for (unsigned r = 0; r < spec.numResults; ++r)
      out.push_back(types->shapes[first + r]);
    cost += spec.cost(node.attrs, in, out, u.shapes());
  }
  return cost;
}

std::vector<uint64_t> superopt::valueFingerprints(const Universe &u,
                                                  const Graph &g) {
  Graph all = g;
  all.outputs.clear();
  unsigned total = firstResultOf(g, g.nodes.size(), u.numInputs());
  for (unsigned v = 0; v < total; ++v)
    all.outputs.push_back(v);
  std::vector<interp::Tensor<ModPDomain>> inputs;
  for (unsigned i = 0; i < u.numInputs(); ++i)
    inputs.push_back(u.fingerprintInput(i));
  std::vector<uint64_t> r;
  for (const auto &t : u.evaluate<ModPDomain>(all, inputs))
    r.push_back(fingerprintOf(t.shape, t.data));
  return r;
}

namespace {

/// Structural hashes of the outputs of \p g with input i hashed as
/// \p leaf[i]; commutative operands are sorted.
SmallVector<uint64_t, 4> outputHashes(const Universe &u, const Graph &g,
                                      ArrayRef<uint64_t> leaf) {
  SmallVector<uint64_t, 16> h(leaf.begin(), leaf.end());
  for (const Node &n : g.nodes) {
    const OpSpec &spec = specOf(n.kind);
    SmallVector<uint64_t, 5> ops;
    for (unsigned v : n.operands)
      ops.push_back(h[v]);
    if (spec.commutative)
      llvm::sort(ops);
    uint64_t node = hashOp(n.kind, n.attrs, u.shapes());
    for (uint64_t o : ops)
      node = hashMix(node, o);
    for (unsigned r = 0; r < spec.numResults; ++r)
      h.push_back(hashMix(node, r));
  }
  SmallVector<uint64_t, 4> out;
  for (unsigned o : g.outputs)
    out.push_back(h[o]);
  return out;
}

/// Inputs used by \p g (as operands or outputs).
llvm::SmallBitVector usedInputs(const Universe &u, const Graph &g) {
  llvm::SmallBitVector used(u.numInputs());
  for (const Node &n : g.nodes)
    for (unsigned v : n.operands)
      if (v < u.numInputs())
        used.set(v);
  for (unsigned o : g.outputs)
    if (o < u.numInputs())
      used.set(o);
  return used;
}

/// \p g with node \p n removed and its results replaced by \p fresh.
Graph replaceNode(const Universe &u, const Graph &g, unsigned n,
                  ArrayRef<unsigned> fresh) {
  unsigned numInputs = u.numInputs();
  unsigned first = firstResultOf(g, n, numInputs);
  unsigned count = specOf(g.nodes[n].kind).numResults;
  auto remap = [&](unsigned v) -> unsigned {
    if (v < first)
      return v;
    if (v < first + count)
      return fresh[v - first];
    return v - count;
  };
  Graph r;
  for (unsigned i = 0; i < g.nodes.size(); ++i) {
    if (i == n)
      continue;
    Node node = g.nodes[i];
    for (unsigned &v : node.operands)
      v = remap(v);
    r.nodes.push_back(node);
  }
  for (unsigned o : g.outputs)
    r.outputs.push_back(remap(o));
  return r;
}

/// Sorted output fingerprints.
SmallVector<uint64_t, 4> sortedOutputs(const Universe &u, const Graph &g) {
  SmallVector<uint64_t, 4> f = fingerprintGraph(u, g);
  llvm::sort(f);
  return f;
}

/// Stage 1: a leaf node common to both sides whose generalisation to a
/// fresh input keeps the fingerprints equal.
bool impliedByCommonSubgraph(Universe &u, const Graph &a, const Graph &b,
                             const GraphTypes &ta) {
  unsigned numInputs = u.numInputs();
  llvm::SmallBitVector used = usedInputs(u, a);
  used |= usedInputs(u, b);
  for (unsigned i = 0; i < a.nodes.size(); ++i) {
    const Node &na = a.nodes[i];
    if (llvm::any_of(na.operands, [&](unsigned v) { return v >= numInputs; }))
      continue;
    for (unsigned j = 0; j < b.nodes.size(); ++j) {
      const Node &nb = b.nodes[j];
      if (nb.kind != na.kind || nb.attrs != na.attrs ||
          nb.operands != na.operands)
        continue;
      // Fresh inputs with the shapes of the common node's results.
      unsigned first = firstResultOf(a, i, numInputs);
      SmallVector<unsigned, 2> fresh;
      llvm::SmallBitVector taken = used;
      for (unsigned r = 0; r < specOf(na.kind).numResults; ++r) {
        ShapeId s = ta.shapes[first + r];
        for (unsigned in = 0; in < numInputs; ++in)
          if (!taken[in] && u.inputs()[in].shape == s) {
            fresh.push_back(in);
            taken.set(in);
            break;
          }
      }
      if (fresh.size() != specOf(na.kind).numResults)
        continue;
      Graph ga = replaceNode(u, a, i, fresh);
      Graph gb = replaceNode(u, b, j, fresh);
      if (!u.typeGraph(ga) || !u.typeGraph(gb))
        continue;
      if (sortedOutputs(u, ga) == sortedOutputs(u, gb))
        return true;
    }
  }
  return false;
}

/// Stage 2: single outputs computed by the same operator from operands
/// with equal fingerprints.
bool impliedByCongruence(const Universe &u, const Graph &a, const Graph &b) {
  if (a.outputs.size() != 1 || b.outputs.size() != 1)
    return false;
  unsigned numInputs = u.numInputs();
  auto producer = [&](const Graph &g, unsigned v) -> std::pair<int, unsigned> {
    if (v < numInputs)
      return {-1, 0};
    unsigned id = numInputs;
    for (unsigned n = 0; n < g.nodes.size(); ++n) {
      unsigned k = specOf(g.nodes[n].kind).numResults;
      if (v < id + k)
        return {static_cast<int>(n), v - id};
      id += k;
    }
    return {-1, 0};
  };
  auto [pa, ra] = producer(a, a.outputs[0]);
  auto [pb, rb] = producer(b, b.outputs[0]);
  if (pa < 0 || pb < 0)
    return false;
  const Node &na = a.nodes[pa], &nb = b.nodes[pb];
  if (na.kind != nb.kind || na.attrs != nb.attrs || ra != rb ||
      na.operands.size() != nb.operands.size())
    return false;
  std::vector<uint64_t> fa = valueFingerprints(u, a), fb = valueFingerprints(u, b);
  SmallVector<uint64_t, 5> oa, ob;
  for (unsigned v : na.operands)
    oa.push_back(fa[v]);
  for (unsigned v : nb.operands)
    ob.push_back(fb[v]);
  if (specOf(na.kind).commutative) {
    llvm::sort(oa);
    llvm::sort(ob);
  }
  return oa == ob;
}

} // namespace

uint64_t superopt::canonicalPairKey(const Universe &u, const Graph &a,
                                    const Graph &b) {
  unsigned numInputs = u.numInputs();
  llvm::SmallBitVector used = usedInputs(u, a);
  used |= usedInputs(u, b);
  // Used inputs per group; permutations within each group.
  std::map<unsigned, SmallVector<unsigned, 4>> groups;
  for (unsigned i = 0; i < numInputs; ++i)
    if (used[i])
      groups[u.inputs()[i].group].push_back(i);
  std::vector<SmallVector<unsigned, 4>> perms;
  for (auto &[g, members] : groups)
    perms.push_back(members);
  for (auto &p : perms)
    llvm::sort(p);
  uint64_t best = ~uint64_t(0);
  SmallVector<uint64_t, 32> leaf(numInputs);
  std::function<void(unsigned)> rec = [&](unsigned gi) {
    if (gi == perms.size()) {
      for (unsigned i = 0; i < numInputs; ++i)
        if (!used[i])
          leaf[i] = hashMix(0x1234, i);
      SmallVector<uint64_t, 4> ha = outputHashes(u, a, leaf);
      SmallVector<uint64_t, 4> hb = outputHashes(u, b, leaf);
      SmallVector<std::pair<uint64_t, uint64_t>, 4> ab, ba;
      for (unsigned k = 0; k < ha.size(); ++k) {
        ab.push_back({ha[k], hb[k]});
        ba.push_back({hb[k], ha[k]});
      }
      llvm::sort(ab);
      llvm::sort(ba);
      uint64_t kab = 0x77, kba = 0x77;
      for (auto [x, y] : ab)
        kab = hashMix(hashMix(kab, x), y);
      for (auto [x, y] : ba)
        kba = hashMix(hashMix(kba, x), y);
      best = std::min({best, kab, kba});
      return;
    }
    SmallVector<unsigned, 4> &p = perms[gi];
    SmallVector<unsigned, 4> order = p;
    llvm::sort(order);
    do {
      unsigned group = u.inputs()[p[0]].group;
      for (unsigned k = 0; k < order.size(); ++k)
        leaf[order[k]] = hashMix(hashMix(0xabc, group), k + 1);
      rec(gi + 1);
    } while (std::next_permutation(order.begin(), order.end()));
  };
  rec(0);
  return best;
}

std::vector<Candidate> superopt::makeCandidates(Universe &u,
                                                const Enumeration &e,
                                                PruneStats &stats) {
  auto start = std::chrono::steady_clock::now();
  std::vector<Candidate> out;
  llvm::DenseSet<uint64_t> seen;
  for (const std::vector<uint32_t> &cls : e.classes) {
    struct Member {
      Graph g;
      double cost;
      std::string text;
    };
    std::vector<Member> members;
    for (uint32_t m : cls) {
      Member mem{e.unpack(u, m), 0, ""};
      // Order the outputs by fingerprint, so that the outputs of two members
      // correspond position by position.
      SmallVector<uint64_t, 4> f = fingerprintGraph(u, mem.g);
      SmallVector<unsigned, 4> order(mem.g.outputs.size());
      std::iota(order.begin(), order.end(), 0);
      llvm::sort(order, [&](unsigned x, unsigned y) { return f[x] < f[y]; });
      SmallVector<unsigned, 4> outs;
      for (unsigned k : order)
        outs.push_back(mem.g.outputs[k]);
      mem.g.outputs = outs;
      mem.cost = graphCost(u, mem.g);
      mem.text = u.describe(mem.g);
      members.push_back(std::move(mem));
    }
    unsigned rep = 0;
    for (unsigned i = 1; i < members.size(); ++i) {
      const Member &a = members[i], &b = members[rep];
      if (std::make_tuple(a.cost, a.g.numOps(), a.text) <
          std::make_tuple(b.cost, b.g.numOps(), b.text))
        rep = i;
    }
    const Member &target = members[rep];
    auto targetTypes = u.typeGraph(target.g);
    if (!targetTypes) {
      llvm::consumeError(targetTypes.takeError());
      continue;
    }
    for (unsigned i = 0; i < members.size(); ++i) {
      if (i == rep)
        continue;
      ++stats.pairs;
      const Member &source = members[i];
      auto sourceTypes = u.typeGraph(source.g);
      if (!sourceTypes) {
        llvm::consumeError(sourceTypes.takeError());
        continue;
      }
      if (impliedByCommonSubgraph(u, source.g, target.g, *sourceTypes)) {
        ++stats.commonSubgraph;
        continue;
      }
      if (impliedByCongruence(u, source.g, target.g)) {
        ++stats.congruence;
        continue;
      }
      if (!seen.insert(canonicalPairKey(u, source.g, target.g)).second) {
        ++stats.renaming;
        continue;
      }
      out.push_back({source.g, target.g, source.cost, target.cost});
    }
  }
  stats.kept = out.size();
  stats.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return out;
}
