//===- Importer.h - State and helpers shared by the ONNX handlers -*- C++
//-*-===//
//
// Part of Loom. The ONNX importer walks the graph in order and hands every
// node to the handler registered for its operator type in one table (as
// onnx-mlir's FrontendDialectTransformer). A handler sees its node through a
// NodeContext: attributes, inputs (as IR values, or as host tensors when they
// are known at import time) and a builder whose ops get their types from the
// tg shape rules, with the rule's message turned into a diagnostic that
// names the node. Handlers live in one file per concern:
//
//   Elementwise.cpp    unary and binary arithmetic, activations, Clip
//   Linear.cpp         MatMul, Gemm, Conv, ConvTranspose
//   Einsum.cpp         Einsum (as transposes, reshapes, batched products)
//   Pooling.cpp        MaxPool, AveragePool, global pooling
//   Normalization.cpp  BatchNormalization, LayerNormalization,
//                      InstanceNormalization, Softmax, LogSoftmax, LRN, ...
//   Reduction.cpp      Reduce*
//   DataMovement.cpp   Transpose, Reshape, Concat, Split, Slice, Pad, ...
//   Resize.cpp         Resize, Upsample
//   GridSample.cpp     GridSample (gathers of the interpolation's taps)
//   ShapeFolding.cpp   Constant, Shape, Cast, ... and the folding of shape
//                      computations to constants
//   ControlFlow.cpp    If (the branch an import-time condition takes), Loop
//                      and Scan (unrolled over a static trip count)
//   Recurrent.cpp      LSTM, GRU, RNN (expanded over the sequence length)
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_ONNXTOTG_IMPORTER_H
#define LOOM_LIB_CONVERSION_ONNXTOTG_IMPORTER_H

#include "loom/Conversion/ONNXCommon/ONNXTensors.h"
#include "loom/Support/Shapes.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <memory>
#include <optional>
#include <string>

namespace loom::onnx_to_tg {

using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using onnxutil::HostTensor;

/// Host tensors up to this many elements are folded at import time.
constexpr int64_t kFoldLimit = 1 << 16;

/// The largest stride, dilation, kernel size, padding or block size the
/// handlers accept: beyond it a model is rejected rather than risking
/// overflow in the size arithmetic.
constexpr int64_t kMaxExtent = 1 << 24;

/// Nodes one import may reach through unrolled loops (nested loops
/// multiply): beyond it the import stops with a diagnostic instead of
/// building a graph nobody can use.
constexpr int64_t kMaxExpandedNodes = 1 << 20;

class GraphImporter;

/// The view of one node that a handler gets.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node, int64_t opset,
              mlir::Location loc);

  const onnx::NodeProto &node() const { return nodeProto; }
  llvm::StringRef opType() const { return nodeProto.op_type(); }
  /// Opset of the node's domain.
  int64_t opset() const { return opsetVersion; }
  mlir::Location loc() const { return location; }
  mlir::OpBuilder &builder();
  mlir::MLIRContext *context();
  /// The importer of the graph (for handlers that import subgraphs or expand
  /// a node into other nodes).
  GraphImporter &importer() { return graph; }

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  /// An error prefixed with "'Op' node 'name' (opset N): ".
  mlir::InFlightDiagnostic emitError();
  /// Emits an error and returns failure.
  LogicalResult fail(const llvm::Twine &message);

  //===--------------------------------------------------------------------===//
  // Attributes (types are checked by the ONNX checker; a missing attribute
  // or one of another type reads as the default)
  //===--------------------------------------------------------------------===//

  bool hasAttr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue) const;
  double getFloat(llvm::StringRef name, double defaultValue) const;
  std::string getString(llvm::StringRef name,
                        llvm::StringRef defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;
  std::optional<llvm::SmallVector<double>>
  getFloats(llvm::StringRef name) const;
  const onnx::AttributeProto *getAttr(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  unsigned numInputs() const { return nodeProto.input_size(); }
  /// True when input `i` is given (optional inputs may be absent or "").
  bool hasInput(unsigned i) const;
  /// ONNX element type of input `i`.
  int32_t inputDataType(unsigned i);
  bool isFloatInput(unsigned i) {
    return onnxutil::isFloatDataType(inputDataType(i));
  }
  /// Type of input `i`; null when tg cannot hold its element type.
  RankedTensorType inputType(unsigned i);
  llvm::ArrayRef<int64_t> inputShape(unsigned i);
  int64_t inputRank(unsigned i) { return inputShape(i).size(); }
  /// Input `i` as an IR value (materialising a known tensor as tg.constant
  /// or tg.weight).
  FailureOr<Value> input(unsigned i);
  /// The value of input `i` when it is known at import time and has at most
  /// `maxElements` elements; null otherwise. For folding: floating-point
  /// initializers (parameters, other than scalars) read as unknown.
  const HostTensor *constant(unsigned i, int64_t maxElements = kFoldLimit);
  /// Like constant() but for inputs that must be known (shapes, scales,
  /// bounds, ...): any known value, parameters included.
  const HostTensor *known(unsigned i, int64_t maxElements = kFoldLimit);
  /// True when every given input is known at import time (and small).
  bool allConstant();
  /// Fails, naming its element type, when input `i` is given but not of a
  /// floating-point type.
  LogicalResult requireFloatInput(unsigned i);
  /// Succeeds when input `i` is known at import time; otherwise an error
  /// saying that `what` must be (and, for a graph input, how to bind it).
  LogicalResult requireKnown(unsigned i, llvm::StringRef what);
  /// "" when every given input is known at import time or computed; else a
  /// hint naming the first unbound graph input among them and how to bind
  /// it (for fold-only operators, whose inputs often decide an If).
  std::string bindHint();
  /// A 1-D (or scalar) integer input known at import time, e.g. a shape or
  /// axes; an error naming `what` otherwise.
  FailureOr<llvm::SmallVector<int64_t>> constantInts(unsigned i,
                                                     llvm::StringRef what);
  /// A float (or integer) input known at import time, as doubles.
  FailureOr<llvm::SmallVector<double>> constantDoubles(unsigned i,
                                                       llvm::StringRef what);

  //===--------------------------------------------------------------------===//
  // Outputs
  //===--------------------------------------------------------------------===//

  unsigned numOutputs() const { return nodeProto.output_size(); }
  /// True when output `i` exists and has a name (is used or a graph output).
  bool hasOutput(unsigned i) const;
  void setOutput(unsigned i, Value value);
  void setOutput(unsigned i, HostTensor value);

  //===--------------------------------------------------------------------===//
  // Building tg ops
  //===--------------------------------------------------------------------===//

  /// Creates `OpT` with result types inferred by its shape rule. A rule that
  /// rejects the operands is reported as an error of this node.
  template <typename OpT>
  FailureOr<Value> create(mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    auto op = createOp(OpT::getOperationName(), operands, attrs, std::nullopt);
    if (mlir::failed(op))
      return mlir::failure();
    return (*op)->getResult(0);
  }
  /// Creates an op with explicit result types (ops without a shape rule).
  template <typename OpT>
  FailureOr<Value>
  createTyped(Type type, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    auto op = createOp(OpT::getOperationName(), operands, attrs,
                       mlir::TypeRange(type));
    if (mlir::failed(op))
      return mlir::failure();
    return (*op)->getResult(0);
  }
  FailureOr<mlir::Operation *>
  createOp(llvm::StringRef name, mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attrs,
           std::optional<mlir::TypeRange> types);

  mlir::NamedAttribute namedAttr(llvm::StringRef name, mlir::Attribute value);
  mlir::NamedAttribute i64Attr(llvm::StringRef name, int64_t value);
  mlir::NamedAttribute f64Attr(llvm::StringRef name, double value);
  mlir::NamedAttribute arrayAttr(llvm::StringRef name,
                                 llvm::ArrayRef<int64_t> values);
  mlir::NamedAttribute boolAttr(llvm::StringRef name, bool value);
  mlir::NamedAttribute strAttr(llvm::StringRef name, llvm::StringRef value);

  /// A tg.constant of `type` with every element `value`.
  Value splat(RankedTensorType type, double value);
  /// A rank-0 tg.constant of element type `elementType`.
  Value scalar(Type elementType, double value);
  /// A tg.constant (or tg.weight, when large) holding `t`.
  FailureOr<Value> materialize(const HostTensor &t, llvm::StringRef name);
  /// tg.reshape to `shape` (no op when the shape is already that).
  FailureOr<Value> reshape(Value v, llvm::ArrayRef<int64_t> shape);
  /// tg.cast to `elementType` (no op when it already has it).
  FailureOr<Value> convert(Value v, Type elementType);
  /// tg.transpose by `perm`.
  FailureOr<Value> transpose(Value v, llvm::ArrayRef<int64_t> perm);
  /// tg.gather of the constant `indices` along `axis` of `v`.
  FailureOr<Value> gather(Value v, int64_t axis,
                          llvm::ArrayRef<int64_t> indices);

  /// Normalises an axis attribute or input in [-rank, rank) to [0, rank).
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   llvm::StringRef what = "axis");

private:
  GraphImporter &graph;
  const onnx::NodeProto &nodeProto;
  int64_t opsetVersion;
  mlir::Location location;
};

/// Chains tg ops on FailureOr values, so that decompositions read like the
/// formulas they implement; the first failure propagates.
struct OpChain {
  NodeContext &ctx;
  /// The element type of the constants c() makes.
  Type e;

  template <typename OpT> FailureOr<Value> un(FailureOr<Value> x) {
    if (mlir::failed(x))
      return mlir::failure();
    return ctx.createTyped<OpT>(x->getType(), *x);
  }
  template <typename OpT>
  FailureOr<Value> bin(FailureOr<Value> a, FailureOr<Value> b) {
    if (mlir::failed(a) || mlir::failed(b))
      return mlir::failure();
    return ctx.create<OpT>({*a, *b});
  }
  template <typename OpT>
  FailureOr<Value> reduce(FailureOr<Value> x, llvm::ArrayRef<int64_t> axes) {
    if (mlir::failed(x))
      return mlir::failure();
    return ctx.create<OpT>(
        *x, {ctx.arrayAttr("axes", axes), ctx.boolAttr("keepdims", true)});
  }
  /// `cond ? a : b`, elementwise (tg.select).
  FailureOr<Value> select(FailureOr<Value> cond, FailureOr<Value> a,
                          FailureOr<Value> b) {
    if (mlir::failed(cond) || mlir::failed(a) || mlir::failed(b))
      return mlir::failure();
    return ctx.create<tg::SelectOp>({*cond, *a, *b});
  }
  /// `x` converted to element type `to` (tg.cast).
  FailureOr<Value> cast(FailureOr<Value> x, Type to) {
    if (mlir::failed(x))
      return mlir::failure();
    return ctx.convert(*x, to);
  }
  Value c(double v) { return ctx.scalar(e, v); }
};

/// Rounding of a floating-point tensor at run time, as ONNX Floor, Ceil and
/// Round (half to even) define it, from tg.mod's C fmod (Elementwise.cpp).
/// Values too large to have a fraction, infinities and NaN pass unchanged.
FailureOr<Value> floorAtRunTime(OpChain &b, Value x);
FailureOr<Value> ceilAtRunTime(OpChain &b, Value x);
FailureOr<Value> roundHalfEvenAtRunTime(OpChain &b, Value x);

/// Window attributes of Conv and the pooling operators: per spatial
/// dimension, then `pads` as all begins followed by all ends (ONNX's order,
/// which for 2-D is tg's [top, left, bottom, right]).
struct WindowAttrs {
  llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// Reads strides, dilations, pads and auto_pad (NOTSET, VALID, SAME_UPPER,
/// SAME_LOWER) for a window of size `kernel` over spatial dims `inShape`.
FailureOr<WindowAttrs> readWindowAttrs(NodeContext &ctx,
                                       llvm::ArrayRef<int64_t> inShape,
                                       llvm::ArrayRef<int64_t> kernel);

/// A 1-D window op (convolution, pooling) is done in 2-D: its [N, C, W]
/// operands are reshaped to [N, C, 1, W].
FailureOr<Value> insertUnitHeight(NodeContext &ctx, Value v);
/// Sets output 0 to the `result` of a window op, reshaped from [N, C, 1, W]
/// back to [N, C, W] when the op was `lifted` from 1-D.
LogicalResult setWindowOutput(NodeContext &ctx, Value result, bool lifted);

/// A handler imports one node; it reports failures as diagnostics.
using Handler = LogicalResult (*)(NodeContext &);
/// Handlers by operator type (default domain) or "domain:type".
using HandlerTable = llvm::StringMap<Handler>;

void populateElementwiseHandlers(HandlerTable &table);
void populateLinearHandlers(HandlerTable &table);
void populateEinsumHandlers(HandlerTable &table);
void populatePoolingHandlers(HandlerTable &table);
/// Handlers for the ONNX operators that are exactly one tg op (its
/// ONNXExportOpInterface names it) and have no handler yet in \p table:
/// call it after every other populate function.
void populateDirectHandlers(HandlerTable &table);
void populateNormalizationHandlers(HandlerTable &table);
void populateReductionHandlers(HandlerTable &table);
void populateDataMovementHandlers(HandlerTable &table);
void populateResizeHandlers(HandlerTable &table);
void populateShapeFoldingHandlers(HandlerTable &table);
/// NonZero, TopK, NonMaxSuppression, GatherND (Dynamic.cpp).
void populateDynamicHandlers(HandlerTable &table);
/// ScatterND, ScatterElements (and Scatter), GatherElements (Scatter.cpp).
void populateScatterHandlers(HandlerTable &table);
/// GridSample (GridSample.cpp).
void populateGridSampleHandlers(HandlerTable &table);
/// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
/// SequenceAt, SequenceLength, ConcatFromSequence, SplitToSequence
/// (Sequences.cpp).
void populateSequenceHandlers(HandlerTable &table);
/// RoiAlign (RoiAlign.cpp).
void populateRoiAlignHandlers(HandlerTable &table);
/// Hardmax, CumSum, OneHot, IsNaN, IsInf (Composites.cpp).
void populateCompositeHandlers(HandlerTable &table);
/// The index of the first (or, with \p last, the last) largest (or, without
/// \p isMax, smallest) element of float \p x along \p axis, kept as a
/// dimension of size 1, in f32 (f64 past 2^24 elements) (Reduction.cpp).
FailureOr<Value> extremeIndex(NodeContext &ctx, Value x, int64_t axis,
                              bool isMax, bool last);
/// The linear row index into `dataShape`'s first k dimensions of every
/// k-tuple along the last dimension of the run-time integer `indices`
/// (k = indices.shape[-1]): an i64 tensor of shape indices.shape[:-1].
/// Components out of range wrap around (negative ones count from the end).
FailureOr<Value> linearizeIndices(NodeContext &ctx, Value indices,
                                  llvm::ArrayRef<int64_t> dataShape);
/// Carries the data-dependent lengths of the node's inputs to its outputs,
/// or refuses the node when it mixes the elements of a padded dimension
/// (BoundPropagation.cpp); called after the node's handler.
LogicalResult propagateBounds(NodeContext &ctx);
void populateControlFlowHandlers(HandlerTable &table);
void populateRecurrentHandlers(HandlerTable &table);

/// The one table of every handler.
const HandlerTable &getHandlerTable();

/// Turns exporters' spellings of LayerNormalization and Gelu back into
/// tg.layernorm and tg.gelu (FuseIdioms.cpp).
LogicalResult fuseIdioms(mlir::Operation *scope);

//===----------------------------------------------------------------------===//
// Host-tensor helpers shared by the folding handlers
//===----------------------------------------------------------------------===//

/// ConstantOfShape's fill value: its `value` attribute (one element of any
/// type), or f32 zero without one (ShapeFolding.cpp).
FailureOr<HostTensor> constantOfShapeValue(NodeContext &ctx);
/// Sets output 0 to a run-time splat of shape \p dims holding \p value's
/// one element (ShapeFolding.cpp).
LogicalResult setSplatOutput(NodeContext &ctx, llvm::ArrayRef<int64_t> dims,
                             const HostTensor &value);
/// Converts `t` to ONNX element type `dataType` (as Cast does).
HostTensor castHost(const HostTensor &t, int32_t dataType);
/// Numpy broadcast of two shapes (loom/Support/Shapes.h); nullopt when they
/// do not broadcast.
inline std::optional<std::vector<int64_t>>
broadcastHostShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  auto shape = broadcastShapes(a, b);
  if (!shape)
    return std::nullopt;
  return std::vector<int64_t>(shape->begin(), shape->end());
}
/// Elementwise `fn` over the broadcast of `a` and `b`; the result has
/// element type `dataType`. Integer results use `intFn` when given.
HostTensor binaryHost(const HostTensor &a, const HostTensor &b,
                      int32_t dataType,
                      llvm::function_ref<double(double, double)> fn,
                      llvm::function_ref<int64_t(int64_t, int64_t)> intFn);
/// Moves the elements of `t` to `shape` by numpy broadcasting.
HostTensor broadcastHost(const HostTensor &t, llvm::ArrayRef<int64_t> shape);
/// Gathers along `axis` (indices already normalised to [0, dim)).
HostTensor gatherHost(const HostTensor &data, llvm::ArrayRef<int64_t> indices,
                      llvm::ArrayRef<int64_t> indicesShape, int64_t axis);
/// Strided slice with per-dimension starts and steps and output sizes.
HostTensor sliceHost(const HostTensor &t, llvm::ArrayRef<int64_t> starts,
                     llvm::ArrayRef<int64_t> steps,
                     llvm::ArrayRef<int64_t> sizes);
/// Range's `count` values from the one-element `start` by `delta` (of
/// start's element type).
HostTensor rangeHost(const HostTensor &start, const HostTensor &delta,
                     int64_t count);
/// Transposes `t` by `perm`.
HostTensor transposeHost(const HostTensor &t, llvm::ArrayRef<int64_t> perm);
/// Concatenates along `axis`.
HostTensor concatHost(llvm::ArrayRef<const HostTensor *> inputs, int64_t axis);

} // namespace loom::onnx_to_tg

#endif // LOOM_LIB_CONVERSION_ONNXTOTG_IMPORTER_H
