//===- Responses.cpp - KServe v2 response bodies --------------------------===//
//
// Part of Loom. See Protocol.h.
//
//===----------------------------------------------------------------------===//

#include "Datatypes.h"
#include "Protocol.h"

#include "HostTensor.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace loom;
using namespace loom::serve;
namespace json = llvm::json;

namespace {

/// \p spec's shape for \p rows rows.
std::vector<int64_t> shapeFor(const TensorSpec &spec, int64_t rows,
                              bool batched) {
  std::vector<int64_t> shape = spec.shape;
  if (batched)
    shape[0] = rows;
  return shape;
}

void writeShape(json::OStream &j, llvm::ArrayRef<int64_t> shape) {
  j.attributeArray("shape", [&] {
    for (int64_t d : shape)
      j.value(d);
  });
}

/// The elements of \p bytes (of \p kind) as JSON numbers or booleans.
void writeData(json::OStream &j, ElemKind kind,
               const std::vector<uint8_t> &bytes) {
  bool isFloat = elementTypeInfo(kind).isFloat;
  tools::withElementCodec(kind, [&](auto zero, auto decode, auto) {
    using T = decltype(zero);
    for (size_t i = 0; i < bytes.size() / sizeof(T); ++i) {
      T x;
      std::memcpy(&x, bytes.data() + i * sizeof(T), sizeof(T));
      double d = double(decode(x));
      if (isFloat && std::isfinite(d))
        j.value(d);
      else if (isFloat) // JSON has no numbers for these
        j.value(std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
      else if (kind == ElemKind::I1)
        j.value(x != 0);
      else
        j.value(int64_t(x));
    }
  });
}

void writeTensorList(json::OStream &j, llvm::StringRef key,
                     const std::vector<TensorSpec> &specs) {
  j.attributeArray(key, [&] {
    for (const TensorSpec &s : specs)
      j.object([&] {
        j.attribute("name", s.name);
        j.attribute("datatype", kserveDatatype(s.kind));
        writeShape(j, s.shape);
      });
  });
}

} // namespace

HttpBody
serve::formatInferResponse(const ModelSignature &model,
                           const InferRequest &request,
                           const std::vector<std::vector<uint8_t>> &outputs) {
  HttpBody result;
  std::string binary;
  llvm::raw_string_ostream os(result.body);
  json::OStream j(os);
  j.object([&] {
    j.attribute("model_name", model.name);
    if (request.id)
      j.attribute("id", *request.id);
    j.attributeArray("outputs", [&] {
      for (size_t k = 0; k < request.outputs.size(); ++k) {
        const TensorSpec &spec = model.outputs[request.outputs[k]];
        const std::vector<uint8_t> &bytes = outputs[request.outputs[k]];
        j.object([&] {
          j.attribute("name", spec.name);
          j.attribute("datatype", kserveDatatype(spec.kind));
          writeShape(j, shapeFor(spec, request.rows, model.batched()));
          if (request.binary[k]) {
            j.attributeObject("parameters", [&] {
              j.attribute("binary_data_size", int64_t(bytes.size()));
            });
            binary.append(bytes.begin(), bytes.end());
          } else {
            j.attributeArray("data", [&] { writeData(j, spec.kind, bytes); });
          }
        });
      }
    });
  });
  os.flush();
  result.contentType = "application/json";
  if (llvm::is_contained(request.binary, true)) {
    result.headerLength = result.body.size();
    result.body += binary;
    result.contentType = "application/octet-stream";
  }
  return result;
}

std::string serve::modelMetadata(const ModelSignature &model) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attribute("name", model.name);
    j.attributeArray("versions", [&] { j.value("1"); });
    j.attribute("platform", "loom");
    writeTensorList(j, "inputs", model.inputs);
    writeTensorList(j, "outputs", model.outputs);
    j.attributeObject("parameters", [&] {
      j.attribute("max_batch_size", model.batched() ? model.maxBatch : 0);
      j.attributeArray("batch_sizes", [&] {
        for (int64_t b : model.batchSizes)
          j.value(b);
      });
    });
  });
  os.flush();
  return text;
}

std::string serve::errorBody(llvm::StringRef message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] { j.attribute("error", message); });
  os.flush();
  return text;
}

std::string serve::readyBody(llvm::StringRef name,
                             const std::optional<std::string> &whyNot) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    if (!name.empty())
      j.attribute("name", name);
    j.attribute("ready", !whyNot);
    if (whyNot)
      j.attribute("error", *whyNot);
  });
  os.flush();
  return text;
}
