//===- Manifest.cpp - Reading and validating an artifact's manifest -------===//
//
// Part of Loom. See Model.h and docs/Artifact.md (the rules checked here).
// Every failure names the field, as a path: entries[0].steps[3].args.src.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Model.h"

#include "loom/Runtime/Checksum.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace loom::rt;

int64_t loom::rt::dtypeBytes(const std::string &dtype) {
  // Loom's one list of element types (no LLVM needed to read it); i1 is
  // stored a byte per element.
#define LOOM_ELEMENT_TYPE(Kind, MLIRName, DType, ONNX, Bits, IsFloat)          \
  if (dtype == MLIRName)                                                       \
    return Bits < 8 ? 1 : Bits / 8;
#include "loom/Support/ElementTypes.def"
  return 0;
}

namespace {

/// Reads typed fields of JSON objects, remembering the first failure.
class Reader {
public:
  Error error;

  bool fail(const std::string &path, const std::string &why) {
    if (!error)
      error = makeError(LOOM_ERROR_FORMAT, "manifest: " + path + ": " + why);
    return false;
  }
  const Json *member(const Json &obj, const std::string &path,
                     const std::string &key, bool required = true) {
    if (!obj.isObject()) {
      fail(path, "expected an object");
      return nullptr;
    }
    const Json *v = obj.get(key);
    if (!v && required)
      fail(path + "." + key, "missing");
    return v;
  }
  bool string(const Json &obj, const std::string &path, const std::string &key,
              std::string &out, bool required = true) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return !required && !error;
    if (!v->isString())
      return fail(path + "." + key, "expected a string");
    out = v->string();
    return true;
  }
  bool integer(const Json &obj, const std::string &path, const std::string &key,
               int64_t &out, bool required = true, int64_t min = 0) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return !required && !error;
    if (!v->isInteger() || v->integer() < min)
      return fail(path + "." + key,
                  "expected an integer >= " + std::to_string(min));
    out = v->integer();
    return true;
  }
  bool number(const Json &obj, const std::string &path, const std::string &key,
              double &out, bool required = true) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return !required && !error;
    if (!v->isNumber())
      return fail(path + "." + key, "expected a number");
    out = v->number();
    return true;
  }
  bool ints(const Json &obj, const std::string &path, const std::string &key,
            std::vector<int64_t> &out, bool required = true) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return !required && !error;
    if (!v->isArray())
      return fail(path + "." + key, "expected an array of integers");
    out.clear();
    for (const Json &x : v->array()) {
      if (!x.isInteger() || x.integer() < 0)
        return fail(path + "." + key,
                    "expected an array of non-negative integers");
      out.push_back(x.integer());
    }
    return true;
  }
  bool checksum(const Json &obj, const std::string &path, uint64_t &out) {
    std::string hex;
    if (!string(obj, path, "checksum", hex))
      return false;
    if (hex.size() != 16 ||
        hex.find_first_not_of("0123456789abcdef") != std::string::npos)
      return fail(path + ".checksum", "expected 16 lower-case hex digits");
    out = std::strtoull(hex.c_str(), nullptr, 16);
    return true;
  }

  bool tensor(const Json &t, const std::string &path, TensorSpec &out) {
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
    return true;
  }
  bool tensors(const Json &obj, const std::string &path, const std::string &key,
               std::vector<TensorSpec> &out) {
    const Json *v = member(obj, path, key);
    if (!v)
      return false;
    if (!v->isArray())
      return fail(path + "." + key, "expected an array");
    for (size_t i = 0; i < v->array().size(); ++i) {
      out.emplace_back();
      if (!tensor(v->array()[i], path + "." + key + "[" + std::to_string(i) +
                                     "]",
                  out.back()))
        return false;
    }
    return true;
  }

  bool buffer(const Json &b, const std::string &path, const EntrySpec &e,
              int64_t arenaBytes, BufferSpec &out);
  bool step(const Json &s, const std::string &path, StepSpec &out);
  /// A library step's args and attrs objects with their paths.
  struct Operands {
    const Json &args;
    const std::string &ap;
    const Json &attrs;
    const std::string &tp;
  };
  bool pool2d(const Operands &o, StepSpec &out);
  bool concat(const Operands &o, StepSpec &out);
  /// The activation a library step applies last, with its parameters.
  bool activation(const Operands &o, StepSpec &out);
  bool binary(const Operands &o, StepSpec &out);
  bool convOrMatmul(const std::string &op, const Operands &o, StepSpec &out);
  bool entry(const Json &e, const std::string &path, EntrySpec &out);
  bool weights(const Json &w, Manifest &m);
};

bool Reader::buffer(const Json &b, const std::string &path, const EntrySpec &e,
                    int64_t arenaBytes, BufferSpec &out) {
  std::string kind;
  if (!string(b, path, "kind", kind))
    return false;
  if (kind == "input" || kind == "output") {
    out.kind = kind == "input" ? BufferSpec::Kind::Input
                               : BufferSpec::Kind::Output;
    size_t n = kind == "input" ? e.inputs.size() : e.outputs.size();
    if (!integer(b, path, "index", out.index))
      return false;
    if (out.index >= int64_t(n))
      return fail(path + ".index", "the entry has " + std::to_string(n) + " " +
                                       kind + "s");
    out.bytes = kind == "input" ? e.inputs[out.index].bytes
                                : e.outputs[out.index].bytes;
    return true;
  }
  if (kind == "weight") {
    out.kind = BufferSpec::Kind::Weight;
    return string(b, path, "name", out.weight);
  }
  if (kind != "arena")
    return fail(path + ".kind", "unknown buffer kind '" + kind + "'");
  out.kind = BufferSpec::Kind::Arena;
  if (!integer(b, path, "offset", out.offset) ||
      !integer(b, path, "bytes", out.bytes))
    return false;
  if (out.offset % 64 != 0)
    return fail(path + ".offset", "not a multiple of 64");
  if (out.offset > arenaBytes || out.bytes > arenaBytes - out.offset)
    return fail(path, "lies past arena_bytes (" + std::to_string(arenaBytes) +
                          ")");
  return true;
}

bool Reader::step(const Json &s, const std::string &path, StepSpec &out) {
  std::string op;
  if (!string(s, path, "op", op))
    return false;
  if (op == "kernel") {
    out.op = StepSpec::Op::Kernel;
    return string(s, path, "name", out.kernel) &&
           ints(s, path, "args", out.args) &&
           integer(s, path, "range", out.range, true, 1);
  }
  const Json *args = member(s, path, "args");
  if (!args)
    return false;
  std::string ap = path + ".args";
  const Json *attrs = s.get("attrs") ? s.get("attrs") : nullptr;
  std::string tp = path + ".attrs";
  if (op == "copy") {
    out.op = StepSpec::Op::Copy;
    return integer(*args, ap, "src", out.src) &&
           integer(*args, ap, "dst", out.dst);
  }
  if (!attrs)
    return fail(tp, "missing");
  if (op == "branch") {
    out.op = StepSpec::Op::Branch;
    return integer(*args, ap, "cond", out.cond) &&
           integer(*attrs, tp, "else", out.target);
  }
  if (op == "jump") {
    out.op = StepSpec::Op::Jump;
    return integer(*attrs, tp, "to", out.target);
  }
  if (op == "openblas.sgemm") {
    out.op = StepSpec::Op::Sgemm;
    return integer(*args, ap, "a", out.a) && integer(*args, ap, "b", out.b) &&
           integer(*args, ap, "c", out.c) &&
           ints(*attrs, tp, "a_shape", out.aShape) &&
           ints(*attrs, tp, "b_shape", out.bShape) &&
           integer(*attrs, tp, "batch", out.batch, true, 1) &&
           (out.aShape.size() == 2 && out.bShape.size() == 2 &&
                    out.aShape[1] == out.bShape[0]
                ? true
                : fail(tp, "a_shape and b_shape must be [M, K] and [K, N]"));
  }
  if (op == "onednn.pool2d")
    return pool2d({*args, ap, *attrs, tp}, out);
  if (op == "onednn.concat")
    return concat({*args, ap, *attrs, tp}, out);
  if (op == "onednn.binary")
    return binary({*args, ap, *attrs, tp}, out);
  if (op == "onednn.conv2d" || op == "onednn.conv2d_filter_grad" ||
      op == "onednn.matmul")
    return convOrMatmul(op, {*args, ap, *attrs, tp}, out);
  return fail(path + ".op", "unknown step '" + op + "'");
}

bool Reader::pool2d(const Operands &o, StepSpec &out) {
  out.op = StepSpec::Op::Pool2d;
  if (!integer(o.args, o.ap, "src", out.src) ||
      !integer(o.args, o.ap, "dst", out.dst) ||
      !ints(o.attrs, o.tp, "src_shape", out.srcShape) ||
      !ints(o.attrs, o.tp, "dst_shape", out.dstShape) ||
      !ints(o.attrs, o.tp, "kernel", out.kernelSize) ||
      !ints(o.attrs, o.tp, "strides", out.strides) ||
      !ints(o.attrs, o.tp, "pads", out.pads) ||
      !string(o.attrs, o.tp, "algorithm", out.algorithm))
    return false;
  if (out.srcShape.size() != 4 || out.dstShape.size() != 4 ||
      out.kernelSize.size() != 2 || out.strides.size() != 2 ||
      out.pads.size() != 4)
    return fail(o.tp, "a pool2d has 4-d shapes, a 2-d kernel, 2 strides and "
                      "4 pads");
  if (out.algorithm != "max" && out.algorithm != "avg_include_pad" &&
      out.algorithm != "avg_exclude_pad")
    return fail(o.tp + ".algorithm",
                "unknown pooling algorithm '" + out.algorithm + "'");
  return true;
}

bool Reader::concat(const Operands &o, StepSpec &out) {
  out.op = StepSpec::Op::Concat;
  if (!ints(o.args, o.ap, "srcs", out.args) ||
      !integer(o.args, o.ap, "dst", out.dst) ||
      !ints(o.attrs, o.tp, "src_channels", out.srcChannels) ||
      !ints(o.attrs, o.tp, "dst_shape", out.dstShape))
    return false;
  bool positive = std::all_of(out.srcChannels.begin(), out.srcChannels.end(),
                              [](int64_t c) { return c > 0; });
  int64_t channels = std::accumulate(out.srcChannels.begin(),
                                     out.srcChannels.end(), int64_t(0));
  if (!positive || out.dstShape.size() != 4 || out.args.empty() ||
      out.args.size() != out.srcChannels.size() ||
      channels != out.dstShape[1])
    return fail(o.tp, "a concat has a 4-d dst_shape and one positive "
                      "src_channels per source, summing to its channels");
  return true;
}

bool Reader::activation(const Operands &o, StepSpec &out) {
  static const char *const kActivations[] = {
      "none",      "relu",      "sigmoid", "tanh", "gelu_erf",    "gelu_tanh",
      "hardswish", "swish",     "clip",    "hardsigmoid", "leaky_relu"};
  if (!string(o.attrs, o.tp, "activation", out.activation, false))
    return false;
  bool known = false;
  for (const char *a : kActivations)
    known |= out.activation == a;
  if (!known)
    return fail(o.tp + ".activation",
                "unknown activation '" + out.activation + "'");
  return number(o.attrs, o.tp, "activation_alpha", out.activationAlpha,
                false) &&
         number(o.attrs, o.tp, "activation_beta", out.activationBeta, false);
}

bool Reader::binary(const Operands &o, StepSpec &out) {
  // src0 and src1 are kept as src and weights (Model.h).
  out.op = StepSpec::Op::Binary;
  if (!integer(o.args, o.ap, "src0", out.src) ||
      !integer(o.args, o.ap, "src1", out.weights) ||
      !integer(o.args, o.ap, "dst", out.dst) ||
      !ints(o.attrs, o.tp, "dst_shape", out.dstShape) ||
      !string(o.attrs, o.tp, "algorithm", out.algorithm) ||
      !activation(o, out))
    return false;
  if (out.dstShape.size() != 4)
    return fail(o.tp, "a binary step has a 4-d dst_shape");
  if (out.algorithm != "add")
    return fail(o.tp + ".algorithm",
                "unknown binary algorithm '" + out.algorithm + "'");
  out.srcShape = out.weightsShape = out.dstShape;
  return true;
}

bool Reader::convOrMatmul(const std::string &op, const Operands &o,
                          StepSpec &out) {
  bool common = integer(o.args, o.ap, "src", out.src) &&
                integer(o.args, o.ap, "weights", out.weights) &&
                integer(o.args, o.ap, "dst", out.dst) &&
                integer(o.args, o.ap, "bias", out.bias, false) &&
                integer(o.args, o.ap, "sum", out.sum, false) &&
                ints(o.attrs, o.tp, "src_shape", out.srcShape) &&
                ints(o.attrs, o.tp, "weights_shape", out.weightsShape) &&
                ints(o.attrs, o.tp, "dst_shape", out.dstShape) &&
                activation(o, out);
  if (!common)
    return false;
  if (op == "onednn.matmul") {
    out.op = StepSpec::Op::Matmul;
    const Json *wc = o.attrs.get("weights_constant");
    out.weightsConstant = wc && wc->isBool() && wc->boolean();
    if (out.srcShape.size() < 2 || out.weightsShape.size() < 2 ||
        out.dstShape.size() < 2)
      return fail(o.tp, "a matmul has shapes of rank 2 or more");
    return true;
  }
  out.op = op == "onednn.conv2d" ? StepSpec::Op::Conv2d
                                 : StepSpec::Op::Conv2dFilterGrad;
  if (!ints(o.attrs, o.tp, "strides", out.strides) ||
      !ints(o.attrs, o.tp, "pads", out.pads) ||
      !ints(o.attrs, o.tp, "dilations", out.dilations) ||
      !integer(o.attrs, o.tp, "groups", out.groups, true, 1) ||
      !string(o.attrs, o.tp, "algorithm", out.algorithm, false))
    return false;
  if (out.algorithm.empty())
    out.algorithm = "direct";
  if (out.algorithm != "direct" && out.algorithm != "winograd")
    return fail(o.tp + ".algorithm",
                "unknown convolution algorithm '" + out.algorithm + "'");
  if (out.srcShape.size() != 4 || out.weightsShape.size() != 4 ||
      out.dstShape.size() != 4 || out.strides.size() != 2 ||
      out.pads.size() != 4 || out.dilations.size() != 2)
    return fail(o.tp, "a conv2d has 4-d shapes, 2 strides, 4 pads and 2 "
                      "dilations");
  if (out.op == StepSpec::Op::Conv2dFilterGrad &&
      (out.groups != 1 || out.bias != -1 || out.sum != -1 ||
       out.activation != "none" || out.algorithm != "direct"))
    return fail(o.tp, "a conv2d_filter_grad has one group, no bias, sum "
                      "or activation, and the direct algorithm");
  return true;
}

bool Reader::entry(const Json &e, const std::string &path, EntrySpec &out) {
  if (!string(e, path, "name", out.name) ||
      !tensors(e, path, "inputs", out.inputs) ||
      !tensors(e, path, "outputs", out.outputs) ||
      !integer(e, path, "arena_bytes", out.arenaBytes))
    return false;
  const Json *buffers = member(e, path, "buffers");
  const Json *steps = member(e, path, "steps");
  if (!buffers || !steps)
    return false;
  if (!buffers->isArray())
    return fail(path + ".buffers", "expected an array");
  if (!steps->isArray())
    return fail(path + ".steps", "expected an array");
  for (size_t i = 0; i < buffers->array().size(); ++i) {
    out.buffers.emplace_back();
    if (!buffer(buffers->array()[i],
                path + ".buffers[" + std::to_string(i) + "]", out,
                out.arenaBytes, out.buffers.back()))
      return false;
  }
  int64_t numBuffers = out.buffers.size();
  for (size_t i = 0; i < steps->array().size(); ++i) {
    std::string sp = path + ".steps[" + std::to_string(i) + "]";
    out.steps.emplace_back();
    StepSpec &s = out.steps.back();
    if (!step(steps->array()[i], sp, s))
      return false;
    // Control flow only goes forward (every run ends) and lands on a step
    // or just past the last one.
    int64_t numSteps = steps->array().size();
    if (s.target != -1 && (s.target <= int64_t(i) || s.target > numSteps))
      return fail(sp + ".attrs", "goes to step " + std::to_string(s.target) +
                                     ", not after this step and within the " +
                                     std::to_string(numSteps) + " steps");
    std::vector<int64_t> ids = s.args;
    for (int64_t id :
         {s.src, s.weights, s.bias, s.sum, s.dst, s.a, s.b, s.c, s.cond})
      if (id != -1)
        ids.push_back(id);
    for (int64_t id : ids)
      if (id < 0 || id >= numBuffers)
        return fail(sp + ".args", "buffer " + std::to_string(id) +
                                      " is out of range (the entry has " +
                                      std::to_string(numBuffers) + ")");
  }
  return true;
}

bool Reader::weights(const Json &w, Manifest &m) {
  if (!string(w, "weights", "storage", m.storage))
    return false;
  if (m.storage == "none")
    return true;
  if (m.storage != "embedded" && m.storage != "external")
    return fail("weights.storage", "expected embedded, external or none");
  if (m.storage == "external" && !string(w, "weights", "file", m.file))
    return false;
  if (!integer(w, "weights", "size", m.weightsSize) ||
      !checksum(w, "weights", m.weightsChecksum))
    return false;
  const Json *ts = member(w, "weights", "tensors");
  if (!ts)
    return false;
  if (!ts->isArray())
    return fail("weights.tensors", "expected an array");
  for (size_t i = 0; i < ts->array().size(); ++i) {
    const Json &t = ts->array()[i];
    std::string p = "weights.tensors[" + std::to_string(i) + "]";
    WeightSpec s;
    if (!string(t, p, "name", s.name) || !string(t, p, "dtype", s.dtype) ||
        !ints(t, p, "shape", s.shape) || !checksum(t, p, s.checksum))
      return false;
    m.tensors.push_back(std::move(s));
  }
  return true;
}

} // namespace

Error loom::rt::parseManifest(std::string_view text, Manifest &m) {
  Json root;
  std::string error;
  if (!Json::parse(text, root, error))
    return makeError(LOOM_ERROR_FORMAT, "manifest: invalid JSON: " + error);
  Reader r;
  std::string format;
  int64_t version = 0;
  if (!r.string(root, "manifest", "format", format))
    return r.error;
  if (format != "loom-artifact")
    return makeError(LOOM_ERROR_FORMAT,
                     "manifest: format is '" + format +
                         "', not loom-artifact");
  if (!r.integer(root, "manifest", "version", version))
    return r.error;
  if (version != 1)
    return makeError(LOOM_ERROR_VERSION,
                     "manifest: format version " + std::to_string(version) +
                         "; this runtime reads version 1 (recompile with "
                         "this Loom's loom-compile)");
  const Json *target = r.member(root, "manifest", "target");
  const Json *weights = r.member(root, "manifest", "weights");
  const Json *entries = r.member(root, "manifest", "entries");
  if (!target || !weights || !entries)
    return r.error;
  if (!r.string(*target, "target", "triple", m.triple) ||
      !r.string(*target, "target", "cpu", m.cpu))
    return r.error;
  const Json *features = r.member(*target, "target", "features");
  if (!features)
    return r.error;
  if (!features->isArray())
    return makeError(LOOM_ERROR_FORMAT,
                     "manifest: target.features: expected an array");
  for (const Json &f : features->array()) {
    if (!f.isString())
      return makeError(LOOM_ERROR_FORMAT,
                       "manifest: target.features: expected strings");
    m.features.push_back(f.string());
  }
  if (m.triple.rfind("x86_64", 0) != 0)
    return makeError(LOOM_ERROR_FORMAT, "manifest: target.triple: '" +
                                            m.triple +
                                            "' is not an x86-64 target");
  if (!r.weights(*weights, m))
    return r.error;
  if (!entries->isArray() || entries->array().empty())
    return makeError(LOOM_ERROR_FORMAT,
                     "manifest: entries: expected a non-empty array");
  for (size_t i = 0; i < entries->array().size(); ++i) {
    m.entries.emplace_back();
    if (!r.entry(entries->array()[i], "entries[" + std::to_string(i) + "]",
                 m.entries.back()))
      return r.error;
  }
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

namespace {

/// safetensors dtype → bytes per element.
int64_t safetensorsBytes(const std::string &dtype) {
  static const std::pair<const char *, int64_t> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  for (auto &[name, bytes] : kSizes)
    if (dtype == name)
      return bytes;
  return 0;
}

std::string hex(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}

} // namespace

Error loom::rt::bindWeights(const uint8_t *data, uint64_t size,
                            const Manifest &m,
                            std::map<std::string, WeightView> &views) {
  auto bad = [](const std::string &why) {
    return makeError(LOOM_ERROR_FORMAT, "weights: " + why);
  };
  if (int64_t(size) != m.weightsSize)
    return makeError(LOOM_ERROR_CHECKSUM,
                     "weights: " + std::to_string(size) +
                         " bytes, but the artifact was compiled with " +
                         std::to_string(m.weightsSize));
  uint64_t sum = loom_checksum64(data, size);
  if (sum != m.weightsChecksum)
    return makeError(LOOM_ERROR_CHECKSUM,
                     "weights: checksum " + hex(sum) + ", expected " +
                         hex(m.weightsChecksum) +
                         ": not the weights the artifact was compiled with");
  if (size < 8)
    return bad("not a safetensors file");
  uint64_t headerLen;
  std::memcpy(&headerLen, data, 8);
  if (headerLen > size - 8)
    return bad("the safetensors header lies past the end");
  Json header;
  std::string error;
  if (!Json::parse(std::string_view((const char *)data + 8, headerLen), header,
                   error) ||
      !header.isObject())
    return bad("invalid safetensors header: " + error);
  const uint8_t *body = data + 8 + headerLen;
  uint64_t bodySize = size - 8 - headerLen;
  for (const WeightSpec &w : m.tensors) {
    const Json *t = header.get(w.name);
    const Json *dtype = t ? t->get("dtype") : nullptr;
    const Json *shape = t ? t->get("shape") : nullptr;
    const Json *offsets = t ? t->get("data_offsets") : nullptr;
    if (!dtype || !dtype->isString() || !shape || !shape->isArray() ||
        !offsets || !offsets->isArray() || offsets->array().size() != 2 ||
        !offsets->array()[0].isInteger() || !offsets->array()[1].isInteger())
      return bad("tensor '" + w.name + "' is missing or malformed");
    int64_t begin = offsets->array()[0].integer();
    int64_t end = offsets->array()[1].integer();
    if (begin < 0 || end < begin || uint64_t(end) > bodySize)
      return bad("tensor '" + w.name + "' lies past the end");
    std::vector<int64_t> dims;
    for (const Json &d : shape->array())
      dims.push_back(d.isInteger() ? d.integer() : -1);
    if (dtype->string() != w.dtype || dims != w.shape)
      return bad("tensor '" + w.name + "' has another dtype or shape than "
                 "the manifest says");
    int64_t bytes = safetensorsBytes(w.dtype);
    for (int64_t d : dims)
      bytes *= d;
    if (bytes != end - begin)
      return bad("tensor '" + w.name + "' has " + std::to_string(end - begin) +
                 " bytes, its shape needs " + std::to_string(bytes));
    uint64_t c = loom_checksum64(body + begin, end - begin);
    if (c != w.checksum)
      return makeError(LOOM_ERROR_CHECKSUM,
                       "weights: tensor '" + w.name + "' has checksum " +
                           hex(c) + ", expected " + hex(w.checksum));
    views[w.name] = {body + begin, end - begin};
  }
  return Error::ok();
}
