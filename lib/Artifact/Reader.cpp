//===- Reader.cpp - Reading and validating a manifest, once ---------------===//
//
// Part of Loom. See Schema.h and docs/Artifact.md (the rules checked here).
// Every failure names the field, as a path:
// entries[0].programs[0].steps[3].args.src.
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Json.h"
#include "loom/Artifact/Schema.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <tuple>

using namespace loom;
using namespace loom::artifact;

namespace {

/// Whether the product of \p dims (each >= 0) is below 2^31: the largest
/// tensor a step's kernels index (with 32 bits, or in sizes of int64_t
/// bytes that must not overflow).
bool fewerThan2To31(const std::vector<int64_t> &dims) {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > kMax / d)
      return false;
    n *= d;
  }
  return n <= kMax;
}

std::string at(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

/// Reads typed fields of JSON objects, remembering the first failure.
class Reader {
public:
  std::optional<ReadError> error;
  /// The manifest's version (kManifestVersion or kBoundedManifestVersion).
  int64_t version = kManifestVersion;
  /// The world's ranks, while they are read.
  int64_t numRanks = 0;

  bool fail(const std::string &path, const std::string &why) {
    if (!error)
      error = ReadError{ReadError::Kind::Format,
                        "manifest: " + path + ": " + why};
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
  /// The array \p key of \p obj, or nullptr (failed).
  const std::vector<Json> *array(const Json &obj, const std::string &path,
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
  bool boolean(const Json &obj, const std::string &path,
               const std::string &key, bool &out) {
    const Json *v = member(obj, path, key, false);
    if (!v)
      return !error;
    if (!v->isBool())
      return fail(path + "." + key, "expected true or false");
    out = v->boolean();
    return true;
  }
  bool ints(const Json &obj, const std::string &path, const std::string &key,
            std::vector<int64_t> &out) {
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
  bool strings(const Json &obj, const std::string &path,
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
  /// A string member naming one of an enumeration's values.
  template <typename Enum, typename ParseFn>
  bool enumeration(const Json &obj, const std::string &path,
                   const std::string &key, const char *what, ParseFn parse,
                   Enum &out) {
    std::string name;
    if (!string(obj, path, key, name))
      return false;
    std::optional<Enum> parsed = parse(name);
    if (!parsed)
      return fail(path + "." + key,
                  "unknown " + std::string(what) + " '" + name + "'");
    out = *parsed;
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
  /// Device index \p d names one of the manifest's \p numDevices.
  bool device(const std::string &path, int64_t d, int64_t numDevices) {
    if (d < numDevices)
      return true;
    return fail(path, "device " + std::to_string(d) +
                          " is out of range (the manifest has " +
                          std::to_string(numDevices) + ")");
  }
  bool tensor(const Json &t, const std::string &path, TensorDesc &out);
  bool tensors(const Json &obj, const std::string &path,
               const std::string &key, std::vector<TensorDesc> &out);
  /// The entry's output bounds name a dimension and a rank-0 i64 output.
  bool bounds(const Entry &e, const std::string &path);

  // Steps (one reader per kind).
  /// A step's "args" and "attrs" objects with their paths.
  struct Operands {
    const Json &args;
    std::string ap;
    const Json &attrs;
    std::string tp;
  };
  bool step(const Json &s, const std::string &path, Step &out);
  bool library(StepKind kind, const Operands &o, Step &out);
  bool activation(const Operands &o, PostOp &out);
  bool convolution(const Operands &o, ConvolutionOperands &out,
                   size_t minSpatial, size_t maxSpatial);
  bool conv2d(const Operands &o, Step &out);
  bool filterGrad(const Operands &o, Step &out);
  bool matmul(const Operands &o, Step &out);
  bool pool2d(const Operands &o, Step &out);
  bool concat(const Operands &o, Step &out);
  bool binary(const Operands &o, Step &out);
  bool sgemm(const Operands &o, Step &out);
  bool dispatch(const Operands &o, Step &out);
  bool cublasMatmul(const Operands &o, Step &out);
  bool cudnnConv(const Operands &o, Step &out);
  bool topK(const Operands &o, Step &out);
  bool nonMaxSuppression(const Operands &o, Step &out);
  bool nonZero(const Operands &o, Step &out);
  /// A dynamic step's element type: one libloomrt's steps compute on.
  bool dynamicDtype(const Operands &o, std::string &out);

  // The rest of the manifest.
  bool device(const Json &d, const std::string &path, Device &out);
  bool weights(const Json &w, Weights &out);
  bool program(const Json &p, const std::string &path, int64_t numDevices,
               Program &out);
  bool buffer(const Json &b, const std::string &path, const Entry &e,
              int64_t numDevices, Buffer &out);
  bool checkSteps(const Entry &e, const std::string &path);
  bool checkDevices(const Manifest &m);
  bool entry(const Json &e, const std::string &path, int64_t numDevices,
             Entry &out);
  bool rank(const Json &r, const std::string &path, const Manifest &m,
            Rank &out);
  bool world(const Json &w, Manifest &m);
  bool source(const Json &j, Manifest &m);
  bool channels(const World &world);
  bool results(const Json &w, World &world);

  // The pipelined step (docs/Artifact.md "The pipelined step").
  bool slot(const Json &j, const std::string &path, const Manifest &m,
            Slot &out);
  bool slotRef(const Json &obj, const std::string &path,
               const std::string &key, const Rank &rank, int64_t &out);
  bool microBatch(const Json &obj, const std::string &path, const World &w,
                  int64_t &out);
  bool fits(const std::string &path, const Slot &slot,
            const std::string &dtype, int64_t bytes);
  bool compute(const Json &j, const std::string &path, const Manifest &m,
               const Rank &rank, ComputeAction &out);
  bool exchange(const Json &j, const std::string &path, const World &w,
                const Rank &rank, ExchangeAction &out);
  bool accumulate(const Json &j, const std::string &path, const World &w,
                  const Rank &rank, AccumulateAction &out);
  bool allReduce(const Json &j, const std::string &path, int64_t self,
                 const Rank &rank, AllReduceAction &out);
  bool update(const Json &j, const std::string &path, const World &w,
              const Rank &rank, UpdateAction &out);
  bool optimizer(const Json &w, Optimizer &out);
  bool action(const Json &j, const std::string &path, const Manifest &m,
              const Rank &rank, Action &out);
  bool step(const Json &r, const std::string &path, const Manifest &m,
            Rank &out);
};

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

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

bool Reader::step(const Json &s, const std::string &path, Step &out) {
  StepKind kind = StepKind::Kernel;
  if (!enumeration(s, path, "op", "step", parseStepKind, kind))
    return false;
  if (kind == StepKind::Kernel) {
    KernelStep k;
    if (!string(s, path, "name", k.name) || !ints(s, path, "args", k.args) ||
        !integer(s, path, "range", k.range, true, 1) ||
        !integer(s, path, "grain", k.grain, false, 1) ||
        !boolean(s, path, "team", k.team) ||
        !boolean(s, path, "elementwise", k.elementwise))
      return false;
    if (k.team && (k.range != 1 || k.grain != 1))
      return fail(path, "a team kernel has range 1 and grain 1 (every "
                        "thread of the team calls it once)");
    if (k.team && k.elementwise)
      return fail(path, "a team kernel is not elementwise");
    out = std::move(k);
    return true;
  }
  const Json *args = member(s, path, "args");
  if (!args)
    return false;
  if (!args->isObject())
    return fail(path + ".args", "expected an object");
  static const Json kNoAttrs = Json::makeObject();
  const Json *attrs = s.get("attrs");
  if (attrs && !attrs->isObject())
    return fail(path + ".attrs", "expected an object");
  if (!attrs && kind != StepKind::Copy)
    return fail(path + ".attrs", "missing");
  return library(kind, {*args, path + ".args", attrs ? *attrs : kNoAttrs,
                         path + ".attrs"},
                 out);
}

bool Reader::library(StepKind kind, const Operands &o, Step &out) {
  switch (kind) {
  case StepKind::Kernel:
    return fail(o.ap, "a kernel step has positional args");
  case StepKind::Copy: {
    CopyStep s;
    if (!integer(o.args, o.ap, "src", s.src) ||
        !integer(o.args, o.ap, "dst", s.dst))
      return false;
    out = s;
    return true;
  }
  case StepKind::Branch: {
    BranchStep s;
    if (!integer(o.args, o.ap, "cond", s.cond) ||
        !integer(o.attrs, o.tp, "else", s.elseStep))
      return false;
    out = s;
    return true;
  }
  case StepKind::Jump: {
    JumpStep s;
    if (!integer(o.attrs, o.tp, "to", s.to))
      return false;
    out = s;
    return true;
  }
  case StepKind::Conv2d:
    return conv2d(o, out);
  case StepKind::Conv2dFilterGrad:
    return filterGrad(o, out);
  case StepKind::Matmul:
    return matmul(o, out);
  case StepKind::Pool2d:
    return pool2d(o, out);
  case StepKind::Concat:
    return concat(o, out);
  case StepKind::Binary:
    return binary(o, out);
  case StepKind::Sgemm:
    return sgemm(o, out);
  case StepKind::Dispatch:
    return dispatch(o, out);
  case StepKind::CublasMatmul:
    return cublasMatmul(o, out);
  case StepKind::CudnnConv:
    return cudnnConv(o, out);
  case StepKind::TopK:
    return topK(o, out);
  case StepKind::NonMaxSuppression:
    return nonMaxSuppression(o, out);
  case StepKind::NonZero:
    return nonZero(o, out);
  }
  return fail(o.ap, "unknown step");
}

bool Reader::activation(const Operands &o, PostOp &out) {
  std::string name = "none";
  if (!string(o.attrs, o.tp, "activation", name, false))
    return false;
  std::optional<Activation> kind = parseActivation(name);
  if (!kind)
    return fail(o.tp + ".activation", "unknown activation '" + name + "'");
  out.kind = *kind;
  bool required = activationParameters(*kind) > 0;
  return number(o.attrs, o.tp, "activation_alpha", out.alpha, required) &&
         number(o.attrs, o.tp, "activation_beta", out.beta, required);
}

/// A convolution's operands; the shapes have 2 + k dimensions, k spatial
/// ones from \p minSpatial to \p maxSpatial (a conv2d: 2 or 3, its filter
/// gradient 2, a cuDNN convolution 1 to 3).
bool Reader::convolution(const Operands &o, ConvolutionOperands &out,
                         size_t minSpatial, size_t maxSpatial) {
  if (!integer(o.args, o.ap, "src", out.src) ||
      !integer(o.args, o.ap, "weights", out.weights) ||
      !integer(o.args, o.ap, "dst", out.dst) ||
      !ints(o.attrs, o.tp, "src_shape", out.srcShape) ||
      !ints(o.attrs, o.tp, "weights_shape", out.weightsShape) ||
      !ints(o.attrs, o.tp, "dst_shape", out.dstShape) ||
      !ints(o.attrs, o.tp, "strides", out.strides) ||
      !ints(o.attrs, o.tp, "pads", out.pads) ||
      !ints(o.attrs, o.tp, "dilations", out.dilations) ||
      !integer(o.attrs, o.tp, "groups", out.groups, true, 1))
    return false;
  size_t k = out.strides.size();
  if (k < minSpatial || k > maxSpatial || out.srcShape.size() != k + 2 ||
      out.weightsShape.size() != k + 2 || out.dstShape.size() != k + 2 ||
      out.pads.size() != 2 * k || out.dilations.size() != k)
    return fail(o.tp, "a convolution has k = " + std::to_string(minSpatial) +
                          (minSpatial == maxSpatial
                               ? ""
                               : " to " + std::to_string(maxSpatial)) +
                          " strides and dilations, 2k pads and shapes of "
                          "k + 2 dimensions");
  auto atLeastOne = [](const Shape &v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x >= 1; });
  };
  if (out.weightsShape[0] % out.groups != 0 || !atLeastOne(out.dilations) ||
      !atLeastOne(out.strides))
    return fail(o.tp, "a conv2d's groups divide its output channels, its "
                      "strides and dilations are at least 1");
  return true;
}

/// Whether \p c's shapes agree: positive dimensions, src's channels the
/// weights' times the groups, dst's batch src's and its channels the
/// weights' outputs, each output extent the padded input's windows at the
/// stride.
static bool shapesAgree(const ConvolutionOperands &c) {
  for (const Shape *shape : {&c.srcShape, &c.weightsShape, &c.dstShape})
    if (!std::all_of(shape->begin(), shape->end(),
                     [](int64_t d) { return d >= 1; }))
      return false;
  size_t k = c.strides.size();
  if (c.srcShape[1] != c.weightsShape[1] * c.groups ||
      c.dstShape[0] != c.srcShape[0] || c.dstShape[1] != c.weightsShape[0])
    return false;
  for (size_t i = 0; i < k; ++i) {
    if (c.pads[i] < 0 || c.pads[k + i] < 0)
      return false;
    int64_t span = c.srcShape[2 + i] + c.pads[i] + c.pads[k + i] -
                   c.dilations[i] * (c.weightsShape[2 + i] - 1) - 1;
    if (span < 0 || c.dstShape[2 + i] != span / c.strides[i] + 1)
      return false;
  }
  return true;
}

bool Reader::conv2d(const Operands &o, Step &out) {
  Conv2dStep s;
  if (!convolution(o, s, 2, 3) ||
      !integer(o.args, o.ap, "bias", s.bias, false) ||
      !integer(o.args, o.ap, "sum", s.sum, false) ||
      !activation(o, s.activation))
    return false;
  if (o.attrs.get("algorithm") &&
      !enumeration(o.attrs, o.tp, "algorithm", "convolution algorithm",
                   parseConvAlgorithm, s.algorithm))
    return false;
  out = std::move(s);
  return true;
}

bool Reader::filterGrad(const Operands &o, Step &out) {
  Conv2dFilterGradStep s;
  if (!convolution(o, s, 2, 2))
    return false;
  if (s.srcShape[1] % s.groups != 0 || o.args.get("bias") ||
      o.args.get("sum") || o.attrs.get("activation") ||
      o.attrs.get("algorithm"))
    return fail(o.tp, "a conv2d_filter_grad's groups divide its src "
                      "channels; it has no bias, sum or activation, and the "
                      "direct algorithm");
  out = std::move(s);
  return true;
}

bool Reader::matmul(const Operands &o, Step &out) {
  MatmulStep s;
  if (!integer(o.args, o.ap, "src", s.src) ||
      !integer(o.args, o.ap, "weights", s.weights) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !integer(o.args, o.ap, "bias", s.bias, false) ||
      !integer(o.args, o.ap, "sum", s.sum, false) ||
      !ints(o.attrs, o.tp, "src_shape", s.srcShape) ||
      !ints(o.attrs, o.tp, "weights_shape", s.weightsShape) ||
      !ints(o.attrs, o.tp, "dst_shape", s.dstShape) ||
      !boolean(o.attrs, o.tp, "weights_constant", s.weightsConstant) ||
      !number(o.attrs, o.tp, "scale", s.scale, false) ||
      !activation(o, s.activation))
    return false;
  if (s.scale != 1 && s.bias != -1)
    return fail(o.tp, "a matmul with a bias has no scale");
  if (s.srcShape.size() < 2 || s.weightsShape.size() < 2 ||
      s.dstShape.size() < 2)
    return fail(o.tp, "a matmul has shapes of rank 2 or more");
  if (o.attrs.isObject() && o.attrs.get("src_view")) {
    std::array<StridedOperand, 3> views;
    const char *roles[] = {"src_view", "weights_view", "dst_view"};
    for (size_t i = 0; i < 3; ++i) {
      const Json *v = member(o.attrs, o.tp, roles[i]);
      std::string path = o.tp + "." + roles[i];
      if (!v || !ints(*v, path, "dims", views[i].dims) ||
          !ints(*v, path, "strides", views[i].strides) ||
          !integer(*v, path, "offset", views[i].offset))
        return false;
      if (views[i].dims.size() < 2 ||
          views[i].dims.size() != views[0].dims.size() ||
          views[i].strides.size() != views[i].dims.size())
        return fail(path, "a matmul's views have dims and strides of one "
                          "rank, 2 or more");
    }
    s.views = std::move(views);
  }
  out = std::move(s);
  return true;
}

bool Reader::pool2d(const Operands &o, Step &out) {
  Pool2dStep s;
  if (!integer(o.args, o.ap, "src", s.src) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !ints(o.attrs, o.tp, "src_shape", s.srcShape) ||
      !ints(o.attrs, o.tp, "dst_shape", s.dstShape) ||
      !ints(o.attrs, o.tp, "kernel", s.kernel) ||
      !ints(o.attrs, o.tp, "strides", s.strides) ||
      !ints(o.attrs, o.tp, "pads", s.pads))
    return false;
  if (s.srcShape.size() != 4 || s.dstShape.size() != 4 ||
      s.kernel.size() != 2 || s.strides.size() != 2 || s.pads.size() != 4)
    return fail(o.tp, "a pool2d has 4-d shapes, a 2-d kernel, 2 strides and "
                      "4 pads");
  if (!enumeration(o.attrs, o.tp, "algorithm", "pooling algorithm",
                   parsePoolAlgorithm, s.algorithm))
    return false;
  out = std::move(s);
  return true;
}

bool Reader::concat(const Operands &o, Step &out) {
  ConcatStep s;
  if (!ints(o.args, o.ap, "srcs", s.srcs) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !ints(o.attrs, o.tp, "src_channels", s.srcChannels) ||
      !ints(o.attrs, o.tp, "dst_shape", s.dstShape))
    return false;
  bool positive = std::all_of(s.srcChannels.begin(), s.srcChannels.end(),
                              [](int64_t c) { return c > 0; });
  int64_t channels = std::accumulate(s.srcChannels.begin(),
                                     s.srcChannels.end(), int64_t(0));
  if (!positive || s.dstShape.size() != 4 || s.srcs.empty() ||
      s.srcs.size() != s.srcChannels.size() || channels != s.dstShape[1])
    return fail(o.tp, "a concat has a 4-d dst_shape and one positive "
                      "src_channels per source, summing to its channels");
  out = std::move(s);
  return true;
}

bool Reader::binary(const Operands &o, Step &out) {
  BinaryStep s;
  if (!integer(o.args, o.ap, "src0", s.src0) ||
      !integer(o.args, o.ap, "src1", s.src1) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !ints(o.attrs, o.tp, "dst_shape", s.dstShape) ||
      !enumeration(o.attrs, o.tp, "algorithm", "binary algorithm",
                   parseBinaryAlgorithm, s.algorithm) ||
      !activation(o, s.activation))
    return false;
  if (s.dstShape.size() != 4)
    return fail(o.tp, "a binary step has a 4-d dst_shape");
  // src1_shape: absent in artifacts written before broadcasts.
  s.src1Shape = s.dstShape;
  if (o.attrs.get("src1_shape") &&
      !ints(o.attrs, o.tp, "src1_shape", s.src1Shape))
    return false;
  auto perChannel = [&](const Shape &shape) {
    return shape.size() == 4 &&
           (shape[0] == 1 || shape[0] == s.dstShape[0]) &&
           shape[1] == s.dstShape[1] && shape[2] == 1 && shape[3] == 1;
  };
  if (s.src1Shape != s.dstShape && !perChannel(s.src1Shape))
    return fail(o.tp, "a binary step's src1_shape is its dst_shape or "
                      "[N, C, 1, 1] or [1, C, 1, 1] of it");
  if (!integer(o.args, o.ap, "shift", s.shift, false))
    return false;
  if (s.shift != -1 &&
      (!ints(o.attrs, o.tp, "shift_shape", s.shiftShape) ||
       !perChannel(s.shiftShape)))
    return fail(o.tp, "a binary step's shift_shape is [N, C, 1, 1] or "
                      "[1, C, 1, 1] of its dst_shape");
  out = std::move(s);
  return true;
}

bool Reader::sgemm(const Operands &o, Step &out) {
  SgemmStep s;
  if (!integer(o.args, o.ap, "a", s.a) || !integer(o.args, o.ap, "b", s.b) ||
      !integer(o.args, o.ap, "c", s.c) ||
      !ints(o.attrs, o.tp, "a_shape", s.aShape) ||
      !ints(o.attrs, o.tp, "b_shape", s.bShape) ||
      !integer(o.attrs, o.tp, "batch", s.batch, true, 1))
    return false;
  if (s.aShape.size() != 2 || s.bShape.size() != 2 ||
      s.aShape[1] != s.bShape[0])
    return fail(o.tp, "a_shape and b_shape must be [M, K] and [K, N]");
  out = std::move(s);
  return true;
}

bool Reader::dispatch(const Operands &o, Step &out) {
  DispatchStep s;
  Shape grid, block;
  if (!ints(o.args, o.ap, "buffers", s.args) ||
      !string(o.attrs, o.tp, "kernel", s.kernel) ||
      !ints(o.attrs, o.tp, "grid", grid) ||
      !ints(o.attrs, o.tp, "block", block) ||
      !integer(o.attrs, o.tp, "shared_bytes", s.sharedBytes, false))
    return false;
  if (s.kernel.empty())
    return fail(o.tp + ".kernel", "expected a kernel name");
  for (auto [name, dims, field] :
       {std::tuple{"grid", &grid, &s.grid}, {"block", &block, &s.block}}) {
    if (dims->size() != 3 ||
        std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 1; }))
      return fail(o.tp + "." + name, "expected 3 positive sizes");
    std::copy(dims->begin(), dims->end(), field->begin());
  }
  out = std::move(s);
  return true;
}

bool Reader::dynamicDtype(const Operands &o, std::string &out) {
  if (!string(o.attrs, o.tp, "dtype", out))
    return false;
  for (const char *known : {"f32", "f64", "i1", "i8", "i32", "i64"})
    if (out == known)
      return true;
  return fail(o.tp + ".dtype", "'" + out + "' is not an element type the "
                               "dynamic steps compute on (f32, f64, i1, i8, "
                               "i32, i64)");
}

bool Reader::topK(const Operands &o, Step &out) {
  TopKStep s;
  if (!integer(o.args, o.ap, "src", s.src) ||
      !integer(o.args, o.ap, "valid", s.valid, false) ||
      !integer(o.args, o.ap, "values", s.values) ||
      !integer(o.args, o.ap, "indices", s.indices) ||
      !integer(o.args, o.ap, "count", s.count) || !dynamicDtype(o, s.dtype) ||
      !integer(o.attrs, o.tp, "outer", s.outer) ||
      !integer(o.attrs, o.tp, "dim", s.dim) ||
      !integer(o.attrs, o.tp, "inner", s.inner) ||
      !integer(o.attrs, o.tp, "k", s.k) ||
      !boolean(o.attrs, o.tp, "largest", s.largest))
    return false;
  if (s.k > s.dim)
    return fail(o.tp + ".k", "k = " + std::to_string(s.k) +
                                 " is more than dim = " + std::to_string(s.dim));
  if (!fewerThan2To31({s.outer, s.dim, s.inner}))
    return fail(o.tp, "the source must have fewer than 2^31 elements");
  out = std::move(s);
  return true;
}

bool Reader::nonMaxSuppression(const Operands &o, Step &out) {
  NonMaxSuppressionStep s;
  double score = 0;
  if (!integer(o.args, o.ap, "boxes", s.boxes) ||
      !integer(o.args, o.ap, "scores", s.scores) ||
      !integer(o.args, o.ap, "valid", s.valid, false) ||
      !integer(o.args, o.ap, "selected", s.selected) ||
      !integer(o.args, o.ap, "count", s.count) ||
      !integer(o.attrs, o.tp, "batches", s.batches) ||
      !integer(o.attrs, o.tp, "classes", s.classes) ||
      !integer(o.attrs, o.tp, "num_boxes", s.numBoxes) ||
      !integer(o.attrs, o.tp, "max_output_boxes_per_class",
               s.maxOutputPerClass) ||
      !boolean(o.attrs, o.tp, "center_point_box", s.centerPointBox) ||
      !number(o.attrs, o.tp, "iou_threshold", s.iouThreshold))
    return false;
  if (o.attrs.get("score_threshold")) {
    if (!number(o.attrs, o.tp, "score_threshold", score))
      return false;
    s.scoreThreshold = score;
  }
  if (!fewerThan2To31({s.batches, s.classes, s.numBoxes, 4}) ||
      !fewerThan2To31({s.batches, s.classes, s.maxOutputPerClass, 3}))
    return fail(o.tp, "the boxes, scores and selections must have fewer "
                      "than 2^31 elements");
  out = std::move(s);
  return true;
}

bool Reader::nonZero(const Operands &o, Step &out) {
  NonZeroStep s;
  if (!integer(o.args, o.ap, "src", s.src) ||
      !integer(o.args, o.ap, "indices", s.indices) ||
      !integer(o.args, o.ap, "count", s.count) || !dynamicDtype(o, s.dtype) ||
      !ints(o.attrs, o.tp, "shape", s.shape))
    return false;
  std::vector<int64_t> dims = s.shape;
  dims.push_back(int64_t(s.shape.size()));
  if (!fewerThan2To31(dims))
    return fail(o.tp + ".shape", "the indices (rank x elements) must be "
                                 "fewer than 2^31");
  out = std::move(s);
  return true;
}

bool Reader::cublasMatmul(const Operands &o, Step &out) {
  CublasMatmulStep s;
  if (!integer(o.args, o.ap, "a", s.a) || !integer(o.args, o.ap, "b", s.b) ||
      !integer(o.args, o.ap, "d", s.d) ||
      !integer(o.args, o.ap, "bias", s.bias, false) ||
      !integer(o.attrs, o.tp, "m", s.m, true, 1) ||
      !integer(o.attrs, o.tp, "n", s.n, true, 1) ||
      !integer(o.attrs, o.tp, "k", s.k, true, 1) ||
      !integer(o.attrs, o.tp, "batch", s.batch, true, 1) ||
      !integer(o.attrs, o.tp, "a_batch_stride", s.aBatchStride) ||
      !integer(o.attrs, o.tp, "b_batch_stride", s.bBatchStride) ||
      !enumeration(o.attrs, o.tp, "epilogue", "cuBLASLt epilogue",
                   parseCublasEpilogue, s.epilogue))
    return false;
  if (cublasEpilogueHasBias(s.epilogue) != (s.bias != -1))
    return fail(o.ap + ".bias", "a bias operand exactly when the epilogue "
                                "adds one (bias, relu_bias, gelu_bias)");
  if (s.aBatchStride != 0 && s.aBatchStride != s.m * s.k)
    return fail(o.tp + ".a_batch_stride", "expected 0 or m * k");
  if (s.bBatchStride != 0 && s.bBatchStride != s.k * s.n)
    return fail(o.tp + ".b_batch_stride", "expected 0 or k * n");
  // cuBLASLt's sizes and leading dimensions are 32-bit on some paths, its
  // batch count always.
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  if (s.m > kMax || s.n > kMax || s.k > kMax || s.batch > kMax)
    return fail(o.tp, "m, n, k and batch must be below 2^31");
  out = std::move(s);
  return true;
}

bool Reader::cudnnConv(const Operands &o, Step &out) {
  CudnnConvStep s;
  if (!convolution(o, s, 1, 3) ||
      !integer(o.args, o.ap, "bias", s.bias, false) ||
      !activation(o, s.activation))
    return false;
  if (!shapesAgree(s))
    return fail(o.tp, "the shapes do not agree: src [N, C, S...], weights "
                      "[O, C / groups, K...], dst [N, O, (S + pads - "
                      "dilation * (K - 1) - 1) / stride + 1 ...], pads at "
                      "least 0");
  if (!cudnnRunsActivation(s.activation.kind))
    return fail(o.tp + ".activation",
                "cuDNN's pointwise modes run none, relu, sigmoid, tanh, "
                "gelu_erf, gelu_tanh and swish, not '" +
                    std::string(activationName(s.activation.kind)) + "'");
  // cuDNN's tensor dimensions and strides are int64_t, but its kernels
  // index with 32 bits.
  for (const Shape *shape : {&s.srcShape, &s.weightsShape, &s.dstShape})
    if (!fewerThan2To31(*shape))
      return fail(o.tp, "each tensor must have fewer than 2^31 elements");
  out = std::move(s);
  return true;
}

//===----------------------------------------------------------------------===//
// Devices, weights, entries
//===----------------------------------------------------------------------===//

bool Reader::device(const Json &d, const std::string &path, Device &out) {
  return enumeration(d, path, "kind", "device kind", parseDeviceKind,
                     out.kind) &&
         integer(d, path, "ordinal", out.ordinal) &&
         string(d, path, "triple", out.triple) &&
         string(d, path, "chip", out.chip) &&
         strings(d, path, "features", out.features) &&
         string(d, path, "image", out.image, false);
}

bool Reader::weights(const Json &w, Weights &m) {
  std::string storage;
  if (!string(w, "weights", "storage", storage))
    return false;
  if (storage == "none")
    return true;
  if (storage != "embedded" && storage != "external")
    return fail("weights.storage", "expected embedded, external or none");
  m.storage =
      storage == "embedded" ? WeightStorage::Embedded : WeightStorage::External;
  if (m.storage == WeightStorage::External &&
      !string(w, "weights", "file", m.file))
    return false;
  if (!integer(w, "weights", "size", m.size) ||
      !checksum(w, "weights", m.checksum))
    return false;
  const std::vector<Json> *ts = array(w, "weights", "tensors");
  if (!ts)
    return false;
  for (size_t i = 0; i < ts->size(); ++i) {
    const Json &t = (*ts)[i];
    std::string p = at("weights.tensors", i);
    WeightTensor s;
    if (!string(t, p, "name", s.name) || !string(t, p, "dtype", s.dtype) ||
        !ints(t, p, "shape", s.shape) || !checksum(t, p, s.checksum))
      return false;
    m.tensors.push_back(std::move(s));
  }
  return true;
}

/// The optional `source` (docs/Artifact.md "The embedded source"): which
/// graph the embedded source is, and the tensors of the weights only it
/// reads, each one of the weights' tensors that no buffer names.
bool Reader::source(const Json &j, Manifest &m) {
  Source s;
  if (!enumeration(j, "source", "graph", "source graph", parseSourceGraph,
                   s.graph) ||
      !strings(j, "source", "weights", s.weights))
    return false;
  for (size_t i = 0; i < s.weights.size(); ++i) {
    const std::string &name = s.weights[i];
    auto named = [&](const auto &w) { return w.name == name; };
    if (std::none_of(m.weights.tensors.begin(), m.weights.tensors.end(),
                     named))
      return fail(at("source.weights", i),
                  "'" + name + "' is not one of the weights' tensors");
    for (const Entry &e : m.entries)
      for (const Buffer &b : e.buffers)
        if (b.kind == BufferKind::Weight && b.weight == name)
          return fail(at("source.weights", i),
                      "'" + name + "' is a buffer's weight (only weights "
                      "that no buffer names are the source's own)");
  }
  m.source = std::move(s);
  return true;
}

bool Reader::program(const Json &p, const std::string &path,
                     int64_t numDevices, Program &out) {
  if (!integer(p, path, "device", out.device) ||
      !integer(p, path, "arena_bytes", out.arenaBytes))
    return false;
  if (!device(path + ".device", out.device, numDevices))
    return false;
  const std::vector<Json> *steps = array(p, path, "steps");
  if (!steps)
    return false;
  for (size_t i = 0; i < steps->size(); ++i) {
    out.steps.emplace_back();
    if (!step((*steps)[i], at(path + ".steps", i), out.steps.back()))
      return false;
  }
  return true;
}

bool Reader::buffer(const Json &b, const std::string &path, const Entry &e,
                    int64_t numDevices, Buffer &out) {
  if (!enumeration(b, path, "kind", "buffer kind", parseBufferKind,
                   out.kind) ||
      !integer(b, path, "device", out.device))
    return false;
  if (!device(path + ".device", out.device, numDevices))
    return false;
  switch (out.kind) {
  case BufferKind::Input:
  case BufferKind::Output: {
    bool input = out.kind == BufferKind::Input;
    const std::vector<TensorDesc> &ts = input ? e.inputs : e.outputs;
    if (!integer(b, path, "index", out.index))
      return false;
    if (out.index >= int64_t(ts.size()))
      return fail(path + ".index", "the entry has " +
                                       std::to_string(ts.size()) +
                                       (input ? " inputs" : " outputs"));
    out.bytes = ts[out.index].bytes;
    return true;
  }
  case BufferKind::Weight:
    return string(b, path, "name", out.weight);
  case BufferKind::Arena: {
    if (!integer(b, path, "offset", out.offset) ||
        !integer(b, path, "bytes", out.bytes) ||
        !boolean(b, path, "shared", out.shared))
      return false;
    auto program = std::find_if(
        e.programs.begin(), e.programs.end(),
        [&](const Program &p) { return p.device == out.device; });
    if (program == e.programs.end())
      return fail(path + ".device", "device " + std::to_string(out.device) +
                                        " runs no program of this entry");
    int64_t arena = program->arenaBytes;
    if (out.offset % 64 != 0)
      return fail(path + ".offset", "not a multiple of 64");
    if (out.offset > arena || out.bytes > arena - out.offset)
      return fail(path, "lies past the device's arena_bytes (" +
                            std::to_string(arena) + ")");
    return true;
  }
  }
  return fail(path + ".kind", "unknown buffer kind");
}

/// Every step's buffers exist and live on the program's device; control flow
/// only goes forward (every run ends) and lands on a step or just past the
/// last one.
bool Reader::checkSteps(const Entry &e, const std::string &path) {
  int64_t numBuffers = e.buffers.size();
  for (size_t p = 0; p < e.programs.size(); ++p) {
    const Program &program = e.programs[p];
    std::string pp = at(path + ".programs", p);
    int64_t numSteps = program.steps.size();
    for (int64_t i = 0; i < numSteps; ++i) {
      const Step &s = program.steps[i];
      std::string sp = at(pp + ".steps", i);
      std::optional<int64_t> target = controlTarget(s);
      if (target && (*target <= i || *target > numSteps))
        return fail(sp + ".attrs",
                    "goes to step " + std::to_string(*target) +
                        ", not after this step and within the " +
                        std::to_string(numSteps) + " steps");
      for (const Operand &o : operands(s)) {
        if (o.buffer < 0 || o.buffer >= numBuffers)
          return fail(sp + ".args", "buffer " + std::to_string(o.buffer) +
                                        " is out of range (the entry has " +
                                        std::to_string(numBuffers) + ")");
        if (e.buffers[o.buffer].device != program.device)
          return fail(sp + ".args." + std::string(o.role),
                      "buffer " + std::to_string(o.buffer) +
                          " is on device " +
                          std::to_string(e.buffers[o.buffer].device) +
                          "; the program runs on device " +
                          std::to_string(program.device));
      }
    }
  }
  return true;
}

/// Every step runs on its program's kind of device, and a device that runs
/// a generated GPU kernel has an image.
bool Reader::checkDevices(const Manifest &m) {
  for (size_t d = 0; d < m.devices.size(); ++d)
    if (m.devices[d].kind == DeviceKind::Cpu && !m.devices[d].image.empty())
      return fail(at("devices", d) + ".image",
                  "a cpu device's kernels are the artifact's own functions");
  for (size_t e = 0; e < m.entries.size(); ++e) {
    const Entry &entry = m.entries[e];
    for (size_t p = 0; p < entry.programs.size(); ++p) {
      const Program &program = entry.programs[p];
      const Device &device = m.devices[program.device];
      for (size_t i = 0; i < program.steps.size(); ++i) {
        const Step &s = program.steps[i];
        std::string sp = at(at(at("entries", e) + ".programs", p) + ".steps", i);
        if (!stepRunsOn(s.kind(), device.kind))
          return fail(sp, std::string(stepKindName(s.kind())) +
                              " does not run on a " +
                              std::string(deviceKindName(device.kind)) +
                              " device (the program's device " +
                              std::to_string(program.device) + ")");
        if (s.is<DispatchStep>() && device.image.empty())
          return fail(sp, "gpu.dispatch on device " +
                              std::to_string(program.device) +
                              ", which has no image");
      }
    }
  }
  return true;
}

bool Reader::entry(const Json &e, const std::string &path, int64_t numDevices,
                   Entry &out) {
  if (!string(e, path, "name", out.name) ||
      !tensors(e, path, "inputs", out.inputs) ||
      !tensors(e, path, "outputs", out.outputs) || !bounds(out, path))
    return false;
  const std::vector<Json> *programs = array(e, path, "programs");
  const std::vector<Json> *buffers = programs ? array(e, path, "buffers")
                                              : nullptr;
  if (!buffers)
    return false;
  if (programs->empty())
    return fail(path + ".programs", "expected at least one program");
  std::set<int64_t> devices;
  for (size_t i = 0; i < programs->size(); ++i) {
    std::string pp = at(path + ".programs", i);
    out.programs.emplace_back();
    if (!program((*programs)[i], pp, numDevices, out.programs.back()))
      return false;
    if (!devices.insert(out.programs.back().device).second)
      return fail(pp + ".device", "another program of the entry runs on "
                                  "this device");
  }
  for (size_t i = 0; i < buffers->size(); ++i) {
    out.buffers.emplace_back();
    if (!buffer((*buffers)[i], at(path + ".buffers", i), out, numDevices,
                out.buffers.back()))
      return false;
  }
  return checkSteps(out, path);
}

//===----------------------------------------------------------------------===//
// The world
//===----------------------------------------------------------------------===//

bool Reader::rank(const Json &r, const std::string &path, const Manifest &m,
                  Rank &out) {
  if (!ints(r, path, "devices", out.devices))
    return false;
  for (int64_t d : out.devices)
    if (!device(path + ".devices", d, m.devices.size()))
      return false;
  const std::vector<Json> *programs = array(r, path, "programs");
  const std::vector<Json> *channels =
      programs ? array(r, path, "channels") : nullptr;
  if (!channels)
    return false;
  if (programs->size() != m.entries.size())
    return fail(path + ".programs", "expected one list per entry (" +
                                        std::to_string(m.entries.size()) +
                                        ")");
  for (size_t e = 0; e < programs->size(); ++e) {
    std::string pp = at(path + ".programs", e);
    out.programs.emplace_back();
    if (!(*programs)[e].isArray())
      return fail(pp, "expected an array of program indices");
    for (const Json &p : (*programs)[e].array()) {
      const std::vector<Program> &ps = m.entries[e].programs;
      if (!p.isInteger() || p.integer() < 0 ||
          p.integer() >= int64_t(ps.size()))
        return fail(pp, "expected indices of entry " + std::to_string(e) +
                            "'s " + std::to_string(ps.size()) + " programs");
      int64_t device = ps[p.integer()].device;
      if (std::find(out.devices.begin(), out.devices.end(), device) ==
          out.devices.end())
        return fail(pp, "program " + std::to_string(p.integer()) +
                            " runs on device " + std::to_string(device) +
                            ", which is not one of this rank's");
      out.programs.back().push_back(p.integer());
    }
  }
  for (size_t c = 0; c < channels->size(); ++c) {
    std::string cp = at(path + ".channels", c);
    const Json &j = (*channels)[c];
    Channel ch;
    std::string direction;
    if (!string(j, cp, "name", ch.name) ||
        !string(j, cp, "direction", direction) ||
        !integer(j, cp, "peer", ch.peer) ||
        !integer(j, cp, "bytes", ch.bytes) || !string(j, cp, "dtype", ch.dtype))
      return false;
    if (direction != "send" && direction != "recv")
      return fail(cp + ".direction", "expected send or recv");
    ch.direction =
        direction == "send" ? ChannelDirection::Send : ChannelDirection::Recv;
    if (!dtypeBytes(ch.dtype))
      return fail(cp + ".dtype", "unknown dtype '" + ch.dtype + "'");
    out.channels.push_back(std::move(ch));
  }
  return step(r, path, m, out);
}

/// Each channel's peer is another rank that lists the other side under the
/// same name, with the same size and dtype.
bool Reader::channels(const World &world) {
  int64_t numRanks = world.ranks.size();
  for (int64_t r = 0; r < numRanks; ++r) {
    const std::vector<Channel> &cs = world.ranks[r].channels;
    for (size_t i = 0; i < cs.size(); ++i) {
      const Channel &c = cs[i];
      std::string cp = at(at("world.ranks", r) + ".channels", i);
      if (c.peer >= numRanks || c.peer == r)
        return fail(cp + ".peer", "rank " + std::to_string(c.peer) +
                                      " is not another rank of the " +
                                      std::to_string(numRanks));
      const std::vector<Channel> &other = world.ranks[c.peer].channels;
      bool matched = std::any_of(other.begin(), other.end(), [&](const auto &o) {
        return o.name == c.name && o.peer == r &&
               o.direction != c.direction && o.bytes == c.bytes &&
               o.dtype == c.dtype;
      });
      if (!matched)
        return fail(cp, "rank " + std::to_string(c.peer) +
                            " has no matching side of channel '" + c.name +
                            "' (the other direction, same bytes and dtype)");
    }
  }
  return true;
}

bool Reader::world(const Json &w, Manifest &m) {
  const std::vector<Json> *ranks = array(w, "world", "ranks");
  if (!ranks || !integer(w, "world", "micro_batches", m.world.microBatches,
                         /*required=*/false))
    return false;
  if (w.get("inputs") && !tensors(w, "world", "inputs", m.world.stepInputs))
    return false;
  if (w.get("optimizer") && !optimizer(*w.get("optimizer"), m.world.optimizer))
    return false;
  if (ranks->empty())
    return fail("world.ranks", "expected at least one rank");
  numRanks = int64_t(ranks->size());
  std::vector<int64_t> owner(m.devices.size(), -1);
  for (size_t r = 0; r < ranks->size(); ++r) {
    std::string rp = at("world.ranks", r);
    m.world.ranks.emplace_back();
    Rank &rank = m.world.ranks.back();
    if (!this->rank((*ranks)[r], rp, m, rank))
      return false;
    for (int64_t d : rank.devices) {
      if (owner[d] != -1)
        return fail(rp + ".devices", "device " + std::to_string(d) +
                                         " also belongs to rank " +
                                         std::to_string(owner[d]));
      owner[d] = int64_t(r);
    }
  }
  for (size_t d = 0; d < owner.size(); ++d)
    if (owner[d] == -1)
      return fail("world.ranks", "no rank drives device " + std::to_string(d));
  for (size_t e = 0; e < m.entries.size(); ++e)
    for (size_t p = 0; p < m.entries[e].programs.size(); ++p) {
      int64_t runners = 0;
      for (const Rank &r : m.world.ranks)
        runners += std::count(r.programs[e].begin(), r.programs[e].end(),
                              int64_t(p));
      if (runners != 1)
        return fail("world.ranks",
                    "program " + std::to_string(p) + " of entry " +
                        std::to_string(e) + " is run by " +
                        std::to_string(runners) + " ranks, not one");
    }
  if (!channels(m.world) || !results(w, m.world))
    return false;
  if (std::optional<std::string> why = checkWorldStep(m.world))
    return fail("world", *why);
  return true;
}

/// Each result is a value slot of its dtype and shape written on every
/// micro-batch by some rank's compute.
bool Reader::results(const Json &w, World &world) {
  if (w.get("results") && !tensors(w, "world", "results", world.results))
    return false;
  for (size_t p = 0; p < world.results.size(); ++p) {
    const TensorDesc &t = world.results[p];
    for (int64_t mb = 0; mb < world.microBatches; ++mb) {
      auto [r, s] = resultSlot(world, p, mb);
      if (r < 0)
        return fail(at("world.results", p),
                    "no rank computes slot '" + t.name + "' on micro-batch " +
                        std::to_string(mb));
      const Slot &slot = world.ranks[r].slots[s];
      if (slot.kind != SlotKind::Value || slot.dtype != t.dtype ||
          slot.shape != t.shape)
        return fail(at("world.results", p),
                    "slot '" + t.name + "' of rank " + std::to_string(r) +
                        " is not a value slot of the result's dtype and shape");
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The pipelined step
//===----------------------------------------------------------------------===//

bool Reader::slot(const Json &j, const std::string &path, const Manifest &m,
                  Slot &out) {
  if (!enumeration(j, path, "kind", "slot kind", parseSlotKind, out.kind) ||
      !string(j, path, "name", out.name))
    return false;
  TensorDesc t;
  if (!tensor(j, path, t))
    return false;
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.bytes = t.bytes;
  if ((slotSummed(out.kind) || out.kind == SlotKind::State) &&
      out.dtype != "f32")
    return fail(path + ".dtype", "a summed or state slot is f32");
  switch (out.kind) {
  case SlotKind::Input: {
    if (!integer(j, path, "index", out.index))
      return false;
    const std::vector<TensorDesc> &in = m.world.stepInputs;
    if (out.index >= int64_t(in.size()))
      return fail(path + ".index", "the step has " +
                                       std::to_string(in.size()) + " inputs");
    if (in[out.index].dtype != out.dtype || in[out.index].shape != out.shape)
      return fail(path, "is not the dtype and shape of step input " +
                            std::to_string(out.index));
    return true;
  }
  case SlotKind::Weight:
  case SlotKind::Gradient:
  case SlotKind::State: {
    if (!string(j, path, "tensor", out.tensor))
      return false;
    const std::vector<WeightTensor> &ws = m.weights.tensors;
    auto it = std::find_if(ws.begin(), ws.end(), [&](const WeightTensor &w) {
      return w.name == out.tensor;
    });
    if (it == ws.end())
      return fail(path + ".tensor", "no weight '" + out.tensor + "'");
    if (it->shape != out.shape)
      return fail(path + ".shape", "is not the shape of weight '" +
                                       out.tensor + "'");
    return true;
  }
  case SlotKind::Value:
  case SlotKind::Sum:
    return true;
  }
  return fail(path + ".kind", "unknown slot kind");
}

bool Reader::slotRef(const Json &obj, const std::string &path,
                     const std::string &key, const Rank &rank, int64_t &out) {
  if (!integer(obj, path, key, out))
    return false;
  if (out >= int64_t(rank.slots.size()))
    return fail(path + "." + key, "slot " + std::to_string(out) +
                                      " is out of range (the rank has " +
                                      std::to_string(rank.slots.size()) + ")");
  return true;
}

bool Reader::microBatch(const Json &obj, const std::string &path,
                        const World &w, int64_t &out) {
  if (!integer(obj, path, "micro_batch", out))
    return false;
  if (out >= w.microBatches)
    return fail(path + ".micro_batch",
                "out of range (the step has " +
                    std::to_string(w.microBatches) + " micro-batches)");
  return true;
}

bool Reader::fits(const std::string &path, const Slot &slot,
                  const std::string &dtype, int64_t bytes) {
  if (slot.dtype == dtype && slot.bytes == bytes)
    return true;
  return fail(path, "slot '" + slot.name + "' (" +
                        std::to_string(slot.bytes) + " bytes " + slot.dtype +
                        ") does not hold " + std::to_string(bytes) +
                        " bytes " + dtype);
}

bool Reader::compute(const Json &j, const std::string &path,
                     const Manifest &m, const Rank &rank, ComputeAction &out) {
  if (!integer(j, path, "entry", out.entry) ||
      !microBatch(j, path, m.world, out.microBatch))
    return false;
  if (out.entry >= int64_t(m.entries.size()) ||
      rank.programs[out.entry].empty())
    return fail(path + ".entry", "entry " + std::to_string(out.entry) +
                                     " has no program on this rank");
  const Entry &e = m.entries[out.entry];
  const std::vector<Json> *ins = array(j, path, "inputs");
  const std::vector<Json> *outs = ins ? array(j, path, "outputs") : nullptr;
  if (!outs)
    return false;
  if (ins->size() != e.inputs.size() || outs->size() != e.outputs.size())
    return fail(path, "binds " + std::to_string(ins->size()) + " inputs and " +
                          std::to_string(outs->size()) + " outputs; entry '" +
                          e.name + "' has " + std::to_string(e.inputs.size()) +
                          " and " + std::to_string(e.outputs.size()));
  auto bind = [&](const std::vector<Json> &list, const std::string &key,
                  const std::vector<TensorDesc> &tensors, bool output,
                  std::vector<int64_t> &slots) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string ip = at(path + "." + key, i);
      int64_t min = output ? -1 : 0;
      if (!list[i].isInteger() || list[i].integer() < min ||
          list[i].integer() >= int64_t(rank.slots.size()))
        return fail(ip, output ? "expected a slot of the rank or -1"
                               : "expected a slot of the rank");
      slots.push_back(list[i].integer());
      if (slots.back() < 0)
        continue;
      const Slot &s = rank.slots[slots.back()];
      if (output && s.kind != SlotKind::Value)
        return fail(ip, "an output is written to a value slot");
      if (!fits(ip, s, tensors[i].dtype, tensors[i].bytes))
        return false;
    }
    return true;
  };
  return bind(*ins, "inputs", e.inputs, false, out.inputs) &&
         bind(*outs, "outputs", e.outputs, true, out.outputs);
}

bool Reader::exchange(const Json &j, const std::string &path, const World &w,
                      const Rank &rank, ExchangeAction &out) {
  const std::vector<Json> *messages = array(j, path, "messages");
  if (!messages)
    return false;
  if (messages->empty())
    return fail(path + ".messages", "expected at least one message");
  for (size_t i = 0; i < messages->size(); ++i) {
    std::string mp = at(path + ".messages", i);
    ExchangeMessage msg;
    if (!integer((*messages)[i], mp, "channel", msg.channel) ||
        !slotRef((*messages)[i], mp, "slot", rank, msg.slot) ||
        !microBatch((*messages)[i], mp, w, msg.microBatch))
      return false;
    if (msg.channel >= int64_t(rank.channels.size()))
      return fail(mp + ".channel", "out of range (the rank has " +
                                       std::to_string(rank.channels.size()) +
                                       " channels)");
    const Channel &c = rank.channels[msg.channel];
    const Slot &s = rank.slots[msg.slot];
    if (c.direction == ChannelDirection::Recv && s.kind != SlotKind::Value)
      return fail(mp + ".slot", "a receive writes a value slot");
    if (!fits(mp + ".slot", s, c.dtype, c.bytes))
      return false;
    out.messages.push_back(msg);
  }
  return true;
}

bool Reader::accumulate(const Json &j, const std::string &path,
                        const World &w, const Rank &rank,
                        AccumulateAction &out) {
  if (!slotRef(j, path, "src", rank, out.src) ||
      !slotRef(j, path, "dst", rank, out.dst) ||
      !microBatch(j, path, w, out.microBatch))
    return false;
  const Slot &src = rank.slots[out.src], &dst = rank.slots[out.dst];
  if (!slotSummed(dst.kind))
    return fail(path + ".dst", "accumulates into a sum or gradient slot");
  return fits(path + ".src", src, dst.dtype, dst.bytes);
}

/// A group of at least two ranks, ascending, this one among them; its
/// slots distinct gradient slots.
bool Reader::allReduce(const Json &j, const std::string &path, int64_t self,
                       const Rank &rank, AllReduceAction &out) {
  if (!ints(j, path, "ranks", out.ranks) || !ints(j, path, "slots", out.slots))
    return false;
  if (out.ranks.size() < 2 ||
      !std::is_sorted(out.ranks.begin(), out.ranks.end()) ||
      std::adjacent_find(out.ranks.begin(), out.ranks.end()) !=
          out.ranks.end() ||
      out.ranks.front() < 0 || out.ranks.back() >= numRanks ||
      !std::binary_search(out.ranks.begin(), out.ranks.end(), self))
    return fail(path + ".ranks",
                "expected at least two ranks of the " +
                    std::to_string(numRanks) +
                    ", ascending, this rank (" + std::to_string(self) +
                    ") among them");
  if (out.slots.empty())
    return fail(path + ".slots", "expected at least one slot");
  for (size_t i = 0; i < out.slots.size(); ++i) {
    std::string sp = at(path + ".slots", i);
    if (out.slots[i] < 0 || out.slots[i] >= int64_t(rank.slots.size()))
      return fail(sp, "expected a slot of the rank");
    if (rank.slots[out.slots[i]].kind != SlotKind::Gradient)
      return fail(sp, "an all-reduce sums gradient slots");
    if (std::count(out.slots.begin(), out.slots.end(), out.slots[i]) > 1)
      return fail(sp, "slot " + std::to_string(out.slots[i]) +
                          " appears twice");
  }
  return true;
}

/// The world's optimizer: its kind and finite hyper-parameters.
bool Reader::optimizer(const Json &o, Optimizer &out) {
  const std::string path = "world.optimizer";
  std::string kind;
  if (!string(o, path, "kind", kind) || !number(o, path, "lr", out.lr) ||
      !number(o, path, "momentum", out.momentum) ||
      !number(o, path, "beta1", out.beta1) ||
      !number(o, path, "beta2", out.beta2) ||
      !number(o, path, "eps", out.eps) ||
      !number(o, path, "weight_decay", out.weightDecay))
    return false;
  if (kind == "sgd")
    out.kind = OptimizerKind::Sgd;
  else if (kind == "adam")
    out.kind = OptimizerKind::Adam;
  else
    return fail(path + ".kind", "expected sgd or adam, not '" + kind + "'");
  return true;
}

/// Weight slots, the gradient slots of their tensors, and the optimizer's
/// state slots of each, parameter-major.
bool Reader::update(const Json &j, const std::string &path, const World &w,
                    const Rank &rank, UpdateAction &out) {
  if (w.optimizer.kind == OptimizerKind::None)
    return fail(path, "an update needs the world's optimizer");
  if (!ints(j, path, "params", out.params) ||
      !ints(j, path, "gradients", out.gradients) ||
      !ints(j, path, "states", out.states))
    return false;
  int64_t perParam = w.optimizer.stateTensors();
  if (out.params.empty() || out.gradients.size() != out.params.size() ||
      int64_t(out.states.size()) != perParam * int64_t(out.params.size()))
    return fail(path, "expected parameters, a gradient each and " +
                          std::to_string(perParam) + " state slot(s) each (" +
                          std::string(w.optimizer.name()) + ")");
  auto check = [&](const char *key, int64_t s, SlotKind kind,
                   const std::string &tensor) {
    if (s < 0 || s >= int64_t(rank.slots.size()) ||
        rank.slots[s].kind != kind ||
        (!tensor.empty() && rank.slots[s].tensor != tensor))
      return fail(path + "." + key,
                  "slot " + std::to_string(s) + " is not a " +
                      std::string(slotKindName(kind)) + " slot" +
                      (tensor.empty() ? "" : " of '" + tensor + "'"));
    return true;
  };
  for (size_t i = 0; i < out.params.size(); ++i) {
    if (!check("params", out.params[i], SlotKind::Weight, ""))
      return false;
    const std::string &t = rank.slots[out.params[i]].tensor;
    if (!check("gradients", out.gradients[i], SlotKind::Gradient, t))
      return false;
    for (int64_t k = 0; k < perParam; ++k)
      if (!check("states", out.states[i * perParam + k], SlotKind::State, t))
        return false;
  }
  return true;
}

bool Reader::action(const Json &j, const std::string &path, const Manifest &m,
                    const Rank &rank, Action &out) {
  ActionKind kind = ActionKind::Compute;
  if (!enumeration(j, path, "kind", "action kind", parseActionKind, kind))
    return false;
  switch (kind) {
  case ActionKind::Compute: {
    ComputeAction a;
    if (!compute(j, path, m, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Exchange: {
    ExchangeAction a;
    if (!exchange(j, path, m.world, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Accumulate: {
    AccumulateAction a;
    if (!accumulate(j, path, m.world, rank, a))
      return false;
    out.record = a;
    return true;
  }
  case ActionKind::AllReduce: {
    AllReduceAction a;
    if (!allReduce(j, path, int64_t(m.world.ranks.size()) - 1, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Update: {
    UpdateAction a;
    if (!update(j, path, m.world, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  }
  return fail(path + ".kind", "unknown action kind");
}

/// A rank's slots and actions (both absent: no pipelined step).
bool Reader::step(const Json &r, const std::string &path, const Manifest &m,
                  Rank &out) {
  if (!r.get("slots") && !r.get("actions"))
    return true;
  const std::vector<Json> *slots = array(r, path, "slots");
  const std::vector<Json> *actions = slots ? array(r, path, "actions")
                                           : nullptr;
  if (!actions)
    return false;
  std::set<std::string> names;
  for (size_t i = 0; i < slots->size(); ++i) {
    std::string sp = at(path + ".slots", i);
    out.slots.emplace_back();
    if (!slot((*slots)[i], sp, m, out.slots.back()))
      return false;
    if (!names.insert(out.slots.back().name).second)
      return fail(sp + ".name", "another slot of the rank is named '" +
                                    out.slots.back().name + "'");
  }
  for (size_t i = 0; i < actions->size(); ++i) {
    out.actions.emplace_back();
    if (!action((*actions)[i], at(path + ".actions", i), m, out,
                out.actions.back()))
      return false;
  }
  return true;
}

} // namespace

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
  if (version != kManifestVersion && version != kBoundedManifestVersion)
    return ReadError{ReadError::Kind::Version,
                     "manifest: format version " + std::to_string(version) +
                         "; this runtime reads versions " +
                         std::to_string(kManifestVersion) + " and " +
                         std::to_string(kBoundedManifestVersion) +
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
