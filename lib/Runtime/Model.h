//===- Model.h - libloomrt's view of a loaded artifact ----------*- C++ -*-===//
//
// Part of Loom. The manifest of docs/Artifact.md as validated C++ data, the
// pieces that read it (ELF sections, manifest, weights, CPU features) and
// the library steps prepared once per model. The C API (Runtime.cpp) is a
// thin layer over these.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_MODEL_H
#define LOOM_LIB_RUNTIME_MODEL_H

#include "loom-c/ArtifactABI.h"
#include "loom-c/Runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::rt {

/// A failure: the C API's status and message.
struct Error {
  loom_status status = LOOM_OK;
  std::string message;
  explicit operator bool() const { return status != LOOM_OK; }
  static Error ok() { return {}; }
};
inline Error makeError(loom_status s, std::string message) {
  return {s, std::move(message)};
}

struct TensorSpec {
  std::string name, dtype;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
};

struct BufferSpec {
  enum class Kind { Input, Output, Weight, Arena };
  Kind kind = Kind::Arena;
  int64_t index = 0;
  std::string weight;
  int64_t offset = 0, bytes = 0;
};

class LibraryStep;

struct StepSpec {
  enum class Op {
    Kernel,
    Conv2d,
    Matmul,
    Sgemm,
    Copy,
    Branch,
    Jump,
    Conv2dFilterGrad,
    Pool2d,
    Concat,
    /// onednn.binary: dst = src0 + src1 (src0 kept as src, src1 as
    /// weights), all of dst's shape.
    Binary
  };
  Op op = Op::Copy;
  std::string kernel;
  /// kernel: positional buffer ids; concat: its sources in order.
  std::vector<int64_t> args;
  int64_t range = 1;
  /// Named buffer ids (-1: absent).
  int64_t src = -1, weights = -1, bias = -1, sum = -1, dst = -1;
  int64_t a = -1, b = -1, c = -1;
  /// branch: the condition's buffer; branch and jump: the step to go to
  /// (a branch goes there when the condition is false).
  int64_t cond = -1, target = -1;
  std::vector<int64_t> srcShape, weightsShape, dstShape, strides, pads,
      dilations, aShape, bShape;
  /// pool2d: its window and algorithm (max, avg_include_pad,
  /// avg_exclude_pad); conv2d: its algorithm (direct, winograd); concat:
  /// the channels of each source.
  std::vector<int64_t> kernelSize, srcChannels;
  std::string algorithm;
  int64_t groups = 1, batch = 1;
  std::string activation = "none";
  /// clip: its bounds; hardsigmoid: clip(alpha * x + beta, 0, 1);
  /// leaky_relu: the slope below 0 (alpha).
  double activationAlpha = 0, activationBeta = 0;
  bool weightsConstant = false;
  /// Resolved at load.
  loom_kernel_fn fn = nullptr;
  std::shared_ptr<LibraryStep> library;
};

struct EntrySpec {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
  int64_t arenaBytes = 0;
  std::vector<BufferSpec> buffers;
  std::vector<StepSpec> steps;
};

struct WeightSpec {
  std::string name, dtype;
  std::vector<int64_t> shape;
  uint64_t checksum = 0;
};

struct Manifest {
  std::string triple, cpu;
  std::vector<std::string> features;
  std::string storage = "none", file;
  int64_t weightsSize = 0;
  uint64_t weightsChecksum = 0;
  std::vector<WeightSpec> tensors;
  std::vector<EntrySpec> entries;
};

/// The byte range of a section in the file.
struct Section {
  uint64_t offset = 0, size = 0;
};

/// Reads the section table of an ELF64 x86-64 shared object, bounds-checked.
Error readElfSections(const uint8_t *data, uint64_t size,
                      std::map<std::string, Section> &sections);

/// Parses and validates a manifest (every rule of docs/Artifact.md that can
/// be checked without the weights).
Error parseManifest(std::string_view text, Manifest &manifest);

/// The bytes of one element of an MLIR dtype spelling (f32 ...), or 0.
int64_t dtypeBytes(const std::string &dtype);

/// The bytes of a dense f32 tensor of \p shape (library steps compute in f32).
inline int64_t f32Bytes(const std::vector<int64_t> &shape) {
  int64_t n = 4;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Fails naming the first feature of \p features this CPU lacks.
Error checkCpuFeatures(const std::vector<std::string> &features);

/// One tensor of a safetensors file in memory.
struct WeightView {
  const uint8_t *data = nullptr;
  int64_t bytes = 0;
};

/// Reads the safetensors bytes [data, data+size), checks them against the
/// manifest's weights (sizes, dtypes, shapes, checksums) and returns each
/// tensor's place.
Error bindWeights(const uint8_t *data, uint64_t size, const Manifest &manifest,
                  std::map<std::string, WeightView> &views);

/// A library call prepared once per model (oneDNN primitive with its
/// weights prepacked, or the shapes of an OpenBLAS call).
class LibraryStep {
public:
  virtual ~LibraryStep();
  /// Runs the step; \p buffers are the entry's buffer addresses.
  virtual Error run(void *const *buffers) const = 0;
};

/// Prepares the library steps of \p entry: chooses where convolutions keep
/// activations in oneDNN's blocked layout (buffers that only convolutions
/// touch; LOOM_ONEDNN_LAYOUT=plain keeps every buffer NCHW) and makes each
/// primitive, prepacking constant weights. \p bufferBytes and
/// \p constantBuffers are indexed by buffer id.
Error prepareLibrarySteps(EntrySpec &entry,
                          const std::vector<int64_t> &bufferBytes,
                          const std::vector<void *> &constantBuffers);

/// Threads: sets the pool size of kernels and library calls.
void setThreads(int threads);
/// Runs fn(buffers, begin, end) over [0, range) on the pool.
void runKernel(loom_kernel_fn fn, void *const *buffers, int64_t range);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_MODEL_H
