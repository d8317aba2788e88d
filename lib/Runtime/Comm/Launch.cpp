//===- Launch.cpp - Which rank this process is, from its launcher ---------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

extern char **environ;

using namespace loom::rt;
using namespace loom::rt::comm;

Environment loom::rt::comm::processEnvironment() {
  Environment env;
  for (char **e = environ; e && *e; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos)
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

namespace {

/// One launcher's variables.
struct Source {
  const char *name;
  const char *rank, *size, *localRank;
};

const Source kSources[] = {
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"loom-launch", kLaunchRankVar, kLaunchSizeVar, kLaunchLocalRankVar},
};

/// \p name's value as an integer in [lo, hi].
Error readInt(const Environment &env, const char *name, long lo, long hi,
              int &out) {
  auto it = env.find(name);
  const std::string &text = it->second;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < lo || v > hi)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "launch: " + std::string(name) + "=" + text +
                         " is not an integer in [" + std::to_string(lo) +
                         ", " + std::to_string(hi) + "]");
  out = static_cast<int>(v);
  return Error::ok();
}

/// What \p source says, if it set anything: rank and size are required,
/// the local rank defaults to the rank.
Error readSource(const Environment &env, const Source &source, bool &present,
                 LaunchInfo &out) {
  present = env.count(source.rank) || env.count(source.size) ||
            env.count(source.localRank);
  if (!present)
    return Error::ok();
  for (const char *required : {source.rank, source.size})
    if (!env.count(required))
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       std::string("launch: ") + source.name + " variables " +
                           "without " + required);
  if (Error e = readInt(env, source.size, 1, 1 << 20, out.size))
    return e;
  if (Error e = readInt(env, source.rank, 0, out.size - 1, out.rank))
    return e;
  out.localRank = out.rank;
  if (env.count(source.localRank))
    if (Error e = readInt(env, source.localRank, 0, out.size - 1,
                          out.localRank))
      return e;
  out.source = source.name;
  return Error::ok();
}

std::string describe(const Source &source, const LaunchInfo &info) {
  return std::string(source.name) + " says rank " +
         std::to_string(info.rank) + " of " + std::to_string(info.size) +
         " (local rank " + std::to_string(info.localRank) + "; " +
         source.rank + ", " + source.size + ", " + source.localRank + ")";
}

/// HOST:PORT into \p out's store address.
Error readStore(const std::string &name, const std::string &host,
                const std::string &port, LaunchInfo &out) {
  char *end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (host.empty() || port.empty() || *end || p < 1 || p > 65535)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "launch: " + name + " is not HOST:PORT with a port in "
                                         "[1, 65535]");
  out.storeHost = host;
  out.storePort = static_cast<int>(p);
  return Error::ok();
}

} // namespace

Error loom::rt::comm::readLaunchInfo(const Environment &env, LaunchInfo &out) {
  out = LaunchInfo();
  const Source *first = nullptr;
  for (const Source &source : kSources) {
    bool present = false;
    LaunchInfo info;
    if (Error e = readSource(env, source, present, info))
      return e;
    if (!present)
      continue;
    if (!first) {
      first = &source;
      out = info;
    } else if (info.rank != out.rank || info.size != out.size ||
               info.localRank != out.localRank) {
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "launch: " + describe(*first, out) + " but " +
                           describe(source, info));
    } else {
      out.source += std::string("+") + source.name;
    }
    if (&source == &kSources[0])
      out.mpi = true;
  }
  auto store = env.find(kLaunchStoreVar);
  if (store != env.end()) {
    size_t colon = store->second.rfind(':');
    std::string value = store->second;
    if (Error e = readStore(
            std::string(kLaunchStoreVar) + "=" + value,
            colon == std::string::npos ? "" : value.substr(0, colon),
            colon == std::string::npos ? "" : value.substr(colon + 1), out))
      return e;
    out.launcherHostsStore = true;
  } else if (env.count("MASTER_ADDR") || env.count("MASTER_PORT")) {
    std::string addr = env.count("MASTER_ADDR") ? env.at("MASTER_ADDR") : "";
    std::string port = env.count("MASTER_PORT") ? env.at("MASTER_PORT") : "";
    if (Error e = readStore("MASTER_ADDR=" + addr + " MASTER_PORT=" + port,
                            addr, port, out))
      return e;
  }
  return Error::ok();
}
