//===- Candidates.cpp - Candidate rules and their pruning -----------------===//
//
// Part of Loom. See Candidates.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Candidates.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Support/Threads.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

using namespace loom;
using namespace loom::superopt;
using interp::ModPDomain;
using llvm::ArrayRef;
using llvm::SmallVector;
using FpTensor = interp::Tensor<ModPDomain>;

namespace {

/// Evaluates graphs on the universe's fingerprint inputs (copied once).
class Fingerprinter {
public:
  explicit Fingerprinter(const Universe &u) : u(u) {
    for (unsigned i = 0; i < u.numInputs(); ++i) {
      inputs.push_back(u.fingerprintInput(i));
      inputFingerprints.push_back(
          fingerprintOf(inputs.back().shape, inputs.back().data));
    }
  }

  /// Fingerprints of the outputs of \p g, sorted.
  SmallVector<uint64_t, 4> sortedOutputs(const Graph &g) const {
    SmallVector<uint64_t, 4> r;
    for (const FpTensor &t : u.evaluate<ModPDomain>(g, inputs))
      r.push_back(fingerprintOf(t.shape, t.data));
    llvm::sort(r);
    return r;
  }

  /// Fingerprints of the operands of node \p n of \p g (only the nodes
  /// before it are evaluated).
  SmallVector<uint64_t, 5> operands(const Graph &g, unsigned n) const {
    Graph prefix;
    prefix.nodes.append(g.nodes.begin(), g.nodes.begin() + n);
    for (unsigned v : g.nodes[n].operands)
      if (v >= u.numInputs())
        prefix.outputs.push_back(v);
    std::vector<FpTensor> results = u.evaluate<ModPDomain>(prefix, inputs);
    SmallVector<uint64_t, 5> r;
    const FpTensor *next = results.data();
    for (unsigned v : g.nodes[n].operands) {
      if (v < u.numInputs()) {
        r.push_back(inputFingerprints[v]);
      } else {
        r.push_back(fingerprintOf(next->shape, next->data));
        ++next;
      }
    }
    return r;
  }

private:
  const Universe &u;
  std::vector<FpTensor> inputs;
  std::vector<uint64_t> inputFingerprints;
};

/// The shapes of a graph's values: what Universe::typeGraph computes, less
/// the split information no stage here needs, and with a memo per thread in
/// front of Universe::infer (which serialises the threads); and the cost of
/// a graph, each node's (costOf) memoised beside its shapes.
class ShapeTyper {
public:
  using Shapes = SmallVector<ShapeId, 48>;

  explicit ShapeTyper(Universe &u) : u(u) {}

  /// The shapes of \p g's values (inputs first), or nullopt where
  /// Universe::typeGraph fails.
  std::optional<Shapes> shapesOf(const Graph &g) {
    Shapes shapes;
    for (const Input &in : u.inputs())
      shapes.push_back(in.shape);
    for (const Node &node : g.nodes) {
      SmallVector<ShapeId, 5> in;
      for (unsigned v : node.operands) {
        if (v >= shapes.size())
          return std::nullopt;
        in.push_back(shapes[v]);
      }
      const std::optional<SmallVector<ShapeId, 2>> &out =
          infer(node.kind, node.attrs, in);
      if (!out)
        return std::nullopt;
      shapes.append(out->begin(), out->end());
    }
    return shapes;
  }

  /// The cost of \p g, whose values have \p shapes (shapesOf).
  OpCost costOf(const Graph &g, ArrayRef<ShapeId> shapes) {
    OpCost c;
    SmallVector<ShapeId, 5> in;
    for (const Node &node : g.nodes) {
      in.clear();
      for (unsigned v : node.operands)
        in.push_back(shapes[v]);
      c += entry(node.kind, node.attrs, in).costOf(u, node.attrs);
    }
    return c;
  }

private:
  /// What is known of one operator applied to operands of some shapes.
  struct Entry {
    OpKind kind;
    uint64_t op;
    SmallVector<ShapeId, 5> in;
    std::optional<SmallVector<ShapeId, 2>> out;
    std::optional<OpCost> cost;

    const OpCost &costOf(Universe &u, const OpAttrs &attrs) {
      if (!cost)
        cost = superopt::costOf(u.mlir(), u.shapes(), kind, attrs, in, *out);
      return *cost;
    }
  };

  const std::optional<SmallVector<ShapeId, 2>> &
  infer(OpKind kind, const OpAttrs &attrs, ArrayRef<ShapeId> in) {
    return entry(kind, attrs, in).out;
  }

  Entry &entry(OpKind kind, const OpAttrs &attrs, ArrayRef<ShapeId> in) {
    uint64_t op = hashOp(kind, attrs, u.shapes());
    uint64_t key = hashMix(op, kind.index());
    for (ShapeId s : in)
      key = hashMix(key, s);
    auto [it, inserted] = memo.try_emplace(key);
    Entry &e = it->second;
    if (inserted)
      e = {kind, op, SmallVector<ShapeId, 5>(in), u.infer(kind, attrs, in),
           std::nullopt};
    else if (e.kind != kind || e.op != op || ArrayRef<ShapeId>(e.in) != in)
      // A hash collision: answered without the memo.
      return scratch = {kind, op, SmallVector<ShapeId, 5>(in),
                        u.infer(kind, attrs, in), std::nullopt};
    return e;
  }

  Universe &u;
  llvm::DenseMap<uint64_t, Entry> memo;
  Entry scratch;
};

} // namespace

OpCost superopt::graphCost(Universe &u, const Graph &g) {
  ShapeTyper typer(u);
  std::optional<ShapeTyper::Shapes> shapes = typer.shapesOf(g);
  return shapes ? typer.costOf(g, *shapes) : OpCost();
}

namespace {

/// hashOp of each node of \p g.
SmallVector<uint64_t, 8> nodeHashes(const Universe &u, const Graph &g) {
  SmallVector<uint64_t, 8> r;
  for (const Node &n : g.nodes)
    r.push_back(hashOp(n.kind, n.attrs, u.shapes()));
  return r;
}

/// Structural hashes of the outputs of \p g (whose nodes hash as
/// \p nodeHash) with input i hashed as \p leaf[i]; commutative operands are
/// sorted.
SmallVector<uint64_t, 4> outputHashes(const Graph &g,
                                      ArrayRef<uint64_t> nodeHash,
                                      ArrayRef<uint64_t> leaf) {
  SmallVector<uint64_t, 48> h(leaf.begin(), leaf.end());
  for (auto [n, hash] : llvm::zip_equal(g.nodes, nodeHash)) {
    const OpSpec &spec = specOf(n.kind);
    SmallVector<uint64_t, 5> ops;
    for (unsigned v : n.operands)
      ops.push_back(h[v]);
    if (spec.commutative)
      llvm::sort(ops);
    uint64_t node = hash;
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

/// A class member and what the stages learn about it.
struct Member {
  Graph g;
  /// The shapes of its values; absent when the graph does not type-check.
  std::optional<ShapeTyper::Shapes> shapes;
  OpCost cost;
  /// Fingerprints of the output node's operands (congruence), computed
  /// when first needed.
  std::optional<SmallVector<uint64_t, 5>> outputOperands;
  /// Sorted output fingerprints with a node replaced by fresh inputs
  /// (common subgraph; the representative meets the same ones again).
  std::vector<std::pair<SmallVector<unsigned, 3>, SmallVector<uint64_t, 4>>>
      replaced;
  /// describe(g), computed when first needed (ties of cost and size).
  std::optional<std::string> text;

  ArrayRef<uint64_t> outputOperandFingerprints(const Fingerprinter &fp,
                                               unsigned node) {
    if (!outputOperands)
      outputOperands = fp.operands(g, node);
    return *outputOperands;
  }
  ArrayRef<uint64_t> replacedOutputs(const Universe &u, const Fingerprinter &fp,
                                     unsigned node, ArrayRef<unsigned> fresh) {
    SmallVector<unsigned, 3> key{node};
    key.append(fresh.begin(), fresh.end());
    for (auto &[k, outputs] : replaced)
      if (k == key)
        return outputs;
    replaced.emplace_back(key,
                          fp.sortedOutputs(replaceNode(u, g, node, fresh)));
    return replaced.back().second;
  }
  const std::string &describe(const Universe &u) {
    if (!text)
      text = u.describe(g);
    return *text;
  }
};

/// Whether \p a is cheaper than \p b, and so the better representative of
/// a class: fewer FLOPs, then fewer operators (TASO's and this generator's
/// size order; a launch each, in the search's roofline), then fewer bytes
/// moved, then the description (a total order, independent of threads).
/// Operators ahead of bytes keeps the rules the search uses as they were
/// under the former multiply-add count (docs/Superopt/RuleGen.md).
bool cheaper(const Universe &u, Member &a, Member &b) {
  if (a.cost.flops != b.cost.flops)
    return a.cost.flops < b.cost.flops;
  if (a.g.numOps() != b.g.numOps())
    return a.g.numOps() < b.g.numOps();
  if (a.cost.bytes != b.cost.bytes)
    return a.cost.bytes < b.cost.bytes;
  return a.describe(u) < b.describe(u);
}

/// Stage 1: a leaf node common to both sides whose generalisation to a
/// fresh input keeps the fingerprints equal.
bool impliedByCommonSubgraph(const Universe &u, const Fingerprinter &fp,
                             const Member &source, Member &target) {
  const Graph &a = source.g, &b = target.g;
  ArrayRef<ShapeId> sourceShapes = *source.shapes;
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
        ShapeId s = sourceShapes[first + r];
        for (unsigned in = 0; in < numInputs; ++in)
          if (!taken[in] && u.inputs()[in].shape == s) {
            fresh.push_back(in);
            taken.set(in);
            break;
          }
      }
      if (fresh.size() != specOf(na.kind).numResults)
        continue;
      // Both type-check: a and b do (b's node j has a's node i's operands,
      // so its results have the fresh inputs' shapes too), and shapes are
      // all that typing looks at.
      if (ArrayRef<uint64_t>(fp.sortedOutputs(replaceNode(u, a, i, fresh))) ==
          target.replacedOutputs(u, fp, j, fresh))
        return true;
    }
  }
  return false;
}

/// Stage 2: single outputs computed by the same operator from operands
/// with equal fingerprints.
bool impliedByCongruence(const Universe &u, const Fingerprinter &fp, Member &a,
                         Member &b) {
  if (a.g.outputs.size() != 1 || b.g.outputs.size() != 1)
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
  auto [pa, ra] = producer(a.g, a.g.outputs[0]);
  auto [pb, rb] = producer(b.g, b.g.outputs[0]);
  if (pa < 0 || pb < 0)
    return false;
  const Node &na = a.g.nodes[pa], &nb = b.g.nodes[pb];
  if (na.kind != nb.kind || na.attrs != nb.attrs || ra != rb ||
      na.operands.size() != nb.operands.size())
    return false;
  SmallVector<uint64_t, 5> oa(a.outputOperandFingerprints(fp, pa));
  SmallVector<uint64_t, 5> ob(b.outputOperandFingerprints(fp, pb));
  if (specOf(na.kind).commutative) {
    llvm::sort(oa);
    llvm::sort(ob);
  }
  return oa == ob;
}

/// Loads the trie nodes that unpacking \p classes reads, a level of the
/// parent chains at a time, so that their cache misses overlap (members
/// lie anywhere in the trie).
void warmTrie(const Enumeration &e, ArrayRef<std::vector<uint32_t>> classes) {
  std::vector<uint32_t> level, next;
  for (const std::vector<uint32_t> &cls : classes)
    for (uint32_t m : cls)
      if (!(m & Enumeration::kIdentity))
        level.push_back(m);
  while (!level.empty()) {
    for (uint32_t t : level)
      __builtin_prefetch(&e.trie[t]);
    next.clear();
    for (uint32_t t : level)
      if (e.trie[t].parent != ~0u)
        next.push_back(e.trie[t].parent);
    level.swap(next);
  }
}

/// What became of one pair of a class.
struct PairOutcome {
  enum Kind : uint8_t { Untyped, CommonSubgraph, Congruence, Kept } kind;
  /// Kept: canonicalPairKey of the pair, and the candidate.
  uint64_t key = 0;
  Candidate candidate;
};

/// The pairs of one class, in member order; none when its representative
/// does not type-check.
std::vector<PairOutcome> pairClass(Universe &u, const Enumeration &e,
                                   const Fingerprinter &fp, ShapeTyper &typer,
                                   ArrayRef<uint32_t> cls) {
  std::vector<Member> members(cls.size());
  for (unsigned i = 0; i < cls.size(); ++i) {
    Member &m = members[i];
    // Outputs come in fingerprint order, so those of two members
    // correspond position by position.
    m.g = e.unpack(u, cls[i]);
    m.shapes = typer.shapesOf(m.g);
    if (m.shapes)
      m.cost = typer.costOf(m.g, *m.shapes);
  }
  // The representative: least (FLOPs, ops, bytes, description);
  // descriptions are made for ties only.
  unsigned rep = 0;
  for (unsigned i = 1; i < members.size(); ++i)
    if (cheaper(u, members[i], members[rep]))
      rep = i;
  std::vector<PairOutcome> out;
  Member &target = members[rep];
  if (!target.shapes)
    return out;
  for (unsigned i = 0; i < members.size(); ++i) {
    if (i == rep)
      continue;
    Member &source = members[i];
    PairOutcome &o = out.emplace_back();
    if (!source.shapes) {
      o.kind = PairOutcome::Untyped;
    } else if (impliedByCommonSubgraph(u, fp, source, target)) {
      o.kind = PairOutcome::CommonSubgraph;
    } else if (impliedByCongruence(u, fp, source, target)) {
      o.kind = PairOutcome::Congruence;
    } else {
      o.kind = PairOutcome::Kept;
      o.key = canonicalPairKey(u, source.g, target.g);
      o.candidate = {source.g, target.g};
    }
  }
  return out;
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
  SmallVector<uint64_t, 8> nodesA = nodeHashes(u, a), nodesB = nodeHashes(u, b);
  auto rec = [&](auto &self, unsigned gi) -> void {
    if (gi == perms.size()) {
      for (unsigned i = 0; i < numInputs; ++i)
        if (!used[i])
          leaf[i] = hashMix(0x1234, i);
      SmallVector<uint64_t, 4> ha = outputHashes(a, nodesA, leaf);
      SmallVector<uint64_t, 4> hb = outputHashes(b, nodesB, leaf);
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
      self(self, gi + 1);
    } while (std::next_permutation(order.begin(), order.end()));
  };
  rec(rec, 0);
  return best;
}

std::vector<Candidate>
superopt::makeCandidates(Universe &u, const Enumeration &e, PruneStats &stats,
                         unsigned threads,
                         std::function<void(uint64_t)> progress) {
  auto start = std::chrono::steady_clock::now();
  // Costs are counted on emitted tg ops, on the workers' threads: the
  // dialect is loaded before they start.
  u.mlir()->getOrLoadDialect<tg::TGDialect>();
  // Threads pair fixed chunks of classes; the chunks are merged in class
  // order (the renaming stage keeps the first of equal pairs), as soon as
  // every earlier chunk is merged, so few chunks wait in memory.
  constexpr size_t kChunk = 64;
  size_t numChunks = (e.classes.size() + kChunk - 1) / kChunk;
  std::vector<std::vector<std::vector<PairOutcome>>> chunks(numChunks);
  std::vector<char> done(numChunks, 0);
  size_t nextMerge = 0;
  std::mutex mergeMutex;
  std::vector<Candidate> out;
  llvm::DenseSet<uint64_t> seen;
  auto merge = [&](std::vector<PairOutcome> &pairs) {
    for (PairOutcome &o : pairs) {
      ++stats.pairs;
      switch (o.kind) {
      case PairOutcome::Untyped:
        break;
      case PairOutcome::CommonSubgraph:
        ++stats.commonSubgraph;
        break;
      case PairOutcome::Congruence:
        ++stats.congruence;
        break;
      case PairOutcome::Kept:
        if (!seen.insert(o.key).second)
          ++stats.renaming;
        else
          out.push_back(std::move(o.candidate));
        break;
      }
    }
  };
  std::atomic<size_t> nextChunk{0};
  auto worker = [&] {
    Fingerprinter fp(u);
    ShapeTyper typer(u);
    for (;;) {
      size_t c = nextChunk++;
      if (c >= numChunks)
        return;
      size_t first = c * kChunk;
      size_t last = std::min(first + kChunk, e.classes.size());
      warmTrie(e, ArrayRef(e.classes).slice(first, last - first));
      std::vector<std::vector<PairOutcome>> results;
      for (size_t k = first; k < last; ++k)
        results.push_back(pairClass(u, e, fp, typer, e.classes[k]));
      std::lock_guard<std::mutex> lock(mergeMutex);
      chunks[c] = std::move(results);
      done[c] = 1;
      for (; nextMerge < numChunks && done[nextMerge]; ++nextMerge) {
        for (std::vector<PairOutcome> &pairs : chunks[nextMerge])
          merge(pairs);
        chunks[nextMerge] = {};
        if (progress && (nextMerge + 1) % 4096 == 0)
          progress((nextMerge + 1) * kChunk);
      }
    }
  };
  runOnThreads(threads, [&](unsigned) { worker(); });
  stats.kept = out.size();
  stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return out;
}
