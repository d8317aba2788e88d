//===- NoNccl.cpp - Builds without NCCL's header --------------------------===//
//
// Part of Loom. Where CMake finds no nccl.h, Nccl.h's functions are
// compiled from here: every one an error saying so.
//
//===----------------------------------------------------------------------===//

#include "Nccl.h"

using namespace loom::rt;
using namespace loom::rt::comm;

static Error notBuilt() {
  return makeError(LOOM_ERROR_LIBRARY,
                   "nccl: Loom was built without NCCL (no nccl.h found; "
                   "install the CUDA toolkit's NCCL and reconfigure)");
}

bool loom::rt::comm::ncclBuilt() { return false; }

Error loom::rt::comm::shareNcclId(Communicator &, Deadline, std::string &) {
  return notBuilt();
}

Error loom::rt::comm::openNcclWorld(Communicator &, int, Deadline,
                                    std::unique_ptr<Communicator> &out) {
  out.reset();
  return notBuilt();
}

DeviceMemory::~DeviceMemory() = default;

Error DeviceMemory::allocate(Communicator &, int64_t,
                             std::unique_ptr<DeviceMemory> &out) {
  out.reset();
  return notBuilt();
}
