//===- Schema.cpp - The artifact schema's vocabulary ----------------------===//
//
// Part of Loom. See Schema.h: the spellings of the kinds (from their .def
// lists), the operands of each step kind and the single-process world.
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Schema.h"

#include <cstdio>

using namespace loom;
using namespace loom::artifact;

std::string_view artifact::stepKindName(StepKind kind) {
  switch (kind) {
#define LOOM_STEP_KIND(Kind, Spelling)                                         \
  case StepKind::Kind:                                                         \
    return Spelling;
#include "loom/Artifact/StepKinds.def"
  }
  return "?";
}

std::optional<StepKind> artifact::parseStepKind(std::string_view name) {
#define LOOM_STEP_KIND(Kind, Spelling)                                         \
  if (name == Spelling)                                                        \
    return StepKind::Kind;
#include "loom/Artifact/StepKinds.def"
  return std::nullopt;
}

std::string_view artifact::bufferKindName(BufferKind kind) {
  switch (kind) {
#define LOOM_BUFFER_KIND(Kind, Spelling)                                       \
  case BufferKind::Kind:                                                       \
    return Spelling;
#include "loom/Artifact/BufferKinds.def"
  }
  return "?";
}

std::optional<BufferKind> artifact::parseBufferKind(std::string_view name) {
#define LOOM_BUFFER_KIND(Kind, Spelling)                                       \
  if (name == Spelling)                                                        \
    return BufferKind::Kind;
#include "loom/Artifact/BufferKinds.def"
  return std::nullopt;
}

std::string_view artifact::deviceKindName(DeviceKind kind) {
  switch (kind) {
#define LOOM_DEVICE_KIND(Kind, Spelling)                                       \
  case DeviceKind::Kind:                                                       \
    return Spelling;
#include "loom/Artifact/DeviceKinds.def"
  }
  return "?";
}

std::optional<DeviceKind> artifact::parseDeviceKind(std::string_view name) {
#define LOOM_DEVICE_KIND(Kind, Spelling)                                       \
  if (name == Spelling)                                                        \
    return DeviceKind::Kind;
#include "loom/Artifact/DeviceKinds.def"
  return std::nullopt;
}

std::string_view artifact::convAlgorithmName(ConvAlgorithm a) {
  switch (a) {
  case ConvAlgorithm::Direct:
    return "direct";
  case ConvAlgorithm::Winograd:
    return "winograd";
  }
  return "?";
}

std::string_view artifact::poolAlgorithmName(PoolAlgorithm a) {
  switch (a) {
  case PoolAlgorithm::Max:
    return "max";
  case PoolAlgorithm::AvgIncludePad:
    return "avg_include_pad";
  case PoolAlgorithm::AvgExcludePad:
    return "avg_exclude_pad";
  }
  return "?";
}

std::string_view artifact::binaryAlgorithmName(BinaryAlgorithm a) {
  switch (a) {
  case BinaryAlgorithm::Add:
    return "add";
  case BinaryAlgorithm::Mul:
    return "mul";
  }
  return "?";
}

std::string_view artifact::cublasEpilogueName(CublasEpilogue e) {
  switch (e) {
  case CublasEpilogue::Default:
    return "default";
  case CublasEpilogue::Relu:
    return "relu";
  case CublasEpilogue::Bias:
    return "bias";
  case CublasEpilogue::ReluBias:
    return "relu_bias";
  case CublasEpilogue::Gelu:
    return "gelu";
  case CublasEpilogue::GeluBias:
    return "gelu_bias";
  }
  return "?";
}

bool artifact::cublasEpilogueHasBias(CublasEpilogue e) {
  switch (e) {
  case CublasEpilogue::Default:
  case CublasEpilogue::Relu:
  case CublasEpilogue::Gelu:
    return false;
  case CublasEpilogue::Bias:
  case CublasEpilogue::ReluBias:
  case CublasEpilogue::GeluBias:
    return true;
  }
  return false;
}

bool artifact::cudnnRunsActivation(Activation a) {
  switch (a) {
  case Activation::None:
  case Activation::Relu:
  case Activation::Sigmoid:
  case Activation::Tanh:
  case Activation::GeluErf:
  case Activation::GeluTanh:
  case Activation::Swish:
    return true;
  case Activation::HardSwish:
  case Activation::Clip:
  case Activation::HardSigmoid:
  case Activation::LeakyRelu:
    return false;
  }
  return false;
}

namespace {

/// The enumerator of [First, Last] whose name is \p name.
template <typename Enum, typename NameFn>
std::optional<Enum> parseByName(std::string_view name, Enum last,
                                NameFn nameOf) {
  for (int i = 0; i <= int(last); ++i)
    if (nameOf(Enum(i)) == name)
      return Enum(i);
  return std::nullopt;
}

} // namespace

std::optional<ConvAlgorithm> artifact::parseConvAlgorithm(std::string_view n) {
  return parseByName(n, ConvAlgorithm::Winograd, convAlgorithmName);
}

std::string_view artifact::sourceGraphName(SourceGraph g) {
  switch (g) {
  case SourceGraph::Given:
    return "given";
  case SourceGraph::Compiled:
    return "compiled";
  }
  return "?";
}

std::optional<SourceGraph> artifact::parseSourceGraph(std::string_view n) {
  return parseByName(n, SourceGraph::Compiled, sourceGraphName);
}

std::optional<PoolAlgorithm> artifact::parsePoolAlgorithm(std::string_view n) {
  return parseByName(n, PoolAlgorithm::AvgExcludePad, poolAlgorithmName);
}

std::optional<BinaryAlgorithm>
artifact::parseBinaryAlgorithm(std::string_view n) {
  return parseByName(n, BinaryAlgorithm::Mul, binaryAlgorithmName);
}

std::optional<CublasEpilogue>
artifact::parseCublasEpilogue(std::string_view n) {
  return parseByName(n, CublasEpilogue::GeluBias, cublasEpilogueName);
}

std::string artifact::checksumHex(uint64_t checksum) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)checksum);
  return buf;
}

int64_t artifact::dtypeBytes(std::string_view dtype) {
  // Loom's one list of element types; i1 is stored a byte per element.
#define LOOM_ELEMENT_TYPE(Kind, MLIRName, DType, ONNX, Bits, IsFloat)          \
  if (dtype == MLIRName)                                                       \
    return Bits < 8 ? 1 : Bits / 8;
#include "loom/Support/ElementTypes.def"
  return 0;
}

std::vector<Operand> artifact::operands(const Step &step) {
  std::vector<Operand> out;
  auto optional = [&](std::string_view role, int64_t id) {
    if (id != -1)
      out.push_back({role, id});
  };
  switch (step.kind()) {
  case StepKind::Kernel:
    for (int64_t id : step.getIf<KernelStep>()->args)
      out.push_back({"args", id});
    return out;
  case StepKind::Copy: {
    const auto &s = *step.getIf<CopyStep>();
    return {{"src", s.src}, {"dst", s.dst}};
  }
  case StepKind::Branch:
    return {{"cond", step.getIf<BranchStep>()->cond}};
  case StepKind::Jump:
    return out;
  case StepKind::Conv2d: {
    const auto &s = *step.getIf<Conv2dStep>();
    out = {{"src", s.src}, {"weights", s.weights}};
    optional("bias", s.bias);
    optional("sum", s.sum);
    out.push_back({"dst", s.dst});
    return out;
  }
  case StepKind::Conv2dFilterGrad: {
    const auto &s = *step.getIf<Conv2dFilterGradStep>();
    return {{"src", s.src}, {"weights", s.weights}, {"dst", s.dst}};
  }
  case StepKind::Matmul: {
    const auto &s = *step.getIf<MatmulStep>();
    out = {{"src", s.src}, {"weights", s.weights}};
    optional("bias", s.bias);
    optional("sum", s.sum);
    out.push_back({"dst", s.dst});
    return out;
  }
  case StepKind::Pool2d: {
    const auto &s = *step.getIf<Pool2dStep>();
    return {{"src", s.src}, {"dst", s.dst}};
  }
  case StepKind::Concat: {
    const auto &s = *step.getIf<ConcatStep>();
    for (int64_t id : s.srcs)
      out.push_back({"srcs", id});
    out.push_back({"dst", s.dst});
    return out;
  }
  case StepKind::Binary: {
    const auto &s = *step.getIf<BinaryStep>();
    out = {{"src0", s.src0}, {"src1", s.src1}};
    optional("shift", s.shift);
    out.push_back({"dst", s.dst});
    return out;
  }
  case StepKind::Sgemm: {
    const auto &s = *step.getIf<SgemmStep>();
    return {{"a", s.a}, {"b", s.b}, {"c", s.c}};
  }
  case StepKind::Dispatch:
    for (int64_t id : step.getIf<DispatchStep>()->args)
      out.push_back({"buffers", id});
    return out;
  case StepKind::CublasMatmul: {
    const auto &s = *step.getIf<CublasMatmulStep>();
    out = {{"a", s.a}, {"b", s.b}};
    optional("bias", s.bias);
    out.push_back({"d", s.d});
    return out;
  }
  case StepKind::CudnnConv: {
    const auto &s = *step.getIf<CudnnConvStep>();
    out = {{"src", s.src}, {"weights", s.weights}};
    optional("bias", s.bias);
    out.push_back({"dst", s.dst});
    return out;
  }
  case StepKind::TopK: {
    const auto &s = *step.getIf<TopKStep>();
    out = {{"src", s.src}};
    optional("valid", s.valid);
    for (auto [role, id] : {std::pair{"values", s.values},
                            {"indices", s.indices}, {"count", s.count}})
      out.push_back({role, id});
    return out;
  }
  case StepKind::NonMaxSuppression: {
    const auto &s = *step.getIf<NonMaxSuppressionStep>();
    out = {{"boxes", s.boxes}, {"scores", s.scores}};
    optional("valid", s.valid);
    out.push_back({"selected", s.selected});
    out.push_back({"count", s.count});
    return out;
  }
  case StepKind::NonZero: {
    const auto &s = *step.getIf<NonZeroStep>();
    return {{"src", s.src}, {"indices", s.indices}, {"count", s.count}};
  }
  case StepKind::UpdateSlice: {
    const auto &s = *step.getIf<UpdateSliceStep>();
    return {{"base", s.base},
            {"update", s.update},
            {"offsets", s.offsets},
            {"dst", s.dst}};
  }
  case StepKind::Attention: {
    const auto &s = *step.getIf<AttentionStep>();
    out = {{"q", s.q}, {"k", s.k}, {"v", s.v}};
    optional("length", s.length);
    optional("shard", s.shard);
    out.push_back({"dst", s.dst});
    optional("lse", s.lse);
    return out;
  }
  case StepKind::WorldRank:
    return {{"dst", step.getIf<WorldRankStep>()->dst}};
  case StepKind::AllGather: {
    const auto &s = *step.getIf<AllGatherStep>();
    return {{"src", s.src}, {"dst", s.dst}};
  }
  }
  return out;
}

bool artifact::stepRunsOn(StepKind step, DeviceKind device) {
  bool gpu = false, cuda = false;
  switch (device) {
  case DeviceKind::Cpu:
    break;
  case DeviceKind::Cuda:
    cuda = true;
    gpu = true;
    break;
  case DeviceKind::Vulkan:
    gpu = true;
    break;
  }
  switch (step) {
  case StepKind::Copy:
  case StepKind::Branch:
  case StepKind::Jump:
  case StepKind::WorldRank:
  case StepKind::AllGather:
    return true;
  case StepKind::Dispatch:
    return gpu;
  case StepKind::CublasMatmul:
  case StepKind::CudnnConv:
    return cuda;
  case StepKind::Kernel:
  case StepKind::Conv2d:
  case StepKind::Conv2dFilterGrad:
  case StepKind::Matmul:
  case StepKind::Pool2d:
  case StepKind::Concat:
  case StepKind::Binary:
  case StepKind::Sgemm:
  case StepKind::TopK:
  case StepKind::NonMaxSuppression:
  case StepKind::NonZero:
  case StepKind::UpdateSlice:
  case StepKind::Attention:
    return !gpu;
  }
  return false;
}

std::optional<int64_t> artifact::controlTarget(const Step &step) {
  if (const auto *branch = step.getIf<BranchStep>())
    return branch->elseStep;
  if (const auto *jump = step.getIf<JumpStep>())
    return jump->to;
  return std::nullopt;
}

World artifact::singleProcessWorld(int64_t numDevices,
                                   const std::vector<Entry> &entries) {
  Rank rank;
  for (int64_t d = 0; d < numDevices; ++d)
    rank.devices.push_back(d);
  for (const Entry &e : entries) {
    rank.programs.emplace_back();
    for (size_t p = 0; p < e.programs.size(); ++p)
      rank.programs.back().push_back(int64_t(p));
  }
  World world;
  world.ranks.push_back(std::move(rank));
  return world;
}

std::string_view artifact::slotKindName(SlotKind kind) {
  switch (kind) {
#define LOOM_SLOT_KIND(Kind, Spelling, PerMicroBatch, Summed)                  \
  case SlotKind::Kind:                                                         \
    return Spelling;
#include "loom/Artifact/SlotKinds.def"
  }
  return "?";
}

std::optional<SlotKind> artifact::parseSlotKind(std::string_view name) {
#define LOOM_SLOT_KIND(Kind, Spelling, PerMicroBatch, Summed)                  \
  if (name == Spelling)                                                        \
    return SlotKind::Kind;
#include "loom/Artifact/SlotKinds.def"
  return std::nullopt;
}

bool artifact::slotPerMicroBatch(SlotKind kind) {
  switch (kind) {
#define LOOM_SLOT_KIND(Kind, Spelling, PerMicroBatch, Summed)                  \
  case SlotKind::Kind:                                                         \
    return PerMicroBatch;
#include "loom/Artifact/SlotKinds.def"
  }
  return false;
}

bool artifact::slotSummed(SlotKind kind) {
  switch (kind) {
#define LOOM_SLOT_KIND(Kind, Spelling, PerMicroBatch, Summed)                  \
  case SlotKind::Kind:                                                         \
    return Summed;
#include "loom/Artifact/SlotKinds.def"
  }
  return false;
}

int64_t Optimizer::stateTensors() const {
  switch (kind) {
  case OptimizerKind::None:
    return 0;
  case OptimizerKind::Sgd:
    return momentum != 0 ? 1 : 0;
  case OptimizerKind::Adam:
    return 2;
  }
  return 0;
}

std::string_view Optimizer::name() const {
  switch (kind) {
  case OptimizerKind::None:
    return "none";
  case OptimizerKind::Sgd:
    return "sgd";
  case OptimizerKind::Adam:
    return "adam";
  }
  return "?";
}

std::string_view artifact::actionKindName(ActionKind kind) {
  switch (kind) {
#define LOOM_ACTION_KIND(Kind, Spelling)                                       \
  case ActionKind::Kind:                                                       \
    return Spelling;
#include "loom/Artifact/ActionKinds.def"
  }
  return "?";
}

std::optional<ActionKind> artifact::parseActionKind(std::string_view name) {
#define LOOM_ACTION_KIND(Kind, Spelling)                                       \
  if (name == Spelling)                                                        \
    return ActionKind::Kind;
#include "loom/Artifact/ActionKinds.def"
  return std::nullopt;
}
