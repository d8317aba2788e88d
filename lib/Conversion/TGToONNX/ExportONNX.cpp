//===- ExportONNX.cpp - tg graphs to ONNX models --------------------------===//
//
// Part of Loom. See ExportONNX.h. One function per family of tg ops emits
// the ONNX nodes; constants (shapes, axes, bounds) become initializers.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/TGToONNX/ExportONNX.h"

#include "loom/Conversion/ONNXCommon/ONNXLibrary.h"
#include "loom/Conversion/ONNXCommon/ONNXTensors.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

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

std::optional<int32_t> dataTypeFromSafetensors(safetensors::DType d) {
  switch (d) {
  case safetensors::DType::F32:
    return TP::FLOAT;
  case safetensors::DType::F64:
    return TP::DOUBLE;
  case safetensors::DType::F16:
    return TP::FLOAT16;
  case safetensors::DType::BF16:
    return TP::BFLOAT16;
  case safetensors::DType::I64:
    return TP::INT64;
  case safetensors::DType::I32:
    return TP::INT32;
  case safetensors::DType::Bool:
    return TP::BOOL;
  default:
    return std::nullopt;
  }
}

class Exporter {
public:
  Exporter(ModuleOp module, const ONNXExportOptions &options)
      : module(module), options(options) {}

  LogicalResult run(func::FuncOp fn);
  onnx::ModelProto model;

private:
  ModuleOp module;
  const ONNXExportOptions &options;
  onnx::GraphProto *graph = nullptr;
  llvm::DenseMap<Value, std::string> names;
  llvm::StringSet<> used;
  llvm::StringMap<std::string> weightInits;
  std::optional<safetensors::File> weights;
  bool weightsFailed = false;

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
  /// `epsilon`, left out when it is ONNX's default (1e-5 in float), so that
  /// the default survives a round trip exactly.
  static void attrEpsilon(onnx::NodeProto *n, double v) {
    if (static_cast<float>(v) != 1e-5f)
      attrFloat(n, "epsilon", v);
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

  /// A 1-D int64 initializer.
  std::string constI64(llvm::ArrayRef<int64_t> values, StringRef hint) {
    TP *t = graph->add_initializer();
    t->set_name(fresh(hint));
    t->set_data_type(TP::INT64);
    t->add_dims(values.size());
    std::string bytes;
    for (int64_t v : values)
      appendLE(bytes, static_cast<uint64_t>(v), 8);
    t->set_raw_data(bytes);
    return t->name();
  }

  /// A 1-D float initializer (Resize's scales).
  std::string constF32(llvm::ArrayRef<double> values, StringRef hint) {
    TP *t = graph->add_initializer();
    t->set_name(fresh(hint));
    t->set_data_type(TP::FLOAT);
    t->add_dims(values.size());
    for (double v : values)
      t->add_float_data(static_cast<float>(v));
    return t->name();
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
  /// One node of `opType` with the op's operands and result, in order.
  LogicalResult direct(Operation *op, StringRef opType);
  LogicalResult gelu(tg::GeluOp op);
};

FailureOr<std::string> Exporter::constant(ElementsAttr value, StringRef hint,
                                          Operation *op) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  auto type = cast<RankedTensorType>(value.getType());
  auto dataType = onnxutil::getONNXDataType(type.getElementType());
  if (!dense || !dataType)
    return op->emitError("cannot export a constant of type ")
           << type << " to ONNX";
  TP *t = graph->add_initializer();
  t->set_name(fresh(hint));
  t->set_data_type(*dataType);
  for (int64_t d : type.getShape())
    t->add_dims(d);
  std::string bytes;
  Type e = type.getElementType();
  unsigned width = e.isInteger(1) ? 8 : e.getIntOrFloatBitWidth();
  int64_t n = type.getNumElements();
  if (isa<FloatType>(e)) {
    auto values = dense.getValues<APFloat>();
    for (int64_t i = 0; i < n; ++i)
      appendLE(bytes,
               values[dense.isSplat() ? 0 : i].bitcastToAPInt().getZExtValue(),
               width / 8);
  } else if (e.isInteger(1)) {
    auto values = dense.getValues<bool>();
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(values[dense.isSplat() ? 0 : i] ? 1 : 0);
  } else {
    auto values = dense.getValues<APInt>();
    for (int64_t i = 0; i < n; ++i)
      appendLE(bytes, values[dense.isSplat() ? 0 : i].getSExtValue(),
               width / 8);
  }
  t->set_raw_data(bytes);
  return t->name();
}

FailureOr<std::string> Exporter::weight(tg::WeightOp op) {
  auto it = weightInits.find(op.getName());
  if (it != weightInits.end())
    return it->second;
  if (!weights) {
    if (weightsFailed)
      return failure();
    auto file = tg::openWeights(module, options.weightsFile);
    if (failed(file)) {
      weightsFailed = true;
      return failure();
    }
    weights.emplace(std::move(*file));
  }
  if (failed(tg::checkWeight(op, *weights)))
    return failure();
  const safetensors::TensorInfo *info = weights->lookup(op.getName());
  auto dataType = dataTypeFromSafetensors(info->dtype);
  if (!dataType)
    return op.emitOpError("has a dtype ONNX cannot hold");
  TP *t = graph->add_initializer();
  t->set_name(fresh(op.getName()));
  t->set_data_type(*dataType);
  for (int64_t d : info->shape)
    t->add_dims(d);
  llvm::ArrayRef<uint8_t> raw = weights->rawBytes(*info);
  t->set_raw_data(std::string(raw.begin(), raw.end()));
  weightInits[op.getName()] = t->name();
  return t->name();
}

LogicalResult Exporter::direct(Operation *op, StringRef opType) {
  SmallVector<std::string> inputs;
  for (Value v : op->getOperands())
    inputs.push_back(nameOf(v));
  node(op, opType, inputs, {define(op->getResult(0), hintFor(op))});
  return success();
}

LogicalResult Exporter::gelu(tg::GeluOp op) {
  // Opset 17 has no Gelu: 0.5 * x * (1 + erf(x / sqrt(2))), or the tanh form
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
  Type e = op.getType().getElementType();
  std::string x = nameOf(op.getInput()), h = hintFor(op);
  auto c = [&](double v) { return scalar(e, v, h + "_c", op); };
  auto half = c(0.5), one = c(1.0);
  if (failed(half) || failed(one))
    return failure();
  std::string inner;
  if (op.getTanhApproximation()) {
    auto k = c(0.044715), s = c(std::sqrt(2.0 / M_PI));
    if (failed(k) || failed(s))
      return failure();
    std::string x2 = fresh(h + "_x2"), x3 = fresh(h + "_x3"),
                kx3 = fresh(h + "_kx3"), sum = fresh(h + "_sum"),
                scaled = fresh(h + "_scaled");
    node(op, "Mul", {x, x}, {x2});
    node(op, "Mul", {x2, x}, {x3});
    node(op, "Mul", {x3, *k}, {kx3});
    node(op, "Add", {x, kx3}, {sum});
    node(op, "Mul", {sum, *s}, {scaled});
    inner = fresh(h + "_tanh");
    node(op, "Tanh", {scaled}, {inner});
  } else {
    auto r = c(M_SQRT1_2);
    if (failed(r))
      return failure();
    std::string scaled = fresh(h + "_scaled");
    node(op, "Mul", {x, *r}, {scaled});
    inner = fresh(h + "_erf");
    node(op, "Erf", {scaled}, {inner});
  }
  std::string plus = fresh(h + "_plus"), hx = fresh(h + "_hx");
  node(op, "Add", {inner, *one}, {plus});
  node(op, "Mul", {x, *half}, {hx});
  node(op, "Mul", {hx, plus}, {define(op.getResult(), h)});
  return success();
}

LogicalResult Exporter::exportOp(Operation *op) {
  std::string h = hintFor(op);
  auto out = [&](unsigned i = 0) { return define(op->getResult(i), h); };
  auto in = [&](unsigned i) { return nameOf(op->getOperand(i)); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tg::WeightOp w) -> LogicalResult {
        auto name = weight(w);
        if (failed(name))
          return failure();
        names[w.getResult()] = *name;
        return success();
      })
      .Case([&](tg::ConstantOp c) -> LogicalResult {
        auto name = constant(c.getValue(), h, op);
        if (failed(name))
          return failure();
        names[c.getResult()] = *name;
        return success();
      })
      .Case([&](tg::AddOp) { return direct(op, "Add"); })
      .Case([&](tg::SubOp) { return direct(op, "Sub"); })
      .Case([&](tg::MulOp) { return direct(op, "Mul"); })
      .Case([&](tg::DivOp) { return direct(op, "Div"); })
      .Case([&](tg::MaxOp) { return direct(op, "Max"); })
      .Case([&](tg::MinOp) { return direct(op, "Min"); })
      .Case([&](tg::PowOp) { return direct(op, "Pow"); })
      .Case([&](tg::MatmulOp) { return direct(op, "MatMul"); })
      .Case([&](tg::ReluOp) { return direct(op, "Relu"); })
      .Case([&](tg::SigmoidOp) { return direct(op, "Sigmoid"); })
      .Case([&](tg::TanhOp) { return direct(op, "Tanh"); })
      .Case([&](tg::ExpOp) { return direct(op, "Exp"); })
      .Case([&](tg::LogOp) { return direct(op, "Log"); })
      .Case([&](tg::SqrtOp) { return direct(op, "Sqrt"); })
      .Case([&](tg::NegOp) { return direct(op, "Neg"); })
      .Case([&](tg::ErfOp) { return direct(op, "Erf"); })
      .Case([&](tg::HardSwishOp) { return direct(op, "HardSwish"); })
      .Case(
          [&](tg::GlobalAvgPoolOp) { return direct(op, "GlobalAveragePool"); })
      .Case([&](tg::RsqrtOp) {
        std::string s = fresh(h + "_sqrt");
        node(op, "Sqrt", {in(0)}, {s});
        node(op, "Reciprocal", {s}, {out()});
        return success();
      })
      .Case([&](tg::GeluOp g) { return gelu(g); })
      .Case([&](tg::ClipOp c) -> LogicalResult {
        Type e = c.getType().getElementType();
        double lo = c.getMin().convertToDouble(),
               hi = c.getMax().convertToDouble();
        std::string loName, hiName;
        if (!std::isinf(lo)) {
          auto s = scalar(e, lo, h + "_min", op);
          if (failed(s))
            return failure();
          loName = *s;
        }
        if (!std::isinf(hi)) {
          auto s = scalar(e, hi, h + "_max", op);
          if (failed(s))
            return failure();
          hiName = *s;
        }
        node(op, "Clip", {in(0), loName, hiName}, {out()});
        return success();
      })
      .Case([&](tg::HardSigmoidOp s) {
        auto *n = node(op, "HardSigmoid", {in(0)}, {out()});
        attrFloat(n, "alpha", s.getAlpha().convertToDouble());
        attrFloat(n, "beta", s.getBeta().convertToDouble());
        return success();
      })
      .Case([&](tg::CastOp c) {
        auto *n = node(op, "Cast", {in(0)}, {out()});
        attrInt(n, "to",
                static_cast<int64_t>(
                    *onnxutil::getONNXDataType(c.getType().getElementType())));
        return success();
      })
      .Case([&](tg::Conv2dOp c) {
        SmallVector<std::string> ins{in(0), in(1)};
        if (c.getBias())
          ins.push_back(nameOf(c.getBias()));
        bool act = c.getActivation() != tg::Activation::None;
        std::string conv = act ? fresh(h + "_conv") : out();
        auto *n = node(op, "Conv", ins, {conv});
        auto fs = c.getFilter().getType().getShape();
        attrInts(n, "kernel_shape", fs.drop_front(2));
        attrInts(n, "strides", c.getStrides());
        attrInts(n, "pads", c.getPads());
        attrInts(n, "dilations", c.getDilations());
        attrInt(n, "group", static_cast<int64_t>(c.getGroups()));
        if (act) {
          StringRef kind = c.getActivation() == tg::Activation::Relu ? "Relu"
                           : c.getActivation() == tg::Activation::Sigmoid
                               ? "Sigmoid"
                               : "Tanh";
          node(op, kind, {conv}, {out()});
        }
        return success();
      })
      .Case([&](tg::MaxPool2dOp p) {
        auto *n = node(op, "MaxPool", {in(0)}, {out()});
        attrInts(n, "kernel_shape", p.getKernelSize());
        attrInts(n, "strides", p.getStrides());
        attrInts(n, "pads", p.getPads());
        return success();
      })
      .Case([&](tg::AvgPool2dOp p) {
        auto *n = node(op, "AveragePool", {in(0)}, {out()});
        attrInts(n, "kernel_shape", p.getKernelSize());
        attrInts(n, "strides", p.getStrides());
        attrInts(n, "pads", p.getPads());
        attrInt(n, "count_include_pad", int64_t(p.getCountIncludePad()));
        return success();
      })
      .Case([&](tg::TransposeOp t) {
        attrInts(node(op, "Transpose", {in(0)}, {out()}), "perm", t.getPerm());
        return success();
      })
      .Case([&](tg::ReshapeOp r) {
        auto shape = r.getType().getShape();
        auto *n = node(op, "Reshape", {in(0), constI64(shape, h + "_shape")},
                       {out()});
        // A 0 in the shape means "copy the input's dimension" unless
        // allowzero is set.
        if (llvm::is_contained(shape, 0))
          attrInt(n, "allowzero", 1);
        return success();
      })
      .Case([&](tg::BroadcastToOp b) {
        node(op, "Expand",
             {in(0), constI64(b.getType().getShape(), h + "_shape")}, {out()});
        return success();
      })
      .Case([&](tg::ConcatOp c) {
        SmallVector<std::string> ins;
        for (Value v : c.getInputs())
          ins.push_back(nameOf(v));
        attrInt(node(op, "Concat", ins, {out()}), "axis",
                static_cast<int64_t>(c.getAxis()));
        return success();
      })
      .Case([&](tg::SplitOp s) {
        SmallVector<std::string> outs;
        for (unsigned i = 0; i < s.getNumResults(); ++i)
          outs.push_back(out(i));
        auto *n = node(op, "Split",
                       {in(0), constI64(s.getSizes(), h + "_split")}, outs);
        attrInt(n, "axis", static_cast<int64_t>(s.getAxis()));
        return success();
      })
      .Case([&](tg::SliceOp s) {
        int64_t rank = s.getStarts().size();
        SmallVector<int64_t> axes =
            llvm::to_vector(llvm::seq<int64_t>(0, rank));
        SmallVector<int64_t> steps(rank, 1);
        if (auto st = s.getStrides())
          steps.assign(st->begin(), st->end());
        node(op, "Slice",
             {in(0), constI64(s.getStarts(), h + "_starts"),
              constI64(s.getLimits(), h + "_ends"), constI64(axes, h + "_axes"),
              constI64(steps, h + "_steps")},
             {out()});
        return success();
      })
      .Case([&](tg::PadOp p) -> LogicalResult {
        SmallVector<int64_t> pads(p.getLow());
        llvm::append_range(pads, p.getHigh());
        auto value = scalar(p.getType().getElementType(),
                            p.getValue().convertToDouble(), h + "_value", op);
        if (failed(value))
          return failure();
        attrStr(node(op, "Pad", {in(0), constI64(pads, h + "_pads"), *value},
                     {out()}),
                "mode", "constant");
        return success();
      })
      .Case([&](tg::EnlargeOp e) -> LogicalResult {
        auto s = e.getInput().getType().getShape();
        int64_t ph = (e.getKernelSize()[0] - s[2]) / 2,
                pw = (e.getKernelSize()[1] - s[3]) / 2;
        auto value = scalar(e.getType().getElementType(), 0, h + "_value", op);
        if (failed(value))
          return failure();
        node(op, "Pad",
             {in(0), constI64({0, 0, ph, pw, 0, 0, ph, pw}, h + "_pads"),
              *value},
             {out()});
        return success();
      })
      .Case([&](tg::GatherOp g) {
        attrInt(node(op, "Gather", {in(0), in(1)}, {out()}), "axis",
                static_cast<int64_t>(g.getAxis()));
        return success();
      })
      .Case([&](tg::ReduceSumOp r) {
        auto *n = node(op, "ReduceSum",
                       {in(0), constI64(r.getAxes(), h + "_axes")}, {out()});
        attrInt(n, "keepdims", int64_t(r.getKeepdims()));
        return success();
      })
      .Case([&](tg::ReduceMeanOp r) {
        auto *n = node(op, "ReduceMean", {in(0)}, {out()});
        attrInts(n, "axes", r.getAxes());
        attrInt(n, "keepdims", int64_t(r.getKeepdims()));
        return success();
      })
      .Case([&](tg::ReduceMaxOp r) {
        auto *n = node(op, "ReduceMax", {in(0)}, {out()});
        attrInts(n, "axes", r.getAxes());
        attrInt(n, "keepdims", int64_t(r.getKeepdims()));
        return success();
      })
      .Case([&](tg::SoftmaxOp s) {
        attrInt(node(op, "Softmax", {in(0)}, {out()}), "axis",
                static_cast<int64_t>(s.getAxis()));
        return success();
      })
      .Case([&](tg::LayerNormOp l) {
        auto *n =
            node(op, "LayerNormalization", {in(0), in(1), in(2)}, {out()});
        attrInt(n, "axis", static_cast<int64_t>(l.getAxis()));
        attrEpsilon(n, l.getEpsilon().convertToDouble());
        return success();
      })
      .Case([&](tg::BatchNormOp b) {
        attrEpsilon(node(op, "BatchNormalization",
                         {in(0), in(1), in(2), in(3), in(4)}, {out()}),
                    b.getEpsilon().convertToDouble());
        return success();
      })
      .Case([&](tg::ResizeOp r) {
        auto inShape = r.getInput().getType().getShape();
        // Scales when they reproduce the sizes in float32, else sizes.
        bool useScales = false;
        if (auto scales = r.getScales()) {
          useScales = true;
          for (size_t d = 0; d < inShape.size(); ++d) {
            float s = static_cast<float>((*scales)[d]);
            useScales &= static_cast<int64_t>(
                             std::floor(static_cast<double>(inShape[d]) * s)) ==
                         r.getSizes()[d];
          }
        }
        SmallVector<std::string> ins{in(0), ""};
        if (useScales) {
          ins.push_back(constF32(*r.getScales(), h + "_scales"));
        } else {
          ins.push_back("");
          ins.push_back(constI64(r.getSizes(), h + "_sizes"));
        }
        auto *n = node(op, "Resize", ins, {out()});
        attrStr(n, "mode", r.getMode());
        attrStr(n, "coordinate_transformation_mode",
                r.getCoordinateTransformationMode());
        attrStr(n, "nearest_mode", r.getNearestMode());
        attrFloat(n, "cubic_coeff_a", r.getCubicCoeffA().convertToDouble());
        attrInt(n, "exclude_outside", int64_t(r.getExcludeOutside()));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError("cannot be exported to ONNX");
      });
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
    if (op.getNumRegions() || !isa<tg::TGDialect>(op.getDialect()))
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
