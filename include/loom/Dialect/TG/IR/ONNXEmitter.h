//===- ONNXEmitter.h - What a tg op sees when it is exported ----*- C++ -*-===//
//
// Part of Loom. The argument of ONNXExportOpInterface::exportONNX: the ONNX
// graph being built, seen from the op being exported. The exporter
// (lib/Conversion/TGToONNX) implements it with the ONNX protobuf library;
// the dialect only sees names and attributes. Values are named by strings
// as in ONNX; "" is an absent optional input.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_ONNXEMITTER_H
#define LOOM_DIALECT_TG_IR_ONNXEMITTER_H

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace loom::tg {

class ONNXEmitter;

/// A node being built; sets its attributes.
class ONNXNode {
public:
  ONNXNode(ONNXEmitter &emitter, void *node) : emitter(&emitter), node(node) {}
  ONNXNode &attr(llvm::StringRef name, int64_t value);
  ONNXNode &attr(llvm::StringRef name, double value);
  ONNXNode &attr(llvm::StringRef name, llvm::StringRef value);
  ONNXNode &attr(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
  /// Sets the graph attribute \p name to a subgraph made of the ops of
  /// \p body (a region of the op being exported; its terminator's operands
  /// are the subgraph's outputs). Values defined outside the region are
  /// used by their names, as ONNX scoping allows. The region's arguments
  /// are the subgraph's inputs, except the last `outerArgs.size()`, which
  /// stand for the outer values of those names (tg.scan's invariants).
  mlir::LogicalResult graph(llvm::StringRef name, mlir::Block &body,
                            llvm::ArrayRef<std::string> outerArgs = {});

private:
  ONNXEmitter *emitter;
  void *node;
};

class ONNXEmitter {
public:
  virtual ~ONNXEmitter();

  /// The ONNX value that holds operand \p i of the op.
  virtual std::string input(unsigned i) = 0;
  /// Names result \p i of the op and returns the name (first call: a fresh
  /// name; later calls: the same).
  virtual std::string output(unsigned i = 0) = 0;
  /// Makes result \p i of the op the existing ONNX value \p name (an
  /// initializer), emitting no node.
  virtual void alias(unsigned i, llvm::StringRef name) = 0;
  /// A fresh name for an intermediate value, derived from the op's name.
  virtual std::string fresh(llvm::StringRef suffix) = 0;
  /// Appends a node.
  virtual ONNXNode node(llvm::StringRef opType,
                        llvm::ArrayRef<std::string> inputs,
                        llvm::ArrayRef<std::string> outputs) = 0;
  /// A 1-D int64 initializer holding \p values.
  virtual std::string constI64(llvm::ArrayRef<int64_t> values,
                               llvm::StringRef suffix) = 0;
  /// A 1-D float initializer holding \p values.
  virtual std::string constF32(llvm::ArrayRef<double> values,
                               llvm::StringRef suffix) = 0;
  /// A rank-0 initializer of element type \p elementType.
  virtual mlir::FailureOr<std::string>
  scalar(mlir::Type elementType, double value, llvm::StringRef suffix) = 0;
  /// An initializer holding \p value.
  virtual mlir::FailureOr<std::string> constant(mlir::ElementsAttr value) = 0;
  /// The initializer of the tg.weight being exported (read from the
  /// module's safetensors file).
  virtual mlir::FailureOr<std::string> weight() = 0;

  /// Exports the ops of \p body (a region of the op) in place of the op:
  /// its arguments are the op's operands and what its terminator yields
  /// becomes the op's results.
  virtual mlir::LogicalResult exportBody(mlir::Block &body) = 0;

  /// One node of \p opType with the op's operands and results, in order.
  mlir::LogicalResult direct(llvm::StringRef opType);

protected:
  friend class ONNXNode;
  virtual void setAttr(void *node, llvm::StringRef name, int64_t value) = 0;
  virtual void setAttr(void *node, llvm::StringRef name, double value) = 0;
  virtual void setAttr(void *node, llvm::StringRef name,
                       llvm::StringRef value) = 0;
  virtual void setAttr(void *node, llvm::StringRef name,
                       llvm::ArrayRef<int64_t> values) = 0;
  virtual mlir::LogicalResult
  setGraph(void *node, llvm::StringRef name, mlir::Block &body,
           llvm::ArrayRef<std::string> outerArgs) = 0;
  /// The op's operand and result counts (for direct()).
  virtual unsigned numInputs() = 0;
  virtual unsigned numOutputs() = 0;
};

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_ONNXEMITTER_H
