//===- KernelSteps.cpp - The CPU device's Loom-kernel steps ---------------===//
//
// Part of Loom. See KernelSteps.h. Layer 2 of lib/Runtime/CPU's library
// steps.
//
//===----------------------------------------------------------------------===//

#include "CPU/KernelSteps.h"
#include "CPU/CpuFeatures.h"
#include "loom/Support/AttentionMask.h"

#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

std::string cpu::kernelLevel() {
  return std::string(art::cpuIsaName(cpuIsa()));
}

namespace {

/// \p a's manifest spelling, with its bounds for a clip ("clip:0:6"), as
/// a kernel's epilogue is named (StepDescription::postOps).
std::string epilogueName(Activation a, float lo = 0, float hi = 0) {
  std::string name(activationName(a));
  if (a == Activation::Clip) {
    char bounds[64];
    std::snprintf(bounds, sizeof bounds, ":%g:%g", double(lo), double(hi));
    name += bounds;
  }
  return name;
}

/// The activation of a kernel that clamps its results to [lo, hi]
/// (PointwiseEpilogue): none, a ReLU or a clip.
std::vector<std::string> clampEpilogue(float lo, float hi) {
  float inf = __builtin_inff();
  if (lo == -inf && hi == inf)
    return {};
  if (lo == 0.f && hi == inf)
    return {epilogueName(Activation::Relu)};
  return {epilogueName(Activation::Clip, lo, hi)};
}

/// The activation convolveStem applies for \p post.
std::vector<std::string> stemEpilogue(const StemPostOp &post) {
  using Kind = StemPostOp::Kind;
  switch (post.kind) {
  case Kind::None:
    return {};
  case Kind::Relu:
    return {epilogueName(Activation::Relu)};
  case Kind::Clip:
    return {epilogueName(Activation::Clip, post.lo, post.hi)};
  case Kind::HardSwish:
    return {epilogueName(Activation::HardSwish)};
  }
  return {};
}

class GroupedConvStep : public LibraryStep {
public:
  GroupedConvStep(const art::Conv2dStep &s, const GroupedConvGeometry &g,
                  const float *weights)
      : src(s.src), bias(s.bias), dst(s.dst), g(g),
        packed(packGroupedConvWeights(g, weights)) {}
  StepDescription describe() const override {
    StepDescription d{"loom grouped convolution " + kernelLevel(), {}, "team"};
    if (g.relu)
      d.postOps.push_back(epilogueName(Activation::Relu));
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    groupedConvChannelsLast(
        g, static_cast<const float *>(buffers[src]), packed.data(),
        bias != -1 ? static_cast<const float *>(buffers[bias]) : nullptr,
        static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, bias, dst;
  GroupedConvGeometry g;
  AlignedFloats packed;
};

class StemConvStep : public LibraryStep {
public:
  StemConvStep(const art::Conv2dStep &s, const DenseConvGeometry &g,
               const StemPostOp &post, const void *weights)
      : src(s.src), bias(s.bias), dst(s.dst), g(g), post(post),
        swish(s.activation.kind == Activation::Swish),
        packed(packStemWeights(g, static_cast<const float *>(weights))) {}
  StepDescription describe() const override {
    StepDescription d{"loom stem convolution " + kernelLevel() +
                          (swish ? " + loom swish " + kernelLevel() : ""),
                      {},
                      "team"};
    d.postOps = stemEpilogue(post);
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    auto *out = static_cast<float *>(buffers[dst]);
    convolveStem(g, static_cast<const float *>(buffers[src]), packed.data(),
                 bias != -1 ? static_cast<const float *>(buffers[bias])
                            : nullptr,
                 post, out);
    if (swish)
      swishInPlace(out, g.batch * g.oh * g.ow * g.outChannels);
    return Error::ok();
  }

private:
  int64_t src, bias, dst;
  DenseConvGeometry g;
  StemPostOp post;
  bool swish;
  std::vector<float> packed;
};

class WinogradConvStep : public LibraryStep {
public:
  WinogradConvStep(const art::Conv2dStep &s, const DenseConvGeometry &g,
                   int tile, const PointwiseEpilogue &clamp,
                   const float *weights)
      : src(s.src), bias(s.bias), sum(s.sum), dst(s.dst), g(g), tile(tile),
        clamp(clamp), packed(packWinogradWeights(g, tile, weights)) {}
  StepDescription describe() const override {
    StepDescription d{"loom winograd convolution " + std::to_string(tile) +
                          "x3 " + kernelLevel(),
                      {},
                      "team"};
    if (sum != -1)
      d.postOps.push_back("sum");
    for (std::string &a : clampEpilogue(clamp.lo, clamp.hi))
      d.postOps.push_back(std::move(a));
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    PointwiseEpilogue e = clamp;
    e.bias = bias != -1 ? static_cast<const float *>(buffers[bias]) : nullptr;
    e.sum = sum != -1 ? static_cast<const float *>(buffers[sum]) : nullptr;
    convolveWinograd8(g, tile, static_cast<const float *>(buffers[src]),
                      packed.data(), e, static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, bias, sum, dst;
  DenseConvGeometry g;
  int tile;
  PointwiseEpilogue clamp;
  AlignedFloats packed;
};

class PointwiseStep : public LibraryStep {
public:
  PointwiseStep(const art::Conv2dStep &s, const float *weights,
                const PointwiseEpilogue &activation, bool swish, bool hugePages)
      : ids{s.src, s.bias, s.sum, s.dst},
        pixels(s.dstShape[0] * s.dstShape[2] * s.dstShape[3]),
        w(weights, s.dstShape[1], s.srcShape[1], PointwiseWeights::Order::OutIn,
          hugePages),
        activation(activation), swish(swish) {}
  /// A matrix product of \p rows rows by constant 2-d weights [in][out]
  /// (Forms/Matmul.cpp).
  PointwiseStep(const art::MatmulStep &s, int64_t rows, const float *weights,
                const PointwiseEpilogue &activation, bool swish, bool hugePages)
      : ids{s.src, s.bias, s.sum, s.dst}, pixels(rows),
        w(weights, s.weightsShape[1], s.weightsShape[0],
          PointwiseWeights::Order::InOut, hugePages),
        activation(activation), swish(swish) {}
  StepDescription describe() const override {
    StepDescription d{"loom pointwise " + kernelLevel(), {}, "team"};
    if (swish)
      d.implementation += " + loom swish " + kernelLevel();
    if (ids.sum != -1)
      d.postOps.push_back("sum");
    for (std::string &a : clampEpilogue(activation.lo, activation.hi))
      d.postOps.push_back(std::move(a));
    if (activation.planar)
      d.operands.push_back("dst nchw written by the kernel");
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    PointwiseEpilogue e = activation;
    if (ids.bias != -1)
      e.bias = static_cast<const float *>(buffers[ids.bias]);
    if (ids.sum != -1)
      e.sum = static_cast<const float *>(buffers[ids.sum]);
    auto *dst = static_cast<float *>(buffers[ids.dst]);
    pointwiseChannelsLast(w, pixels,
                          static_cast<const float *>(buffers[ids.src]), e, dst);
    if (swish)
      swishInPlace(dst, pixels * w.out);
    return Error::ok();
  }

private:
  struct {
    int64_t src, bias, sum, dst; // bias and sum -1 where absent
  } ids;
  int64_t pixels;
  PointwiseWeights w;
  PointwiseEpilogue activation;
  bool swish;
};

class KernelPool : public LibraryStep {
public:
  KernelPool(const art::Pool2dStep &s, const PoolGeometry &g, PoolKernel kernel)
      : src(s.src), dst(s.dst), g(g), kernel(kernel) {}
  StepDescription describe() const override {
    return {std::string(kernel == poolPlanes ? "loom plane pool "
                                             : "loom channels-last pool ") +
                kernelLevel(),
            {},
            "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    kernel(g, static_cast<const float *>(buffers[src]),
           static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, dst;
  PoolGeometry g;
  PoolKernel kernel;
};

/// A global average pool from an NHWC buffer, or a per-channel multiply of
/// one (a squeeze-and-excitation's; a batchnorm's with its shift and ReLU),
/// run by SqueezeExcite.cpp's kernels instead of oneDNN.
class SqueezeExciteStep : public LibraryStep {
public:
  /// The pool: src0 averaged into dst.
  SqueezeExciteStep(int64_t src0, int64_t dst, const ChannelsLastPlanes &g)
      : src0(src0), dst(dst), scaling{g} {}
  /// The multiply: src0 * src1 (+ shift, when not -1) into dst.
  SqueezeExciteStep(int64_t src0, int64_t src1, int64_t shift, int64_t dst,
                    const ChannelsLastScaling &scaling)
      : src0(src0), src1(src1), shift(shift), dst(dst), scaling(scaling) {}
  StepDescription describe() const override {
    StepDescription d{
        std::string(src1 ? "loom channel scale " : "loom global average ") +
            kernelLevel(),
        {},
        "team"};
    if (shift != -1)
      d.postOps.push_back("shift");
    if (src1 && scaling.relu)
      d.postOps.push_back(epilogueName(Activation::Relu));
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    const auto *in = static_cast<const float *>(buffers[src0]);
    auto *out = static_cast<float *>(buffers[dst]);
    if (!src1)
      return globalAveragePoolChannelsLast(scaling.g, in, out), Error::ok();
    ChannelScale scale;
    scale.scale = static_cast<const float *>(buffers[*src1]);
    scale.scaleImage = scaling.scaleImage;
    if (shift != -1)
      scale.shift = static_cast<const float *>(buffers[shift]);
    scale.shiftImage = scaling.shiftImage;
    scale.relu = scaling.relu;
    scaleChannelsLast(scaling.g, scaling.groups, in, scale, out);
    return Error::ok();
  }

private:
  int64_t src0;
  std::optional<int64_t> src1;
  int64_t shift = -1;
  int64_t dst;
  ChannelsLastScaling scaling;
};

} // namespace

namespace {

/// loomrt.attention on attention(): each sequence's live length read from
/// its buffer at run time and clamped to the capacity.
class AttentionStep : public LibraryStep {
public:
  explicit AttentionStep(const art::AttentionStep &s) : s(s) {
    g.batch = s.batch;
    g.qHeads = s.qHeads;
    g.kvHeads = s.kvHeads;
    g.qLen = s.qLen;
    g.kvLen = s.kvLen;
    g.headDim = s.headDim;
    g.scale = float(s.scale);
    g.causal = s.causal;
    g.shard.count = s.shards;
  }
  StepDescription describe() const override {
    std::string heads = std::to_string(s.qHeads) + "q/" +
                        std::to_string(s.kvHeads) + "kv heads";
    return {"loom attention " + kernelLevel() + " " + heads + ", " +
                std::to_string(s.qLen) + " queries over " +
                std::to_string(s.kvLen) + " key positions" +
                (s.causal ? " causal" : "") +
                (s.length != -1 ? ", live length at run time" : "") +
                (s.shards > 1 ? ", one of " + std::to_string(s.shards) +
                                    " shards by position, with log-sum-exp"
                              : "") +
                " (online softmax by blocks of keys; split keys when tiles "
                "< threads)",
            {},
            "team"};
  }
  Error run(Stream &, void *const *buffers) const override {
    AttentionGeometry shardG = g;
    if (s.shard != -1)
      shardG.shard.index = std::clamp<int64_t>(
          *static_cast<const int64_t *>(buffers[s.shard]), 0, s.shards - 1);
    std::vector<int64_t> lives(size_t(s.batch), s.kvLen);
    if (s.length != -1) {
      const auto *lengths = static_cast<const int64_t *>(buffers[s.length]);
      for (int64_t b = 0; b < s.batch; ++b)
        lives[b] = loom::attention::shardLive(
            lengths[s.lengthPerBatch ? b : 0], shardG.shard, s.kvLen);
    }
    cpu::attention(shardG, static_cast<const float *>(buffers[s.q]),
                   static_cast<const float *>(buffers[s.k]),
                   static_cast<const float *>(buffers[s.v]), lives.data(),
                   static_cast<float *>(buffers[s.dst]),
                   s.lse == -1 ? nullptr
                               : static_cast<float *>(buffers[s.lse]));
    return Error::ok();
  }

private:
  art::AttentionStep s;
  AttentionGeometry g;
};

} // namespace

namespace {

/// A matmul step of few rows on gemv(): the weights read where they are.
class GemvStep : public LibraryStep {
public:
  GemvStep(const art::MatmulStep &s, int64_t rows)
      : src(s.src), weights(s.weights), bias(s.bias), dst(s.dst) {
    shape.rows = rows;
    shape.k = s.weightsShape[0];
    shape.n = s.weightsShape[1];
    shape.relu = s.activation.kind == Activation::Relu;
  }
  StepDescription describe() const override {
    StepDescription d{"loom gemv " + kernelLevel(), {}, "team"};
    if (bias != -1)
      d.postOps.push_back("bias");
    if (shape.relu)
      d.postOps.push_back("relu");
    return d;
  }
  Error run(Stream &, void *const *buffers) const override {
    cpu::gemv(shape, static_cast<const float *>(buffers[src]),
              static_cast<const float *>(buffers[weights]),
              bias == -1 ? nullptr : static_cast<const float *>(buffers[bias]),
              static_cast<float *>(buffers[dst]));
    return Error::ok();
  }

private:
  int64_t src, weights, bias, dst; // bias -1 where absent
  GemvShape shape;
};

} // namespace

StepPtr cpu::gemvStep(const art::MatmulStep &s, int64_t rows) {
  return std::make_unique<GemvStep>(s, rows);
}

StepPtr cpu::attentionStep(const art::AttentionStep &s) {
  return std::make_unique<AttentionStep>(s);
}

StepPtr cpu::groupedConvStep(const art::Conv2dStep &s,
                             const GroupedConvGeometry &g,
                             const float *weights) {
  return std::make_unique<GroupedConvStep>(s, g, weights);
}

StepPtr cpu::stemConvStep(const art::Conv2dStep &s, const DenseConvGeometry &g,
                          const StemPostOp &post, const void *weights) {
  return std::make_unique<StemConvStep>(s, g, post, weights);
}

StepPtr cpu::winogradConvStep(const art::Conv2dStep &s,
                              const DenseConvGeometry &g, int tile,
                              const PointwiseEpilogue &clamp,
                              const float *weights) {
  return std::make_unique<WinogradConvStep>(s, g, tile, clamp, weights);
}

StepPtr cpu::pointwiseConvStep(const art::Conv2dStep &s, const float *weights,
                               const PointwiseEpilogue &e, bool swish,
                               bool hugePages) {
  return std::make_unique<PointwiseStep>(s, weights, e, swish, hugePages);
}

StepPtr cpu::pointwiseMatmulStep(const art::MatmulStep &s, int64_t rows,
                                 const float *weights,
                                 const PointwiseEpilogue &e, bool swish,
                                 bool hugePages) {
  return std::make_unique<PointwiseStep>(s, rows, weights, e, swish, hugePages);
}

StepPtr cpu::kernelPoolStep(const art::Pool2dStep &s, const PoolGeometry &g,
                            PoolKernel kernel) {
  return std::make_unique<KernelPool>(s, g, kernel);
}

StepPtr cpu::globalAverageStep(int64_t src, int64_t dst,
                               const ChannelsLastPlanes &g) {
  return std::make_unique<SqueezeExciteStep>(src, dst, g);
}

StepPtr cpu::channelScaleStep(int64_t src0, int64_t src1, int64_t shift,
                              int64_t dst, const ChannelsLastScaling &scaling) {
  return std::make_unique<SqueezeExciteStep>(src0, src1, shift, dst, scaling);
}
