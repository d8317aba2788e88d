//===- Failure.cpp - How a rank ends when its world fails -----------------===//
//
// Part of Loom. The signal handler may only call async-signal-safe
// functions: it formats the line into a stack buffer and write(2)s it.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"

#include <csignal>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <string>
#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

/// The process's one line: the first failure writes it; another one (a
/// second rank of a threads world, a signal) waits until it is out, since
/// its exit would cut it off.
enum Line { None, Writing, Written };
std::atomic<int> line{None};
/// What the signal handler reports (the monitor that owns the signals).
std::atomic<int> signalRank{-1};
std::atomic<const std::atomic<int64_t> *> signalStep{nullptr};
const int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

/// Appends \p text (or \p value in decimal) to \p buf, within \p cap.
void append(char *buf, size_t &len, size_t cap, const char *text) {
  for (; *text && len + 1 < cap; ++text)
    buf[len++] = *text;
}
void appendInt(char *buf, size_t &len, size_t cap, int64_t value) {
  char digits[24];
  int n = 0;
  bool negative = value < 0;
  uint64_t v = negative ? uint64_t(-(value + 1)) + 1 : uint64_t(value);
  do {
    digits[n++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  if (negative)
    append(buf, len, cap, "-");
  while (n > 0 && len + 1 < cap)
    buf[len++] = digits[--n];
}

/// "loom: rank R: step S: " + cause + "\n", written at once.
void writeLine(int rank, int64_t step, const char *cause) {
  char buf[1024];
  size_t len = 0;
  append(buf, len, sizeof(buf), "loom: rank ");
  appendInt(buf, len, sizeof(buf), rank);
  append(buf, len, sizeof(buf), ": step ");
  appendInt(buf, len, sizeof(buf), step);
  append(buf, len, sizeof(buf), ": ");
  append(buf, len, sizeof(buf), cause);
  buf[len++] = '\n';
  (void)!::write(STDERR_FILENO, buf, len);
}

/// Whether this caller is to write the line; if not, returns once it is
/// written (or after a second).
bool claimLine() {
  int none = None;
  if (line.compare_exchange_strong(none, Writing))
    return true;
  for (int i = 0; i < 1000 && line.load() == Writing; ++i) {
    timespec pause{0, 1000000};
    ::nanosleep(&pause, nullptr);
  }
  return false;
}

void onSignal(int sig) {
  const std::atomic<int64_t> *step = signalStep.load();
  if (step && claimLine()) {
    const char *cause = sig == SIGTERM ? "ended by SIGTERM (the launcher is "
                                         "tearing the job down)"
                        : sig == SIGINT ? "ended by SIGINT"
                                        : "ended by SIGHUP";
    writeLine(signalRank.load(), step->load(), cause);
    line = Written;
  }
  ::_exit(128 + sig);
}

} // namespace

FailureMonitor::FailureMonitor(int rank, Options options) : rank(rank) {
  if (options.handleSignals && signalRank.exchange(rank) < 0) {
    ownsSignals = true;
    signalStep = &step;
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    for (int sig : kSignals)
      ::sigaction(sig, &action, nullptr);
  }
  if (options.watchLauncher) {
    int parent = static_cast<int>(::getppid());
    watcher = std::thread([this, parent] { watch(parent); });
  }
}

FailureMonitor::~FailureMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  stop.notify_all();
  if (watcher.joinable())
    watcher.join();
  if (ownsSignals) {
    for (int sig : kSignals)
      ::signal(sig, SIG_DFL);
    signalStep = nullptr;
    signalRank = -1;
  }
}

void FailureMonitor::setStep(int64_t s) { step = s; }

void FailureMonitor::watch(int parent) {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stop.wait_for(lock, kLauncherPoll, [this] { return stopping; }))
    if (static_cast<int>(::getppid()) != parent) {
      lock.unlock();
      fail("the launcher (process " + std::to_string(parent) + ") is gone");
    }
}

void FailureMonitor::fail(const std::string &cause) {
  // The launcher's SIGTERM may come while this thread holds the line: its
  // handler, run on this thread, would wait for a line it interrupted and
  // exit without it. Blocked here, a signal waits for this thread's exit
  // or is taken by another thread, whose handler waits for the line.
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int sig : kSignals)
    sigaddset(&blocked, sig);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  if (claimLine()) {
    writeLine(rank, step.load(), cause.c_str());
    line = Written;
  }
  if (comm)
    comm->abort();
  ::_exit(kRankFailedExit);
}
