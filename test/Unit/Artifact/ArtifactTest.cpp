//===- ArtifactTest.cpp - The artifact schema: write, read, refuse --------===//
//
// Part of Loom. lib/Artifact's one writer and one reader agree: a manifest
// holding every step kind of StepKinds.def, every buffer kind and a world
// of several ranks with channels reads back as written; bad manifests are
// refused with messages naming the field. The ranks' pipelined step
// (docs/Artifact.md "The pipelined step") too, and checkWorldStep names
// sends and receives out of order and exchanges that deadlock when a send
// blocks until received.
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Json.h"
#include "loom/Artifact/Schema.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>
#include <set>

using namespace loom;
using namespace loom::artifact;

namespace {

/// One step of every kind, on buffers 0..7 of a 4-d f32 entry.
std::vector<Step> everyStepKind() {
  Shape nchw = {1, 8, 4, 4}, oihw = {8, 8, 3, 3};
  std::vector<Step> steps;
  steps.push_back(KernelStep{"k0", {0, 4}, 16});
  steps.push_back(CopyStep{4, 5});
  steps.push_back(BranchStep{6, 4});
  steps.push_back(JumpStep{5});
  Conv2dStep conv;
  static_cast<ConvolutionOperands &>(conv) = {
      0, 2, 4, nchw, oihw, nchw, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  conv.bias = 3;
  conv.sum = 5;
  conv.algorithm = ConvAlgorithm::Winograd;
  conv.activation = {Activation::Clip, -1.5, 6};
  steps.push_back(conv);
  Conv2dFilterGradStep grad;
  static_cast<ConvolutionOperands &>(grad) = {
      0, 4, 5, nchw, nchw, oihw, {2, 2}, {0, 0, 1, 1}, {1, 1}, 1};
  steps.push_back(grad);
  MatmulStep matmul;
  matmul.src = 0;
  matmul.weights = 2;
  matmul.dst = 4;
  matmul.bias = 3;
  matmul.srcShape = {32, 4};
  matmul.weightsShape = {4, 4};
  matmul.dstShape = {32, 4};
  matmul.weightsConstant = true;
  matmul.activation = {Activation::LeakyRelu, 0.125, 0};
  steps.push_back(matmul);
  steps.push_back(Pool2dStep{4, 5, nchw, {1, 8, 2, 2}, {2, 2}, {2, 2},
                             {0, 0, 0, 0}, PoolAlgorithm::AvgIncludePad});
  steps.push_back(ConcatStep{{4, 5}, 7, {3, 5}, nchw});
  steps.push_back(BinaryStep{4, 5, 7, nchw, BinaryAlgorithm::Add,
                             {Activation::GeluTanh, 0, 0}, nchw});
  steps.push_back(BinaryStep{4, 5, 7, nchw, BinaryAlgorithm::Mul,
                             {Activation::Relu, 0, 0}, {1, 8, 1, 1}});
  steps.push_back(SgemmStep{0, 2, 4, {16, 8}, {8, 8}, 2});
  steps.push_back(TopKStep{0, 3, 4, 5, 7, "f32", 2, 8, 4, 3, false});
  NonMaxSuppressionStep nms;
  nms.boxes = 0;
  nms.scores = 2;
  nms.selected = 5;
  nms.count = 7;
  nms.numBoxes = 4;
  nms.maxOutputPerClass = 2;
  nms.centerPointBox = true;
  nms.iouThreshold = 0.5;
  nms.scoreThreshold = 0.25;
  steps.push_back(nms);
  steps.push_back(NonZeroStep{4, 5, 7, "i1", {2, 3}});
  steps.push_back(UpdateSliceStep{4, 5, 3, 4, "f32", 2, 8, 1, 4, 2});
  // A binary step with a shift (a batchnorm's x * k + shift).
  steps.push_back(BinaryStep{4, 5, 7, nchw, BinaryAlgorithm::Mul,
                             {Activation::Relu, 0, 0}, {1, 8, 1, 1}, 6,
                             {1, 8, 1, 1}});
  AttentionStep attention;
  attention.q = 0;
  attention.k = 2;
  attention.v = 3;
  attention.length = 6;
  attention.dst = 4;
  attention.qHeads = 4;
  attention.kvHeads = 2;
  attention.kvLen = 8;
  attention.headDim = 4;
  attention.scale = 0.5;
  attention.causal = true;
  steps.push_back(attention);
  // A shard's attention (tg.shard_attention): its shard, log-sum-exp and
  // shard count.
  attention.shard = 6;
  attention.lse = 7;
  attention.shards = 2;
  steps.push_back(attention);
  // The cache shard's index in a world of 2 x 2 (its group strided by the
  // 2 tensor-parallel ranks), and a gather over the tensor-parallel ranks.
  steps.push_back(WorldRankStep{6, {2, 2, 4}});
  steps.push_back(AllGatherStep{4, 5, 64, {2, 1, 4}});
  return steps;
}

/// The steps of the GPU device's program: the kinds that run on a GPU only.
std::vector<Step> gpuSteps() {
  return {DispatchStep{"k1", {8}, {4, 2, 1}, {64, 1, 1}, 256}};
}

/// A batched cuBLASLt product with a bias and a GELU: [2, 4, 16] x [16, 8]
/// + [8].
CublasMatmulStep cublasStep() {
  CublasMatmulStep s;
  s.a = 0;
  s.b = 1;
  s.bias = 2;
  s.d = 3;
  s.m = 4;
  s.n = 8;
  s.k = 16;
  s.batch = 2;
  s.aBatchStride = 64;
  s.bBatchStride = 0;
  s.epilogue = CublasEpilogue::GeluBias;
  return s;
}

/// A grouped, strided, dilated, unevenly padded cuDNN convolution with a
/// bias and a GELU: src [1, 4, 7, 9], weights [6, 2, 3, 3] in 2 groups,
/// bias [6], dst [1, 6, 4, 7].
CudnnConvStep cudnnStep() {
  CudnnConvStep s;
  s.src = 0;
  s.weights = 1;
  s.bias = 2;
  s.dst = 3;
  s.srcShape = {1, 4, 7, 9};
  s.weightsShape = {6, 2, 3, 3};
  s.dstShape = {1, 6, 4, 7};
  s.strides = {2, 1};
  s.pads = {1, 0, 1, 2};
  s.dilations = {1, 2};
  s.groups = 2;
  s.activation = {Activation::GeluTanh, 0, 0};
  return s;
}

/// The steps only a CUDA device runs.
std::vector<Step> cudaSteps() { return {cublasStep(), cudnnStep()}; }

/// One CUDA device running \p step over three inputs and an output.
Manifest cudaManifest(std::vector<TensorDesc> inputs, TensorDesc output,
                      Step step) {
  Manifest m;
  m.loomVersion = "test";
  m.devices.push_back(
      {DeviceKind::Cuda, 0, "nvptx64-nvidia-cuda", "sm_90a", {}, ""});
  Entry e;
  e.name = "main";
  e.inputs = std::move(inputs);
  e.outputs.push_back(std::move(output));
  e.buffers = {{BufferKind::Input, 0, 0, "", 0, 0},
               {BufferKind::Input, 0, 1, "", 0, 0},
               {BufferKind::Input, 0, 2, "", 0, 0},
               {BufferKind::Output, 0, 0, "", 0, 0}};
  e.programs.push_back({0, 0, {std::move(step)}});
  m.entries.push_back(std::move(e));
  m.world = singleProcessWorld(m.devices.size(), m.entries);
  return m;
}

/// cublasStep() on a CUDA device.
Manifest cudaManifest() {
  return cudaManifest({{"a", "f32", {2, 4, 16}, 0},
                       {"b", "f32", {16, 8}, 0},
                       {"bias", "f32", {8}, 0}},
                      {"d", "f32", {2, 4, 8}, 0}, cublasStep());
}

/// cudnnStep() on a CUDA device.
Manifest cudnnManifest() {
  return cudaManifest({{"x", "f32", {1, 4, 7, 9}, 0},
                       {"w", "f32", {6, 2, 3, 3}, 0},
                       {"b", "f32", {6}, 0}},
                      {"y", "f32", {1, 6, 4, 7}, 0}, cudnnStep());
}

/// A manifest with two devices (a CPU, a Vulkan GPU), each running a
/// program of one entry, and a world of two ranks joined by a channel.
Manifest twoRankManifest() {
  Manifest m;
  m.loomVersion = "test";
  m.devices.push_back({DeviceKind::Cpu, 0, "x86_64-unknown-linux-gnu",
                       "znver3", {"avx2", "fma"}, ""});
  m.devices.push_back({DeviceKind::Vulkan, 0, "spirv64-unknown-vulkan1.3",
                       "", {}, ".loom_image_1"});
  m.weights.storage = WeightStorage::External;
  m.weights.file = "w.safetensors";
  m.weights.size = 1234;
  m.weights.checksum = 0x0123456789abcdefULL;
  m.weights.tensors.push_back({"w", "F32", {8, 8, 3, 3}, 42});
  Entry e;
  e.name = "main";
  // Run by the world's even ranks (an entry of a CP x TP world).
  e.rank = 0;
  e.rankPeriod = 2;
  e.inputs.push_back({"x", "f32", {1, 8, 4, 4}, 0});
  e.outputs.push_back({"y", "f32", {1, 8, 4, 4}, 0});
  e.buffers = {{BufferKind::Input, 0, 0, "", 0, 0},
               {BufferKind::Output, 0, 0, "", 0, 0},
               {BufferKind::Weight, 0, 0, "w", 0, 0},
               {BufferKind::Arena, 0, 0, "", 0, 64},
               {BufferKind::Arena, 0, 0, "", 64, 512},
               {BufferKind::Arena, 0, 0, "", 576, 512},
               {BufferKind::Arena, 0, 0, "", 1088, 1},
               {BufferKind::Arena, 0, 0, "", 1152, 512},
               {BufferKind::Arena, 1, 0, "", 0, 512}};
  e.programs.push_back({0, 1664, everyStepKind()});
  e.programs.push_back({1, 512, gpuSteps()});
  m.entries.push_back(std::move(e));
  Rank r0, r1;
  r0.devices = {0};
  r0.programs = {{0}};
  r0.channels.push_back({"act", ChannelDirection::Send, 1, 512, "f32"});
  r1.devices = {1};
  r1.programs = {{1}};
  r1.channels.push_back({"act", ChannelDirection::Recv, 0, 512, "f32"});
  m.world.ranks = {r0, r1};
  return m;
}

/// An entry copying its f32 [4] input to its output, on \p device.
Entry copyEntry(const std::string &name, int64_t device) {
  Entry e;
  e.name = name;
  e.inputs.push_back({"x", "f32", {4}, 0});
  e.outputs.push_back({"y", "f32", {4}, 0});
  e.buffers = {{BufferKind::Input, device, 0, "", 0, 0},
               {BufferKind::Output, device, 0, "", 0, 0}};
  e.programs.push_back({device, 0, {CopyStep{0, 1}}});
  return e;
}

/// Two ranks, two micro-batches: rank 0 computes "f" on the step input and
/// sends the result; rank 1 receives it, computes "g" and sums the result
/// into the gradient of weight "w".
Manifest twoRankStep() {
  Manifest m = twoRankManifest();
  m.weights.tensors = {{"w", "F32", {4}, 7}};
  m.entries = {copyEntry("f", 0), copyEntry("g", 1)};
  m.world.microBatches = 2;
  m.world.stepInputs.push_back({"x", "f32", {4}, 16});
  Rank r0, r1;
  r0.devices = {0};
  r0.programs = {{0}, {}};
  r0.channels.push_back({"f.y->g.x", ChannelDirection::Send, 1, 16, "f32"});
  r0.slots.push_back({SlotKind::Input, "input0", "f32", {4}, 0, "", 16});
  r0.slots.push_back({SlotKind::Value, "f.y", "f32", {4}, 0, "", 16});
  r1.devices = {1};
  r1.programs = {{}, {0}};
  r1.channels.push_back({"f.y->g.x", ChannelDirection::Recv, 0, 16, "f32"});
  r1.slots.push_back({SlotKind::Value, "g.x", "f32", {4}, 0, "", 16});
  r1.slots.push_back({SlotKind::Value, "g.y", "f32", {4}, 0, "", 16});
  r1.slots.push_back({SlotKind::Gradient, "grad:w", "f32", {4}, 0, "w", 16});
  for (int64_t mb = 0; mb < 2; ++mb) {
    r0.actions.push_back({ComputeAction{0, mb, {0}, {1}}});
    r0.actions.push_back({ExchangeAction{{{0, 1, mb}}}});
    r1.actions.push_back({ExchangeAction{{{0, 0, mb}}}});
    r1.actions.push_back({ComputeAction{1, mb, {0}, {1}}});
    r1.actions.push_back({AccumulateAction{1, 2, mb}});
  }
  m.world.ranks = {r0, r1};
  return m;
}

/// The reader's message for \p text, or "" when it reads.
std::string refusal(const std::string &text) {
  Manifest m;
  std::optional<ReadError> error = readManifest(text, m);
  return error ? error->message : "";
}

/// The manifest text of \p m after \p edit changes its JSON.
template <typename Edit> std::string edited(const Manifest &m, Edit edit) {
  Json root;
  std::string error;
  EXPECT_TRUE(Json::parse(writeManifest(m), root, error)) << error;
  edit(root);
  return root.print();
}

/// The member at \p path ("entries", 0, "programs", ...) of \p root.
Json &at(Json &root, std::initializer_list<std::variant<const char *, int>>
                         path) {
  Json *j = &root;
  for (const auto &p : path) {
    if (std::holds_alternative<int>(p))
      j = const_cast<Json *>(&j->array()[std::get<int>(p)]);
    else
      j = const_cast<Json *>(j->get(std::get<const char *>(p)));
  }
  return *j;
}

} // namespace

TEST(ArtifactTest, EveryStepKindIsListed) {
  std::set<StepKind> kinds;
  for (const Step &s : everyStepKind())
    kinds.insert(s.kind());
  for (const Step &s : gpuSteps())
    kinds.insert(s.kind());
  for (const Step &s : cudaSteps())
    kinds.insert(s.kind());
  int numKinds = 0;
#define LOOM_STEP_KIND(Kind, Spelling)                                         \
  ++numKinds;                                                                  \
  EXPECT_EQ(parseStepKind(Spelling), StepKind::Kind);                          \
  EXPECT_EQ(stepKindName(StepKind::Kind), Spelling);
#include "loom/Artifact/StepKinds.def"
  EXPECT_EQ(int(kinds.size()), numKinds);
  EXPECT_EQ(int(std::variant_size_v<StepRecord>), numKinds);
}

TEST(ArtifactTest, WorldStepsAndShardAttentionRoundTrip) {
  Manifest read;
  std::optional<ReadError> error =
      readManifest(writeManifest(twoRankManifest()), read);
  ASSERT_FALSE(error) << error->message;
  const AttentionStep *shard = nullptr;
  const WorldRankStep *rank = nullptr;
  const AllGatherStep *gather = nullptr;
  for (const Step &step : read.entries[0].programs[0].steps) {
    if (const auto *a = step.getIf<AttentionStep>(); a && a->shards > 1)
      shard = a;
    rank = rank ? rank : step.getIf<WorldRankStep>();
    gather = gather ? gather : step.getIf<AllGatherStep>();
  }
  ASSERT_TRUE(shard && rank && gather);
  EXPECT_EQ(shard->shards, 2);
  EXPECT_EQ(shard->shard, 6);
  EXPECT_EQ(shard->lse, 7);
  EXPECT_EQ(rank->dst, 6);
  EXPECT_EQ(rank->group.ranks, 2);
  EXPECT_EQ(rank->group.stride, 2);
  EXPECT_EQ(rank->group.world, 4);
  EXPECT_EQ(gather->src, 4);
  EXPECT_EQ(gather->dst, 5);
  EXPECT_EQ(gather->bytes, 64);
  EXPECT_EQ(gather->group.ranks, 2);
  EXPECT_EQ(gather->group.stride, 1);
  EXPECT_EQ(gather->group.world, 4);
  // A shard's attention without its shard buffer is refused.
  std::string text = writeManifest(twoRankManifest());
  size_t at = text.find("\"shard\": 6");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"shard\": 6").size(), "\"shardx\": 6");
  Manifest bad;
  error = readManifest(text, bad);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("needs its shard and length"),
            std::string::npos)
      << error->message;
  // A world that is not a multiple of the group's span is refused.
  text = writeManifest(twoRankManifest());
  at = text.find("\"world\": 4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"world\": 4").size(), "\"world\": 3");
  error = readManifest(text, bad);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("multiple of ranks * stride"),
            std::string::npos)
      << error->message;
  // A period without a rank below it names no world rank: refused.
  text = writeManifest(twoRankManifest());
  at = text.find("\"rank\": 0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"rank\": 0").size(), "\"rank\": 2");
  error = readManifest(text, bad);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("rank_period: needs a rank below it"),
            std::string::npos)
      << error->message;
}

TEST(ArtifactTest, WorldGroupsAreGridLines) {
  // A world of 2 cache shards x 3 tensor-parallel ranks, w = 3 * shard + t.
  WorldGroup tp{3, 1, 6}, cp{2, 3, 6};
  EXPECT_EQ(tp.indexOf(4), 1);
  EXPECT_EQ(tp.member(4, 0), 3);
  EXPECT_EQ(tp.member(4, 2), 5);
  EXPECT_EQ(cp.indexOf(4), 1);
  EXPECT_EQ(cp.member(4, 0), 1);
  EXPECT_EQ(cp.member(1, 1), 4);
  Entry e;
  e.rank = 1;
  e.rankPeriod = 3;
  EXPECT_TRUE(e.runsOn(1) && e.runsOn(4) && !e.runsOn(3));
  e.rankPeriod = 0;
  EXPECT_TRUE(e.runsOn(1) && !e.runsOn(4));
  // Stage 1 of 2 over a world of 2 shards x 3 ranks (w = 6 s + 3 p + t):
  // tensor-parallel rank 1's entry runs on 7 and 10, no other.
  e.rank = 7;
  e.rankPeriod = 3;
  e.rankCount = 2;
  for (int64_t w = 0; w < 12; ++w)
    EXPECT_EQ(e.runsOn(w), w == 7 || w == 10) << w;
}

TEST(ArtifactTest, RankCountNeedsAPeriod) {
  Manifest written = twoRankManifest();
  written.entries[0].rank = 5;
  written.entries[0].rankPeriod = 2;
  written.entries[0].rankCount = 2;
  Manifest read;
  std::optional<ReadError> error = readManifest(writeManifest(written), read);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(read.entries[0].rankCount, 2);
  EXPECT_TRUE(read.entries[0].runsOn(7) && !read.entries[0].runsOn(9));
  std::string text = writeManifest(written);
  size_t at = text.find("\"rank_period\": 2");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"rank_period\": 2").size(),
               "\"rank_periodx\": 2");
  error = readManifest(text, read);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("rank_count: needs a rank_period"),
            std::string::npos)
      << error->message;
}

TEST(ArtifactTest, WriteThenReadEveryStepKindAndTheWorld) {
  Manifest written = twoRankManifest();
  std::string text = writeManifest(written);
  Manifest read;
  std::optional<ReadError> error = readManifest(text, read);
  ASSERT_FALSE(error) << error->message;
  // What was read writes the same text: every field made the round trip.
  EXPECT_EQ(writeManifest(read), text);
  ASSERT_EQ(read.entries.size(), 1u);
  const Entry &e = read.entries[0];
  ASSERT_EQ(e.programs.size(), 2u);
  ASSERT_EQ(e.programs[0].steps.size(), everyStepKind().size());
  for (size_t i = 0; i < e.programs[0].steps.size(); ++i)
    EXPECT_EQ(e.programs[0].steps[i].kind(), everyStepKind()[i].kind());
  const auto *conv = e.programs[0].steps[4].getIf<Conv2dStep>();
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->sum, 5);
  EXPECT_EQ(conv->algorithm, ConvAlgorithm::Winograd);
  EXPECT_EQ(conv->activation.kind, Activation::Clip);
  EXPECT_DOUBLE_EQ(conv->activation.alpha, -1.5);
  const auto *matmul = e.programs[0].steps[6].getIf<MatmulStep>();
  ASSERT_TRUE(matmul);
  EXPECT_TRUE(matmul->weightsConstant);
  EXPECT_DOUBLE_EQ(matmul->activation.alpha, 0.125);
  // Sizes the reader fills in.
  EXPECT_EQ(e.inputs[0].bytes, 512);
  EXPECT_EQ(e.buffers[0].bytes, 512);
  // The world.
  ASSERT_EQ(read.world.ranks.size(), 2u);
  EXPECT_EQ(read.world.ranks[1].devices, std::vector<int64_t>{1});
  EXPECT_EQ(read.world.ranks[1].programs[0], std::vector<int64_t>{1});
  const Channel &c = read.world.ranks[0].channels[0];
  EXPECT_EQ(c.name, "act");
  EXPECT_EQ(c.direction, ChannelDirection::Send);
  EXPECT_EQ(c.peer, 1);
  EXPECT_EQ(c.bytes, 512);
  EXPECT_EQ(read.weights.checksum, 0x0123456789abcdefULL);
  EXPECT_EQ(read.devices[0].features,
            (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(read.devices[1].kind, DeviceKind::Vulkan);
  EXPECT_EQ(read.devices[1].image, ".loom_image_1");
  const auto *dispatch = e.programs[1].steps[0].getIf<DispatchStep>();
  ASSERT_TRUE(dispatch);
  EXPECT_EQ(dispatch->kernel, "k1");
  EXPECT_EQ(dispatch->grid, (std::array<int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(dispatch->block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(dispatch->sharedBytes, 256);
}

TEST(ArtifactTest, StepsRunOnTheirKindOfDevice) {
  Manifest m = twoRankManifest();
  // A host kernel on the GPU, a dispatch on the CPU.
  Manifest hostOnGpu = m;
  hostOnGpu.entries[0].programs[1].steps[0] = KernelStep{"k1", {8}, 1};
  EXPECT_EQ(refusal(writeManifest(hostOnGpu)),
            "manifest: entries[0].programs[1].steps[0]: kernel does not run "
            "on a vulkan device (the program's device 1)");
  Manifest dispatchOnCpu = m;
  dispatchOnCpu.entries[0].programs[0].steps[1] = gpuSteps()[0];
  dispatchOnCpu.entries[0].programs[0].steps[1].getIf<DispatchStep>()->args =
      {5};
  EXPECT_EQ(refusal(writeManifest(dispatchOnCpu)),
            "manifest: entries[0].programs[0].steps[1]: gpu.dispatch does not "
            "run on a cpu device (the program's device 0)");
  // A GPU that dispatches needs an image; a CPU has none.
  Manifest noImage = m;
  noImage.devices[1].image.clear();
  EXPECT_EQ(refusal(writeManifest(noImage)),
            "manifest: entries[0].programs[1].steps[0]: gpu.dispatch on "
            "device 1, which has no image");
  Manifest cpuImage = m;
  cpuImage.devices[0].image = ".loom_image_0";
  EXPECT_EQ(refusal(writeManifest(cpuImage)),
            "manifest: devices[0].image: a cpu device's kernels are the "
            "artifact's own functions");
  // Launch sizes: three, positive.
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"entries", 0, "programs", 1, "steps", 0,
                                       "attrs"})
                                 .set("block", Json::integers({64, 0, 1}));
                           })),
            "manifest: entries[0].programs[1].steps[0].attrs.block: expected 3 "
            "positive sizes");
}

TEST(ArtifactTest, CublasMatmulReadBackAndRefused) {
  Manifest m = cudaManifest();
  Manifest read;
  std::optional<ReadError> error = readManifest(writeManifest(m), read);
  ASSERT_FALSE(error) << error->message;
  const auto *s =
      read.entries[0].programs[0].steps[0].getIf<CublasMatmulStep>();
  ASSERT_TRUE(s);
  EXPECT_EQ(std::tie(s->a, s->b, s->bias, s->d),
            std::make_tuple(int64_t(0), int64_t(1), int64_t(2), int64_t(3)));
  EXPECT_EQ(std::tie(s->m, s->n, s->k, s->batch),
            std::make_tuple(int64_t(4), int64_t(8), int64_t(16), int64_t(2)));
  EXPECT_EQ(s->aBatchStride, 64);
  EXPECT_EQ(s->bBatchStride, 0);
  EXPECT_EQ(s->epilogue, CublasEpilogue::GeluBias);
  auto withAttr = [&](const char *key, Json value) {
    return refusal(edited(m, [&](Json &root) {
      at(root, {"entries", 0, "programs", 0, "steps", 0, "attrs"})
          .set(key, value);
    }));
  };
  EXPECT_EQ(withAttr("epilogue", Json("gelu_erf")),
            "manifest: entries[0].programs[0].steps[0].attrs.epilogue: "
            "unknown cuBLASLt epilogue 'gelu_erf'");
  EXPECT_EQ(withAttr("epilogue", Json("gelu")),
            "manifest: entries[0].programs[0].steps[0].args.bias: a bias "
            "operand exactly when the epilogue adds one (bias, relu_bias, "
            "gelu_bias)");
  EXPECT_EQ(withAttr("a_batch_stride", Json(int64_t(63))),
            "manifest: entries[0].programs[0].steps[0].attrs.a_batch_stride: "
            "expected 0 or m * k");
  EXPECT_EQ(withAttr("b_batch_stride", Json(int64_t(64))),
            "manifest: entries[0].programs[0].steps[0].attrs.b_batch_stride: "
            "expected 0 or k * n");
  EXPECT_EQ(withAttr("m", Json(int64_t(0))),
            "manifest: entries[0].programs[0].steps[0].attrs.m: expected an "
            "integer >= 1");
  EXPECT_EQ(withAttr("batch", Json(int64_t(1) << 31)),
            "manifest: entries[0].programs[0].steps[0].attrs: m, n, k and "
            "batch must be below 2^31");
  // TF32 operands (f32 buffers of TF32 values) read back, with an f32
  // result only.
  Manifest tf32 = m;
  std::get<CublasMatmulStep>(tf32.entries[0].programs[0].steps[0].record)
      .operandType = "tf32";
  Manifest readTF32;
  error = readManifest(writeManifest(tf32), readTF32);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(readTF32.entries[0]
                .programs[0]
                .steps[0]
                .getIf<CublasMatmulStep>()
                ->operandType,
            "tf32");
  std::get<CublasMatmulStep>(tf32.entries[0].programs[0].steps[0].record)
      .resultType = "bf16";
  EXPECT_EQ(refusal(writeManifest(tf32)),
            "manifest: entries[0].programs[0].steps[0].attrs.result_type: "
            "'bf16' is not f32 (tf32 operands)");
  EXPECT_EQ(withAttr("operand_type", Json("f8")),
            "manifest: entries[0].programs[0].steps[0].attrs.operand_type: "
            "'f8' is not f32, bf16, f16 or tf32");
  // A CUDA library on another kind of device.
  Manifest vulkan = m;
  vulkan.devices[0] = {
      DeviceKind::Vulkan, 0, "spirv64-unknown-vulkan1.3", "", {}, ""};
  EXPECT_EQ(refusal(writeManifest(vulkan)),
            "manifest: entries[0].programs[0].steps[0]: cublas.matmul does "
            "not run on a vulkan device (the program's device 0)");
  Manifest cpu = m;
  cpu.devices[0] = {DeviceKind::Cpu, 0, "x86_64-unknown-linux-gnu",
                    "znver3", {}, ""};
  EXPECT_EQ(refusal(writeManifest(cpu)),
            "manifest: entries[0].programs[0].steps[0]: cublas.matmul does "
            "not run on a cpu device (the program's device 0)");
}

TEST(ArtifactTest, CudnnConvReadBackAndRefused) {
  Manifest m = cudnnManifest();
  Manifest read;
  std::optional<ReadError> error = readManifest(writeManifest(m), read);
  ASSERT_FALSE(error) << error->message;
  const auto *s = read.entries[0].programs[0].steps[0].getIf<CudnnConvStep>();
  ASSERT_TRUE(s);
  EXPECT_EQ(std::tie(s->src, s->weights, s->bias, s->dst),
            std::make_tuple(int64_t(0), int64_t(1), int64_t(2), int64_t(3)));
  EXPECT_EQ(s->dstShape, (Shape{1, 6, 4, 7}));
  EXPECT_EQ(s->pads, (Shape{1, 0, 1, 2}));
  EXPECT_EQ(s->dilations, (Shape{1, 2}));
  EXPECT_EQ(s->groups, 2);
  EXPECT_EQ(s->activation.kind, Activation::GeluTanh);
  auto withAttr = [&](const char *key, Json value) {
    return refusal(edited(m, [&](Json &root) {
      at(root, {"entries", 0, "programs", 0, "steps", 0, "attrs"})
          .set(key, value);
    }));
  };
  const std::string where = "manifest: entries[0].programs[0].steps[0].attrs";
  const std::string disagree =
      where + ": the shapes do not agree: src [N, C, S...], weights [O, C / "
              "groups, K...], dst [N, O, (S + pads - dilation * (K - 1) - 1) "
              "/ stride + 1 ...], pads at least 0";
  EXPECT_EQ(withAttr("activation", Json("hardswish")),
            where + ".activation: cuDNN's pointwise modes run none, relu, "
                    "sigmoid, tanh, gelu_erf, gelu_tanh and swish, not "
                    "'hardswish'");
  // TF32 operands (input and filter of TF32 values, run by cuDNN's TF32
  // engines) with an f32 result only.
  EXPECT_EQ(withAttr("operand_type", Json("tf32")), "");
  EXPECT_EQ(refusal(edited(m,
                           [&](Json &root) {
                             Json &attrs = at(root, {"entries", 0, "programs",
                                                     0, "steps", 0, "attrs"});
                             attrs.set("operand_type", Json("tf32"));
                             attrs.set("result_type", Json("f16"));
                           })),
            where + ".result_type: 'f16' is not f32 (tf32 operands)");
  EXPECT_EQ(withAttr("groups", Json(int64_t(4))),
            where + ": a conv2d's groups divide its output channels, its "
                    "strides and dilations are at least 1");
  EXPECT_EQ(withAttr("groups", Json(int64_t(1))), disagree);
  EXPECT_EQ(withAttr("dst_shape", Json::integers({1, 6, 4, 8})), disagree);
  EXPECT_EQ(withAttr("pads", Json::integers({1, 0, 1, 3})), disagree);
  EXPECT_EQ(withAttr("strides", Json::integers({2, 1, 1})),
            where + ": a convolution has k = 1 to 3 strides and dilations, "
                    "2k pads and shapes of k + 2 dimensions");
  EXPECT_EQ(withAttr("src_shape", Json::integers({1, 4, 7})),
            where + ": a convolution has k = 1 to 3 strides and dilations, "
                    "2k pads and shapes of k + 2 dimensions");
  // A 1-d convolution is one; a 4-d one is not.
  Manifest oneD = m;
  auto &c = std::get<CudnnConvStep>(oneD.entries[0].programs[0].steps[0].record);
  c.srcShape = {1, 4, 9};
  c.weightsShape = {6, 2, 3};
  c.dstShape = {1, 6, 9};
  c.strides = {1};
  c.pads = {1, 3};
  c.dilations = {2};
  oneD.entries[0].inputs[0].shape = c.srcShape;
  oneD.entries[0].inputs[1].shape = c.weightsShape;
  oneD.entries[0].outputs[0].shape = c.dstShape;
  Manifest readOneD;
  error = readManifest(writeManifest(oneD), readOneD);
  EXPECT_FALSE(error) << error->message;
  c.srcShape = {1, 4, 2, 2, 2, 9};
  EXPECT_NE(refusal(writeManifest(oneD)).find("k = 1 to 3"), std::string::npos);
  // A CUDA library on another kind of device.
  Manifest vulkan = m;
  vulkan.devices[0] = {
      DeviceKind::Vulkan, 0, "spirv64-unknown-vulkan1.3", "", {}, ""};
  EXPECT_EQ(refusal(writeManifest(vulkan)),
            "manifest: entries[0].programs[0].steps[0]: cudnn.conv does not "
            "run on a vulkan device (the program's device 0)");
}

TEST(ArtifactTest, DynamicStepsTooLargeAreRefused) {
  // everyStepKind(): the top-k is step 12, the NMS 13, the nonzero 14.
  Manifest m = twoRankManifest();
  auto withAttr = [&](int step, const char *key, Json value) {
    return refusal(edited(m, [&](Json &root) {
      at(root, {"entries", 0, "programs", 0, "steps", step, "attrs"})
          .set(key, value);
    }));
  };
  auto where = [](int step) {
    return "manifest: entries[0].programs[0].steps[" + std::to_string(step) +
           "].attrs";
  };
  // Sizes whose products overflow int64_t unless the reader stops them.
  const Json huge(int64_t(1) << 40);
  EXPECT_EQ(withAttr(12, "outer", huge),
            where(12) + ": the source must have fewer than 2^31 elements");
  EXPECT_EQ(withAttr(13, "num_boxes", huge),
            where(13) + ": the boxes, scores and selections must have fewer "
                        "than 2^31 elements");
  Json shape = Json::makeArray();
  shape.push(Json(int64_t(1) << 20));
  shape.push(Json(int64_t(1) << 20));
  EXPECT_EQ(withAttr(14, "shape", shape),
            where(14) + ".shape: the indices (rank x elements) must be fewer "
                        "than 2^31");
  EXPECT_EQ(withAttr(12, "outer", Json(int64_t(4))), "");
}

TEST(ArtifactTest, SingleProcessWorld) {
  Manifest m = twoRankManifest();
  m.world = singleProcessWorld(m.devices.size(), m.entries);
  ASSERT_EQ(m.world.ranks.size(), 1u);
  EXPECT_EQ(m.world.ranks[0].devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.world.ranks[0].programs[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(refusal(writeManifest(m)), "");
}

TEST(ArtifactTest, TheEmbeddedSourceReadsBackAndIsChecked) {
  // Absent: no source member (an artifact from before it).
  Manifest m = twoRankManifest();
  Manifest read;
  ASSERT_FALSE(readManifest(writeManifest(m), read));
  EXPECT_FALSE(read.source);
  // The graph as given, with a weight only it reads.
  m.weights.tensors.push_back({"w.original", "F32", {4, 4}, 9});
  m.source = Source{SourceGraph::Given, {"w.original"}};
  std::string text = writeManifest(m);
  Manifest given;
  ASSERT_FALSE(readManifest(text, given));
  ASSERT_TRUE(given.source);
  EXPECT_EQ(given.source->graph, SourceGraph::Given);
  EXPECT_EQ(given.source->weights, std::vector<std::string>{"w.original"});
  EXPECT_EQ(writeManifest(given), text);
  // An unknown graph, a weight that is not one of the tensors, and one a
  // buffer names are refused, naming the field.
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"source"}).set("graph", "folded");
                           })),
            "manifest: source.graph: unknown source graph 'folded'");
  m.source->weights = {"nowhere"};
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: source.weights[0]: 'nowhere' is not one of the "
            "weights' tensors");
  m.source->weights = {"w"};
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: source.weights[0]: 'w' is a buffer's weight (only "
            "weights that no buffer names are the source's own)");
}

TEST(ArtifactTest, AnotherVersionAsksToRecompile) {
  std::string text = edited(twoRankManifest(),
                            [](Json &root) { root.set("version", 1); });
  Manifest m;
  std::optional<ReadError> error = readManifest(text, m);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, ReadError::Kind::Version);
  EXPECT_EQ(error->message,
            "manifest: format version 1; this runtime reads versions 2 to 4 "
            "(recompile with this Loom's loom-compile)");
}

TEST(ArtifactTest, OutputBoundsAreStrict) {
  auto withBound = [](int64_t version, int64_t lengthOutput) {
    return edited(twoRankManifest(), [&](Json &root) {
      root.set("version", version);
      at(root, {"entries", 0, "outputs", 0})
          .set("bound", Json::makeObject()
                            .set("dim", 1)
                            .set("length_output", lengthOutput));
    });
  };
  EXPECT_EQ(refusal(withBound(2, 1)),
            "manifest: entries[0].outputs[0].bound: needs manifest version 3");
  EXPECT_EQ(refusal(withBound(3, 0)),
            "manifest: entries[0].outputs[0].bound.length_output: is not "
            "another output");
  // A manifest without bounds is still written as version 2.
  EXPECT_NE(writeManifest(twoRankManifest()).find("\"version\": 2"),
            std::string::npos);
}

TEST(ArtifactTest, TiedOutputsAreStrict) {
  // Entry 0 has input x and output y, both f32 [1, 8, 4, 4].
  auto withTie = [](int64_t version, Json tie,
                    std::function<void(Json &)> more = nullptr) {
    return edited(twoRankManifest(), [&](Json &root) {
      root.set("version", version);
      at(root, {"entries", 0, "outputs", 0}).set("tied_input", tie);
      if (more)
        more(root);
    });
  };
  Manifest m;
  ASSERT_FALSE(readManifest(withTie(4, Json(int64_t(0))), m));
  EXPECT_EQ(m.entries[0].outputs[0].tiedInput, std::optional<int64_t>(0));
  EXPECT_NE(writeManifest(m).find("\"version\": 4"), std::string::npos);
  EXPECT_EQ(refusal(withTie(3, Json(int64_t(0)))),
            "manifest: entries[0].outputs[0].tied_input: needs manifest "
            "version 4");
  EXPECT_EQ(refusal(withTie(4, Json(int64_t(1)))),
            "manifest: entries[0].outputs[0].tied_input: is not an input");
  EXPECT_EQ(refusal(withTie(4, Json(int64_t(0)), [](Json &root) {
              at(root, {"entries", 0, "inputs", 0})
                  .set("shape", Json::integers({1, 8, 4, 5}));
            })),
            "manifest: entries[0].outputs[0].tied_input: input 0 has another "
            "dtype or shape than the output");
  EXPECT_EQ(refusal(withTie(4, Json(int64_t(0)), [](Json &root) {
              at(root, {"entries", 0, "inputs", 0}).set("tied_input", 0);
            })),
            "manifest: entries[0].inputs[0].tied_input: only an output is "
            "tied to an input");
}

TEST(ArtifactTest, BadManifestsNameTheField) {
  Manifest m = twoRankManifest();
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"entries", 0, "programs", 0, "steps", 3})
                                 .set("op", "onednn.conv3d");
                           })),
            "manifest: entries[0].programs[0].steps[3].op: unknown step "
            "'onednn.conv3d'");
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"entries", 0, "programs", 1})
                                 .set("device", 2);
                           })),
            "manifest: entries[0].programs[1].device: device 2 is out of "
            "range (the manifest has 2)");
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"entries", 0, "buffers", 4})
                                 .set("device", 7);
                           })),
            "manifest: entries[0].buffers[4].device: device 7 is out of "
            "range (the manifest has 2)");
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"world", "ranks", 1})
                                 .set("devices", Json::integers({1, 5}));
                           })),
            "manifest: world.ranks[1].devices: device 5 is out of range (the "
            "manifest has 2)");
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"entries", 0, "programs", 0, "steps", 1,
                                       "args"})
                                 .set("src", 8);
                           })),
            "manifest: entries[0].programs[0].steps[1].args.src: buffer 8 is "
            "on device 1; the program runs on device 0");
}

TEST(ArtifactTest, MatmulViewsReadBackAndNegativesAreRefused) {
  Manifest m = twoRankManifest();
  auto withViews = [&](int64_t stride, int64_t offset) {
    return edited(m, [&](Json &root) {
      Json &attrs = at(root, {"entries", 0, "programs", 0, "steps", 6,
                              "attrs"});
      for (const char *role : {"src_view", "weights_view", "dst_view"})
        attrs.set(role, Json::makeObject()
                            .set("dims", Json::integers({4, 4}))
                            .set("strides", Json::integers({stride, 1}))
                            .set("offset", offset));
    });
  };
  Manifest read;
  std::optional<ReadError> error = readManifest(withViews(8, 2), read);
  ASSERT_FALSE(error) << error->message;
  const auto *matmul =
      read.entries[0].programs[0].steps[6].getIf<MatmulStep>();
  ASSERT_TRUE(matmul && matmul->views);
  EXPECT_EQ((*matmul->views)[2].strides, (Shape{8, 1}));
  EXPECT_EQ((*matmul->views)[1].offset, 2);
  // Negatives would defeat the runtime's bounds check (a view's last
  // element as offset + (dims - 1) * strides).
  std::string view = "manifest: entries[0].programs[0].steps[6].attrs."
                     "src_view.";
  EXPECT_EQ(refusal(withViews(-8, 2)),
            view + "strides: expected an array of non-negative integers");
  EXPECT_EQ(refusal(withViews(8, -1)),
            view + "offset: expected an integer >= 0");
}

TEST(ArtifactTest, BadWorldsAreRefused) {
  Manifest m = twoRankManifest();
  // Both ranks drive device 1.
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             at(root, {"world", "ranks", 0})
                                 .set("devices", Json::integers({0, 1}));
                           })),
            "manifest: world.ranks[1].devices: device 1 also belongs to "
            "rank 0");
  // A rank runs a program on a device it does not drive.
  EXPECT_EQ(refusal(edited(m,
                           [](Json &root) {
                             Json programs = Json::makeArray();
                             programs.push(Json::integers({0, 1}));
                             at(root, {"world", "ranks", 0})
                                 .set("programs", std::move(programs));
                           })),
            "manifest: world.ranks[0].programs[0]: program 1 runs on device "
            "1, which is not one of this rank's");
  // A channel to a rank that does not exist, and one without its other
  // side.
  m.world.ranks[0].channels[0].peer = 4;
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: world.ranks[0].channels[0].peer: rank 4 is not "
            "another rank of the 2");
  m.world.ranks[0].channels[0].peer = 1;
  m.world.ranks[1].channels[0].bytes = 256;
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: world.ranks[0].channels[0]: rank 1 has no matching "
            "side of channel 'act' (the other direction, same bytes and "
            "dtype)");
}

TEST(ArtifactTest, ControlFlowGoesForward) {
  Manifest m = twoRankManifest();
  m.entries[0].programs[0].steps[2] = BranchStep{6, 1};
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: entries[0].programs[0].steps[2].attrs: goes to step 1, "
            "not after this step and within the " +
                std::to_string(everyStepKind().size()) + " steps");
}

TEST(ArtifactTest, Conv2dStepsHaveTwoOrThreeSpatialDimensions) {
  // A 3-D convolution (NCDHW, oneDNN's 3-D convolution) reads back; a 1-D
  // one is refused (the compiler makes it 2-D over a unit height).
  Manifest m = twoRankManifest();
  auto &conv = std::get<Conv2dStep>(m.entries[0].programs[0].steps[4].record);
  conv.srcShape = {1, 8, 1, 4, 4};
  conv.weightsShape = {8, 8, 1, 3, 3};
  conv.dstShape = {1, 8, 1, 4, 4};
  conv.strides = {1, 1, 1};
  conv.pads = {0, 1, 1, 0, 1, 1};
  conv.dilations = {1, 1, 1};
  Manifest read;
  std::optional<ReadError> error = readManifest(writeManifest(m), read);
  ASSERT_FALSE(error) << error->message;
  const auto *back = read.entries[0].programs[0].steps[4].getIf<Conv2dStep>();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->pads, (Shape{0, 1, 1, 0, 1, 1}));
  conv.srcShape = {1, 8, 16};
  conv.weightsShape = {8, 8, 3};
  conv.dstShape = {1, 8, 16};
  conv.strides = {1};
  conv.pads = {1, 1};
  conv.dilations = {1};
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: entries[0].programs[0].steps[4].attrs: a convolution "
            "has k = 2 to 3 strides and dilations, 2k pads and shapes of "
            "k + 2 dimensions");
}

TEST(ArtifactTest, NumbersThatAreNotFiniteAreRefused) {
  Manifest m = twoRankManifest();
  m.entries[0].programs[0].steps[4].getIf<Conv2dStep>()->activation.beta =
      std::numeric_limits<double>::infinity();
  EXPECT_EQ(refusal(writeManifest(m)),
            "manifest: entries[0].programs[0].steps[4].attrs.activation_beta: "
            "expected a number");
}

//===----------------------------------------------------------------------===//
// The pipelined step of a multi-rank world
//===----------------------------------------------------------------------===//

TEST(ArtifactTest, StepReadsBackAsWritten) {
  Manifest m = twoRankStep();
  std::string text = writeManifest(m);
  Manifest back;
  std::optional<ReadError> error = readManifest(text, back);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(writeManifest(back), text);
  EXPECT_EQ(back.world.microBatches, 2);
  ASSERT_EQ(back.world.ranks[1].actions.size(), 6u);
  EXPECT_EQ(back.world.ranks[1].actions[5].kind(), ActionKind::Accumulate);
  EXPECT_EQ(back.world.ranks[1].slots[2].tensor, "w");
}

TEST(ArtifactTest, StepReceivesOutOfOrderAreNamed) {
  Manifest m = twoRankStep();
  std::swap(std::get<ExchangeAction>(m.world.ranks[1].actions[0].record),
            std::get<ExchangeAction>(m.world.ranks[1].actions[3].record));
  std::optional<std::string> why = checkWorldStep(m.world);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "rank 1, action 0 (exchange): receives 'f.y->g.x' "
                  "micro-batch 1 (16 bytes f32) from rank 0, whose send in "
                  "order (action 1) is 'f.y->g.x' micro-batch 0 (16 bytes "
                  "f32): per pair of ranks the sends must equal the receives "
                  "in order, size and dtype");
  // The reader runs the same check.
  EXPECT_NE(refusal(writeManifest(m)).find("manifest: world: rank 1, action 0"),
            std::string::npos);
}

TEST(ArtifactTest, StepDeadlockWithBlockingSendsIsNamed) {
  // Rank 0 first waits for something rank 1 sends only at its end.
  Manifest m = twoRankStep();
  Rank &r0 = m.world.ranks[0], &r1 = m.world.ranks[1];
  r0.channels.push_back({"back", ChannelDirection::Recv, 1, 16, "f32"});
  r1.channels.push_back({"back", ChannelDirection::Send, 0, 16, "f32"});
  r0.actions.insert(r0.actions.begin(), {ExchangeAction{{{1, 1, 0}}}});
  r1.actions.push_back({ExchangeAction{{{1, 1, 0}}}});
  std::optional<std::string> why = checkWorldStep(m.world);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "the exchanges deadlock when a send blocks until it is "
                  "received: rank 0, action 0 (exchange) waits to receive "
                  "'back' micro-batch 0 (16 bytes f32) from rank 1; rank 1, "
                  "action 0 (exchange) waits to receive 'f.y->g.x' "
                  "micro-batch 0 (16 bytes f32) from rank 0");
  // Posted together with the send it waits on, the receive completes.
  Manifest batched = twoRankStep();
  batched.world.ranks[0].channels.push_back(
      {"back", ChannelDirection::Recv, 1, 16, "f32"});
  batched.world.ranks[1].channels.push_back(
      {"back", ChannelDirection::Send, 0, 16, "f32"});
  std::get<ExchangeAction>(batched.world.ranks[0].actions[1].record)
      .messages.push_back({1, 1, 0});
  std::get<ExchangeAction>(batched.world.ranks[1].actions[0].record)
      .messages.push_back({1, 1, 0});
  EXPECT_FALSE(checkWorldStep(batched.world));
}

/// twoRankStep with "w" also a parameter of rank 0, whose gradient the two
/// ranks all-reduce at the end (data-parallel replicas).
Manifest twoRankReplicas() {
  Manifest m = twoRankStep();
  m.weights.tensors.push_back({"v", "F32", {4}, 8});
  Rank &r0 = m.world.ranks[0], &r1 = m.world.ranks[1];
  r0.slots.push_back({SlotKind::Gradient, "grad:w", "f32", {4}, 0, "w", 16});
  r0.slots.push_back({SlotKind::Gradient, "grad:v", "f32", {4}, 0, "v", 16});
  r0.actions.push_back({AllReduceAction{{0, 1}, {2}}});
  r1.actions.push_back({AllReduceAction{{0, 1}, {2}}});
  return m;
}

/// \p m written and read back into \p back, which writes the same text.
void readBack(const Manifest &m, Manifest &back) {
  std::string text = writeManifest(m);
  std::optional<ReadError> error = readManifest(text, back);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(writeManifest(back), text);
}

TEST(ArtifactTest, StepAllReduceReadsBackAndMarksReplicaCopies) {
  Manifest back;
  readBack(twoRankReplicas(), back);
  ASSERT_EQ(back.world.ranks[1].actions.size(), 7u);
  const auto &x = std::get<AllReduceAction>(back.world.ranks[1].actions[6].record);
  EXPECT_EQ(x.ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(x.slots, (std::vector<int64_t>{2}));
  EXPECT_FALSE(replicaCopy(back.world, 0, 2));
  EXPECT_TRUE(replicaCopy(back.world, 1, 2));
  EXPECT_FALSE(replicaCopy(back.world, 0, 3));
}

TEST(ArtifactTest, StepAllReducesOfOtherTensorsAreNamed) {
  Manifest m = twoRankReplicas();
  std::get<AllReduceAction>(m.world.ranks[0].actions.back().record).slots = {3};
  std::optional<std::string> why = checkWorldStep(m.world);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "rank 1, action 6 (all_reduce) over ranks 0 1 of 'w' (16 "
                  "bytes), while rank 0, action 4 (all_reduce) over ranks 0 "
                  "1 of 'v' (16 bytes): the ranks of a group must reach the "
                  "same all-reduces in the same order");
}

TEST(ArtifactTest, StepAllReduceAMemberNeverReachesIsADeadlock) {
  Manifest m = twoRankReplicas();
  m.world.ranks[1].actions.pop_back();
  std::optional<std::string> why = checkWorldStep(m.world);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "the exchanges deadlock when a send blocks until it is "
                  "received: rank 0, action 4 (all_reduce) over ranks 0 1 of "
                  "'w' (16 bytes) waits for rank(s) 1");
  // Before an exchange its peer waits at: both wait.
  Manifest early = twoRankReplicas();
  std::vector<Action> &a1 = early.world.ranks[1].actions;
  std::rotate(a1.begin(), a1.end() - 1, a1.end());
  why = checkWorldStep(early.world);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("rank 1, action 0 (all_reduce) over ranks 0 1 of 'w' "
                      "(16 bytes) waits for rank(s) 0"),
            std::string::npos)
      << *why;
}

TEST(ArtifactTest, StepBadAllReducesAreRefusedByField) {
  Manifest m = twoRankReplicas();
  auto withMember = [&](const char *key, Json value) {
    return edited(m, [&](Json &root) {
      at(root, {"world", "ranks", 1, "actions", 6}).set(key, value);
    });
  };
  EXPECT_EQ(refusal(withMember("ranks", Json::integers({1}))),
            "manifest: world.ranks[1].actions[6].ranks: expected at least two "
            "ranks of the 2, ascending, this rank (1) among them");
  EXPECT_EQ(refusal(withMember("ranks", Json::integers({1, 0}))),
            "manifest: world.ranks[1].actions[6].ranks: expected at least two "
            "ranks of the 2, ascending, this rank (1) among them");
  EXPECT_EQ(refusal(withMember("slots", Json::integers({1}))),
            "manifest: world.ranks[1].actions[6].slots[0]: an all-reduce sums "
            "gradient slots");
  EXPECT_EQ(refusal(withMember("slots", Json::integers({2, 2}))),
            "manifest: world.ranks[1].actions[6].slots[0]: slot 2 appears "
            "twice");
}

/// twoRankReplicas whose ranks then update "w" by SGD with momentum.
Manifest twoRankUpdates() {
  Manifest m = twoRankReplicas();
  m.world.optimizer.kind = OptimizerKind::Sgd;
  m.world.optimizer.lr = 0.5;
  m.world.optimizer.momentum = 0.9;
  for (Rank &r : m.world.ranks) {
    const int64_t grad = 2; // "grad:w" on both ranks
    r.slots.push_back({SlotKind::Weight, "weight:w", "f32", {4}, 0, "w", 16});
    r.slots.push_back({SlotKind::State, "state0:w", "f32", {4}, 0, "w", 16});
    int64_t n = r.slots.size();
    r.actions.push_back({UpdateAction{{n - 2}, {grad}, {n - 1}}});
  }
  return m;
}

TEST(ArtifactTest, StepUpdatesReadBackAsWritten) {
  Manifest back;
  readBack(twoRankUpdates(), back);
  ASSERT_EQ(back.world.ranks[1].actions.size(), 8u);
  EXPECT_EQ(back.world.optimizer.kind, OptimizerKind::Sgd);
  EXPECT_EQ(back.world.optimizer.momentum, 0.9);
  EXPECT_EQ(back.world.optimizer.stateTensors(), 1);
  EXPECT_EQ(back.world.ranks[1].actions.back().kind(), ActionKind::Update);
}

TEST(ArtifactTest, StepBadUpdatesAreRefusedByField) {
  Manifest m = twoRankUpdates();
  auto withMember = [&](const char *key, Json value) {
    return edited(m, [&](Json &root) {
      at(root, {"world", "ranks", 1, "actions", 7}).set(key, value);
    });
  };
  EXPECT_EQ(refusal(withMember("states", Json::integers({}))),
            "manifest: world.ranks[1].actions[7]: expected parameters, a "
            "gradient each and 1 state slot(s) each (sgd)");
  EXPECT_EQ(refusal(withMember("gradients", Json::integers({3}))),
            "manifest: world.ranks[1].actions[7].gradients: slot 3 is not a "
            "gradient slot of 'w'");
  EXPECT_EQ(refusal(withMember("params", Json::integers({2}))),
            "manifest: world.ranks[1].actions[7].params: slot 2 is not a "
            "weight slot");
  std::string noOptimizer = edited(m, [&](Json &root) {
    at(root, {"world", "optimizer"}).set("kind", Json("lamb"));
  });
  EXPECT_EQ(refusal(noOptimizer),
            "manifest: world.optimizer.kind: expected sgd or adam, not "
            "'lamb'");
}

TEST(ArtifactTest, StepBadActionsAreRefusedByField) {
  Manifest m = twoRankStep();
  auto withActionMember = [&](int r, int a, const char *key, Json value) {
    return edited(m, [&](Json &root) {
      at(root, {"world", "ranks", r, "actions", a}).set(key, value);
    });
  };
  EXPECT_EQ(refusal(withActionMember(1, 1, "outputs", Json::integers({2}))),
            "manifest: world.ranks[1].actions[1].outputs[0]: an output is "
            "written to a value slot");
  EXPECT_EQ(refusal(withActionMember(1, 2, "dst", Json(int64_t(1)))),
            "manifest: world.ranks[1].actions[2].dst: accumulates into a "
            "sum or gradient slot");
  EXPECT_EQ(refusal(withActionMember(0, 0, "micro_batch",
                                     Json(int64_t(2)))),
            "manifest: world.ranks[0].actions[0].micro_batch: out of range "
            "(the step has 2 micro-batches)");
  EXPECT_EQ(refusal(withActionMember(0, 0, "entry", Json(int64_t(1)))),
            "manifest: world.ranks[0].actions[0].entry: entry 1 has no "
            "program on this rank");
  EXPECT_EQ(refusal(withActionMember(0, 0, "inputs", Json::integers({5}))),
            "manifest: world.ranks[0].actions[0].inputs[0]: expected a slot "
            "of the rank");
}

TEST(ArtifactTest, TeamKernelsReadBackAndHaveRangeOne) {
  Manifest m = twoRankManifest();
  auto &kernel = std::get<KernelStep>(m.entries[0].programs[0].steps[0].record);
  kernel.range = 1;
  kernel.team = true;
  std::string text = writeManifest(m);
  Manifest read;
  std::optional<ReadError> error = readManifest(text, read);
  ASSERT_FALSE(error) << error->message;
  const auto *k = read.entries[0].programs[0].steps[0].getIf<KernelStep>();
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->team);
  EXPECT_EQ(writeManifest(read), text);
  // A kernel that is no team has no "team" member.
  EXPECT_EQ(writeManifest(twoRankManifest()).find("\"team\""),
            std::string::npos);
  // The refusal of the manifest whose kernel step has \p key set to \p v.
  auto refused = [&](const char *key, Json v) {
    return refusal(edited(m, [&](Json &root) {
      at(root, {"entries", 0, "programs", 0, "steps", 0}).set(key, v);
    }));
  };
  EXPECT_EQ(refused("range", 4),
            "manifest: entries[0].programs[0].steps[0]: a team kernel has "
            "range 1 and grain 1 (every thread of the team calls it once)");
  EXPECT_EQ(refused("team", 1),
            "manifest: entries[0].programs[0].steps[0].team: expected true or "
            "false");
}
