//===- RuleSet.h - Rule files: writing, loading, importing ------*- C++ -*-===//
//
// Part of Loom. A rules file is an MLIR module holding one nested module per
// rule (docs/Superopt/RuleFormat.md):
//
//   module attributes {loom.rulegen = {...}} {
//     module @rule_12 attributes {loom.status = "proved",
//                                 loom.axioms = ["matmul-add-right"], ...} {
//       func.func @source(%arg0: tensor<2x4xf32> {loom.name = "x1", ...},
//                         ...) -> tensor<2x4xf32> { ... }
//       func.func @target(<the same arguments>) -> tensor<2x4xf32> { ... }
//     }
//   }
//
// The source and the target compute equal results (result i equals result
// i) for all inputs; a rule may be applied in either direction.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_RULESET_H
#define LOOM_SUPEROPT_RULESET_H

#include "loom/Superopt/Graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::superopt {

/// One rule of a rules file, as loaded.
struct Rule {
  std::string name;
  mlir::ModuleOp module;
  mlir::func::FuncOp source, target;
  /// "proved" for every rule loom-rulegen writes.
  std::string status;
  /// Axioms the proof used.
  std::vector<std::string> axioms;
  unsigned sourceOps = 0, targetOps = 0;
};

/// The rules of \p rules, checking the structure of the file; on a malformed
/// file, emits a diagnostic at the offending op and fails.
mlir::FailureOr<std::vector<Rule>> loadRules(mlir::ModuleOp rules);

/// A rule to write.
struct RuleRecord {
  Graph source, target;
  std::string status = "proved";
  std::vector<std::string> axioms;
  /// The universe the graphs are over when not the generator's (a rule
  /// restated at its own witness shapes, Generalize.h).
  std::shared_ptr<Universe> universe;
};

/// Builds the rules module; \p info becomes the `loom.rulegen` attribute.
mlir::OwningOpRef<mlir::ModuleOp>
emitRules(Universe &u, llvm::ArrayRef<RuleRecord> rules,
          mlir::DictionaryAttr info);

/// The arguments of a rule function as universe inputs: names from
/// `loom.name` (else argN), roles from `loom.role` (else activation).
std::vector<InputDecl> inputsOfRuleFunction(mlir::func::FuncOp fn);

/// Reads \p fn (over the universe inputs, in argument order) back into a
/// graph; emits a diagnostic and fails on an op the generator does not
/// know.
mlir::FailureOr<Graph> importGraph(mlir::func::FuncOp fn, Universe &u);

/// Path of the default rule set, generated in the build (<build>/rules/
/// default.mlir; CMake LOOM_DEFAULT_RULES).
std::string defaultRulesPath();

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_RULESET_H
