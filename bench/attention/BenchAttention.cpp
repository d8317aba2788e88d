//===- BenchAttention.cpp - Decode attention against context length -------===//
//
// Part of Loom. loom-bench-attention: one decode step's attention (batch 1,
// one query per head, causal, a KV cache of fixed capacity with a live
// length) by libloomrt's kernel (lib/Runtime/CPU/Kernels/Attention.cpp) for
// a GPT-2-small head shape (12 heads of 64) and a TinyLlama one (32 query
// heads on 4 key/value heads of 64), at live lengths 128 to 32K: the time
// per call (median and best), the bytes it must read (keys and values of
// the live length) per second, and that over a copy's bytes per second on
// the same machine in the same run (memcpy of 256 MiB: the physical limit
// of a step that streams its cache). Before each call 128 MiB are written
// (untimed), so the cache comes from memory as a model's layers find
// theirs. Then a live length of 1,024 in caches of 2K and 32K: the step
// must cost the same. Prints a table; --json writes the rows.
//
//===----------------------------------------------------------------------===//

#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace loom;
namespace cpu = loom::rt::cpu;

namespace {

llvm::cl::OptionCategory cat("loom-bench-attention options");
llvm::cl::list<int64_t> contextArgs(
    "contexts",
    llvm::cl::desc("Live lengths (default 128..32768, powers of 2)"),
    llvm::cl::CommaSeparated, llvm::cl::cat(cat));
llvm::cl::opt<unsigned> threadsArg("num-threads",
                                   llvm::cl::desc("Team size (default 2)"),
                                   llvm::cl::init(2), llvm::cl::cat(cat));
llvm::cl::opt<unsigned> repeatArg("repeat",
                                  llvm::cl::desc("Calls a row at most"),
                                  llvm::cl::init(200), llvm::cl::cat(cat));
llvm::cl::opt<double> budgetArg("budget",
                                llvm::cl::desc("Seconds a row at most"),
                                llvm::cl::init(1.5), llvm::cl::cat(cat));
llvm::cl::opt<unsigned> flushArg(
    "flush-mib",
    llvm::cl::desc("MiB written before each call (default 128: past the L3)"),
    llvm::cl::init(128), llvm::cl::cat(cat));
llvm::cl::opt<bool> noCapacityRows(
    "no-capacity-rows",
    llvm::cl::desc("Skip the live length 1,024 rows in caches of 2K and 32K"),
    llvm::cl::cat(cat));
llvm::cl::opt<std::string> jsonArg("json", llvm::cl::desc("Write rows here"),
                                   llvm::cl::cat(cat));

struct HeadShape {
  const char *name;
  int64_t qHeads, kvHeads, headDim;
};

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Timing {
  double medianS = 0, bestS = 0;
};

Timing summarise(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

/// memcpy of 256 MiB: bytes copied per second (median of 9).
double copyBytesPerSecond() {
  size_t n = size_t(256) << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    double t0 = seconds();
    std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), n);
    t.push_back(seconds() - t0);
  }
  return double(n) / summarise(t).medianS;
}

/// A cache of \p capacity positions (k then v), one query, one output.
struct Cache {
  cpu::AttentionGeometry g;
  std::vector<float> kv, q, out;
};

Cache makeCache(const HeadShape &h, int64_t capacity) {
  Cache c;
  c.g.qHeads = h.qHeads;
  c.g.kvHeads = h.kvHeads;
  c.g.headDim = h.headDim;
  c.g.kvLen = capacity;
  c.g.causal = true;
  c.g.scale = 0.125f;
  c.kv.resize(size_t(2 * h.kvHeads * capacity * h.headDim));
  for (size_t j = 0; j < c.kv.size(); ++j)
    c.kv[j] = float(j % 13) * 0.01f;
  c.q.assign(size_t(h.qHeads * h.headDim), 0.1f);
  c.out.assign(c.q.size(), 0.f);
  return c;
}

/// Calls at live length \p live, each after \p flush is written (so the
/// cache comes from memory, as a model's layers find theirs), untimed.
Timing timeCalls(Cache &c, int64_t live, std::vector<char> &flush) {
  size_t half = c.kv.size() / 2;
  std::vector<double> t;
  double start = seconds();
  for (unsigned i = 0; i < repeatArg; ++i) {
    std::memset(flush.data(), int(i), flush.size());
    double t0 = seconds();
    cpu::attention(c.g, c.q.data(), c.kv.data(), c.kv.data() + half, &live,
                   c.out.data(), nullptr);
    t.push_back(seconds() - t0);
    if (i >= 5 && seconds() - start > budgetArg)
      break;
  }
  return summarise(t);
}

struct Row {
  std::string shape;
  int64_t context, capacity;
  Timing time;
  double readGBps, copyGBps;
};

Row measure(const HeadShape &h, int64_t live, int64_t capacity, double copy,
            std::vector<char> &flush) {
  Cache c = makeCache(h, capacity);
  Row r{h.name, live, capacity, timeCalls(c, live, flush), 0, copy / 1e9};
  double bytes = 2.0 * h.kvHeads * live * h.headDim * sizeof(float);
  r.readGBps = bytes / r.time.medianS / 1e9;
  return r;
}

void printRow(const Row &r) {
  std::printf("| %s | %lld | %lld | %.1f | %.1f | %.1f | %.2f |\n",
              r.shape.c_str(), (long long)r.context, (long long)r.capacity,
              r.time.medianS * 1e6, r.time.bestS * 1e6, r.readGBps,
              r.readGBps / r.copyGBps);
  std::fflush(stdout);
}

void writeJson(const std::vector<Row> &rows, const std::string &path) {
  llvm::json::Array out;
  for (const Row &r : rows)
    out.push_back(
        llvm::json::Object{{"shape", r.shape},
                           {"context", r.context},
                           {"capacity", r.capacity},
                           {"median_us", r.time.medianS * 1e6},
                           {"best_us", r.time.bestS * 1e6},
                           {"read_gbps", r.readGBps},
                           {"copy_gbps", r.copyGBps},
                           {"read_over_copy", r.readGBps / r.copyGBps}});
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "error: " << path << ": " << ec.message() << "\n";
    std::exit(1);
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(cat);
  llvm::cl::ParseCommandLineOptions(argc, argv, "decode attention bench\n");
  omp_set_num_threads(int(threadsArg));
  std::vector<int64_t> contexts(contextArgs.begin(), contextArgs.end());
  if (contexts.empty())
    for (int64_t c = 128; c <= 32768; c *= 2)
      contexts.push_back(c);
  const HeadShape shapes[] = {{"gpt2-small", 12, 12, 64},
                              {"tinyllama", 32, 4, 64}};
  double copy = copyBytesPerSecond();
  std::vector<char> flush(size_t(flushArg) << 20);
  std::printf("%u threads; memcpy of 256 MiB: %.1f GB/s copied\n\n",
              unsigned(threadsArg), copy / 1e9);
  std::printf("| shape | live length | capacity | median us | best us | "
              "read GB/s | read / copy |\n|---|---|---|---|---|---|---|\n");
  std::vector<Row> rows;
  for (const HeadShape &h : shapes)
    for (int64_t c : contexts) {
      rows.push_back(measure(h, c, c, copy, flush));
      printRow(rows.back());
    }
  // A live length of 1,024: the capacity must not matter.
  for (const HeadShape &h : shapes)
    for (int64_t capacity : {2048, 32768}) {
      if (noCapacityRows)
        break;
      rows.push_back(measure(h, 1024, capacity, copy, flush));
      printRow(rows.back());
    }
  if (!jsonArg.empty())
    writeJson(rows, jsonArg);
  return 0;
}
