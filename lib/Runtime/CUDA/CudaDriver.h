//===- CudaDriver.h - The CUDA driver opened at run time --------*- C++ -*-===//
//
// Part of Loom. How the CUDA device (CudaDevice.cpp) and the NCCL
// communicator (Comm/Nccl.cpp) open the driver, never linked: the file
// LOOM_CUDA_LIBRARY names, else libcuda.so.1; cuGetProcAddress_v2 is the one
// symbol taken with dlsym, and every other entry point is asked of it at
// the CUDA 12.0 ABI (whatever driver runs, the signatures are 12.0's).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDA_CUDADRIVER_H
#define LOOM_LIB_RUNTIME_CUDA_CUDADRIVER_H

#include "DynamicSymbols.h"

namespace loom::rt {

/// Opens the CUDA driver into \p driver; see DynamicLibrary::open.
inline bool openCudaDriver(DynamicLibrary &driver) {
  return driver.open("LOOM_CUDA_LIBRARY", {"libcuda.so.1"});
}

/// The driver's entry points at the CUDA 12.0 ABI, through its
/// cuGetProcAddress_v2; empty when the driver has none (older than 12.0).
inline SymbolLookup cudaDriverLookup(const DynamicLibrary &driver) {
  // cuGetProcAddress_v2(symbol, &address, cudaVersion, flags, &status).
  using GetProcAddress =
      int (*)(const char *, void **, int, unsigned long long, int *);
  auto getProc =
      reinterpret_cast<GetProcAddress>(driver.symbol("cuGetProcAddress_v2"));
  if (!getProc)
    return {};
  return [getProc](const char *name) -> void * {
    constexpr int kCudaVersion = 12000;
    void *address = nullptr;
    int status = 0;
    if (getProc(name, &address, kCudaVersion, 0, &status) != 0)
      return nullptr;
    return address;
  };
}

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_CUDA_CUDADRIVER_H
