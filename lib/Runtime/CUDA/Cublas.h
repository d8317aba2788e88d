//===- Cublas.h - cuBLASLt for the CUDA device ------------------*- C++ -*-===//
//
// Part of Loom. The CUDA device's cublas.matmul steps (docs/Runtime.md,
// "Library steps on a GPU"): libcublasLt is opened at run time, never
// linked, and only when a program has such a step; one handle per device,
// each step's descriptors and algorithm made at load, and the step
// enqueued on the queue's stream with the queue's workspace. The calls
// need the device's context current (CudaDevice::current()).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUBLAS_H
#define LOOM_LIB_RUNTIME_CUBLAS_H

#include "Device.h"

#include <memory>
#include <string>

namespace loom::rt::cublas {

/// The workspace each queue gives cuBLASLt (NVIDIA's advice for Hopper:
/// 32 MiB), and the most a prepared algorithm may ask for; cuDNN's plans
/// share it (CudaDevice.cpp).
constexpr int64_t kWorkspaceBytes = int64_t(32) << 20;

class Library {
public:
  ~Library();
  /// Opens LOOM_CUBLASLT_LIBRARY, else libcublasLt.so.13 (the CUDA 13
  /// toolkit's soname; then /usr/local/cuda/lib64's, then CUDA 12's), and
  /// creates a handle; \p device names the device in errors. A library
  /// that is absent is LOOM_ERROR_LIBRARY naming it.
  static Error open(const std::string &device, std::unique_ptr<Library> &out);
  /// The step's descriptors and the algorithm cuBLASLt's heuristic picks
  /// for them within kWorkspaceBytes; \p at starts its diagnostics.
  Error prepare(const artifact::CublasMatmulStep &step, const std::string &at,
                std::unique_ptr<PreparedStep> &out) const;
  /// Enqueues \p step (one this library prepared) on \p stream (a
  /// CUstream) over \p buffers, the entry's buffer addresses, with
  /// \p workspace (kWorkspaceBytes of device memory, the queue's).
  Error launch(const PreparedStep &step, void *stream, void *const *buffers,
               void *workspace) const;

  struct Api;

private:
  Library() = default;
  Error check(int status, const std::string &what) const;

  std::string device;
  std::unique_ptr<Api> api;
  void *handle = nullptr;
};

} // namespace loom::rt::cublas

#endif // LOOM_LIB_RUNTIME_CUBLAS_H
