//===- ONNXLibrary.cpp - Exception-safe calls into the ONNX library -------===//
//
// Part of Loom. See ONNXLibrary.h. This file is compiled with -fexceptions
// and -frtti (see CMakeLists.txt); it defines no class with a vtable, so it
// needs no RTTI from LLVM, and no exception escapes it.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/ONNXCommon/ONNXLibrary.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>

namespace loom::onnxlib {

namespace {
/// Runs `fn`, returning what it throws as a message.
template <typename Fn> std::string guarded(Fn &&fn) {
  try {
    return fn();
  } catch (const std::exception &e) {
    std::string msg = e.what();
    return msg.empty() ? std::string("unknown error") : msg;
  } catch (...) {
    return "unknown error";
  }
}
} // namespace

std::string parseText(const std::string &text, onnx::ModelProto &model) {
  return guarded([&]() -> std::string {
    onnx::OnnxParser parser(text.c_str());
    auto status = parser.Parse(model);
    if (!status.IsOK())
      return status.ErrorMessage().empty() ? std::string("syntax error")
                                           : status.ErrorMessage();
    if (!parser.EndOfInput())
      return "unexpected text after the model";
    return {};
  });
}

std::string checkModel(const onnx::ModelProto &model) {
  return guarded([&]() -> std::string {
    onnx::checker::check_model(model);
    return {};
  });
}

std::string inferShapes(onnx::ModelProto &model) {
  return guarded([&]() -> std::string {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*error_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
    return {};
  });
}

std::string convertVersion(onnx::ModelProto &model, int64_t target) {
  return guarded([&]() -> std::string {
    model = onnx::version_conversion::ConvertVersion(model,
                                                     static_cast<int>(target));
    return {};
  });
}

int64_t maxKnownOpset() {
  const auto &map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

/// Prints `t` as an input with a value, `float[2] name = {1, 2}`, the form
/// ONNX's parser reads back as an initializer.
static std::string printInitializer(const onnx::TensorProto &t,
                                    std::ostream &os) {
  onnx::TypeProto type;
  auto *tt = type.mutable_tensor_type();
  tt->set_elem_type(t.data_type());
  tt->mutable_shape();
  for (int64_t d : t.dims())
    tt->mutable_shape()->add_dim()->set_dim_value(d);
  os << type << " " << t.name() << " = {";
  const std::string &raw = t.raw_data();
  bool hasRaw = t.has_raw_data();
  auto read = [&](size_t i, size_t size, void *out) {
    std::memcpy(out, raw.data() + i * size, size);
  };
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  char buf[64];
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      os << ", ";
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      float v = 0;
      if (hasRaw)
        read(i, 4, &v);
      else
        v = t.float_data(i);
      if (!std::isfinite(v))
        return "the initializer '" + t.name() +
               "' holds a non-finite value, which ONNX text cannot spell";
      std::snprintf(buf, sizeof(buf), "%.9g", v);
      // The parser takes literals without a '.' or exponent for integers.
      if (!std::strpbrk(buf, ".e"))
        std::strcat(buf, ".0");
      os << buf;
      break;
    }
    case onnx::TensorProto::DOUBLE: {
      double v = 0;
      if (hasRaw)
        read(i, 8, &v);
      else
        v = t.double_data(i);
      if (!std::isfinite(v))
        return "the initializer '" + t.name() +
               "' holds a non-finite value, which ONNX text cannot spell";
      std::snprintf(buf, sizeof(buf), "%.17g", v);
      if (!std::strpbrk(buf, ".e"))
        std::strcat(buf, ".0");
      os << buf;
      break;
    }
    case onnx::TensorProto::INT64: {
      int64_t v = 0;
      if (hasRaw)
        read(i, 8, &v);
      else
        v = t.int64_data(i);
      os << v;
      break;
    }
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::BOOL: {
      int32_t v = 0;
      if (hasRaw && t.data_type() == onnx::TensorProto::INT32)
        read(i, 4, &v);
      else if (hasRaw)
        v = raw[i] != 0;
      else
        v = t.int32_data(i);
      os << v;
      break;
    }
    default:
      return "the initializer '" + t.name() + "' has a type ONNX text " +
             "export does not support";
    }
  }
  os << "}";
  return {};
}

std::string printText(const onnx::ModelProto &model, std::string &text) {
  return guarded([&]() -> std::string {
    std::ostringstream os;
    os << "<\n  ir_version: " << model.ir_version() << ",\n  opset_import: [";
    for (int i = 0; i < model.opset_import_size(); ++i) {
      const auto &o = model.opset_import(i);
      os << (i ? ", " : "") << "\"" << o.domain() << "\" : " << o.version();
    }
    os << "]";
    if (!model.producer_name().empty())
      os << ",\n  producer_name: \"" << model.producer_name() << "\"";
    os << "\n>\n";
    const onnx::GraphProto &g = model.graph();
    os << g.name() << " (";
    bool first = true;
    for (const auto &in : g.input()) {
      os << (first ? "" : ", ") << in;
      first = false;
    }
    for (const auto &init : g.initializer()) {
      os << (first ? "" : ",\n    ");
      first = false;
      std::string error = printInitializer(init, os);
      if (!error.empty())
        return error;
    }
    os << ") => (";
    first = true;
    for (const auto &out : g.output()) {
      os << (first ? "" : ", ") << out;
      first = false;
    }
    os << ")\n" << g.node() << "\n";
    text = os.str();
    return {};
  });
}

} // namespace loom::onnxlib
