//===- ServerProcess.cpp - loom-serve as a child of the bench -------------===//
//
// Part of Loom. See ServerProcess.h.
//
//===----------------------------------------------------------------------===//

#include "ServerProcess.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace loom::bench {
namespace {

/// The servers alive, for the signal handler (a few; slots of 0 are free).
std::array<std::atomic<pid_t>, 8> livePids;

extern "C" void onBenchSignal(int sig) {
  for (auto &p : livePids)
    if (pid_t pid = p.load())
      kill(pid, SIGTERM);
  signal(sig, SIG_DFL);
  raise(sig);
}

void installHandlerOnce() {
  static bool installed = [] {
    struct sigaction action = {};
    action.sa_handler = onBenchSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    return true;
  }();
  (void)installed;
}

void track(pid_t pid, bool alive) {
  for (auto &p : livePids) {
    pid_t expected = alive ? 0 : pid;
    if (p.compare_exchange_strong(expected, alive ? pid : 0))
      return;
  }
}

std::string readFile(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

std::string lastLine(StringRef text) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (StringRef line : llvm::reverse(lines))
    if (!line.trim().empty())
      return line.trim().str();
  return "";
}

/// Whether the child has exited (reaped now, its status in *status).
bool exited(pid_t pid, int *status) {
  return waitpid(pid, status, WNOHANG) == pid;
}

std::string describe(int status) {
  if (WIFEXITED(status))
    return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

} // namespace

Expected<std::unique_ptr<ServerProcess>>
ServerProcess::start(StringRef serveBin, ArrayRef<std::string> args,
                     StringRef dir, StringRef label, unsigned timeoutSeconds) {
  installHandlerOnce();
  std::unique_ptr<ServerProcess> s(new ServerProcess());
  SmallString<256> out(dir), err(dir);
  sys::path::append(out, label + ".out");
  sys::path::append(err, label + ".err");
  s->outPath = std::string(out);
  s->errPath = std::string(err);
  // A file left by an earlier run in the same directory would show its
  // listening line (and port) before the new server writes its own.
  sys::fs::remove(s->outPath);
  sys::fs::remove(s->errPath);
  std::vector<std::string> argStrings(args.begin(), args.end());
  for (const char *a : {"--host", "127.0.0.1", "--port", "0"})
    argStrings.push_back(a);
  std::vector<StringRef> argv = {serveBin};
  for (const std::string &a : argStrings)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(s->outPath),
                                          StringRef(s->errPath)};
  std::string message;
  bool failed = false;
  sys::ProcessInfo info = sys::ExecuteNoWait(serveBin, argv, std::nullopt,
                                             redirects, 0, &message, &failed);
  if (failed || info.Pid <= 0)
    return createStringError("cannot run " + serveBin + ": " + message);
  s->pid = info.Pid;
  s->running = true;
  track(s->pid, true);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = readFile(s->outPath);
    size_t at = text.find("loom-serve: listening on ");
    size_t end = at == std::string::npos ? at : text.find('\n', at);
    if (end != std::string::npos) {
      StringRef address = StringRef(text).slice(at, end).split(" on ").second;
      auto [host, port] = address.rsplit(':');
      if (port.getAsInteger(10, s->portNumber))
        return createStringError("loom-serve printed '" + address +
                                 "', not HOST:PORT");
      s->hostName = host.str();
      s->startOutput = text.substr(0, at);
      return std::move(s);
    }
    int status = 0;
    if (exited(s->pid, &status)) {
      s->running = false;
      track(s->pid, false);
      return createStringError("loom-serve ended before listening (" +
                               describe(status) +
                               "): " + lastLine(readFile(s->errPath)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return createStringError("loom-serve printed no listening line in " +
                           Twine(timeoutSeconds) + " s");
}

ServerStop ServerProcess::stop(unsigned waitSeconds) {
  ServerStop result;
  if (!running) {
    result.problem = "not running";
    return result;
  }
  kill(pid, SIGTERM);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(waitSeconds);
  int status = 0;
  bool ended = false;
  while (!(ended = exited(pid, &status)) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    result.problem = "did not stop within " + std::to_string(waitSeconds) +
                     " s of SIGTERM: killed";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.problem =
        "stopped with " + describe(status) + ": " + lastLine(readFile(errPath));
  }
  running = false;
  track(pid, false);
  std::string tail = lastLine(readFile(outPath));
  StringRef line(tail);
  if (line.consume_front("loom-serve: stopped after ")) {
    int64_t n;
    if (!line.split(' ').first.getAsInteger(10, n))
      result.answered = n;
  }
  result.clean = result.problem.empty();
  return result;
}

ServerProcess::~ServerProcess() {
  if (running)
    stop(5);
}

} // namespace loom::bench
