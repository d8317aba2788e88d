//===- NodeContext.cpp - The values of the ONNX graph during import -----===//
//
// Part of Loom. The bookkeeping of the importer's values (GraphImporter.h):
// initializers decoded on demand, known tensors materialised as tg.constant
// or tg.weight, and the NodeContext through which a handler sees its node's
// attributes, inputs and outputs and builds tg ops.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Host tensors <-> IR
//===----------------------------------------------------------------------===//

/// The IR type of a host tensor, or null when tg cannot hold its elements.
static RankedTensorType typeOf(MLIRContext *context, int32_t dataType,
                               ArrayRef<int64_t> shape) {
  Type e = onnxutil::getTGElementType(context, dataType);
  if (!e)
    return {};
  return RankedTensorType::get(shape, e);
}

static DenseElementsAttr toAttr(RankedTensorType type, const HostTensor &t) {
  Type e = type.getElementType();
  bool splat = t.numElements() > 0;
  for (int64_t i = 1; splat && i < t.numElements(); ++i)
    splat = t.isFloat() ? (t.floats[i] == t.floats[0] ||
                           (std::isnan(t.floats[i]) && std::isnan(t.floats[0])))
                        : t.ints[i] == t.ints[0];
  int64_t n = splat ? 1 : t.numElements();
  if (auto ft = dyn_cast<FloatType>(e)) {
    SmallVector<APFloat> vals;
    vals.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(t.asDouble(i));
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(v);
    }
    return splat ? DenseElementsAttr::get(type, vals.front())
                 : DenseElementsAttr::get(type, vals);
  }
  if (e.isInteger(1)) {
    SmallVector<bool> vals;
    for (int64_t i = 0; i < n; ++i)
      vals.push_back(t.asInt(i) != 0);
    return splat ? DenseElementsAttr::get(type, vals.front())
                 : DenseElementsAttr::get(type, vals);
  }
  unsigned width = e.getIntOrFloatBitWidth();
  SmallVector<APInt> vals;
  for (int64_t i = 0; i < n; ++i)
    vals.push_back(APInt(width, static_cast<uint64_t>(t.asInt(i)),
                         /*isSigned=*/true, /*implicitTrunc=*/true));
  return splat ? DenseElementsAttr::get(type, vals.front())
               : DenseElementsAttr::get(type, vals);
}

DenseElementsAttr GraphImporter::toAttribute(const HostTensor &t) {
  RankedTensorType type = typeOf(context, t.dataType, t.shape);
  if (!type)
    type = RankedTensorType::get(t.shape, t.isFloat()
                                              ? Type(Float64Type::get(context))
                                              : IntegerType::get(context, 64));
  return toAttr(type, t);
}

std::string GraphImporter::uniqueWeightName(StringRef base) {
  std::string name = base.empty() ? std::string("weight") : base.str();
  if (!weightNames.contains(name))
    return name;
  for (unsigned i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (!weightNames.contains(candidate))
      return candidate;
  }
}

const HostTensor *GraphImporter::decode(ImportedValue &v, Location loc) {
  if (v.known)
    return v.known.get();
  if (!v.initializer || v.decodeFailed)
    return nullptr;
  auto t = onnxutil::decodeTensor(*v.initializer, externalDir);
  if (!t) {
    v.decodeFailed = true;
    emitError(loc) << "initializer '" << v.initializer->name()
                   << "': " << llvm::toString(t.takeError());
    return nullptr;
  }
  v.known = std::make_shared<const HostTensor>(std::move(*t));
  return v.known.get();
}

FailureOr<Value> GraphImporter::materializeHost(const HostTensor &t,
                                                StringRef name, bool asWeight,
                                                Location loc) {
  auto type = typeOf(context, t.dataType, t.shape);
  if (!type)
    return emitError(loc) << "value '" << name << "' has element type "
                          << onnxutil::dataTypeName(t.dataType)
                          << ", which tg does not support";
  if (!asWeight)
    return tg::ConstantOp::create(builder, loc, type, toAttr(type, t))
        .getResult();
  std::string weightName = uniqueWeightName(name);
  if (auto err = onnxutil::addToWriter(writer, weightName, t))
    return emitError(loc) << "cannot store weight '" << weightName
                          << "': " << llvm::toString(std::move(err));
  weightNames.insert(weightName);
  usedWeights = true;
  return tg::WeightOp::create(builder, loc, type, weightName).getResult();
}

FailureOr<Value> GraphImporter::materialize(StringRef name, ImportedValue &v,
                                            Location loc) {
  if (v.value)
    return v.value;
  if (v.sequence)
    return emitError(loc) << "value '" << name
                          << "' is a sequence, where a tensor is expected";
  const HostTensor *t = decode(v, loc);
  if (!t)
    return failure();
  int64_t n = t->numElements();
  bool asWeight;
  switch (v.origin) {
  case ImportedValue::Origin::Initializer:
    asWeight = t->isFloat()
                   ? n > std::max<int64_t>(options.maxConstantElements, 1)
                   : n > options.maxInlineConstantElements;
    break;
  default: {
    bool splat = true;
    for (int64_t i = 1; splat && i < n; ++i)
      splat = t->asDouble(i) == t->asDouble(0);
    asWeight = !splat && n > options.maxInlineConstantElements;
    break;
  }
  }
  auto value = materializeHost(*t, name, asWeight, loc);
  if (failed(value))
    return failure();
  v.value = *value;
  // Large initializers are not needed on the host any more.
  if (v.origin == ImportedValue::Origin::Initializer && n > kFoldLimit)
    v.known.reset();
  return v.value;
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
                         int64_t opset, Location loc)
    : graph(graph), nodeProto(node), opsetVersion(opset), location(loc) {}

OpBuilder &NodeContext::builder() { return graph.builder; }
MLIRContext *NodeContext::context() { return graph.context; }

std::string onnx_to_tg::describeNode(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  if (node.output_size() > 0)
    return "node with output '" + node.output(0) + "'";
  return "unnamed node";
}

InFlightDiagnostic NodeContext::emitError() {
  return mlir::emitError(location)
         << "'" << nodeProto.op_type() << "' " << describeNode(nodeProto)
         << " (opset " << opsetVersion << "): ";
}

LogicalResult NodeContext::fail(const llvm::Twine &message) {
  return emitError() << message;
}

const onnx::AttributeProto *NodeContext::getAttr(StringRef name) const {
  for (const auto &a : nodeProto.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool NodeContext::hasAttr(StringRef name) const { return getAttr(name); }

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) const {
  const auto *a = getAttr(name);
  if (!a || a->type() != onnx::AttributeProto::INT)
    return defaultValue;
  return a->i();
}

double NodeContext::getFloat(StringRef name, double defaultValue) const {
  const auto *a = getAttr(name);
  if (!a || a->type() != onnx::AttributeProto::FLOAT)
    return defaultValue;
  return a->f();
}

std::string NodeContext::getString(StringRef name,
                                   StringRef defaultValue) const {
  const auto *a = getAttr(name);
  if (!a || a->type() != onnx::AttributeProto::STRING)
    return defaultValue.str();
  return a->s();
}

std::optional<SmallVector<int64_t>> NodeContext::getInts(StringRef name) const {
  const auto *a = getAttr(name);
  if (!a || a->type() != onnx::AttributeProto::INTS)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<SmallVector<double>>
NodeContext::getFloats(StringRef name) const {
  const auto *a = getAttr(name);
  if (!a || a->type() != onnx::AttributeProto::FLOATS)
    return std::nullopt;
  return SmallVector<double>(a->floats().begin(), a->floats().end());
}

bool NodeContext::hasInput(unsigned i) const {
  return i < static_cast<unsigned>(nodeProto.input_size()) &&
         !nodeProto.input(i).empty();
}

int32_t NodeContext::inputDataType(unsigned i) {
  if (!hasInput(i))
    return 0;
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  return v ? v->dataType : 0;
}

RankedTensorType NodeContext::inputType(unsigned i) {
  if (!hasInput(i))
    return {};
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  if (!v)
    return {};
  if (v->value)
    return cast<RankedTensorType>(v->value.getType());
  return typeOf(graph.context, v->dataType, v->shape);
}

ArrayRef<int64_t> NodeContext::inputShape(unsigned i) {
  if (!hasInput(i))
    return {};
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  return v ? ArrayRef<int64_t>(v->shape) : ArrayRef<int64_t>();
}

FailureOr<Value> NodeContext::input(unsigned i) {
  if (!hasInput(i))
    return fail("input " + llvm::Twine(i) + " is required");
  StringRef name = nodeProto.input(i);
  ImportedValue *v = graph.lookup(name);
  if (!v)
    return fail("input '" + name +
                "' is not defined before its use (ONNX graphs are "
                "topologically sorted)");
  return graph.materialize(name, *v, location);
}

const HostTensor *NodeContext::known(unsigned i, int64_t maxElements) {
  if (!hasInput(i))
    return nullptr;
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  if (!v || (!v->known && !v->initializer))
    return nullptr;
  int64_t n = onnxutil::numElementsOf(v->shape);
  if (n < 0 || n > maxElements)
    return nullptr;
  return graph.decode(*v, location);
}

const HostTensor *NodeContext::constant(unsigned i, int64_t maxElements) {
  if (!hasInput(i))
    return nullptr;
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  // Floating-point initializers are parameters: they stay tg.weight and are
  // not folded into new constants (scalars excepted).
  if (v && v->origin == ImportedValue::Origin::Initializer &&
      onnxutil::isFloatDataType(v->dataType) &&
      onnxutil::numElementsOf(v->shape) >
          std::max<int64_t>(graph.options.maxConstantElements, 1))
    return nullptr;
  return known(i, maxElements);
}

bool NodeContext::allConstant() {
  for (unsigned i = 0; i < numInputs(); ++i)
    if (hasInput(i) && !constant(i))
      return false;
  return true;
}

LogicalResult NodeContext::requireFloatInput(unsigned i) {
  if (hasInput(i) && !isFloatInput(i))
    return fail("input " + Twine(i) + " has element type " +
                onnxutil::dataTypeName(inputDataType(i)) +
                "; only floating-point types are supported");
  return success();
}

LogicalResult NodeContext::requireKnown(unsigned i, StringRef what) {
  if (!hasInput(i))
    return fail(what + " (input " + Twine(i) + ") is required");
  ImportedValue *v = graph.lookup(nodeProto.input(i));
  if (!v) {
    (void)input(i); // Reports the undefined value.
    return failure();
  }
  if (known(i))
    return success();
  if (v->decodeFailed)
    return failure();
  auto diag = emitError() << what << " (input " << i
                          << ") must be known at import time";
  if (v->isGraphInput)
    diag << "; it is the graph input '" << nodeProto.input(i)
         << "': bind it to a value (loom-translate --bind-input)";
  return diag;
}

std::string NodeContext::bindHint() {
  for (unsigned i = 0; i < numInputs(); ++i) {
    if (!hasInput(i))
      continue;
    ImportedValue *v = graph.lookup(nodeProto.input(i));
    if (v && v->isGraphInput && !v->known)
      return "; graph input '" + nodeProto.input(i) +
             "' can be bound (--bind " + nodeProto.input(i) + "=VALUE)";
  }
  return "";
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  if (failed(requireKnown(i, what)))
    return failure();
  const HostTensor *t = known(i);
  if (t->isFloat() || t->shape.size() > 1)
    return fail(what + " (input " + llvm::Twine(i) +
                ") must be a 1-D integer tensor");
  return SmallVector<int64_t>(t->ints.begin(), t->ints.end());
}

FailureOr<SmallVector<double>> NodeContext::constantDoubles(unsigned i,
                                                            StringRef what) {
  if (failed(requireKnown(i, what)))
    return failure();
  const HostTensor *t = known(i);
  SmallVector<double> out;
  for (int64_t k = 0; k < t->numElements(); ++k)
    out.push_back(t->asDouble(k));
  return out;
}

bool NodeContext::hasOutput(unsigned i) const {
  return i < static_cast<unsigned>(nodeProto.output_size()) &&
         !nodeProto.output(i).empty();
}

void NodeContext::setOutput(unsigned i, Value value) {
  if (!hasOutput(i))
    return;
  ImportedValue v;
  v.value = value;
  auto type = cast<RankedTensorType>(value.getType());
  v.shape.assign(type.getShape().begin(), type.getShape().end());
  v.dataType = onnxutil::getONNXDataType(type.getElementType()).value_or(0);
  graph.values[nodeProto.output(i)] = std::move(v);
}

void NodeContext::setOutput(unsigned i, HostTensor value) {
  if (!hasOutput(i))
    return;
  ImportedValue v;
  v.origin = ImportedValue::Origin::Folded;
  v.dataType = value.dataType;
  v.shape = value.shape;
  v.known = std::make_shared<const HostTensor>(std::move(value));
  graph.values[nodeProto.output(i)] = std::move(v);
}

FailureOr<Operation *> NodeContext::createOp(StringRef name,
                                             ValueRange operands,
                                             ArrayRef<NamedAttribute> attrs,
                                             std::optional<TypeRange> types) {
  OperationState state(location, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  if (types) {
    state.addTypes(*types);
    return graph.builder.create(state);
  }
  // Run the op's shape rule on a detached probe; turn its complaint into an
  // error of this node.
  Operation *probe = Operation::create(state);
  auto iface = dyn_cast<InferTypeOpInterface>(probe);
  SmallVector<Type> inferred;
  std::string message;
  LogicalResult ok = failure();
  if (iface) {
    ScopedDiagnosticHandler capture(graph.context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    ok = iface.inferReturnTypes(graph.context, location, probe->getOperands(),
                                probe->getRawDictionaryAttrs(),
                                probe->getPropertiesStorage(),
                                probe->getRegions(), inferred);
  }
  probe->destroy();
  if (failed(ok))
    return emitError() << "cannot build " << name << ": "
                       << (message.empty() ? "its shape rule failed" : message);
  state.addTypes(inferred);
  return graph.builder.create(state);
}

NamedAttribute NodeContext::namedAttr(StringRef name, Attribute value) {
  return graph.builder.getNamedAttr(name, value);
}
NamedAttribute NodeContext::i64Attr(StringRef name, int64_t value) {
  return namedAttr(name, graph.builder.getI64IntegerAttr(value));
}
NamedAttribute NodeContext::f64Attr(StringRef name, double value) {
  return namedAttr(name, graph.builder.getF64FloatAttr(value));
}
NamedAttribute NodeContext::arrayAttr(StringRef name,
                                      ArrayRef<int64_t> values) {
  return namedAttr(name, graph.builder.getDenseI64ArrayAttr(values));
}
NamedAttribute NodeContext::boolAttr(StringRef name, bool value) {
  return namedAttr(name, graph.builder.getBoolAttr(value));
}
NamedAttribute NodeContext::strAttr(StringRef name, StringRef value) {
  return namedAttr(name, graph.builder.getStringAttr(value));
}

Value NodeContext::splat(RankedTensorType type, double value) {
  Attribute attr;
  Type e = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(e)) {
    APFloat v(value);
    bool lost;
    v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    attr = DenseElementsAttr::get(type, v);
  } else if (e.isInteger(1)) {
    attr = DenseElementsAttr::get(type, value != 0);
  } else {
    attr = DenseElementsAttr::get(
        type, APInt(e.getIntOrFloatBitWidth(), static_cast<int64_t>(value),
                    /*isSigned=*/true, /*implicitTrunc=*/true));
  }
  return tg::ConstantOp::create(graph.builder, location, type,
                                llvm::cast<ElementsAttr>(attr))
      .getResult();
}

Value NodeContext::scalar(Type elementType, double value) {
  return splat(RankedTensorType::get({}, elementType), value);
}

FailureOr<Value> NodeContext::materialize(const HostTensor &t, StringRef name) {
  bool asWeight = t.numElements() > graph.options.maxInlineConstantElements;
  return graph.materializeHost(t, name, asWeight, location);
}

FailureOr<Value> NodeContext::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  if (onnxutil::numElementsOf(shape) != type.getNumElements())
    return emitError() << "cannot reshape " << type << " to "
                       << safetensors::formatShape(shape);
  return createTyped<tg::ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), v);
}

FailureOr<Value> NodeContext::convert(Value v, Type elementType) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elementType)
    return v;
  return createTyped<tg::CastOp>(type.clone(elementType), v);
}

FailureOr<Value> NodeContext::transpose(Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  return create<tg::TransposeOp>(v, arrayAttr("perm", perm));
}

FailureOr<Value> NodeContext::gather(Value v, int64_t axis,
                                     ArrayRef<int64_t> indices) {
  HostTensor idx;
  idx.dataType = onnx::TensorProto::INT64;
  idx.shape = {static_cast<int64_t>(indices.size())};
  idx.ints.assign(indices.begin(), indices.end());
  auto iv = materialize(idx, "indices");
  if (failed(iv))
    return failure();
  return create<tg::GatherOp>({v, *iv}, {i64Attr("axis", axis)});
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              StringRef what) {
  if (axis < -rank || axis >= rank)
    return emitError() << what << " " << axis << " is out of range [" << -rank
                       << ", " << rank << ")";
  return axis < 0 ? axis + rank : axis;
}
