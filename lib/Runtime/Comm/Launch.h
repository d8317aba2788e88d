//===- Launch.h - Which rank this process is, from its launcher -*- C++ -*-===//
//
// Part of Loom. A rank learns its place in the world from the variables its
// launcher set: mpirun (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_*),
// torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or
// loom-launch (LOOM_*). Two launchers that disagree are an error naming
// both; no launcher at all is a world of one rank (docs/Runtime.md, "Ranks").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_LAUNCH_H
#define LOOM_LIB_RUNTIME_COMM_LAUNCH_H

#include "../Model.h"

#include <map>
#include <string>

namespace loom::rt::comm {

/// A process's environment, by name.
using Environment = std::map<std::string, std::string>;

/// This process's environment (environ).
Environment processEnvironment();

/// loom-launch's variables (docs/tools/loom-launch.md).
inline constexpr const char *kLaunchRankVar = "LOOM_RANK";
inline constexpr const char *kLaunchSizeVar = "LOOM_WORLD_SIZE";
inline constexpr const char *kLaunchLocalRankVar = "LOOM_LOCAL_RANK";
/// HOST:PORT of the store loom-launch hosts.
inline constexpr const char *kLaunchStoreVar = "LOOM_STORE";

/// This process's place in the world.
struct LaunchInfo {
  int rank = 0, size = 1, localRank = 0;
  /// Who said so: "mpirun", "slurm", "torchrun", "loom-launch", or "none"
  /// (no launcher: a world of one rank). The sources that agree, joined
  /// with '+', when several did.
  std::string source = "none";
  /// Whether MPI's variables are among them (the world then talks MPI).
  bool mpi = false;
  /// The store's address, where the launcher gave one (loom-launch's
  /// LOOM_STORE, torchrun's MASTER_ADDR and MASTER_PORT): rank 0 hosts it
  /// unless loom-launch does.
  std::string storeHost;
  int storePort = 0;
  /// Whether the launcher hosts the store (loom-launch), or rank 0 must.
  bool launcherHostsStore = false;
};

/// Reads \p env. Malformed values ("RANK=x", a rank not below the size) and
/// launchers that disagree are LOOM_ERROR_INVALID_ARGUMENT naming the
/// variables.
Error readLaunchInfo(const Environment &env, LaunchInfo &out);

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_LAUNCH_H
