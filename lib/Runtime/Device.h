//===- Device.h - The devices libloomrt runs programs on --------*- C++ -*-===//
//
// Part of Loom. The seam between the runtime's model (Runtime.cpp: loading,
// buffers, the step loop) and the hardware. A program of the artifact
// (docs/Artifact.md) runs on one Device: the device owns its memory, its
// queues and what it prepared for the program's library steps, and launches
// kernels, library steps and copies on a queue in the program's order.
//
// Three devices implement it: the CPU (CpuDevice.cpp), CUDA (CudaDevice.cpp:
// the driver API opened at run time, a queue per CUstream, kernels from a
// fatbin) and Vulkan (VulkanDevice.cpp: the loader opened at run time, one
// SPIR-V module, a compute pipeline per kernel); each device kind of
// DeviceKinds.def has a case in createDevice. Nothing here is process-wide:
// a device belongs to one loaded model, a queue to one context.
//
// Memory: the CPU's buffers are host memory, and the caller's tensors are
// used in place. A GPU's are not (usesHostMemory() is false): its
// allocations are addresses that only the device resolves (a CUdeviceptr; a
// reserved, inaccessible host address range per Vulkan allocation that maps
// back to its VkBuffer), and the runtime stages the caller's tensors
// (writeFromHost at an entry's start, readToHost at its end) and uploads
// the weights once at load. An address inside an allocation (base +
// offset) names the same place, so the runtime's arena arithmetic holds on
// every device.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_DEVICE_H
#define LOOM_LIB_RUNTIME_DEVICE_H

#include "Model.h"

#include "loom/Artifact/Schema.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace loom::rt {

class Device;

/// A point in a queue's order: complete once everything enqueued before it
/// was recorded has finished.
class Event {
public:
  virtual ~Event();
  /// Whether the work before it has finished (never blocks).
  virtual bool query() const = 0;
  /// Blocks until it has.
  virtual Error synchronize() const = 0;
  /// The device's seconds from \p earlier to this event, both recorded
  /// with Queue::recordTimed on one queue and complete.
  virtual Error secondsSince(const Event &earlier, double &seconds) const;
};

/// A run of a queue's work recorded once and replayed as one unit (a CUDA
/// graph), bound to the addresses it was recorded with.
class Graph {
public:
  virtual ~Graph();
};

/// An in-order queue of work on one device (a CUDA stream, a Vulkan queue
/// with its command buffers). Operations enqueued on one queue run in
/// order; a queue is used by one thread at a time.
class Queue {
public:
  virtual ~Queue();
  virtual Device &device() const = 0;
  /// Blocks until everything enqueued so far has finished.
  virtual Error synchronize() = 0;
  /// An event after everything enqueued so far (null where the device
  /// cannot record one: the failure surfaces at the next synchronize).
  virtual std::unique_ptr<Event> record() = 0;
  /// Work enqueued from now on waits for \p event (of any queue, of this
  /// device or another).
  virtual Error wait(const Event &event) = 0;
  /// Whether the queue keeps a clock of its own (a CUDA stream's timed
  /// events): then recordTimed marks it, and the step profile reads each
  /// step's device time between two marks instead of waiting for each step.
  virtual bool timesOnDevice() const { return false; }
  virtual std::unique_ptr<Event> recordTimed();

  /// Whether the queue can record the work enqueued between beginCapture
  /// and endCapture as a Graph instead of running it (a CUDA stream's
  /// capture), and replay that graph. The work captured must not read back
  /// to the host (no branch) nor copy from the host. The CPU and Vulkan
  /// queues cannot (their defaults refuse).
  virtual bool canCapture() const { return false; }
  virtual Error beginCapture();
  virtual Error endCapture(std::unique_ptr<Graph> &out);
  virtual Error replay(const Graph &graph);
};

/// What a prepared step runs, as the plan shows it (loom_entry_plan,
/// `loom-run --print-plan`; docs/Runtime.md "The plan"): the one place a
/// reader or a test learns which implementation the device chose.
struct StepDescription {
  StepDescription() = default;
  StepDescription(std::string implementation,
                  std::vector<std::string> operands = {},
                  std::string threads = "team")
      : implementation(std::move(implementation)),
        operands(std::move(operands)), threads(std::move(threads)) {}

  /// Who runs the step and how, the library's own name of its kernel
  /// included: "onednn convolution brgconv:avx512_core", "loom pointwise
  /// avx512", "openblas sgemm", "cublaslt matmul".
  std::string implementation;
  /// One entry per operand the device lays out: its role (the manifest's)
  /// and layout ("weights ABcd16b16a packed at load", "src nchw read as
  /// ba"), with a reorder at the step's edge as "src nchw->nChw16c by loom
  /// transpose avx512".
  std::vector<std::string> operands;
  /// The threads it runs on: "team" (the calling thread's OpenMP team),
  /// "openblas" (OpenBLAS's own threads) or a number.
  std::string threads = "team";
  /// What the step applies to its result in the same pass, in order: a
  /// oneDNN primitive's post-ops by oneDNN's names ("sum", "binary_add
  /// per-channel", "eltwise_relu", "eltwise_clip:0:6"), a Loom kernel's
  /// epilogue by the manifest's ("sum", "shift", "relu", "clip:0:6").
  std::vector<std::string> postOps;
};

/// A library step made ready once per model (a oneDNN primitive with its
/// weights prepacked, an OpenBLAS call's shapes): immutable, shared by every
/// context of the model. Only the device that prepared it launches it.
class PreparedStep {
public:
  virtual ~PreparedStep();
  /// What it runs (StepDescription).
  virtual StepDescription describe() const = 0;
};

/// Device memory holding an arena (freed with its device's deallocate).
struct Allocation {
  void *data = nullptr;
  int64_t bytes = 0;
};

class Device {
public:
  virtual ~Device();
  virtual artifact::DeviceKind kind() const = 0;
  /// Its ordinal among this machine's devices of its kind.
  virtual int64_t ordinal() const = 0;
  /// "cpu:0".
  std::string name() const;

  /// Whether this device runs code compiled for \p spec: an error naming
  /// what it lacks (an ISA feature, a compute capability).
  virtual Error supports(const artifact::Device &spec) const = 0;

  /// \p bytes of device memory, 64-byte aligned (and aligned to
  /// bufferAlignment()).
  virtual Error allocate(int64_t bytes, Allocation &out) = 0;
  virtual void deallocate(Allocation &allocation) = 0;

  /// \p bytes of host memory that copies to and from this device go
  /// fastest from (loom_context_host_alloc): page-locked on a CUDA device,
  /// whose copies then are DMA transfers the host does not take part in;
  /// by default ordinary memory aligned to 64 bytes. Freed by
  /// deallocateHost on the same device.
  virtual Error allocateHost(int64_t bytes, void *&out);
  virtual void deallocateHost(void *host);

  /// Whether the device's memory is the host's, so that the caller's
  /// tensors and the mapped weights are used in place (the CPU); otherwise
  /// the runtime stages them (see the file comment).
  virtual bool usesHostMemory() const = 0;
  /// The alignment, a power of two of at least 64, of the buffers a step
  /// binds (Vulkan: minStorageBufferOffsetAlignment): the runtime places
  /// the staged inputs, outputs and weights at its multiples.
  virtual int64_t bufferAlignment() const = 0;

  /// Takes the code of \p spec: the bytes of its image section (a GPU
  /// device copies what it keeps; a CPU has no image and refuses one).
  virtual Error loadImage(const artifact::Device &spec, const uint8_t *data,
                          uint64_t size) = 0;

  virtual std::unique_ptr<Queue> createQueue() = 0;

  /// Prepares the library steps of \p program, one of \p entry's programs
  /// on this device: \p out gets one element per step, null for host
  /// kernels, copies and control steps. A GPU device prepares each
  /// gpu.dispatch step too (its kernel resolved in the device's image). \p bufferBytes and \p constants (the address
  /// of each weight buffer, else null) are indexed by buffer id.
  /// \p layouts gets the layout of each buffer the device keeps in another
  /// than the manifest's row-major one (the CPU's layout plan: "nhwc",
  /// "nChw16c"), by buffer id: the one record of that decision.
  /// Tells the device, before it prepares any program, the constants (the
  /// addresses of weight buffers) that programs of more than one entry read
  /// (a decoder's prefill and decode): a device keeps one copy of each (the
  /// CPU packs none of them, docs/Runtime.md "Weights several entries
  /// read"). The default ignores it.
  virtual void setSharedConstants(std::unordered_set<const void *> shared) {
    (void)shared;
  }

  virtual Error prepare(const artifact::Entry &entry,
                        const artifact::Program &program,
                        const std::vector<int64_t> &bufferBytes,
                        const std::vector<void *> &constants,
                        std::vector<std::unique_ptr<PreparedStep>> &out,
                        std::map<int64_t, std::string> &layouts) = 0;

  /// Enqueues a generated kernel over [0, range): fn(args, begin, end) per
  /// chunk, on at most range / grain threads.
  virtual Error launchKernel(Queue &queue, loom_kernel_fn fn,
                             void *const *args, int64_t range,
                             int64_t grain) = 0;
  /// Enqueues a team kernel (artifact::KernelStep::team): every thread of
  /// the device's team calls fn(buffers, thread, team size) once, where
  /// buffers are the \p numArgs \p args followed by the team (a
  /// loom_team *, include/loom-c/ArtifactABI.h).
  virtual Error launchTeamKernel(Queue &queue, loom_kernel_fn fn,
                                 void *const *args, size_t numArgs) = 0;
  /// Enqueues a step this device prepared (a library step, a GPU kernel
  /// dispatch); \p buffers are the entry's buffer addresses.
  virtual Error launchLibrary(Queue &queue, const PreparedStep &step,
                              void *const *buffers) = 0;
  /// Enqueues a copy between two buffers of this device.
  virtual Error copy(Queue &queue, void *dst, const void *src,
                     int64_t bytes) = 0;
  /// Copies device bytes to the host once what \p queue holds has run
  /// (a branch reads its condition so; the runtime the outputs).
  virtual Error readToHost(Queue &queue, void *host, const void *src,
                           int64_t bytes) = 0;
  /// Enqueues a copy of host bytes to device memory, after what \p queue
  /// holds; \p host may be reused once it returns.
  virtual Error writeFromHost(Queue &queue, void *dst, const void *host,
                              int64_t bytes) = 0;
};

/// A launch's grid or block as the diagnostics write it: "[x, y, z]".
inline std::string launchSizes(const std::array<int64_t, 3> &s) {
  return "[" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " +
         std::to_string(s[2]) + "]";
}

/// What a model asks of its devices.
struct DeviceOptions {
  /// CPU: threads of kernels and library calls; 0: OpenMP's default.
  int threads = 0;
  /// GPU: the longest a wait for the device may take before the runtime
  /// gives up with an error (LOOM_DEVICE_TIMEOUT, seconds; default 60).
  double timeoutSeconds = 60;
};

/// The device of \p kind numbered \p ordinal on this machine, or an error
/// (LOOM_ERROR_INVALID_ARGUMENT) saying which there are.
Error createDevice(artifact::DeviceKind kind, int64_t ordinal,
                   const DeviceOptions &options,
                   std::unique_ptr<Device> &out);

/// The CPU device (CpuDevice.cpp).
Error createCpuDevice(int64_t ordinal, const DeviceOptions &options,
                      std::unique_ptr<Device> &out);
/// The Vulkan device (VulkanDevice.cpp): LOOM_ERROR_NO_DEVICE where there
/// is no Vulkan loader, no device of that ordinal, or where libloomrt was
/// built without the Vulkan headers.
Error createVulkanDevice(int64_t ordinal, const DeviceOptions &options,
                         std::unique_ptr<Device> &out);
/// The CUDA device (CudaDevice.cpp): LOOM_ERROR_NO_DEVICE where there is no
/// libcuda.so.1, no driver or no device of that ordinal.
Error createCudaDevice(int64_t ordinal, const DeviceOptions &options,
                       std::unique_ptr<Device> &out);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_DEVICE_H
