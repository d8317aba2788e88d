//===- Expander.cpp - Importing a node as other ONNX nodes ----------------===//
//
// Part of Loom. See Expander.h.
//
//===----------------------------------------------------------------------===//

#include "Expander.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using llvm::StringRef;

Expander::Expander(NodeContext &ctx)
    : ctx(ctx), graph(ctx.importer()),
      prefix(ctx.node().name().empty()
                 ? (ctx.node().output_size() ? ctx.node().output(0)
                                             : ctx.node().op_type())
                 : ctx.node().name()) {}

std::string Expander::freshName(StringRef what) {
  // '#' and the importer-wide counter make a name no ONNX graph uses.
  return prefix + "/" + what.str() + "#" +
         std::to_string(graph.expansionCounter++);
}

void Expander::setInt(onnx::NodeProto &n, StringRef name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void Expander::setInts(onnx::NodeProto &n, StringRef name,
                       ArrayRef<int64_t> v) {
  auto *a = n.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

void Expander::setFloat(onnx::NodeProto &n, StringRef name, double v) {
  auto *a = n.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(v));
}

FailureOr<SmallVector<std::string>>
Expander::emitMulti(StringRef opType, ArrayRef<std::string> inputs,
                    unsigned numOutputs, const AttrFn &attrs) {
  onnx::NodeProto &n = nodes.emplace_back();
  n.set_op_type(opType.str());
  n.set_name(freshName(opType));
  for (const std::string &in : inputs)
    n.add_input(in);
  SmallVector<std::string> outs;
  for (unsigned i = 0; i < numOutputs; ++i) {
    outs.push_back(n.name() + "." + std::to_string(i));
    n.add_output(outs.back());
  }
  if (attrs)
    attrs(n);
  if (failed(graph.importNode(n, kOpset)))
    return failure();
  return outs;
}

FailureOr<std::string> Expander::emit(StringRef opType,
                                      ArrayRef<std::string> inputs,
                                      const AttrFn &attrs) {
  auto outs = emitMulti(opType, inputs, 1, attrs);
  if (failed(outs))
    return failure();
  return (*outs)[0];
}

std::string Expander::constant(HostTensor t) {
  std::string name = freshName("const");
  ImportedValue v;
  v.origin = ImportedValue::Origin::ConstantNode;
  v.dataType = t.dataType;
  v.shape = t.shape;
  v.known = std::make_shared<const HostTensor>(std::move(t));
  graph.values[name] = std::move(v);
  return name;
}

FailureOr<std::string> Expander::stack(ArrayRef<std::string> values,
                                       int64_t axis) {
  SmallVector<std::string> parts;
  std::string axes = ints({axis});
  for (const std::string &v : values) {
    auto u = emit("Unsqueeze", {v, axes});
    if (failed(u))
      return failure();
    parts.push_back(*u);
  }
  if (parts.size() == 1)
    return parts[0];
  return emit("Concat", parts,
              [&](onnx::NodeProto &n) { setInt(n, "axis", axis); });
}

std::string Expander::ints(ArrayRef<int64_t> values) {
  HostTensor t;
  t.dataType = onnx::TensorProto::INT64;
  t.shape = {static_cast<int64_t>(values.size())};
  t.ints.assign(values.begin(), values.end());
  return constant(std::move(t));
}

std::string Expander::scalarInt(int64_t value) {
  HostTensor t;
  t.dataType = onnx::TensorProto::INT64;
  t.ints = {value};
  return constant(std::move(t));
}

std::string Expander::splat(int32_t dataType, ArrayRef<int64_t> shape,
                            double value) {
  return constant(HostTensor::splat(
      dataType, std::vector<int64_t>(shape.begin(), shape.end()), value));
}

std::string Expander::bind(Value value) {
  std::string name = freshName("value");
  ImportedValue v;
  v.value = value;
  auto type = cast<RankedTensorType>(value.getType());
  v.shape.assign(type.getShape().begin(), type.getShape().end());
  v.dataType = onnxutil::getONNXDataType(type.getElementType()).value_or(0);
  graph.values[name] = std::move(v);
  return name;
}

FailureOr<Value> Expander::valueOf(StringRef name) {
  ImportedValue *v = graph.lookup(name);
  if (!v)
    return ctx.fail("value '" + name + "' is not defined");
  return graph.materialize(name, *v, ctx.loc());
}

std::string Expander::define(ImportedValue v) {
  std::string name = freshName("element");
  v.isGraphInput = false;
  graph.values[name] = std::move(v);
  return name;
}

LogicalResult Expander::alias(StringRef name, StringRef from) {
  ImportedValue *v = graph.lookup(from);
  if (!v)
    return ctx.fail("value '" + from + "' is not defined");
  ImportedValue copy = *v;
  copy.isGraphInput = false;
  graph.values[name] = std::move(copy);
  return success();
}

FailureOr<std::string> Expander::snapshot(StringRef name) {
  std::string fresh = freshName("value");
  if (failed(alias(fresh, name)))
    return failure();
  return fresh;
}

LogicalResult Expander::setOutput(unsigned i, StringRef from) {
  if (!ctx.hasOutput(i))
    return success();
  ImportedValue *v = graph.lookup(from);
  if (!v)
    return ctx.fail("value '" + from + "' is not defined");
  ImportedValue copy = *v;
  graph.values[ctx.node().output(i)] = std::move(copy);
  return success();
}

ArrayRef<int64_t> Expander::shapeOf(StringRef name) {
  return graph.lookup(name)->shape;
}

int32_t Expander::dataTypeOf(StringRef name) {
  return graph.lookup(name)->dataType;
}
