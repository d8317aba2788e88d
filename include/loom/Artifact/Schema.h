//===- Schema.h - The artifact schema, version 2 ----------------*- C++ -*-===//
//
// Part of Loom. The one definition of what an artifact's manifest holds
// (docs/Artifact.md), as plain C++17 data: the compiler fills these types
// and writes them with writeManifest; the runtime reads them with
// readManifest, which validates every rule that can be checked without the
// weights and the code. No LLVM or MLIR: libloomrt links this library.
//
// The kinds are X-macro lists: StepKinds.def, BufferKinds.def,
// DeviceKinds.def, and loom/Support/Activations.def for the activations.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ARTIFACT_SCHEMA_H
#define LOOM_ARTIFACT_SCHEMA_H

#include "loom/Support/Activation.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace loom::artifact {

/// The manifest's "format" and the "version" this Loom writes and reads.
constexpr std::string_view kManifestFormat = "loom-artifact";
constexpr int64_t kManifestVersion = 2;

//===----------------------------------------------------------------------===//
// Kinds
//===----------------------------------------------------------------------===//

enum class StepKind {
#define LOOM_STEP_KIND(Kind, Spelling) Kind,
#include "loom/Artifact/StepKinds.def"
};

enum class BufferKind {
#define LOOM_BUFFER_KIND(Kind, Spelling) Kind,
#include "loom/Artifact/BufferKinds.def"
};

enum class DeviceKind {
#define LOOM_DEVICE_KIND(Kind, Spelling) Kind,
#include "loom/Artifact/DeviceKinds.def"
};

enum class SlotKind {
#define LOOM_SLOT_KIND(Kind, Spelling, PerMicroBatch, Summed) Kind,
#include "loom/Artifact/SlotKinds.def"
};

enum class ActionKind {
#define LOOM_ACTION_KIND(Kind, Spelling) Kind,
#include "loom/Artifact/ActionKinds.def"
};

/// The manifest spellings of the kinds, and back (nullopt: unknown).
std::string_view stepKindName(StepKind kind);
std::optional<StepKind> parseStepKind(std::string_view name);
std::string_view bufferKindName(BufferKind kind);
std::optional<BufferKind> parseBufferKind(std::string_view name);
std::string_view deviceKindName(DeviceKind kind);
std::optional<DeviceKind> parseDeviceKind(std::string_view name);
std::string_view slotKindName(SlotKind kind);
std::optional<SlotKind> parseSlotKind(std::string_view name);
std::string_view actionKindName(ActionKind kind);
std::optional<ActionKind> parseActionKind(std::string_view name);
/// SlotKinds.def's facts: one tensor per micro-batch; zeroed each step and
/// written only by accumulate actions.
bool slotPerMicroBatch(SlotKind kind);
bool slotSummed(SlotKind kind);

/// A convolution's algorithm: winograd is a request the runtime honours
/// where the library has a Winograd kernel for it.
enum class ConvAlgorithm { Direct, Winograd };
/// max; avg_include_pad divides by the window; avg_exclude_pad by the
/// window clipped to the input.
enum class PoolAlgorithm { Max, AvgIncludePad, AvgExcludePad };
enum class BinaryAlgorithm { Add, Mul };
/// What cuBLASLt applies to a product before storing it (its
/// cublasLtEpilogue_t of the same name): a bias over the result's columns
/// (bias), then relu or gelu (the tanh approximation, gelu_tanh).
enum class CublasEpilogue { Default, Relu, Bias, ReluBias, Gelu, GeluBias };

std::string_view convAlgorithmName(ConvAlgorithm a);
std::optional<ConvAlgorithm> parseConvAlgorithm(std::string_view name);
std::string_view poolAlgorithmName(PoolAlgorithm a);
std::optional<PoolAlgorithm> parsePoolAlgorithm(std::string_view name);
std::string_view binaryAlgorithmName(BinaryAlgorithm a);
std::optional<BinaryAlgorithm> parseBinaryAlgorithm(std::string_view name);
std::string_view cublasEpilogueName(CublasEpilogue e);
std::optional<CublasEpilogue> parseCublasEpilogue(std::string_view name);
/// Whether \p e adds a bias (its step has a `bias` operand).
bool cublasEpilogueHasBias(CublasEpilogue e);
/// Whether a cudnn.conv step may end in \p a: none and the activations
/// cuDNN's pointwise modes compute without parameters (relu, sigmoid, tanh,
/// gelu_erf, gelu_tanh, swish).
bool cudnnRunsActivation(Activation a);

/// A checksum as the manifest spells it: 16 lower-case hex digits.
std::string checksumHex(uint64_t checksum);

/// The bytes of one element of an MLIR dtype spelling (f32, i1 ...; an i1
/// is a byte), or 0 for an unknown one.
int64_t dtypeBytes(std::string_view dtype);

//===----------------------------------------------------------------------===//
// Steps: one record per kind of StepKinds.def
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

/// The activation a library step applies last, with its parameters
/// (activationParameters says how many of alpha, beta it reads).
struct PostOp {
  Activation kind = Activation::None;
  double alpha = 0, beta = 0;
};

/// A generated kernel: fn(buffers of args, begin, end) over [0, range).
struct KernelStep {
  std::string name;
  std::vector<int64_t> args;
  int64_t range = 1;
  /// The fewest iterations worth a thread of their own: the runtime uses at
  /// most range / grain threads (a kernel whose whole work would not pay for
  /// waking a second thread has grain == range and runs on the caller).
  int64_t grain = 1;
  /// A team kernel: every thread of the device's team calls it once, as
  /// fn(buffers, thread, team size) with the team after the buffers
  /// (include/loom-c/ArtifactABI.h); its range and grain are 1.
  bool team = false;
  /// Every result element is computed from the elements at its own index of
  /// the arguments, which all hold f32 tensors of one shape or one element
  /// each (a map over positions: tanh(a) * sigmoid(b), a sum of several
  /// tensors). Any one reordering of the elements applied to all of its
  /// arguments alike computes the same reordered result, so the CPU
  /// runtime may keep those buffers in a convolution's layout (its layout
  /// plan; docs/Runtime.md, "Activation layouts").
  bool elementwise = false;
};

/// dst gets src's bytes (equal sizes).
struct CopyStep {
  int64_t src = 0, dst = 0;
};

/// Goes on when the first byte of cond is non-zero, else to step elseStep.
struct BranchStep {
  int64_t cond = 0;
  int64_t elseStep = 0;
};

/// Goes to step `to`.
struct JumpStep {
  int64_t to = 0;
};

/// What a forward convolution and a filter gradient share: NCHW src, OIHW
/// weights (O x C/groups x KH x KW), dst; pads [top, left, bottom, right]
/// (cudnn.conv: NC + 1 to 3 spatial dimensions, the begin pads then the end
/// pads).
struct ConvolutionOperands {
  int64_t src = 0, weights = 0, dst = 0;
  Shape srcShape, weightsShape, dstShape, strides, pads, dilations;
  int64_t groups = 1;
};

/// onednn.conv2d: with an optional bias [O], residual sum (of dst's shape,
/// added before the activation) and activation.
struct Conv2dStep : ConvolutionOperands {
  int64_t bias = -1, sum = -1;
  ConvAlgorithm algorithm = ConvAlgorithm::Direct;
  PostOp activation;
};

/// onednn.conv2d_filter_grad: dst [O, C, KH, KW] = conv2d(src [C, G*N, H,
/// W], weights [O, N, OH, OW], G groups) transposed [1, 0, 2, 3].
struct Conv2dFilterGradStep : ConvolutionOperands {};

/// An operand of a library step as strided elements of its buffer: the
/// dims the primitive sees, their strides and the first element's offset,
/// all in elements.
struct StridedOperand {
  Shape dims, strides;
  int64_t offset = 0;
};

/// onednn.matmul: src [..., M, K] x weights [..., K, N] -> dst [..., M, N].
struct MatmulStep {
  int64_t src = 0, weights = 0, dst = 0, bias = -1, sum = -1;
  Shape srcShape, weightsShape, dstShape;
  PostOp activation;
  /// weights is a weight buffer (the runtime may prepack it at load).
  bool weightsConstant = false;
  /// The factor the product is multiplied by before the activation
  /// (oneDNN's output scale; never with a bias).
  double scale = 1;
  /// src, weights and dst as strided views of their buffers (transposes,
  /// slices and reshapes the compiler folded into the product), all of one
  /// rank; absent: each buffer is its shape's dense row-major tensor.
  std::optional<std::array<StridedOperand, 3>> views;
};

/// onednn.pool2d: NCHW src -> dst over a kernel [KH, KW] window.
struct Pool2dStep {
  int64_t src = 0, dst = 0;
  Shape srcShape, dstShape, kernel, strides, pads;
  PoolAlgorithm algorithm = PoolAlgorithm::Max;
};

/// onednn.concat: srcs [N, srcChannels[i], H, W] along the channels.
struct ConcatStep {
  std::vector<int64_t> srcs;
  int64_t dst = 0;
  std::vector<int64_t> srcChannels;
  Shape dstShape;
};

/// onednn.binary: dst = src0 + src1 or src0 * src1, plus shift when there
/// is one, then the activation; src0 and dst of dstShape, src1 of
/// src1Shape: dstShape, or [N, C, 1, 1] or [1, C, 1, 1] (one value per
/// channel, broadcast over the plane); shift (-1: none) of shiftShape, one
/// value per channel (a batchnorm's x * k + shift).
struct BinaryStep {
  int64_t src0 = 0, src1 = 0, dst = 0;
  Shape dstShape;
  BinaryAlgorithm algorithm = BinaryAlgorithm::Add;
  PostOp activation;
  Shape src1Shape;
  int64_t shift = -1;
  Shape shiftShape = {};
};

/// openblas.sgemm: c = a x b, a [batch?, M, K], b [K, N] shared.
struct SgemmStep {
  int64_t a = 0, b = 0, c = 0;
  Shape aShape, bShape;
  int64_t batch = 1;
};

/// gpu.dispatch: a generated GPU kernel, the entry point \p kernel of its
/// device's image, launched on a grid of \p grid workgroups (CUDA blocks)
/// of \p block invocations (threads) each, with \p sharedBytes of dynamic
/// workgroup memory. Its parameters are the addresses of the buffers
/// \p args, in order (the bare-pointer ABI; a Vulkan kernel binds them as
/// storage buffers 0..n-1 of descriptor set 0).
struct DispatchStep {
  std::string kernel;
  std::vector<int64_t> args;
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  int64_t sharedBytes = 0;
};

/// The element types of a library step's product or convolution
/// (cublas.matmul, cudnn.conv): its operands (and a convolution's bias) hold
/// \p operandType, its result (and a product's bias) \p resultType: f32,
/// or bf16 / f16 (--precision's narrow products, docs/Precision.md), which
/// take an f32 result or one of their own type; f32 operands an f32 one.
/// The operands may also be tf32: f32 buffers holding TF32 values
/// (tg.round_tf32's; a convolution's bias then holds f32 ones), multiplied
/// on tensor cores, exactly, with an f32 result. The step accumulates in
/// f32 whatever they are. The manifest leaves f32 out.
struct LibraryElementTypes {
  std::string operandType = "f32", resultType = "f32";
};

/// cublas.matmul: for each b < batch, d[b] (m x n) = a[b] (m x k) x b[b]
/// (k x n), row-major and dense, accumulated in f32, then the epilogue (a
/// bias [n] added to every row); a and b hold the operand type, d and the
/// bias the result type (LibraryElementTypes). Matrix b of a starts
/// \p aBatchStride elements after matrix b - 1 (0: one matrix shared by the
/// batch, else m * k); likewise b's (0 or k * n); d's matrices are
/// consecutive. Runs on a cuda device (cuBLASLt, docs/Artifact.md).
struct CublasMatmulStep : LibraryElementTypes {
  int64_t a = 0, b = 0, bias = -1, d = 0;
  int64_t m = 1, n = 1, k = 1, batch = 1;
  int64_t aBatchStride = 0, bBatchStride = 0;
  CublasEpilogue epilogue = CublasEpilogue::Default;
};

/// cudnn.conv: a forward convolution of 1, 2 or 3 spatial dimensions, then
/// an optional bias [O] and the activation, as one cuDNN operation graph
/// (docs/Artifact.md). The shapes are dense and channels-first: src [N, C,
/// S...], weights [O, C / groups, K...], dst [N, O, S'...]; strides and
/// dilations have one entry per spatial dimension, pads two (the begin pads,
/// then the end pads); src, weights and the bias hold the operand type, dst
/// the result type (LibraryElementTypes). Runs on a cuda device (cuDNN's
/// backend API).
struct CudnnConvStep : ConvolutionOperands, LibraryElementTypes {
  int64_t bias = -1;
  PostOp activation;
};

/// loomrt.topk: for each of outer x inner lines of \p dim elements (the
/// line of (o, i) at src[(o * dim + j) * inner + i]), the k best of its
/// first `valid` elements (a rank-0 i64 buffer; -1: all dim), best first:
/// values (of dtype) and indices (i64) [outer, k, inner], padded with
/// zeros; count (rank-0 i64) = min(k, valid). The order is
/// loom/Support/DynamicAlgorithms.h's (NaN largest, the lower position
/// first among equals). Runs on a cpu device (libloomrt's own code).
struct TopKStep {
  int64_t src = 0, valid = -1, values = 0, indices = 0, count = 0;
  std::string dtype;
  int64_t outer = 1, dim = 0, inner = 1, k = 0;
  bool largest = true;
};

/// loomrt.non_max_suppression: ONNX NonMaxSuppression of f32 boxes
/// [batches, boxes, 4] and scores [batches, classes, boxes] (only the first
/// `valid` boxes, a rank-0 i64 buffer; -1: all): selected (i64) [bound, 3]
/// rows [batch, class, box] padded with zeros, bound =
/// batches * classes * min(maxOutputPerClass, boxes); count (rank-0 i64)
/// the rows selected. Runs on a cpu device.
struct NonMaxSuppressionStep {
  int64_t boxes = 0, scores = 0, valid = -1, selected = 0, count = 0;
  int64_t batches = 1, classes = 1, numBoxes = 0, maxOutputPerClass = 0;
  bool centerPointBox = false;
  double iouThreshold = 0;
  std::optional<double> scoreThreshold;
};

/// loomrt.nonzero: indices (i64) [rank, n] whose first `count` (rank-0
/// i64) columns are the coordinates of src's non-zero elements in
/// row-major order (src: \p shape of dtype, n elements), padded with
/// zeros. Runs on a cpu device.
struct NonZeroStep {
  int64_t src = 0, indices = 0, count = 0;
  std::string dtype;
  Shape shape;
};

/// loomrt.update_slice (tg.update_slice): dst = base with `update` written
/// along an axis at a run-time offset. base and dst are [outer, dim, inner]
/// and update [outer, rows, inner] elements of dtype; offsets is an i64
/// buffer of offsetCount values (1, or one per outer / offsetCount rows of
/// outer), each clamped to [0, dim - rows]. When dst is base (state updated
/// in place: docs/Artifact.md "State updated in place") only the update is
/// written; otherwise base is copied to dst first. Runs on a cpu device.
struct UpdateSliceStep {
  int64_t base = 0, update = 0, offsets = 0, dst = 0;
  std::string dtype;
  int64_t outer = 1, dim = 0, rows = 0, inner = 1, offsetCount = 1;
};

/// loomrt.attention: tg.attention (TGOps.td) on f32 buffers: q [batch,
/// qHeads, qLen, headDim], k and v [batch, kvHeads, kvLen, headDim] (kvLen
/// the capacity), dst of q's shape; length (-1: none) i64 [batch], or one
/// i64 for every sequence when lengthPerBatch is false, each clamped to
/// [0, kvLen]. Runs on a cpu device (libloomrt's attention kernel).
/// tg.shard_attention's adds shards > 1 (or 1), an i64 buffer shard (the
/// rank whose round-robin shard k and v hold; -1 for tg.attention) and lse
/// [batch, qHeads, qLen] f32 (-1: none); its lengths are positions of the
/// whole sequence, clamped to [0, shards * kvLen].
struct AttentionStep {
  int64_t q = 0, k = 0, v = 0, length = -1, dst = 0;
  int64_t shard = -1, lse = -1, shards = 1;
  int64_t batch = 1, qHeads = 1, kvHeads = 1, qLen = 1, kvLen = 1,
          headDim = 1;
  bool lengthPerBatch = false;
  double scale = 1;
  bool causal = false;
};

/// A group of a world's ranks (TGWorldOps.td): `ranks` ranks spaced
/// `stride` apart in a world of `world` ranks (a multiple of ranks *
/// stride). The world is a grid [world / (ranks * stride), ranks, stride].
struct WorldGroup {
  int64_t ranks = 1, stride = 1, world = 1;

  /// World rank \p w's index in its group.
  int64_t indexOf(int64_t w) const { return (w / stride) % ranks; }
  /// The world rank of index \p i of world rank \p w's group.
  int64_t member(int64_t w, int64_t i) const {
    return w + (i - indexOf(w)) * stride;
  }
};

/// loomrt.world_rank (tg.world_rank): the context's index in its group of
/// the world, an i64 at dst. The world must have `group.world` ranks. Runs
/// on any device (the runtime's, not a device's: docs/CacheParallel.md).
struct WorldRankStep {
  int64_t dst = 0;
  WorldGroup group;
};

/// loomrt.all_gather (tg.all_gather): dst holds `group.ranks` blocks of
/// `bytes`, block i the src of the context's group's rank i; with `root`
/// at least 0 only that rank's block (a broadcast), the others zeros.
/// Runs on any device (the runtime's).
struct AllGatherStep {
  int64_t src = 0, dst = 0, bytes = 0;
  WorldGroup group;
  int64_t root = -1;
};

#ifdef LOOM_ARTIFACT_PLANT_STEP_KIND
/// The planted kind's record (StepKinds.def).
struct PlantedStep {};
#endif

/// A step: one record of StepKinds.def's kinds, in its order.
using StepRecord =
    std::variant<KernelStep, CopyStep, BranchStep, JumpStep, Conv2dStep,
                 Conv2dFilterGradStep, MatmulStep, Pool2dStep, ConcatStep,
                 BinaryStep, SgemmStep, DispatchStep, CublasMatmulStep,
                 CudnnConvStep,
                 TopKStep, NonMaxSuppressionStep, NonZeroStep,
                 UpdateSliceStep, AttentionStep, WorldRankStep, AllGatherStep
#ifdef LOOM_ARTIFACT_PLANT_STEP_KIND
                 ,
                 PlantedStep
#endif
                 >;

// The variant's alternatives are StepKinds.def's records, in its order.
#define LOOM_STEP_KIND(Kind, Spelling)                                         \
  static_assert(std::is_same_v<std::variant_alternative_t<                     \
                                   size_t(StepKind::Kind), StepRecord>,        \
                               Kind##Step>,                                    \
                "StepRecord must list " #Kind "Step at StepKind::" #Kind);
#include "loom/Artifact/StepKinds.def"

struct Step {
  StepRecord record;

  Step() = default;
  template <typename T,
            typename = std::enable_if_t<
                std::is_constructible_v<StepRecord, std::decay_t<T>> &&
                !std::is_same_v<std::decay_t<T>, Step>>>
  Step(T &&r) : record(std::forward<T>(r)) {}

  StepKind kind() const { return StepKind(record.index()); }
  template <typename T> bool is() const {
    return std::holds_alternative<T>(record);
  }
  /// The record as \p T, or nullptr when it is another kind.
  template <typename T> T *getIf() { return std::get_if<T>(&record); }
  template <typename T> const T *getIf() const {
    return std::get_if<T>(&record);
  }
};

/// A buffer a step reads or writes, under its role's manifest name ("src",
/// "weights", ...; each source of a concat is "srcs"; a kernel's are
/// "args").
struct Operand {
  std::string_view role;
  int64_t buffer;
};

/// Every buffer operand of \p step, in the manifest's order of roles.
std::vector<Operand> operands(const Step &step);

/// Whether a step of kind \p step runs on a device of kind \p device:
/// control steps and copies everywhere, host kernels and the CPU libraries'
/// steps on a CPU, gpu.dispatch on a GPU.
bool stepRunsOn(StepKind step, DeviceKind device);

/// The step a branch or jump may go to, or nullopt for other steps.
std::optional<int64_t> controlTarget(const Step &step);

//===----------------------------------------------------------------------===//
// Buffers, entries, devices, the world
//===----------------------------------------------------------------------===//

/// The version a manifest with an output of data-dependent length is
/// written as (an output's `bound`); without one the writer keeps
/// kManifestVersion, so older runtimes still read it, and refuse (by
/// version) what they would misread.
constexpr int64_t kBoundedManifestVersion = 3;

/// The version a manifest with an output tied to an input is written as
/// (state updated in place: docs/Artifact.md "State updated in place"), so
/// that a runtime that does not know ties refuses it by version rather than
/// leave the output unwritten.
constexpr int64_t kTiedManifestVersion = 4;

/// An output of data-dependent length (docs/Artifact.md "Outputs of
/// data-dependent length"): its dimension `dim` is padded to the static
/// shape, and output `lengthOutput`, a rank-0 i64 tensor, holds how much of
/// it is valid after a run.
struct OutputBound {
  int64_t dim = 0;
  int64_t lengthOutput = 0;
};

/// An input or output of an entry. bytes: filled by readManifest.
struct TensorDesc {
  std::string name;
  std::string dtype; ///< MLIR spelling: f32, i64, ...
  Shape shape;
  int64_t bytes = 0;
  /// Outputs only: the padded dimension and its length, if any.
  std::optional<OutputBound> bound = std::nullopt;
  /// Outputs only: the input whose memory the output is (the entry updates
  /// that input in place; its steps write the input buffer), if any.
  std::optional<int64_t> tiedInput = std::nullopt;
};

/// Where a tensor lives at run time. device: the index of the manifest
/// device whose memory holds it (its memory space).
struct Buffer {
  BufferKind kind = BufferKind::Arena;
  int64_t device = 0;
  /// input / output: the entry's tensor position.
  int64_t index = 0;
  /// weight: the weights' tensor name.
  std::string weight;
  /// arena: the slice of the device's arena. input / output: bytes is
  /// filled by readManifest from the entry's tensor.
  int64_t offset = 0, bytes = 0;
  /// arena: other buffers of the program hold parts of its bytes, or it
  /// holds a part of theirs (a concatenation written in place, its
  /// operands each a range of the result): its contents are in the plain
  /// row-major layout whatever the steps touching it prefer.
  bool shared = false;
};

/// The steps one device runs for an entry, over the entry's buffers, with
/// that device's arena.
struct Program {
  int64_t device = 0;
  int64_t arenaBytes = 0;
  std::vector<Step> steps;
};

struct Entry {
  std::string name;
  /// The world rank that runs it (a tensor-parallel program's entries, one
  /// set per rank: the runtime prepares them when a context of that rank
  /// joins a world), or -1: any. With `rankPeriod` (a world of cache- and
  /// tensor-parallel ranks) the ranks rank + k rankPeriod run it, k >= 0,
  /// and with `rankCount` only k < rankCount (a pipeline stage of such
  /// ranks: one block of the world). With rank < rankPeriod and no count:
  /// every w with w % rankPeriod == rank.
  int64_t rank = -1, rankPeriod = 0, rankCount = 0;

  /// Whether world rank \p w runs the entry.
  bool runsOn(int64_t w) const {
    if (rank < 0)
      return true;
    if (rankPeriod <= 0)
      return w == rank;
    return w >= rank && (w - rank) % rankPeriod == 0 &&
           (rankCount <= 0 || (w - rank) / rankPeriod < rankCount);
  }
  std::vector<TensorDesc> inputs, outputs;
  /// A buffer id is its index here.
  std::vector<Buffer> buffers;
  /// At most one per device.
  std::vector<Program> programs;
};

/// A device the code was compiled for: its kind, its ordinal among the
/// devices of that kind of its rank, and what it requires (the target
/// triple, the chip, the ISA features a device can lack, spelled as
/// __builtin_cpu_supports spells them for a CPU; a CUDA chip is `sm_90a`, and
/// the chips of an image with code for several are comma-separated).
/// A GPU device's generated code is its \p image: the name of the
/// artifact's ELF section holding it (`.loom_image_<device>`; a CUDA fatbin of every chip compiled
/// for, a SPIR-V module), whose entry points the dispatch steps name; empty
/// when the device runs no generated kernel. A CPU device has none (its
/// kernels are the shared object's own functions).
struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int64_t ordinal = 0;
  std::string triple, chip;
  std::vector<std::string> features;
  std::string image;
};

enum class ChannelDirection { Send, Recv };

/// One side of a point-to-point channel between two ranks: the rank sends
/// \p bytes of \p dtype to \p peer, or receives them from it; the peer
/// lists the other side under the same name.
struct Channel {
  std::string name;
  ChannelDirection direction = ChannelDirection::Send;
  int64_t peer = 0;
  int64_t bytes = 0;
  std::string dtype;
};

//===----------------------------------------------------------------------===//
// The pipelined step of a multi-rank world: per rank, slots and actions
//===----------------------------------------------------------------------===//

/// A tensor a rank's actions read or write (SlotKinds.def). input: the
/// step input \p index; weight and gradient: the parameter \p tensor.
/// bytes: filled by readManifest.
struct Slot {
  SlotKind kind = SlotKind::Value;
  std::string name; ///< unique on its rank
  std::string dtype;
  Shape shape;
  int64_t index = 0;
  std::string tensor;
  int64_t bytes = 0;
};

/// Entry \p entry run on micro-batch \p microBatch: its inputs read the
/// slots \p inputs, its outputs are written to \p outputs (-1: dropped).
struct ComputeAction {
  int64_t entry = 0, microBatch = 0;
  std::vector<int64_t> inputs, outputs;
};

/// One message of an exchange: slot \p slot of micro-batch \p microBatch
/// sent or received on the rank's channel \p channel.
struct ExchangeMessage {
  int64_t channel = 0, slot = 0, microBatch = 0;
};

/// Sends and receives posted together that complete together (NCCL's
/// group semantics): per pair of ranks they match in order.
struct ExchangeAction {
  std::vector<ExchangeMessage> messages;
};

/// dst += src (f32): src of micro-batch \p microBatch into dst's tensor of
/// that micro-batch (or of the step, for a gradient).
struct AccumulateAction {
  int64_t src = 0, dst = 0, microBatch = 0;
};

/// The gradient slots \p slots summed over the ranks \p ranks (ascending,
/// this rank among them), in place on each: the data-parallel replicas of a
/// stage, each of which computed its share of the micro-batches. Every rank
/// of the group reaches its all-reduces of the group in the same order,
/// with the same tensors.
struct AllReduceAction {
  std::vector<int64_t> ranks, slots;
};

/// The world's optimizer step of the weight slots \p params (updated in
/// place: the rank's own copies) from the gradient slots \p gradients of
/// the same tensors, with Optimizer::stateTensors() state slots per
/// parameter in \p states (parameter-major).
struct UpdateAction {
  std::vector<int64_t> params, gradients, states;
};

/// An action: one record of ActionKinds.def's kinds, in its order.
using ActionRecord =
    std::variant<ComputeAction, ExchangeAction, AccumulateAction,
                 AllReduceAction, UpdateAction>;

#define LOOM_ACTION_KIND(Kind, Spelling)                                       \
  static_assert(std::is_same_v<std::variant_alternative_t<                     \
                                   size_t(ActionKind::Kind), ActionRecord>,    \
                               Kind##Action>,                                  \
                "ActionRecord must list " #Kind "Action at ActionKind::" #Kind);
#include "loom/Artifact/ActionKinds.def"

struct Action {
  ActionRecord record;
  ActionKind kind() const { return ActionKind(record.index()); }
};

/// One process of the world: the devices it drives (indices of the
/// manifest's devices), per entry the indices of the entry's programs it
/// runs, its channels, and (multi-rank) its step's slots and actions.
struct Rank {
  std::vector<int64_t> devices;
  std::vector<std::vector<int64_t>> programs;
  std::vector<Channel> channels;
  std::vector<Slot> slots;
  std::vector<Action> actions;
};

/// The optimizer of a pipelined step's update actions, PyTorch's (as
/// --tg-autodiff builds it, docs/Training.md): SGD `v = momentum * v + g;
/// p -= lr * v` (no state without momentum), Adam with bias correction;
/// `weightDecay` adds `weightDecay * p` to the gradient.
enum class OptimizerKind { None, Sgd, Adam };

struct Optimizer {
  OptimizerKind kind = OptimizerKind::None;
  double lr = 0.01, momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0;
  /// State tensors per parameter: SGD's velocity (with momentum), Adam's
  /// m and v.
  int64_t stateTensors() const;
  /// "none", "sgd", "adam".
  std::string_view name() const;
};

/// The processes an artifact runs as. A single-process artifact has one
/// rank that drives every device and runs every program, and no channels
/// and no step. A pipelined step (every rank's actions) runs over
/// \p microBatches micro-batches, each with the inputs \p stepInputs.
struct World {
  std::vector<Rank> ranks;
  int64_t microBatches = 0;
  std::vector<TensorDesc> stepInputs;
  /// Applied by the ranks' update actions (none: the step's results are the
  /// gradients, the optimizer step the caller's).
  Optimizer optimizer;
  /// The partitioned function's results (a loss), each named by the value
  /// slot that holds it per micro-batch on the rank whose compute writes it
  /// (resultSlot); empty when a result is no stage's output.
  std::vector<TensorDesc> results;
};

/// Where result \p result of \p world is on micro-batch \p mb: the rank and
/// its value slot of the result's name written by a compute of \p mb; {-1,
/// -1} when no rank computes it.
std::pair<int64_t, int64_t> resultSlot(const World &world, size_t result,
                                       int64_t mb);

/// Why the ranks' steps cannot run together, naming the rank, the action
/// and the peer (docs/Artifact.md "Checks"): per pair of ranks the sends
/// equal the receives in order (channel, micro-batch, bytes, dtype), and
/// the exchanges, run with sends that block until received, end. nullopt:
/// they can. readManifest calls it; so does the compiler before writing.
/// On a deadlock \p blocked (when given) gets, per rank, the exchange it
/// waits at (-1: it finished).
std::optional<std::string>
checkWorldStep(const World &world, std::vector<int64_t> *blocked = nullptr);

/// Whether rank \p rank's gradient slot \p slot holds a sum that an
/// all-reduce of the step shares with a lower rank of its group (a
/// replica's copy: gathering the step's gradients skips it).
bool replicaCopy(const World &world, int64_t rank, int64_t slot);

/// The world of a single process running \p entries on \p numDevices.
World singleProcessWorld(int64_t numDevices,
                         const std::vector<Entry> &entries);

enum class WeightStorage { None, Embedded, External };

struct WeightTensor {
  std::string name;
  std::string dtype; ///< safetensors spelling: F32, ...
  Shape shape;
  uint64_t checksum = 0;
};

struct Weights {
  WeightStorage storage = WeightStorage::None;
  /// external: the file, relative to the artifact.
  std::string file;
  /// The safetensors file's size and loom_checksum64.
  int64_t size = 0;
  uint64_t checksum = 0;
  std::vector<WeightTensor> tensors;
};

/// Which graph the artifact's embedded source (.loom_source) is
/// (docs/Artifact.md "The embedded source"): the module as loom-compile read
/// it, before any of its passes, or the module after them (what artifacts
/// without a `source` member embed).
enum class SourceGraph { Given, Compiled };

/// The manifest's `source`: what the embedded source is, and the tensors of
/// the weights that only it reads (the given graph's weights that the
/// compile-time passes folded away: no buffer names them).
struct Source {
  SourceGraph graph = SourceGraph::Given;
  std::vector<std::string> weights;
};

std::string_view sourceGraphName(SourceGraph g);
std::optional<SourceGraph> parseSourceGraph(std::string_view name);

struct Manifest {
  std::string loomVersion;
  std::vector<Device> devices;
  Weights weights;
  std::vector<Entry> entries;
  World world;
  /// Absent: no `source` member (no embedded source, or an artifact from
  /// before the member, whose embedded source is the compiled graph).
  std::optional<Source> source;
};

//===----------------------------------------------------------------------===//
// Reading and writing
//===----------------------------------------------------------------------===//

/// Why a manifest was refused: not a manifest of this schema (Format), or
/// one of another format version (Version). The message names the field as
/// a path ("entries[0].programs[0].steps[3].args.src: ...").
struct ReadError {
  enum class Kind { Format, Version };
  Kind kind = Kind::Format;
  std::string message;
};

/// Parses and validates \p text (docs/Artifact.md, every rule that needs
/// neither the weights nor the code). On failure \p out is unspecified.
std::optional<ReadError> readManifest(std::string_view text, Manifest &out);

/// The manifest's JSON text (UTF-8, 2-space indented). Numbers that are not
/// finite are written as null, which readManifest refuses: a writer keeps
/// them out.
std::string writeManifest(const Manifest &manifest);

} // namespace loom::artifact

#endif // LOOM_ARTIFACT_SCHEMA_H
