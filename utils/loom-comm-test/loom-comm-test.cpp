//===- loom-comm-test.cpp - Exercises a world's communicator --------------===//
//
// Part of Loom. Under any launcher (mpirun, loom-launch, torchrun-style
// variables; --threads=N for ranks of one process), every rank runs the
// same steps and checks their results:
//
//   step 0            open the world, barrier
//   steps 1..R        a ring of batched exchanges (two messages each way)
//   step R+1          an all-reduce
//   step R+2          a broadcast from the last rank
//   step R+3          a split into odd and even ranks, an all-reduce in each
//   step R+4          a barrier
//
// and can be made to fail: --die-at=RANK:STEP (exit 3), --segv-at=RANK:STEP,
// --hang-at=RANK:STEP (sleeps forever), --slow-at=RANK:MS (sleeps MS at
// step 1: within the deadline, the job succeeds), --short-at=RANK:STEP (its
// ring messages of that step are 4 bytes short: the receiver names both
// ranks and both sizes). A failure ends each rank
// through the FailureMonitor: one line naming the rank, the step and the
// cause (docs/Runtime.md, "Failure"). test/Runtime/Comm runs it.
//
// --transport=nccl-id: only NCCL's unique id, made on rank 0 and broadcast
// over the world; every rank checks that all hold the same id (no GPU
// needed). --transport=nccl: the world's communicator carries the id to an
// NCCL communicator over CUDA device LOCAL_RANK (rank r under --threads),
// which runs the ring, an all-reduce, a broadcast, a split and a barrier on
// device memory; --unmatched-recv then posts a receive that no rank sends
// to, which must end at the deadline (scripts/gpu-check.sh runs both).
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Comm/Failure.h"
#include "../../lib/Runtime/Comm/Launch.h"
#include "../../lib/Runtime/Comm/Nccl.h"
#include "../../lib/Runtime/Comm/Peer.h"
#include "../../lib/Runtime/Comm/World.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

/// A rank and a step (or milliseconds) from RANK:N; rank -1 when unset.
struct At {
  int rank = -1;
  int64_t value = 0;
};

struct Options {
  int threads = 0;
  int rounds = 4;
  int64_t timeoutMs = 5000;
  int64_t values = 1000;
  At dieAt, segvAt, hangAt, slowAt, shortAt;
  /// "" (the world's), "nccl-id" or "nccl".
  std::string transport;
  bool unmatchedRecv = false;
};

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr,
               "loom-comm-test: %s\nusage: loom-comm-test [--threads=N] "
               "[--rounds=R] [--timeout-ms=T] [--values=V] "
               "[--die-at=RANK:STEP] [--segv-at=RANK:STEP] "
               "[--hang-at=RANK:STEP] [--slow-at=RANK:MS] "
               "[--short-at=RANK:STEP] [--transport=nccl-id|nccl] "
               "[--unmatched-recv]\n",
               why.c_str());
  std::exit(2);
}

int64_t parseInt(const std::string &flag, const std::string &text,
                 int64_t lo) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || v < lo)
    usage(flag + ": '" + text + "' is not an integer >= " +
          std::to_string(lo));
  return v;
}

At parseAt(const std::string &flag, const std::string &text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos)
    usage(flag + ": '" + text + "' is not RANK:N");
  return {static_cast<int>(parseInt(flag, text.substr(0, colon), 0)),
          parseInt(flag, text.substr(colon + 1), 0)};
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--unmatched-recv") {
      o.unmatchedRecv = true;
      continue;
    }
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    if (eq == std::string::npos)
      usage("unknown argument '" + arg + "'");
    std::string value = arg.substr(eq + 1);
    if (flag == "--threads")
      o.threads = static_cast<int>(parseInt(flag, value, 1));
    else if (flag == "--rounds")
      o.rounds = static_cast<int>(parseInt(flag, value, 1));
    else if (flag == "--timeout-ms")
      o.timeoutMs = parseInt(flag, value, 1);
    else if (flag == "--values")
      o.values = parseInt(flag, value, 1);
    else if (flag == "--die-at")
      o.dieAt = parseAt(flag, value);
    else if (flag == "--segv-at")
      o.segvAt = parseAt(flag, value);
    else if (flag == "--hang-at")
      o.hangAt = parseAt(flag, value);
    else if (flag == "--slow-at")
      o.slowAt = parseAt(flag, value);
    else if (flag == "--short-at")
      o.shortAt = parseAt(flag, value);
    else if (flag == "--transport" && (value == "nccl-id" || value == "nccl"))
      o.transport = value;
    else if (flag == "--transport")
      usage("--transport: '" + value + "' is not nccl-id or nccl");
    else
      usage("unknown argument '" + arg + "'");
  }
  if (o.threads && (o.dieAt.rank >= 0 || o.segvAt.rank >= 0))
    usage("--die-at and --segv-at need ranks of their own processes, not "
          "--threads");
  if (o.unmatchedRecv && o.transport != "nccl")
    usage("--unmatched-recv needs --transport=nccl");
  return o;
}

/// One rank's run of the steps.
class RankRun {
public:
  RankRun(const Options &options, Communicator &comm, FailureMonitor &monitor)
      : options(options), comm(comm), monitor(monitor),
        onDevice(options.transport == "nccl") {}

  void run() {
    step(0);
    monitor.check(comm.barrier(deadline()));
    for (int round = 1; round <= options.rounds; ++round) {
      step(round);
      ring(round);
    }
    step(options.rounds + 1);
    allReduce(comm, "all-reduce");
    step(options.rounds + 2);
    broadcast();
    step(options.rounds + 3);
    std::unique_ptr<Communicator> half;
    monitor.check(comm.split(comm.rank() % 2, comm.rank(), deadline(), half));
    allReduce(*half, "split all-reduce");
    step(options.rounds + 4);
    monitor.check(comm.barrier(deadline()));
    if (options.unmatchedRecv)
      unmatchedRecv();
  }

  /// A receive from the previous rank that no rank sends: the deadline
  /// must end it (NCCL: by ncclCommAbort) with the rank's one line.
  void unmatchedRecv() {
    step(options.rounds + 5);
    int prev = (comm.rank() + comm.size() - 1) % comm.size();
    std::vector<int32_t> in(options.values);
    std::vector<Message> batch{{Message::Direction::Recv, prev,
                                stage(comm, in.data(), int64_t(in.size() * 4)),
                                int64_t(in.size() * 4)}};
    monitor.check(comm.exchange(batch, deadline()));
    monitor.fail("unmatched receive: a receive that no rank sent to "
                 "completed");
  }

private:
  Deadline deadline() const {
    return Clock::now() + std::chrono::milliseconds(options.timeoutMs);
  }

  /// Enters step \p s, failing there if asked to.
  void step(int64_t s) {
    monitor.setStep(s);
    int me = comm.rank();
    if (options.dieAt.rank == me && options.dieAt.value == s)
      std::_Exit(3);
    if (options.segvAt.rank == me && options.segvAt.value == s) {
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (options.hangAt.rank == me && options.hangAt.value == s)
      for (;;)
        std::this_thread::sleep_for(std::chrono::hours(1));
    if (options.slowAt.rank == me && s == 1)
      std::this_thread::sleep_for(
          std::chrono::milliseconds(options.slowAt.value));
  }

  /// \p bytes at \p host where \p c's operations take them: the host
  /// buffer itself, or (NCCL) a copy in device memory, read back by
  /// unstage().
  void *stage(Communicator &c, void *host, int64_t bytes) {
    if (!onDevice)
      return host;
    staged.emplace_back();
    Staged &s = staged.back();
    s.host = host;
    s.bytes = bytes;
    monitor.check(DeviceMemory::allocate(c, bytes, s.memory));
    monitor.check(s.memory->write(host, bytes));
    return s.memory->data();
  }
  /// Copies every staged buffer back to its host buffer.
  void unstage() {
    for (Staged &s : staged)
      monitor.check(s.memory->read(s.host, s.bytes));
    staged.clear();
  }

  /// What rank \p r sends in \p round as its \p nth message.
  static int32_t payload(int r, int round, int nth, int64_t i) {
    return static_cast<int32_t>(r * 1000003 + round * 1009 + nth * 101 + i);
  }

  void ring(int round) {
    int n = comm.size(), me = comm.rank();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int64_t v = options.values;
    std::vector<int32_t> out[2], in[2];
    std::vector<Message> batch;
    for (int nth = 0; nth < 2; ++nth) {
      out[nth].resize(v);
      in[nth].assign(v, -1);
      for (int64_t i = 0; i < v; ++i)
        out[nth][i] = payload(me, round, nth, i);
    }
    // Two messages each way: to the next rank and from the previous one,
    // matched in the order they were posted.
    bool isShort = options.shortAt.rank == me && options.shortAt.value == round;
    for (int nth = 0; nth < 2; ++nth) {
      int64_t bytes = v * int64_t(sizeof(int32_t));
      batch.push_back({Message::Direction::Recv, prev,
                       stage(comm, in[nth].data(), bytes), bytes});
      batch.push_back({Message::Direction::Send, next,
                       stage(comm, out[nth].data(), bytes),
                       (v - isShort) * int64_t(sizeof(int32_t))});
    }
    monitor.check(comm.exchange(batch, deadline()));
    unstage();
    for (int nth = 0; nth < 2; ++nth)
      for (int64_t i = 0; i < v; ++i)
        if (in[nth][i] != payload(prev, round, nth, i))
          monitor.fail("ring: message " + std::to_string(nth) + " from rank " +
                       std::to_string(prev) + " holds " +
                       std::to_string(in[nth][i]) + " at " +
                       std::to_string(i) + ", expected " +
                       std::to_string(payload(prev, round, nth, i)));
  }

  void allReduce(Communicator &c, const char *what) {
    std::vector<float> values(options.values);
    for (int64_t i = 0; i < options.values; ++i)
      values[i] = float(c.rank() + 1) + float(i % 7);
    void *data = stage(c, values.data(), options.values * int64_t(sizeof(float)));
    monitor.check(c.allReduceSum(static_cast<float *>(data), options.values,
                                 deadline()));
    unstage();
    int n = c.size();
    for (int64_t i = 0; i < options.values; ++i) {
      float expected = float(n * (n + 1) / 2) + float(n) * float(i % 7);
      if (values[i] != expected)
        monitor.fail(std::string(what) + ": " + std::to_string(values[i]) +
                     " at " + std::to_string(i) + ", expected " +
                     std::to_string(expected));
    }
  }

  void broadcast() {
    int root = comm.size() - 1;
    std::vector<int64_t> values(options.values);
    for (int64_t i = 0; i < options.values; ++i)
      values[i] = comm.rank() == root ? i * i : -1;
    int64_t bytes = options.values * int64_t(sizeof(int64_t));
    monitor.check(comm.broadcast(stage(comm, values.data(), bytes), bytes,
                                 root, deadline()));
    unstage();
    for (int64_t i = 0; i < options.values; ++i)
      if (values[i] != i * i)
        monitor.fail("broadcast: " + std::to_string(values[i]) + " at " +
                     std::to_string(i) + ", expected " +
                     std::to_string(i * i));
  }

  struct Staged {
    std::unique_ptr<DeviceMemory> memory;
    void *host = nullptr;
    int64_t bytes = 0;
  };

  const Options &options;
  Communicator &comm;
  FailureMonitor &monitor;
  /// Buffers live in device memory (NCCL).
  bool onDevice;
  std::vector<Staged> staged;
};

/// NCCL's unique id from rank 0 over \p host: every rank checks that it is
/// not blank and that all ranks hold the same. The sum over ranks of each
/// byte equals the rank count times this rank's byte on every rank only
/// when all ranks hold the same bytes.
void checkNcclId(const Options &options, Communicator &host,
                 FailureMonitor &monitor) {
  Deadline deadline =
      Clock::now() + std::chrono::milliseconds(options.timeoutMs);
  monitor.setStep(1);
  std::string id;
  monitor.check(shareNcclId(host, deadline, id));
  if (id.find_first_not_of('\0') == std::string::npos)
    monitor.fail("nccl-id: the unique id is blank");
  monitor.setStep(2);
  std::vector<float> sums(id.size());
  for (size_t i = 0; i < id.size(); ++i)
    sums[i] = float(uint8_t(id[i]));
  monitor.check(host.allReduceSum(sums.data(), int64_t(sums.size()), deadline));
  for (size_t i = 0; i < id.size(); ++i)
    if (sums[i] != float(host.size()) * float(uint8_t(id[i])))
      monitor.fail("nccl-id: ranks hold different unique ids (byte " +
                   std::to_string(i) + ")");
}

/// Rank \p host.rank()'s run: the steps over \p host, or over NCCL on CUDA
/// device \p ordinal, or the unique id alone. Returns what it ran over.
std::unique_ptr<Communicator> runRank(const Options &options,
                                      Communicator &host, int ordinal,
                                      FailureMonitor &monitor) {
  if (options.transport == "nccl-id") {
    checkNcclId(options, host, monitor);
    return nullptr;
  }
  if (options.transport.empty()) {
    RankRun(options, host, monitor).run();
    return nullptr;
  }
  std::unique_ptr<Communicator> nccl;
  monitor.check(openNcclWorld(
      host, ordinal,
      Clock::now() + std::chrono::milliseconds(options.timeoutMs), nccl));
  monitor.setCommunicator(nccl.get());
  RankRun(options, *nccl, monitor).run();
  return nccl;
}

void report(const Communicator &comm, const Options &options) {
  if (comm.rank() != 0)
    return;
  if (options.transport == "nccl-id")
    std::printf("loom-comm-test: %d ranks over %s: NCCL's unique id from "
                "rank 0 the same on every rank: ok\n",
                comm.size(), comm.transport());
  else
    std::printf("loom-comm-test: %d ranks over %s: %d ring rounds, all-reduce, "
                "broadcast, split: ok\n",
                comm.size(), comm.transport(), options.rounds);
}

int runThreads(const Options &options) {
  std::vector<std::unique_ptr<Communicator>> world;
  createThreadWorld(options.threads, world);
  std::vector<std::thread> threads;
  for (int r = 0; r < options.threads; ++r)
    threads.emplace_back([&, r] {
      FailureMonitor monitor(r, {/*handleSignals=*/r == 0,
                                 /*watchLauncher=*/false});
      monitor.setCommunicator(world[r].get());
      std::unique_ptr<Communicator> nccl =
          runRank(options, *world[r], r, monitor);
      if (nccl && r == 0)
        report(*nccl, options);
    });
  for (std::thread &t : threads)
    t.join();
  if (options.transport != "nccl")
    report(*world[0], options);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  if (options.threads)
    return runThreads(options);
  LaunchInfo info;
  if (Error e = readLaunchInfo(processEnvironment(), info)) {
    std::fprintf(stderr, "loom-comm-test: %s\n", e.message.c_str());
    return 2;
  }
  FailureMonitor monitor(info.rank, {/*handleSignals=*/true,
                                     /*watchLauncher=*/info.size > 1});
  std::unique_ptr<Communicator> world;
  monitor.check(openWorld(
      info, Clock::now() + std::chrono::milliseconds(options.timeoutMs),
      world));
  monitor.setCommunicator(world.get());
  std::unique_ptr<Communicator> nccl =
      runRank(options, *world, info.localRank, monitor);
  report(nccl ? *nccl : *world, options);
  std::fflush(stdout);
  return 0;
}
