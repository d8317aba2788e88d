//===- Cudnn.h - cuDNN for the CUDA device ----------------------*- C++ -*-===//
//
// Part of Loom. The CUDA device's cudnn.conv steps (docs/Runtime.md,
// "Library steps on a GPU"): libcudnn.so.9 is opened at run time, never
// linked, and only when a program has such a step; one handle per device;
// each step's operation graph (convolution, bias add, activation), engine
// configuration and execution plan made at load; at each launch a variant
// pack of the context's buffers, executed on the queue's stream with the
// queue's library workspace. The calls need the device's context current
// (CudaDevice::current()).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDNN_H
#define LOOM_LIB_RUNTIME_CUDNN_H

#include "Device.h"

#include <memory>
#include <mutex>
#include <string>

namespace loom::rt::cudnn {

class Library {
public:
  ~Library();
  /// Opens LOOM_CUDNN_LIBRARY, else libcudnn.so.9 (then
  /// /usr/local/cuda/lib64's and /usr/local/cuda/lib's) and checks that it
  /// is cuDNN 9; \p device names the device in errors. A library that is
  /// absent is LOOM_ERROR_LIBRARY naming it.
  static Error open(const std::string &device, std::unique_ptr<Library> &out);
  /// The step's descriptors (tensors, convolution, operations: finalized
  /// before any handle exists, so cuDNN checks them without a GPU), then
  /// the handle (created at the first step), the operation graph and the
  /// first engine configuration of cuDNN's heuristics (mode A, then the
  /// fallback list) that computes in f32 and needs at most \p maxWorkspace
  /// bytes, as an execution plan; \p at starts its diagnostics.
  Error prepare(const artifact::CudnnConvStep &step, const std::string &at,
                int64_t maxWorkspace, std::unique_ptr<PreparedStep> &out);
  /// Executes \p step (one this library prepared) on \p stream (a
  /// CUstream) over \p buffers, the entry's buffer addresses, with
  /// \p workspace (maxWorkspace bytes of device memory, the queue's).
  Error launch(const PreparedStep &step, void *stream, void *const *buffers,
               void *workspace) const;

  struct Api;

private:
  Library() = default;
  Error check(int status, const std::string &what) const;

  std::string device;
  std::unique_ptr<Api> api;
  void *handle = nullptr;
  /// The handle's stream is set before each execution: one at a time.
  mutable std::mutex lock;
};

} // namespace loom::rt::cudnn

#endif // LOOM_LIB_RUNTIME_CUDNN_H
