//===- Expander.h - Importing a node as other ONNX nodes --------*- C++ -*-===//
//
// Part of Loom. Some ONNX operators are imported by writing what they
// compute as other ONNX nodes and importing those through the handler table:
// LSTM, GRU and RNN become Gemm, MatMul, Split, the activations and
// elementwise nodes over each time step; Loop and Scan bodies are stitched
// together with Gather, Unsqueeze and Concat. Every operator then keeps one
// meaning (its handler's), and the expansion folds what is known at import
// time like any other node. The nodes an Expander makes are named after the
// node it expands (`<node>/<op><n>`), so a diagnostic still says where it
// came from.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_ONNXTOTG_EXPANDER_H
#define LOOM_LIB_CONVERSION_ONNXTOTG_EXPANDER_H

#include "GraphImporter.h"

#include <deque>
#include <functional>

namespace loom::onnx_to_tg {

/// Builds and imports ONNX nodes on behalf of the node of `ctx`. Values are
/// ONNX value names in the importer's scope. The nodes are written in the
/// forms of opset kOpset of the default domain (axes and splits as inputs),
/// whatever the model's opset.
class Expander {
public:
  static constexpr int64_t kOpset = 17;

  explicit Expander(NodeContext &ctx);

  /// Sets the attributes of a node being built.
  using AttrFn = std::function<void(onnx::NodeProto &)>;
  static void setInt(onnx::NodeProto &n, llvm::StringRef name, int64_t v);
  static void setInts(onnx::NodeProto &n, llvm::StringRef name,
                      llvm::ArrayRef<int64_t> v);
  static void setFloat(onnx::NodeProto &n, llvm::StringRef name, double v);

  /// Imports a node `opType` over `inputs` ("" for an absent optional input)
  /// with `numOutputs` outputs; returns their names.
  FailureOr<llvm::SmallVector<std::string>>
  emitMulti(llvm::StringRef opType, llvm::ArrayRef<std::string> inputs,
            unsigned numOutputs, const AttrFn &attrs = nullptr);
  /// The same for a node of one output.
  FailureOr<std::string> emit(llvm::StringRef opType,
                              llvm::ArrayRef<std::string> inputs,
                              const AttrFn &attrs = nullptr);

  /// Stacks `values` (equal shapes) along a new axis `axis` (Unsqueeze each,
  /// then Concat).
  FailureOr<std::string> stack(llvm::ArrayRef<std::string> values,
                               int64_t axis);

  /// A value known at import time.
  std::string constant(HostTensor t);
  /// A 1-D int64 constant.
  std::string ints(llvm::ArrayRef<int64_t> values);
  /// A rank-0 int64 constant.
  std::string scalarInt(int64_t value);
  /// A constant of element type `dataType` and `shape`, every element
  /// `value`.
  std::string splat(int32_t dataType, llvm::ArrayRef<int64_t> shape,
                    double value);

  /// A fresh name for the IR value `value` (a region argument, a result of
  /// an op the expansion built itself).
  std::string bind(Value value);
  /// A fresh name for the imported value `v` (an element of a sequence).
  std::string define(ImportedValue v);
  /// The IR value of `name`, materialised at the builder's insertion point
  /// when it is known at import time only.
  FailureOr<Value> valueOf(llvm::StringRef name);

  /// Declares `name` as a copy of the value `from` (a subgraph input bound
  /// to the value that flows into it).
  LogicalResult alias(llvm::StringRef name, llvm::StringRef from);
  /// A fresh name holding the current value of `name` (which a later
  /// iteration of an unrolled body will redefine).
  FailureOr<std::string> snapshot(llvm::StringRef name);
  /// Sets output `i` of the expanded node to the value `from`.
  LogicalResult setOutput(unsigned i, llvm::StringRef from);

  /// The shape of value `name` (which must exist).
  llvm::ArrayRef<int64_t> shapeOf(llvm::StringRef name);
  int32_t dataTypeOf(llvm::StringRef name);

private:
  std::string freshName(llvm::StringRef what);

  NodeContext &ctx;
  GraphImporter &graph;
  std::string prefix;
  /// The nodes built so far (their handlers saw them by reference).
  std::deque<onnx::NodeProto> nodes;
};

} // namespace loom::onnx_to_tg

#endif // LOOM_LIB_CONVERSION_ONNXTOTG_EXPANDER_H
