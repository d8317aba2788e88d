//===- Rule.h - Graph substitutions and their loader ------------*- C++ -*-===//
//
// Part of Loom. A rule is a pair of patterns, source and target: small tg
// graphs over the same pattern variables (the arguments of the rule's
// functions), with one or more outputs each (TASO's multi-output
// substitutions, e.g. two matmuls sharing an input and one matmul on
// concatenated weights followed by a split). Pattern ops carry the concrete
// "witness" shapes at which the rule generator proved the rule; the matcher
// (Matcher.h) maps them onto the shapes of the graph it rewrites.
//
// Rule files are what loom-rulegen writes (docs/Superopt/Search.md, "Rule
// files"): a module of nested modules
//
//   module @rule_12 attributes {loom.status = "proved", loom.axioms = [...]} {
//     func.func @source(%x: tensor<4x4xf32>, ...) -> (...) { ... }
//     func.func @target(%x: tensor<4x4xf32>, ...) -> (...) { ... }
//   }
//
// Only rules whose status is "proved" are loaded (unless told otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_RULE_H
#define LOOM_SEARCH_RULE_H

#include "loom/Search/SearchContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>
#include <vector>

namespace loom::search {

/// A value of a pattern: variable `index` (op < 0) or result `index` of
/// pattern op `op`.
struct PatternRef {
  int32_t op = -1;
  uint32_t index = 0;
  static PatternRef var(unsigned i) { return {-1, i}; }
  static PatternRef result(unsigned op, unsigned i) { return {int32_t(op), i}; }
  bool isVar() const { return op < 0; }
  bool operator==(const PatternRef &o) const {
    return op == o.op && index == o.index;
  }
};

struct PatternOp {
  OpId op = 0;
  llvm::SmallVector<PatternRef, 2> operands;
  /// The witness result types.
  llvm::SmallVector<mlir::RankedTensorType, 1> types;
  /// For constants: how they match and instantiate at other shapes.
  ConstKind constKind = ConstKind::None;
  /// For ConstKind::Tagged: the generator's constant family (`const_one`,
  /// `const_imm`, `const_iconv`, `const_pool`).
  std::string tag;
};

struct GraphPattern {
  llvm::SmallVector<mlir::RankedTensorType, 4> varTypes;
  /// In topological order; every op reaches an output.
  std::vector<PatternOp> ops;
  llvm::SmallVector<PatternRef, 2> outputs;

  /// Pattern values are numbered: variables first, then op results.
  unsigned numValues() const { return numValuesCached; }
  unsigned valueIndex(PatternRef r) const {
    return r.isVar() ? r.index : resultBase[r.op] + r.index;
  }
  mlir::RankedTensorType typeOf(PatternRef r) const {
    return r.isVar() ? varTypes[r.index] : ops[r.op].types[r.index];
  }
  bool usesVar(unsigned i) const;
  /// Fills the derived numbering; call after building.
  void finalize();

private:
  llvm::SmallVector<unsigned, 4> resultBase;
  unsigned numValuesCached = 0;
};

/// One step of the plan that matches a source pattern (see Matcher.h).
struct MatchStep {
  enum class Kind : uint8_t {
    Root,    ///< any graph node of the op's shape class
    Definer, ///< the node defining the (bound) result `via` of the op
    Join,    ///< a user of the (bound) operand `via` of the op
  };
  Kind kind;
  unsigned op;
  unsigned via = 0;
};

struct Rule {
  /// `rule_12`, or `rule_12~` for the reverse direction.
  std::string name;
  unsigned id = 0;
  bool reversed = false;
  mlir::LocationAttr loc;
  GraphPattern source, target;
  std::vector<MatchStep> plan;
  /// The source has several outputs (TENSAT's multi-pattern rules, which
  /// equality saturation applies only in its first iterations).
  bool multiPattern = false;
};

struct RuleLoadOptions {
  /// Also use every rule from target to source when that direction is
  /// applicable (its source binds every variable its target uses).
  bool bothDirections = true;
  /// Load only rules with loom.status = "proved".
  bool requireProved = true;
};

struct RuleSet {
  std::vector<Rule> rules;
  std::string path;
  /// Rule modules in the file, and those skipped for their status.
  unsigned numRuleModules = 0;
  unsigned numUnproved = 0;
  /// Directions that cannot be used as a rewrite (e.g. a source output that
  /// is a bare variable).
  unsigned numDirectionsSkipped = 0;
};

/// Which rules of a set can match a graph. A rule's source matches only
/// where the graph has a node of every shape class its ops have (a tagged
/// constant excepted: it matches by op name), so the rules are indexed by
/// their root's class and carry the classes they need; a search asks for
/// the candidates once per graph (backtracking) or iteration (eqsat) and
/// matches only those, in the set's order, so its results are those of
/// matching every rule (RuleIndexTest). What it saves grows with the rule
/// set: most of the K=4 set's 17,818 rules need an op the model lacks.
class RuleIndex {
public:
  /// Without `enabled`, every rule is a candidate (the unindexed matcher,
  /// for comparisons: the searches' `ruleIndex` option).
  RuleIndex(const SearchContext &sc, const RuleSet &rules, bool enabled = true);

  /// The rules whose every needed class `hasClass` says the graph has, in
  /// the set's order (all of them when not enabled).
  void candidates(llvm::function_ref<bool(uint32_t)> hasClass,
                  std::vector<const Rule *> &out) const;

private:
  const RuleSet &rules;
  bool enabled;
  /// Per rule (by position): the shape classes its source needs.
  std::vector<llvm::SmallVector<uint32_t, 4>> needs;
  /// Rule positions by the class of their first match step's op; rules
  /// whose root is a tagged constant in `anyRoot`.
  std::map<uint32_t, std::vector<uint32_t>> byRoot;
  std::vector<uint32_t> anyRoot;
};

/// Loads the rules of `module`. Malformed rules are errors (diagnostics at
/// the rule's location).
mlir::FailureOr<RuleSet> loadRules(SearchContext &sc, mlir::ModuleOp module,
                                   const RuleLoadOptions &options);
/// Parses `path` (MLIR text or bytecode) and loads its rules.
mlir::FailureOr<RuleSet> loadRules(SearchContext &sc, llvm::StringRef path,
                                   const RuleLoadOptions &options);

/// The rule generator's default rule set in its bytecode form, which loads
/// faster than the text beside it (the CMake setting
/// LOOM_DEFAULT_RULES_BYTECODE; empty when unset).
std::string defaultRulesPath();

} // namespace loom::search

#endif // LOOM_SEARCH_RULE_H
