//===- Generalize.cpp - Witness shapes with independent dimensions --------===//
//
// Part of Loom. See Generalize.h for the method.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Generalize.h"

#include "loom/Superopt/RuleGen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>

#include <numeric>

using namespace loom;
using namespace loom::superopt;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

/// One dimension of one input the rule uses.
struct Slot {
  unsigned input; ///< index among the used inputs
  unsigned axis;
};

/// A rule, the inputs it uses (its slots: their dimensions), and a typing
/// of it at other shapes of those inputs.
class Restatement {
public:
  Restatement(Universe &u, const Graph &source, const Graph &target)
      : u(u) {
    llvm::SmallBitVector used = inputsUsedBy(source, target, u.numInputs());
    for (unsigned i = 0; i < u.numInputs(); ++i)
      if (used[i])
        inputs.push_back(i);
    src = source;
    tgt = target;
    for (unsigned k = 0; k < inputs.size(); ++k) {
      ArrayRef<int64_t> s = u.shapes().get(u.inputs()[inputs[k]].shape);
      for (unsigned d = 0; d < s.size(); ++d)
        slots.push_back({k, d});
    }
  }

  /// Whether the rule has a node whose attributes name a shape (a constant
  /// of fixed shape): such rules are kept as they are.
  bool hasFixedShapes() const {
    for (const Graph *g : {&src, &tgt})
      for (const Node &n : g->nodes)
        if (specOf(n.kind).attrFields & kAttrShape)
          return true;
    return false;
  }

  int64_t originalValue(const Slot &s) const {
    return u.shapes().get(u.inputs()[inputs[s.input]].shape)[s.axis];
  }

  /// Input shapes with slot i set to values[i].
  std::vector<Shape> shapesFor(ArrayRef<int64_t> values) const {
    std::vector<Shape> shapes(inputs.size());
    for (unsigned k = 0; k < inputs.size(); ++k)
      shapes[k].assign(u.shapes().get(u.inputs()[inputs[k]].shape).begin(),
                       u.shapes().get(u.inputs()[inputs[k]].shape).end());
    for (unsigned i = 0; i < slots.size(); ++i)
      shapes[slots[i].input][slots[i].axis] = values[i];
    return shapes;
  }

  /// Types both sides at \p values (one per slot), recomputing split sizes;
  /// on success the completed graphs, over the used inputs, are in
  /// \p source / \p target.
  bool typeAt(ArrayRef<int64_t> values, Graph &source, Graph &target) {
    std::vector<Shape> shapes = shapesFor(values);
    SmallVector<ShapeId, 32> inputShapes;
    for (const Input &in : u.inputs())
      inputShapes.push_back(in.shape);
    for (unsigned k = 0; k < inputs.size(); ++k)
      inputShapes[inputs[k]] = u.shapes().intern(shapes[k]);
    source = src;
    target = tgt;
    auto ts = u.typeGraphAt(source, inputShapes);
    auto tt = u.typeGraphAt(target, inputShapes);
    if (!ts || !tt) {
      llvm::consumeError(ts.takeError());
      llvm::consumeError(tt.takeError());
      return false;
    }
    for (auto [o, p] : llvm::zip(source.outputs, target.outputs))
      if (ts->shapes[o] != tt->shapes[p])
        return false;
    source = remap(source);
    target = remap(target);
    return true;
  }

  ArrayRef<Slot> allSlots() const { return slots; }
  /// The sides over the used inputs (shapes as in the generator).
  Graph sourceGraph() const { return remap(src); }
  Graph targetGraph() const { return remap(tgt); }
  /// The original value of every slot.
  std::vector<int64_t> originalValues() const {
    std::vector<int64_t> values;
    for (const Slot &s : slots)
      values.push_back(originalValue(s));
    return values;
  }

  /// Declarations of the used inputs at \p values.
  std::vector<InputDecl> declsFor(ArrayRef<int64_t> values) const {
    std::vector<Shape> shapes = shapesFor(values);
    std::vector<InputDecl> decls;
    for (unsigned k = 0; k < inputs.size(); ++k) {
      const Input &in = u.inputs()[inputs[k]];
      decls.push_back({in.name, shapes[k], in.role});
    }
    return decls;
  }

private:
  Graph remap(const Graph &g) const {
    unsigned n = u.numInputs(), m = inputs.size();
    auto map = [&](unsigned v) -> unsigned {
      if (v < n)
        return llvm::find(inputs, v) - inputs.begin();
      return v - n + m;
    };
    Graph r = g;
    for (Node &node : r.nodes)
      for (unsigned &v : node.operands)
        v = map(v);
    for (unsigned &o : r.outputs)
      o = map(o);
    return r;
  }

  Universe &u;
  SmallVector<unsigned, 8> inputs;
  Graph src, tgt;
  SmallVector<Slot, 16> slots;
};

/// Values a probe gives a part of a group: unlike any original dimension or
/// sum of a few of them.
constexpr int64_t kProbeValues[] = {61, 67, 71, 73, 79, 83, 89, 97,
                                    101, 103, 107, 109, 113, 127};
/// Final values of the groups: odd, hence sum-free (a concatenation of two
/// groups never has the value of a group).
constexpr int64_t kFinalValues[] = {5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25};

bool isFixed(int64_t value) { return value == 1 || value == 3; }

/// Proves \p src = \p tgt over a universe of just \p decls (as
/// `loom-rulegen --verify-rules` does for a rule of a file): numeric check,
/// then Z3 with the axioms of the original proof, then with all. Shape
/// attributes (constants) are taken from \p from's table.
std::optional<GeneralizedRule>
reprove(const Universe &from, std::vector<InputDecl> decls, Graph src,
        Graph tgt, const std::vector<Axiom> &axioms,
        const std::vector<std::string> &coreAxioms, const ProverOptions &po,
        uint64_t seed, std::string &reason) {
  std::shared_ptr<Universe> nu =
      Universe::createForInputs(from.mlir(), decls, seed);
  for (Graph *g : {&src, &tgt})
    for (Node &n : g->nodes)
      if (specOf(n.kind).attrFields & kAttrShape)
        n.attrs.shape = nu->shapes().intern(from.shapes().get(n.attrs.shape));
  for (const Graph *g : {&src, &tgt})
    if (auto t = nu->typeGraph(*g); !t) {
      reason = llvm::toString(t.takeError());
      return std::nullopt;
    }
  if (std::optional<std::string> cex =
          numericCounterexample(*nu, src, tgt, seed)) {
    reason = *cex;
    return std::nullopt;
  }
  ProofResult proof = proveFromAxioms(*nu, src, tgt, axioms, coreAxioms, po);
  if (proof.status != ProofStatus::Proved) {
    reason = "not proved: " + proof.reason;
    return std::nullopt;
  }
  return GeneralizedRule{std::move(nu), std::move(src), std::move(tgt),
                         std::move(proof.axioms)};
}

} // namespace

static GeneralizeResult tryGeneralize(Universe &u, const Graph &source,
                                          const Graph &target,
                                          const std::vector<Axiom> &axioms,
                                          const std::vector<std::string> &coreAxioms,
                                          const ProverOptions &po,
                                          uint64_t seed,
                                          std::mutex *universeMutex) {
  GeneralizeResult result;
  std::unique_lock<std::mutex> lock;
  if (universeMutex)
    lock = std::unique_lock<std::mutex>(*universeMutex);
  Restatement r(u, source, target);
  if (r.hasFixedShapes()) {
    result.reason = "has a constant of fixed shape";
    return result;
  }
  ArrayRef<Slot> slots = r.allSlots();
  // Groups of free slots, by original value.
  std::vector<SmallVector<unsigned, 8>> groups;
  {
    std::map<int64_t, unsigned> byValue;
    for (unsigned i = 0; i < slots.size(); ++i) {
      int64_t v = r.originalValue(slots[i]);
      if (isFixed(v))
        continue;
      auto [it, fresh] = byValue.try_emplace(v, groups.size());
      if (fresh)
        groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  std::vector<int64_t> values = r.originalValues();

  // Split groups while a part of one can take a fresh value. Parts are
  // tried smallest first; a part never holds the group's first slot, so
  // each 2-partition is tried once.
  Graph probeSrc, probeTgt;
  unsigned nextProbe = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    for (;;) {
      SmallVector<unsigned, 8> &group = groups[gi];
      unsigned n = group.size();
      if (n < 2 || n > 16 || nextProbe >= std::size(kProbeValues))
        break;
      std::optional<SmallVector<unsigned, 8>> part;
      for (unsigned size = 1; size < n && !part; ++size) {
        // Subsets of group[1..n) of this size, in lexicographic order.
        SmallVector<unsigned, 8> pick(size);
        std::iota(pick.begin(), pick.end(), 1u);
        for (;;) {
          std::vector<int64_t> trial = values;
          for (unsigned p : pick)
            trial[group[p]] = kProbeValues[nextProbe];
          if (r.typeAt(trial, probeSrc, probeTgt)) {
            part.emplace();
            for (unsigned p : pick)
              part->push_back(group[p]);
            break;
          }
          int k = size - 1;
          while (k >= 0 && pick[k] == n - size + k)
            --k;
          if (k < 0)
            break;
          ++pick[k];
          for (unsigned j = k + 1; j < size; ++j)
            pick[j] = pick[j - 1] + 1;
        }
      }
      if (!part)
        break;
      for (unsigned s : *part)
        values[s] = kProbeValues[nextProbe];
      ++nextProbe;
      SmallVector<unsigned, 8> rest;
      for (unsigned s : group)
        if (!llvm::is_contained(*part, s))
          rest.push_back(s);
      group = rest;
      groups.push_back(*part);
    }
  }

  // Distinct odd values per group, in slot order.
  if (groups.size() > std::size(kFinalValues)) {
    result.reason = "too many independent dimensions";
    return result;
  }
  llvm::sort(groups, [](const auto &a, const auto &b) { return a[0] < b[0]; });
  std::vector<int64_t> original = r.originalValues(), finalValues = original;
  for (unsigned gi = 0; gi < groups.size(); ++gi)
    for (unsigned s : groups[gi])
      finalValues[s] = kFinalValues[gi];
  if (finalValues == original) {
    result.reason = "dimensions already independent";
    return result;
  }
  Graph newSrc, newTgt;
  result.outcome = GeneralizeOutcome::NotReproved;
  if (!r.typeAt(finalValues, newSrc, newTgt)) {
    result.reason = "the generalised shapes do not type-check";
    return result;
  }
  std::vector<InputDecl> decls = r.declsFor(finalValues);
  if (lock.owns_lock())
    lock.unlock();
  // Re-prove at the new shapes, over a universe of just the rule's inputs.
  std::string why;
  result.rule = reprove(u, std::move(decls), std::move(newSrc),
                        std::move(newTgt), axioms, coreAxioms, po, seed, why);
  if (!result.rule) {
    result.reason = "not re-proved at the general shapes: " + why;
    return result;
  }
  result.outcome = GeneralizeOutcome::Generalized;
  return result;
}

GeneralizeResult superopt::generalizeRule(
    Universe &u, const Graph &source, const Graph &target,
    const std::vector<Axiom> &axioms,
    const std::vector<std::string> &coreAxioms, const ProverOptions &po,
    uint64_t seed, std::mutex *universeMutex) {
  GeneralizeResult result = tryGeneralize(u, source, target, axioms,
                                          coreAxioms, po, seed, universeMutex);
  if (result.outcome == GeneralizeOutcome::Generalized)
    return result;
  // Kept at its shapes: it must still be provable on its own, as a reader
  // of the rules file re-verifies it (`loom-rulegen --verify-rules`).
  std::vector<InputDecl> decls;
  Graph src, tgt;
  {
    std::unique_lock<std::mutex> lock;
    if (universeMutex)
      lock = std::unique_lock<std::mutex>(*universeMutex);
    Restatement r(u, source, target);
    decls = r.declsFor(r.originalValues());
    src = r.sourceGraph();
    tgt = r.targetGraph();
  }
  std::string why;
  std::optional<GeneralizedRule> alone = reprove(
      u, std::move(decls), std::move(src), std::move(tgt), axioms, coreAxioms,
      po, seed, why);
  if (!alone) {
    result.outcome = GeneralizeOutcome::NotProvableAlone;
    result.reason += "; at its own shapes: " + why;
  }
  return result;
}
