//===- CudnnEncoding.cpp - A cudnn.conv step as cuDNN's graph -------------===//
//
// Part of Loom. See CudnnEncoding.h.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CudnnEncoding.h"

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

std::optional<int32_t> cudnn::activationMode(Activation a) {
  switch (a) {
  case Activation::Relu:
    return kReluFwd;
  case Activation::Sigmoid:
    return kSigmoidFwd;
  case Activation::Tanh:
    return kTanhFwd;
  case Activation::GeluErf:
    return kGeluFwd;
  case Activation::GeluTanh:
    return kGeluApproxTanhFwd;
  case Activation::Swish:
    return kSwishFwd;
  case Activation::None:
  case Activation::HardSwish:
  case Activation::Clip:
  case Activation::HardSigmoid:
  case Activation::LeakyRelu:
    return std::nullopt;
  }
  return std::nullopt;
}

const cudnn::Tensor *cudnn::Encoding::tensor(int64_t uid) const {
  for (const Tensor &t : tensors)
    if (t.uid == uid)
      return &t;
  return nullptr;
}

/// \p shape with a unit height inserted before its one spatial dimension
/// when it has one (a 1-d convolution as a 2-d one).
static std::vector<int64_t> asCudnnShape(const art::Shape &shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  if (dims.size() == 3)
    dims.insert(dims.begin() + 2, 1);
  return dims;
}

int32_t cudnn::dataType(const std::string &dtype) {
  if (dtype == "bf16")
    return kDataBFloat16;
  if (dtype == "f16")
    return kDataHalf;
  return kDataFloat;
}

bool cudnn::computesExactly(const std::vector<int32_t> &notes,
                            const std::string &operandType) {
  bool f32 = operandType == "f32", tf32 = operandType == "tf32";
  for (int32_t n : notes) {
    if (n == kNoteReducedPrecisionReduction)
      return false;
    // A TF32 engine rounds f32 data; TF32 values it keeps. bf16 and f16
    // values tensor cores take as they are; a conversion down loses them.
    if ((n == kNoteTensorCore && f32) || (n == kNoteDownConvertInputs && !tf32))
      return false;
  }
  return true;
}

static cudnn::Tensor packed(int64_t uid, std::vector<int64_t> dims,
                            bool isVirtual,
                            int32_t dataType = cudnn::kDataFloat) {
  cudnn::Tensor t;
  t.uid = uid;
  t.dataType = dataType;
  t.strides.assign(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    t.strides[i - 1] = t.strides[i] * dims[i];
  t.dims = std::move(dims);
  t.isVirtual = isVirtual;
  return t;
}

cudnn::Encoding cudnn::encode(const art::CudnnConvStep &s) {
  Encoding e;
  size_t k = s.strides.size();
  // A 1-d convolution is a 2-d one over a unit height: no stride, padding
  // or dilation along it.
  bool lifted = k == 1;
  auto spatial = [&](int64_t unit, const int64_t *values) {
    std::vector<int64_t> out(values, values + k);
    if (lifted)
      out.insert(out.begin(), unit);
    return out;
  };
  e.spatialDims = int64_t(lifted ? 2 : k);
  e.strides = spatial(1, s.strides.data());
  e.dilations = spatial(1, s.dilations.data());
  e.prePaddings = spatial(0, s.pads.data());
  e.postPaddings = spatial(0, s.pads.data() + k);

  std::vector<int64_t> dst = asCudnnShape(s.dstShape);
  int32_t in = dataType(s.operandType), out = dataType(s.resultType);
  e.tensors.push_back(packed(kUidSrc, asCudnnShape(s.srcShape), false, in));
  e.tensors.push_back(
      packed(kUidWeights, asCudnnShape(s.weightsShape), false, in));
  e.tensors.push_back(packed(kUidDst, dst, false, out));
  std::optional<int32_t> act = activationMode(s.activation.kind);
  bool bias = s.bias != -1;
  // The ops' results: the last one is dst, the others virtual.
  int64_t last = kUidDst;
  if (bias && act)
    e.convolved = kUidConvolved, last = kUidBiased;
  else if (bias || act)
    e.convolved = kUidConvolved;
  if (e.convolved != kUidDst)
    e.tensors.push_back(packed(kUidConvolved, dst, true));
  if (bias) {
    // [1, O, 1, ...]: broadcast over the batch and the image.
    std::vector<int64_t> dims(dst.size(), 1);
    dims[1] = dst[1];
    e.tensors.push_back(packed(kUidBias, dims, false, in));
    e.pointwise.push_back({kPointwiseAdd, kUidConvolved, kUidBias, last});
    if (last == kUidBiased)
      e.tensors.push_back(packed(kUidBiased, dst, true));
  }
  if (act)
    e.pointwise.push_back(
        {*act, bias ? kUidBiased : kUidConvolved, -1, kUidDst});
  return e;
}
