//===- ImportONNX.cpp - ONNX models to the tg dialect ---------------------===//
//
// Part of Loom. The driver of the importer (see ImportONNX.h): parsing,
// pinning of symbolic dimensions, the unsupported-operator scan, checking,
// shape inference and version conversion, then the walk over the graph that
// hands each node to its handler (Importer.h) and builds the function. The
// values of the graph and the NodeContext the handlers use are kept by
// NodeContext.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/ONNXToTG/ImportONNX.h"

#include "GraphImporter.h"
#include "loom/Conversion/ONNXCommon/ONNXLibrary.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"

#include <climits>
#include <cmath>
#include <set>
#include <sstream>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using llvm::StringRef;

/// For `return failImport(emitError(loc) << ...);`: the diagnostic is
/// reported when the full expression ends, and the import returns null.
static std::nullptr_t failImport(const InFlightDiagnostic &) { return nullptr; }

//===----------------------------------------------------------------------===//
// Handler table
//===----------------------------------------------------------------------===//

const HandlerTable &onnx_to_tg::getHandlerTable() {
  static const HandlerTable table = [] {
    HandlerTable t;
    populateElementwiseHandlers(t);
    populateLinearHandlers(t);
    populateEinsumHandlers(t);
    populatePoolingHandlers(t);
    populateNormalizationHandlers(t);
    populateReductionHandlers(t);
    populateDataMovementHandlers(t);
    populateResizeHandlers(t);
    populateShapeFoldingHandlers(t);
    populateControlFlowHandlers(t);
    populateRecurrentHandlers(t);
    populateDynamicHandlers(t);
    populateScatterHandlers(t);
    populateGridSampleHandlers(t);
    populateCompositeHandlers(t);
    populateSequenceHandlers(t);
    populateRoiAlignHandlers(t);
    populateDirectHandlers(t); // last: the ops no handler above claims
    return t;
  }();
  return table;
}

/// The table key of a node: its type, prefixed by its domain unless that is
/// the default one.
static std::string handlerKey(const onnx::NodeProto &node) {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return node.op_type();
  return node.domain() + ":" + node.op_type();
}

static StringRef canonicalDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}

//===----------------------------------------------------------------------===//
// The graph walk
//===----------------------------------------------------------------------===//

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

LogicalResult GraphImporter::checkAgainstONNX(StringRef name,
                                              const ImportedValue &v,
                                              NodeContext &ctx) {
  auto it = onnxTypes.find(name);
  if (it == onnxTypes.end() || !it->second->has_tensor_type())
    return success();
  const auto &tt = it->second->tensor_type();
  if (tt.elem_type() != 0 && v.dataType != 0 && tt.elem_type() != v.dataType)
    return ctx.emitError() << "output '" << name << "' was imported with "
                           << onnxutil::dataTypeName(v.dataType)
                           << " elements but ONNX infers "
                           << onnxutil::dataTypeName(tt.elem_type());
  if (!tt.has_shape())
    return success();
  std::vector<int64_t> shape;
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value())
      return success();
    shape.push_back(d.dim_value());
  }
  // A padded dimension holds at most its bound; ONNX may know its length.
  for (const BoundedDim &b : tg::getBounds(v.value))
    if (shape.size() == v.shape.size() && shape[b.dim] <= v.shape[b.dim])
      shape[b.dim] = v.shape[b.dim];
  if (shape != v.shape)
    return ctx.emitError() << "output '" << name << "' was imported with shape "
                           << safetensors::formatShape(v.shape)
                           << " but ONNX infers "
                           << safetensors::formatShape(shape);
  return success();
}

/// The opset version of each domain `model` imports ("" for the default
/// domain).
static llvm::StringMap<int64_t> opsetsOf(const onnx::ModelProto &model) {
  llvm::StringMap<int64_t> opsets;
  for (const auto &o : model.opset_import())
    opsets[canonicalDomain(o.domain())] = o.version();
  return opsets;
}

void GraphImporter::recordONNXTypes(const onnx::GraphProto &graph) {
  for (const auto &vi : graph.value_info())
    onnxTypes[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    onnxTypes[vi.name()] = &vi.type();
}

LogicalResult
GraphImporter::declareInitializers(const onnx::GraphProto &graph) {
  for (const auto &init : graph.initializer()) {
    ImportedValue v;
    v.origin = ImportedValue::Origin::Initializer;
    v.initializer = &init;
    v.dataType = init.data_type();
    v.shape.assign(init.dims().begin(), init.dims().end());
    if (onnxutil::numElementsOf(v.shape) < 0)
      return emitError(fileLoc)
             << "initializer '" << init.name() << "' has an invalid shape";
    values[init.name()] = std::move(v);
  }
  return success();
}

LogicalResult
GraphImporter::declareGraphInputs(const onnx::GraphProto &graph,
                                  SmallVectorImpl<Type> &argTypes,
                                  SmallVectorImpl<std::string> &argNames) {
  for (const auto &in : graph.input()) {
    if (values.count(in.name()))
      continue;
    Location loc = NameLoc::get(builder.getStringAttr(in.name()), fileLoc);
    auto bound = options.boundInputs.find(in.name());
    if (bound != options.boundInputs.end()) {
      if (failed(bindGraphInput(in, bound->second, loc)))
        return failure();
      continue;
    }
    FailureOr<RankedTensorType> type = graphInputType(in, loc);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(in.name());
  }
  return success();
}

/// `x` as a user writes it (1.5, not 1.500000e+00).
static std::string formatValue(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// A graph input bound to a value at import time is a constant.
LogicalResult GraphImporter::bindGraphInput(const onnx::ValueInfoProto &in,
                                            const ONNXTensor &t, Location loc) {
  ImportedValue v;
  v.origin = ImportedValue::Origin::ConstantNode;
  v.dataType = in.type().tensor_type().elem_type();
  if (v.dataType == 0)
    v.dataType = t.dataType;
  v.shape = t.shape;
  HostTensor h;
  h.dataType = v.dataType;
  h.shape = t.shape;
  if (onnxutil::numElementsOf(h.shape) != static_cast<int64_t>(t.values.size()))
    return emitError(loc) << "the value bound to graph input '" << in.name()
                          << "' does not match its shape";
  bool isBool = h.dataType == onnx::TensorProto::BOOL;
  for (double x : t.values) {
    if (h.isFloat()) {
      h.floats.push_back(x);
      continue;
    }
    if (isBool && x != 0 && x != 1)
      return emitError(loc)
             << "the value " << formatValue(x) << " bound to graph input '"
             << in.name() << "' (bool) must be 0 or 1";
    if (x != std::trunc(x) || std::abs(x) > 9007199254740992.0)
      return emitError(loc)
             << "the value " << formatValue(x) << " bound to graph input '"
             << in.name() << "' (" << onnxutil::dataTypeName(h.dataType)
             << ") is not an integer";
    h.ints.push_back(static_cast<int64_t>(x));
  }
  onnxutil::roundToDataType(h);
  boundInputAttrs.push_back(builder.getNamedAttr(in.name(), toAttribute(h)));
  v.known = std::make_shared<const HostTensor>(std::move(h));
  values[in.name()] = std::move(v);
  return success();
}

FailureOr<RankedTensorType>
GraphImporter::graphInputType(const onnx::ValueInfoProto &in, Location loc) {
  if (!in.type().has_tensor_type())
    return emitError(loc) << "graph input '" << in.name()
                          << "' is not a tensor";
  const auto &tt = in.type().tensor_type();
  Type e = onnxutil::getTGElementType(context, tt.elem_type());
  if (!e)
    return emitError(loc) << "graph input '" << in.name()
                          << "' has element type "
                          << onnxutil::dataTypeName(tt.elem_type())
                          << ", which tg does not support";
  if (!tt.has_shape())
    return emitError(loc) << "graph input '" << in.name()
                          << "' has no shape; give it one in the model";
  SmallVector<int64_t> shape;
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0)
      return emitError(loc)
             << "graph input '" << in.name()
             << "' has a dimension of unknown size"
             << (d.dim_param().empty()
                     ? std::string("; give the input a shape "
                                   "(loom-translate --input-shape ") +
                           in.name() + "=D0xD1x...)"
                     : " '" + d.dim_param() + "'; give it with --dim " +
                           d.dim_param() + "=VALUE");
    shape.push_back(d.dim_value());
  }
  return RankedTensorType::get(shape, e);
}

func::FuncOp GraphImporter::createFunction(ArrayRef<Type> argTypes,
                                           ArrayRef<std::string> argNames) {
  auto func = func::FuncOp::create(builder, fileLoc, options.functionName,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  function = func;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "tg.name", builder.getStringAttr(name));
    ImportedValue v;
    v.value = body->getArgument(i);
    v.isGraphInput = true;
    auto type = cast<RankedTensorType>(argTypes[i]);
    v.shape.assign(type.getShape().begin(), type.getShape().end());
    v.dataType = *onnxutil::getONNXDataType(type.getElementType());
    values[name] = std::move(v);
  }
  builder.setInsertionPointToEnd(body);
  return func;
}

LogicalResult GraphImporter::importNodes(const onnx::GraphProto &graph) {
  for (const auto &node : graph.node())
    if (failed(importNode(node)))
      return failure();
  return success();
}

LogicalResult GraphImporter::importSubgraph(const onnx::GraphProto &graph) {
  if (failed(declareInitializers(graph)))
    return failure();
  return importNodes(graph);
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        std::optional<int64_t> opsetOverride) {
  ++importedNodes;
  StringRef locName = !node.name().empty()     ? StringRef(node.name())
                      : node.output_size() > 0 ? StringRef(node.output(0))
                                               : StringRef(node.op_type());
  Location loc = NameLoc::get(builder.getStringAttr(locName), fileLoc);
  auto opset = opsets.find(canonicalDomain(node.domain()));
  NodeContext ctx(*this, node,
                  opsetOverride           ? *opsetOverride
                  : opset == opsets.end() ? 0
                                          : opset->second,
                  loc);
  const HandlerTable &table = getHandlerTable();
  auto handler = table.find(handlerKey(node));
  if (handler == table.end())
    return ctx.emitError() << "operator not supported by the ONNX importer";
  for (const std::string &in : node.input())
    if (!in.empty() && !lookup(in))
      return ctx.emitError() << "input '" << in
                             << "' is not defined before its use (ONNX "
                                "graphs are topologically sorted)";
  auto lengths = importWithRunTimeLengths(ctx);
  if (failed(lengths))
    return failure();
  if (!*lengths &&
      (failed(handler->second(ctx)) || failed(propagateBounds(ctx))))
    return failure();
  trackValueRanges(ctx);
  trackRunTimeInts(ctx);
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    ImportedValue *v = lookup(node.output(i));
    if (!v)
      continue; // An unused optional output the handler did not produce.
    if (failed(checkAgainstONNX(node.output(i), *v, ctx)))
      return failure();
  }
  return success();
}

LogicalResult GraphImporter::buildReturn(const onnx::GraphProto &graph,
                                         func::FuncOp func,
                                         ArrayRef<Type> argTypes) {
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &out : graph.output()) {
    Location loc = NameLoc::get(builder.getStringAttr(out.name()), fileLoc);
    ImportedValue *v = lookup(out.name());
    if (!v)
      return emitError(loc) << "graph output '" << out.name()
                            << "' is not computed by any node";
    auto value = materialize(out.name(), *v, loc);
    if (failed(value))
      return failure();
    if (out.type().has_tensor_type()) {
      int32_t declared = out.type().tensor_type().elem_type();
      if (declared != 0 && declared != v->dataType)
        return emitError(loc)
               << "graph output '" << out.name() << "' is declared "
               << onnxutil::dataTypeName(declared) << " but computed as "
               << typeStr(value->getType());
    }
    results.push_back(*value);
    resultTypes.push_back(value->getType());
  }
  // Outputs of data-dependent length (the tg.bound ops producing the
  // returned values say which): their lengths become results too, one per
  // distinct length, named after the first output using it; the results'
  // tg.bounded_dim and tg.length_result are derived here and nowhere else.
  SmallVector<std::string> names;
  for (const auto &out : graph.output())
    names.push_back(out.name());
  SmallVector<std::optional<tg::ResultBound>> bounds(results.size());
  llvm::DenseMap<Value, unsigned> lengthResults;
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    SmallVector<BoundedDim, 2> bs = tg::getBounds(results[i]);
    std::optional<BoundedDim> b;
    if (!bs.empty())
      b = bs.front();
    if (bs.size() > 1)
      return emitError(fileLoc)
             << "graph output '" << out.name()
             << "' is padded in two dimensions (sizes known only at run "
                "time); Loom returns values padded in one";
    if (!b)
      continue;
    auto [it, added] = lengthResults.try_emplace(b->length, results.size());
    if (added) {
      results.push_back(b->length);
      resultTypes.push_back(b->length.getType());
      names.push_back(out.name() + "_length");
    }
    bounds[i] = tg::ResultBound{b->dim, it->second};
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(builder.getFunctionType(argTypes, resultTypes));
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, "tg.name", builder.getStringAttr(name));
  for (auto [i, b] : llvm::enumerate(bounds))
    if (b)
      tg::setResultBound(func, i, *b);
  return success();
}

LogicalResult GraphImporter::finishModule(ModuleOp module, func::FuncOp func) {
  if (usedWeights) {
    if (options.weightsAttr.empty())
      return emitError(fileLoc)
             << "the model has weights but no weights file was "
                "named for them (loom-translate: give -o FILE to "
                "write them beside it, or --weights-file FILE)";
    module->setAttr(tg::TGDialect::kWeightsAttrName,
                    builder.getStringAttr(options.weightsAttr));
  }
  if (!boundInputAttrs.empty())
    module->setAttr("loom.onnx.bound_inputs",
                    builder.getDictionaryAttr(boundInputAttrs));
  if (options.fuseIdioms && failed(fuseIdioms(func)))
    return emitError(fileLoc) << "fusing exporter idioms did not converge";
  if (failed(mlir::verify(module)))
    return emitError(fileLoc) << "the imported module does not verify (an "
                                 "importer bug; please report it)";
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run(onnx::ModelProto &model) {
  const onnx::GraphProto &graph = model.graph();
  recordONNXTypes(graph);

  opsets = opsetsOf(model);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  // Initializers, then the inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  if (failed(declareInitializers(graph)) ||
      failed(declareGraphInputs(graph, argTypes, argNames)))
    return nullptr;
  func::FuncOp func = createFunction(argTypes, argNames);
  if (failed(importNodes(graph)) ||
      failed(buildReturn(graph, func, argTypes)) ||
      failed(finishModule(*module, func)))
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

void loom::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, tg::TGDialect>();
}

int64_t loom::getMaxKnownONNXOpset() { return onnxlib::maxKnownOpset(); }

/// Pins the shapes of the graph inputs that are not initializers.
/// Gives each value bound without a shape (ONNXTensor::shapeFromInput) the
/// declared shape of its graph input.
static LogicalResult resolveBoundShapes(const onnx::GraphProto &graph,
                                        ONNXImportOptions &options,
                                        Location loc) {
  for (const auto &in : graph.input()) {
    auto bound = options.boundInputs.find(in.name());
    if (bound == options.boundInputs.end() || !bound->second.shapeFromInput)
      continue;
    ONNXTensor &t = bound->second;
    int64_t n = static_cast<int64_t>(t.values.size());
    std::vector<int64_t> declared;
    bool isStatic =
        in.type().has_tensor_type() && in.type().tensor_type().has_shape();
    if (isStatic)
      for (const auto &d : in.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) {
          isStatic = false;
          break;
        }
        declared.push_back(d.dim_value());
      }
    if (!isStatic) {
      t.shape = {n};
      continue;
    }
    int64_t expected = onnxutil::numElementsOf(declared);
    if (expected != n)
      return emitError(NameLoc::get(
                 StringAttr::get(loc.getContext(), in.name()), loc))
             << n << " value" << (n == 1 ? "" : "s")
             << " bound to graph input '" << in.name() << "' of shape "
             << safetensors::formatShape(declared) << ", which has " << expected
             << " element" << (expected == 1 ? "" : "s");
    t.shape = declared;
  }
  return success();
}

static LogicalResult pinInputShapes(onnx::ModelProto &model,
                                    const ONNXImportOptions &options,
                                    Location loc) {
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  llvm::StringSet<> knownInputs;
  for (auto &in : *model.mutable_graph()->mutable_input()) {
    knownInputs.insert(in.name());
    if (initializers.contains(in.name()) || !in.type().has_tensor_type())
      continue;
    auto *tt = in.mutable_type()->mutable_tensor_type();
    auto shape = options.inputShapes.find(in.name());
    auto bound = options.boundInputs.find(in.name());
    if (shape != options.inputShapes.end() ||
        bound != options.boundInputs.end()) {
      llvm::ArrayRef<int64_t> dims = bound != options.boundInputs.end()
                                         ? llvm::ArrayRef(bound->second.shape)
                                         : llvm::ArrayRef(shape->second);
      tt->mutable_shape()->clear_dim();
      for (int64_t d : dims)
        tt->mutable_shape()->add_dim()->set_dim_value(d);
      continue;
    }
    if (!tt->has_shape())
      continue;
    for (auto &d : *tt->mutable_shape()->mutable_dim()) {
      if (d.has_dim_value() || d.dim_param().empty())
        continue;
      auto it = options.dims.find(d.dim_param());
      if (it != options.dims.end())
        d.set_dim_value(it->second);
    }
  }
  for (const auto &entry : options.inputShapes)
    if (!knownInputs.contains(entry.getKey()))
      return emitError(loc) << "there is no graph input '" << entry.getKey()
                            << "' to give a shape to";
  for (const auto &entry : options.boundInputs)
    if (!knownInputs.contains(entry.getKey()))
      return emitError(loc)
             << "there is no graph input '" << entry.getKey() << "' to bind";
  return success();
}

/// Checks what the ONNX library assumes without checking (its version
/// converter crashes otherwise): every value is defined once, before its
/// uses; every graph output is defined; tensor data fits its shape.
static LogicalResult validateGraph(const onnx::GraphProto &graph,
                                   Location loc) {
  llvm::StringSet<> defined;
  auto checkTensor = [&](const onnx::TensorProto &t) {
    if (auto err = onnxutil::checkTensorData(t)) {
      emitError(loc) << "not a valid ONNX model: "
                     << llvm::toString(std::move(err));
      return false;
    }
    return true;
  };
  for (const auto &init : graph.initializer()) {
    if (!checkTensor(init))
      return failure();
    if (!defined.insert(init.name()).second)
      return emitError(loc) << "not a valid ONNX model: initializer '"
                            << init.name() << "' is defined twice";
  }
  llvm::StringSet<> inputs;
  for (const auto &in : graph.input()) {
    if (!inputs.insert(in.name()).second)
      return emitError(loc) << "not a valid ONNX model: graph input '"
                            << in.name() << "' is listed twice";
    defined.insert(in.name());
  }
  for (const auto &node : graph.node()) {
    for (const std::string &in : node.input())
      if (!in.empty() && !defined.contains(in))
        return emitError(loc)
               << "not a valid ONNX model: '" << node.op_type() << "' "
               << describeNode(node) << " uses '" << in
               << "', which no earlier node, input or initializer defines";
    for (const auto &attr : node.attribute())
      if (attr.has_t() && !checkTensor(attr.t()))
        return failure();
    for (const std::string &out : node.output())
      if (!out.empty() && !defined.insert(out).second)
        return emitError(loc) << "not a valid ONNX model: value '" << out
                              << "' is defined twice";
  }
  for (const auto &out : graph.output())
    if (!defined.contains(out.name()))
      return emitError(loc) << "not a valid ONNX model: graph output '"
                            << out.name() << "' is not computed by any node";
  return success();
}

/// Reports every operator type without a handler, once per type, including
/// those inside subgraphs. Returns failure when there is one.
static LogicalResult scanUnsupported(const onnx::GraphProto &graph,
                                     const llvm::StringMap<int64_t> &opsets,
                                     Location fileLoc,
                                     llvm::StringSet<> &reported) {
  const HandlerTable &table = getHandlerTable();
  bool ok = true;
  for (const auto &node : graph.node()) {
    std::string key = handlerKey(node);
    if (!table.count(key) && reported.insert(key).second) {
      auto it = opsets.find(canonicalDomain(node.domain()));
      std::string domain =
          canonicalDomain(node.domain()).empty() ? "" : node.domain() + " ";
      emitError(
          NameLoc::get(StringAttr::get(fileLoc.getContext(),
                                       node.name().empty() && node.output_size()
                                           ? node.output(0)
                                           : node.name()),
                       fileLoc))
          << "'" << node.op_type() << "' " << describeNode(node) << " ("
          << domain << "opset " << (it == opsets.end() ? 0 : it->second)
          << "): operator not supported by the ONNX importer";
      ok = false;
    }
    for (const auto &attr : node.attribute()) {
      if (attr.has_g() &&
          failed(scanUnsupported(attr.g(), opsets, fileLoc, reported)))
        ok = false;
      for (const auto &g : attr.graphs())
        if (failed(scanUnsupported(g, opsets, fileLoc, reported)))
          ok = false;
    }
  }
  return success(ok);
}

OwningOpRef<ModuleOp> loom::importONNX(StringRef bytes, StringRef sourceName,
                                       ONNXFormat format, MLIRContext *context,
                                       const ONNXImportOptions &options,
                                       safetensors::Writer &weights) {
  context->loadDialect<func::FuncDialect, tg::TGDialect>();
  Location fileLoc = FileLineColLoc::get(context, sourceName, 0, 0);
  onnx::ModelProto model;
  if (format == ONNXFormat::Binary) {
    if (bytes.size() > static_cast<size_t>(INT_MAX))
      return failImport(emitError(fileLoc)
                        << "the model is larger than 2 GiB, the "
                           "protobuf limit");
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return failImport(
          emitError(fileLoc)
          << "not a valid ONNX model: the protobuf data is truncated "
             "or malformed ("
          << bytes.size() << " bytes)");
  } else {
    std::string error = onnxlib::parseText(bytes.str(), model);
    if (!error.empty())
      return failImport(emitError(fileLoc)
                        << "cannot parse the ONNX text: " << error);
  }
  if (!model.has_graph())
    return failImport(emitError(fileLoc)
                      << "not a valid ONNX model: it has no graph");

  llvm::StringMap<int64_t> opsets = opsetsOf(model);
  llvm::StringSet<> reported;
  if (failed(scanUnsupported(model.graph(), opsets, fileLoc, reported)))
    return nullptr;
  if (!opsets.count(""))
    return failImport(emitError(fileLoc)
                      << "the model imports no opset of the default "
                         "ONNX domain");
  int64_t modelOpset = opsets.lookup("");
  // Scan-8 (a batch axis and sequence_lens) changes its inputs' shapes when
  // ONNX's version converter rewrites it; the importer knows Scan-9 and
  // later only.
  if (modelOpset < 9)
    for (const auto &node : model.graph().node())
      if (node.op_type() == "Scan" && canonicalDomain(node.domain()).empty())
        return failImport(
            emitError(
                NameLoc::get(StringAttr::get(context, node.name()), fileLoc))
            << "'Scan' " << describeNode(node) << " (opset " << modelOpset
            << "): Scan before opset 9 (with a batch axis and sequence_lens) "
               "is not supported");
  // The options with the shapes of bound values resolved; the importer
  // below reads these.
  auto resolvedOptions = std::make_unique<ONNXImportOptions>(options);
  if (failed(resolveBoundShapes(model.graph(), *resolvedOptions, fileLoc)) ||
      failed(pinInputShapes(model, *resolvedOptions, fileLoc)) ||
      failed(validateGraph(model.graph(), fileLoc)))
    return nullptr;

  int64_t maxKnown = onnxlib::maxKnownOpset();
  if (modelOpset > maxKnown) {
    emitWarning(fileLoc) << "the model uses opset " << modelOpset
                         << ", newer than the " << maxKnown
                         << " the ONNX library knows; importing it without "
                            "checking, shape inference or conversion";
  } else {
    if (options.check) {
      std::string error = onnxlib::checkModel(model);
      if (!error.empty())
        return failImport(emitError(fileLoc)
                          << "the ONNX checker rejects the model: " << error);
    }
    std::string error = onnxlib::inferShapes(model);
    if (!error.empty())
      emitWarning(fileLoc) << "ONNX shape inference failed: " << error;
    int64_t target = options.targetOpset;
    if (target > maxKnown)
      return failImport(emitError(fileLoc)
                        << "cannot convert to opset " << target
                        << ": the ONNX library knows opsets up to "
                        << maxKnown);
    if (target > 0 && target != modelOpset) {
      onnx::ModelProto converted = model;
      error = onnxlib::convertVersion(converted, target);
      if (error.empty()) {
        model = std::move(converted);
        error = onnxlib::inferShapes(model);
        if (!error.empty())
          emitWarning(fileLoc) << "ONNX shape inference failed after "
                                  "conversion: "
                               << error;
      } else {
        emitWarning(fileLoc) << "ONNX's version converter cannot convert the "
                                "model from opset "
                             << modelOpset << " to " << target << " (" << error
                             << "); importing it at opset " << modelOpset;
      }
    }
  }

  GraphImporter importer(context, *resolvedOptions, weights, sourceName);
  return importer.run(model);
}

llvm::Expected<ONNXTensor> loom::readONNXTensor(StringRef bytes,
                                                StringRef what) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": not a valid onnx.TensorProto "
                                          "(truncated or malformed)");
  auto t = onnxutil::decodeTensor(proto, "");
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": " + llvm::toString(t.takeError()));
  ONNXTensor out;
  out.name = proto.name();
  out.dataType = t->dataType;
  out.typeName = onnxutil::dataTypeName(t->dataType);
  out.shape = t->shape;
  out.values.reserve(t->numElements());
  for (int64_t i = 0; i < t->numElements(); ++i)
    out.values.push_back(t->asDouble(i));
  return out;
}

/// The name, element type and shape (-1: unknown dimension) of a graph
/// input or output.
static ONNXModelInfo::Input describeValue(const onnx::ValueInfoProto &v) {
  ONNXModelInfo::Input info;
  info.name = v.name();
  switch (v.type().value_case()) {
  case onnx::TypeProto::kSequenceType:
    info.kind = "sequence";
    break;
  case onnx::TypeProto::kOptionalType:
    info.kind = "optional";
    break;
  case onnx::TypeProto::kMapType:
    info.kind = "map";
    break;
  case onnx::TypeProto::kSparseTensorType:
    info.kind = "sparse tensor";
    break;
  default:
    break;
  }
  const auto &tt = v.type().tensor_type();
  info.dataType = tt.elem_type();
  for (const auto &d : tt.shape().dim())
    info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return info;
}

llvm::Expected<ONNXModelInfo> loom::describeONNXModel(StringRef bytes,
                                                      ONNXFormat format) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  onnx::ModelProto model;
  if (format == ONNXFormat::Binary) {
    if (bytes.size() > static_cast<size_t>(INT_MAX) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return error("not a valid ONNX model: the protobuf data is truncated or "
                   "malformed");
  } else {
    std::string message = onnxlib::parseText(bytes.str(), model);
    if (!message.empty())
      return error("cannot parse the ONNX text: " + message);
  }
  ONNXModelInfo info;
  for (const auto &o : model.opset_import())
    if (canonicalDomain(o.domain()).empty())
      info.opset = o.version();
  std::set<std::string> ops;
  for (const auto &node : model.graph().node())
    ops.insert(handlerKey(node));
  info.operators.assign(ops.begin(), ops.end());
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (const auto &in : model.graph().input())
    if (!initializers.contains(in.name()))
      info.inputs.push_back(describeValue(in));
  for (const auto &out : model.graph().output())
    info.outputs.push_back(describeValue(out));
  return info;
}

std::vector<std::string> loom::getSupportedONNXOperators() {
  std::vector<std::string> ops;
  for (const auto &entry : getHandlerTable())
    ops.push_back(entry.getKey().str());
  llvm::sort(ops);
  return ops;
}

std::vector<std::string> loom::getFoldOnlyONNXOperators() {
  return {"Ceil", "Floor", "Range", "Round", "Sign"};
}
