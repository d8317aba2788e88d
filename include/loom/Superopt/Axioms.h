//===- Axioms.h - Operator axioms of the rule generator ---------*- C++ -*-===//
//
// Part of Loom. The properties of the operators that the prover may use,
// written once, in a small textual language, in lib/Superopt/Axioms.cpp.
// Each axiom is an equation between two terms over typed variables:
//
//   matmul-concat-cols: matmul(x, concat{axis=1}(y, z))
//                     = concat{axis=1}(matmul(x, y), matmul(x, z))
//   where x:[a,b] y:[b,c] z:[b,d]
//
// Terms apply operator kinds (OpSpec.h names) with attributes in braces
// (`axis`, `relu`, `bias`, `sizes`, `kernel`, `shape`; values are integers,
// dimension symbols, sums and differences of those, or lists), take result
// `#k` of a multi-result op, and end in variables. A variable's shape is a
// list of dimension expressions, optionally ending in `*R` (any number of
// further dimensions, the same wherever R appears), or a whole-shape
// variable `S`. `v:[c]>=0` marks a variable whose values are non-negative.
// A variable that appears in neither side only fixes shapes (a witness).
//
// An axiom claims: for every assignment of shapes that makes the left side
// well-typed, the right side is well-typed and equal to it, element by
// element, for all real-valued inputs. Two things are done with it:
//
//   * the prover (Prover.h) instantiates it at every shape of the universe
//     and asserts it, universally quantified over tensors of those shapes;
//   * the checker (AxiomChecker.h) proves it by symbolic evaluation of both
//     sides with the interpreter's kernels at every shape up to a bound.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_AXIOMS_H
#define LOOM_SUPEROPT_AXIOMS_H

#include "loom/Superopt/Graph.h"
#include "loom/Superopt/OpSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::superopt {

/// A linear expression over dimension symbols: sum of coefficient * symbol
/// plus a constant.
struct DimExpr {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> terms;
  int64_t constant = 0;
  /// The symbol, if the expression is exactly one symbol.
  std::optional<unsigned> symbol() const;
  int64_t eval(llvm::ArrayRef<int64_t> symbols) const;
};

/// The shape of an axiom variable.
struct ShapePattern {
  llvm::SmallVector<DimExpr, 4> dims;
  /// A list variable standing for the trailing dimensions (`*R`), or -1.
  int rest = -1;
  bool nonNegative = false;
};

/// An attribute value of a term: a dimension expression, a list of them, or
/// (for `shape`) a shape pattern.
struct AttrTemplate {
  std::optional<DimExpr> axis;
  std::optional<bool> relu, bias;
  std::optional<std::array<DimExpr, 2>> sizes, kernel;
  std::optional<ShapePattern> shape;
};

/// A term of an axiom.
struct Term {
  bool isVar = false;
  unsigned var = 0;
  OpKind kind;
  AttrTemplate attrs;
  unsigned result = 0;
  llvm::SmallVector<std::unique_ptr<Term>, 3> args;
};

/// An axiom schema.
struct Axiom {
  std::string name;
  std::string doc;
  std::string text; ///< the equation as written
  std::unique_ptr<Term> lhs, rhs;
  std::vector<std::string> vars;
  std::vector<ShapePattern> varShapes;
  std::vector<std::string> symbols;
  /// Values each symbol takes in the bounded check.
  std::vector<llvm::SmallVector<int64_t, 4>> symbolRanges;
  /// Whether a `with` clause gave the range (then it also bounds the
  /// symbol when the prover instantiates the axiom).
  std::vector<bool> symbolDeclared;
  std::vector<std::string> lists;
  /// Dimension lists each list variable takes in the bounded check.
  std::vector<llvm::SmallVector<llvm::SmallVector<int64_t, 4>, 4>> listRanges;
};

/// A term with every shape and attribute concrete.
struct ConcreteTerm {
  bool isVar = false;
  unsigned var = 0;
  OpKind kind;
  OpAttrs attrs;
  unsigned result = 0;
  ShapeId shape = 0;
  llvm::SmallVector<std::shared_ptr<const ConcreteTerm>, 3> args;
};

/// An axiom at concrete shapes.
struct AxiomInstance {
  unsigned axiom;
  std::vector<ShapeId> varShapes;
  std::shared_ptr<const ConcreteTerm> lhs, rhs;
};

/// Parses one axiom: `name: lhs = rhs where var:shape ... [with sym in
/// {..} | a..b ...]`. \p doc documents it.
llvm::Expected<Axiom> parseAxiom(llvm::StringRef text, llvm::StringRef doc);

/// Parses \p text (documented by \p doc) and appends it to \p axioms; an
/// error when it does not parse or its name is already used there.
llvm::Error appendAxiom(std::vector<Axiom> &axioms, llvm::StringRef text,
                        llvm::StringRef doc);

/// The built-in axioms, parsed once.
const std::vector<Axiom> &builtinAxioms();
/// A fresh copy of the built-in axioms.
std::vector<Axiom> parseBuiltinAxioms();

/// Evaluates a concrete term with the given variable values.
template <class D>
interp::Tensor<D> evaluateTerm(const ConcreteTerm &t, const ShapeTable &shapes,
                               llvm::ArrayRef<interp::Tensor<D>> vars);

/// Concrete instances of \p axiom whose variables have shapes in
/// \p varShapeSet, free symbols ranging over [1, maxFreeDim]; both sides
/// typed with \p u (which interns new shapes).
std::vector<AxiomInstance> instantiateAxiom(const Axiom &axiom, unsigned index,
                                            Universe &u,
                                            llvm::ArrayRef<ShapeId> varShapeSet,
                                            int64_t maxFreeDim);

/// Instances of \p axiom at every assignment of its symbols and list
/// variables from their bounded-check ranges.
std::vector<AxiomInstance> boundedInstances(const Axiom &axiom, unsigned index,
                                            Universe &u);

/// `matmul(x, concat{axis=1}(y, z))` for a concrete term.
std::string termString(const ConcreteTerm &t, const Axiom &axiom,
                       const ShapeTable &shapes);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_AXIOMS_H
