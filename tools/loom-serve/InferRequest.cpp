//===- InferRequest.cpp - Reading a KServe v2 inference request -----------===//
//
// Part of Loom. See Protocol.h. Every check names what is wrong: the input,
// its shape or datatype against the model's, the JSON's fault, the binary
// sizes against the body.
//
//===----------------------------------------------------------------------===//

#include "Datatypes.h"
#include "Protocol.h"

#include "HostTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cstring>
#include <limits>

using namespace loom;
using namespace loom::serve;
namespace json = llvm::json;

namespace {

HttpError bad(std::string message) { return {400, std::move(message)}; }

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// The leaves of \p v (nested arrays of row-major data, or one flat
/// array) in order; false when something is neither an array nor a scalar.
bool flatten(const json::Value &v, std::vector<const json::Value *> &out) {
  if (const json::Array *a = v.getAsArray()) {
    for (const json::Value &x : *a)
      if (!flatten(x, out))
        return false;
    return true;
  }
  if (v.kind() == json::Value::Object || v.kind() == json::Value::String ||
      v.kind() == json::Value::Null)
    return false;
  out.push_back(&v);
  return true;
}

/// Writes the JSON \p values as elements of \p kind to \p dst.
std::optional<HttpError> encodeData(const std::string &input, ElemKind kind,
                                    llvm::ArrayRef<const json::Value *> values,
                                    uint8_t *dst) {
  std::optional<HttpError> error;
  bool isFloat = elementTypeInfo(kind).isFloat;
  tools::withElementCodec(kind, [&](auto zero, auto, auto encode) {
    using T = decltype(zero);
    for (size_t i = 0; i < values.size() && !error; ++i) {
      const json::Value &v = *values[i];
      T x;
      if (isFloat) {
        std::optional<double> d = v.getAsNumber();
        if (!d) {
          error = bad(llvm::formatv("input '{0}': element {1} is not a number",
                                    input, i));
          return;
        }
        x = encode(*d);
      } else {
        std::optional<int64_t> n = v.getAsInteger();
        if (std::optional<bool> b = v.getAsBoolean())
          n = *b;
        if (!n || *n < int64_t(std::numeric_limits<T>::min()) ||
            *n > int64_t(std::numeric_limits<T>::max())) {
          error = bad(llvm::formatv(
              "input '{0}': element {1} is not an integer of its datatype",
              input, i));
          return;
        }
        x = static_cast<T>(*n);
      }
      std::memcpy(dst + i * sizeof(T), &x, sizeof(T));
    }
  });
  return error;
}

/// The shape of input \p spec in \p in, checked against the model's; sets
/// \p rows from dimension 0 when batched.
std::optional<HttpError> readShape(const ModelSignature &model,
                                   const TensorSpec &spec,
                                   const json::Object &in, int64_t &rows,
                                   std::vector<int64_t> &shape) {
  const json::Array *dims = in.getArray("shape");
  if (!dims)
    return bad("input '" + spec.name + "': no \"shape\" array");
  for (const json::Value &d : *dims) {
    std::optional<int64_t> n = d.getAsInteger();
    if (!n || *n < 0)
      return bad("input '" + spec.name +
                 "': \"shape\" holds something other than a size");
    shape.push_back(*n);
  }
  std::vector<int64_t> expected = spec.shape;
  if (model.batched() && !shape.empty())
    expected[0] = shape[0];
  if (shape != expected)
    return bad("input '" + spec.name + "' has shape " + shapeText(shape) +
               ", expected " + shapeText(spec.shape));
  if (!model.batched())
    return std::nullopt;
  if (shape[0] < 1 || shape[0] > model.maxBatch)
    return bad(llvm::formatv("input '{0}' has {1} rows; the model takes 1 to "
                             "{2} a request",
                             spec.name, shape[0], model.maxBatch));
  if (rows != 0 && rows != shape[0])
    return bad(llvm::formatv("input '{0}' has {1} rows, another input {2}",
                             spec.name, shape[0], rows));
  rows = shape[0];
  return std::nullopt;
}

/// Whether \p text nests arrays and objects deeper than \p limit (outside
/// strings). The JSON parser recurses once a level: a body of a million '['
/// must be refused before it, not overflow the stack.
bool nestsDeeperThan(llvm::StringRef text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

/// Where the binary data of the request is, and how much is read.
struct BinaryCursor {
  llvm::StringRef data;
  size_t offset = 0;
};

/// Input \p spec from \p in into \p bytes (shape, datatype, data).
std::optional<HttpError> readInput(const ModelSignature &model,
                                   const TensorSpec &spec,
                                   const json::Object &in, int64_t &rows,
                                   BinaryCursor &binary,
                                   std::vector<uint8_t> &bytes) {
  std::optional<llvm::StringRef> datatype = in.getString("datatype");
  if (!datatype)
    return bad("input '" + spec.name + "': no \"datatype\"");
  if (*datatype != kserveDatatype(spec.kind))
    return bad("input '" + spec.name + "' has datatype " + datatype->str() +
               ", expected " + kserveDatatype(spec.kind).str());
  std::vector<int64_t> shape;
  if (std::optional<HttpError> e = readShape(model, spec, in, rows, shape))
    return e;
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  size_t elemBytes = safetensors::dtypeSize(elementTypeInfo(spec.kind).dtype);
  bytes.assign(count * elemBytes, 0);
  const json::Object *params = in.getObject("parameters");
  if (const json::Value *size =
          params ? params->get("binary_data_size") : nullptr) {
    std::optional<int64_t> n = size->getAsInteger();
    if (!n || *n < 0)
      return bad("input '" + spec.name +
                 "': binary_data_size is not a size in bytes");
    if (size_t(*n) != bytes.size())
      return bad(llvm::formatv("input '{0}': binary_data_size {1} is not the "
                               "{2} bytes of shape {3} {4}",
                               spec.name, *n, bytes.size(), shapeText(shape),
                               kserveDatatype(spec.kind)));
    if (binary.offset + *n > binary.data.size())
      return bad(llvm::formatv("input '{0}': binary_data_size {1} runs past "
                               "the end of the body ({2} binary bytes left)",
                               spec.name, *n,
                               binary.data.size() - binary.offset));
    std::memcpy(bytes.data(), binary.data.data() + binary.offset, *n);
    binary.offset += *n;
    return std::nullopt;
  }
  const json::Value *data = in.get("data");
  std::vector<const json::Value *> values;
  if (!data || !flatten(*data, values))
    return bad("input '" + spec.name +
               "': no \"data\" array of numbers (nor binary_data_size)");
  if (int64_t(values.size()) != count)
    return bad(llvm::formatv("input '{0}' has {1} elements of data; shape {2} "
                             "holds {3}",
                             spec.name, values.size(), shapeText(shape),
                             count));
  return encodeData(spec.name, spec.kind, values, bytes.data());
}

/// The element of \p list (of "inputs" or "outputs") as an object with a
/// name, and the index of the tensor of \p specs of that name (-1: none).
std::optional<HttpError> lookUp(const json::Value &element,
                                llvm::StringRef list,
                                const std::vector<TensorSpec> &specs,
                                const json::Object *&object,
                                llvm::StringRef &name, int64_t &index) {
  object = element.getAsObject();
  std::optional<llvm::StringRef> given =
      object ? object->getString("name") : std::nullopt;
  if (!given)
    return bad("an element of \"" + list.str() + "\" has no \"name\"");
  name = *given;
  auto spec =
      llvm::find_if(specs, [&](const TensorSpec &s) { return s.name == name; });
  index = spec == specs.end() ? -1 : spec - specs.begin();
  return std::nullopt;
}

/// The request's "outputs" (all of the model's when absent), and which are
/// sent as binary data.
std::optional<HttpError> readOutputs(const ModelSignature &model,
                                     const json::Object &root,
                                     InferRequest &request) {
  bool allBinary = false;
  if (const json::Object *params = root.getObject("parameters"))
    allBinary = params->getBoolean("binary_data_output").value_or(false);
  const json::Array *outputs = root.getArray("outputs");
  if (!outputs) {
    for (size_t o = 0; o < model.outputs.size(); ++o) {
      request.outputs.push_back(o);
      request.binary.push_back(allBinary);
    }
    return std::nullopt;
  }
  for (const json::Value &v : *outputs) {
    const json::Object *out;
    llvm::StringRef name;
    int64_t index;
    if (std::optional<HttpError> e =
            lookUp(v, "outputs", model.outputs, out, name, index))
      return e;
    if (index < 0)
      return bad("unknown output '" + name.str() + "'");
    bool binary = allBinary;
    if (const json::Object *params = out->getObject("parameters"))
      binary = params->getBoolean("binary_data").value_or(binary);
    request.outputs.push_back(index);
    request.binary.push_back(binary);
  }
  return std::nullopt;
}

} // namespace

std::optional<HttpError>
serve::parseJsonBody(llvm::StringRef text,
                     std::optional<llvm::json::Value> &value) {
  constexpr int kMaxNesting = 64;
  if (nestsDeeperThan(text, kMaxNesting))
    return bad("the JSON nests arrays and objects deeper than " +
               std::to_string(kMaxNesting) + " levels");
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return bad("malformed JSON: " + llvm::toString(parsed.takeError()));
  value = std::move(*parsed);
  return std::nullopt;
}

std::optional<HttpError>
serve::parseInferRequest(const ModelSignature &model, llvm::StringRef body,
                         std::optional<llvm::StringRef> headerLength,
                         InferRequest &request) {
  llvm::StringRef header = body;
  BinaryCursor binary;
  if (headerLength) {
    uint64_t length;
    if (headerLength->getAsInteger(10, length) || length > body.size())
      return bad("Inference-Header-Content-Length '" + headerLength->str() +
                 "' is not a length within the body (" +
                 std::to_string(body.size()) + " bytes)");
    header = body.take_front(length);
    binary.data = body.drop_front(length);
  }
  std::optional<json::Value> parsed;
  if (std::optional<HttpError> e = parseJsonBody(header, parsed))
    return e;
  const json::Object *root = parsed->getAsObject();
  const json::Array *inputs = root ? root->getArray("inputs") : nullptr;
  if (!inputs)
    return bad("the request has no \"inputs\" array");
  if (std::optional<llvm::StringRef> id = root->getString("id"))
    request.id = id->str();
  const std::vector<TensorSpec> &specs = model.inputs;
  request.inputs.assign(specs.size(), {});
  std::vector<bool> seen(specs.size(), false);
  int64_t rows = 0;
  for (const json::Value &v : *inputs) {
    const json::Object *in;
    llvm::StringRef name;
    int64_t index;
    if (std::optional<HttpError> e =
            lookUp(v, "inputs", specs, in, name, index))
      return e;
    if (index < 0)
      return bad("unknown input '" + name.str() + "'; model '" + model.name +
                 "' has " +
                 llvm::join(llvm::map_range(specs,
                                            [](const TensorSpec &s) {
                                              return "'" + s.name + "'";
                                            }),
                            ", "));
    if (seen[index])
      return bad("input '" + name.str() + "' is given twice");
    seen[index] = true;
    if (std::optional<HttpError> e = readInput(model, specs[index], *in, rows,
                                               binary, request.inputs[index]))
      return e;
  }
  for (size_t i = 0; i < specs.size(); ++i)
    if (!seen[i])
      return bad("missing input '" + specs[i].name + "'");
  if (binary.offset != binary.data.size())
    return bad(std::to_string(binary.data.size() - binary.offset) +
               " bytes of binary data after the inputs' binary_data_size");
  request.rows = model.batched() && rows > 0 ? rows : 1;
  return readOutputs(model, *root, request);
}
