//===- World.cpp - The world communicator of this process -----------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "World.h"

#include "Peer.h"
#include "Tcp.h"

#include <dlfcn.h>

using namespace loom::rt;
using namespace loom::rt::comm;

/// The directory of the object (libloomrt.so, or a tool linking the
/// communicators statically) that holds this code.
static std::string thisObjectDirectory() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void *>(&thisObjectDirectory), &info) ||
      !info.dli_fname)
    return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// libloomrt-mpi.so beside this object or in ../lib (a tool in bin/),
/// else wherever the dynamic linker finds it.
static Error openMpiModule(MpiWorldFn &fn) {
  std::string dir = thisObjectDirectory();
  std::string tried;
  void *handle = nullptr;
  for (std::string path : {dir + "/" + kMpiModule,
                           dir + "/../lib/" + kMpiModule,
                           std::string(kMpiModule)}) {
    // Global, so that OpenMPI's components find libmpi's symbols.
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle)
      break;
    const char *why = ::dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  if (!handle)
    return makeError(LOOM_ERROR_LIBRARY,
                     "mpirun's variables are set but the MPI communicator "
                     "cannot be opened (build Loom with MPI):" + tried);
  fn = reinterpret_cast<MpiWorldFn>(::dlsym(handle, kMpiWorldSymbol));
  if (!fn)
    return makeError(LOOM_ERROR_LIBRARY, std::string(kMpiModule) +
                                             " lacks " + kMpiWorldSymbol);
  return Error::ok();
}

Error loom::rt::comm::openWorld(const LaunchInfo &info, Deadline deadline,
                                std::unique_ptr<Communicator> &out) {
  out.reset();
  if (info.mpi) {
    MpiWorldFn fn = nullptr;
    if (Error e = openMpiModule(fn))
      return e;
    Error error;
    Communicator *world = nullptr;
    fn(&deadline, &error, &world);
    out.reset(world);
    return error;
  }
  if (info.size == 1) {
    std::vector<std::unique_ptr<Communicator>> one;
    createThreadWorld(1, one);
    out = std::move(one[0]);
    return Error::ok();
  }
  if (info.storeHost.empty())
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "launch: " + info.source + " started " +
                         std::to_string(info.size) +
                         " ranks but gave no store address: launch with "
                         "mpirun or loom-launch, or set MASTER_ADDR and "
                         "MASTER_PORT");
  std::unique_ptr<StoreServer> store;
  if (info.rank == 0 && !info.launcherHostsStore) {
    store = std::make_unique<StoreServer>();
    if (Error e = store->start("", info.storePort))
      return e;
  }
  return createTcpWorld(info.rank, info.size, info.storeHost, info.storePort,
                        "loom/world", std::move(store), deadline, out);
}
