//===- CudaDevice.cpp - The CUDA device -----------------------------------===//
//
// Part of Loom. See Device.h and docs/Runtime.md. The driver API, opened at
// run time and never linked (a binary linked with -lcuda does not start
// where there is no driver): libcuda.so.1 (or LOOM_CUDA_LIBRARY) is
// dlopen'ed when a model asks for a CUDA device, cuGetProcAddress_v2 is the
// one symbol taken with dlsym, and every other entry point is resolved
// through it at the CUDA 12.0 ABI (a driver of CUDA 12 or later). Nothing is
// done at dlopen beyond that: cuInit runs when the device is created, the
// image's module is loaded at the first prepare that dispatches from it (the
// driver picks the fatbin's cubin for the device's compute capability, or
// JIT-compiles its PTX).
//
// The driver API's types and constants are declared here from the
// documented ABI (cuda.h of CUDA 12 and 13), so that libloomrt builds with
// no CUDA toolkit; the code that uses them runs only where a driver and a
// GPU are, which the tests here cannot reach (docs/Testing.md: what
// scripts/gpu-check.sh runs on a lent GPU).
//
// Memory: cuMemAlloc allocations; their CUdeviceptr is the address the
// runtime offsets into. A queue is a CUstream (non-blocking), an event a
// CUevent; every host wait polls an event until DeviceOptions::timeoutSeconds
// has passed. A queue can capture a run's steps as a CUDA graph and replay
// it (Queue::beginCapture; Runtime.cpp does so after a warm-up run).
//
// Library steps (cublas.matmul, cudnn.conv): libcublasLt or libcudnn is
// opened, and its handle created, at the first prepare that has such a step
// (Cublas.h, Cudnn.h); each queue allocates the libraries' workspace at its
// first such launch (the warm-up run, before any capture), so that contexts
// on several threads never share one. cuBLASLt and cuDNN share it: their
// steps run one after another on the queue's stream.
//
//===----------------------------------------------------------------------===//

#include "CUDA/Cublas.h"
#include "CUDA/CudaDriver.h"
#include "CUDA/Cudnn.h"
#include "Gpu.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

namespace {

// The driver API's ABI (cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_STREAM_NON_BLOCKING = 1;
constexpr int CU_EVENT_DEFAULT = 0;
constexpr int CU_EVENT_DISABLE_TIMING = 2;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// Device attributes (CUdevice_attribute).
enum Attribute {
  MaxThreadsPerBlock = 1,
  MaxBlockDimX = 2,
  MaxGridDimX = 5,
  ComputeCapabilityMajor = 75,
  ComputeCapabilityMinor = 76,
  MaxSharedMemoryPerBlockOptin = 97,
};

// Every entry point, with its signature.
#define LOOM_CUDA_FUNCTIONS(X)                                                 \
  X(cuInit, unsigned)                                                          \
  X(cuGetErrorName, CUresult, const char **)                                   \
  X(cuDeviceGetCount, int *)                                                   \
  X(cuDeviceGet, CUdevice *, int)                                              \
  X(cuDeviceGetAttribute, int *, int, CUdevice)                                \
  X(cuDeviceGetName, char *, int, CUdevice)                                    \
  X(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice)                           \
  X(cuDevicePrimaryCtxRelease, CUdevice)                                       \
  X(cuCtxSetCurrent, CUcontext)                                                \
  X(cuModuleLoadData, CUmodule *, const void *)                                \
  X(cuModuleUnload, CUmodule)                                                  \
  X(cuModuleGetFunction, CUfunction *, CUmodule, const char *)                 \
  X(cuFuncSetAttribute, CUfunction, int, int)                                  \
  X(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned,        \
    unsigned, unsigned, unsigned, CUstream, void **, void **)                  \
  X(cuMemAlloc, CUdeviceptr *, size_t)                                         \
  X(cuMemFree, CUdeviceptr)                                                    \
  X(cuMemHostAlloc, void **, size_t, unsigned)                                 \
  X(cuMemFreeHost, void *)                                                     \
  X(cuMemcpyHtoDAsync, CUdeviceptr, const void *, size_t, CUstream)           \
  X(cuMemcpyDtoHAsync, void *, CUdeviceptr, size_t, CUstream)                 \
  X(cuMemcpyDtoDAsync, CUdeviceptr, CUdeviceptr, size_t, CUstream)            \
  X(cuStreamCreate, CUstream *, unsigned)                                      \
  X(cuStreamDestroy, CUstream)                                                 \
  X(cuEventCreate, CUevent *, unsigned)                                        \
  X(cuEventRecord, CUevent, CUstream)                                          \
  X(cuEventQuery, CUevent)                                                     \
  X(cuEventDestroy, CUevent)                                                   \
  X(cuEventElapsedTime, float *, CUevent, CUevent)                             \
  X(cuStreamBeginCapture, CUstream, int)                                       \
  X(cuStreamEndCapture, CUstream, CUgraph *)                                   \
  X(cuGraphInstantiateWithFlags, CUgraphExec *, CUgraph, unsigned long long)   \
  X(cuGraphLaunch, CUgraphExec, CUstream)                                      \
  X(cuGraphDestroy, CUgraph)                                                   \
  X(cuGraphExecDestroy, CUgraphExec)

struct Api {
  DynamicLibrary library;
#define LOOM_CUDA_DECLARE(name, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
  LOOM_CUDA_FUNCTIONS(LOOM_CUDA_DECLARE)
#undef LOOM_CUDA_DECLARE
};

class CudaDevice;

/// Polls \p event until it completes or \p seconds pass.
Error waitFor(const CudaDevice &device, CUevent event, const char *what);

class CudaEvent : public Event {
public:
  CudaEvent(const CudaDevice &device, CUevent event)
      : owner(device), event(event) {}
  ~CudaEvent() override;
  bool query() const override;
  Error synchronize() const override {
    return waitFor(owner, event, "an event");
  }
  Error secondsSince(const Event &earlier, double &seconds) const override;
  const CudaDevice &owner;
  CUevent event;
};

class CudaGraph : public Graph {
public:
  CudaGraph(const CudaDevice &device, CUgraph graph, CUgraphExec exec)
      : owner(device), graph(graph), exec(exec) {}
  ~CudaGraph() override;
  const CudaDevice &owner;
  CUgraph graph;
  CUgraphExec exec;
};

class CudaQueue : public Queue {
public:
  explicit CudaQueue(CudaDevice &device) : owner(device) {}
  ~CudaQueue() override;
  Device &device() const override;
  Error synchronize() override;
  std::unique_ptr<Event> record() override;
  Error wait(const Event &event) override;
  bool timesOnDevice() const override { return true; }
  std::unique_ptr<Event> recordTimed() override;
  bool canCapture() const override { return true; }
  Error beginCapture() override;
  Error endCapture(std::unique_ptr<Graph> &out) override;
  Error replay(const Graph &graph) override;

  /// The stream, created on first use.
  Error get(CUstream &out);
  /// An event recorded after what the stream holds; \p flags are
  /// cuEventCreate's (null on failure: it surfaces at the next
  /// synchronize).
  std::unique_ptr<Event> recordWith(unsigned flags);
  /// The library steps' workspace of this queue (cublas::kWorkspaceBytes,
  /// shared by cuBLASLt and cuDNN), allocated on first use.
  Error libraryWorkspace(void *&out);

private:
  CudaDevice &owner;
  CUstream stream = nullptr;
  Allocation workspace;
};

/// A step this device prepared: a kernel dispatch or a library call.
struct CudaStep : public PreparedStep {
  explicit CudaStep(bool dispatch) : isDispatch(dispatch) {}
  bool isDispatch;
};

/// A gpu.dispatch made ready: its function and launch sizes.
struct Dispatch : public CudaStep {
  Dispatch() : CudaStep(true) {}
  StepDescription describe() const override {
    return {"cuda kernel " + step.kernel, {}, "grid"};
  }
  CUfunction function = nullptr;
  art::DispatchStep step;
};

/// A library call made ready: a cuBLASLt product (Cublas.h) or a cuDNN
/// convolution (Cudnn.h).
struct LibraryCall : public CudaStep {
  LibraryCall() : CudaStep(false) {}
  StepDescription describe() const override { return call->describe(); }
  std::unique_ptr<PreparedStep> call;
  bool isConv = false;
};

class CudaDevice : public GpuDevice {
public:
  CudaDevice(int64_t ordinal, const DeviceOptions &options)
      : timeoutSeconds(options.timeoutSeconds), number(ordinal) {}
  ~CudaDevice() override;
  Error open();

  art::DeviceKind kind() const override { return art::DeviceKind::Cuda; }
  int64_t ordinal() const override { return number; }
  Error supports(const art::Device &spec) const override;
  /// Whether this device runs code for \p chip (sm_XY or sm_XYa).
  Error supportsChip(const std::string &chip) const;
  Error allocate(int64_t bytes, Allocation &out) override;
  void deallocate(Allocation &allocation) override;
  Error allocateHost(int64_t bytes, void *&out) override;
  void deallocateHost(void *host) override;
  int64_t bufferAlignment() const override { return 256; }
  Error loadImage(const art::Device &, const uint8_t *data,
                  uint64_t size) override {
    image.assign((size + 7) / 8, 0);
    std::memcpy(image.data(), data, size);
    return Error::ok();
  }
  std::unique_ptr<Queue> createQueue() override {
    return std::make_unique<CudaQueue>(*this);
  }
  Error prepareDispatch(const art::DispatchStep &step, const std::string &at,
                        const std::vector<int64_t> &bufferBytes,
                        std::unique_ptr<PreparedStep> &out) override;
  Error prepareLibrary(const art::Step &step, const std::string &at,
                       std::unique_ptr<PreparedStep> &out) override;
  Error launchLibrary(Queue &queue, const PreparedStep &step,
                      void *const *buffers) override;
  Error copy(Queue &queue, void *dst, const void *src,
             int64_t bytes) override;
  Error readToHost(Queue &queue, void *host, const void *src,
                   int64_t bytes) override;
  Error writeFromHost(Queue &queue, void *dst, const void *host,
                      int64_t bytes) override;

  /// Makes the device's context the calling thread's.
  Error current() const;
  /// An error naming this device, what failed and the driver's code.
  Error check(CUresult r, const std::string &what) const;

  Api api;
  double timeoutSeconds;

private:
  Error openLibrary();
  Error loadModule();
  Error checkLaunch(const art::DispatchStep &s, const std::string &at) const;
  Error launchDispatch(CUstream s, const Dispatch &d, void *const *buffers);
  int attribute(int which) const;

  int64_t number;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::string deviceName;
  int major = 0, minor = 0;
  /// The fatbin, 8-byte aligned.
  std::vector<uint64_t> image;
  /// cuBLASLt, opened for the first cublas.matmul step prepared.
  std::unique_ptr<cublas::Library> cublasLt;
  /// cuDNN, opened for the first cudnn.conv step prepared.
  std::unique_ptr<cudnn::Library> dnn;
};

//===----------------------------------------------------------------------===//
// Opening the driver
//===----------------------------------------------------------------------===//

Error CudaDevice::openLibrary() {
  if (!openCudaDriver(api.library))
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + name() + ": " +
                                               api.library.tried() +
                                               " not found (no CUDA driver)");
  SymbolLookup driver = cudaDriverLookup(api.library);
  if (!driver)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     "no device " + name() + ": " + api.library.tried() +
                         " has no cuGetProcAddress_v2 (a CUDA driver older "
                         "than 12.0)");
#define LOOM_CUDA_SYMBOL(fn, ...) requiredSymbol(#fn, api.fn),
  if (const char *missing =
          resolveSymbols({LOOM_CUDA_FUNCTIONS(LOOM_CUDA_SYMBOL)}, driver))
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + name() +
                                               ": the CUDA driver has no " +
                                               missing + " (CUDA 12.0 ABI)");
#undef LOOM_CUDA_SYMBOL
  return Error::ok();
}

Error CudaDevice::check(CUresult r, const std::string &what) const {
  if (r == CUDA_SUCCESS)
    return Error::ok();
  const char *code = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(r, &code);
  return makeError(LOOM_ERROR_LIBRARY,
                   name() + ": " + what + " failed (" +
                       (code ? code : "CUresult " + std::to_string(r)) + ")");
}

int CudaDevice::attribute(int which) const {
  int value = 0;
  api.cuDeviceGetAttribute(&value, which, device);
  return value;
}

Error CudaDevice::open() {
  if (Error err = openLibrary())
    return err;
  if (CUresult r = api.cuInit(0)) {
    Error err = check(r, "cuInit");
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + err.message);
  }
  int count = 0;
  api.cuDeviceGetCount(&count);
  if (number < 0 || number >= count)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     "no device " + name() + ": the CUDA driver found " +
                         std::to_string(count) + " device" +
                         (count == 1 ? "" : "s"));
  if (Error err = check(api.cuDeviceGet(&device, int(number)), "cuDeviceGet"))
    return err;
  char text[256] = {};
  api.cuDeviceGetName(text, sizeof(text) - 1, device);
  deviceName = text;
  major = attribute(ComputeCapabilityMajor);
  minor = attribute(ComputeCapabilityMinor);
  return check(api.cuDevicePrimaryCtxRetain(&context, device),
               "cuDevicePrimaryCtxRetain");
}

CudaDevice::~CudaDevice() {
  if (context) {
    api.cuCtxSetCurrent(context);
    cublasLt.reset();
    dnn.reset();
    if (module)
      api.cuModuleUnload(module);
    api.cuDevicePrimaryCtxRelease(device);
  }
}

Error CudaDevice::current() const {
  return check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Error CudaDevice::supportsChip(const std::string &chip) const {
  size_t digits = chip.size() > 3 ? chip.find_first_not_of("0123456789", 3)
                                   : std::string::npos;
  std::string number = chip.size() > 3 ? chip.substr(3, digits - 3) : "";
  std::string suffix = digits == std::string::npos ? "" : chip.substr(digits);
  if (chip.rfind("sm_", 0) != 0 || number.size() < 2 ||
      (suffix != "" && suffix != "a"))
    return makeError(LOOM_ERROR_FORMAT, "the CUDA chip '" + chip +
                                            "' is not sm_XY or sm_XYa");
  int want = std::stoi(number), have = major * 10 + minor;
  std::string what = name() + " (" + deviceName + ") is compute capability " +
                     std::to_string(major) + "." + std::to_string(minor);
  if (suffix == "a" && want != have)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     what + "; the code is for " + chip +
                         ", which runs only on " + number.substr(0, 1) + "." +
                         number.substr(1));
  if (want > have)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     what + "; the code needs " + chip);
  return Error::ok();
}

Error CudaDevice::supports(const art::Device &spec) const {
  if (spec.triple.rfind("nvptx", 0) != 0)
    return makeError(LOOM_ERROR_FORMAT, "the code is for '" + spec.triple +
                                            "', not an NVPTX target");
  // A fatbin with code for several chips lists them comma-separated: the
  // device runs it when it runs the code of one of them.
  Error last = Error::ok();
  size_t begin = 0;
  while (true) {
    size_t comma = spec.chip.find(',', begin);
    std::string chip = spec.chip.substr(
        begin, comma == std::string::npos ? std::string::npos : comma - begin);
    last = supportsChip(chip);
    if (!last || last.status == LOOM_ERROR_FORMAT ||
        comma == std::string::npos)
      return last;
    begin = comma + 1;
  }
}

//===----------------------------------------------------------------------===//
// Memory, queues, events, graphs
//===----------------------------------------------------------------------===//

Error CudaDevice::allocate(int64_t bytes, Allocation &out) {
  out = {};
  if (bytes <= 0)
    return Error::ok();
  if (Error err = current())
    return err;
  CUdeviceptr p = 0;
  if (CUresult r = api.cuMemAlloc(&p, size_t(bytes)))
    return check(r, "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  out.data = reinterpret_cast<void *>(p);
  out.bytes = bytes;
  return Error::ok();
}

void CudaDevice::deallocate(Allocation &allocation) {
  if (allocation.data && !current())
    api.cuMemFree(reinterpret_cast<CUdeviceptr>(allocation.data));
  allocation = {};
}

Error CudaDevice::allocateHost(int64_t bytes, void *&out) {
  out = nullptr;
  if (Error err = current())
    return err;
  // Portable: page-locked for every CUDA context, so any device's copies
  // take it as DMA.
  constexpr unsigned kPortable = 0x01; // CU_MEMHOSTALLOC_PORTABLE
  if (CUresult r = api.cuMemHostAlloc(
          &out, size_t(std::max<int64_t>(bytes, 1)), kPortable))
    return check(r, "cuMemHostAlloc of " + std::to_string(bytes) + " bytes");
  return Error::ok();
}

void CudaDevice::deallocateHost(void *host) {
  if (host && !current())
    api.cuMemFreeHost(host);
}

Error waitFor(const CudaDevice &device, CUevent event, const char *what) {
  auto start = std::chrono::steady_clock::now();
  auto deadline =
      start + std::chrono::duration<double>(device.timeoutSeconds);
  // The first 2 ms spin (yielding the core): a sleep, however short, takes
  // the scheduler's slack (~60 us seen on a lent H200's VM), which every
  // short run would pay at its end. Then the wait sleeps between polls.
  auto spinUntil = start + std::chrono::milliseconds(2);
  for (;;) {
    CUresult r = device.api.cuEventQuery(event);
    if (r != CUDA_ERROR_NOT_READY)
      return device.check(r, std::string("waiting for ") + what);
    auto now = std::chrono::steady_clock::now();
    if (now > deadline)
      return makeError(LOOM_ERROR_LIBRARY,
                       device.name() + ": " + what + " did not complete within " +
                           std::to_string(device.timeoutSeconds) +
                           " s (LOOM_DEVICE_TIMEOUT)");
    if (now < spinUntil)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

CudaEvent::~CudaEvent() { owner.api.cuEventDestroy(event); }

Error CudaEvent::secondsSince(const Event &earlier, double &seconds) const {
  float ms = 0;
  if (Error err = owner.check(
          owner.api.cuEventElapsedTime(
              &ms, static_cast<const CudaEvent &>(earlier).event, event),
          "cuEventElapsedTime"))
    return err;
  seconds = double(ms) / 1e3;
  return Error::ok();
}

bool CudaEvent::query() const {
  return owner.api.cuEventQuery(event) == CUDA_SUCCESS;
}

CudaGraph::~CudaGraph() {
  if (exec)
    owner.api.cuGraphExecDestroy(exec);
  if (graph)
    owner.api.cuGraphDestroy(graph);
}

Device &CudaQueue::device() const { return owner; }

CudaQueue::~CudaQueue() {
  if (stream) {
    (void)synchronize();
    owner.api.cuStreamDestroy(stream);
  }
  owner.deallocate(workspace);
}

Error CudaQueue::libraryWorkspace(void *&out) {
  if (!workspace.data)
    if (Error err = owner.allocate(cublas::kWorkspaceBytes, workspace))
      return err;
  out = workspace.data;
  return Error::ok();
}

Error CudaQueue::get(CUstream &out) {
  if (Error err = owner.current())
    return err;
  if (!stream)
    if (Error err = owner.check(
            owner.api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            "cuStreamCreate"))
      return err;
  out = stream;
  return Error::ok();
}

std::unique_ptr<Event> CudaQueue::record() {
  return recordWith(CU_EVENT_DISABLE_TIMING);
}

std::unique_ptr<Event> CudaQueue::recordTimed() {
  return recordWith(CU_EVENT_DEFAULT);
}

std::unique_ptr<Event> CudaQueue::recordWith(unsigned flags) {
  CUstream s = nullptr;
  CUevent event = nullptr;
  if (get(s) || owner.api.cuEventCreate(&event, flags) ||
      owner.api.cuEventRecord(event, s)) {
    // The failure surfaces at the next synchronize of the queue.
    if (event)
      owner.api.cuEventDestroy(event);
    return nullptr;
  }
  return std::make_unique<CudaEvent>(owner, event);
}

Error CudaQueue::synchronize() {
  if (!stream)
    return Error::ok();
  std::unique_ptr<Event> event = record();
  if (!event)
    return makeError(LOOM_ERROR_LIBRARY,
                     owner.name() + ": cannot record an event on the queue");
  return event->synchronize();
}

Error CudaQueue::wait(const Event &event) {
  // An event may be another device's: it is waited for on the host.
  return event.synchronize();
}

Error CudaQueue::beginCapture() {
  CUstream s = nullptr;
  if (Error err = get(s))
    return err;
  return owner.check(
      owner.api.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      "cuStreamBeginCapture");
}

Error CudaQueue::endCapture(std::unique_ptr<Graph> &out) {
  CUstream s = nullptr;
  if (Error err = get(s))
    return err;
  CUgraph graph = nullptr;
  if (Error err = owner.check(owner.api.cuStreamEndCapture(s, &graph),
                              "cuStreamEndCapture"))
    return err;
  CUgraphExec exec = nullptr;
  auto g = std::make_unique<CudaGraph>(owner, graph, exec);
  if (Error err = owner.check(
          owner.api.cuGraphInstantiateWithFlags(&g->exec, graph, 0),
          "cuGraphInstantiateWithFlags"))
    return err;
  out = std::move(g);
  return Error::ok();
}

Error CudaQueue::replay(const Graph &graph) {
  CUstream s = nullptr;
  if (Error err = get(s))
    return err;
  return owner.check(owner.api.cuGraphLaunch(
                         static_cast<const CudaGraph &>(graph).exec, s),
                     "cuGraphLaunch");
}

//===----------------------------------------------------------------------===//
// Code and launches
//===----------------------------------------------------------------------===//

Error CudaDevice::loadModule() {
  if (module)
    return Error::ok();
  if (image.empty())
    return makeError(LOOM_ERROR_FORMAT,
                     name() + ": the artifact's cuda device has no image");
  if (Error err = current())
    return err;
  if (CUresult r = api.cuModuleLoadData(&module, image.data())) {
    module = nullptr;
    return check(r, "loading the image for compute capability " +
                        std::to_string(major) + "." + std::to_string(minor) +
                        " (cuModuleLoadData)");
  }
  return Error::ok();
}

Error CudaDevice::checkLaunch(const art::DispatchStep &s,
                              const std::string &at) const {
  int64_t threads = s.block[0] * s.block[1] * s.block[2];
  for (int i = 0; i < 3; ++i) {
    if (s.block[i] > attribute(MaxBlockDimX + i) ||
        threads > attribute(MaxThreadsPerBlock))
      return makeError(LOOM_ERROR_FORMAT,
                       at + "block " + launchSizes(s.block) + " exceeds " + name() +
                           "'s limits (" +
                           std::to_string(attribute(MaxThreadsPerBlock)) +
                           " threads per block)");
    if (s.grid[i] > attribute(MaxGridDimX + i))
      return makeError(LOOM_ERROR_FORMAT, at + "grid " + launchSizes(s.grid) +
                                              " exceeds " + name() +
                                              "'s grid limits");
  }
  if (s.sharedBytes > attribute(MaxSharedMemoryPerBlockOptin))
    return makeError(
        LOOM_ERROR_FORMAT,
        at + std::to_string(s.sharedBytes) + " shared bytes exceed " + name() +
            "'s " + std::to_string(attribute(MaxSharedMemoryPerBlockOptin)));
  return Error::ok();
}

Error CudaDevice::prepareDispatch(const art::DispatchStep &s,
                                  const std::string &at,
                                  const std::vector<int64_t> &,
                                  std::unique_ptr<PreparedStep> &out) {
  if (Error err = checkLaunch(s, at))
    return err;
  if (Error err = loadModule())
    return err;
  auto d = std::make_unique<Dispatch>();
  d->step = s;
  if (CUresult r =
          api.cuModuleGetFunction(&d->function, module, s.kernel.c_str()))
    return check(r, at + "finding the kernel in the image");
  if (s.sharedBytes > 48 * 1024)
    if (Error err = check(
            api.cuFuncSetAttribute(
                d->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                int(s.sharedBytes)),
            at + "allowing " + std::to_string(s.sharedBytes) +
                " shared bytes"))
      return err;
  out = std::move(d);
  return Error::ok();
}

Error CudaDevice::prepareLibrary(const art::Step &step, const std::string &at,
                                 std::unique_ptr<PreparedStep> &out) {
  const auto *matmul = step.getIf<art::CublasMatmulStep>();
  const auto *conv = step.getIf<art::CudnnConvStep>();
  if (!matmul && !conv)
    return Error::ok(); // a copy or a control step
  if (Error err = current())
    return err;
  auto call = std::make_unique<LibraryCall>();
  call->isConv = conv != nullptr;
  if (matmul) {
    if (!cublasLt)
      if (Error err = cublas::Library::open(name(), cublasLt))
        return err;
    if (Error err = cublasLt->prepare(*matmul, at, call->call))
      return err;
  } else {
    if (!dnn)
      if (Error err = cudnn::Library::open(name(), dnn))
        return err;
    if (Error err =
            dnn->prepare(*conv, at, cublas::kWorkspaceBytes, call->call))
      return err;
  }
  out = std::move(call);
  return Error::ok();
}

Error CudaDevice::launchLibrary(Queue &queue, const PreparedStep &step,
                                void *const *buffers) {
  // This device made both.
  auto &q = static_cast<CudaQueue &>(queue);
  CUstream s = nullptr;
  if (Error err = q.get(s))
    return err;
  const auto &prepared = static_cast<const CudaStep &>(step);
  if (prepared.isDispatch)
    return launchDispatch(s, static_cast<const Dispatch &>(step), buffers);
  void *workspace = nullptr;
  if (Error err = q.libraryWorkspace(workspace))
    return err;
  const auto &call = static_cast<const LibraryCall &>(step);
  if (call.isConv)
    return dnn->launch(*call.call, s, buffers, workspace);
  return cublasLt->launch(*call.call, s, buffers, workspace);
}

Error CudaDevice::launchDispatch(CUstream s, const Dispatch &d,
                                 void *const *buffers) {
  // The bare-pointer ABI: one device pointer per buffer.
  std::vector<CUdeviceptr> pointers;
  std::vector<void *> params;
  pointers.reserve(d.step.args.size());
  for (int64_t id : d.step.args) {
    pointers.push_back(reinterpret_cast<CUdeviceptr>(buffers[id]));
    params.push_back(&pointers.back());
  }
  const auto &g = d.step.grid, &b = d.step.block;
  return check(api.cuLaunchKernel(d.function, unsigned(g[0]), unsigned(g[1]),
                                  unsigned(g[2]), unsigned(b[0]),
                                  unsigned(b[1]), unsigned(b[2]),
                                  unsigned(d.step.sharedBytes), s,
                                  params.data(), nullptr),
               "launching '" + d.step.kernel + "'");
}

Error CudaDevice::copy(Queue &queue, void *dst, const void *src,
                       int64_t bytes) {
  CUstream s = nullptr;
  if (Error err = static_cast<CudaQueue &>(queue).get(s))
    return err;
  return check(api.cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                     reinterpret_cast<CUdeviceptr>(src),
                                     size_t(bytes), s),
               "a device copy");
}

Error CudaDevice::readToHost(Queue &queue, void *host, const void *src,
                             int64_t bytes) {
  CUstream s = nullptr;
  if (Error err = static_cast<CudaQueue &>(queue).get(s))
    return err;
  if (Error err = check(api.cuMemcpyDtoHAsync(
                            host, reinterpret_cast<CUdeviceptr>(src),
                            size_t(bytes), s),
                        "a copy to the host"))
    return err;
  return queue.synchronize();
}

Error CudaDevice::writeFromHost(Queue &queue, void *dst, const void *host,
                                int64_t bytes) {
  CUstream s = nullptr;
  if (Error err = static_cast<CudaQueue &>(queue).get(s))
    return err;
  // From pageable memory the driver copies host bytes before it returns.
  return check(api.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), host,
                                     size_t(bytes), s),
               "a copy from the host");
}

} // namespace

Error loom::rt::createCudaDevice(int64_t ordinal, const DeviceOptions &options,
                                 std::unique_ptr<Device> &out) {
  auto device = std::make_unique<CudaDevice>(ordinal, options);
  if (Error err = device->open())
    return err;
  out = std::move(device);
  return Error::ok();
}
