//===- GraphImporter.h - The state of one ONNX import -----------*- C++ -*-===//
//
// Part of Loom. The importer of one ONNX graph: its values by name (IR
// values, tensors known at import time, or both), the weights written so
// far, and the module being built. ImportONNX.cpp walks the graph and builds
// the function; NodeContext.cpp keeps the values and gives each handler its
// NodeContext.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H
#define LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H

#include "Importer.h"
#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Dialect/TG/IR/TGBoundOp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::onnx_to_tg {

/// A dimension of a value whose valid length is known only at run time:
/// the value is padded to its static size along `dim`, and `length` (a
/// rank-0 i64 tensor) holds how much of it is valid. It lives in the IR, as
/// the tg.bound ops producing the value (TGBoundOp.h); getBound reads it.
using BoundedDim = tg::Bound;

/// One element of a small integer tensor computed from the lengths of
/// bounded values (a Shape of one, and the shape arithmetic on it;
/// RunTimeInts.cpp): an upper bound, whether the element is exactly
/// that, and the length value it equals, if it is one.
struct RunTimeInt {
  int64_t upper = 0;
  bool exact = false;
  Value length;
};

/// Bounds of run-time data: every value of the elements it covers lies in
/// [lo, hi] (either may be infinite) (ValueRanges.cpp).
struct Interval {
  double lo = 0, hi = 0;
};

/// Tensors of at most this many elements keep one interval per element.
constexpr int64_t kMaxRangeElements = 16;

/// A value of the ONNX graph during import: an IR value, a tensor known at
/// import time, or both (once the known tensor has been materialised).
struct ImportedValue {
  enum class Origin { Computed, Initializer, ConstantNode, Folded };
  Origin origin = Origin::Computed;
  Value value;
  std::shared_ptr<const HostTensor> known;
  /// An initializer not decoded yet.
  const onnx::TensorProto *initializer = nullptr;
  bool decodeFailed = false;
  /// A graph input (an argument of the function).
  bool isGraphInput = false;
  int32_t dataType = 0;
  std::vector<int64_t> shape;
  /// For a small integer tensor computed from lengths: its elements.
  std::optional<llvm::SmallVector<RunTimeInt>> runTimeInts;
  /// For a value computed at run time whose data the graph bounds: one
  /// interval for all its elements, or one per element (at most
  /// kMaxRangeElements); empty when unbounded (ValueRanges.cpp).
  llvm::SmallVector<Interval, 1> ranges;
  /// For an ONNX sequence (Sequences.cpp): its tensors, known at import
  /// time in number and order.
  std::shared_ptr<const std::vector<ImportedValue>> sequence;
};

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *context, const ONNXImportOptions &options,
                safetensors::Writer &writer, llvm::StringRef sourceName)
      : context(context), builder(context), options(options), writer(writer),
        sourceName(sourceName.str()),
        fileLoc(mlir::FileLineColLoc::get(context, sourceName, 0, 0)) {
    externalDir = llvm::sys::path::parent_path(sourceName).str();
  }

  /// Imports the (checked, shape-inferred) graph of `model` as a module of
  /// one function; null after an error.
  mlir::OwningOpRef<mlir::ModuleOp> run(onnx::ModelProto &model);

  mlir::MLIRContext *context;
  mlir::OpBuilder builder;
  const ONNXImportOptions &options;
  safetensors::Writer &writer;
  std::string sourceName, externalDir;
  mlir::Location fileLoc;
  llvm::StringMap<ImportedValue> values;
  /// The function being built.
  mlir::func::FuncOp function;
  llvm::StringSet<> weightNames;
  bool usedWeights = false;
  /// The graph inputs bound at import time, with their values (the module
  /// attribute `loom.onnx.bound_inputs`).
  llvm::SmallVector<mlir::NamedAttribute> boundInputAttrs;
  /// The compactions of concatenations along a padded dimension, by the
  /// (size, length) of their parts: the gather indices and the total
  /// length (RunTimeLengths.cpp), shared by concatenations of equal parts.
  using CompactionKey = std::vector<std::pair<int64_t, const void *>>;
  std::map<CompactionKey, std::pair<Value, Value>> compactions;
  /// Types ONNX's shape inference gave to values, by name.
  llvm::StringMap<const onnx::TypeProto *> onnxTypes;

  ImportedValue *lookup(llvm::StringRef name) {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
  const HostTensor *decode(ImportedValue &v, mlir::Location loc);
  FailureOr<Value> materialize(llvm::StringRef name, ImportedValue &v,
                               mlir::Location loc);
  FailureOr<Value> materializeHost(const HostTensor &t, llvm::StringRef name,
                                   bool asWeight, mlir::Location loc);
  std::string uniqueWeightName(llvm::StringRef base);
  /// `t` as an attribute (of the nearest builtin element type when tg has
  /// none for its elements).
  mlir::DenseElementsAttr toAttribute(const HostTensor &t);
  LogicalResult checkAgainstONNX(llvm::StringRef name, const ImportedValue &v,
                                 NodeContext &ctx);

  /// Opset of each domain the model imports ("" for the default domain).
  llvm::StringMap<int64_t> opsets;
  /// Nodes imported so far, subgraphs and expansions included (the unrolling
  /// of Loop and Scan stops at kMaxImportedNodes).
  int64_t importedNodes = 0;
  /// Numbers the values and nodes that expansions make up (Expander.h).
  int64_t expansionCounter = 0;

  /// Hands `node` to its handler and checks its outputs against ONNX's
  /// shape inference. Control-flow handlers call it for the nodes of a
  /// subgraph, the recurrent ones for the nodes they expand into; `opset`
  /// overrides the model's opset of the node's domain (expansions are
  /// written in one opset's forms whatever the model's).
  LogicalResult importNode(const onnx::NodeProto &node,
                           std::optional<int64_t> opset = std::nullopt);
  /// Imports the nodes of a subgraph (a branch of If, the body of Loop or
  /// Scan) into the current function: its inputs must have been declared
  /// by the caller; values of enclosing graphs are visible by name.
  LogicalResult importSubgraph(const onnx::GraphProto &graph);

private:
  //===--------------------------------------------------------------------===//
  // The steps of run() (ImportONNX.cpp)
  //===--------------------------------------------------------------------===//

  /// Records the types ONNX's shape inference gave to values and outputs.
  void recordONNXTypes(const onnx::GraphProto &graph);
  /// Declares the initializers, decoded only when used.
  LogicalResult declareInitializers(const onnx::GraphProto &graph);
  /// Declares the graph inputs that are not initializers: the bound ones as
  /// known tensors, the others as the arguments `argTypes` and `argNames`.
  LogicalResult
  declareGraphInputs(const onnx::GraphProto &graph,
                     llvm::SmallVectorImpl<Type> &argTypes,
                     llvm::SmallVectorImpl<std::string> &argNames);
  /// Declares graph input `in`, bound at import time to `bound`, as a known
  /// tensor.
  LogicalResult bindGraphInput(const onnx::ValueInfoProto &in,
                               const ONNXTensor &bound, mlir::Location loc);
  /// The type of graph input `in`, which must be a tensor of static shape
  /// with an element type tg supports.
  FailureOr<RankedTensorType> graphInputType(const onnx::ValueInfoProto &in,
                                             mlir::Location loc);
  /// Creates the function with the arguments `argTypes` (named `argNames`)
  /// and declares them as the values of those names.
  mlir::func::FuncOp createFunction(llvm::ArrayRef<Type> argTypes,
                                    llvm::ArrayRef<std::string> argNames);
  /// Hands every node, in order, to its handler.
  LogicalResult importNodes(const onnx::GraphProto &graph);
  /// Returns the graph outputs from `func` and sets its type.
  LogicalResult buildReturn(const onnx::GraphProto &graph,
                            mlir::func::FuncOp func,
                            llvm::ArrayRef<Type> argTypes);
  /// Names the weights file, fuses exporter idioms and verifies `module`.
  LogicalResult finishModule(mlir::ModuleOp module, mlir::func::FuncOp func);
};

class NodeContext;

/// Imports a node that computes with the lengths of bounded values (Shape,
/// Size, ConstantOfShape of a tracked shape, reductions of one, Concat and
/// Slice along a padded dimension, reductions over one); false when the
/// node is not such a node (the operator's bound rules, RunTimeLengths.cpp).
mlir::FailureOr<bool> importWithRunTimeLengths(NodeContext &ctx);
/// After a node's handler: tracks the elements of its output when its
/// inputs are tracked (RunTimeInts.cpp).
void trackRunTimeInts(NodeContext &ctx);
/// The elements of 1-D \p data at \p indices (negative ones count from the
/// end), as a Gather at known indices picks them; nullopt when one is out
/// of range.
template <typename T>
std::optional<llvm::SmallVector<T>>
pickElements(llvm::ArrayRef<T> data, llvm::ArrayRef<int64_t> indices) {
  llvm::SmallVector<T> out;
  for (int64_t k : indices) {
    k = k < 0 ? k + int64_t(data.size()) : k;
    if (k < 0 || k >= int64_t(data.size()))
      return std::nullopt;
    out.push_back(data[k]);
  }
  return out;
}
/// After a node's handler: the ranges of its outputs' values from its
/// inputs' (ValueRanges.cpp).
void trackValueRanges(NodeContext &ctx);
/// The ranges of input \p i: its own, a tracked tensor's or a known
/// tensor's values (one per element up to kMaxRangeElements); nullopt when
/// unbounded.
std::optional<llvm::SmallVector<Interval>> inputRanges(NodeContext &ctx,
                                                       unsigned i);
/// Arithmetic on lengths (rank-0 i64 values; tg's arithmetic is on floats,
/// so sums and products go through f64, exact below 2^53).
enum class LengthOp { Add, Sub, Mul, Min, Max };
mlir::FailureOr<Value> lengthOp(NodeContext &ctx, LengthOp kind, Value a,
                                Value b);
/// The (first) dimension of data-dependent length of \p v, read from the
/// tg.bound ops producing it (Dynamic.cpp). A value padded in two dimensions
/// (a Resize to a run-time height and width) has a second one,
/// tg::getBounds(v)[1]; only Shape, Gather and a Reshape merging the two
/// read such a value (TwicePadded.cpp).
std::optional<BoundedDim> getBound(Value v);
/// Gives \p v exactly the dimensions of data-dependent length \p bounds
/// (none: it has none), as tg.bound ops at the node's location; a value
/// known at import time must have been materialised (setPadded does).
void setBounds(NodeContext &ctx, ImportedValue &v,
               llvm::ArrayRef<BoundedDim> bounds);
/// Sets the first bound of \p v, keeping a second one.
void setBound(NodeContext &ctx, ImportedValue &v, BoundedDim bound);
/// Hides the bounds of \p v from a handler that must read it as a plain
/// tensor (the caller restores \p v afterwards).
void hideBounds(ImportedValue &v);
/// The bound of input `i` of the node, if it has one (Dynamic.cpp).
std::optional<BoundedDim> inputBound(NodeContext &ctx, unsigned i);
/// Sets the bound of output `i` of the node (after setOutput).
void setOutputBound(NodeContext &ctx, unsigned i, BoundedDim bound);
/// Gives \p v the dimension of data-dependent length \p bound; a value
/// known at import time becomes a constant of the graph first
/// (RunTimeInts.cpp).
LogicalResult setPadded(NodeContext &ctx, ImportedValue &v, BoundedDim bound);
/// \p x with the padding of its bounded dimension \p b replaced by \p fill
/// (RunTimeLengths.cpp).
mlir::FailureOr<Value> maskPadding(NodeContext &ctx, Value x, BoundedDim b,
                                   double fill);
/// The run-time value (a rank-0 i64) of tracked element \p e, element \p k
/// of input \p i: its length value, its value when exact, or the element
/// read from the input (RunTimeInts.cpp).
mlir::FailureOr<Value> runTimeElement(NodeContext &ctx, unsigned i,
                                      const RunTimeInt &e, int64_t k);
/// Input `i` as one tracked element, if it is tracked (a run-time K).
mlir::FailureOr<std::optional<RunTimeInt>> trackedScalar(NodeContext &ctx,
                                                         unsigned i);

/// How diagnostics name a node: its name, or its first output.
std::string describeNode(const onnx::NodeProto &node);

} // namespace loom::onnx_to_tg

#endif // LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H
