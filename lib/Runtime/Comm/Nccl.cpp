//===- Nccl.cpp - Ranks of GPUs over NCCL ---------------------------------===//
//
// Part of Loom. See Nccl.h and docs/Runtime.md, "Ranks". Built where the
// toolkit's nccl.h is found; NCCL and the CUDA driver are opened at run
// time (dlopen), never linked, and their entry points resolved then: NCCL's
// with dlsym, the driver's through cuGetProcAddress_v2 at the CUDA 12.0 ABI
// (as CudaDevice.cpp does).
//
// Every communicator is non-blocking (ncclConfig_t::blocking = 0): an
// initialisation, a split and a group's end return ncclInProgress, and
// ncclCommGetAsyncError is polled until the communicator is ready; the work
// is then queued on the communicator's stream, and cuStreamQuery is polled
// (with ncclCommGetAsyncError, which reports a failed peer) until it is
// done. Polling backs off to a millisecond's sleep. When the deadline
// passes first, or NCCL reports an error, the communicator is aborted
// (ncclCommAbort, which also ends kernels waiting for a peer): it is then
// unusable, and the error names the operation and the rank.
//
//===----------------------------------------------------------------------===//

#include "Nccl.h"

#include "Peer.h"

#include "CUDA/CudaDriver.h"
#include "DynamicSymbols.h"

#include <cuda.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

// clang-format off
#define LOOM_NCCL_FUNCTIONS(X)                                                 \
  X(ncclGetUniqueId) X(ncclCommInitRankConfig) X(ncclCommGetAsyncError)        \
  X(ncclCommAbort) X(ncclCommFinalize) X(ncclCommDestroy) X(ncclGroupStart)    \
  X(ncclGroupEnd) X(ncclSend) X(ncclRecv) X(ncclAllReduce) X(ncclBroadcast)    \
  X(ncclCommSplit) X(ncclCommCount) X(ncclCommUserRank) X(ncclGetErrorString)  \
  X(ncclGetLastError)

#define LOOM_NCCL_CUDA_FUNCTIONS(X)                                            \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)          \
  X(cuStreamCreate) X(cuStreamQuery) X(cuStreamDestroy) X(cuMemAlloc)          \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuGetErrorName)
// clang-format on

/// NCCL's entry points, from libnccl.so.2. Never closed: NCCL's threads
/// (the unique id's bootstrap root, a communicator's proxy) run its code
/// until the process exits.
struct NcclLibrary {
  Error open();

  DynamicLibrary library;
#define LOOM_NCCL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  LOOM_NCCL_FUNCTIONS(LOOM_NCCL_MEMBER)
#undef LOOM_NCCL_MEMBER
};

Error NcclLibrary::open() {
  library.keepOpen();
  if (!library.open("LOOM_NCCL_LIBRARY", {"libnccl.so.2"}))
    return makeError(LOOM_ERROR_LIBRARY,
                     "nccl: cannot open " + library.tried() + ": " +
                         library.reason() + " (install NCCL)");
#define LOOM_NCCL_SYMBOL(fn) requiredSymbol(#fn, fn),
  if (const char *missing =
          library.resolve({LOOM_NCCL_FUNCTIONS(LOOM_NCCL_SYMBOL)}))
    return makeError(LOOM_ERROR_LIBRARY, "nccl: " + library.tried() +
                                             " has no " + missing +
                                             " (NCCL 2.18 or later needed)");
#undef LOOM_NCCL_SYMBOL
  return Error::ok();
}

/// One process's NCCL and CUDA device: the libraries, the device's primary
/// context. Shared by a world's communicator and those split from it.
struct NcclRuntime {
  ~NcclRuntime();
  /// Opens libcuda.so.1 and device \p ordinal's primary context.
  Error openDevice(int ordinal);
  /// Makes the context the calling thread's.
  Error current() const {
    return check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }
  Error check(CUresult r, const char *what) const;

  NcclLibrary nccl;
  struct {
#define LOOM_NCCL_CUDA_MEMBER(fn) decltype(&::fn) fn = nullptr;
    LOOM_NCCL_CUDA_FUNCTIONS(LOOM_NCCL_CUDA_MEMBER)
#undef LOOM_NCCL_CUDA_MEMBER
  } cuda;
  DynamicLibrary driver;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

NcclRuntime::~NcclRuntime() {
  // The driver stays open, as NCCL (which opened it too) may still use it.
  if (context)
    cuda.cuDevicePrimaryCtxRelease(device);
}

Error NcclRuntime::check(CUresult r, const char *what) const {
  if (r == CUDA_SUCCESS)
    return Error::ok();
  const char *code = nullptr;
  if (cuda.cuGetErrorName)
    cuda.cuGetErrorName(r, &code);
  return makeError(LOOM_ERROR_LIBRARY,
                   std::string("nccl: ") + what + " failed (" +
                       (code ? code : "CUresult " + std::to_string(r)) + ")");
}

Error NcclRuntime::openDevice(int ordinal) {
  std::string where = "nccl: no CUDA device " + std::to_string(ordinal) + ": ";
  driver.keepOpen();
  if (!openCudaDriver(driver))
    return makeError(LOOM_ERROR_NO_DEVICE,
                     where + driver.tried() + " not found (no CUDA driver)");
  SymbolLookup lookup = cudaDriverLookup(driver);
  if (!lookup)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     where + driver.tried() +
                         " has no cuGetProcAddress_v2 (a CUDA "
                         "driver older than 12.0)");
#define LOOM_NCCL_CUDA_SYMBOL(fn) requiredSymbol(#fn, cuda.fn),
  if (const char *missing = resolveSymbols(
          {LOOM_NCCL_CUDA_FUNCTIONS(LOOM_NCCL_CUDA_SYMBOL)}, lookup))
    return makeError(LOOM_ERROR_NO_DEVICE,
                     where + "the CUDA driver has no " + missing);
#undef LOOM_NCCL_CUDA_SYMBOL
  if (CUresult r = cuda.cuInit(0))
    return makeError(LOOM_ERROR_NO_DEVICE, where + check(r, "cuInit").message);
  int count = 0;
  cuda.cuDeviceGetCount(&count);
  if (ordinal < 0 || ordinal >= count)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     where + "the CUDA driver found " + std::to_string(count) +
                         " device" + (count == 1 ? "" : "s"));
  if (Error e = check(cuda.cuDeviceGet(&device, ordinal), "cuDeviceGet"))
    return e;
  if (Error e = check(cuda.cuDevicePrimaryCtxRetain(&context, device),
                      "cuDevicePrimaryCtxRetain"))
    return e;
  return current();
}

/// A pause that doubles up to a millisecond.
struct Backoff {
  void operator()() {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2 + std::chrono::microseconds(10),
                     std::chrono::microseconds(1000));
  }
  std::chrono::microseconds pause{0};
};

class NcclCommunicator final : public Communicator {
public:
  /// Takes \p comm, being initialised; \p scope names its ranks in
  /// messages ("rank", "split rank").
  NcclCommunicator(std::shared_ptr<NcclRuntime> runtime, ncclComm_t comm,
                   std::string scope)
      : runtime(std::move(runtime)), comm(comm), scope(std::move(scope)) {}
  ~NcclCommunicator() override;
  /// Waits for the initialisation, then takes the rank and size and makes
  /// the stream and the barrier's value.
  Error start(const char *op, Deadline deadline);

  int rank() const override { return me; }
  int size() const override { return count; }
  const char *transport() const override { return "nccl"; }
  Error exchange(std::vector<Message> &messages, Deadline deadline) override;
  Error allReduceSum(float *data, int64_t n, Deadline deadline) override;
  Error broadcast(void *data, int64_t bytes, int root,
                  Deadline deadline) override;
  Error barrier(Deadline deadline) override;
  Error split(int color, int key, Deadline deadline,
              std::unique_ptr<Communicator> &out) override;
  void abort() override;

  std::shared_ptr<NcclRuntime> shared() const { return runtime; }

private:
  /// Polls ncclCommGetAsyncError until the communicator is no longer in
  /// progress; aborts it on an error or at \p deadline.
  Error ready(const char *op, Deadline deadline);
  /// Polls the stream until its work is done; aborts as ready() does.
  Error finish(const char *op, Deadline deadline);
  /// The result of an NCCL call: in progress is fine (ready() waits).
  Error called(const char *op, ncclResult_t r);
  Error failed(const char *op, const std::string &why);
  std::string rankName(int r) const { return scope + " " + std::to_string(r); }

  std::shared_ptr<NcclRuntime> runtime;
  ncclComm_t comm = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr one = 0;
  std::string scope;
  int me = 0, count = 1;
  /// Set once: abort() may come from the failure monitor's thread.
  std::atomic<bool> aborted{false};
};

ncclConfig_t nonBlockingConfig() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

} // namespace

Error NcclCommunicator::failed(const char *op, const std::string &why) {
  abort();
  return makeError(LOOM_ERROR_COMMUNICATION,
                   std::string(op) + ": " + rankName(me) + ": " + why +
                       " (nccl: communicator aborted)");
}

Error NcclCommunicator::called(const char *op, ncclResult_t r) {
  if (r == ncclSuccess || r == ncclInProgress)
    return Error::ok();
  const NcclLibrary &nccl = runtime->nccl;
  std::string why = nccl.ncclGetErrorString(r);
  if (const char *last = nccl.ncclGetLastError(comm); last && *last)
    why += std::string(": ") + last;
  return failed(op, why);
}

Error NcclCommunicator::ready(const char *op, Deadline deadline) {
  if (aborted)
    return makeError(LOOM_ERROR_COMMUNICATION,
                     std::string(op) + ": " + rankName(me) +
                         ": the communicator was aborted");
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    if (Error e = called(op, runtime->nccl.ncclCommGetAsyncError(comm, &state)))
      return e;
    if (state == ncclSuccess)
      return Error::ok();
    if (Error e = called(op, state))
      return e;
    if (Clock::now() >= deadline)
      return failed(op, "deadline passed waiting for NCCL");
    backoff();
  }
}

Error NcclCommunicator::finish(const char *op, Deadline deadline) {
  if (Error e = ready(op, deadline))
    return e;
  Backoff backoff;
  for (;;) {
    CUresult r = runtime->cuda.cuStreamQuery(stream);
    if (r == CUDA_SUCCESS)
      return Error::ok();
    if (r != CUDA_ERROR_NOT_READY)
      return failed(op, runtime->check(r, "cuStreamQuery").message);
    ncclResult_t state = ncclSuccess;
    runtime->nccl.ncclCommGetAsyncError(comm, &state);
    if (Error e = called(op, state))
      return e;
    if (Clock::now() >= deadline)
      return failed(op, "deadline passed waiting for every peer of the "
                        "operation");
    backoff();
  }
}

Error NcclCommunicator::start(const char *op, Deadline deadline) {
  if (Error e = ready(op, deadline))
    return e;
  NcclRuntime &rt = *runtime;
  if (Error e = called(op, rt.nccl.ncclCommUserRank(comm, &me)))
    return e;
  if (Error e = called(op, rt.nccl.ncclCommCount(comm, &count)))
    return e;
  if (Error e =
          rt.check(rt.cuda.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                   "cuStreamCreate"))
    return e;
  return rt.check(rt.cuda.cuMemAlloc(&one, sizeof(float)), "cuMemAlloc");
}

void NcclCommunicator::abort() {
  if (!comm || aborted.exchange(true))
    return;
  runtime->current();
  runtime->nccl.ncclCommAbort(comm);
}

NcclCommunicator::~NcclCommunicator() {
  runtime->current();
  if (comm && !aborted) {
    // Flush what was issued; a peer gone meanwhile must not hold the exit
    // (ready() aborts the communicator when it fails).
    ncclResult_t r = runtime->nccl.ncclCommFinalize(comm);
    if (r != ncclSuccess && r != ncclInProgress)
      abort();
    else if (!ready("finalize", Clock::now() + std::chrono::seconds(5)))
      runtime->nccl.ncclCommDestroy(comm);
  }
  if (stream)
    runtime->cuda.cuStreamDestroy(stream);
  if (one)
    runtime->cuda.cuMemFree(one);
}

Error NcclCommunicator::exchange(std::vector<Message> &messages,
                                 Deadline deadline) {
  if (Error e = checkMessages(messages, me, size(), INT64_MAX))
    return e;
  if (Error e = runtime->current())
    return e;
  if (Error e = ready("exchange", deadline))
    return e;
  const NcclLibrary &nccl = runtime->nccl;
  if (Error e = called("exchange", nccl.ncclGroupStart()))
    return e;
  ncclResult_t posted = ncclSuccess;
  for (const Message &m : messages) {
    size_t n = size_t(m.bytes);
    posted = m.direction == Message::Direction::Send
                 ? nccl.ncclSend(m.data, n, ncclInt8, m.peer, comm, stream)
                 : nccl.ncclRecv(m.data, n, ncclInt8, m.peer, comm, stream);
    if (posted != ncclSuccess && posted != ncclInProgress)
      break;
  }
  ncclResult_t ended = nccl.ncclGroupEnd();
  if (Error e = called("exchange", posted))
    return e;
  if (Error e = called("exchange", ended))
    return e;
  return finish("exchange", deadline);
}

Error NcclCommunicator::allReduceSum(float *data, int64_t n,
                                     Deadline deadline) {
  if (n < 0 || (n > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "all-reduce: " + std::to_string(n) + " values");
  if (Error e = runtime->current())
    return e;
  if (Error e = ready("all-reduce", deadline))
    return e;
  if (Error e = called("all-reduce", runtime->nccl.ncclAllReduce(
                                         data, data, size_t(n), ncclFloat32,
                                         ncclSum, comm, stream)))
    return e;
  return finish("all-reduce", deadline);
}

Error NcclCommunicator::broadcast(void *data, int64_t bytes, int root,
                                  Deadline deadline) {
  if (root < 0 || root >= size() || bytes < 0 || (bytes > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "broadcast: root " + std::to_string(root) + " of " +
                         std::to_string(size()) + ", " + std::to_string(bytes) +
                         " bytes");
  if (Error e = runtime->current())
    return e;
  if (Error e = ready("broadcast", deadline))
    return e;
  if (Error e = called("broadcast", runtime->nccl.ncclBroadcast(
                                        data, data, size_t(bytes), ncclInt8,
                                        root, comm, stream)))
    return e;
  return finish("broadcast", deadline);
}

Error NcclCommunicator::barrier(Deadline deadline) {
  // NCCL has no barrier: a one-value all-reduce that every rank must join.
  Error e = allReduceSum(reinterpret_cast<float *>(one), 1, deadline);
  if (e)
    return makeError(e.status, "barrier: " + e.message);
  return e;
}

Error NcclCommunicator::split(int color, int key, Deadline deadline,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  if (Error e = runtime->current())
    return e;
  if (Error e = ready("split", deadline))
    return e;
  ncclConfig_t config = nonBlockingConfig();
  ncclComm_t child = nullptr;
  if (Error e =
          called("split", runtime->nccl.ncclCommSplit(
                              comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key,
                              &child, &config)))
    return e;
  // The parent is in progress until every rank has called the split.
  if (Error e = ready("split", deadline))
    return e;
  if (!child)
    return Error::ok();
  auto made = std::make_unique<NcclCommunicator>(runtime, child, "split rank");
  if (Error e = made->start("split", deadline))
    return e;
  out = std::move(made);
  return Error::ok();
}

bool loom::rt::comm::ncclBuilt() { return true; }

Error loom::rt::comm::shareNcclId(Communicator &host, Deadline deadline,
                                  std::string &id) {
  // Rank 0's id, behind one byte saying whether it made one: a rank 0
  // without NCCL fails every rank at once, not at the deadline.
  std::string shared(1 + sizeof(ncclUniqueId), '\0');
  Error made;
  if (host.rank() == 0) {
    NcclLibrary nccl;
    made = nccl.open();
    ncclUniqueId unique{};
    if (!made && nccl.ncclGetUniqueId(&unique) != ncclSuccess)
      made = makeError(LOOM_ERROR_LIBRARY, "nccl: ncclGetUniqueId failed");
    shared[0] = made ? 0 : 1;
    std::memcpy(&shared[1], &unique, sizeof(unique));
  }
  if (Error e =
          host.broadcast(shared.data(), int64_t(shared.size()), 0, deadline))
    return makeError(e.status, "nccl: sharing the unique id: " + e.message);
  if (made)
    return made;
  if (!shared[0])
    return makeError(LOOM_ERROR_COMMUNICATION,
                     "nccl: rank 0 could not make NCCL's unique id");
  id = shared.substr(1);
  return Error::ok();
}

Error loom::rt::comm::openNcclWorld(Communicator &host, int ordinal,
                                    Deadline deadline,
                                    std::unique_ptr<Communicator> &out) {
  out.reset();
  std::string id;
  if (Error e = shareNcclId(host, deadline, id))
    return e;
  auto runtime = std::make_shared<NcclRuntime>();
  if (Error e = runtime->nccl.open())
    return e;
  if (Error e = runtime->openDevice(ordinal))
    return e;
  ncclUniqueId unique{};
  std::memcpy(&unique, id.data(), sizeof(unique));
  ncclConfig_t config = nonBlockingConfig();
  ncclComm_t comm = nullptr;
  ncclResult_t r = runtime->nccl.ncclCommInitRankConfig(
      &comm, host.size(), unique, host.rank(), &config);
  auto world = std::make_unique<NcclCommunicator>(runtime, comm, "rank");
  if (r != ncclSuccess && r != ncclInProgress && !comm)
    return makeError(
        LOOM_ERROR_COMMUNICATION,
        "open: rank " + std::to_string(host.rank()) +
            ": ncclCommInitRankConfig: " + runtime->nccl.ncclGetErrorString(r));
  if (Error e = world->start("open", deadline))
    return e;
  out = std::move(world);
  return Error::ok();
}

namespace {
class NcclDeviceMemory final : public DeviceMemory {
public:
  explicit NcclDeviceMemory(std::shared_ptr<NcclRuntime> runtime)
      : runtime(std::move(runtime)) {}
  ~NcclDeviceMemory() override {
    if (address) {
      runtime->current();
      runtime->cuda.cuMemFree(address);
    }
  }
  Error allocate(int64_t bytes) {
    if (Error e = runtime->current())
      return e;
    return runtime->check(runtime->cuda.cuMemAlloc(&address, size_t(bytes)),
                          "cuMemAlloc");
  }
  void *data() const override { return reinterpret_cast<void *>(address); }
  Error write(const void *host, int64_t bytes) override {
    if (Error e = runtime->current())
      return e;
    if (Error e = runtime->check(
            runtime->cuda.cuMemcpyHtoD(address, host, size_t(bytes)),
            "cuMemcpyHtoD"))
      return e;
    // From pageable memory the copy may return before its DMA is done, and
    // the communicator's stream does not wait for the legacy stream.
    return runtime->check(runtime->cuda.cuCtxSynchronize(), "cuCtxSynchronize");
  }
  Error read(void *host, int64_t bytes) const override {
    if (Error e = runtime->current())
      return e;
    return runtime->check(
        runtime->cuda.cuMemcpyDtoH(host, address, size_t(bytes)),
        "cuMemcpyDtoH");
  }

private:
  std::shared_ptr<NcclRuntime> runtime;
  CUdeviceptr address = 0;
};
} // namespace

DeviceMemory::~DeviceMemory() = default;

Error DeviceMemory::allocate(Communicator &nccl, int64_t bytes,
                             std::unique_ptr<DeviceMemory> &out) {
  if (std::strcmp(nccl.transport(), "nccl") != 0 || bytes <= 0)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "nccl: device memory of " + std::to_string(bytes) +
                         " bytes for a " + nccl.transport() + " communicator");
  auto memory = std::make_unique<NcclDeviceMemory>(
      static_cast<NcclCommunicator &>(nccl).shared());
  if (Error e = memory->allocate(bytes))
    return e;
  out = std::move(memory);
  return Error::ok();
}
