//===- ReadSteps.cpp - A program's steps, one reader per kind -------------===//
//
// Part of Loom. See Reader.h. Reader::step reads a kernel step or the
// args and attrs of a library step; Reader::library switches over every
// StepKind (no default: a kind added to StepKinds.def without a reader
// does not build) to the kind's reader, which checks its operands and
// shapes.
//
//===----------------------------------------------------------------------===//

#include "Reader.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

using namespace loom;
using namespace loom::artifact;
using namespace loom::artifact::detail;

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

} // namespace

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
  case StepKind::UpdateSlice:
    return updateSlice(o, out);
  case StepKind::Attention:
    return attention(o, out);
  case StepKind::WorldRank:
    return worldRank(o, out);
  case StepKind::AllGather:
    return allGather(o, out);
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

bool Reader::updateSlice(const Operands &o, Step &out) {
  UpdateSliceStep s;
  if (!integer(o.args, o.ap, "base", s.base) ||
      !integer(o.args, o.ap, "update", s.update) ||
      !integer(o.args, o.ap, "offsets", s.offsets) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !string(o.attrs, o.tp, "dtype", s.dtype) ||
      !integer(o.attrs, o.tp, "outer", s.outer, true, 1) ||
      !integer(o.attrs, o.tp, "dim", s.dim) ||
      !integer(o.attrs, o.tp, "rows", s.rows) ||
      !integer(o.attrs, o.tp, "inner", s.inner, true, 1) ||
      !integer(o.attrs, o.tp, "offset_count", s.offsetCount, true, 1))
    return false;
  if (!dtypeBytes(s.dtype))
    return fail(o.tp + ".dtype", "unknown dtype '" + s.dtype + "'");
  if (s.rows > s.dim)
    return fail(o.tp + ".rows", "the update's " + std::to_string(s.rows) +
                                    " rows exceed dim = " +
                                    std::to_string(s.dim));
  if (s.outer % s.offsetCount != 0)
    return fail(o.tp + ".offset_count",
                "must divide outer = " + std::to_string(s.outer));
  if (!fewerThan2To31({s.outer, s.dim, s.inner}))
    return fail(o.tp, "the base must have fewer than 2^31 elements");
  if (s.update == s.dst || s.offsets == s.dst)
    return fail(o.ap + ".dst", "must not be the update or the offsets");
  out = std::move(s);
  return true;
}

bool Reader::attention(const Operands &o, Step &out) {
  AttentionStep s;
  if (!integer(o.args, o.ap, "q", s.q) || !integer(o.args, o.ap, "k", s.k) ||
      !integer(o.args, o.ap, "v", s.v) ||
      !integer(o.args, o.ap, "length", s.length, false) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !integer(o.args, o.ap, "shard", s.shard, false) ||
      !integer(o.args, o.ap, "lse", s.lse, false) ||
      !integer(o.attrs, o.tp, "shards", s.shards, false, 1) ||
      !integer(o.attrs, o.tp, "batch", s.batch, true, 1) ||
      !integer(o.attrs, o.tp, "q_heads", s.qHeads, true, 1) ||
      !integer(o.attrs, o.tp, "kv_heads", s.kvHeads, true, 1) ||
      !integer(o.attrs, o.tp, "q_len", s.qLen, true, 1) ||
      !integer(o.attrs, o.tp, "kv_len", s.kvLen, true, 1) ||
      !integer(o.attrs, o.tp, "head_dim", s.headDim, true, 1) ||
      !boolean(o.attrs, o.tp, "length_per_batch", s.lengthPerBatch) ||
      !number(o.attrs, o.tp, "scale", s.scale) ||
      !boolean(o.attrs, o.tp, "causal", s.causal))
    return false;
  if (s.qHeads % s.kvHeads != 0)
    return fail(o.tp + ".q_heads", std::to_string(s.qHeads) +
                                       " query heads are not a multiple of " +
                                       std::to_string(s.kvHeads) +
                                       " key/value heads");
  if (s.causal && s.qLen > s.kvLen && s.shards == 1)
    return fail(o.tp + ".q_len", "a causal attention of " +
                                     std::to_string(s.qLen) +
                                     " queries over " + std::to_string(s.kvLen) +
                                     " key positions");
  if (!fewerThan2To31({s.batch, s.qHeads, s.qLen, s.headDim}) ||
      !fewerThan2To31({s.batch, s.kvHeads, s.kvLen, s.headDim}))
    return fail(o.tp, "q, k and v must have fewer than 2^31 elements");
  if ((s.shards > 1 || s.lse != -1) && (s.shard == -1 || s.length == -1))
    return fail(o.ap, "a shard's attention (shards or lse) needs its shard "
                      "and length");
  out = std::move(s);
  return true;
}

bool Reader::worldGroup(const Operands &o, WorldGroup &out) {
  if (!integer(o.attrs, o.tp, "ranks", out.ranks, true, 1) ||
      !integer(o.attrs, o.tp, "stride", out.stride, false, 1))
    return false;
  out.world = out.ranks * out.stride;
  if (!integer(o.attrs, o.tp, "world", out.world, false, 1))
    return false;
  if (out.world % (out.ranks * out.stride))
    return fail(o.tp + ".world", "must be a multiple of ranks * stride");
  return true;
}

bool Reader::worldRank(const Operands &o, Step &out) {
  WorldRankStep s;
  if (!integer(o.args, o.ap, "dst", s.dst) || !worldGroup(o, s.group))
    return false;
  out = std::move(s);
  return true;
}

bool Reader::allGather(const Operands &o, Step &out) {
  AllGatherStep s;
  if (!integer(o.args, o.ap, "src", s.src) ||
      !integer(o.args, o.ap, "dst", s.dst) ||
      !integer(o.attrs, o.tp, "bytes", s.bytes) || !worldGroup(o, s.group) ||
      !integer(o.attrs, o.tp, "root", s.root, false, -1))
    return false;
  if (s.src == s.dst)
    return fail(o.ap + ".dst", "must not be the src");
  if (s.root >= s.group.ranks)
    return fail(o.tp + ".root", "must be a rank of the group (below ranks)");
  out = std::move(s);
  return true;
}

bool Reader::elementTypes(const Operands &o, LibraryElementTypes &out) {
  if (!string(o.attrs, o.tp, "operand_type", out.operandType, false) ||
      !string(o.attrs, o.tp, "result_type", out.resultType, false))
    return false;
  bool narrow = out.operandType == "bf16" || out.operandType == "f16";
  if (out.operandType == "tf32") {
    if (out.resultType != "f32")
      return fail(o.tp + ".result_type",
                  "'" + out.resultType + "' is not f32 (tf32 operands)");
    return true;
  }
  if (out.operandType != "f32" && !narrow)
    return fail(o.tp + ".operand_type",
                "'" + out.operandType + "' is not f32, bf16, f16 or tf32");
  if (out.resultType != "f32" && out.resultType != out.operandType)
    return fail(o.tp + ".result_type",
                "'" + out.resultType + "' is neither f32 nor the operand type");
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
  if (!elementTypes(o, s))
    return false;
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
      !activation(o, s.activation) || !elementTypes(o, s))
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
