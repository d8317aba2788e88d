//===- loom-launch.cpp - Starts the ranks of a world, ends them together --===//
//
// Part of Loom. `loom-launch -n N [--timeout S] [--grace S] [--keep-going] --
// CMD ARGS...`
// hosts the world's store, starts N processes of CMD with loom-launch's
// variables (Launch.h: LOOM_RANK, LOOM_WORLD_SIZE, LOOM_LOCAL_RANK,
// LOOM_STORE), and, as mpirun does, ends the job on the first failure: a
// rank that exits non-zero or is killed makes it send SIGTERM to the
// others, SIGKILL after the grace period, and exit non-zero with one line
// naming the rank and the cause (docs/tools/loom-launch.md). The ranks'
// output is theirs, unprefixed: every line a rank prints about a failure
// names the rank already. With --keep-going a failure is reported and the
// other ranks go on; the job ends when all have, with the first failure's
// status.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Comm/Failure.h"
#include "../../lib/Runtime/Comm/Launch.h"
#include "../../lib/Runtime/Comm/Store.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

struct Options {
  int ranks = 0;
  double timeoutSeconds = 0; // 0: none
  double graceSeconds = 2;
  /// A rank's failure is reported and the others go on (ranks that do not
  /// depend on each other: a served pipeline's, whose standbys take over).
  bool keepGoing = false;
  std::vector<char *> command;
};

/// Other launchers' variables: a rank of loom-launch is not one of theirs.
const char *const kForeignVariables[] = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_LOCALID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
    "MASTER_PORT"};

volatile sig_atomic_t interrupted = 0;
void onSignal(int sig) { interrupted = sig; }

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr,
               "loom-launch: %s\nusage: loom-launch -n N [--timeout SECONDS] "
               "[--grace SECONDS] [--keep-going] -- COMMAND [ARGS...]\n",
               why.c_str());
  std::exit(2);
}

double parseNumber(const std::string &flag, const char *text, double lo,
                   double hi) {
  if (!text)
    usage(flag + " needs a value");
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (!*text || *end || !(v >= lo && v <= hi))
    usage(flag + " needs a number in [" + std::to_string(int(lo)) + ", " +
          std::to_string(int(hi)) + "], got '" + text + "'");
  return v;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  int i = 1;
  for (; i < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--")
      break;
    if (arg == "--keep-going") {
      o.keepGoing = true;
      --i; // takes no value
      continue;
    }
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "-n") {
      double n = parseNumber("-n", value, 1, 4096);
      if (n != int(n))
        usage(std::string("-n needs an integer, got '") + value + "'");
      o.ranks = int(n);
    } else if (arg == "--timeout") {
      o.timeoutSeconds = parseNumber("--timeout", value, 0, 1e6);
    } else if (arg == "--grace") {
      o.graceSeconds = parseNumber("--grace", value, 0, 3600);
    } else {
      usage("unknown option '" + arg + "'");
    }
  }
  if (!o.ranks)
    usage("-n is required");
  for (++i; i < argc; ++i)
    o.command.push_back(argv[i]);
  if (o.command.empty())
    usage("no command after '--'");
  o.command.push_back(nullptr);
  return o;
}

/// "exited with status 3", "killed by signal 11 (Segmentation fault)".
std::string describeStatus(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) +
         ")";
}

/// The exit status that reports \p status.
int exitCodeFor(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class Job {
public:
  explicit Job(const Options &options) : options(options) {}

  /// Starts every rank; false (after a message) when the command cannot.
  bool start(int storePort);
  /// Waits for the ranks; the launcher's exit status.
  int wait();
  /// --keep-going's wait: every rank to its end.
  int waitForAll();
  /// When a signal or the timeout ends the job (every rank ended): the
  /// launcher's exit status; else 0.
  int endedFromOutside(std::chrono::steady_clock::time_point start);

private:
  /// Signals every rank still running, then reaps them all within the grace
  /// period, SIGKILL for the ones left.
  void endAll();
  int rankOf(pid_t pid) const;
  /// Reaps every rank that has ended since the last look, calling
  /// onEnd(rank, wait status) for each; how many there were.
  template <class F> int reapEnded(F onEnd);

  const Options &options;
  std::vector<pid_t> pids;
  std::vector<bool> running;
};

bool Job::start(int storePort) {
  std::string store = "127.0.0.1:" + std::to_string(storePort);
  for (int r = 0; r < options.ranks; ++r) {
    // A close-on-exec pipe reports a failed exec: errno, or nothing.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
      return std::perror("loom-launch: pipe"), false;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(report[0]);
      for (const char *name : kForeignVariables)
        ::unsetenv(name);
      ::setenv(kLaunchRankVar, std::to_string(r).c_str(), 1);
      ::setenv(kLaunchSizeVar, std::to_string(options.ranks).c_str(), 1);
      ::setenv(kLaunchLocalRankVar, std::to_string(r).c_str(), 1);
      ::setenv(kLaunchStoreVar, store.c_str(), 1);
      ::execvp(options.command[0], options.command.data());
      int err = errno;
      (void)!::write(report[1], &err, sizeof(err));
      ::_exit(127);
    }
    ::close(report[1]);
    if (pid < 0) {
      ::close(report[0]);
      std::perror("loom-launch: fork");
      endAll();
      return false;
    }
    pids.push_back(pid);
    running.push_back(true);
    int err = 0;
    ssize_t n = ::read(report[0], &err, sizeof(err));
    ::close(report[0]);
    if (n == sizeof(err)) {
      std::fprintf(stderr, "loom-launch: cannot run '%s': %s\n",
                   options.command[0], std::strerror(err));
      endAll();
      return false;
    }
  }
  return true;
}

int Job::rankOf(pid_t pid) const {
  for (size_t r = 0; r < pids.size(); ++r)
    if (pids[r] == pid)
      return static_cast<int>(r);
  return -1;
}

template <class F> int Job::reapEnded(F onEnd) {
  int ended = 0, status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    int r = rankOf(pid);
    if (r < 0)
      continue;
    running[r] = false;
    ++ended;
    onEnd(r, status);
  }
  return ended;
}

void Job::endAll() {
  for (size_t r = 0; r < pids.size(); ++r)
    if (running[r])
      ::kill(pids[r], SIGTERM);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(options.graceSeconds);
  bool killed = false;
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0 && rankOf(pid) >= 0) {
      running[rankOf(pid)] = false;
      continue;
    }
    bool any = false;
    for (bool r : running)
      any = any || r;
    if (!any)
      return;
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      for (size_t r = 0; r < pids.size(); ++r)
        if (running[r])
          ::kill(pids[r], SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// Whether \p status is a rank's own failure rather than the status a rank
/// exits with when its world failed (FailureMonitor's kRankFailedExit).
bool failedOnItsOwn(int status) {
  return !WIFEXITED(status) || WEXITSTATUS(status) != kRankFailedExit;
}

/// How long loom-launch waits, after a rank failed because its world did,
/// for the rank that failed on its own: that one's exit may be noticed
/// after its peers' (its sockets close before it becomes a zombie).
const auto kSettle = std::chrono::milliseconds(200);

int Job::endedFromOutside(std::chrono::steady_clock::time_point start) {
  if (interrupted) {
    std::fprintf(stderr, "loom-launch: %s; ending the job\n",
                 strsignal(interrupted));
    endAll();
    return 128 + interrupted;
  }
  if (options.timeoutSeconds > 0 &&
      std::chrono::steady_clock::now() - start >
          std::chrono::duration<double>(options.timeoutSeconds)) {
    std::fprintf(stderr,
                 "loom-launch: the job ran past its timeout of %g s; "
                 "ending it\n",
                 options.timeoutSeconds);
    endAll();
    return 124;
  }
  return 0;
}

int Job::waitForAll() {
  auto start = std::chrono::steady_clock::now();
  int left = options.ranks, first = 0;
  while (left > 0) {
    left -= reapEnded([&](int r, int status) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
      std::fprintf(stderr, "loom-launch: rank %d %s; the others go on "
                   "(--keep-going)\n", r, describeStatus(status).c_str());
      if (!first)
        first = exitCodeFor(status);
    });
    if (int code = endedFromOutside(start))
      return code;
    if (left > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return first;
}

int Job::wait() {
  if (options.keepGoing)
    return waitForAll();
  auto start = std::chrono::steady_clock::now();
  auto settled = start;
  int left = options.ranks, culprit = -1, culpritStatus = 0;
  while (left > 0 || culprit >= 0) {
    // Every rank that has ended since the last look: when one failure makes
    // others fail, the one that failed on its own (a signal, a status other
    // than 1) is the cause named.
    left -= reapEnded([&](int r, int status) {
      bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
      if (failed && culprit < 0)
        settled = std::chrono::steady_clock::now() + kSettle;
      if (failed && (culprit < 0 || (failedOnItsOwn(status) &&
                                     !failedOnItsOwn(culpritStatus)))) {
        culprit = r;
        culpritStatus = status;
      }
    });
    if (culprit >= 0 && (failedOnItsOwn(culpritStatus) || left == 0 ||
                         std::chrono::steady_clock::now() >= settled)) {
      std::fprintf(stderr, "loom-launch: rank %d %s; ending the job\n",
                   culprit, describeStatus(culpritStatus).c_str());
      endAll();
      return exitCodeFor(culpritStatus);
    }
    if (int code = endedFromOutside(start))
      return code;
    if (left > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = onSignal;
  for (int sig : {SIGTERM, SIGINT, SIGHUP})
    ::sigaction(sig, &action, nullptr);
  StoreServer store;
  if (Error e = store.start("127.0.0.1", 0)) {
    std::fprintf(stderr, "loom-launch: %s\n", e.message.c_str());
    return 1;
  }
  std::fflush(stdout);
  Job job(options);
  if (!job.start(store.port()))
    return 127;
  return job.wait();
}
