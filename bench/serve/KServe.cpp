//===- KServe.cpp - The client's side of the KServe v2 protocol -----------===//
//
// Part of Loom. See KServe.h.
//
//===----------------------------------------------------------------------===//

#include "KServe.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace llvm;

namespace loom::bench {
namespace {

/// Bytes of one element of a KServe datatype; 0 for one the bench does not
/// send or read (FP16, BF16, BYTES).
size_t elementBytes(StringRef datatype) {
  return StringSwitch<size_t>(datatype)
      .Case("FP32", 4)
      .Case("INT32", 4)
      .Case("FP64", 8)
      .Case("INT64", 8)
      .Case("BOOL", 1)
      .Default(0);
}

bool isFloat(StringRef datatype) {
  return datatype == "FP32" || datatype == "FP64";
}

Expected<TensorMeta> parseTensorMeta(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return createStringError("a tensor of the metadata is not an object");
  TensorMeta t;
  auto name = o->getString("name");
  auto datatype = o->getString("datatype");
  const json::Array *shape = o->getArray("shape");
  if (!name || !datatype || !shape)
    return createStringError("a tensor of the metadata lacks its name, "
                             "datatype or shape");
  t.name = name->str();
  t.datatype = datatype->str();
  for (const json::Value &d : *shape) {
    auto n = d.getAsInteger();
    if (!n)
      return createStringError("tensor '" + t.name +
                               "' has a shape of "
                               "non-integers");
    t.shape.push_back(*n);
  }
  return t;
}

int64_t elementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The row shape of a tensor of the metadata: dimension 0 is 1.
std::vector<int64_t> rowShape(const TensorMeta &t) {
  std::vector<int64_t> s = t.shape;
  if (!s.empty() && s[0] < 0)
    s[0] = 1;
  return s;
}

void appendBytes(std::string &out, const Tensor &t) {
  for (double v : t.values) {
    if (t.datatype == "FP32") {
      float f = float(v);
      out.append(reinterpret_cast<const char *>(&f), 4);
    } else if (t.datatype == "FP64") {
      out.append(reinterpret_cast<const char *>(&v), 8);
    } else if (t.datatype == "INT32") {
      int32_t i = int32_t(v);
      out.append(reinterpret_cast<const char *>(&i), 4);
    } else if (t.datatype == "INT64") {
      int64_t i = int64_t(v);
      out.append(reinterpret_cast<const char *>(&i), 8);
    } else {
      out.push_back(v != 0 ? 1 : 0);
    }
  }
}

double elementAt(StringRef datatype, const char *p) {
  if (datatype == "FP32") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (datatype == "FP64") {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (datatype == "INT32") {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  if (datatype == "INT64") {
    int64_t i;
    std::memcpy(&i, p, 8);
    return double(i);
  }
  return *p ? 1 : 0;
}

json::Value jsonElement(StringRef datatype, double v) {
  if (datatype == "BOOL")
    return v != 0;
  if (!isFloat(datatype))
    return int64_t(v);
  return v;
}

Expected<double> numberOf(const json::Value &v) {
  if (auto d = v.getAsNumber())
    return *d;
  if (auto b = v.getAsBoolean())
    return *b ? 1.0 : 0.0;
  if (auto s = v.getAsString()) {
    if (*s == "NaN")
      return std::numeric_limits<double>::quiet_NaN();
    if (*s == "Infinity")
      return std::numeric_limits<double>::infinity();
    if (*s == "-Infinity")
      return -std::numeric_limits<double>::infinity();
  }
  return createStringError("an element of the answer is not a number");
}

/// One output of an answer; its binary bytes (if any) taken from `binary`.
Expected<std::pair<std::string, Tensor>> decodeOutput(const json::Value &v,
                                                      StringRef &binary) {
  auto meta = parseTensorMeta(v);
  if (!meta)
    return meta.takeError();
  Tensor t{meta->datatype, meta->shape, {}};
  const json::Object &o = *v.getAsObject();
  int64_t n = elementsOf(t.shape);
  if (const json::Array *data = o.getArray("data")) {
    for (const json::Value &e : *data) {
      auto x = numberOf(e);
      if (!x)
        return x.takeError();
      t.values.push_back(*x);
    }
  } else {
    const json::Object *params = o.getObject("parameters");
    std::optional<int64_t> size =
        params ? params->getInteger("binary_data_size") : std::nullopt;
    size_t bytes = elementBytes(t.datatype);
    if (!size || bytes == 0 || *size != n * int64_t(bytes) ||
        uint64_t(*size) > binary.size())
      return createStringError("output '" + meta->name +
                               "' has neither data nor a binary_data_size "
                               "of its shape within the body");
    for (int64_t i = 0; i < n; ++i)
      t.values.push_back(elementAt(t.datatype, binary.data() + i * bytes));
    binary = binary.drop_front(*size);
  }
  if (int64_t(t.values.size()) != n)
    return createStringError("output '" + meta->name + "' has " +
                             Twine(t.values.size()) + " elements, its shape " +
                             Twine(n));
  return std::make_pair(meta->name, std::move(t));
}

} // namespace

Expected<ModelMeta> parseModelMeta(StringRef body) {
  auto parsed = json::parse(body);
  if (!parsed)
    return parsed.takeError();
  const json::Object *o = parsed->getAsObject();
  if (!o || !o->getArray("inputs") || !o->getArray("outputs"))
    return createStringError("the model's metadata has no inputs or outputs");
  ModelMeta m;
  if (auto name = o->getString("name"))
    m.name = name->str();
  for (auto [list, into] : {std::pair{o->getArray("inputs"), &m.inputs},
                            {o->getArray("outputs"), &m.outputs}})
    for (const json::Value &v : *list) {
      auto t = parseTensorMeta(v);
      if (!t)
        return t.takeError();
      into->push_back(std::move(*t));
    }
  if (const json::Object *p = o->getObject("parameters")) {
    m.maxBatchSize = p->getInteger("max_batch_size").value_or(0);
    if (const json::Array *sizes = p->getArray("batch_sizes"))
      for (const json::Value &s : *sizes)
        if (auto n = s.getAsInteger())
          m.batchSizes.push_back(*n);
  }
  return m;
}

Expected<Tensors> randomInputs(const ModelMeta &meta, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensors out;
  for (const TensorMeta &in : meta.inputs) {
    if (elementBytes(in.datatype) == 0)
      return createStringError("input '" + in.name + "' is " + in.datatype +
                               ": loom-bench-serve sends FP32, FP64, INT32, "
                               "INT64 and BOOL only");
    Tensor t{in.datatype, rowShape(in), {}};
    int64_t n = elementsOf(t.shape);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = rng();
      if (isFloat(in.datatype))
        // 24 random bits: exact in an FP32.
        t.values.push_back(double(r >> 40) / double(1 << 23) - 1.0);
      else if (in.datatype == "BOOL")
        t.values.push_back(double(r >> 63));
      else
        t.values.push_back(double(r % 10));
    }
    out[in.name] = std::move(t);
  }
  return out;
}

EncodedRequest encodeRequest(const ModelMeta &meta, const Tensors &inputs,
                             Encoding encoding) {
  json::Array list;
  std::string binary;
  for (const TensorMeta &in : meta.inputs) {
    const Tensor &t = inputs.at(in.name);
    json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    json::Object entry{{"name", in.name},
                       {"shape", std::move(shape)},
                       {"datatype", t.datatype}};
    if (encoding == Encoding::Binary) {
      size_t before = binary.size();
      appendBytes(binary, t);
      entry["parameters"] =
          json::Object{{"binary_data_size", int64_t(binary.size() - before)}};
    } else {
      json::Array data;
      for (double v : t.values)
        data.push_back(jsonElement(t.datatype, v));
      entry["data"] = std::move(data);
    }
    list.push_back(std::move(entry));
  }
  json::Object request{{"inputs", std::move(list)}};
  if (encoding == Encoding::Binary)
    request["parameters"] = json::Object{{"binary_data_output", true}};
  EncodedRequest r;
  raw_string_ostream os(r.body);
  os << json::Value(std::move(request));
  os.flush();
  if (encoding == Encoding::Binary) {
    r.headerLength = r.body.size();
    r.body += binary;
    r.contentType = "application/octet-stream";
  } else {
    r.contentType = "application/json";
  }
  return r;
}

Expected<Tensors> decodeResponse(StringRef body,
                                 std::optional<StringRef> headerLength) {
  StringRef header = body, binary;
  if (headerLength) {
    size_t n;
    if (headerLength->getAsInteger(10, n) || n > body.size())
      return createStringError("Inference-Header-Content-Length '" +
                               *headerLength + "' is not within the body");
    header = body.take_front(n);
    binary = body.drop_front(n);
  }
  auto parsed = json::parse(header);
  if (!parsed)
    return parsed.takeError();
  const json::Object *o = parsed->getAsObject();
  const json::Array *outputs = o ? o->getArray("outputs") : nullptr;
  if (!outputs)
    return createStringError("the answer has no outputs");
  Tensors out;
  for (const json::Value &v : *outputs) {
    auto t = decodeOutput(v, binary);
    if (!t)
      return t.takeError();
    out[t->first] = std::move(t->second);
  }
  if (!binary.empty())
    return createStringError(Twine(binary.size()) +
                             " bytes after the outputs' binary data");
  return out;
}

std::optional<std::string> compareAnswer(const Tensors &reference,
                                         const Tensors &got, double tolerance,
                                         double &worst) {
  for (const auto &[name, want] : reference) {
    auto it = got.find(name);
    if (it == got.end())
      return "output '" + name + "' is missing";
    const Tensor &have = it->second;
    if (have.shape != want.shape || have.values.size() != want.values.size())
      return "output '" + name + "' has another shape than the reference";
    for (size_t i = 0; i < want.values.size(); ++i) {
      double a = want.values[i], b = have.values[i];
      if (std::isnan(a) || std::isnan(b) || a == b) {
        if (std::isnan(a) != std::isnan(b))
          return "output '" + name + "' element " + std::to_string(i) +
                 ": NaN against a number";
        continue;
      }
      double d = std::fabs(a - b) / std::max(1.0, std::fabs(a));
      worst = std::max(worst, d);
      if (!(d <= tolerance))
        return formatv("output '{0}' element {1}: {2} where the lone run "
                       "gave {3}",
                       name, i, b, a)
            .str();
    }
  }
  return std::nullopt;
}

ServerCounters parseMetrics(StringRef text, StringRef model) {
  ServerCounters c;
  std::string label = ("model=\"" + model + "\"").str();
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    if (line.starts_with("#"))
      continue;
    auto [series, valueText] = line.rsplit(' ');
    double value;
    if (valueText.getAsDouble(value) || !series.contains(label))
      continue;
    StringRef name = series.split('{').first;
    if (name == "loom_serve_batch_size_sum")
      c.rows = value;
    else if (name == "loom_serve_batch_size_count")
      c.runs = value;
    else if (name == "loom_serve_queue_seconds_sum")
      c.queueSeconds = value;
    else if (name == "loom_serve_queue_seconds_count")
      c.queued = value;
    else if (name == "loom_serve_compute_seconds_sum")
      c.computeSeconds = value;
    else if (name == "loom_serve_requests_total")
      (series.contains("code=\"200\"") ? c.ok : c.refused) += value;
  }
  return c;
}

} // namespace loom::bench
