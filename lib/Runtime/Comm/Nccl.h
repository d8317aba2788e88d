//===- Nccl.h - Ranks of GPUs over NCCL -------------------------*- C++ -*-===//
//
// Part of Loom. The communicator of GPU ranks (docs/Runtime.md, "Ranks"):
// NCCL's non-blocking communicators on CUDA device memory. Neither NCCL nor
// the CUDA driver is linked: libnccl.so.2 (or LOOM_NCCL_LIBRARY) and
// libcuda.so.1 (or LOOM_CUDA_LIBRARY) are opened when a world asks for
// NCCL, so everything linking the communicators loads where neither is
// installed. NCCL's types come from the toolkit's nccl.h: Nccl.cpp is
// compiled where CMake finds it, NoNccl.cpp (every call an error saying
// so) where not.
//
// Every buffer given to an NCCL communicator is CUDA device memory of the
// device it was opened on (DeviceMemory below, or the CUDA device's
// allocations).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_NCCL_H
#define LOOM_LIB_RUNTIME_COMM_NCCL_H

#include "Communicator.h"

namespace loom::rt::comm {

/// Whether this build has the NCCL communicator (nccl.h was found).
bool ncclBuilt();

/// NCCL's unique id (ncclGetUniqueId, which needs no GPU) made on rank 0 of
/// \p host and broadcast over \p host to every rank before \p deadline.
/// Every rank calls it; \p id holds the same 128 bytes on each.
Error shareNcclId(Communicator &host, Deadline deadline, std::string &id);

/// The NCCL communicator over \p host's ranks, rank r on CUDA device
/// \p ordinal of its process: the unique id travels over \p host, then
/// every rank initialises a non-blocking communicator polled to
/// \p deadline (aborted when it passes). Every rank calls it. Without a
/// CUDA driver or device: LOOM_ERROR_NO_DEVICE saying which.
Error openNcclWorld(Communicator &host, int ordinal, Deadline deadline,
                    std::unique_ptr<Communicator> &out);

/// Device memory on the device of an NCCL communicator (tests and
/// scripts/gpu-check.sh), through the same driver.
class DeviceMemory {
public:
  /// \p bytes on \p nccl's device (a communicator from openNcclWorld).
  static Error allocate(Communicator &nccl, int64_t bytes,
                        std::unique_ptr<DeviceMemory> &out);
  virtual ~DeviceMemory();
  virtual void *data() const = 0;
  virtual Error write(const void *host, int64_t bytes) = 0;
  virtual Error read(void *host, int64_t bytes) const = 0;
};

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_NCCL_H
