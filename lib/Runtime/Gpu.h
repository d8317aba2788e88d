//===- Gpu.h - What the GPU devices share -----------------------*- C++ -*-===//
//
// Part of Loom. The CUDA (CudaDevice.cpp) and Vulkan (VulkanDevice.cpp)
// devices: memory that is not the host's (the runtime stages inputs,
// outputs and weights, Device.h), no host kernels, and a program prepared
// step by step: each gpu.dispatch gets its launch checked against the
// device's limits and its kernel resolved in the device's image, and each
// library step of the device (CUDA's cublas.matmul) is prepared by it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_GPU_H
#define LOOM_LIB_RUNTIME_GPU_H

#include "Device.h"

namespace loom::rt {

class GpuDevice : public Device {
public:
  bool usesHostMemory() const final { return false; }

  Error launchKernel(Queue &, loom_kernel_fn, void *const *, int64_t,
                     int64_t) final {
    return makeError(LOOM_ERROR_FORMAT,
                     "a host kernel step cannot run on " + name());
  }
  Error launchTeamKernel(Queue &queue, loom_kernel_fn fn, void *const *args,
                         size_t) final {
    return launchKernel(queue, fn, args, 1, 1);
  }

  Error prepare(const artifact::Entry &, const artifact::Program &program,
                const std::vector<int64_t> &bufferBytes,
                const std::vector<void *> &,
                std::vector<std::unique_ptr<PreparedStep>> &out,
                std::map<int64_t, std::string> &) final {
    out.clear();
    for (size_t i = 0; i < program.steps.size(); ++i) {
      out.emplace_back();
      const artifact::Step &step = program.steps[i];
      std::string at = "step " + std::to_string(i) + " (" +
                       std::string(artifact::stepKindName(step.kind()));
      Error err = Error::ok();
      if (const auto *s = step.getIf<artifact::DispatchStep>())
        err = prepareDispatch(*s, at + " of '" + s->kernel + "'): ",
                              bufferBytes, out.back());
      else
        err = prepareLibrary(step, at + "): ", out.back());
      if (err)
        return err;
    }
    return Error::ok();
  }

protected:
  /// Prepares a library step of this device's own (cublas.matmul on CUDA);
  /// leaves \p out null for copies and control steps, which need nothing.
  virtual Error prepareLibrary(const artifact::Step &, const std::string &,
                               std::unique_ptr<PreparedStep> &) {
    return Error::ok();
  }
  /// Prepares one gpu.dispatch step; \p at starts its diagnostics.
  virtual Error prepareDispatch(const artifact::DispatchStep &step,
                                const std::string &at,
                                const std::vector<int64_t> &bufferBytes,
                                std::unique_ptr<PreparedStep> &out) = 0;
};

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_GPU_H
