//===- World.h - The world communicator of this process --------*- C++ -*-===//
//
// Part of Loom. From a rank's launch information (Launch.h) to the
// communicator over all ranks: MPI under mpirun (libloomrt-mpi.so, opened
// at run time), TCP through the store under loom-launch and torchrun-style
// variables, a world of one rank without a launcher.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_WORLD_H
#define LOOM_LIB_RUNTIME_COMM_WORLD_H

#include "Communicator.h"
#include "Launch.h"

namespace loom::rt::comm {

/// The module holding the MPI communicator, and the function it exports.
inline constexpr const char *kMpiModule = "libloomrt-mpi.so";
inline constexpr const char *kMpiWorldSymbol = "loom_comm_mpi_world";
/// loom_comm_mpi_world's type: the world of MPI_COMM_WORLD, or an error.
using MpiWorldFn = void (*)(const Deadline *deadline, Error *error,
                            Communicator **out);

/// The communicator over every rank of \p info's world, connected before
/// \p deadline. Under torchrun-style variables rank 0 hosts the store at
/// MASTER_ADDR:MASTER_PORT.
Error openWorld(const LaunchInfo &info, Deadline deadline,
                std::unique_ptr<Communicator> &out);

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_WORLD_H
