//===- Reader.cpp - Reading and validating a manifest, once ---------------===//
//
// Part of Loom. See Schema.h and docs/Artifact.md (the rules checked here).
// readManifest: the manifest's top level (format, version, devices,
// weights, entries, world, source), and the typed fields and tensors every
// part of the reader reads with. The parts, one concern each: Reader.h.
//
//===----------------------------------------------------------------------===//

#include "Reader.h"

#include <cstdlib>

using namespace loom;
using namespace loom::artifact;
using namespace loom::artifact::detail;

bool Reader::fail(const std::string &path, const std::string &why) {
  if (!error)
    error = ReadError{ReadError::Kind::Format,
                      "manifest: " + path + ": " + why};
  return false;
}

const Json *Reader::member(const Json &obj, const std::string &path,
                           const std::string &key, bool required) {
  if (!obj.isObject()) {
    fail(path, "expected an object");
    return nullptr;
  }
  const Json *v = obj.get(key);
  if (!v && required)
    fail(path + "." + key, "missing");
  return v;
}

const std::vector<Json> *Reader::array(const Json &obj,
                                       const std::string &path,
                                       const std::string &key) {
  const Json *v = member(obj, path, key);
  if (!v)
    return nullptr;
  if (!v->isArray()) {
    fail(path + "." + key, "expected an array");
    return nullptr;
  }
  return &v->array();
}

bool Reader::string(const Json &obj, const std::string &path,
                    const std::string &key, std::string &out,
                    bool required) {
  const Json *v = member(obj, path, key, required);
  if (!v)
    return !required && !error;
  if (!v->isString())
    return fail(path + "." + key, "expected a string");
  out = v->string();
  return true;
}

bool Reader::integer(const Json &obj, const std::string &path,
                     const std::string &key, int64_t &out, bool required,
                     int64_t min) {
  const Json *v = member(obj, path, key, required);
  if (!v)
    return !required && !error;
  if (!v->isInteger() || v->integer() < min)
    return fail(path + "." + key,
                "expected an integer >= " + std::to_string(min));
  out = v->integer();
  return true;
}

bool Reader::number(const Json &obj, const std::string &path,
                    const std::string &key, double &out, bool required) {
  const Json *v = member(obj, path, key, required);
  if (!v)
    return !required && !error;
  if (!v->isNumber())
    return fail(path + "." + key, "expected a number");
  out = v->number();
  return true;
}

bool Reader::boolean(const Json &obj, const std::string &path,
                     const std::string &key, bool &out) {
  const Json *v = member(obj, path, key, false);
  if (!v)
    return !error;
  if (!v->isBool())
    return fail(path + "." + key, "expected true or false");
  out = v->boolean();
  return true;
}

bool Reader::ints(const Json &obj, const std::string &path,
                  const std::string &key, std::vector<int64_t> &out) {
  const std::vector<Json> *v = array(obj, path, key);
  if (!v)
    return false;
  out.clear();
  for (const Json &x : *v) {
    if (!x.isInteger() || x.integer() < 0)
      return fail(path + "." + key,
                  "expected an array of non-negative integers");
    out.push_back(x.integer());
  }
  return true;
}

bool Reader::strings(const Json &obj, const std::string &path,
                     const std::string &key, std::vector<std::string> &out) {
  const std::vector<Json> *v = array(obj, path, key);
  if (!v)
    return false;
  for (const Json &x : *v) {
    if (!x.isString())
      return fail(path + "." + key, "expected an array of strings");
    out.push_back(x.string());
  }
  return true;
}

bool Reader::checksum(const Json &obj, const std::string &path,
                      uint64_t &out) {
  std::string hex;
  if (!string(obj, path, "checksum", hex))
    return false;
  if (hex.size() != 16 ||
      hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    return fail(path + ".checksum", "expected 16 lower-case hex digits");
  out = std::strtoull(hex.c_str(), nullptr, 16);
  return true;
}

bool Reader::device(const std::string &path, int64_t d, int64_t numDevices) {
  if (d < numDevices)
    return true;
  return fail(path, "device " + std::to_string(d) +
                        " is out of range (the manifest has " +
                        std::to_string(numDevices) + ")");
}

bool Reader::tensor(const Json &t, const std::string &path, TensorDesc &out) {
  if (!string(t, path, "name", out.name) ||
      !string(t, path, "dtype", out.dtype) ||
      !ints(t, path, "shape", out.shape))
    return false;
  int64_t bytes = dtypeBytes(out.dtype);
  if (!bytes)
    return fail(path + ".dtype", "unknown dtype '" + out.dtype + "'");
  for (int64_t d : out.shape) {
    if (d != 0 && bytes > (int64_t(1) << 48) / d)
      return fail(path + ".shape", "too large");
    bytes *= d;
  }
  out.bytes = bytes;
  if (member(t, path, "tied_input", false)) {
    if (version < kTiedManifestVersion)
      return fail(path + ".tied_input",
                  "needs manifest version " +
                      std::to_string(kTiedManifestVersion));
    int64_t input = 0;
    if (!integer(t, path, "tied_input", input))
      return false;
    out.tiedInput = input;
  }
  const Json *bound = member(t, path, "bound", false);
  if (!bound)
    return !error;
  if (version < kBoundedManifestVersion)
    return fail(path + ".bound", "needs manifest version " +
                                     std::to_string(kBoundedManifestVersion));
  OutputBound b;
  if (!integer(*bound, path + ".bound", "dim", b.dim) ||
      !integer(*bound, path + ".bound", "length_output", b.lengthOutput))
    return false;
  out.bound = b;
  return true;
}

bool Reader::ties(const Entry &e, const std::string &path) {
  std::vector<bool> taken(e.inputs.size(), false);
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].tiedInput)
      return fail(at(path + ".inputs", i) + ".tied_input",
                  "only an output is tied to an input");
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const TensorDesc &out = e.outputs[i];
    if (!out.tiedInput)
      continue;
    std::string p = at(path + ".outputs", i) + ".tied_input";
    int64_t j = *out.tiedInput;
    if (j < 0 || j >= int64_t(e.inputs.size()))
      return fail(p, "is not an input");
    if (taken[j])
      return fail(p, "input " + std::to_string(j) +
                         " is already tied to another output");
    taken[j] = true;
    const TensorDesc &in = e.inputs[j];
    if (in.dtype != out.dtype || in.shape != out.shape)
      return fail(p, "input " + std::to_string(j) +
                         " has another dtype or shape than the output");
    if (out.bound)
      return fail(p, "an output of data-dependent length cannot be tied");
  }
  return true;
}

bool Reader::bounds(const Entry &e, const std::string &path) {
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].bound)
      return fail(at(path + ".inputs", i) + ".bound",
                  "an input has no data-dependent length");
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const std::optional<OutputBound> &b = e.outputs[i].bound;
    if (!b)
      continue;
    std::string p = at(path + ".outputs", i) + ".bound";
    if (b->dim >= int64_t(e.outputs[i].shape.size()))
      return fail(p + ".dim", "is not a dimension of the output");
    if (b->lengthOutput >= int64_t(e.outputs.size()) ||
        b->lengthOutput == int64_t(i))
      return fail(p + ".length_output", "is not another output");
    const TensorDesc &length = e.outputs[b->lengthOutput];
    if (length.dtype != "i64" || !length.shape.empty() || length.bound)
      return fail(p + ".length_output",
                  "must be a rank-0 i64 output without a bound");
  }
  return true;
}

bool Reader::tensors(const Json &obj, const std::string &path,
                     const std::string &key, std::vector<TensorDesc> &out) {
  const std::vector<Json> *v = array(obj, path, key);
  if (!v)
    return false;
  for (size_t i = 0; i < v->size(); ++i) {
    out.emplace_back();
    if (!tensor((*v)[i], at(path + "." + key, i), out.back()))
      return false;
  }
  return true;
}

std::optional<ReadError> artifact::readManifest(std::string_view text,
                                                Manifest &m) {
  Json root;
  std::string error;
  if (!Json::parse(text, root, error))
    return ReadError{ReadError::Kind::Format,
                     "manifest: invalid JSON: " + error};
  Reader r;
  std::string format;
  int64_t version = 0;
  if (!r.string(root, "manifest", "format", format))
    return r.error;
  if (format != kManifestFormat)
    return ReadError{ReadError::Kind::Format,
                     "manifest: format is '" + format +
                         "', not loom-artifact"};
  if (!r.integer(root, "manifest", "version", version))
    return r.error;
  if (version < kManifestVersion || version > kTiedManifestVersion)
    return ReadError{ReadError::Kind::Version,
                     "manifest: format version " + std::to_string(version) +
                         "; this runtime reads versions " +
                         std::to_string(kManifestVersion) + " to " +
                         std::to_string(kTiedManifestVersion) +
                         " (recompile with this Loom's loom-compile)"};
  r.version = version;
  r.string(root, "manifest", "loom_version", m.loomVersion, false);
  const std::vector<Json> *devices = r.array(root, "manifest", "devices");
  const Json *weights = devices ? r.member(root, "manifest", "weights")
                                : nullptr;
  const std::vector<Json> *entries =
      weights ? r.array(root, "manifest", "entries") : nullptr;
  const Json *world = entries ? r.member(root, "manifest", "world") : nullptr;
  if (!world)
    return r.error;
  if (devices->empty())
    return ReadError{ReadError::Kind::Format,
                     "manifest: devices: expected at least one device"};
  for (size_t i = 0; i < devices->size(); ++i) {
    m.devices.emplace_back();
    if (!r.device((*devices)[i], at("devices", i), m.devices.back()))
      return r.error;
  }
  if (!r.weights(*weights, m.weights))
    return r.error;
  if (entries->empty())
    return ReadError{ReadError::Kind::Format,
                     "manifest: entries: expected a non-empty array"};
  for (size_t i = 0; i < entries->size(); ++i) {
    m.entries.emplace_back();
    if (!r.entry((*entries)[i], at("entries", i), m.devices.size(),
                 m.entries.back()))
      return r.error;
  }
  if (!r.checkDevices(m) || !r.world(*world, m))
    return r.error;
  if (const Json *source = root.get("source");
      source && !r.source(*source, m))
    return r.error;
  return std::nullopt;
}
