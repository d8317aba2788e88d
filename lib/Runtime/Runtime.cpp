//===- Runtime.cpp - The C API of libloomrt -------------------------------===//
//
// Part of Loom. See include/loom-c/Runtime.h and docs/Runtime.md. Loading is
// in two phases (docs/Artifact.md): the file is read and validated first
// (ELF sections, manifest, each manifest device bound to a device of this
// machine that supports its code, weights and their checksums), and only
// then dlopen'ed; the descriptor it exports must agree with what was
// validated. Each entry's program runs on its device (Device.h), step by
// step, on the context's queue for that device.
//
// A device whose memory is not the host's (a GPU) gets the weights its
// programs read uploaded once at load, and per context a staging area that
// holds an entry's inputs and outputs: the inputs are written to it when a
// run starts, the outputs read back when it ends. The CPU uses the caller's
// tensors and the mapped weights in place.
//
//===----------------------------------------------------------------------===//

#include "CPU/Binding.h"
#include "ContextWorld.h"
#include "Device.h"
#include "Environment.h"
#include "State.h"
#include "loom/Support/Bounded.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_set>
#include <set>
#include <string>
#include <dlfcn.h>
#include <fcntl.h>
#include <functional>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom;
using namespace loom::rt;

namespace {

thread_local std::string gLastError;

/// A read-only mapping of a whole file.
struct Mapping {
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  ~Mapping() {
    if (data)
      munmap(const_cast<uint8_t *>(data), size);
  }
  Error map(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return makeError(LOOM_ERROR_IO, "cannot open: " +
                                          std::string(strerror(errno)));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return makeError(LOOM_ERROR_IO, "not a regular file");
    }
    size = st.st_size;
    if (size == 0) {
      close(fd);
      return makeError(LOOM_ERROR_FORMAT, "empty file");
    }
    void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
      return makeError(LOOM_ERROR_IO, "cannot map: " +
                                          std::string(strerror(errno)));
    data = static_cast<const uint8_t *>(p);
    return Error::ok();
  }
};

} // namespace

/// What a model runs for one entry: the program of its rank on its device,
/// its buffers' sizes and weight addresses, and each step's prepared form.
struct EntryPlan {
  const artifact::Program *program = nullptr;
  Device *device = nullptr;
  /// Per buffer: its size, and the address of each weight buffer.
  std::vector<int64_t> bufferBytes;
  std::vector<void *> constants;
  /// Per step: the kernel a kernel step calls, the library step a library
  /// step runs.
  std::vector<loom_kernel_fn> kernels;
  std::vector<std::unique_ptr<PreparedStep>> prepared;
  /// The buffers the device keeps in a layout of its own (Device::prepare).
  std::map<int64_t, std::string> layouts;
  /// The plan as loom_entry_plan gives it, written once prepared.
  std::string planText;
  /// Per buffer: where a staged input or output lies in its context's
  /// staging area, else -1 (a device that uses host memory stages none).
  std::vector<int64_t> stagingOffsets;
  /// No step reads back to the host mid-run (no branch): a queue that
  /// captures may record a run as a graph.
  bool capturable = true;
  /// Its steps are prepared: at load, or, for an entry of one world rank
  /// (a tensor-parallel program's), when a context of that rank joins a
  /// world (prepareRank).
  bool ready = false;
};

namespace {
std::string planLine(const EntryPlan &plan, size_t index);
} // namespace

struct loom_model {
  std::string path;
  artifact::Manifest manifest;
  Mapping file, externalWeights;
  const uint8_t *weights = nullptr;
  uint64_t weightsSize = 0;
  std::string source;
  std::map<std::string, WeightView> views;
  /// The runtime device each manifest device runs on (by manifest index),
  /// and the C API's view of each.
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::vector<const char *>> featureNames;
  std::vector<EntryPlan> plans;
  /// Per manifest device: the largest arena of its programs, and for a
  /// device that stages: the largest staging area of its entries and the
  /// weights uploaded to it.
  std::vector<int64_t> arenaBytes, stagingBytes;
  std::vector<Allocation> weightMemory;
  void *library = nullptr;
  /// Guards the entries prepared after load (prepareRank): the ranks of a
  /// world of threads join at once.
  std::mutex prepareMutex;

  ~loom_model() {
    // The prepared steps hold oneDNN objects, not artifact code, and the
    // devices own their engines: both go before the library.
    plans.clear();
    for (size_t d = 0; d < weightMemory.size(); ++d)
      devices[d]->deallocate(weightMemory[d]);
    devices.clear();
    if (library)
      dlclose(library);
  }
};

struct loom_context {
  const loom_model *model;
  /// Per manifest device: a queue, the arena of its programs and the
  /// staging area of its entries' inputs and outputs (empty on the CPU).
  std::vector<std::unique_ptr<Queue>> queues;
  std::vector<Allocation> arenas, staging;
  std::vector<void *> buffers;
  std::vector<void *> kernelArgs;
  /// The state the context keeps for tied inputs the caller leaves null.
  StateStore state;
  /// The world its collectives run over (loom_context_join_world; not
  /// owned), null: rank 0 of 1; its rank and size when joined (the
  /// profile's file is named after them, and the world may go first).
  loom_world *world = nullptr;
  int64_t worldRank = 0, worldSize = 1;
  /// The inputs of the run in progress, the context's state resolved, and
  /// which of them are the state's copy on the entry's device (neither
  /// staged nor read back).
  std::vector<const void *> inputs;
  std::vector<bool> resident;
  /// Per entry: its runs so far and, on a queue that captures, the graph
  /// of its steps recorded on the run after the first (LOOM_GRAPHS=0, or
  /// profiling, runs every step every time).
  bool useGraphs = false;
  std::vector<int64_t> runs;
  /// Per entry and output: its shape after the entry's last run (the
  /// valid part of an output of data-dependent length).
  std::vector<std::vector<std::vector<int64_t>>> outputShapes;
  std::vector<std::unique_ptr<Graph>> graphs;
  /// Per entry: `resident` when its graph was recorded. A run whose state
  /// is bound otherwise (the caller's own pointer after the context's copy,
  /// or back) has other addresses: the graph is recorded again.
  std::vector<std::vector<bool>> graphResident;
  /// LOOM_PROFILE set at creation: the seconds of every execution of every
  /// (entry, step), reported when the context is freed: printed to stderr,
  /// or written as JSON to the file LOOM_PROFILE names when it ends in
  /// ".json".
  bool profile = false;
  std::string profileFile;
  std::vector<std::vector<std::vector<double>>> stepSeconds;
  std::vector<int64_t> profiledRuns;
  /// The host memory of loom_context_host_alloc not yet freed, and the
  /// device that allocated each block.
  std::map<void *, Device *> hostBlocks;
  ~loom_context();
  void printProfile() const;
  void writeProfile() const;
};

void loom_context::printProfile() const {
  struct Row {
    double seconds;
    size_t entry, step;
  };
  std::vector<Row> rows;
  double total = 0;
  for (size_t e = 0; e < stepSeconds.size(); ++e)
    for (size_t s = 0; s < stepSeconds[e].size(); ++s) {
      double sum = 0;
      for (double t : stepSeconds[e][s])
        sum += t;
      rows.push_back({sum, e, s});
      total += sum;
    }
  std::sort(rows.begin(), rows.end(),
            [](const Row &a, const Row &b) { return a.seconds > b.seconds; });
  std::fprintf(stderr, "loomrt profile (all runs): %.3f ms in steps\n",
               total * 1e3);
  for (const Row &r : rows) {
    if (r.seconds <= 0)
      continue;
    const artifact::Step &s = model->plans[r.entry].program->steps[r.step];
    const auto *kernel = s.getIf<artifact::KernelStep>();
    std::fprintf(stderr, "  %5.1f%% %10.3f ms  %s step %zu %s %s\n",
                 total > 0 ? 100 * r.seconds / total : 0.0, r.seconds * 1e3,
                 model->manifest.entries[r.entry].name.c_str(), r.step,
                 std::string(artifact::stepKindName(s.kind())).c_str(),
                 kernel ? kernel->name.c_str() : "");
  }
}

/// The profile as JSON: per entry, its runs and, per step, its kind, its
/// kernel's name (kernel steps), how often it ran and the total, median and
/// least milliseconds of one execution (docs/Runtime.md).
void loom_context::writeProfile() const {
  // Each rank of a world writes a file of its own (ranks on one host would
  // otherwise write one file at once): FILE.json -> FILE.rankR.json.
  std::string path = profileFile;
  if (worldSize > 1)
    path.insert(path.size() - 5, ".rank" + std::to_string(worldRank));
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "loomrt: cannot write the profile to %s: %s\n",
                 path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(f, "{\"entries\": [");
  for (size_t e = 0; e < stepSeconds.size(); ++e) {
    std::fprintf(f, "%s\n {\"name\": \"%s\", \"runs\": %lld, \"steps\": [",
                 e ? "," : "", model->manifest.entries[e].name.c_str(),
                 static_cast<long long>(profiledRuns[e]));
    for (size_t i = 0; i < stepSeconds[e].size(); ++i) {
      std::vector<double> t = stepSeconds[e][i];
      std::sort(t.begin(), t.end());
      double sum = 0;
      for (double v : t)
        sum += v;
      double median = t.empty() ? 0
                      : t.size() % 2 ? t[t.size() / 2]
                                     : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
      const artifact::Step &s = model->plans[e].program->steps[i];
      const auto *kernel = s.getIf<artifact::KernelStep>();
      const auto *dispatch = s.getIf<artifact::DispatchStep>();
      std::fprintf(f,
                   "%s\n  {\"index\": %zu, \"kind\": \"%s\", \"kernel\": "
                   "\"%s\", \"count\": %zu, \"total_ms\": %.6f, "
                   "\"median_ms\": %.6f, \"min_ms\": %.6f}",
                   i ? "," : "", i,
                   std::string(artifact::stepKindName(s.kind())).c_str(),
                   kernel     ? kernel->name.c_str()
                   : dispatch ? dispatch->kernel.c_str()
                              : "",
                   t.size(), sum * 1e3,
                   median * 1e3, t.empty() ? 0.0 : t.front() * 1e3);
    }
    std::fprintf(f, "]}");
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0)
    std::fprintf(stderr, "loomrt: cannot write the profile to %s\n",
                 path.c_str());
}

loom_context::~loom_context() {
  if (profile && !profileFile.empty())
    writeProfile();
  else if (profile)
    printProfile();
  // A GPU queue waits for its work when it goes, before the memory does.
  graphs.clear();
  queues.clear();
  for (auto [data, device] : hostBlocks)
    device->deallocateHost(data);
  for (size_t d = 0; d < arenas.size(); ++d)
    model->devices[d]->deallocate(arenas[d]);
  for (size_t d = 0; d < staging.size(); ++d)
    model->devices[d]->deallocate(staging[d]);
}

namespace {

loom_status report(const Error &e, const std::string &where) {
  gLastError = where.empty() ? e.message : where + ": " + e.message;
  return e.status;
}

/// The runtime device named by \p selector ("cpu", "cpu:0"; empty: the
/// manifest device's own kind and ordinal) for manifest device \p spec.
Error bindDevice(const artifact::Device &spec, const std::string &selector,
                 const DeviceOptions &options, std::unique_ptr<Device> &out) {
  artifact::DeviceKind kind = spec.kind;
  int64_t ordinal = spec.ordinal;
  if (!selector.empty()) {
    size_t colon = selector.find(':');
    std::string name = selector.substr(0, colon);
    std::optional<artifact::DeviceKind> asked = artifact::parseDeviceKind(name);
    std::string known;
#define LOOM_DEVICE_KIND(Kind, Spelling)                                       \
  known += std::string(known.empty() ? "" : ", ") + Spelling;
#include "loom/Artifact/DeviceKinds.def"
    if (!asked)
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "device '" + selector + "': unknown device kind '" +
                           name + "' (this runtime has: " + known + ")");
    if (*asked != spec.kind)
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "device '" + selector + "': the artifact's code is "
                       "for " + std::string(artifact::deviceKindName(
                                    spec.kind)));
    kind = *asked;
    if (colon != std::string::npos) {
      std::string digits = selector.substr(colon + 1);
      if (digits.empty() ||
          digits.find_first_not_of("0123456789") != std::string::npos ||
          digits.size() > 9)
        return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                         "device '" + selector +
                             "': expected KIND or KIND:ORDINAL");
      ordinal = std::stoll(digits);
    }
  }
  if (Error err = createDevice(kind, ordinal, options, out))
    return err;
  if (Error err = out->supports(spec))
    return err;
  return Error::ok();
}

/// Prepares entry \p e's steps on its device and writes its plan.
Error prepareEntry(loom_model &m, size_t e) {
  EntryPlan &plan = m.plans[e];
  if (Error err = plan.device->prepare(m.manifest.entries[e], *plan.program,
                                       plan.bufferBytes, plan.constants,
                                       plan.prepared, plan.layouts))
    return err;
  plan.planText = "entry @" + m.manifest.entries[e].name + " on " +
                  plan.device->name();
  if (plan.device->kind() == artifact::DeviceKind::Cpu)
    plan.planText += " (kernels " + std::string(loom_cpu_isa()) + ")";
  plan.planText += "\n";
  for (size_t i = 0; i < plan.program->steps.size(); ++i)
    plan.planText += planLine(plan, i);
  plan.ready = true;
  return Error::ok();
}

/// The world ranks entry \p e (of one rank) runs on, for messages: "rank
/// 1", "rank 1 (modulo 2)", "ranks 5, 7", or "ranks 1, 3, ..., 15".
std::string ranksOf(const artifact::Entry &e) {
  if (e.rankCount <= 0) {
    std::string text = "rank " + std::to_string(e.rank);
    if (e.rankPeriod > 0)
      text += " (modulo " + std::to_string(e.rankPeriod) + ")";
    return text;
  }
  auto at = [&](int64_t k) {
    return std::to_string(e.rank + k * e.rankPeriod);
  };
  std::string text = "ranks " + at(0);
  for (int64_t k = 1; k < e.rankCount; ++k) {
    if (e.rankCount > 4 && k == 2) {
      text += ", ..., " + at(e.rankCount - 1);
      break;
    }
    text += ", " + at(k);
  }
  return text;
}

/// Runs \p work on a thread of its own (inline where no thread can be
/// started) and returns its error. The CPU device's steps run OpenMP
/// teams, one per calling thread, that live as long as the thread: a team
/// the load left on the application's thread made every run from another
/// thread (loom-serve's batcher) wait in futexes between parallel regions
/// (on 2 cores, ResNet-50: about 100 context switches a run against 1, its
/// runs 12-27% slower than loom-run's; libgomp shortens its workers' spin
/// once its threads outnumber the CPUs). A load on a thread that ends
/// leaves no team behind (docs/Runtime.md "Threads").
Error onThreadOfItsOwn(const std::function<Error()> &work) {
  struct Call {
    const std::function<Error()> *work;
    Error err;
  } call{&work, Error::ok()};
  auto body = [](void *data) -> void * {
    auto *c = static_cast<Call *>(data);
    cpu::CallerPin pin;
    c->err = (*c->work)();
    return nullptr;
  };
  pthread_t thread;
  if (pthread_create(&thread, nullptr, body, &call) != 0) {
    cpu::CallerPin pin;
    return work();
  }
  pthread_join(thread, nullptr);
  return call.err;
}

/// Prepares the entries of world rank \p rank not prepared yet (a context
/// of that rank joined a world). The entries are the model's lazily made
/// part: every context's model is const, and this writes only plans no
/// context of another rank runs, under the model's mutex.
Error prepareRank(const loom_model &model, int64_t rank) {
  auto &m = const_cast<loom_model &>(model);
  std::lock_guard<std::mutex> lock(m.prepareMutex);
  for (size_t e = 0; e < m.plans.size(); ++e)
    if (m.manifest.entries[e].rank >= 0 &&
        m.manifest.entries[e].runsOn(rank) && !m.plans[e].ready)
      if (Error err = prepareEntry(m, e))
        return err;
  return Error::ok();
}

/// Binds every device of the manifest to a device of this machine: the
/// devices of every rank (a multi-rank artifact loaded in one process runs
/// its ranks as threads, docs/Runtime.md "Ranks"), one program per entry.
Error bindDevices(loom_model &m, const loom_model_options *options) {
  const artifact::Manifest &man = m.manifest;
  std::string selector = options && options->device ? options->device : "";
  if (!selector.empty() && man.devices.size() != 1)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "device '" + selector + "': the artifact runs on " +
                         std::to_string(man.devices.size()) +
                         " devices; a selector picks the one of a "
                         "single-device artifact");
  DeviceOptions deviceOptions;
  deviceOptions.threads = options ? options->num_threads : 0;
  if (const char *t = std::getenv("LOOM_DEVICE_TIMEOUT")) {
    char *end = nullptr;
    double seconds = std::strtod(t, &end);
    if (end == t || *end || !(seconds > 0))
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       std::string("LOOM_DEVICE_TIMEOUT='") + t +
                           "': expected a positive number of seconds");
    deviceOptions.timeoutSeconds = seconds;
  }
  for (const artifact::Device &spec : man.devices) {
    m.devices.emplace_back();
    if (Error err = bindDevice(spec, selector, deviceOptions, m.devices.back()))
      return err;
    m.featureNames.emplace_back();
    for (const std::string &f : spec.features)
      m.featureNames.back().push_back(f.c_str());
  }
  return Error::ok();
}

/// Binds weight buffers, sizes every buffer of every entry and chooses the
/// program each entry runs.
Error planEntries(loom_model &m) {
  m.arenaBytes.assign(m.manifest.devices.size(), 0);
  for (const artifact::Entry &e : m.manifest.entries) {
    if (e.programs.size() != 1)
      return makeError(LOOM_ERROR_FORMAT,
                       "entry '" + e.name + "' has " +
                           std::to_string(e.programs.size()) +
                           " programs; this runtime runs one per entry");
    EntryPlan plan;
    plan.program = &e.programs.front();
    plan.device = m.devices[plan.program->device].get();
    int64_t &arena = m.arenaBytes[plan.program->device];
    arena = std::max(arena, plan.program->arenaBytes);
    for (const artifact::Buffer &b : e.buffers) {
      void *address = nullptr;
      int64_t size = b.bytes;
      if (b.kind == artifact::BufferKind::Weight) {
        auto it = m.views.find(b.weight);
        if (it == m.views.end())
          return makeError(LOOM_ERROR_FORMAT,
                           "manifest: entry '" + e.name +
                               "' reads weight '" + b.weight +
                               "', which the weights do not hold");
        address = const_cast<uint8_t *>(it->second.data);
        size = it->second.bytes;
      }
      plan.bufferBytes.push_back(size);
      plan.constants.push_back(address);
    }
    if (Error err = checkStepSizes(e, plan.bufferBytes))
      return err;
    for (const artifact::Step &s : plan.program->steps)
      plan.capturable &= !s.is<artifact::BranchStep>();
    m.plans.push_back(std::move(plan));
  }
  return Error::ok();
}

int64_t alignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

/// Lays out each entry's inputs and outputs in the staging area of a device
/// that stages them (aligned for the steps that bind them).
void planStaging(loom_model &m) {
  m.stagingBytes.assign(m.devices.size(), 0);
  for (size_t e = 0; e < m.plans.size(); ++e) {
    EntryPlan &plan = m.plans[e];
    const std::vector<artifact::Buffer> &buffers =
        m.manifest.entries[e].buffers;
    plan.stagingOffsets.assign(buffers.size(), -1);
    if (plan.device->usesHostMemory())
      continue;
    int64_t at = 0, alignment = plan.device->bufferAlignment();
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (buffers[i].kind != artifact::BufferKind::Input &&
          buffers[i].kind != artifact::BufferKind::Output)
        continue;
      plan.stagingOffsets[i] = at;
      at = alignUp(at + std::max<int64_t>(buffers[i].bytes, 1), alignment);
    }
    int64_t &bytes = m.stagingBytes[plan.program->device];
    bytes = std::max(bytes, at);
  }
}

/// Uploads the weights each device that stages reads, once, and points its
/// plans' weight buffers at them.
Error uploadWeights(loom_model &m) {
  m.weightMemory.resize(m.devices.size());
  for (size_t d = 0; d < m.devices.size(); ++d) {
    Device &device = *m.devices[d];
    if (device.usesHostMemory())
      continue;
    std::map<std::string, int64_t> offsets;
    int64_t at = 0;
    for (const artifact::Entry &e : m.manifest.entries)
      for (const artifact::Buffer &b : e.buffers)
        if (b.kind == artifact::BufferKind::Weight && b.device == int64_t(d) &&
            offsets.emplace(b.weight, at).second)
          at = alignUp(at + std::max<int64_t>(m.views.at(b.weight).bytes, 1),
                       device.bufferAlignment());
    if (offsets.empty())
      continue;
    Allocation &memory = m.weightMemory[d];
    if (Error err = device.allocate(at, memory))
      return err;
    std::unique_ptr<Queue> queue = device.createQueue();
    for (const auto &[name, offset] : offsets) {
      const WeightView &view = m.views.at(name);
      if (Error err = device.writeFromHost(
              *queue, static_cast<char *>(memory.data) + offset, view.data,
              view.bytes))
        return err;
    }
    if (Error err = queue->synchronize())
      return err;
    for (size_t e = 0; e < m.plans.size(); ++e) {
      const std::vector<artifact::Buffer> &buffers =
          m.manifest.entries[e].buffers;
      for (size_t i = 0; i < buffers.size(); ++i)
        if (buffers[i].kind == artifact::BufferKind::Weight &&
            buffers[i].device == int64_t(d))
          m.plans[e].constants[i] =
              static_cast<char *>(memory.data) + offsets.at(buffers[i].weight);
    }
  }
  return Error::ok();
}

/// Gives each GPU device the image section its manifest device names.
Error loadImages(loom_model &m,
                 const std::map<std::string, Section> &sections) {
  for (size_t d = 0; d < m.devices.size(); ++d) {
    const artifact::Device &spec = m.manifest.devices[d];
    if (spec.image.empty())
      continue;
    auto it = sections.find(spec.image);
    if (it == sections.end())
      return makeError(LOOM_ERROR_FORMAT,
                       "manifest: devices[" + std::to_string(d) +
                           "].image: the artifact has no section '" +
                           spec.image + "'");
    if (Error err = m.devices[d]->loadImage(
            spec, m.file.data + it->second.offset, it->second.size))
      return err;
  }
  return Error::ok();
}

Error loadWeights(loom_model &m, const loom_model_options *options,
                  const std::map<std::string, Section> &sections) {
  const artifact::Weights &man = m.manifest.weights;
  switch (man.storage) {
  case artifact::WeightStorage::None:
    return Error::ok();
  case artifact::WeightStorage::Embedded: {
    auto it = sections.find(".loom_weights");
    if (it == sections.end())
      return makeError(LOOM_ERROR_FORMAT,
                       "the manifest says the weights are embedded, but "
                       "there is no .loom_weights section");
    m.weights = m.file.data + it->second.offset;
    m.weightsSize = it->second.size;
    break;
  }
  case artifact::WeightStorage::External: {
    std::string path;
    if (options && options->weights_path) {
      path = options->weights_path;
    } else {
      size_t slash = m.path.rfind('/');
      path = (slash == std::string::npos ? std::string()
                                         : m.path.substr(0, slash + 1)) +
             man.file;
    }
    if (Error err = m.externalWeights.map(path))
      return makeError(err.status, path + ": " + err.message);
    m.weights = m.externalWeights.data;
    m.weightsSize = m.externalWeights.size;
    break;
  }
  }
  return bindWeights(m.weights, m.weightsSize, man, m.views);
}

/// Phase two: the code. The descriptor must agree with the file.
Error openLibrary(loom_model &m, const std::map<std::string, Section> &sections) {
  char resolved[PATH_MAX];
  if (!realpath(m.path.c_str(), resolved))
    return makeError(LOOM_ERROR_IO, "cannot resolve the path");
  m.library = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (!m.library)
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("dlopen failed: ") + dlerror());
  auto get = reinterpret_cast<loom_artifact_v1_fn>(
      dlsym(m.library, "loom_artifact_v1"));
  if (!get)
    return makeError(LOOM_ERROR_FORMAT, "no loom_artifact_v1 function");
  const loom_artifact_descriptor *d = get();
  if (!d || d->magic != LOOM_ARTIFACT_MAGIC)
    return makeError(LOOM_ERROR_FORMAT, "bad artifact descriptor");
  if (d->abi_version != LOOM_ARTIFACT_ABI_VERSION)
    return makeError(LOOM_ERROR_VERSION,
                     "artifact ABI version " +
                         std::to_string(d->abi_version) +
                         "; this runtime loads version " +
                         std::to_string(LOOM_ARTIFACT_ABI_VERSION));
  const Section &man = sections.at(".loom_manifest");
  if (d->manifest_size != man.size ||
      std::memcmp(d->manifest, m.file.data + man.offset, man.size) != 0)
    return makeError(LOOM_ERROR_FORMAT,
                     "the loaded manifest differs from the file's");
  std::map<std::string, loom_kernel_fn> kernels;
  for (uint64_t i = 0; i < d->num_kernels; ++i)
    kernels[d->kernels[i].name] = d->kernels[i].fn;
  for (size_t e = 0; e < m.plans.size(); ++e) {
    EntryPlan &plan = m.plans[e];
    for (const artifact::Step &s : plan.program->steps) {
      const auto *k = s.getIf<artifact::KernelStep>();
      plan.kernels.push_back(nullptr);
      if (!k)
        continue;
      auto it = kernels.find(k->name);
      if (it == kernels.end() || !it->second)
        return makeError(LOOM_ERROR_FORMAT,
                         "manifest: entry '" + m.manifest.entries[e].name +
                             "' runs kernel '" + k->name +
                             "', which the artifact lacks");
      plan.kernels.back() = it->second;
    }
  }
  if (d->source)
    m.source.assign(d->source, d->source_size);
  return Error::ok();
}

/// Tells each device the constants that programs of several entries read
/// on it (Device::setSharedConstants).
void shareConstants(loom_model &m) {
  std::map<Device *, std::map<const void *, std::set<size_t>>> readers;
  for (size_t e = 0; e < m.plans.size(); ++e)
    for (const void *c : m.plans[e].constants)
      if (c)
        readers[m.plans[e].device][c].insert(e);
  for (auto &[device, constants] : readers) {
    std::unordered_set<const void *> shared;
    for (const auto &[c, entries] : constants)
      if (entries.size() > 1)
        shared.insert(c);
    device->setSharedConstants(std::move(shared));
  }
}

Error load(loom_model &m, const loom_model_options *options) {
  if (Error err = m.file.map(m.path))
    return err;
  std::map<std::string, Section> sections;
  if (Error err = readElfSections(m.file.data, m.file.size, sections))
    return err;
  auto man = sections.find(".loom_manifest");
  if (man == sections.end())
    return makeError(LOOM_ERROR_FORMAT,
                     "not a Loom artifact (an ELF file with no "
                     ".loom_manifest section)");
  if (Error err = parseManifest(
          std::string_view((const char *)m.file.data + man->second.offset,
                           man->second.size),
          m.manifest))
    return err;
  if (Error err = checkTiedInputs(m.manifest))
    return err;
  if (Error err = bindDevices(m, options))
    return err;
  if (Error err = loadWeights(m, options, sections))
    return err;
  if (Error err = planEntries(m))
    return err;
  planStaging(m);
  if (Error err = uploadWeights(m))
    return err;
  if (Error err = loadImages(m, sections))
    return err;
  if (Error err = openLibrary(m, sections))
    return err;
  shareConstants(m);
  // An entry of one rank waits for a context of that rank: a process that
  // runs one rank prepares (packs the weights of) its entries only.
  for (size_t e = 0; e < m.plans.size(); ++e) {
    int64_t rank = m.manifest.entries[e].rank;
    if (rank < 0) {
      if (Error err = prepareEntry(m, e))
        return err;
      continue;
    }
    m.plans[e].planText = "entry @" + m.manifest.entries[e].name +
                          ": prepared when a context of " +
                          ranksOf(m.manifest.entries[e]) + " joins a world\n";
  }
  return Error::ok();
}

bool validEntry(const loom_model *m, int64_t entry) {
  return m && entry >= 0 && entry < int64_t(m->manifest.entries.size());
}

loom_status describe(const std::vector<artifact::TensorDesc> &tensors,
                     int64_t index, loom_tensor_desc *desc) {
  if (index < 0 || index >= int64_t(tensors.size()) || !desc)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "no tensor " + std::to_string(index)),
                  "");
  const artifact::TensorDesc &t = tensors[index];
  *desc = {t.name.c_str(), t.dtype.c_str(), int64_t(t.shape.size()),
           t.shape.data(), t.bytes};
  return LOOM_OK;
}

} // namespace

loom_status rt::reportError(const Error &e, const std::string &where) {
  return report(e, where);
}

const artifact::Manifest &rt::manifestOf(const loom_model &m) {
  return m.manifest;
}

const std::map<std::string, WeightView> &rt::weightsOf(const loom_model &m) {
  return m.views;
}

extern "C" {

const char *loom_last_error(void) { return gLastError.c_str(); }

loom_status loom_model_load(const char *path,
                            const loom_model_options *options,
                            loom_model **model) {
  if (!path || !model)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_model_load needs a path and a result"),
                  "");
  *model = nullptr;
  auto m = std::make_unique<loom_model>();
  m->path = path;
  if (Error err = onThreadOfItsOwn([&] { return load(*m, options); }))
    return report(err, path);
  *model = m.release();
  gLastError.clear();
  return LOOM_OK;
}

void loom_model_free(loom_model *model) { delete model; }

int64_t loom_model_num_entries(const loom_model *model) {
  return model ? int64_t(model->manifest.entries.size()) : 0;
}

const char *loom_model_entry_name(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? model->manifest.entries[entry].name.c_str()
             : nullptr;
}

int64_t loom_model_find_entry(const loom_model *model, const char *name) {
  if (!model || !name)
    return -1;
  for (size_t i = 0; i < model->manifest.entries.size(); ++i)
    if (model->manifest.entries[i].name == name)
      return int64_t(i);
  return -1;
}

int loom_model_entry_runs_on(const loom_model *model, int64_t entry,
                             int64_t rank) {
  return validEntry(model, entry) && rank >= 0 &&
         model->manifest.entries[entry].runsOn(rank);
}

int64_t loom_entry_num_inputs(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? int64_t(model->manifest.entries[entry].inputs.size())
             : -1;
}

int64_t loom_entry_num_outputs(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? int64_t(model->manifest.entries[entry].outputs.size())
             : -1;
}

loom_status loom_entry_input(const loom_model *model, int64_t entry,
                             int64_t index, loom_tensor_desc *desc) {
  if (!validEntry(model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT, "no such entry"), "");
  return describe(model->manifest.entries[entry].inputs, index, desc);
}

int64_t loom_entry_output_tied_input(const loom_model *model, int64_t entry,
                                     int64_t index) {
  if (!validEntry(model, entry) || index < 0 ||
      index >= int64_t(model->manifest.entries[entry].outputs.size()))
    return -1;
  return model->manifest.entries[entry].outputs[index].tiedInput.value_or(-1);
}

int64_t loom_entry_output_length(const loom_model *model, int64_t entry,
                                 int64_t index, int64_t *dim) {
  if (!validEntry(model, entry) || index < 0 ||
      index >= int64_t(model->manifest.entries[entry].outputs.size()))
    return -1;
  const auto &bound = model->manifest.entries[entry].outputs[index].bound;
  if (!bound)
    return -1;
  if (dim)
    *dim = bound->dim;
  return bound->lengthOutput;
}

loom_status loom_entry_output(const loom_model *model, int64_t entry,
                              int64_t index, loom_tensor_desc *desc) {
  if (!validEntry(model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT, "no such entry"), "");
  return describe(model->manifest.entries[entry].outputs, index, desc);
}

const char *loom_model_source(const loom_model *model, size_t *size) {
  if (!model || model->source.empty())
    return nullptr;
  if (size)
    *size = model->source.size();
  return model->source.data();
}

const char *loom_model_source_graph(const loom_model *model) {
  if (!model || model->source.empty())
    return nullptr;
  // The spellings are string literals (artifact::sourceGraphName).
  return artifact::sourceGraphName(model->manifest.source
                                       ? model->manifest.source->graph
                                       : artifact::SourceGraph::Compiled)
      .data();
}

} // extern "C"

namespace {

/// One line of the plan: the step's kind, its operands (with the layout the
/// device keeps each buffer in, where it keeps one) and what runs it.
std::string planLine(const EntryPlan &plan, size_t index) {
  const artifact::Step &step = plan.program->steps[index];
  std::string line = "  " + std::to_string(index) + " " +
                     std::string(artifact::stepKindName(step.kind()));
  for (const artifact::Operand &o : artifact::operands(step)) {
    line += " " + std::string(o.role) + "=" + std::to_string(o.buffer);
    if (auto it = plan.layouts.find(o.buffer); it != plan.layouts.end())
      line += "(" + it->second + ")";
  }
  StepDescription d;
  if (plan.prepared[index]) {
    d = plan.prepared[index]->describe();
  } else if (const auto *k = step.getIf<artifact::KernelStep>()) {
    d.implementation = std::string("generated ") +
                       (k->team ? "team kernel " : "kernel ") + k->name;
    if (k->elementwise)
      d.operands.push_back("accepts any one layout of its operands");
  } else {
    d.implementation = "runtime";
  }
  line += " | " + d.implementation;
  if (!d.postOps.empty()) {
    line += " | post-ops:";
    for (size_t i = 0; i < d.postOps.size(); ++i)
      line += (i ? ", " : " ") + d.postOps[i];
  }
  for (const std::string &o : d.operands)
    line += " | " + o;
  if (!d.threads.empty())
    line += " | threads " + d.threads;
  return line + "\n";
}

} // namespace

extern "C" {

const char *loom_entry_plan(const loom_model *model, int64_t entry) {
  if (!validEntry(model, entry)) {
    report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "no entry " + std::to_string(entry)),
           "");
    return nullptr;
  }
  return model->plans[size_t(entry)].planText.c_str();
}

const void *loom_model_weights(const loom_model *model, size_t *size) {
  if (!model || !model->weights)
    return nullptr;
  if (size)
    *size = model->weightsSize;
  return model->weights;
}

loom_status loom_context_create(const loom_model *model,
                                loom_context **context) {
  if (!model || !context)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_context_create needs a model"),
                  "");
  auto c = std::make_unique<loom_context>();
  c->model = model;
  if (const char *p = std::getenv("LOOM_PROFILE"); p && *p && *p != '0') {
    c->profile = true;
    std::string value = p;
    if (value.size() > 5 && value.compare(value.size() - 5, 5, ".json") == 0)
      c->profileFile = value;
    for (const EntryPlan &plan : model->plans)
      c->stepSeconds.emplace_back(plan.program->steps.size());
    c->profiledRuns.assign(model->plans.size(), 0);
  }
  c->useGraphs =
      !c->profile && !environmentIs("LOOM_GRAPHS", "0", {"0", "1"});
  c->runs.assign(model->plans.size(), 0);
  c->outputShapes.resize(model->plans.size());
  c->graphs.resize(model->plans.size());
  c->graphResident.resize(model->plans.size());
  for (size_t d = 0; d < model->devices.size(); ++d) {
    Device &device = *model->devices[d];
    c->queues.push_back(device.createQueue());
    c->arenas.emplace_back();
    if (Error err = device.allocate(model->arenaBytes[d], c->arenas.back()))
      return report(err, model->path);
    c->staging.emplace_back();
    if (Error err =
            device.allocate(model->stagingBytes[d], c->staging.back()))
      return report(err, model->path);
  }
  *context = c.release();
  return LOOM_OK;
}

void loom_context_free(loom_context *context) { delete context; }

loom_status loom_context_host_alloc(loom_context *context, size_t bytes,
                                   void **data) {
  if (!context || !data)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_context_host_alloc needs a context and a "
                            "place for the address"),
                  "");
  *data = nullptr;
  // A CUDA device's (page-locked, portable: for every CUDA context) where
  // the context has one; the first device's (ordinary memory) otherwise.
  Device *device = context->model->devices.front().get();
  for (const auto &d : context->model->devices)
    if (d->kind() == artifact::DeviceKind::Cuda) {
      device = d.get();
      break;
    }
  if (Error err = device->allocateHost(int64_t(bytes), *data))
    return report(err, context->model->path);
  context->hostBlocks[*data] = device;
  return LOOM_OK;
}

void loom_context_host_free(loom_context *context, void *data) {
  if (!context || !data)
    return;
  auto it = context->hostBlocks.find(data);
  if (it == context->hostBlocks.end())
    return;
  it->second->deallocateHost(data);
  context->hostBlocks.erase(it);
}

loom_status loom_context_state(loom_context *context, const char *name,
                               void **data, int64_t *bytes) {
  if (!context || !name || !data)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_context_state needs a context, a name and "
                            "a place for the address"),
                  "");
  for (const artifact::Entry &e : context->model->manifest.entries) {
    std::vector<bool> tied = tiedInputs(e);
    for (size_t i = 0; i < e.inputs.size(); ++i)
      if (tied[i] && e.inputs[i].name == name) {
        if (Error err = context->state.host(name, e.inputs[i].bytes,
                                            context->queues, *data))
          return report(err, context->model->path);
        if (bytes)
          *bytes = e.inputs[i].bytes;
        return LOOM_OK;
      }
  }
  return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                          "no entry updates an input named '" +
                              std::string(name) + "' in place"),
                context->model->path);
}

int64_t loom_model_world_ranks(const loom_model *model) {
  if (!model)
    return 0;
  int64_t ranks = 1;
  for (const artifact::Entry &e : model->manifest.entries)
    for (const artifact::Program &p : e.programs)
      for (const artifact::Step &s : p.steps) {
        if (const auto *r = s.getIf<artifact::WorldRankStep>())
          ranks = std::max(ranks, r->group.world);
        if (const auto *g = s.getIf<artifact::AllGatherStep>())
          ranks = std::max(ranks, g->group.world);
      }
  return ranks;
}

loom_status loom_context_join_world(loom_context *context,
                                    loom_world *world) {
  if (!context || !world)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_context_join_world needs a context and a "
                            "world"),
                  "");
  int64_t ranks = loom_model_world_ranks(context->model);
  if (loom_world_size(world) != ranks)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "the artifact runs on a world of " +
                                std::to_string(ranks) + " ranks; this one has " +
                                std::to_string(loom_world_size(world))),
                  context->model->path);
  // The rank's entries are prepared (weights packed) by a team of their
  // own, as a load's are (onThreadOfItsOwn).
  if (Error err = onThreadOfItsOwn([&] {
        return prepareRank(*context->model, loom_world_rank(world));
      }))
    return report(err, context->model->path);
  context->world = world;
  context->worldRank = loom_world_rank(world);
  context->worldSize = loom_world_size(world);
  return LOOM_OK;
}

} // extern "C"

namespace {

/// The address of every buffer of \p entry for one run.
/// Records the shape of each output of \p entry after a run that wrote
/// \p outputs: an output of data-dependent length is cut to the length its
/// length output holds.
void recordOutputShapes(loom_context &c, int64_t entry,
                        const void *const *outputs) {
  const artifact::Entry &e = c.model->manifest.entries[entry];
  std::vector<std::vector<int64_t>> &shapes = c.outputShapes[entry];
  shapes.clear();
  for (const artifact::TensorDesc &t : e.outputs) {
    if (!t.bound) {
      shapes.push_back(t.shape);
      continue;
    }
    int64_t length = 0;
    std::memcpy(&length, outputs[t.bound->lengthOutput], sizeof(length));
    shapes.push_back(boundedShape(t.shape, t.bound->dim, length));
  }
}

Error bindRun(loom_context &c, int64_t entry, const void *const *inputs,
              void *const *outputs) {
  const loom_model &m = *c.model;
  const artifact::Entry &e = m.manifest.entries[entry];
  const EntryPlan &plan = m.plans[entry];
  std::vector<void *> &buffers = c.buffers;
  buffers.assign(e.buffers.size(), nullptr);
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const artifact::Buffer &b = e.buffers[i];
    if (plan.stagingOffsets[i] >= 0 && b.bytes > 0 &&
        !(b.kind == artifact::BufferKind::Input ? inputs[b.index]
                                                : outputs[b.index]))
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "a null input or output pointer");
    switch (b.kind) {
    case artifact::BufferKind::Input:
    case artifact::BufferKind::Output:
      if (b.kind == artifact::BufferKind::Input && c.resident[b.index])
        buffers[i] = const_cast<void *>(inputs[b.index]);
      else if (plan.stagingOffsets[i] >= 0)
        buffers[i] =
            static_cast<char *>(c.staging[b.device].data) +
            plan.stagingOffsets[i];
      else if (b.kind == artifact::BufferKind::Input)
        buffers[i] = const_cast<void *>(inputs[b.index]);
      else
        buffers[i] = outputs[b.index];
      break;
    case artifact::BufferKind::Weight:
      buffers[i] = plan.constants[i];
      break;
    case artifact::BufferKind::Arena:
      buffers[i] = static_cast<char *>(c.arenas[b.device].data) + b.offset;
      break;
    }
    if (!buffers[i] && plan.bufferBytes[i] > 0)
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "a null input or output pointer");
  }
  return Error::ok();
}

/// Copies the inputs (\p toDevice) or the outputs of a run between the
/// caller's tensors and the staging area of a device that stages them.
Error stage(loom_context &c, int64_t entry, bool toDevice,
            const void *const *inputs, void *const *outputs) {
  const EntryPlan &plan = c.model->plans[entry];
  const artifact::Entry &e = c.model->manifest.entries[entry];
  Queue &queue = *c.queues[plan.program->device];
  artifact::BufferKind kind =
      toDevice ? artifact::BufferKind::Input : artifact::BufferKind::Output;
  std::vector<bool> tied = tiedInputs(e);
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const artifact::Buffer &b = e.buffers[i];
    if (plan.stagingOffsets[i] < 0 ||
        (b.kind == artifact::BufferKind::Input && c.resident[b.index]))
      continue;
    // State updated in place goes back to the caller's input.
    if (!toDevice && b.kind == artifact::BufferKind::Input && tied[b.index]) {
      if (Error err = plan.device->readToHost(
              queue, const_cast<void *>(inputs[b.index]), c.buffers[i],
              b.bytes))
        return err;
      continue;
    }
    if (b.kind != kind)
      continue;
    Error err = toDevice ? plan.device->writeFromHost(queue, c.buffers[i],
                                                      inputs[b.index], b.bytes)
                         : plan.device->readToHost(queue, outputs[b.index],
                                                   c.buffers[i], b.bytes);
    if (err)
      return err;
  }
  return Error::ok();
}

/// Runs step \p index of \p entry's program; \p next is the step after it.
Error runStep(loom_context &c, int64_t entry, size_t index, size_t &next) {
  const EntryPlan &plan = c.model->plans[entry];
  const artifact::Step &step = plan.program->steps[index];
  Device &device = *plan.device;
  Queue &queue = *c.queues[plan.program->device];
  std::vector<void *> &buffers = c.buffers;
  switch (step.kind()) {
  case artifact::StepKind::Kernel: {
    const auto &s = *step.getIf<artifact::KernelStep>();
    c.kernelArgs.clear();
    for (int64_t id : s.args)
      c.kernelArgs.push_back(buffers[id]);
    if (s.team)
      return device.launchTeamKernel(queue, plan.kernels[index],
                                     c.kernelArgs.data(), s.args.size());
    return device.launchKernel(queue, plan.kernels[index],
                               c.kernelArgs.data(), s.range, s.grain);
  }
  case artifact::StepKind::Copy: {
    const auto &s = *step.getIf<artifact::CopyStep>();
    return device.copy(queue, buffers[s.dst], buffers[s.src],
                       plan.bufferBytes[s.dst]);
  }
  case artifact::StepKind::Branch: {
    // An i1 tensor holds a byte per element.
    const auto &s = *step.getIf<artifact::BranchStep>();
    unsigned char cond = 0;
    if (Error err = device.readToHost(queue, &cond, buffers[s.cond], 1))
      return err;
    if (cond == 0)
      next = s.elseStep;
    return Error::ok();
  }
  case artifact::StepKind::Jump:
    next = step.getIf<artifact::JumpStep>()->to;
    return Error::ok();
  case artifact::StepKind::WorldRank: {
    const auto &s = *step.getIf<artifact::WorldRankStep>();
    return runWorldRank(c.world, s, device, queue, buffers[s.dst]);
  }
  case artifact::StepKind::AllGather: {
    const auto &s = *step.getIf<artifact::AllGatherStep>();
    return runAllGather(c.world, s, device, queue, buffers[s.src],
                        buffers[s.dst]);
  }
  case artifact::StepKind::Conv2d:
  case artifact::StepKind::Conv2dFilterGrad:
  case artifact::StepKind::Matmul:
  case artifact::StepKind::Pool2d:
  case artifact::StepKind::Concat:
  case artifact::StepKind::Binary:
  case artifact::StepKind::Sgemm:
  case artifact::StepKind::Dispatch:
  case artifact::StepKind::CublasMatmul:
  case artifact::StepKind::CudnnConv:
  case artifact::StepKind::TopK:
  case artifact::StepKind::NonMaxSuppression:
  case artifact::StepKind::NonZero:
  case artifact::StepKind::UpdateSlice:
  case artifact::StepKind::Attention:
    if (!plan.prepared[index])
      return makeError(LOOM_ERROR_LIBRARY,
                       "step " + std::to_string(index) + " (" +
                           std::string(artifact::stepKindName(step.kind())) +
                           ") was not prepared by " + device.name());
    return device.launchLibrary(queue, *plan.prepared[index], buffers.data());
  }
  return makeError(LOOM_ERROR_FORMAT, "step " + std::to_string(index) +
                                          " is of an unknown kind");
}

/// Runs the steps of \p entry's program, timing each when profiling: on a
/// queue with a clock of its own (a CUDA stream), by marks recorded between
/// the steps and read once they have run, so that a step's time is the
/// device's alone; on another device with queues of its own (Vulkan), each
/// step is waited for, so that its time is the device's, not that of its
/// launch; on the CPU, by the host's clock.
Error runSteps(loom_context &c, int64_t entry) {
  const EntryPlan &plan = c.model->plans[entry];
  size_t numSteps = plan.program->steps.size();
  Queue &queue = *c.queues[plan.program->device];
  bool marks = c.profile && queue.timesOnDevice();
  bool wait = c.profile && !marks && !queue.device().usesHostMemory();
  if (c.profile)
    ++c.profiledRuns[entry];
  if (wait)
    if (Error err = queue.synchronize())
      return err;
  // Per step run, in order: its index and the mark after it.
  std::vector<std::pair<size_t, std::unique_ptr<Event>>> ran;
  std::unique_ptr<Event> first = marks ? queue.recordTimed() : nullptr;
  for (size_t index = 0, next; index < numSteps; index = next) {
    next = index + 1;
    auto start = c.profile ? std::chrono::steady_clock::now()
                           : std::chrono::steady_clock::time_point();
    if (Error err = runStep(c, entry, index, next))
      return err;
    if (marks) {
      ran.emplace_back(index, queue.recordTimed());
      continue;
    }
    if (wait)
      if (Error err = queue.synchronize())
        return err;
    if (c.profile)
      c.stepSeconds[entry][index].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count());
  }
  if (!marks)
    return Error::ok();
  if (Error err = queue.synchronize())
    return err;
  const Event *before = first.get();
  for (auto &[index, mark] : ran) {
    if (!before || !mark)
      return makeError(LOOM_ERROR_LIBRARY,
                       queue.device().name() +
                           ": cannot record a timed event for the profile");
    double seconds = 0;
    if (Error err = mark->secondsSince(*before, seconds))
      return err;
    c.stepSeconds[entry][index].push_back(seconds);
    before = mark.get();
  }
  return Error::ok();
}

/// Runs \p entry's steps: one by one, or, on a queue that captures and for
/// an entry with no branch, after a first (warm-up) run, as the graph the
/// second run records, replayed from then on. The graph holds this
/// context's addresses (arena, staging area, weights, the state's device
/// copies), which do not change.
Error runProgram(loom_context &c, int64_t entry) {
  const EntryPlan &plan = c.model->plans[entry];
  Queue &queue = *c.queues[plan.program->device];
  std::unique_ptr<Graph> &graph = c.graphs[entry];
  if (graph && c.graphResident[entry] != c.resident)
    graph.reset();
  if (!graph && (!c.useGraphs || !plan.capturable || !queue.canCapture() ||
                 c.runs[entry]++ == 0))
    return runSteps(c, entry);
  if (!graph) {
    if (Error err = queue.beginCapture())
      return err;
    Error err = runSteps(c, entry);
    std::unique_ptr<Graph> captured;
    Error end = queue.endCapture(captured);
    if (err)
      return err;
    if (end)
      return end;
    graph = std::move(captured);
    c.graphResident[entry] = c.resident;
  }
  return queue.replay(*graph);
}

} // namespace

extern "C" {

loom_status loom_run(loom_context *context, int64_t entry,
                     const void *const *inputs, void *const *outputs) {
  if (!context || !validEntry(context->model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_run needs a context and an entry"),
                  "");
  cpu::CallerPin pin;
  const loom_model &m = *context->model;
  const artifact::Entry &e = m.manifest.entries[entry];
  if (e.rank >= 0 && (!context->world || !e.runsOn(context->worldRank)))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "entry '" + e.name + "' runs on " + ranksOf(e) +
                                " of a world; this context " +
                                (context->world
                                     ? "is rank " +
                                           std::to_string(context->worldRank)
                                     : std::string("joined none "
                                                   "(loom_context_join_world)"))),
                  m.path);
  if ((!e.inputs.empty() && !inputs) || (!e.outputs.empty() && !outputs))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_run needs the entry's inputs and outputs"),
                  m.path);
  const EntryPlan &plan = m.plans[entry];
  if (Error err = resolveInputs(e, plan.program->device, context->queues,
                                context->state, inputs, outputs,
                                context->inputs, context->resident))
    return report(err, m.path);
  inputs = context->inputs.data();
  if (Error err = bindRun(*context, entry, inputs, outputs))
    return report(err, m.path);
  if (Error err = stage(*context, entry, true, inputs, outputs))
    return report(err, m.path);
  if (Error err = runProgram(*context, entry))
    return report(err, m.path);
  if (Error err = stage(*context, entry, false, inputs, outputs))
    return report(err, m.path);
  if (Error err = context->queues[plan.program->device]->synchronize())
    return report(err, m.path);
  recordOutputShapes(*context, entry, outputs);
  return LOOM_OK;
}

loom_status loom_output_shape(const loom_context *context, int64_t entry,
                              int64_t index, int64_t *shape) {
  if (!context || !validEntry(context->model, entry) || !shape)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_output_shape needs a context, an entry and "
                            "a shape"),
                  "");
  const std::vector<std::vector<int64_t>> &shapes =
      context->outputShapes[entry];
  if (shapes.empty())
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_output_shape: the entry has not run on "
                            "this context"),
                  context->model->path);
  if (index < 0 || index >= int64_t(shapes.size()))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "no output " + std::to_string(index)),
                  context->model->path);
  std::copy(shapes[index].begin(), shapes[index].end(), shape);
  return LOOM_OK;
}

int64_t loom_model_num_devices(const loom_model *model) {
  return model ? int64_t(model->devices.size()) : 0;
}

loom_status loom_model_device(const loom_model *model, int64_t index,
                              loom_device_desc *desc) {
  if (!model || index < 0 || index >= int64_t(model->devices.size()) ||
      !desc)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "no device " + std::to_string(index)),
                  "");
  const artifact::Device &spec = model->manifest.devices[index];
  const Device &device = *model->devices[index];
  const std::vector<const char *> &features = model->featureNames[index];
  *desc = {artifact::deviceKindName(device.kind()).data(), device.ordinal(),
           spec.chip.c_str(), int64_t(features.size()), features.data()};
  return LOOM_OK;
}

} // extern "C"
