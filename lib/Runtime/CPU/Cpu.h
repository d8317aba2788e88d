//===- Cpu.h - The CPU device's library steps -------------------*- C++ -*-===//
//
// Part of Loom. What the CPU device (CpuDevice.cpp) and its library steps
// (Library.cpp and the layers under it) share: the memory of one queue's
// runs, the prepared step they run on it, and Loom's own kernels
// (Kernels/). The oneDNN engine and the policy (Policy.h) belong to the
// device, the stream and scratch to a queue: nothing is process-wide.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_H
#define LOOM_LIB_RUNTIME_CPU_H

#include "CPU/Policy.h"
#include "Device.h"
#include "loom/Support/AttentionMask.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#if LOOM_RT_CPU_LIBRARIES
#include <dnnl.hpp>

#include <map>
#include <new>
#include <utility>
#endif

/// OpenMP's team size for the calling thread (GNU OpenMP's ABI, so no
/// OpenMP compiler support is needed): what oneDNN's primitives fork; and
/// libgomp's entry that forks that team over a function (the CPU device's
/// team kernels; Loom's kernels through forkTeam).
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int n);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned numThreads,
                   unsigned flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
}

namespace loom::rt::cpu {

/// The threads a kernel forks for \p units units of work amounting to
/// \p work, at least \p workPerThread of it a thread: at most the calling
/// thread's OpenMP team, at least one (no fork).
inline int64_t threadsFor(int64_t units, int64_t work, int64_t workPerThread) {
  return std::max<int64_t>(1, std::min<int64_t>({omp_get_max_threads(), units,
                                                 work / workPerThread}));
}

/// Runs \p fn(thread, threads) on each thread of a team of \p threads
/// forked from OpenMP's team of the calling thread (libgomp's
/// GOMP_parallel; threads is the team it got, which may be fewer), or
/// \p fn(0, 1) on the calling thread alone when \p threads is 1: the one
/// way Loom's kernels fork (Kernels/).
template <typename Fn> void forkTeam(int64_t threads, const Fn &fn) {
  if (threads <= 1)
    return fn(int64_t(0), int64_t(1));
  GOMP_parallel(
      [](void *arg) {
        (*static_cast<const Fn *>(arg))(int64_t(omp_get_thread_num()),
                                        int64_t(omp_get_num_threads()));
      },
      const_cast<Fn *>(&fn), unsigned(threads), 0);
}

/// Runs \p fn(begin, end) on [0, \p total) split into even shares over a
/// team of \p threads (forkTeam), on the calling thread alone when
/// \p threads is 1.
template <typename Fn>
void forkShares(int64_t total, int64_t threads, const Fn &fn) {
  forkTeam(threads, [&](int64_t t, int64_t n) {
    fn(total * t / n, total * (t + 1) / n);
  });
}

#if LOOM_RT_CPU_LIBRARIES
using Engine = dnnl::engine;

/// What the runs on one CPU queue use: oneDNN's stream on the device's
/// engine and scratch memory, grown on demand and kept (a cache). Slot 0 is
/// oneDNN's scratchpad; 1, 2 and 3 a step's source, destination and
/// run-time weights in the layout its primitive computes in when the buffer
/// holds another (3 also an addend reordered before the weights are). Used
/// by one thread at a time, as its queue is.
class Stream {
public:
  explicit Stream(const dnnl::engine &engine)
      : engine(engine), stream(engine) {}
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  /// Slot \p slot, at least \p bytes, 64-byte aligned.
  void *scratch(int slot, size_t bytes);

  /// The memory object of argument \p arg of \p owner (a prepared step or
  /// one of its reorders) on this stream, described by \p md and pointed
  /// at \p data. Made on first use and re-pointed afterwards: creating one
  /// costs more than a microsecond, re-pointing it tens of nanoseconds, and
  /// a oneDNN step binds four or more per run.
  dnnl::memory bind(const void *owner, int arg, const dnnl::memory::desc &md,
                    void *data);

  const dnnl::engine &engine;
  dnnl::stream stream;

private:
  struct Slot {
    void *data = nullptr;
    size_t size = 0;
  };
  Slot slots[4];
  std::map<std::pair<const void *, int>, dnnl::memory> bound;
};
#else
/// A libloomrt built without oneDNN and OpenBLAS (their libraries absent at
/// configure time, as on the GPU machines scripts/gpu-check.sh builds on):
/// no engine and no stream; prepareProgram refuses the library steps
/// (NoLibraries.cpp), and the CPU runs generated kernels only.
struct Engine {};
class Stream {
public:
  explicit Stream(const Engine &) {}
};
#endif

/// The device's engine (oneDNN's CPU engine), or why there is none.
Error createEngine(Engine &out);

/// OpenBLAS's thread count (process-wide), where it is linked.
void setLibraryThreads(int threads);

/// Whether swishInPlace runs on this CPU: the kernel table of the level
/// used has a form of it (CpuKernels.h).
bool hasSwishPass();

/// x * sigmoid(x) of \p n floats at \p data, in place, over OpenMP's team
/// of the calling thread (on the calling thread alone below 16384 floats a
/// thread). Only where hasSwishPass(). Swish.cpp.
void swishInPlace(float *data, int64_t n);

/// A max or average pool over a buffer whose pixels hold their channels
/// contiguously: [outer][h][w][channels] in, [outer][oh][ow][channels] out.
/// NHWC: outer the batch, channels all C; nChw16c / nChw8c: outer the batch
/// times the channel blocks, channels the block. The windows are oneDNN's:
/// kh x kw, strides sh, sw, padTop and padLeft before the first pixel;
/// padding never wins the maximum and an average is over the window's
/// pixels inside the input.
struct PoolGeometry {
  int64_t outer = 0, h = 0, w = 0, oh = 0, ow = 0, channels = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, padTop = 0, padLeft = 0;
  /// An average over the window's pixels inside the input, not a max.
  bool average = false;
};

/// Whether poolChannelsLast runs on this CPU: the kernel table of the level
/// used has a form of it (CpuKernels.h).
bool hasPoolKernel();

/// Whether poolPlanes runs on this CPU (the same table).
bool hasPlanePoolKernel();

/// Pools \p src into \p dst as \p g says, over OpenMP's team of the
/// calling thread (on the calling thread alone below 32768 window taps a
/// thread). Only where hasPoolKernel(). Pool.cpp.
void poolChannelsLast(const PoolGeometry &g, const float *src, float *dst);

/// Pools plain planes (NCHW: \p g.outer the batch times the channels, each
/// plane h x w floats; \p g.channels unused) into plain planes, every
/// window inside its plane (no padding, no ceil-mode window past the edge),
/// column stride \p g.sw 1 or 2: sixteen outputs of a row a vector, over
/// OpenMP's team of the calling thread (rows split; on the calling thread
/// alone below 32768 window taps a thread). Only where
/// hasPlanePoolKernel(). Pool.cpp.
void poolPlanes(const PoolGeometry &g, const float *src, float *dst);

/// A buffer of \p outer groups of \p pixels pixels, each pixel's \p channels
/// floats contiguous: [outer][pixels][channels] (NHWC: outer the batch,
/// pixels H * W).
struct ChannelsLastPlanes {
  int64_t outer = 0, pixels = 0, channels = 0;
};

/// Whether globalAveragePoolChannelsLast and scaleChannelsLast run on this
/// CPU: the kernel table of the level used has forms of them (CpuKernels.h).
bool hasSqueezeExciteKernels();

/// dst[n][c] = the mean over p of src[n][p][c] (\p g), over OpenMP's team
/// of the calling thread split by pixels (on the calling thread alone below
/// 32768 floats a thread). Only where hasSqueezeExciteKernels().
/// SqueezeExcite.cpp.
void globalAveragePoolChannelsLast(const ChannelsLastPlanes &g,
                                   const float *src, float *dst);

/// The per-channel factors of a channel scaling, an optional per-channel
/// shift added after them and an optional ReLU: a squeeze-and-excitation's
/// scales ([N, C, 1, 1]: \p scaleImage C) or a batchnorm's factors and shift
/// ([1, C, 1, 1]: 0, shared by the images). Group o of the buffer (of
/// \p groups an image) has its factors at scale + (o / groups) * scaleImage +
/// (o % groups) * channels, its shift likewise.
struct ChannelScale {
  const float *scale = nullptr;
  int64_t scaleImage = 0;
  const float *shift = nullptr;
  int64_t shiftImage = 0;
  bool relu = false;
};

/// dst[o][p][c] = src[o][p][c] * factor[o][c] (+ shift[o][c]) (then
/// max(0, .)) over the buffer \p g of \p groups channel groups an image
/// (NHWC: 1, outer the batch; nChw16c: C / 16, outer N * C / 16, channels
/// 16), over OpenMP's team of the calling thread split by pixels (on the
/// calling thread alone below 16384 floats a thread); \p dst may be \p src.
/// Only where hasSqueezeExciteKernels(). SqueezeExcite.cpp.
void scaleChannelsLast(const ChannelsLastPlanes &g, int64_t groups,
                       const float *src, const ChannelScale &scale, float *dst);

/// Frees a WeightsBlock.
struct FreeBlock {
  void operator()(void *p) const { std::free(p); }
};
/// Memory that allocateWeights gave.
using WeightsBlock = std::unique_ptr<void, FreeBlock>;

/// Memory for \p bytes of weights that a step packs once at load and reads
/// on every run: from 2 MiB on, aligned to 2 MiB and advised as transparent
/// huge pages (MADV_HUGEPAGE), so that streaming it takes a TLB entry per
/// 2 MiB instead of one per 4 KiB page (ResNeXt-101 32x8d at 160x160: its
/// last stages' 1x1 convolutions 5-7% faster in the model; docs/Runtime.md,
/// "Weights on huge pages"); below, 64-byte aligned. \p hugePages false
/// keeps 4 KiB pages, to compare: the device passes its policy's
/// (CpuPolicy::hugePages); nullopt reads LOOM_HUGE_PAGES from the
/// environment (kernels run without a device: tests, benchmarks). Null
/// when the allocation fails. WeightsMemory.cpp.
WeightsBlock allocateWeights(size_t bytes,
                             std::optional<bool> hugePages = std::nullopt);

/// The alignment allocateWeights gives a block of \p bytes: 2 MiB (huge
/// pages advised) or 64 bytes.
size_t weightsAlignment(size_t bytes,
                        std::optional<bool> hugePages = std::nullopt);

/// The weights of a pointwise convolution ([out][in], OIHW of a 1x1
/// filter) or of a matrix product ([in][out], its right operand) packed
/// once for pointwiseChannelsLast: columns of sixteen output channels, each
/// [in][16] contiguous and 64-byte aligned, the last padded with zeros.
class PointwiseWeights {
public:
  /// How the weights given to the constructor are laid out.
  enum class Order { OutIn, InOut };
  /// \p hugePages as allocateWeights takes it.
  PointwiseWeights(const float *weights, int64_t out, int64_t in,
                   Order order = Order::OutIn,
                   std::optional<bool> hugePages = std::nullopt);
  ~PointwiseWeights();
  PointwiseWeights(const PointwiseWeights &) = delete;
  PointwiseWeights &operator=(const PointwiseWeights &) = delete;

  /// Columns of sixteen output channels.
  int64_t columns() const { return (out + 15) / 16; }

  const int64_t out, in;
  float *packed = nullptr;

private:
  WeightsBlock block; ///< packed's memory
};

/// What a pointwise convolution adds to its products before the store:
/// dst = min(hi, max(lo, product + bias[o] + sum[p][o])), bias and sum
/// optional (null), sum laid out as dst and possibly dst itself (a residual
/// written in place of its addend). ReLU: lo 0; none: lo -inf, hi +inf.
struct PointwiseEpilogue {
  const float *bias = nullptr;
  const float *sum = nullptr;
  float lo = -__builtin_inff(), hi = __builtin_inff();
  /// dst is a plain NCHW buffer of one image (dst[o][p]) and there is no
  /// sum: the last convolution before a generated kernel.
  bool planar = false;
};

/// Whether pointwiseChannelsLast runs on this CPU: the kernel table of the
/// level used has a form of it (CpuKernels.h).
bool hasPointwiseKernel();

/// dst[p][o] = epilogue(sum over k of src[p][k] * W[o][k]) for \p pixels
/// rows of \p w.in floats (src) and \p w.out floats (dst): a 1x1 convolution
/// between NHWC buffers, pixels = batch x H x W (or, e.planar, into a plain
/// NCHW image). Over OpenMP's team of the calling thread split by pixels,
/// or where there are few pixels and many channels by columns of output
/// channels (on the calling thread alone below 2^17 multiply-adds a
/// thread). Only where
/// hasPointwiseKernel(). Pointwise.cpp.
void pointwiseChannelsLast(const PointwiseWeights &w, int64_t pixels,
                           const float *src, const PointwiseEpilogue &e,
                           float *dst);

/// \p batch row-major matrices of \p rows x \p cols elements of \p block
/// floats (1, or a multiple of 16), one after the other. A change of an
/// activation's layout between channels-first and channels-last is a batch
/// of transposes: NCHW to NHWC, N of C x H*W; NHWC to NCHW, N of H*W x C;
/// NCHW to nChw16c, N * C / 16 of 16 x H*W; NHWC to nChw16c, N of H*W x
/// C / 16 blocks of 16.
struct TransposeShape {
  int64_t batch = 0, rows = 0, cols = 0, block = 1;
};

/// Whether transposePlanes runs on this CPU: the kernel table of the level
/// used has a form of it (CpuKernels.h).
bool hasTransposeKernel();

/// dst[b][c][r] = src[b][r][c] (whole elements) for the matrices \p s,
/// over OpenMP's team of the calling thread split along the longer side (on
/// the calling thread alone below 16384 floats a thread); \p src and \p dst
/// do not overlap. Only where hasTransposeKernel(). Transpose.cpp.
void transposePlanes(const TransposeShape &s, const float *src, float *dst);

/// The most rows gemv() takes.
constexpr int64_t kGemvMaxRows = 4;

/// A product of `rows` (1 to kGemvMaxRows) rows of \p k by plain row-major
/// weights [k][n], with an optional ReLU after the bias.
struct GemvShape {
  int64_t rows = 1, k = 0, n = 0;
  bool relu = false;
};

/// dst[m][j] = bias[j] + sum_k src[m][k] * weights[k][j] (bias null: 0),
/// then max(0, .) if s.relu, for the rows of \p s: a decode step's product,
/// bound by reading the weights once from memory. Over OpenMP's team of the
/// calling thread, the weight rows split in contiguous shares; the buffers do
/// not overlap. Every CPU has a form (a portable one below AVX2). Gemv.cpp.
void gemv(const GemvShape &s, const float *src, const float *weights,
          const float *bias, float *dst);

/// tg.attention's geometry (TGOps.td, artifact::AttentionStep): q and dst
/// [batch][qHeads][qLen][headDim], k and v [batch][kvHeads][kvLen][headDim]
/// (kvLen the capacity), query head h reading key/value head
/// h / (qHeads / kvHeads).
struct AttentionGeometry {
  int64_t batch = 1, qHeads = 1, kvHeads = 1, qLen = 1, kvLen = 1, headDim = 1;
  float scale = 1;
  bool causal = false;
  /// tg.shard_attention's shard (key j is position j * count + index);
  /// tg.attention's is the whole cache.
  attention::Shard shard;
};

/// tg.attention on f32 buffers: sequence b's live length lives[b] (in
/// [0, shard.count * kvLen], positions of the whole sequence; the keys below
/// it that the shard holds, attention::shardKeys); only those are read,
/// each visible
/// query's softmax taken online over blocks of keys (never the whole score
/// matrix), blocks that the causal mask hides skipped. Over OpenMP's team of
/// the calling thread: tiles of (sequence, key/value head, query rows),
/// the query heads of a group sharing each key read; when tiles are fewer
/// than threads, each tile's keys split across threads and the partial
/// results merged exactly by their log-sum-exp (Flash-Decoding). Every CPU
/// has a form (a portable one below AVX2). With \p lse (else null), each
/// query row's log-sum-exp of its scores too ([batch][qHeads][qLen]; -inf for
/// a row that sees no key). Attention.cpp.
void attention(const AttentionGeometry &g, const float *q, const float *k,
               const float *v, const int64_t *lives, float *dst, float *lse);

/// A grouped convolution between NHWC buffers ([batch][h][w][channels] in,
/// [batch][oh][ow][outChannels] out) whose groups have a multiple of 16
/// output channels each (groups * 16 * k = outChannels) and groupChannels
/// input channels each, a multiple of 16 too (groups * groupChannels =
/// channels): a kh x kw
/// window, strides sh, sw, padTop and padLeft before the first pixel
/// (padding reads as 0), dilation 1, then the bias and an optional ReLU.
struct GroupedConvGeometry {
  int64_t batch = 0, h = 0, w = 0, channels = 0, oh = 0, ow = 0;
  int64_t outChannels = 0, groups = 1, groupChannels = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, padTop = 0, padLeft = 0;
  bool relu = false;
};

/// An allocator of 64-byte aligned storage: a vector of it starts on a
/// cache line, so that a kernel's vector loads of it never split across
/// two.
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(
        ::operator new(n * sizeof(T), std::align_val_t(64)));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  bool operator==(const CacheLineAllocator &) const { return true; }
  bool operator!=(const CacheLineAllocator &) const { return false; }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

/// Whether groupedConvChannelsLast runs on this CPU: the kernel table of the
/// level used has a form of it (CpuKernels.h).
bool hasGroupedConvKernel();

/// OIHW weights ([outChannels][groupChannels][kh][kw]) of \p g packed as
/// groupedConvChannelsLast reads them: [outChannels / 16]
/// [groupChannels / 16][kh][16 input channels][kw][16 output channels].
AlignedFloats packGroupedConvWeights(const GroupedConvGeometry &g,
                                     const float *oihw);

/// The convolution \p g of \p src with weights \p packed
/// (packGroupedConvWeights) and \p bias ([outChannels], or null) into
/// \p dst, over OpenMP's team of the calling thread split by chunks of
/// output rows and by groups (on the calling thread alone below 16384
/// vector multiply-adds a thread).
/// Only where hasGroupedConvKernel(). GroupedConv.cpp.
void groupedConvChannelsLast(const GroupedConvGeometry &g, const float *src,
                             const float *packed, const float *bias,
                             float *dst);

/// A dense 2-D convolution (one group, dilation 1) of \p channels input
/// channels [batch][channels][h][w] into [batch][outChannels][oh][ow]: a kh
/// x kw filter, strides sh, sw, padTop and padLeft before the first pixel
/// (oh and ow say how far the padding reaches after the last). The kernels
/// that take one say in which layouts they read and write it.
struct DenseConvGeometry {
  int64_t batch = 0, channels = 0, h = 0, w = 0, outChannels = 0, oh = 0,
          ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, padTop = 0, padLeft = 0;
};

/// The activation convolveStem applies after the bias: max(0, x); the
/// clip min(max(x, lo), hi) (ReLU6: 0, 6); x * relu6(x + 3) / 6.
struct StemPostOp {
  enum class Kind { None, Relu, Clip, HardSwish };
  Kind kind = Kind::None;
  float lo = 0, hi = 0;
};

/// A CNN's stem, convolveStem: a DenseConvGeometry of at most 4 input
/// channels from an NCHW source into an NHWC result.
///
/// Whether convolveStem runs on this CPU: the kernel table of the level
/// used has a form of it (CpuKernels.h).
bool hasStemConvKernel();

/// OIHW weights of \p g as convolveStem reads them: [kh][kw][channels]
/// [outChannels rounded up to 16], the padding zero.
std::vector<float> packStemWeights(const DenseConvGeometry &g,
                                   const float *oihw);

/// dst = post(conv(src, weights) + bias) for \p g (bias of outChannels
/// floats, or null), \p packed from packStemWeights, over OpenMP's team of
/// the calling thread split by output rows. Only where hasStemConvKernel().
/// StemConv.cpp.
void convolveStem(const DenseConvGeometry &g, const float *src,
                  const float *packed, const float *bias,
                  const StemPostOp &post, float *dst);

/// Whether convolveWinograd8 runs on this CPU: the kernel table of the
/// level used has a form of it (CpuKernels.h; AVX2 only: with AVX-512
/// oneDNN has its own Winograd kernel).
bool hasWinogradConvKernel();

/// OIHW 3x3 weights of \p g transformed for Winograd's F(\p tile x
/// \p tile, 3x3) (tile 2 or 4; U = G g G') as convolveWinograd8 reads
/// them: [(tile + 2)^2 positions][outChannels rounded up to 16, by 16]
/// [channels][16].
AlignedFloats packWinogradWeights(const DenseConvGeometry &g, int tile,
                                  const float *oihw);

/// dst = clamp(conv(src, weights) + bias + sum) for \p g, a 3x3
/// convolution of stride 1 (any padding; channels and outChannels multiples
/// of 8), between buffers in oneDNN's nChw8c layout ([batch][channels /
/// 8][h][w][8]; dst and \p e.sum [batch][outChannels / 8][oh][ow][8]),
/// computed by Winograd's F(tile x tile, 3x3) (tile 2 or 4) with \p packed
/// from packWinogradWeights for that tile; \p e's bias, sum (the addend, in
/// place or not) and
/// clamp [lo, hi] (e.planar false). In three phases over OpenMP's team of
/// the calling thread, with scratch memory of the calling thread kept
/// between calls. Only where hasWinogradConvKernel(). WinogradConv.cpp.
void convolveWinograd8(const DenseConvGeometry &g, int tile, const float *src,
                       const float *packed, const PointwiseEpilogue &e,
                       float *dst);

/// A oneDNN or OpenBLAS call prepared once per model, run on any queue's
/// stream (concurrently from several).
class LibraryStep : public PreparedStep {
public:
  /// Runs the step; \p buffers are the entry's buffer addresses.
  virtual Error run(Stream &stream, void *const *buffers) const = 0;
};

/// The prepared form of a dynamic step (loomrt.topk,
/// loomrt.non_max_suppression, loomrt.nonzero: DynamicSteps.cpp, built with
/// or without the libraries); null for a step of another kind.
std::unique_ptr<LibraryStep> prepareDynamicStep(const artifact::Step &step);

/// Prepares the library steps of \p program on \p engine (Device::prepare)
/// under the device's \p policy: chooses where convolutions keep
/// activations in oneDNN's blocked layout (buffers that only convolutions
/// touch; LOOM_ONEDNN_LAYOUT=plain keeps every buffer NCHW) and makes each
/// primitive, prepacking constant weights but those in \p shared (read by
/// several entries' programs: kept as the artifact holds them, one copy).
/// Library.cpp.
Error prepareProgram(const Engine &engine, const CpuPolicy &policy,
                     const std::unordered_set<const void *> &shared,
                     const artifact::Entry &entry,
                     const artifact::Program &program,
                     const std::vector<int64_t> &bufferBytes,
                     const std::vector<void *> &constants,
                     std::vector<std::unique_ptr<PreparedStep>> &out,
                     std::map<int64_t, std::string> &layouts);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_H
