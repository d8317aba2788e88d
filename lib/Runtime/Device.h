//===- Device.h - The devices libloomrt runs programs on --------*- C++ -*-===//
//
// Part of Loom. The seam between the runtime's model (Runtime.cpp: loading,
// buffers, the step loop) and the hardware. A program of the artifact
// (docs/Artifact.md) runs on one Device: the device owns its memory, its
// queues and what it prepared for the program's library steps, and launches
// kernels, library steps and copies on a queue in the program's order.
//
// The CPU device (CpuDevice.cpp) is the one there is now. The CUDA device
// (driver API opened at run time, a queue per CUstream, events as CUevent,
// cuBLASLt/cuDNN prepared steps, kernels from a fatbin) and the Vulkan one
// implement the same interface; each device kind of DeviceKinds.def has a
// case in createDevice. Nothing here is process-wide: a device belongs to
// one loaded model, a queue to one context.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_DEVICE_H
#define LOOM_LIB_RUNTIME_DEVICE_H

#include "Model.h"

#include "loom/Artifact/Schema.h"

#include <memory>
#include <string>
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
  /// An event after everything enqueued so far.
  virtual std::unique_ptr<Event> record() = 0;
  /// Work enqueued from now on waits for \p event (of any queue, of this
  /// device or another).
  virtual Error wait(const Event &event) = 0;
};

/// A library step made ready once per model (a oneDNN primitive with its
/// weights prepacked, an OpenBLAS call's shapes): immutable, shared by every
/// context of the model. Only the device that prepared it launches it.
class PreparedStep {
public:
  virtual ~PreparedStep();
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

  /// \p bytes of device memory, 64-byte aligned.
  virtual Error allocate(int64_t bytes, Allocation &out) = 0;
  virtual void deallocate(Allocation &allocation) = 0;

  virtual std::unique_ptr<Queue> createQueue() = 0;

  /// Prepares the library steps of \p program, one of \p entry's programs
  /// on this device: \p out gets one element per step, null for host
  /// kernels, copies and control steps. A GPU device prepares each
  /// gpu.dispatch step too (its kernel resolved in the device's image). \p bufferBytes and \p constants (the address
  /// of each weight buffer, else null) are indexed by buffer id.
  virtual Error prepare(const artifact::Entry &entry,
                        const artifact::Program &program,
                        const std::vector<int64_t> &bufferBytes,
                        const std::vector<void *> &constants,
                        std::vector<std::unique_ptr<PreparedStep>> &out) = 0;

  /// Enqueues a generated kernel over [0, range): fn(args, begin, end) per
  /// chunk.
  virtual Error launchKernel(Queue &queue, loom_kernel_fn fn,
                             void *const *args, int64_t range) = 0;
  /// Enqueues a step this device prepared (a library step, a GPU kernel
  /// dispatch); \p buffers are the entry's buffer addresses.
  virtual Error launchLibrary(Queue &queue, const PreparedStep &step,
                              void *const *buffers) = 0;
  /// Enqueues a copy between two buffers of this device.
  virtual Error copy(Queue &queue, void *dst, const void *src,
                     int64_t bytes) = 0;
  /// Copies device bytes to the host once what \p queue holds has run
  /// (a branch reads its condition so).
  virtual Error readToHost(Queue &queue, void *host, const void *src,
                           int64_t bytes) = 0;
};

/// What a model asks of its devices.
struct DeviceOptions {
  /// CPU: threads of kernels and library calls; 0: OpenMP's default.
  int threads = 0;
};

/// The device of \p kind numbered \p ordinal on this machine, or an error
/// (LOOM_ERROR_INVALID_ARGUMENT) saying which there are.
Error createDevice(artifact::DeviceKind kind, int64_t ordinal,
                   const DeviceOptions &options,
                   std::unique_ptr<Device> &out);

/// The CPU device (CpuDevice.cpp).
Error createCpuDevice(int64_t ordinal, const DeviceOptions &options,
                      std::unique_ptr<Device> &out);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_DEVICE_H
