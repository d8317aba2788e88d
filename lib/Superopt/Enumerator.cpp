//===- Enumerator.cpp - Enumeration and fingerprinting of graphs ----------===//
//
// Part of Loom. See Enumerator.h for what is enumerated and why each graph
// is visited once.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Enumerator.h"
#include "SigMap.h"
#include "loom/Support/Threads.h"

#include "loom/Interpreter/Kernels.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <sys/mman.h>

using namespace loom;
using namespace loom::superopt;
using interp::ModPDomain;
using llvm::ArrayRef;
using llvm::SmallVector;
using FpTensor = interp::Tensor<ModPDomain>;

uint64_t superopt::fingerprintOf(ArrayRef<int64_t> shape,
                                 ArrayRef<uint64_t> data) {
  uint64_t h = 0x6a09e667f3bcc908ULL;
  for (int64_t d : shape)
    h = hashMix(h, static_cast<uint64_t>(d));
  h = hashMix(h, 0xfeed);
  for (uint64_t v : data)
    h = hashMix(h, v);
  return h;
}

SmallVector<uint64_t, 4> superopt::fingerprintGraph(const Universe &u,
                                                    const Graph &g) {
  std::vector<FpTensor> inputs;
  for (unsigned i = 0; i < u.numInputs(); ++i)
    inputs.push_back(u.fingerprintInput(i));
  SmallVector<uint64_t, 4> r;
  for (const FpTensor &t : u.evaluate<ModPDomain>(g, inputs))
    r.push_back(fingerprintOf(t.shape, t.data));
  return r;
}

Graph Enumeration::unpack(const Universe &u, uint32_t member) const {
  Graph g;
  if (member & kIdentity) {
    for (uint8_t v : identities[member & ~kIdentity])
      g.outputs.push_back(v);
    return g;
  }
  SmallVector<uint32_t, 8> chain;
  for (uint32_t t = member; t != ~0u; t = trie[t].parent)
    chain.push_back(t);
  std::reverse(chain.begin(), chain.end());
  unsigned numInputs = u.numInputs();
  unsigned numLeaves = numInputs + u.paramExprs().size();
  // Search value ids: inputs, parameter expressions, results. Parameter
  // expressions a node uses become nodes of the graph first.
  SmallVector<unsigned, 32> map(numLeaves, ~0u);
  for (unsigned i = 0; i < numInputs; ++i)
    map[i] = i;
  for (uint32_t t : chain)
    for (unsigned k = 0; k < trie[t].numOperands; ++k) {
      unsigned v = trie[t].operands[k];
      if (v >= numInputs && v < numLeaves && map[v] == ~0u) {
        const ParamExpr &pe = u.paramExprs()[v - numInputs];
        auto m = mergeGraph(g, pe.graph, numInputs, u.shapes());
        map[v] = m[pe.graph.outputs[0]];
      }
    }
  unsigned next = firstResultOf(g, g.nodes.size(), numInputs);
  SmallVector<unsigned, 16> uses(next, 1);
  for (uint32_t t : chain) {
    const TrieNode &tn = trie[t];
    const OpDef &def = u.ops()[tn.def];
    Node n{def.kind, def.attrs, {}};
    n.attrs.sizes = tn.sizes;
    for (unsigned i = 0; i < tn.numOperands; ++i) {
      unsigned v = map[tn.operands[i]];
      n.operands.push_back(v);
      ++uses[v];
    }
    g.nodes.push_back(n);
    for (unsigned r = 0; r < specOf(def.kind).numResults; ++r) {
      map.push_back(next++);
      uses.push_back(0);
    }
  }
  SmallVector<unsigned, 4> outs;
  for (unsigned v = numInputs; v < uses.size(); ++v)
    if (uses[v] == 0)
      outs.push_back(v);
  // Fingerprint order, as the search recorded it.
  uint8_t order = trie[member].outputOrder;
  for (unsigned p = 0; p < outs.size(); ++p)
    g.outputs.push_back(outs[((order >> (2 * p)) & 3) ^ p]);
  return g;
}

namespace {

/// What the search knows about one distinct value (keyed by signature).
struct ValueRec {
  uint64_t hash;
  uint32_t split; ///< index into the split-information table
  int32_t data;   ///< index into the data store, or -1
  ShapeId shape;
  Role role;
  uint8_t depth; ///< structural depth (inputs 0)
};

/// A possible next node.
struct Cand {
  uint64_t sig;
  uint8_t def;
  uint8_t numOperands;
  int8_t lastDep; ///< latest path node producing an operand, -1 if none
  std::array<uint8_t, 5> operands;
  std::array<int16_t, 2> sizes;
  uint32_t shapesIdx; ///< result shapes in the shape-memo table
};

/// A node of the current path.
struct PathNode {
  Cand cand;
  unsigned firstResult;
  unsigned numResults;
  uint32_t trie = ~0u;
};

/// What one work unit (a top-level candidate and every graph that starts
/// with it) records. Trie and identity indices are local to the unit; the
/// merge offsets them.
struct UnitOutput {
  std::vector<Enumeration::TrieNode> trie;
  /// (class key, member): a trie index, or kIdentity | index into
  /// identities.
  std::vector<std::pair<uint64_t, uint32_t>> records;
  /// Identity graphs, first occurrence per key within the unit.
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> identities;
  /// Shapes this unit interned first, in the order it met them.
  std::vector<Shape> shapes;
};

/// Progress reports shared by the workers.
struct Progress {
  explicit Progress(const EnumerateOptions &options) : options(options) {}
  const EnumerateOptions &options;
  std::atomic<uint64_t> visited{0}, recorded{0};
  std::mutex mutex;
};

/// One worker's search state. Workers share nothing mutable: each has its
/// own memos and its own copy of the shape table (shapes it interns are
/// handed to the universe in unit order by the merge).
class Enumerator {
public:
  Enumerator(const Universe &u, const EnumerateOptions &options,
             Progress &progress)
      : u(u), options(options), progress(progress), shapes(u.shapes()) {}

  /// Precomputation, the leaves and the top-level candidates (the units).
  void prepare();
  size_t numUnits() const { return numTopLevel; }
  /// Shapes prepare() interned.
  std::vector<Shape> preparedShapes;
  /// Searches the graphs whose first node is top-level candidate \p unit.
  void runUnit(size_t unit, UnitOutput &out);
  /// Reports the visits not reported yet.
  void flushProgress();

  EnumerateStats stats;
  std::chrono::steady_clock::duration fpTime{};

private:
  // Setup.
  void addInputs();
  uint32_t internSplit(const SplitInfo &s);
  std::vector<Shape> shapesFrom(size_t first) const;

  // Candidates.
  bool allowedAt(const OpSpec &spec, unsigned pos, unsigned v) const;
  void generate(unsigned firstNew);
  void tryTuple(unsigned d, ArrayRef<unsigned> ops);
  std::optional<uint32_t> inferShapes(unsigned d, const OpAttrs &attrs,
                                      ArrayRef<ShapeId> in);

  // Search.
  void search(unsigned level);
  /// Visits candidate \p ci (accepted at \p level) and the graphs it
  /// starts.
  void visit(size_t ci, unsigned level);
  bool accept(const Cand &c, unsigned level);
  uint32_t valueOf(const Cand &c, bool needData);
  const FpTensor *dataOf(unsigned value);
  void record(bool redundant);
  uint32_t trieOf(unsigned level);
  void joinComponents(unsigned level);

  const Universe &u;
  const EnumerateOptions &options;
  Progress &progress;
  ShapeTable shapes;
  unsigned numInputs = 0;
  /// Inputs and parameter expressions: the values that are not results.
  unsigned numLeaves = 0;
  unsigned maxMerge = 1;
  size_t numTopLevel = 0;
  uint64_t reportedVisited = 0, reportedRecorded = 0;

  // Per-def precomputation.
  std::vector<uint64_t> defHash;
  /// Per def and operand position, the leaves allowed there.
  std::vector<std::array<SmallVector<unsigned, 64>, 5>> leafAllowed;

  // Distinct values.
  std::vector<ValueRec> recs;
  SigMap memo;
  std::vector<SplitInfo> splitTable;
  std::unordered_map<uint64_t, SmallVector<uint32_t, 1>> splitIndex;
  std::deque<FpTensor> dataStore;
  std::unordered_map<uint64_t, uint32_t> shapeMemo;
  /// Dense memo of inferShapes for unary and binary defs without completed
  /// attributes: (def, shape...) -> result index + 1, 0 unknown, -1 invalid.
  static constexpr unsigned kDenseShapes = 256;
  std::vector<std::vector<int32_t>> denseMemo;
  std::vector<SmallVector<ShapeId, 2>> shapeResults; // index 0: invalid
  llvm::DenseSet<uint64_t> inputHashes;
  llvm::DenseSet<uint64_t> leafHashes;
  std::vector<uint64_t> leafMasks; ///< parameter nodes per leaf

  // The path.
  SmallVector<PathNode, 8> path;
  SmallVector<uint32_t, 32> valueRec;
  SmallVector<uint64_t, 32> valueSig;
  SmallVector<uint8_t, 32> useCount;
  SmallVector<int8_t, 32> producer; ///< path node of a value, -1 for inputs
  SmallVector<const FpTensor *, 32> valueData;
  std::vector<std::vector<FpTensor>> levelData;
  std::vector<Cand> cands;
  std::vector<std::vector<uint32_t>> acceptedAt; ///< per level
  unsigned regularUsed = 0;

  // Components of the path: per value, the bit of its node's component (0
  // for an unused leaf); per level, the state before that level's node.
  SmallVector<uint16_t, 32> valueComps;
  unsigned numComps = 0;
  std::vector<SmallVector<uint16_t, 32>> savedComps;

  // The current unit's results.
  UnitOutput *out = nullptr;
  llvm::DenseSet<uint64_t> identityKeys;
};

std::vector<Shape> Enumerator::shapesFrom(size_t first) const {
  std::vector<Shape> r;
  for (size_t i = first; i < shapes.size(); ++i) {
    ArrayRef<int64_t> s = shapes.get(i);
    r.emplace_back(s.begin(), s.end());
  }
  return r;
}

uint32_t Enumerator::internSplit(const SplitInfo &s) {
  uint64_t h = 0;
  for (const AxisSplit &a : s.axes)
    for (int16_t v : a.tree)
      h = hashMix(h, static_cast<uint16_t>(v));
  auto &bucket = splitIndex[h];
  for (uint32_t i : bucket)
    if (splitTable[i].axes == s.axes)
      return i;
  splitTable.push_back(s);
  bucket.push_back(splitTable.size() - 1);
  return splitTable.size() - 1;
}

void Enumerator::addInputs() {
  numInputs = u.numInputs();
  auto addLeaf = [&](const FpTensor &t, ShapeId shape, Role role, uint64_t sig,
                     uint64_t mask) {
    ValueRec r{fingerprintOf(t.shape, t.data),
               internSplit(SplitInfo()),
               -1,
               shape,
               role,
               0};
    dataStore.push_back(t);
    r.data = dataStore.size() - 1;
    recs.push_back(r);
    leafHashes.insert(r.hash);
    leafMasks.push_back(mask);
    valueRec.push_back(recs.size() - 1);
    valueSig.push_back(sig);
    useCount.push_back(0);
    producer.push_back(-1);
    valueData.push_back(&dataStore.back());
  };
  for (unsigned i = 0; i < numInputs; ++i) {
    const Input &in = u.inputs()[i];
    addLeaf(u.fingerprintInput(i), in.shape, in.role,
            hashMix(hashString("input"), i), 0);
    inputHashes.insert(recs.back().hash);
  }
  // Parameter expressions, evaluated once.
  std::vector<FpTensor> inputs;
  for (unsigned i = 0; i < numInputs; ++i)
    inputs.push_back(u.fingerprintInput(i));
  for (const ParamExpr &pe : u.paramExprs()) {
    FpTensor value = u.evaluate<ModPDomain>(pe.graph, inputs)[0];
    addLeaf(value, pe.shape, pe.role,
            hashMix(hashString("param"), hashString(u.describe(pe.graph))),
            pe.nodeMask);
  }
  numLeaves = valueRec.size();
}

std::optional<uint32_t> Enumerator::inferShapes(unsigned d,
                                                const OpAttrs &attrs,
                                                ArrayRef<ShapeId> in) {
  uint64_t key =
      hashMix(defHash[d], (uint64_t(uint16_t(attrs.sizes[0])) << 16) |
                              uint16_t(attrs.sizes[1]));
  for (ShapeId s : in)
    key = hashMix(key, s);
  auto it = shapeMemo.find(key);
  if (it != shapeMemo.end())
    return it->second == 0 ? std::nullopt : std::optional<uint32_t>(it->second);
  // Not Universe::infer: that would intern into the shared table, in an
  // order depending on the threads.
  SpecContext sc{u.mlir(), &shapes};
  auto r = specOf(u.ops()[d].kind).infer(sc, attrs, in);
  uint32_t idx = 0;
  if (r) {
    shapeResults.push_back(*r);
    idx = shapeResults.size() - 1;
  }
  shapeMemo.emplace(key, idx);
  return idx == 0 ? std::nullopt : std::optional<uint32_t>(idx);
}

void Enumerator::tryTuple(unsigned d, ArrayRef<unsigned> ops) {
  const OpDef &def = u.ops()[d];
  const OpSpec &spec = specOf(def.kind);
  // Tensor operands are distinct, and uniform where the op asks for it.
  bool weights = false, data = false;
  for (unsigned i = 0; i < ops.size(); ++i) {
    Role r = recs[valueRec[ops[i]]].role;
    if (!(roleBit(r) & kTensorRoles))
      continue;
    weights |= r == Role::Weight;
    data |= (roleBit(r) & kDataRoles) != 0;
    for (unsigned j = 0; j < i; ++j)
      if (ops[j] == ops[i])
        return;
  }
  if (spec.uniformOperands && weights && data)
    return;
  SmallVector<Role, 5> roles;
  for (unsigned v : ops)
    roles.push_back(recs[valueRec[v]].role);
  if (!spec.accepts(def.attrs, roles))
    return;
  SmallVector<ShapeId, 5> inShapes;
  for (unsigned v : ops)
    inShapes.push_back(recs[valueRec[v]].shape);
  OpAttrs attrs = def.attrs;
  if (spec.attrFields & kAttrSizes) {
    SmallVector<const SplitInfo *, 5> inSplits;
    for (unsigned v : ops)
      inSplits.push_back(&splitTable[recs[valueRec[v]].split]);
    if (!spec.complete(attrs, inSplits, inShapes, shapes))
      return;
  }
  std::optional<uint32_t> shapesIdx;
  std::vector<int32_t> &dense = denseMemo[d];
  bool useDense = !dense.empty() && llvm::all_of(inShapes, [](ShapeId s) {
    return s < kDenseShapes;
  });
  if (useDense) {
    size_t slot = inShapes.size() == 1
                      ? inShapes[0]
                      : size_t(inShapes[0]) * kDenseShapes + inShapes[1];
    int32_t &e = dense[slot];
    if (e == 0) {
      shapesIdx = inferShapes(d, attrs, inShapes);
      e = shapesIdx ? static_cast<int32_t>(*shapesIdx) + 1 : -1;
    }
    if (e < 0)
      return;
    shapesIdx = static_cast<uint32_t>(e - 1);
  } else {
    shapesIdx = inferShapes(d, attrs, inShapes);
    if (!shapesIdx)
      return;
  }
  Cand c;
  c.def = static_cast<uint8_t>(d);
  c.numOperands = ops.size();
  c.sizes = attrs.sizes;
  c.shapesIdx = *shapesIdx;
  c.lastDep = -1;
  std::array<uint64_t, 5> sigs;
  for (unsigned i = 0; i < ops.size(); ++i) {
    c.operands[i] = ops[i];
    c.lastDep = std::max<int8_t>(c.lastDep, producer[ops[i]]);
    sigs[i] = valueSig[ops[i]];
  }
  if (spec.commutative)
    std::sort(sigs.begin(), sigs.begin() + ops.size());
  uint64_t sig =
      hashMix(defHash[d], (uint64_t(uint16_t(attrs.sizes[0])) << 16) |
                              uint16_t(attrs.sizes[1]));
  for (unsigned i = 0; i < ops.size(); ++i)
    sig = hashMix(sig, sigs[i]);
  c.sig = sig;
  cands.push_back(c);
}

bool Enumerator::allowedAt(const OpSpec &spec, unsigned pos, unsigned v) const {
  return (spec.operandRoles[pos] & roleBit(recs[valueRec[v]].role)) &&
         !(spec.inputOperandsOnly && v >= numInputs);
}

void Enumerator::generate(unsigned firstNew) {
  unsigned numValues = valueRec.size();
  SmallVector<ShapeId, 64> shapeOf;
  for (unsigned v = 0; v < numValues; ++v)
    shapeOf.push_back(recs[valueRec[v]].shape);
  for (unsigned d = 0; d < u.ops().size(); ++d) {
    const OpSpec &spec = specOf(u.ops()[d].kind);
    if (spec.paramPrep)
      continue; // offered as parameter expressions instead
    unsigned n = spec.numOperands + (u.ops()[d].attrs.bias ? 1 : 0);
    if (n == 0) {
      if (firstNew == 0)
        tryTuple(d, {});
      continue;
    }
    // Values allowed per operand position: the leaves' are fixed.
    std::array<SmallVector<unsigned, 64>, 5> allowed;
    for (unsigned pos = 0; pos < n; ++pos) {
      allowed[pos] = leafAllowed[d][pos];
      for (unsigned v = numLeaves; v < numValues; ++v)
        if (allowedAt(spec, pos, v))
          allowed[pos].push_back(v);
    }
    // A tuple whose shapes the dense memo knows to be invalid is skipped
    // (tryTuple would reject it without side effects).
    const std::vector<int32_t> &dense = denseMemo[d];
    auto knownInvalid = [&](size_t slot) {
      return !dense.empty() && dense[slot] < 0;
    };
    std::array<unsigned, 5> tuple;
    if (n == 1) {
      for (unsigned v : allowed[0])
        if (v >= firstNew) {
          if (shapeOf[v] < kDenseShapes && knownInvalid(shapeOf[v]))
            continue;
          tuple[0] = v;
          tryTuple(d, ArrayRef<unsigned>(tuple.data(), 1));
        }
      continue;
    }
    if (n == 2) {
      auto firstNewB =
          std::lower_bound(allowed[1].begin(), allowed[1].end(), firstNew);
      for (unsigned a : allowed[0])
        for (auto it = a >= firstNew ? allowed[1].begin() : firstNewB;
             it != allowed[1].end(); ++it) {
          unsigned b = *it;
          if (spec.commutative && a >= b)
            continue;
          if (shapeOf[a] < kDenseShapes && shapeOf[b] < kDenseShapes &&
              knownInvalid(size_t(shapeOf[a]) * kDenseShapes + shapeOf[b]))
            continue;
          tuple[0] = a;
          tuple[1] = b;
          tryTuple(d, ArrayRef<unsigned>(tuple.data(), 2));
        }
      continue;
    }
    // Tuples whose first new operand is at position j: earlier positions
    // hold old values, later ones any value.
    for (unsigned j = 0; j < n; ++j) {
      auto fill = [&](auto &self, unsigned pos) -> void {
        if (pos == n) {
          if (spec.commutative && n == 2 && tuple[0] >= tuple[1])
            return;
          tryTuple(d, ArrayRef<unsigned>(tuple.data(), n));
          return;
        }
        for (unsigned v : allowed[pos]) {
          if (pos < j && v >= firstNew)
            break; // allowed lists are sorted
          if (pos == j && v < firstNew)
            continue;
          tuple[pos] = v;
          self(self, pos + 1);
        }
      };
      fill(fill, 0);
    }
  }
}

void Enumerator::joinComponents(unsigned level) {
  // Nodes sharing a value (as operands, or as producer and user) are in one
  // component. Each value used or produced by a node carries its
  // component's bit (one bit: sharing joins); node `level` joins the
  // components of its operands, or starts one with a bit no earlier node
  // has.
  const PathNode &pn = path[level];
  uint16_t touched = 0;
  for (unsigned k = 0; k < pn.cand.numOperands; ++k)
    touched |= valueComps[pn.cand.operands[k]];
  uint16_t bit = touched ? touched & -touched : uint16_t(1) << level;
  if (touched & ~bit)
    for (uint16_t &m : valueComps)
      if (m & touched)
        m = bit;
  for (unsigned k = 0; k < pn.cand.numOperands; ++k)
    valueComps[pn.cand.operands[k]] = bit;
  valueComps.resize(pn.firstResult + pn.numResults, bit);
  numComps = numComps + 1 - llvm::popcount(touched);
}

bool Enumerator::accept(const Cand &c, unsigned level) {
  if (regularUsed >= options.maxOps)
    return false;
  // Canonical order: the new node's signature exceeds that of every node
  // placed after its last dependency. This also rejects a repeated node: a
  // copy of it would stand after the same dependencies, with an equal
  // signature.
  for (unsigned i = c.lastDep + 1; i < level; ++i)
    if (path[i].cand.sig >= c.sig)
      return false;
  // Connectivity: components left after this node must be joinable by the
  // remaining budget.
  uint16_t touched = 0;
  for (unsigned k = 0; k < c.numOperands; ++k)
    touched |= valueComps[c.operands[k]];
  unsigned after = numComps + 1 - llvm::popcount(touched);
  unsigned remaining = options.maxOps - regularUsed - 1;
  return after - 1 <= remaining * maxMerge;
}

const FpTensor *Enumerator::dataOf(unsigned value) { return valueData[value]; }

uint32_t Enumerator::valueOf(const Cand &c, bool needData) {
  const uint32_t *known = memo.find(c.sig);
  const OpDef &def = u.ops()[c.def];
  const OpSpec &spec = specOf(def.kind);
  bool haveRec = known != nullptr;
  bool haveData = haveRec && recs[*known].data >= 0;
  if (haveRec && (!needData || haveData))
    return *known;
  // Evaluate.
  auto start = std::chrono::steady_clock::now();
  OpAttrs attrs = def.attrs;
  attrs.sizes = c.sizes;
  SmallVector<const FpTensor *, 5> operands;
  uint8_t depth = 0;
  for (unsigned k = 0; k < c.numOperands; ++k) {
    operands.push_back(dataOf(c.operands[k]));
    depth = std::max<uint8_t>(depth, recs[valueRec[c.operands[k]]].depth);
  }
  SmallVector<FpTensor, 2> out;
  evalOp<ModPDomain>(def.kind, attrs, shapes, operands, out);
  ++stats.evaluations;
  fpTime += std::chrono::steady_clock::now() - start;
  bool store = depth + 1 <= 2;
  uint32_t first;
  if (haveRec) {
    first = *known;
  } else {
    SmallVector<ShapeId, 5> inShapes;
    SmallVector<const SplitInfo *, 5> inSplits;
    SmallVector<Role, 5> inRoles;
    for (unsigned k = 0; k < c.numOperands; ++k) {
      const ValueRec &r = recs[valueRec[c.operands[k]]];
      inShapes.push_back(r.shape);
      inSplits.push_back(&splitTable[r.split]);
      inRoles.push_back(r.role);
    }
    SmallVector<SplitInfo, 2> outSplits;
    spec.propagateSplit(attrs, inSplits, inShapes, shapes, outSplits);
    Role role = resultRoleOf(spec.resultRole, inRoles);
    first = recs.size();
    const auto &resultShapes = shapeResults[c.shapesIdx];
    for (unsigned r = 0; r < out.size(); ++r) {
      ValueRec rec{fingerprintOf(out[r].shape, out[r].data),
                   internSplit(outSplits[r]),
                   -1,
                   resultShapes[r],
                   role,
                   static_cast<uint8_t>(depth + 1)};
      recs.push_back(rec);
    }
    memo.insert(c.sig, first);
  }
  for (unsigned r = 0; r < out.size(); ++r) {
    if (store) {
      dataStore.push_back(std::move(out[r]));
      recs[first + r].data = dataStore.size() - 1;
    } else if (needData) {
      levelData[path.size()].push_back(std::move(out[r]));
    }
  }
  return first;
}

uint32_t Enumerator::trieOf(unsigned level) {
  if (path[level].trie != ~0u)
    return path[level].trie;
  uint32_t parent = level == 0 ? ~0u : trieOf(level - 1);
  const Cand &c = path[level].cand;
  Enumeration::TrieNode tn;
  tn.parent = parent;
  tn.def = c.def;
  tn.numOperands = c.numOperands;
  tn.operands = c.operands;
  tn.sizes = c.sizes;
  tn.outputOrder = 0;
  out->trie.push_back(tn);
  path[level].trie = out->trie.size() - 1;
  return path[level].trie;
}

void Enumerator::record(bool redundant) {
  if (numComps != 1)
    return;
  // The parameter expressions used share at most P nodes.
  uint64_t paramNodes = 0;
  for (unsigned v = numInputs; v < numLeaves; ++v)
    if (useCount[v])
      paramNodes |= leafMasks[v];
  if (static_cast<unsigned>(llvm::popcount(paramNodes)) > u.maxParamOps())
    return;
  SmallVector<uint64_t, 8> outs;
  for (unsigned v = numLeaves; v < valueRec.size(); ++v)
    if (useCount[v] == 0)
      outs.push_back(recs[valueRec[v]].hash);
  if (outs.size() > options.maxOutputs)
    return;
  SmallVector<uint64_t, 8> valueOrder = outs;
  llvm::sort(outs);
  for (unsigned i = 1; i < outs.size(); ++i)
    if (outs[i] == outs[i - 1])
      return;
  // Outputs whose cones share no node: the only rules such a graph takes
  // part in that are not compositions of smaller rules merge the cones; with
  // small budgets only single-op cones can be merged (two matmuls or convs
  // sharing an input), so the other such graphs are not recorded.
  if (outs.size() > 1) {
    SmallVector<uint32_t, 8> cone(path.size(), 0);
    bool allLeaves = true;
    for (unsigned n = 0; n < path.size(); ++n) {
      cone[n] = 1u << n;
      const Cand &c = path[n].cand;
      for (unsigned k = 0; k < c.numOperands; ++k)
        if (producer[c.operands[k]] >= 0)
          cone[n] |= cone[producer[c.operands[k]]];
      allLeaves &= c.lastDep < 0;
    }
    SmallVector<uint32_t, 4> groups;
    for (unsigned v = numLeaves; v < valueRec.size(); ++v) {
      if (useCount[v] != 0)
        continue;
      uint32_t m = cone[producer[v]];
      for (auto it = groups.begin(); it != groups.end();) {
        if (*it & m) {
          m |= *it;
          it = groups.erase(it);
        } else {
          ++it;
        }
      }
      groups.push_back(m);
    }
    if (groups.size() > 1 && !allLeaves)
      return;
  }
  uint64_t key = 0x5851f42d4c957f2dULL;
  for (uint64_t h : outs)
    key = hashMix(key, h);
  ++stats.enumerated;
  if (redundant)
    ++stats.redundant;
  uint32_t node = trieOf(path.size() - 1);
  // Where each output stands in fingerprint order (see TrieNode).
  for (unsigned p = 0; p < outs.size(); ++p) {
    unsigned k = llvm::find(valueOrder, outs[p]) - valueOrder.begin();
    out->trie[node].outputOrder |= (k ^ p) << (2 * p);
  }
  out->records.emplace_back(key, node);
  // A graph computing only inputs is equal to the identity on them.
  if (llvm::all_of(outs, [&](uint64_t h) { return inputHashes.count(h); }) &&
      identityKeys.insert(key).second) {
    std::vector<uint8_t> ids;
    SmallVector<std::pair<uint64_t, uint8_t>, 4> byHash;
    for (unsigned i = 0; i < numInputs; ++i)
      if (llvm::is_contained(outs, recs[i].hash))
        byHash.push_back({recs[i].hash, static_cast<uint8_t>(i)});
    llvm::sort(byHash); // fingerprint order, as unpack promises
    for (auto &[h, i] : byHash)
      ids.push_back(i);
    out->identities.emplace_back(key, std::move(ids));
    out->records.emplace_back(key, Enumeration::kIdentity |
                                       (out->identities.size() - 1));
  }
}

void Enumerator::search(unsigned level) {
  // Visiting a candidate leaves the path as it was, so which candidates
  // this level accepts is known up front; their memo slots are prefetched
  // a few visits ahead (the probe is otherwise a cache miss per graph).
  std::vector<uint32_t> &accepted = acceptedAt[level];
  accepted.clear();
  for (size_t ci = 0, e = cands.size(); ci < e; ++ci)
    if (accept(cands[ci], level))
      accepted.push_back(ci);
  constexpr size_t kAhead = 4;
  for (size_t k = 0; k < accepted.size(); ++k) {
    if (k + kAhead < accepted.size())
      memo.prefetch(cands[accepted[k + kAhead]].sig);
    visit(accepted[k], level);
  }
}

void Enumerator::flushProgress() {
  uint64_t visited =
      progress.visited.fetch_add(stats.visited - reportedVisited) +
      stats.visited - reportedVisited;
  uint64_t recorded =
      progress.recorded.fetch_add(stats.enumerated - reportedRecorded) +
      stats.enumerated - reportedRecorded;
  // A report per 2^20 visits in all.
  if (options.progress &&
      (visited >> 20) !=
          ((visited - (stats.visited - reportedVisited)) >> 20)) {
    std::lock_guard<std::mutex> lock(progress.mutex);
    options.progress(visited, recorded);
  }
  reportedVisited = stats.visited;
  reportedRecorded = stats.enumerated;
}

void Enumerator::visit(size_t ci, unsigned level) {
  Cand c = cands[ci];
  ++stats.visited;
  if ((stats.visited & 0xffff) == 0)
    flushProgress();
  bool lastLevel = regularUsed + 1 >= options.maxOps;
  levelData[level].clear();
  uint32_t first = valueOf(c, /*needData=*/!lastLevel);
  const OpSpec &spec = specOf(u.ops()[c.def].kind);
  // Redundant: recomputes a tensor of the graph.
  bool redundant = false;
  for (unsigned r = 0; r < spec.numResults && !redundant; ++r) {
    uint64_t h = recs[first + r].hash;
    if (leafHashes.count(h))
      redundant = true;
    for (unsigned v = numLeaves; v < valueRec.size() && !redundant; ++v)
      redundant = recs[valueRec[v]].hash == h;
  }
  // Push.
  savedComps[level] = valueComps;
  unsigned savedNumComps = numComps;
  PathNode pn{c, static_cast<unsigned>(valueRec.size()), spec.numResults};
  path.push_back(pn);
  for (unsigned k = 0; k < c.numOperands; ++k)
    ++useCount[c.operands[k]];
  size_t owned = 0;
  for (unsigned r = 0; r < spec.numResults; ++r) {
    valueRec.push_back(first + r);
    valueSig.push_back(hashMix(c.sig, r));
    useCount.push_back(0);
    producer.push_back(static_cast<int8_t>(level));
    const ValueRec &rec = recs[first + r];
    if (rec.data >= 0)
      valueData.push_back(&dataStore[rec.data]);
    else if (!lastLevel && !redundant)
      valueData.push_back(&levelData[level][owned++]);
    else
      valueData.push_back(nullptr);
  }
  ++regularUsed;
  joinComponents(level);
  record(redundant);
  if (!redundant && !lastLevel) {
    size_t before = cands.size();
    generate(valueRec.size() - spec.numResults);
    search(level + 1);
    cands.resize(before);
  }
  // Pop.
  --regularUsed;
  for (unsigned r = 0; r < spec.numResults; ++r) {
    valueRec.pop_back();
    valueSig.pop_back();
    useCount.pop_back();
    producer.pop_back();
    valueData.pop_back();
  }
  for (unsigned k = 0; k < c.numOperands; ++k)
    --useCount[c.operands[k]];
  path.pop_back();
  valueComps = savedComps[level];
  numComps = savedNumComps;
}

void Enumerator::prepare() {
  shapeResults.emplace_back(); // index 0: invalid
  for (const OpDef &d : u.ops()) {
    defHash.push_back(hashOp(d.kind, d.attrs, shapes));
    unsigned n = specOf(d.kind).numOperands + (d.attrs.bias ? 1 : 0);
    maxMerge = std::max(maxMerge, n > 1 ? n - 1 : 1);
    bool dense =
        (n == 1 || n == 2) && !(specOf(d.kind).attrFields & kAttrSizes);
    denseMemo.emplace_back(
        dense ? (n == 1 ? kDenseShapes : kDenseShapes * kDenseShapes) : 0, 0);
  }
  addInputs();
  for (const OpDef &d : u.ops()) {
    const OpSpec &spec = specOf(d.kind);
    auto &lists = leafAllowed.emplace_back();
    for (unsigned pos = 0; pos < spec.numOperands + (d.attrs.bias ? 1 : 0);
         ++pos)
      for (unsigned v = 0; v < numLeaves; ++v)
        if (allowedAt(spec, pos, v))
          lists[pos].push_back(v);
  }
  levelData.resize(options.maxOps + 1);
  savedComps.resize(options.maxOps + 1);
  acceptedAt.resize(options.maxOps + 1);
  valueComps.assign(valueRec.size(), 0);
  size_t before = shapes.size();
  generate(0);
  numTopLevel = cands.size();
  preparedShapes = shapesFrom(before);
}

void Enumerator::runUnit(size_t unit, UnitOutput &output) {
  out = &output;
  identityKeys.clear();
  size_t before = shapes.size();
  if (accept(cands[unit], 0))
    visit(unit, 0);
  output.shapes = shapesFrom(before);
  // Units wait for the merge; their slack would add up.
  output.trie.shrink_to_fit();
  output.records.shrink_to_fit();
  out = nullptr;
}

using Record = std::pair<uint64_t, uint32_t>;

} // namespace

Enumeration superopt::enumerate(Universe &u, const EnumerateOptions &options,
                                EnumerateStats &stats) {
  auto start = std::chrono::steady_clock::now();
  // Workers take the top-level candidates (the units) in turn; each unit's
  // graphs are recorded apart and merged in unit order below, so the result
  // is the sequential search's whatever the threads.
  assert(options.maxOutputs <= 4 && "TrieNode::outputOrder holds 4");
  Progress progress(options);
  unsigned threads = std::max(1u, options.threads);
  std::vector<std::unique_ptr<Enumerator>> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.push_back(std::make_unique<Enumerator>(u, options, progress));
  workers[0]->prepare();
  std::vector<UnitOutput> units(workers[0]->numUnits());
  std::atomic<size_t> nextUnit{0};
  auto work = [&](Enumerator &e) {
    for (;;) {
      size_t i = nextUnit++;
      if (i >= units.size())
        break;
      e.runUnit(i, units[i]);
    }
    e.flushProgress();
  };
  runOnThreads(threads, [&](unsigned t) {
    if (t > 0)
      workers[t]->prepare();
    work(*workers[t]);
  });

  // Shapes, in the order the sequential search interned them: a shape is
  // first met in the unit that meets it first, at the point it does.
  for (const Shape &s : workers[0]->preparedShapes)
    u.shapes().intern(s);
  for (const UnitOutput &unit : units)
    for (const Shape &s : unit.shapes)
      u.shapes().intern(s);
  std::chrono::steady_clock::duration fpTime{};
  for (const auto &w : workers) {
    stats.visited += w->stats.visited;
    stats.enumerated += w->stats.enumerated;
    stats.redundant += w->stats.redundant;
    stats.evaluations += w->stats.evaluations;
    fpTime += w->fpTime;
  }
  workers.clear();

  // The trie and the records, offset; an identity is kept at its first
  // occurrence in unit order.
  Enumeration result;
  size_t numNodes = 0, numRecords = 0;
  for (const UnitOutput &unit : units) {
    numNodes += unit.trie.size();
    numRecords += unit.records.size();
  }
  result.trie.reserve(numNodes);
  std::vector<Record> records;
  records.reserve(numRecords);
  llvm::DenseSet<uint64_t> identityKeys;
  for (UnitOutput &unit : units) {
    uint32_t offset = result.trie.size();
    for (Enumeration::TrieNode tn : unit.trie) {
      if (tn.parent != ~0u)
        tn.parent += offset;
      result.trie.push_back(tn);
    }
    SmallVector<uint32_t, 4> identityIds;
    for (auto &[key, ids] : unit.identities) {
      if (!identityKeys.insert(key).second) {
        identityIds.push_back(~0u);
        continue;
      }
      identityIds.push_back(result.identities.size());
      result.identities.push_back(std::move(ids));
    }
    for (auto [key, member] : unit.records) {
      if (member & Enumeration::kIdentity) {
        uint32_t id = identityIds[member & ~Enumeration::kIdentity];
        if (id != ~0u)
          records.emplace_back(key, Enumeration::kIdentity | id);
      } else {
        records.emplace_back(key, member + offset);
      }
    }
    unit = UnitOutput();
  }
  units.clear();

  // Group the records by class key, members in search order.
  parallelSort(records.data(), records.data() + records.size(), threads);
  for (size_t i = 0; i < records.size();) {
    size_t j = i + 1;
    while (j < records.size() && records[j].first == records[i].first)
      ++j;
    if (j - i >= 2) {
      std::vector<uint32_t> members;
      for (size_t k = i; k < j; ++k)
        members.push_back(records[k].second);
      stats.classMembers += members.size();
      result.classes.push_back(std::move(members));
    }
    i = j;
  }
  stats.classes = result.classes.size();
  stats.fingerprintSeconds = std::chrono::duration<double>(fpTime).count();
  stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}
