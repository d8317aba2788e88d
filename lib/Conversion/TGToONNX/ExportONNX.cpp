//===- ExportONNX.cpp - tg graphs to ONNX models --------------------------===//
//
// Part of Loom. See ExportONNX.h. Each tg op writes its own ONNX nodes
// (ONNXExportOpInterface, beside the op) through an OpEmitter; this file
// holds the graph: names, initializers, weights, inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/TGToONNX/ExportONNX.h"

#include "loom/Conversion/ONNXCommon/ONNXLibrary.h"
#include "loom/Conversion/ONNXCommon/ONNXTensors.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Support/ElementTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace loom;
using llvm::SmallVector;
using llvm::StringRef;
using TP = onnx::TensorProto;

namespace {

/// Appends `v` to `bytes` little-endian in `size` bytes.
void appendLE(std::string &bytes, uint64_t v, unsigned size) {
  for (unsigned b = 0; b < size; ++b)
    bytes.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
}

class Exporter {
public:
  Exporter(ModuleOp module, const ONNXExportOptions &options)
      : module(module), options(options), weights(module, options.weightsFile) {}

  LogicalResult run(func::FuncOp fn);
  onnx::ModelProto model;

private:
  ModuleOp module;
  const ONNXExportOptions &options;
  onnx::GraphProto *graph = nullptr;
  llvm::DenseMap<Value, std::string> names;
  llvm::StringSet<> used;
  llvm::StringMap<std::string> weightInits;
  tg::LazyWeights weights;

  std::string fresh(StringRef base) {
    std::string name = base.empty() ? std::string("v") : base.str();
    if (used.insert(name).second)
      return name;
    for (unsigned i = 1;; ++i) {
      std::string candidate = name + "_" + std::to_string(i);
      if (used.insert(candidate).second)
        return candidate;
    }
  }

  /// A base name for what `op` produces: its NameLoc, or its op name, as an
  /// identifier (so that the ONNX text form can spell it).
  std::string hintFor(Operation *op) {
    std::string hint = op->getName().stripDialect().str();
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      hint = loc.getName().str();
    for (char &c : hint)
      if (!llvm::isAlnum(c) && c != '_')
        c = '_';
    if (hint.empty() || llvm::isDigit(hint[0]))
      hint = "v" + hint;
    return hint;
  }

  const std::string &nameOf(Value v) { return names[v]; }

  std::string define(Value v, StringRef base) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    return names[v] = fresh(base);
  }

  onnx::NodeProto *node(Operation *op, StringRef opType,
                        llvm::ArrayRef<std::string> inputs,
                        llvm::ArrayRef<std::string> outputs) {
    onnx::NodeProto *n = graph->add_node();
    n->set_op_type(opType.str());
    n->set_name(fresh(hintFor(op) + "_" + opType.str()));
    // Trailing absent optional inputs are left out.
    while (!inputs.empty() && inputs.back().empty())
      inputs = inputs.drop_back();
    for (const std::string &i : inputs)
      n->add_input(i);
    for (const std::string &o : outputs)
      n->add_output(o);
    return n;
  }

  static void attrInt(onnx::NodeProto *n, StringRef name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attrFloat(onnx::NodeProto *n, StringRef name, double v) {
    auto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
  }
  static void attrStr(onnx::NodeProto *n, StringRef name, StringRef v) {
    auto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v.str());
  }
  static void attrInts(onnx::NodeProto *n, StringRef name,
                       llvm::ArrayRef<int64_t> v) {
    auto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }

  /// An initializer named \p name to fill. Initializers go to the main
  /// graph even while a subgraph (a branch of If) is being exported:
  /// subgraphs read them by name, and ONNX's text printer drops subgraph
  /// initializers.
  TP *newConstant(const std::string &name) {
    TP *t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    return t;
  }

  /// A 1-D int64 initializer.
  std::string constI64(llvm::ArrayRef<int64_t> values, StringRef hint) {
    std::string name = fresh(hint);
    TP *t = newConstant(name);
    t->set_data_type(TP::INT64);
    t->add_dims(values.size());
    std::string bytes;
    for (int64_t v : values)
      appendLE(bytes, static_cast<uint64_t>(v), 8);
    t->set_raw_data(bytes);
    return name;
  }

  /// A 1-D float initializer (Resize's scales).
  std::string constF32(llvm::ArrayRef<double> values, StringRef hint) {
    std::string name = fresh(hint);
    TP *t = newConstant(name);
    t->set_data_type(TP::FLOAT);
    t->add_dims(values.size());
    for (double v : values)
      t->add_float_data(static_cast<float>(v));
    return name;
  }

  /// A rank-0 initializer of element type `e`.
  FailureOr<std::string> scalar(Type e, double v, StringRef hint,
                                Operation *op) {
    auto type = RankedTensorType::get({}, e);
    DenseElementsAttr attr;
    if (auto ft = dyn_cast<FloatType>(e)) {
      APFloat f(v);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      attr = DenseElementsAttr::get(type, f);
    } else if (e.isInteger(1)) {
      attr = DenseElementsAttr::get(type, v != 0);
    } else {
      attr = DenseElementsAttr::get(
          type, APInt(e.getIntOrFloatBitWidth(), static_cast<int64_t>(v),
                      /*isSigned=*/true, /*implicitTrunc=*/true));
    }
    return constant(attr, hint, op);
  }

  FailureOr<std::string> constant(ElementsAttr value, StringRef hint,
                                  Operation *op);
  FailureOr<std::string> weight(tg::WeightOp op);
  LogicalResult exportOp(Operation *op);
  LogicalResult exportSubgraph(onnx::NodeProto *n, StringRef name, Block &body,
                               ArrayRef<std::string> outerArgs, StringRef hint);

  friend class OpEmitter;
};

/// What one op sees of the exporter (ONNXExportOpInterface's argument).
class OpEmitter final : public tg::ONNXEmitter {
public:
  OpEmitter(Exporter &exporter, Operation *op)
      : ex(exporter), op(op), hint(exporter.hintFor(op)) {}

  std::string input(unsigned i) override {
    return ex.nameOf(op->getOperand(i));
  }
  std::string output(unsigned i) override {
    return ex.define(op->getResult(i), hint);
  }
  void alias(unsigned i, StringRef name) override {
    ex.names[op->getResult(i)] = name.str();
  }
  std::string fresh(StringRef suffix) override {
    return ex.fresh(hint + suffix.str());
  }
  tg::ONNXNode node(StringRef opType, llvm::ArrayRef<std::string> inputs,
                    llvm::ArrayRef<std::string> outputs) override {
    return tg::ONNXNode(*this, ex.node(op, opType, inputs, outputs));
  }
  std::string constI64(llvm::ArrayRef<int64_t> values,
                       StringRef suffix) override {
    return ex.constI64(values, hint + suffix.str());
  }
  std::string constF32(llvm::ArrayRef<double> values,
                       StringRef suffix) override {
    return ex.constF32(values, hint + suffix.str());
  }
  FailureOr<std::string> scalar(Type elementType, double value,
                                StringRef suffix) override {
    return ex.scalar(elementType, value, hint + suffix.str(), op);
  }
  FailureOr<std::string> constant(ElementsAttr value) override {
    return ex.constant(value, hint, op);
  }
  FailureOr<std::string> weight() override {
    return ex.weight(cast<tg::WeightOp>(op));
  }
  LogicalResult exportBody(Block &body) override {
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      ex.names[arg] = input(i);
    for (Operation &inner : body.without_terminator())
      if (failed(ex.exportOp(&inner)))
        return failure();
    for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
      alias(i, ex.nameOf(v));
    return success();
  }

protected:
  void setAttr(void *node, StringRef name, int64_t value) override {
    Exporter::attrInt(static_cast<onnx::NodeProto *>(node), name, value);
  }
  void setAttr(void *node, StringRef name, double value) override {
    Exporter::attrFloat(static_cast<onnx::NodeProto *>(node), name, value);
  }
  void setAttr(void *node, StringRef name, StringRef value) override {
    Exporter::attrStr(static_cast<onnx::NodeProto *>(node), name, value);
  }
  void setAttr(void *node, StringRef name,
               llvm::ArrayRef<int64_t> values) override {
    Exporter::attrInts(static_cast<onnx::NodeProto *>(node), name, values);
  }
  LogicalResult setGraph(void *node, StringRef name, Block &body,
                         ArrayRef<std::string> outerArgs) override {
    return ex.exportSubgraph(static_cast<onnx::NodeProto *>(node), name, body,
                             outerArgs, hint);
  }
  unsigned numInputs() override { return op->getNumOperands(); }
  unsigned numOutputs() override { return op->getNumResults(); }

private:
  Exporter &ex;
  Operation *op;
  std::string hint;
};

FailureOr<std::string> Exporter::constant(ElementsAttr value, StringRef hint,
                                          Operation *op) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  auto type = cast<RankedTensorType>(value.getType());
  auto dataType = onnxutil::getONNXDataType(type.getElementType());
  if (!dense || !dataType)
    return op->emitError("cannot export a constant of type ")
           << type << " to ONNX";
  std::string name = fresh(hint);
  TP *t = newConstant(name);
  t->set_data_type(*dataType);
  for (int64_t d : type.getShape())
    t->add_dims(d);
  std::string bytes = tg::littleEndianBytes(dense);
  t->set_raw_data(bytes);
  return name;
}

FailureOr<std::string> Exporter::weight(tg::WeightOp op) {
  auto it = weightInits.find(op.getName());
  if (it != weightInits.end())
    return it->second;
  auto file = weights.fileFor(op);
  if (failed(file))
    return failure();
  const safetensors::TensorInfo *info = (*file)->lookup(op.getName());
  auto kind = elemKindOfDType(info->dtype);
  if (!kind)
    return op.emitOpError("has a dtype ONNX cannot hold");
  // In the main graph, as every initializer (newConstant): the cache above
  // hands the same one to every use, inside tg.if or not.
  TP *t = newConstant(fresh(op.getName()));
  t->set_data_type(elementTypeInfo(*kind).onnxDataType);
  for (int64_t d : info->shape)
    t->add_dims(d);
  llvm::ArrayRef<uint8_t> raw = (*file)->rawBytes(*info);
  t->set_raw_data(std::string(raw.begin(), raw.end()));
  weightInits[op.getName()] = t->name();
  return t->name();
}

LogicalResult Exporter::exportOp(Operation *op) {
  auto exportable = dyn_cast<tg::ONNXExportOpInterface>(op);
  if (!exportable)
    return op->emitOpError("cannot be exported to ONNX");
  OpEmitter emitter(*this, op);
  return exportable.exportONNX(emitter);
}

void setValueInfo(onnx::ValueInfoProto *vi, StringRef name,
                  RankedTensorType type);

LogicalResult Exporter::exportSubgraph(onnx::NodeProto *n, StringRef name,
                                       Block &body,
                                       ArrayRef<std::string> outerArgs,
                                       StringRef hint) {
  auto *a = n->add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto *sub = a->mutable_g();
  sub->set_name(fresh(hint.str() + "_" + name.str()));
  onnx::GraphProto *outer = graph;
  graph = sub;
  llvm::scope_exit restore([&] { graph = outer; });
  unsigned numInputs = body.getNumArguments() - outerArgs.size();
  for (BlockArgument arg : body.getArguments()) {
    if (arg.getArgNumber() >= numInputs) {
      names[arg] = outerArgs[arg.getArgNumber() - numInputs];
      continue;
    }
    std::string in = fresh(sub->name() + "_in");
    names[arg] = in;
    setValueInfo(sub->add_input(), in, cast<RankedTensorType>(arg.getType()));
  }
  for (Operation &op : body.without_terminator())
    if (failed(exportOp(&op)))
      return failure();
  // Each output is a fresh value of the subgraph (a yielded value may be
  // defined outside it, or yielded twice).
  for (Value v : body.getTerminator()->getOperands()) {
    std::string out = fresh(sub->name() + "_out");
    onnx::NodeProto *id = sub->add_node();
    id->set_op_type("Identity");
    id->set_name(fresh(out + "_Identity"));
    id->add_input(nameOf(v));
    id->add_output(out);
    setValueInfo(sub->add_output(), out, cast<RankedTensorType>(v.getType()));
  }
  return success();
}

void setValueInfo(onnx::ValueInfoProto *vi, StringRef name,
                  RankedTensorType type) {
  vi->set_name(name.str());
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(*onnxutil::getONNXDataType(type.getElementType()));
  auto *shape = tt->mutable_shape();
  for (int64_t d : type.getShape())
    shape->add_dim()->set_dim_value(d);
}

LogicalResult Exporter::run(func::FuncOp fn) {
  model.set_ir_version(8);
  model.set_producer_name(options.producerName);
  auto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kONNXExportOpset);
  graph = model.mutable_graph();
  graph->set_name(fn.getName().str());

  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError("must have a single block to be exported");
  Block &block = fn.getBody().front();
  FunctionType type = fn.getFunctionType();
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults()))
    if (!isa<RankedTensorType>(t) ||
        !cast<RankedTensorType>(t).hasStaticShape() ||
        !onnxutil::getONNXDataType(cast<RankedTensorType>(t).getElementType()))
      return fn.emitOpError("has a ")
             << t << " argument or result, which ONNX export does not support";

  // Reserve the interface names first so that inner values never take them.
  SmallVector<std::string> resultNames;
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto attr = fn.getResultAttrOfType<StringAttr>(i, "tg.name");
    resultNames.push_back(
        fresh(attr ? attr.getValue() : "result" + std::to_string(i)));
  }
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    auto attr = fn.getArgAttrOfType<StringAttr>(i, "tg.name");
    std::string name =
        fresh(attr ? attr.getValue() : "arg" + std::to_string(i));
    names[arg] = name;
    setValueInfo(graph->add_input(), name,
                 cast<RankedTensorType>(arg.getType()));
  }
  // A result computed by a node gets its output's name directly.
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  llvm::DenseSet<Value> claimed;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<tg::WeightOp, tg::ConstantOp>(def) ||
        !claimed.insert(v).second)
      continue;
    names[v] = resultNames[i];
  }

  for (Operation &op : block.without_terminator()) {
    if (!isa<tg::TGDialect>(op.getDialect()))
      return op.emitOpError("cannot be exported to ONNX (only tg ops can)");
    if (failed(exportOp(&op)))
      return failure();
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (nameOf(v) != resultNames[i]) {
      onnx::NodeProto *n = graph->add_node();
      n->set_op_type("Identity");
      n->set_name(fresh(resultNames[i] + "_Identity"));
      n->add_input(nameOf(v));
      n->add_output(resultNames[i]);
    }
    setValueInfo(graph->add_output(), resultNames[i],
                 cast<RankedTensorType>(v.getType()));
  }
  return success();
}

} // namespace

LogicalResult loom::exportONNX(ModuleOp module, llvm::raw_ostream &os,
                               const ONNXExportOptions &options) {
  func::FuncOp fn;
  if (!options.entry.empty()) {
    fn = module.lookupSymbol<func::FuncOp>(options.entry);
    if (!fn)
      return module.emitError("no function @") << options.entry << " to export";
  } else {
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    fn = module.lookupSymbol<func::FuncOp>("main");
    if (!fn && funcs.size() == 1)
      fn = funcs.front();
    if (!fn)
      return module.emitError("no @main function to export (name one with "
                              "the entry option)");
  }
  Exporter exporter(module, options);
  if (failed(exporter.run(fn)))
    return failure();
  if (options.check) {
    std::string error = onnxlib::checkModel(exporter.model);
    if (!error.empty())
      return fn.emitError("the ONNX checker rejects the exported model: ")
             << error;
  }
  if (options.text) {
    std::string text;
    std::string error = onnxlib::printText(exporter.model, text);
    if (!error.empty())
      return fn.emitError("cannot print the model as ONNX text: ") << error;
    os << text;
    return success();
  }
  std::string bytes;
  if (!exporter.model.SerializeToString(&bytes))
    return fn.emitError("cannot serialize the ONNX model (larger than 2 GiB?)");
  os << bytes;
  return success();
}

LogicalResult loom::exportONNXToFile(ModuleOp module, StringRef path,
                                     const ONNXExportOptions &options) {
  ONNXExportOptions opts = options;
  opts.text = opts.text || path.ends_with(".onnxtext");
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(exportONNX(module, os, opts)))
    return failure();
  std::error_code ec;
  llvm::raw_fd_ostream file(path, ec);
  if (!ec) {
    file << bytes;
    file.close();
    ec = file.error();
  }
  if (ec)
    return module.emitError("cannot write ") << path << ": " << ec.message();
  return success();
}
