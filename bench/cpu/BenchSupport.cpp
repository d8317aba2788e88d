//===- BenchSupport.cpp - Processes, memory, outputs of loom-bench-cpu ----===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace llvm;

namespace loom::bench {

//===----------------------------------------------------------------------===//
// Child processes
//===----------------------------------------------------------------------===//

std::string ProcessResult::summary() const {
  if (!failure.empty())
    return failure;
  SmallVector<StringRef> lines;
  StringRef(err).split(lines, '\n', -1, false);
  for (StringRef line : llvm::reverse(lines))
    if (!line.trim().empty())
      return line.trim().str();
  return "exit status " + std::to_string(exitCode);
}

namespace {

/// A temporary file removed when this object dies.
class TempFile {
public:
  explicit TempFile(StringRef prefix) {
    if (sys::fs::createTemporaryFile(prefix, "txt", path))
      path.clear();
  }
  ~TempFile() {
    if (!path.empty())
      sys::fs::remove(path);
  }
  StringRef str() const { return path; }
  bool valid() const { return !path.empty(); }
  std::string read() const {
    auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }

private:
  SmallString<128> path;
};

/// The CPUs this process's threads may run on when it started: read before
/// main (a namespace-scope initialiser), so before any Loom team ran. The
/// runtime binds the thread that first runs a team of several threads to
/// one CPU (lib/Runtime/CPU/CpuDevice.cpp, bindTeam), and a child inherits
/// the mask of the thread that starts it: a peer started from that thread
/// would run all its threads on one CPU.
cpu_set_t startupCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      CPU_SET(c, &set);
  return set;
}
const cpu_set_t kStartupCpus = startupCpus();

/// The calling thread runs on kStartupCpus for a scope (so that the
/// children it starts do), then on its own CPUs again.
class StartupAffinity {
public:
  StartupAffinity() {
    saved = sched_getaffinity(0, sizeof(before), &before) == 0;
    sched_setaffinity(0, sizeof(kStartupCpus), &kStartupCpus);
  }
  ~StartupAffinity() {
    if (saved)
      sched_setaffinity(0, sizeof(before), &before);
  }
  StartupAffinity(const StartupAffinity &) = delete;
  StartupAffinity &operator=(const StartupAffinity &) = delete;

private:
  cpu_set_t before;
  bool saved = false;
};

} // namespace

ProcessResult runProcess(StringRef program, ArrayRef<std::string> args,
                         unsigned timeoutSeconds,
                         ArrayRef<std::string> extraEnv) {
  ProcessResult result;
  TempFile out("loom-bench-out"), err("loom-bench-err");
  if (!out.valid() || !err.valid()) {
    result.failure = "cannot create temporary files for " + program.str();
    return result;
  }
  std::vector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {StringRef(""), out.str(), err.str()};
  std::optional<sys::ProcessStatistics> stats;
  std::string message;
  bool failedToStart = false;
  auto start = std::chrono::steady_clock::now();
  // This process's environment with extraEnv's NAME=VALUE entries added.
  std::vector<std::string> envStrings;
  std::optional<ArrayRef<StringRef>> env;
  std::vector<StringRef> envRefs;
  if (!extraEnv.empty()) {
    for (char **e = environ; *e; ++e)
      envStrings.push_back(*e);
    llvm::append_range(envStrings, extraEnv);
    for (const std::string &e : envStrings)
      envRefs.push_back(e);
    env = envRefs;
  }
  StartupAffinity affinity; // the child gets every CPU the bench started with
  int rc =
      sys::ExecuteAndWait(program, argv, env, redirects, timeoutSeconds,
                          /*MemoryLimit=*/0, &message, &failedToStart, &stats);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  result.out = out.read();
  result.err = err.read();
  if (stats)
    result.peakRssKb = int64_t(stats->PeakMemory);
  if (failedToStart) {
    result.exitCode = -1;
    result.failure = "cannot run " + program.str() + ": " + message;
  } else if (rc < 0) {
    result.exitCode = -2;
    result.failure =
        program.str() + ": " + (message.empty() ? "crashed" : message) +
        (timeoutSeconds
             ? " (time limit " + std::to_string(timeoutSeconds) + " s)"
             : "");
  } else {
    result.exitCode = rc;
  }
  return result;
}

std::string pathIn(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p);
}

Error writeJSONFile(StringRef path, const json::Value &value) {
  std::error_code ec;
  raw_fd_ostream out(path, ec);
  if (ec)
    return createStringError("cannot write " + path + ": " + ec.message());
  out << formatv("{0:2}", value) << "\n";
  return Error::success();
}

Expected<json::Value> readJSONFile(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError("cannot read " + path + ": " +
                             buffer.getError().message());
  auto value = json::parse((*buffer)->getBuffer());
  if (!value)
    return createStringError(path + ": " + toString(value.takeError()));
  return std::move(*value);
}

std::string commandLine(StringRef program, ArrayRef<std::string> args) {
  std::string s = program.str();
  for (const std::string &a : args) {
    bool plain = !a.empty() && llvm::all_of(a, [](char c) {
      return isAlnum(c) || StringRef("-_./=,:+@").contains(c);
    });
    s += plain ? " " + a : " '" + a + "'";
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Memory of this process
//===----------------------------------------------------------------------===//

namespace {
bool peakResettable = false;
} // namespace

bool resetPeakRss() {
  // "5" resets the peak RSS (VmHWM) to the current RSS (proc(5)).
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  peakResettable = bool(out);
  return peakResettable;
}

int64_t peakRssKb() {
  if (peakResettable) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      StringRef l(line);
      if (!l.consume_front("VmHWM:"))
        continue;
      l = l.trim();
      l.consume_back("kB");
      int64_t kb;
      if (!l.trim().getAsInteger(10, kb))
        return kb;
    }
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return int64_t(usage.ru_maxrss); // KiB on Linux.
}

//===----------------------------------------------------------------------===//
// Tensors of a run
//===----------------------------------------------------------------------===//

Error writeTensors(const RunTensors &tensors, StringRef path) {
  safetensors::Writer writer;
  for (const auto &[name, t] : tensors)
    if (Error err = writer.add(name, t.dtype, t.shape, t.values))
      return err;
  return writer.write(path);
}

Expected<RunTensors> readTensors(StringRef path) {
  auto file = safetensors::File::open(path);
  if (!file)
    return file.takeError();
  RunTensors tensors;
  for (const safetensors::TensorInfo &info : file->tensors()) {
    auto values = file->readAsDouble(info.name);
    if (!values)
      return values.takeError();
    tensors[info.name] = RunTensor{info.dtype, info.shape, std::move(*values)};
  }
  return tensors;
}

OutputError compareOutputs(const RunTensors &reference,
                           const RunTensors &actual) {
  OutputError e;
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto &[name, ref] : reference) {
    auto it = actual.find(name);
    if (it == actual.end()) {
      e.maxAbs = inf;
      e.where = "output '" + name + "' is missing";
      return e;
    }
    if (it->second.shape != ref.shape) {
      e.maxAbs = inf;
      e.where = "output '" + name + "' has shape " +
                safetensors::formatShape(it->second.shape) + ", expected " +
                safetensors::formatShape(ref.shape);
      return e;
    }
    const std::vector<double> &a = ref.values, &b = it->second.values;
    for (size_t i = 0; i < a.size(); ++i) {
      double d;
      if (std::isnan(a[i]) || std::isnan(b[i]))
        d = std::isnan(a[i]) && std::isnan(b[i]) ? 0 : inf;
      else if (a[i] == b[i]) // Equal infinities too.
        d = 0;
      else
        d = std::fabs(a[i] - b[i]);
      if (std::isfinite(a[i]))
        e.maxRef = std::max(e.maxRef, std::fabs(a[i]));
      if (d > e.maxAbs || (e.where.empty() && d == e.maxAbs)) {
        e.maxAbs = d;
        e.where = "output '" + name + "' element " + std::to_string(i);
      }
    }
    e.elements += int64_t(a.size());
  }
  return e;
}

//===----------------------------------------------------------------------===//
// Statistics and formatting
//===----------------------------------------------------------------------===//

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string loadAverage() {
  // /proc files report size 0: read them as a stream.
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c))
    return "unknown";
  return a + " " + b + " " + c;
}

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    StringRef l(line);
    if (!l.starts_with("model name"))
      continue;
    return l.split(':').second.trim().str();
  }
  return "unknown";
}

std::string fmtMs(std::optional<double> ms) {
  if (!ms || *ms <= 0)
    return "n/a";
  const char *f = *ms >= 100  ? "{0:f0}"
                  : *ms >= 10 ? "{0:f1}"
                  : *ms >= 1  ? "{0:f2}"
                              : "{0:f3}";
  return formatv(f, *ms).str();
}

std::string fmtError(const std::optional<OutputError> &e) {
  if (!e)
    return "n/a";
  if (std::isinf(e->maxAbs))
    return "mismatch";
  return formatv("{0:e1}", e->maxAbs).str();
}

json::Value errorJSON(const std::optional<OutputError> &e) {
  if (!e)
    return nullptr;
  return json::Object{{"max_abs", std::isinf(e->maxAbs)
                                      ? json::Value(nullptr)
                                      : json::Value(e->maxAbs)},
                      {"max_abs_reference", e->maxRef},
                      {"at", e->where},
                      {"elements", e->elements}};
}

} // namespace loom::bench
