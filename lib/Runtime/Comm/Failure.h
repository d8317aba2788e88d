//===- Failure.h - How a rank ends when its world fails ---------*- C++ -*-===//
//
// Part of Loom. A rank's first failure (a deadline passed, a peer gone, a
// result that is wrong) ends the process at once with one line on stderr,
//
//   loom: rank R: step S: <cause>
//
// after abandoning its communicator's pending operations, so that the
// launcher (mpirun, loom-launch) tears the job down. The same line is
// printed when the launcher ends the job (SIGTERM, SIGINT, SIGHUP) and when
// the launcher itself is gone: the rank polls its parent with getppid(),
// since PR_SET_PDEATHSIG does not fire in every VM (docs/Runtime.md,
// "Failure").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_FAILURE_H
#define LOOM_LIB_RUNTIME_COMM_FAILURE_H

#include "Communicator.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace loom::rt::comm {

/// The exit status of a rank that failed (a launcher's signal: 128 + it).
inline constexpr int kRankFailedExit = 1;

/// How often a rank checks that its launcher is still there.
inline constexpr std::chrono::milliseconds kLauncherPoll{100};

class FailureMonitor {
public:
  struct Options {
    /// End the process with the line on SIGTERM, SIGINT and SIGHUP. One
    /// monitor of a process does (signals are process-wide).
    bool handleSignals = true;
    /// End it when the parent process (the launcher) is gone.
    bool watchLauncher = true;
  };
  FailureMonitor(int rank, Options options);
  ~FailureMonitor();
  FailureMonitor(const FailureMonitor &) = delete;
  FailureMonitor &operator=(const FailureMonitor &) = delete;

  /// The step the rank is at, for the line.
  void setStep(int64_t step);
  /// The communicator to abort on failure (null: none).
  void setCommunicator(Communicator *comm) { this->comm = comm; }

  /// Prints the line, aborts the communicator and exits.
  [[noreturn]] void fail(const std::string &cause);
  /// fail(e.message) if \p e is an error.
  void check(const Error &e) {
    if (e)
      fail(e.message);
  }

private:
  void watch(int parent);

  int rank;
  std::atomic<int64_t> step{0};
  Communicator *comm = nullptr;
  bool ownsSignals = false;
  std::thread watcher;
  std::mutex mutex;
  std::condition_variable stop;
  bool stopping = false;
};

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_FAILURE_H
