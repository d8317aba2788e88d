//===- CpuDevice.cpp - The CPU device -------------------------------------===//
//
// Part of Loom. See Device.h. The CPU device owns the oneDNN engine its
// steps were prepared on and its thread count; a queue owns a oneDNN stream
// and the scratch memory of its runs. Work on a CPU queue runs when it is
// enqueued, on the calling thread and the OpenMP team it forks, so a queue
// is always synchronized and its events always complete.
//
// Threads: oneDNN from Debian runs on GNU OpenMP, and generated kernels are
// split over the same libgomp team (through its ABI entry GOMP_parallel,
// with the device's thread count), so the two never compete for the cores.
// OpenMP's and OpenBLAS's thread counts are theirs (per calling thread and
// process-wide): a launch sets them to the device's count when they differ.
//
//===----------------------------------------------------------------------===//

#include "CPU/Binding.h"
#include "CPU/Cpu.h"
#include "CPU/CpuFeatures.h"
#if LOOM_RT_CPU_LIBRARIES
#include "CPU/Kernels/CpuKernels.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

Event::~Event() = default;
Queue::~Queue() = default;
Graph::~Graph() = default;

Error Queue::beginCapture() {
  return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                   device().name() + ": its queues cannot capture graphs");
}
Error Queue::endCapture(std::unique_ptr<Graph> &) { return beginCapture(); }
Error Queue::replay(const Graph &) { return beginCapture(); }
std::unique_ptr<Event> Queue::recordTimed() { return nullptr; }
Error Event::secondsSince(const Event &, double &) const {
  return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                   "the device keeps no clock of its own (timed events)");
}
PreparedStep::~PreparedStep() = default;
Device::~Device() = default;

Error Device::allocateHost(int64_t bytes, void *&out) {
  out = nullptr;
  size_t rounded = (size_t(std::max<int64_t>(bytes, 1)) + 63) / 64 * 64;
  out = std::aligned_alloc(64, rounded);
  if (!out)
    return makeError(LOOM_ERROR_IO, "cannot allocate " +
                                        std::to_string(bytes) +
                                        " bytes of host memory for " + name());
  return Error::ok();
}

void Device::deallocateHost(void *host) { std::free(host); }

std::string Device::name() const {
  return std::string(art::deviceKindName(kind())) + ":" +
         std::to_string(ordinal());
}

Error rt::createDevice(art::DeviceKind kind, int64_t ordinal,
                       const DeviceOptions &options,
                       std::unique_ptr<Device> &out) {
  switch (kind) {
  case art::DeviceKind::Cpu:
    return createCpuDevice(ordinal, options, out);
  case art::DeviceKind::Cuda:
    return createCudaDevice(ordinal, options, out);
  case art::DeviceKind::Vulkan:
    return createVulkanDevice(ordinal, options, out);
  }
  return makeError(LOOM_ERROR_INVALID_ARGUMENT, "unknown device kind");
}

namespace {

/// Work on the CPU is done when it is enqueued.
class CpuEvent : public Event {
public:
  bool query() const override { return true; }
  Error synchronize() const override { return Error::ok(); }
};

class CpuDevice;

class CpuQueue : public Queue {
public:
  CpuQueue(CpuDevice &device, const cpu::Engine &engine);
  Device &device() const override;
  Error synchronize() override { return Error::ok(); }
  std::unique_ptr<Event> record() override {
    return std::make_unique<CpuEvent>();
  }
  /// Every event is complete by the time another queue could record it.
  Error wait(const Event &event) override { return event.synchronize(); }

  cpu::Stream stream;

private:
  CpuDevice &owner;
};

struct KernelCall {
  loom_kernel_fn fn;
  void *const *buffers;
  int64_t range;
};

void kernelWorker(void *data) {
  auto *call = static_cast<KernelCall *>(data);
  int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
  int64_t chunk = (call->range + n - 1) / n;
  int64_t begin = t * chunk, end = std::min(call->range, begin + chunk);
  if (begin < end)
    call->fn(call->buffers, begin, end);
}

/// The barrier of a team kernel's threads. A thread that arrives early
/// spins on the generation for a while (the others, running, arrive within
/// microseconds: a step of a recurrence is tens of them) and then sleeps on
/// it (a futex), so that where a partner has lost its core (more runnable
/// threads than cores) it gives its own core up instead of spinning out its
/// time slice, as libgomp's barrier does (GOMP_SPINCOUNT: milliseconds).
/// The last to arrive starts the next generation, and wakes the sleepers
/// if there are any. Orders memory: what a thread wrote before it, every
/// thread reads after it.
class TeamBarrier {
public:
  /// How long a thread spins before it sleeps (the policy's teamSpin:
  /// LOOM_TEAM_SPIN_US).
  std::chrono::microseconds spin{50};

  void wait(uint32_t threads) {
    uint32_t current = generation.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) {
      arrived.store(0, std::memory_order_relaxed);
      generation.store(current + 1, std::memory_order_seq_cst);
      if (sleepers.load(std::memory_order_seq_cst) != 0)
        futex(FUTEX_WAKE_PRIVATE, INT_MAX);
      return;
    }
    auto until = std::chrono::steady_clock::now() + spin;
    for (unsigned i = 1;; ++i) {
      if (generation.load(std::memory_order_acquire) != current)
        return;
      _mm_pause();
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until)
        break;
    }
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (generation.load(std::memory_order_seq_cst) == current)
      futex(FUTEX_WAIT_PRIVATE, current);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }

private:
  void futex(int op, uint32_t value) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&generation), op, value,
            nullptr, nullptr, 0);
  }

  std::atomic<uint32_t> arrived{0}, generation{0}, sleepers{0};
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

/// A team kernel's call (include/loom-c/ArtifactABI.h): the kernel sees
/// `abi`, which is first, as its loom_team *.
struct TeamCall {
  loom_team abi;
  loom_kernel_fn fn;
  std::vector<void *> buffers; // the step's, then &abi
  void *shared = nullptr;      // the block thread 0 allocated, being shared
  alignas(64) TeamBarrier barrier; // a cache line of its own
};

// One thread alone: no one to wait for.
void soloBarrier(loom_team *) {}
void *soloAlloc(loom_team *, void *(*allocate)(uint64_t), uint64_t bytes) {
  return allocate(bytes);
}
void soloFree(loom_team *, void (*release)(void *), void *block) {
  release(block);
}

// On the OpenMP team that GOMP_parallel forked.
void teamBarrier(loom_team *team) {
  reinterpret_cast<TeamCall *>(team)->barrier.wait(
      uint32_t(omp_get_num_threads()));
}
void *teamAlloc(loom_team *team, void *(*allocate)(uint64_t), uint64_t bytes) {
  auto *call = reinterpret_cast<TeamCall *>(team);
  if (omp_get_thread_num() == 0)
    call->shared = allocate(bytes);
  teamBarrier(team);
  void *block = call->shared;
  teamBarrier(team); // every thread has it before the next allocation
  return block;
}
void teamFree(loom_team *team, void (*release)(void *), void *block) {
  teamBarrier(team); // no thread uses it any more
  if (omp_get_thread_num() == 0)
    release(block);
}

void teamWorker(void *data) {
  auto *call = static_cast<TeamCall *>(data);
  call->fn(call->buffers.data(), omp_get_thread_num(), omp_get_num_threads());
}

class CpuDevice : public Device {
public:
  CpuDevice(const cpu::Engine &engine, const cpu::CpuPolicy &policy)
      : engine(engine), policy(policy), threads(policy.threads) {}

  art::DeviceKind kind() const override { return art::DeviceKind::Cpu; }
  int64_t ordinal() const override { return 0; }

  Error supports(const art::Device &spec) const override {
    if (spec.triple.rfind("x86_64", 0) != 0)
      return makeError(LOOM_ERROR_FORMAT, "the code is for '" + spec.triple +
                                              "', not an x86-64 target");
    return checkCpuFeatures(spec.features);
  }

  Error allocate(int64_t bytes, Allocation &out) override {
    out = {};
    size_t size = (size_t(bytes) + 63) / 64 * 64;
    if (!size)
      return Error::ok();
    out.data = std::aligned_alloc(64, size);
    if (!out.data)
      return makeError(LOOM_ERROR_IO, "cannot allocate " +
                                          std::to_string(size) +
                                          " bytes on " + name());
    out.bytes = bytes;
    return Error::ok();
  }
  void deallocate(Allocation &allocation) override {
    std::free(allocation.data);
    allocation = {};
  }

  void setSharedConstants(std::unordered_set<const void *> shared) override {
    sharedConstants = std::move(shared);
  }

  bool usesHostMemory() const override { return true; }
  int64_t bufferAlignment() const override { return 64; }
  Error loadImage(const art::Device &, const uint8_t *, uint64_t) override {
    return makeError(LOOM_ERROR_FORMAT, "a cpu device has no code image");
  }

  std::unique_ptr<Queue> createQueue() override {
    return std::make_unique<CpuQueue>(*this, engine);
  }

  Error prepare(const art::Entry &entry, const art::Program &program,
                const std::vector<int64_t> &bufferBytes,
                const std::vector<void *> &constants,
                std::vector<std::unique_ptr<PreparedStep>> &out,
                std::map<int64_t, std::string> &layouts) override {
    applyThreads();
    return cpu::prepareProgram(engine, policy, sharedConstants, entry, program,
                               bufferBytes, constants, out, layouts);
  }

  Error launchKernel(Queue &, loom_kernel_fn fn, void *const *args,
                     int64_t range, int64_t grain) override {
    int64_t n = std::min<int64_t>(threads, range / std::max<int64_t>(grain, 1));
    if (n <= 1) {
      fn(args, 0, range);
      return Error::ok();
    }
    cpu::bindTeam(policy);
    KernelCall call{fn, args, range};
    GOMP_parallel(kernelWorker, &call, unsigned(n), 0);
    return Error::ok();
  }

  Error launchTeamKernel(Queue &, loom_kernel_fn fn, void *const *args,
                         size_t numArgs) override {
    TeamCall call;
    call.fn = fn;
    call.buffers.assign(args, args + numArgs);
    call.buffers.push_back(&call.abi);
    if (threads <= 1) {
      call.abi = {soloBarrier, soloAlloc, soloFree};
      fn(call.buffers.data(), 0, 1);
      return Error::ok();
    }
    // Every thread of the team calls the kernel once (however many
    // libgomp gives: inside another parallel region, perhaps one).
    call.abi = {teamBarrier, teamAlloc, teamFree};
    call.barrier.spin = policy.teamSpin;
    cpu::bindTeam(policy);
    GOMP_parallel(teamWorker, &call, unsigned(threads), 0);
    return Error::ok();
  }

  Error launchLibrary(Queue &queue, const PreparedStep &step,
                      void *const *buffers) override {
    applyThreads();
    // This device made both: its queues are CpuQueues, its steps
    // cpu::LibrarySteps.
    return static_cast<const cpu::LibraryStep &>(step).run(
        static_cast<CpuQueue &>(queue).stream, buffers);
  }

  Error copy(Queue &, void *dst, const void *src, int64_t bytes) override {
    std::memmove(dst, src, size_t(bytes));
    return Error::ok();
  }

  Error readToHost(Queue &queue, void *host, const void *src,
                   int64_t bytes) override {
    if (Error err = queue.synchronize())
      return err;
    std::memcpy(host, src, size_t(bytes));
    return Error::ok();
  }
  Error writeFromHost(Queue &, void *dst, const void *host,
                      int64_t bytes) override {
    std::memcpy(dst, host, size_t(bytes));
    return Error::ok();
  }

private:
  /// OpenMP's team size (per calling thread) and OpenBLAS's (process-wide)
  /// are the library calls' thread count; the team's workers are bound.
  void applyThreads() const {
    if (omp_get_max_threads() != threads)
      omp_set_num_threads(threads);
    cpu::bindTeam(policy);
    cpu::setLibraryThreads(threads);
  }

  cpu::Engine engine;
  /// Parsed once, when the device is created (Policy.h).
  const cpu::CpuPolicy policy;
  const int threads;
  /// Constants several entries read (setSharedConstants): packed by none.
  std::unordered_set<const void *> sharedConstants;
};

CpuQueue::CpuQueue(CpuDevice &device, const cpu::Engine &engine)
    : stream(engine), owner(device) {}

Device &CpuQueue::device() const { return owner; }

} // namespace

Error rt::createCpuDevice(int64_t ordinal, const DeviceOptions &options,
                          std::unique_ptr<Device> &out) {
  if (ordinal != 0)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "no device cpu:" + std::to_string(ordinal) +
                         ": the CPU is one device, cpu:0");
  cpu::Engine engine;
  if (Error err = cpu::createEngine(engine))
    return err;
  int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  out = std::make_unique<CpuDevice>(
      engine, cpu::CpuPolicy::fromEnvironment(threads));
  return Error::ok();
}

extern "C" {

const char *loom_cpu_isa(void) { return art::cpuIsaName(cpuIsa()).data(); }

/// The kernel table of the level in use, by name; empty without the CPU
/// libraries (NoLibraries.cpp), which have no hand-written kernels.
static const std::vector<std::pair<const char *, bool>> &kernelList() {
#if LOOM_RT_CPU_LIBRARIES
  static const auto forms = cpu::kernelForms(cpu::cpuKernels());
#else
  static const std::vector<std::pair<const char *, bool>> forms;
#endif
  return forms;
}

int64_t loom_cpu_num_kernels(void) { return int64_t(kernelList().size()); }

loom_status loom_cpu_kernel(int64_t index, const char **name,
                            int *available) {
  const auto &forms = kernelList();
  if (index < 0 || index >= int64_t(forms.size()) || !name || !available)
    return LOOM_ERROR_INVALID_ARGUMENT;
  *name = forms[index].first;
  *available = forms[index].second;
  return LOOM_OK;
}

} // extern "C"
