//===- Graph.cpp - Small tensor graphs of the rule generator --------------===//
//
// Part of Loom. The universe of the enumeration: the operators --ops names
// (the variants the specs declare), the inputs (TASO's small shapes, chosen
// so that shape-dependent identities show up; see docs/Superopt/RuleGen.md),
// typing and evaluation of graphs.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Graph.h"

#include "loom/Superopt/Z3Domain.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using interp::Tensor;

namespace {

/// Shapes of the universe (OpSpec.h). Matrices are 2x4 (activations) and
/// 4x4 (weights): a 4x4 weight can be transposed, and two activations
/// concatenated on axis 0 form another 4x4 matrix, so identities between
/// those shapes show up. Images are 1x4x5x5 with 4-channel filters: 5x5
/// keeps borders and an interior under 3x3 windows, so identities that only
/// hold away from the padding are not confused with real ones.
constexpr int64_t kRows = kUniverseRows, kFeatures = kUniverseFeatures,
                  kChannels = kUniverseChannels, kSpatial = kUniverseSpatial;

/// An --ops name: an operator of the vocabulary at one of its variants.
struct OpName {
  std::string name;
  const OpSpec *spec;
  const OpVariant *variant;
};

/// Every --ops name, in vocabulary order, each operator's variants in the
/// order its spec declares them.
const std::vector<OpName> &opNames() {
  static const std::vector<OpName> names = [] {
    std::vector<OpName> r;
    for (const OpSpec &s : vocabulary())
      for (const OpVariant &v : s.variants)
        r.push_back({(s.name + v.suffix).str(), &s, &v});
    return r;
  }();
  return names;
}

const OpName *findOpName(StringRef name) {
  for (const OpName &n : opNames())
    if (name == n.name)
      return &n;
  return nullptr;
}

} // namespace

//===----------------------------------------------------------------------===//
// Universe
//===----------------------------------------------------------------------===//

struct Universe::InferMemo {
  using Key = std::tuple<uint8_t, uint64_t, SmallVector<ShapeId, 5>>;
  std::map<Key, std::optional<SmallVector<ShapeId, 2>>> entries;
  /// Provers type graphs on worker threads; every shape they meet was
  /// interned before, so they only read the memo.
  std::mutex mutex;
};

std::vector<std::pair<std::string, std::string>> Universe::allOpNames() {
  std::vector<std::pair<std::string, std::string>> r;
  for (const OpName &n : opNames())
    r.emplace_back(n.name, n.variant->description);
  return r;
}

SmallVector<StringRef> Universe::defaultOpNames() {
  SmallVector<StringRef> r;
  for (const OpName &n : opNames())
    if (n.variant->inDefault)
      r.push_back(n.name);
  return r;
}

llvm::Expected<std::unique_ptr<Universe>>
Universe::create(MLIRContext *context, const UniverseOptions &options) {
  std::unique_ptr<Universe> u(new Universe(context));
  u->memo = std::make_shared<InferMemo>();
  u->seedValue = options.seed;

  // The op set, in table order whatever the order of --ops.
  SmallVector<StringRef> names;
  StringRef list = StringRef(options.ops).trim();
  if (list.empty())
    return llvm::createStringError("--ops: empty operator list");
  if (list == "default") {
    names = defaultOpNames();
  } else if (list == "all") {
    for (const OpName &n : opNames())
      names.push_back(n.name);
  } else {
    SmallVector<StringRef> parts;
    list.split(parts, ',', -1, false);
    for (StringRef p : parts) {
      p = p.trim();
      if (!findOpName(p)) {
        std::string known;
        for (const OpName &n : opNames())
          known += (known.empty() ? "" : ", ") + n.name;
        return llvm::createStringError("--ops: unknown operator '" + p.str() +
                                       "' (known: " + known + ")");
      }
      names.push_back(p);
    }
  }
  unsigned groups = 0;
  for (const OpName &n : opNames())
    if (llvm::is_contained(names, StringRef(n.name)))
      groups |= n.variant->inputs;
  if (!(groups & (kMatrices | kImages)))
    groups |= kMatrices;

  ShapeTable &t = u->shapeTable;
  ShapeId matrix = t.intern({kRows, kFeatures});
  ShapeId square = t.intern({kFeatures, kFeatures});
  ShapeId image = t.intern({1, kChannels, kSpatial, kSpatial});
  ShapeId vector = t.intern({kChannels});
  ShapeId scalar = t.intern({});
  ShapeId filter3 = t.intern({kChannels, kChannels, 3, 3});

  for (const OpName &n : opNames()) {
    if (!llvm::is_contained(names, StringRef(n.name)))
      continue;
    OpDef d{n.name, n.spec->kind, n.variant->attrs};
    if (n.spec->attrFields & kAttrShape)
      d.attrs.shape = t.intern(n.variant->constShape.get());
    u->opDefs.push_back(d);
  }

  // Inputs, three of each interchangeable kind (TASO), so that rules over
  // up to three distinct tensors of a kind can be expressed.
  unsigned group = 0;
  auto addGroup = [&](StringRef prefix, unsigned count, ShapeId shape,
                      Role role) {
    for (unsigned i = 1; i <= count; ++i)
      u->inputList.push_back(
          {count == 1 ? prefix.str() : (prefix + Twine(i)).str(), shape, role,
           group});
    ++group;
  };
  if (groups & kMatrices) {
    addGroup("x", 3, matrix, Role::Activation);
    addGroup("w", 3, square, Role::Weight);
  }
  if (groups & kSequences)
    addGroup("a", 3, t.intern({1, kRows, kFeatures}), Role::Activation);
  if (groups & kImages)
    addGroup("i", 3, image, Role::Activation);
  if (groups & kFilters) {
    addGroup("f", 3, filter3, Role::Weight);
    addGroup("g", 3, t.intern({kChannels, kChannels, 1, 3}), Role::Weight);
    addGroup("h", 3, t.intern({kChannels, kChannels, 3, 1}), Role::Weight);
    addGroup("p", 3, t.intern({kChannels, kChannels, 1, 1}), Role::Weight);
    addGroup("d", 1, t.intern({kChannels, 1, 3, 3}), Role::Weight);
  }
  if (groups & kScalar)
    addGroup("s", 1, scalar, Role::Scalar);
  if (groups & kBatchNorm) {
    addGroup("bn_gamma", 1, vector, Role::BnScale);
    addGroup("bn_beta", 1, vector, Role::BnBias);
    addGroup("bn_mean", 1, vector, Role::BnMean);
    addGroup("bn_var", 1, vector, Role::BnVar);
  }
  if (groups & kLayerNorm) {
    ShapeId feat = t.intern({kFeatures});
    addGroup("ln_gamma", 1, feat, Role::LnScale);
    addGroup("ln_beta", 1, feat, Role::LnBias);
  }
  if (u->inputList.size() > 64)
    return llvm::createStringError("too many inputs");

  u->maxParams = options.maxParamOps;
  u->buildParamExprs();
  u->drawFingerprintInputs();
  return std::move(u);
}

namespace {

/// Structural keys of the values of \p g: inputs by index, results by
/// operator, attributes and operand keys (sorted for commutative ops).
SmallVector<uint64_t, 16> valueKeys(const Graph &g, unsigned numInputs,
                                    const ShapeTable &shapes) {
  SmallVector<uint64_t, 16> keys;
  for (unsigned i = 0; i < numInputs; ++i)
    keys.push_back(hashMix(hashString("input"), i));
  for (const Node &n : g.nodes) {
    const OpSpec &spec = specOf(n.kind);
    SmallVector<uint64_t, 5> ops;
    for (unsigned v : n.operands)
      ops.push_back(keys[v]);
    if (spec.commutative)
      llvm::sort(ops);
    uint64_t k = hashOp(n.kind, n.attrs, shapes);
    for (uint64_t o : ops)
      k = hashMix(k, o);
    for (unsigned r = 0; r < spec.numResults; ++r)
      keys.push_back(hashMix(k, r));
  }
  return keys;
}

} // namespace

SmallVector<unsigned, 16> superopt::mergeGraph(Graph &dst, const Graph &src,
                                               unsigned numInputs,
                                               const ShapeTable &shapes) {
  SmallVector<uint64_t, 16> dstKeys = valueKeys(dst, numInputs, shapes);
  SmallVector<uint64_t, 16> srcKeys = valueKeys(src, numInputs, shapes);
  SmallVector<unsigned, 16> map;
  for (unsigned i = 0; i < numInputs; ++i)
    map.push_back(i);
  for (const Node &n : src.nodes) {
    unsigned results = specOf(n.kind).numResults;
    uint64_t key = srcKeys[map.size()];
    auto it = llvm::find(dstKeys, key);
    if (it != dstKeys.end()) {
      unsigned first = it - dstKeys.begin();
      for (unsigned r = 0; r < results; ++r)
        map.push_back(first + r);
      continue;
    }
    Node copy = n;
    for (unsigned &v : copy.operands)
      v = map[v];
    unsigned first = dstKeys.size();
    dst.nodes.push_back(copy);
    for (unsigned r = 0; r < results; ++r) {
      map.push_back(first + r);
      dstKeys.push_back(srcKeys[map.size() - 1]);
    }
  }
  return map;
}

void Universe::buildParamExprs() {
  SmallVector<const OpDef *> defs;
  for (const OpDef &d : opDefs)
    if (specOf(d.kind).paramPrep)
      defs.push_back(&d);
  if (defs.empty() || maxParams == 0)
    return;
  unsigned n = numInputs();
  // Candidate operands: the inputs, then the expressions built so far.
  struct Value {
    Role role;
    ShapeId shape;
    int expr; // -1 for an input
  };
  std::vector<Value> values;
  for (const Input &in : inputList)
    values.push_back({in.role, in.shape, -1});
  std::vector<uint64_t> nodeKeys;
  std::set<uint64_t> seen;
  unsigned filterGroup = ~0u;
  for (const Input &in : inputList)
    if (in.role == Role::Weight && shapeTable.rank(in.shape) == 4 &&
        shapeTable.get(in.shape)[2] == 3 && shapeTable.get(in.shape)[3] == 3 &&
        shapeTable.get(in.shape)[1] > 1) {
      filterGroup = in.group;
      break;
    }
  for (unsigned round = 0; round < maxParams; ++round) {
    size_t count = values.size();
    for (const OpDef *d : defs) {
      const OpSpec &spec = specOf(d->kind);
      std::function<void(unsigned, SmallVector<unsigned, 5> &)> rec =
          [&](unsigned pos, SmallVector<unsigned, 5> &ops) {
            if (pos == spec.numOperands) {
              // The expression: its operands' graphs merged, plus the node.
              Graph g;
              SmallVector<unsigned, 5> operandIds;
              for (unsigned o : ops) {
                if (values[o].expr < 0) {
                  operandIds.push_back(o);
                  continue;
                }
                const ParamExpr &pe = params[values[o].expr];
                auto map = mergeGraph(g, pe.graph, n, shapeTable);
                operandIds.push_back(map[pe.graph.outputs[0]]);
              }
              SmallVector<ShapeId, 5> shapes;
              for (unsigned o : ops)
                shapes.push_back(values[o].shape);
              auto result = infer(d->kind, d->attrs, shapes);
              if (!result)
                return;
              g.nodes.push_back({d->kind, d->attrs, operandIds});
              if (g.nodes.size() > maxParams)
                return;
              g.outputs = {firstResultOf(g, g.nodes.size() - 1, n)};
              SmallVector<uint64_t, 16> keys = valueKeys(g, n, shapeTable);
              if (!seen.insert(keys[g.outputs[0]]).second)
                return;
              ParamExpr pe{g, (*result)[0], spec.resultRole, 0};
              for (unsigned k = 0; k < g.nodes.size(); ++k) {
                uint64_t key = keys[firstResultOf(g, k, n)];
                auto it = llvm::find(nodeKeys, key);
                unsigned bit = it - nodeKeys.begin();
                if (it == nodeKeys.end())
                  nodeKeys.push_back(key);
                if (bit < 64)
                  pe.nodeMask |= uint64_t(1) << bit;
              }
              params.push_back(std::move(pe));
              values.push_back({params.back().role, params.back().shape,
                                static_cast<int>(params.size() - 1)});
              return;
            }
            for (unsigned v = 0; v < count; ++v) {
              if (!(spec.operandRoles[pos] & roleBit(values[v].role)))
                continue;
              // Batchnorm folding is generated for the 3x3 filters only:
              // other kernel shapes add no new kind of rule but multiply
              // the search.
              if (values[v].role == Role::Weight &&
                  (values[v].expr >= 0 || inputList[v].group != filterGroup))
                continue;
              ops.push_back(v);
              rec(pos + 1, ops);
              ops.pop_back();
            }
          };
      SmallVector<unsigned, 5> ops;
      rec(0, ops);
    }
  }
}

void Universe::drawFingerprintInputs() {
  fpInputs.clear();
  for (unsigned i = 0; i < inputList.size(); ++i) {
    ArrayRef<int64_t> s = shapeTable.get(inputList[i].shape);
    fpInputs.push_back(Tensor<interp::ModPDomain>::random(
        std::vector<int64_t>(s.begin(), s.end()),
        hashMix(seedValue, 0x1000 + i)));
  }
}

std::unique_ptr<Universe> Universe::createForInputs(MLIRContext *context,
                                                    ArrayRef<InputDecl> inputs,
                                                    uint64_t seed) {
  std::unique_ptr<Universe> u(new Universe(context));
  u->memo = std::make_shared<InferMemo>();
  u->seedValue = seed;
  std::map<std::pair<ShapeId, Role>, unsigned> groups;
  for (const InputDecl &d : inputs) {
    ShapeId s = u->shapeTable.intern(d.shape);
    auto it = groups.try_emplace({s, d.role}, groups.size()).first;
    u->inputList.push_back({d.name, s, d.role, it->second});
  }
  u->drawFingerprintInputs();
  return u;
}

std::string Universe::opList() const {
  SmallVector<StringRef> names;
  for (const OpDef &d : opDefs)
    names.push_back(d.name);
  return llvm::join(names, ",");
}

std::optional<SmallVector<ShapeId, 2>>
Universe::infer(OpKind kind, const OpAttrs &attrs, ArrayRef<ShapeId> shapes) {
  InferMemo::Key key{static_cast<uint8_t>(kind.index()),
                     hashOp(kind, attrs, shapeTable),
                     SmallVector<ShapeId, 5>(shapes.begin(), shapes.end())};
  std::lock_guard<std::mutex> lock(memo->mutex);
  auto it = memo->entries.find(key);
  if (it != memo->entries.end())
    return it->second;
  SpecContext sc = specContext();
  auto r = specOf(kind).infer(sc, attrs, shapes);
  memo->entries.emplace(std::move(key), r);
  return r;
}

llvm::SmallBitVector superopt::inputsUsedBy(const Graph &a, const Graph &b,
                                            unsigned numInputs) {
  llvm::SmallBitVector used(numInputs);
  for (const Graph *g : {&a, &b}) {
    for (const Node &n : g->nodes)
      for (unsigned v : n.operands)
        if (v < numInputs)
          used.set(v);
    for (unsigned o : g->outputs)
      if (o < numInputs)
        used.set(o);
  }
  return used;
}

unsigned superopt::firstResultOf(const Graph &g, unsigned n,
                                 unsigned numInputs) {
  unsigned id = numInputs;
  for (unsigned i = 0; i < n; ++i)
    id += specOf(g.nodes[i].kind).numResults;
  return id;
}

llvm::Expected<GraphTypes> Universe::typeGraph(const Graph &g) {
  SmallVector<ShapeId, 8> shapes;
  for (const Input &in : inputList)
    shapes.push_back(in.shape);
  return typeGraphImpl(g, shapes, nullptr);
}

llvm::Expected<GraphTypes>
Universe::typeGraphAt(Graph &g, ArrayRef<ShapeId> inputShapes) {
  return typeGraphImpl(g, inputShapes, &g);
}

llvm::Expected<GraphTypes>
Universe::typeGraphImpl(const Graph &g, ArrayRef<ShapeId> inputShapes,
                        Graph *complete) {
  GraphTypes r;
  for (unsigned i = 0; i < inputList.size(); ++i) {
    r.shapes.push_back(inputShapes[i]);
    r.roles.push_back(inputList[i].role);
    r.splits.emplace_back();
  }
  for (unsigned n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    const OpSpec &spec = specOf(node.kind);
    SmallVector<ShapeId, 5> shapes;
    SmallVector<const SplitInfo *, 5> splits;
    SmallVector<Role, 5> roles;
    for (unsigned v : node.operands) {
      if (v >= r.shapes.size())
        return llvm::createStringError("node " + Twine(n) +
                                       " uses an undefined value");
      shapes.push_back(r.shapes[v]);
      splits.push_back(&r.splits[v]);
      roles.push_back(r.roles[v]);
    }
    if (complete && (spec.attrFields & kAttrSizes) &&
        !spec.complete(complete->nodes[n].attrs, splits, shapes, shapeTable))
      return llvm::createStringError("node " + Twine(n) +
                                     ": no concatenation boundary to split at");
    auto results = infer(node.kind, node.attrs, shapes);
    if (!results)
      return llvm::createStringError(
          "node " + Twine(n) + ": " +
          opString(node.kind, node.attrs, shapeTable) +
          " does not apply to its operands");
    SmallVector<SplitInfo, 2> outSplits;
    spec.propagateSplit(node.attrs, splits, shapes, shapeTable, outSplits);
    Role role = resultRoleOf(spec.resultRole, roles);
    for (unsigned i = 0; i < results->size(); ++i) {
      r.shapes.push_back((*results)[i]);
      r.roles.push_back(role);
      r.splits.push_back(outSplits[i]);
    }
  }
  return r;
}

template <class D>
std::vector<Tensor<D>> Universe::evaluate(const Graph &g,
                                          ArrayRef<Tensor<D>> inputs) const {
  std::vector<Tensor<D>> results;
  size_t total = 0;
  for (const Node &n : g.nodes)
    total += specOf(n.kind).numResults;
  results.reserve(total);
  auto value = [&](unsigned id) -> const Tensor<D> * {
    return id < inputs.size() ? &inputs[id] : &results[id - inputs.size()];
  };
  for (const Node &n : g.nodes) {
    SmallVector<const Tensor<D> *, 5> operands;
    for (unsigned v : n.operands)
      operands.push_back(value(v));
    SmallVector<Tensor<D>, 2> out;
    evalOp<D>(n.kind, n.attrs, shapeTable, operands, out);
    for (Tensor<D> &t : out)
      results.push_back(std::move(t));
  }
  std::vector<Tensor<D>> outputs;
  for (unsigned o : g.outputs)
    outputs.push_back(*value(o));
  return outputs;
}

template std::vector<Tensor<interp::ModPDomain>>
Universe::evaluate(const Graph &, ArrayRef<Tensor<interp::ModPDomain>>) const;
template std::vector<Tensor<interp::F64Domain>>
Universe::evaluate(const Graph &, ArrayRef<Tensor<interp::F64Domain>>) const;
template std::vector<Tensor<Z3Domain>>
Universe::evaluate(const Graph &, ArrayRef<Tensor<Z3Domain>>) const;

std::string Universe::describe(const Graph &g) const {
  // Value id -> (node, result index).
  std::vector<std::pair<int, unsigned>> producer(numInputs(), {-1, 0});
  for (unsigned n = 0; n < g.nodes.size(); ++n)
    for (unsigned r = 0; r < specOf(g.nodes[n].kind).numResults; ++r)
      producer.push_back({static_cast<int>(n), r});
  std::function<void(raw_ostream &, unsigned)> print = [&](raw_ostream &os,
                                                           unsigned v) {
    if (v < numInputs()) {
      os << inputList[v].name;
      return;
    }
    auto [n, r] = producer[v];
    const Node &node = g.nodes[n];
    os << opString(node.kind, node.attrs, shapeTable);
    if (specOf(node.kind).numResults > 1)
      os << "#" << r;
    if (node.operands.empty())
      return;
    os << "(";
    llvm::interleaveComma(node.operands, os, [&](unsigned o) { print(os, o); });
    os << ")";
  };
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      g.outputs, os, [&](unsigned o) { print(os, o); }, "; ");
  return s;
}
