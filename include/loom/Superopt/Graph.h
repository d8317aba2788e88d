//===- Graph.h - Small tensor graphs of the rule generator ------*- C++ -*-===//
//
// Part of Loom. The generator's compact graph representation and the
// universe it is enumerated in:
//
//   * an OpDef is an enumerable operator instance (`conv_relu`, `concat1`):
//     a kind with fixed attributes, named as --ops names it;
//   * an Input is a named graph input with a shape and a role;
//   * a Universe holds the op set, the inputs, the shape table and the fixed
//     random inputs of the fingerprint domain;
//   * a Graph is a list of nodes over value ids: ids [0, numInputs) are the
//     universe's inputs, then each node's results in order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_GRAPH_H
#define LOOM_SUPEROPT_GRAPH_H

#include "loom/Superopt/OpSpec.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::superopt {

/// An enumerable operator instance.
struct OpDef {
  std::string name;
  OpKind kind;
  OpAttrs attrs;
};

/// A graph input.
struct Input {
  std::string name;
  ShapeId shape;
  Role role;
  /// Inputs of one group are interchangeable (same shape and role); rules
  /// equal up to a renaming within groups are duplicates.
  unsigned group;
};

/// One node of a graph: an op application over value ids.
struct Node {
  OpKind kind;
  OpAttrs attrs;
  llvm::SmallVector<unsigned, 5> operands;
};

/// A small graph. Value ids: inputs first (universe numbering), then the
/// results of each node in order. Outputs are value ids (for an enumerated
/// graph: every result no node consumes).
struct Graph {
  llvm::SmallVector<Node, 4> nodes;
  llvm::SmallVector<unsigned, 4> outputs;

  unsigned numOps() const { return nodes.size(); }
};

/// The inputs (of \p numInputs) that \p a or \p b reads or returns.
llvm::SmallBitVector inputsUsedBy(const Graph &a, const Graph &b,
                                  unsigned numInputs);

/// Value ids of the results of node \p n of \p g, given \p numInputs.
unsigned firstResultOf(const Graph &g, unsigned n, unsigned numInputs);

/// Appends the nodes of \p src to \p dst (both over the same \p numInputs
/// inputs), reusing structurally equal nodes dst already has. Returns, for
/// every value id of src, its id in dst.
llvm::SmallVector<unsigned, 16> mergeGraph(Graph &dst, const Graph &src,
                                           unsigned numInputs,
                                           const ShapeTable &shapes);

/// Shapes, roles and split information of every value of a graph, or an
/// error naming the first invalid node.
struct GraphTypes {
  llvm::SmallVector<ShapeId, 12> shapes;
  llvm::SmallVector<Role, 12> roles;
  llvm::SmallVector<SplitInfo, 12> splits;
};

/// A graph input to create a universe with.
struct InputDecl {
  std::string name;
  Shape shape;
  Role role;
};

/// A parameter-preparation expression over the inputs, such as
/// bn_scale(gamma, var) or scale_filter(f1, bn_scale(gamma, var)): it
/// computes on parameters only, so a compiler folds it away. The enumeration
/// offers each as an operand without counting its ops against K (their
/// union in a graph is bounded by P instead).
struct ParamExpr {
  /// Nodes over universe inputs; outputs[0] is the expression's value.
  Graph graph;
  ShapeId shape;
  Role role;
  /// Which param nodes it contains (bit i: paramNodeKeys()[i]).
  uint64_t nodeMask = 0;
};

/// Options selecting the operator set and the inputs.
struct UniverseOptions {
  /// Comma-separated op names, "default" or "all".
  std::string ops = "default";
  uint64_t seed = 1;
  /// Largest number of parameter-preparation ops in a graph (P).
  unsigned maxParamOps = 3;
};

/// The operator set, the inputs, and the fingerprint inputs.
class Universe {
public:
  /// Builds the universe for \p options; an error names a bad op.
  static llvm::Expected<std::unique_ptr<Universe>>
  create(mlir::MLIRContext *context, const UniverseOptions &options);

  /// A universe without operators over the given inputs (to type, evaluate
  /// and prove rules read from a file). Inputs of one shape and role are
  /// interchangeable.
  static std::unique_ptr<Universe> createForInputs(mlir::MLIRContext *context,
                                                   llvm::ArrayRef<InputDecl>
                                                       inputs,
                                                   uint64_t seed);

  /// Every op name --ops accepts, with a description, for --help / docs.
  static std::vector<std::pair<std::string, std::string>> allOpNames();
  /// The names in the default set.
  static llvm::SmallVector<llvm::StringRef> defaultOpNames();

  mlir::MLIRContext *mlir() const { return context; }
  ShapeTable &shapes() { return shapeTable; }
  const ShapeTable &shapes() const { return shapeTable; }
  SpecContext specContext() { return SpecContext{context, &shapeTable}; }

  llvm::ArrayRef<OpDef> ops() const { return opDefs; }
  llvm::ArrayRef<Input> inputs() const { return inputList; }
  unsigned numInputs() const { return inputList.size(); }
  uint64_t seed() const { return seedValue; }
  /// The op names of the set, in canonical order, comma-separated.
  std::string opList() const;

  /// The parameter expressions of the op set (see ParamExpr).
  llvm::ArrayRef<ParamExpr> paramExprs() const { return params; }
  unsigned maxParamOps() const { return maxParams; }

  /// Fixed random fingerprint value of input \p i.
  const interp::Tensor<interp::ModPDomain> &fingerprintInput(unsigned i) const {
    return fpInputs[i];
  }

  /// Result shapes of \p kind on operands of \p shapes (memoised; completes
  /// nothing: split sizes must be set). Not thread-safe.
  std::optional<llvm::SmallVector<ShapeId, 2>>
  infer(OpKind kind, const OpAttrs &attrs, llvm::ArrayRef<ShapeId> shapes);

  /// Shapes, roles and split information of \p g's values. Fails on an
  /// invalid graph.
  llvm::Expected<GraphTypes> typeGraph(const Graph &g);
  /// Like typeGraph, with input i of shape \p inputShapes[i] instead of the
  /// universe's; split sizes are recomputed from the split information (as
  /// the enumeration derives them) and stored in \p g.
  llvm::Expected<GraphTypes> typeGraphAt(Graph &g,
                                         llvm::ArrayRef<ShapeId> inputShapes);

  /// Evaluates \p g over domain D with \p inputs (one per universe input).
  template <class D>
  std::vector<interp::Tensor<D>>
  evaluate(const Graph &g, llvm::ArrayRef<interp::Tensor<D>> inputs) const;

  /// A one-line description of \p g (outputs as nested terms).
  std::string describe(const Graph &g) const;

  /// Draws the fingerprint inputs (after the inputs are set).
  void drawFingerprintInputs();

private:
  Universe(mlir::MLIRContext *context) : context(context) {}
  /// typeGraph / typeGraphAt: \p complete (when set, \p g itself) receives
  /// the recomputed split sizes.
  llvm::Expected<GraphTypes> typeGraphImpl(const Graph &g,
                                           llvm::ArrayRef<ShapeId> inputShapes,
                                           Graph *complete);

  mlir::MLIRContext *context;
  ShapeTable shapeTable;
  std::vector<OpDef> opDefs;
  std::vector<Input> inputList;
  std::vector<interp::Tensor<interp::ModPDomain>> fpInputs;
  std::vector<ParamExpr> params;
  unsigned maxParams = 0;
  uint64_t seedValue = 1;

  void buildParamExprs();
  struct InferMemo;
  std::shared_ptr<InferMemo> memo;
};

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_GRAPH_H
