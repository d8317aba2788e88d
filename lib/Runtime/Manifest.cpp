//===- Manifest.cpp - Checking a manifest against its weights -------------===//
//
// Part of Loom. See Model.h and docs/Artifact.md. The manifest is read by
// lib/Artifact's one reader (every failure names the field, as a path:
// entries[0].programs[0].steps[3].args.src); what needs the weights is
// checked here: each step's sizes against its buffers, and the weights
// themselves (sizes, dtypes, shapes, checksums).
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "loom/Artifact/Json.h"
#include "loom/Runtime/Checksum.h"
#include "loom/Support/DynamicAlgorithms.h"

#include <cstring>
#include <future>
#include <initializer_list>
#include <sys/mman.h>
#include <tuple>
#include <unistd.h>

using namespace loom;
using namespace loom::rt;
using namespace loom::artifact;

Error loom::rt::parseManifest(std::string_view text, Manifest &m) {
  std::optional<ReadError> error = readManifest(text, m);
  if (!error)
    return Error::ok();
  switch (error->kind) {
  case ReadError::Kind::Format:
    return makeError(LOOM_ERROR_FORMAT, error->message);
  case ReadError::Kind::Version:
    return makeError(LOOM_ERROR_VERSION, error->message);
  }
  return makeError(LOOM_ERROR_FORMAT, error->message);
}

//===----------------------------------------------------------------------===//
// Step sizes
//===----------------------------------------------------------------------===//

namespace {

/// Checks one step's reads and writes against its buffers' sizes.
class SizeCheck {
public:
  SizeCheck(const std::vector<int64_t> &bytes, std::string where)
      : bytes(bytes), where(std::move(where)) {}

  /// Buffer \p id (-1: absent) holds at least \p n bytes.
  Error need(int64_t id, int64_t n, const char *what) const {
    if (id != -1 && bytes[id] < n)
      return makeError(LOOM_ERROR_FORMAT,
                       where + ": " + what + " needs " + std::to_string(n) +
                           " bytes, buffer " + std::to_string(id) + " has " +
                           std::to_string(bytes[id]));
    return Error::ok();
  }
  Error step(const Step &s) const;

private:
  /// Every (buffer, bytes, what) of \p needs holds, the first failure else.
  Error needAll(
      std::initializer_list<std::tuple<int64_t, int64_t, const char *>> needs)
      const {
    for (auto [id, n, what] : needs)
      if (Error err = need(id, n, what))
        return err;
    return Error::ok();
  }
  Error topK(const TopKStep &s) const {
    int64_t elem = dtypeBytes(s.dtype), lines = s.outer * s.inner;
    return needAll({{s.src, elem * lines * s.dim, "src"},
                    {s.valid, 8, "valid"},
                    {s.values, elem * lines * s.k, "values"},
                    {s.indices, 8 * lines * s.k, "indices"},
                    {s.count, 8, "count"}});
  }
  Error nonMaxSuppression(const NonMaxSuppressionStep &s) const {
    int64_t bound = dynamic::nmsBound(s.batches, s.classes, s.numBoxes,
                                      s.maxOutputPerClass);
    return needAll({{s.boxes, 4 * s.batches * s.numBoxes * 4, "boxes"},
                    {s.scores, 4 * s.batches * s.classes * s.numBoxes, "scores"},
                    {s.valid, 8, "valid"},
                    {s.selected, 8 * bound * 3, "selected"},
                    {s.count, 8, "count"}});
  }
  Error updateSlice(const UpdateSliceStep &s) const {
    int64_t elem = dtypeBytes(s.dtype);
    return needAll({{s.base, elem * s.outer * s.dim * s.inner, "base"},
                    {s.update, elem * s.outer * s.rows * s.inner, "update"},
                    {s.offsets, 8 * s.offsetCount, "offsets"},
                    {s.dst, elem * s.outer * s.dim * s.inner, "dst"}});
  }
  Error nonZero(const NonZeroStep &s) const {
    int64_t n = 1;
    for (int64_t d : s.shape)
      n *= d;
    return needAll({{s.src, dtypeBytes(s.dtype) * n, "src"},
                    {s.indices, 8 * int64_t(s.shape.size()) * n, "indices"},
                    {s.count, 8, "count"}});
  }

  Error attention(const AttentionStep &s) const {
    int64_t kv = 4 * s.batch * s.kvHeads * s.kvLen * s.headDim;
    int64_t q = 4 * s.batch * s.qHeads * s.qLen * s.headDim;
    return needAll({{s.q, q, "q"},
                    {s.k, kv, "k"},
                    {s.v, kv, "v"},
                    {s.length, 8 * (s.lengthPerBatch ? s.batch : 1), "length"},
                    {s.dst, q, "dst"},
                    {s.shard, 8, "shard"},
                    {s.lse, q / s.headDim, "lse"}});
  }

  Error convolution(const ConvolutionOperands &c, int64_t bias,
                    int64_t sum) const {
    Error err;
    if ((err = need(c.src, f32Bytes(c.srcShape), "src")) ||
        (err = need(c.weights, f32Bytes(c.weightsShape), "weights")) ||
        (err = need(c.dst, f32Bytes(c.dstShape), "dst")) ||
        (err = need(sum, f32Bytes(c.dstShape), "sum")))
      return err;
    return need(bias, 4 * c.dstShape[1], "bias");
  }

  const std::vector<int64_t> &bytes;
  std::string where;
};

Error SizeCheck::step(const Step &step) const {
  Error err;
  switch (step.kind()) {
  case StepKind::Conv2d: {
    const auto &s = *step.getIf<Conv2dStep>();
    return convolution(s, s.bias, s.sum);
  }
  case StepKind::Conv2dFilterGrad:
    return convolution(*step.getIf<Conv2dFilterGradStep>(), -1, -1);
  case StepKind::Matmul: {
    const auto &s = *step.getIf<MatmulStep>();
    if (s.views) {
      // Each view's last element + 1, in bytes.
      auto extent = [](const StridedOperand &v) {
        int64_t last = v.offset;
        for (size_t i = 0; i < v.dims.size(); ++i) {
          if (v.dims[i] == 0)
            return int64_t(0);
          last += (v.dims[i] - 1) * v.strides[i];
        }
        return 4 * (last + 1);
      };
      const auto &[src, weights, dst] = *s.views;
      if ((err = need(s.src, extent(src), "src")) ||
          (err = need(s.weights, extent(weights), "weights")) ||
          (err = need(s.dst, extent(dst), "dst")))
        return err;
    }
    if ((err = need(s.src, s.views ? 0 : f32Bytes(s.srcShape), "src")) ||
        (err = need(s.weights, s.views ? 0 : f32Bytes(s.weightsShape),
                    "weights")) ||
        (err = need(s.dst, s.views ? 0 : f32Bytes(s.dstShape), "dst")) ||
        (err = need(s.sum, f32Bytes(s.dstShape), "sum")))
      return err;
    return need(s.bias, 4 * s.dstShape.back(), "bias");
  }
  case StepKind::Pool2d: {
    const auto &s = *step.getIf<Pool2dStep>();
    if ((err = need(s.src, f32Bytes(s.srcShape), "src")))
      return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  }
  case StepKind::Binary: {
    const auto &s = *step.getIf<BinaryStep>();
    if ((err = need(s.src0, f32Bytes(s.dstShape), "src0")) ||
        (err = need(s.src1, f32Bytes(s.src1Shape), "src1")) ||
        (s.shift != -1 &&
         (err = need(s.shift, f32Bytes(s.shiftShape), "shift"))))
      return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  }
  case StepKind::Concat: {
    const auto &s = *step.getIf<ConcatStep>();
    int64_t plane = s.dstShape[0] * s.dstShape[2] * s.dstShape[3];
    for (size_t i = 0; i < s.srcs.size(); ++i)
      if ((err = need(s.srcs[i], 4 * plane * s.srcChannels[i], "a source")))
        return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  }
  case StepKind::Sgemm: {
    const auto &s = *step.getIf<SgemmStep>();
    if ((err = need(s.a, f32Bytes(s.aShape) * s.batch, "a")) ||
        (err = need(s.b, f32Bytes(s.bShape), "b")))
      return err;
    return need(s.c, 4 * s.aShape[0] * s.bShape[1] * s.batch, "c");
  }
  case StepKind::Copy: {
    const auto &s = *step.getIf<CopyStep>();
    if (bytes[s.src] != bytes[s.dst])
      return makeError(LOOM_ERROR_FORMAT,
                       where + ": a copy between buffers of different sizes");
    return Error::ok();
  }
  case StepKind::Branch:
    return need(step.getIf<BranchStep>()->cond, 1, "the condition");
  case StepKind::Kernel:
  case StepKind::Jump:
    return Error::ok();
  case StepKind::Dispatch:
    // A kernel's parameters are bare pointers: what it reads is the
    // compiler's contract, as for a host kernel.
    return Error::ok();
  case StepKind::CublasMatmul: {
    const auto &s = *step.getIf<CublasMatmulStep>();
    int64_t in = dtypeBytes(s.operandType), out = dtypeBytes(s.resultType);
    auto matrices = [&](int64_t stride, int64_t one) {
      return in * (stride * (s.batch - 1) + one);
    };
    if ((err = need(s.a, matrices(s.aBatchStride, s.m * s.k), "a")) ||
        (err = need(s.b, matrices(s.bBatchStride, s.k * s.n), "b")) ||
        (err = need(s.d, out * s.batch * s.m * s.n, "d")))
      return err;
    return need(s.bias, out * s.n, "bias");
  }
  case StepKind::CudnnConv: {
    const auto &s = *step.getIf<CudnnConvStep>();
    int64_t in = dtypeBytes(s.operandType), out = dtypeBytes(s.resultType);
    auto bytes = [](const std::vector<int64_t> &shape, int64_t elem) {
      return f32Bytes(shape) / 4 * elem;
    };
    if ((err = need(s.src, bytes(s.srcShape, in), "src")) ||
        (err = need(s.weights, bytes(s.weightsShape, in), "weights")) ||
        (err = need(s.dst, bytes(s.dstShape, out), "dst")))
      return err;
    return need(s.bias, in * s.dstShape[1], "bias");
  }
  case StepKind::TopK:
    return topK(*step.getIf<TopKStep>());
  case StepKind::NonMaxSuppression:
    return nonMaxSuppression(*step.getIf<NonMaxSuppressionStep>());
  case StepKind::NonZero:
    return nonZero(*step.getIf<NonZeroStep>());
  case StepKind::UpdateSlice:
    return updateSlice(*step.getIf<UpdateSliceStep>());
  case StepKind::Attention:
    return attention(*step.getIf<AttentionStep>());
  case StepKind::WorldRank:
    return need(step.getIf<WorldRankStep>()->dst, 8, "dst");
  case StepKind::AllGather: {
    const auto &s = *step.getIf<AllGatherStep>();
    Error err;
    if ((err = need(s.src, s.bytes, "src")))
      return err;
    return need(s.dst, s.bytes * s.group.ranks, "dst");
  }
  }
  return makeError(LOOM_ERROR_FORMAT, where + ": unknown step kind");
}

} // namespace

Error loom::rt::checkStepSizes(const Entry &e,
                               const std::vector<int64_t> &bufferBytes) {
  for (size_t p = 0; p < e.programs.size(); ++p)
    for (size_t i = 0; i < e.programs[p].steps.size(); ++i) {
      SizeCheck check(bufferBytes, "manifest: entry '" + e.name +
                                       "' program " + std::to_string(p) +
                                       " step " + std::to_string(i));
      if (Error err = check.step(e.programs[p].steps[i]))
        return err;
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

} // namespace

namespace {

/// The tensors of the safetensors file \p data (\p size bytes) that the
/// manifest \p m lists, each checked against its dtype, shape and checksum,
/// into \p views.
/// loom_checksum64 of the \p size bytes at \p data in pieces, each
/// piece's pages given back once hashed (releasePages).
uint64_t checksumReleasing(const uint8_t *data, uint64_t size) {
  constexpr uint64_t kPiece = uint64_t(32) << 20; // whole words
  uint64_t h = LOOM_CHECKSUM_START, at = 0;
  for (; size - at >= kPiece; at += kPiece) {
    h = loom_checksum_words(h, data + at, kPiece / 8);
    releasePages(data + at, kPiece);
  }
  uint64_t words = (size - at) / 8;
  h = loom_checksum_words(h, data + at, words);
  uint64_t rest = at + words * 8;
  h = loom_checksum_end(h, data + rest, size - rest, size);
  releasePages(data + at, size - at);
  return h;
}

Error bindTensors(const uint8_t *data, uint64_t size, const Weights &m,
                  std::map<std::string, WeightView> &views) {
  auto bad = [](const std::string &why) {
    return makeError(LOOM_ERROR_FORMAT, "weights: " + why);
  };
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
  for (const WeightTensor &w : m.tensors) {
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
    releasePages(body + begin, uint64_t(end - begin));
    if (c != w.checksum)
      return makeError(LOOM_ERROR_CHECKSUM,
                       "weights: tensor '" + w.name + "' has checksum " +
                           artifact::checksumHex(c) + ", expected " +
                           artifact::checksumHex(w.checksum));
    views[w.name] = {body + begin, end - begin};
  }
  return Error::ok();
}

} // namespace

void loom::rt::releasePages(const void *data, uint64_t bytes) {
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (uintptr_t(data) + page - 1) / page * page;
  uintptr_t end = (uintptr_t(data) + bytes) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

Error loom::rt::bindWeights(const uint8_t *data, uint64_t size,
                            const Weights &m,
                            std::map<std::string, WeightView> &views) {
  if (int64_t(size) != m.size)
    return makeError(LOOM_ERROR_CHECKSUM,
                     "weights: " + std::to_string(size) +
                         " bytes, but the artifact was compiled with " +
                         std::to_string(m.size));
  // The whole file's checksum beside the tensors' checks. Both give back
  // the pages they hashed: checking the weights does not keep them
  // resident (the entries prepared at load touch what they read; a
  // tensor-parallel rank's own only).
  std::future<uint64_t> whole = std::async(
      size >= kChecksumThreadBytes ? std::launch::async : std::launch::deferred,
      [=] { return checksumReleasing(data, size); });
  std::map<std::string, WeightView> bound;
  Error tensors = bindTensors(data, size, m, bound);
  // The whole file's checksum is the first error, as when it came first.
  uint64_t sum = whole.get();
  if (sum != m.checksum)
    return makeError(LOOM_ERROR_CHECKSUM,
                     "weights: checksum " + artifact::checksumHex(sum) +
                         ", expected " + artifact::checksumHex(m.checksum) +
                         ": not the weights the artifact was compiled with");
  if (tensors)
    return tensors;
  for (auto &[name, view] : bound)
    views[name] = view;
  return Error::ok();
}
