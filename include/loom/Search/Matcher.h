//===- Matcher.h - Matching rule sources, instantiating targets -*- C++ -*-===//
//
// Part of Loom. One matcher serves both search engines: it is a template
// over a graph view (a term graph, where a value has one defining node, or
// an e-graph, where an e-class has many), so that both engines apply the
// same rules in the same way.
//
// Matching at real shapes. A rule's ops carry witness shapes (e.g. 4x4
// matrices); the graph has real ones (128x768). The matcher does not
// require the witness shapes. It unifies every witness dimension with the
// real dimension at the same place, for every pattern value (variables and
// op results) and every shape-carrying attribute (split sizes, slice
// bounds, resize sizes): each witness value must map to one real value
// throughout the match, 0 and 1 map only to themselves (they change the
// meaning of broadcasting and slicing), and ranks and element types must
// agree. Other attributes (axes, permutations, strides, pads, kernel sizes
// of pooling and enlarge, activations) must be equal, and so must the
// spatial dims of convolution filters, which go with strides and pads. The
// target is then instantiated through the same mapping, its result types are
// recomputed with the tg shape rules, and the rewrite is rejected unless every
// target op is valid, agrees with the mapped witness types where those are
// fully mapped, and the outputs have exactly the matched values' types.
//
// Why this is sound: the generator proves a rule over uninterpreted tensors
// with shape-generic axioms, so the rule holds at every shape where both
// sides are well typed and the shape-carrying attributes relate to the
// tensor dimensions as they do at the witness. The mapping preserves every
// equality between witness dimensions and attribute values (one witness
// value, one real value), and type inference checks the rest; a mapping
// the witness does not support (a conflict) only loses a match. See
// docs/Superopt/Search.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_MATCHER_H
#define LOOM_SEARCH_MATCHER_H

#include "loom/Search/Rule.h"
#include "loom/Search/SearchContext.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace loom::search {

/// A consistent mapping from witness dimension values to real ones.
class DimMap {
public:
  /// Records witness -> real; false on a conflict.
  bool unify(int64_t witness, int64_t real) {
    if (witness == 0 || witness == 1)
      return real == witness;
    for (auto &[w, r] : pairs)
      if (w == witness)
        return r == real;
    pairs.push_back({witness, real});
    return true;
  }
  /// The real value of `witness`, if known (0 and 1 map to themselves).
  std::optional<int64_t> map(int64_t witness) const {
    if (witness == 0 || witness == 1)
      return witness;
    for (auto &[w, r] : pairs)
      if (w == witness)
        return r;
    return std::nullopt;
  }
  size_t mark() const { return pairs.size(); }
  void undo(size_t m) { pairs.resize(m); }
  llvm::ArrayRef<std::pair<int64_t, int64_t>> entries() const { return pairs; }

private:
  llvm::SmallVector<std::pair<int64_t, int64_t>, 12> pairs;
};

/// Unifies the dims of `witness` with those of `real` (same rank and
/// element type required).
bool unifyType(DimMap &dims, mlir::RankedTensorType witness, mlir::Type real);

/// A match of a rule's source in a graph whose values are `Value`s.
template <class Value> struct Match {
  llvm::SmallVector<Value, 4> vars;
  llvm::SmallVector<bool, 4> varBound;
  /// The graph values of the source outputs, in order.
  llvm::SmallVector<Value, 2> outputs;
  /// The graph node each source op matched.
  llvm::SmallVector<uint32_t, 4> nodes;
  DimMap dims;
};

/// A rule's target instantiated at real shapes.
struct Instance {
  struct Op {
    OpId op;
    /// Variables (bound by the match) or results of earlier ops here.
    llvm::SmallVector<PatternRef, 2> operands;
    llvm::SmallVector<mlir::Type, 1> types;
    double cost = 0;
  };
  std::vector<Op> ops;
  llvm::SmallVector<PatternRef, 2> outputs;
};

/// Instantiates rule targets; memoised on (rule, variable types, mapping).
class Instantiator {
public:
  explicit Instantiator(SearchContext &sc) : sc(sc) {}
  /// The target of `rule` at the shapes of a match, or null when it is not
  /// valid there or its outputs would not have `outputTypes`.
  const Instance *instantiate(const Rule &rule,
                              llvm::ArrayRef<mlir::Type> varTypes,
                              const DimMap &dims,
                              llvm::ArrayRef<mlir::Type> outputTypes);
  /// The target of `rule` at the types of match `m` in `view`: its bound
  /// variables' types (null for the unbound ones) and its outputs'.
  template <class View>
  const Instance *instantiate(const Rule &rule, const View &view,
                              const Match<typename View::Value> &m) {
    llvm::SmallVector<mlir::Type, 4> varTypes;
    for (auto [v, bound] : llvm::zip(m.vars, m.varBound))
      varTypes.push_back(bound ? view.typeOf(v) : mlir::Type());
    llvm::SmallVector<mlir::Type, 2> outputTypes;
    for (const typename View::Value &v : m.outputs)
      outputTypes.push_back(view.typeOf(v));
    return instantiate(rule, varTypes, m.dims, outputTypes);
  }
  size_t numRejected() const { return rejected; }

private:
  std::optional<Instance> build(const Rule &rule,
                                llvm::ArrayRef<mlir::Type> varTypes,
                                const DimMap &dims,
                                llvm::ArrayRef<mlir::Type> outputTypes);
  struct KeyHash {
    size_t operator()(const std::vector<int64_t> &k) const;
  };
  SearchContext &sc;
  std::unordered_map<std::vector<int64_t>, std::optional<Instance>, KeyHash>
      memo;
  size_t rejected = 0;
};

/// Finds the matches of rule sources in a graph view. `View` provides:
///
///   using Value = ...;                        // a graph value
///   mlir::Type typeOf(Value) const;
///   bool same(Value, Value) const;
///   OpId opOf(uint32_t node) const;
///   unsigned numOperands(uint32_t node) const;
///   Value operand(uint32_t node, unsigned i) const;
///   Value result(uint32_t node, unsigned i) const;
///   void forEachNodeOfClass(uint32_t shapeClass, F f) const;  // f(node)
///   void forEachDefiner(Value, F f) const;     // f(node, resultIndex)
///   void forEachUser(Value, F f) const;        // f(node)
///
/// Callbacks return false to stop the enumeration.
template <class View> class PatternMatcher {
public:
  using Value = typename View::Value;
  using MatchT = Match<Value>;

  PatternMatcher(SearchContext &sc, const View &view) : sc(sc), view(view) {}

  /// Calls `fn(const MatchT &)` for every match of `rule.source`; stops
  /// when fn returns false. Returns false when stopped.
  template <class Fn> bool forEachMatch(const Rule &rule, Fn &&fn) {
    this->rule = &rule;
    const GraphPattern &p = rule.source;
    binding.assign(p.numValues(), Value());
    bound.assign(p.numValues(), 0);
    opNodes.assign(p.ops.size(), ~0u);
    trail.clear();
    m.dims = DimMap();
    callback = [&](const MatchT &match) { return fn(match); };
    return step(0);
  }

  /// Like forEachMatch, but only matches whose first (root) op is `node`.
  template <class Fn>
  bool forEachMatchAt(const Rule &rule, uint32_t node, Fn &&fn) {
    this->rule = &rule;
    const GraphPattern &p = rule.source;
    binding.assign(p.numValues(), Value());
    bound.assign(p.numValues(), 0);
    opNodes.assign(p.ops.size(), ~0u);
    trail.clear();
    m.dims = DimMap();
    callback = [&](const MatchT &match) { return fn(match); };
    return tryOp(rule.plan[0].op, node, 0);
  }

private:
  bool step(unsigned k) {
    const GraphPattern &p = rule->source;
    if (k == rule->plan.size())
      return emit();
    const MatchStep &s = rule->plan[k];
    const PatternOp &pop = p.ops[s.op];
    switch (s.kind) {
    case MatchStep::Kind::Root: {
      bool go = true;
      view.forEachNodeOfClass(sc.op(pop.op).shapeClass, [&](uint32_t node) {
        go = tryOp(s.op, node, k);
        return go;
      });
      return go;
    }
    case MatchStep::Kind::Definer: {
      Value v = binding[p.valueIndex(PatternRef::result(s.op, s.via))];
      bool go = true;
      view.forEachDefiner(v, [&](uint32_t node, unsigned result) {
        if (result == s.via)
          go = tryOp(s.op, node, k);
        return go;
      });
      return go;
    }
    case MatchStep::Kind::Join: {
      Value v = binding[p.valueIndex(pop.operands[s.via])];
      bool go = true;
      view.forEachUser(v, [&](uint32_t node) {
        go = tryOp(s.op, node, k);
        return go;
      });
      return go;
    }
    }
    return true;
  }

  /// Binds pattern value `index` to `v`, unifying its type.
  bool bind(unsigned index, mlir::RankedTensorType witness, Value v) {
    if (bound[index])
      return view.same(binding[index], v);
    if (!unifyType(m.dims, witness, view.typeOf(v)))
      return false;
    bound[index] = 1;
    binding[index] = v;
    trail.push_back(index);
    return true;
  }

  void undo(size_t trailMark, size_t dimMark) {
    while (trail.size() > trailMark) {
      bound[trail.back()] = 0;
      trail.pop_back();
    }
    m.dims.undo(dimMark);
  }

  /// Tries pattern op `k` at graph node `node`, then the steps after `step`.
  bool tryOp(unsigned k, uint32_t node, unsigned stepIndex) {
    const GraphPattern &p = rule->source;
    const PatternOp &pop = p.ops[k];
    for (uint32_t other : opNodes)
      if (other == node)
        return true; // one graph node per pattern op
    OpId gop = view.opOf(node);
    const OpInfo &pi = sc.op(pop.op), &gi = sc.op(gop);
    if (pop.constKind == ConstKind::Tagged) {
      if (!gi.isOp() || gi.name != pi.name)
        return true;
    } else if (pi.shapeClass != gi.shapeClass) {
      return true;
    }
    unsigned n = pop.operands.size();
    if (view.numOperands(node) != n)
      return true;

    size_t trailMark = trail.size(), dimMark = m.dims.mark();
    for (auto [w, r] : llvm::zip(pi.shapeValues, gi.shapeValues))
      if (!m.dims.unify(w, r)) {
        undo(trailMark, dimMark);
        return true;
      }
    for (unsigned i = 0; i < pop.types.size(); ++i)
      if (!bind(p.valueIndex(PatternRef::result(k, i)), pop.types[i],
                view.result(node, i))) {
        undo(trailMark, dimMark);
        return true;
      }
    if (pop.constKind == ConstKind::Tagged &&
        !sc.isTaggedConstant(gop, pop.tag)) {
      undo(trailMark, dimMark);
      return true;
    }

    opNodes[k] = node;
    bool go = true;
    bool swap = pi.commutative && n == 2;
    for (unsigned perm = 0; perm < (swap ? 2u : 1u) && go; ++perm) {
      size_t innerTrail = trail.size(), innerDims = m.dims.mark();
      bool ok = true;
      for (unsigned j = 0; j < n && ok; ++j) {
        PatternRef r = pop.operands[j];
        unsigned gj = perm ? 1 - j : j;
        ok = bind(p.valueIndex(r), p.typeOf(r), view.operand(node, gj));
      }
      if (ok && pi.literalKernel && n >= 2) {
        auto real = llvm::cast<mlir::RankedTensorType>(
            view.typeOf(view.operand(node, 1)));
        mlir::RankedTensorType witness = p.typeOf(pop.operands[1]);
        ok = real.getRank() == 4 && witness.getRank() == 4 &&
             real.getDimSize(2) == witness.getDimSize(2) &&
             real.getDimSize(3) == witness.getDimSize(3);
      }
      if (ok)
        go = step(stepIndex + 1);
      undo(innerTrail, innerDims);
    }
    opNodes[k] = ~0u;
    undo(trailMark, dimMark);
    return go;
  }

  bool emit() {
    const GraphPattern &p = rule->source;
    m.vars.assign(p.varTypes.size(), Value());
    m.varBound.assign(p.varTypes.size(), false);
    for (unsigned i = 0; i < p.varTypes.size(); ++i)
      if (bound[i]) {
        m.vars[i] = binding[i];
        m.varBound[i] = true;
      }
    m.outputs.clear();
    for (PatternRef r : p.outputs)
      m.outputs.push_back(binding[p.valueIndex(r)]);
    m.nodes.assign(opNodes.begin(), opNodes.end());
    return callback(m);
  }

  SearchContext &sc;
  const View &view;
  const Rule *rule = nullptr;
  std::vector<Value> binding;
  std::vector<uint8_t> bound;
  std::vector<uint32_t> opNodes;
  std::vector<unsigned> trail;
  MatchT m;
  std::function<bool(const MatchT &)> callback;
};

} // namespace loom::search

#endif // LOOM_SEARCH_MATCHER_H
