//===- RankJob.cpp - A served pipeline's ranks as a child -----------------===//
//
// Part of Loom. See RankJob.h.
//
//===----------------------------------------------------------------------===//

#include "RankJob.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <sys/wait.h>
#include <vector>

using namespace llvm;

namespace loom::bench {

Expected<std::unique_ptr<RankJob>>
RankJob::start(const std::string &launchBin, int64_t ranks,
               const std::string &serveBin, const std::string &address,
               const std::string &artifact, unsigned threads,
               const std::string &outPath) {
  std::vector<std::string> args = {launchBin,      "-n",
                                   std::to_string(ranks), "--keep-going",
                                   "--",           serveBin,
                                   "--stage-worker", address,
                                   artifact,       "--threads",
                                   std::to_string(threads)};
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                   0644);
  if (out < 0)
    return createStringError("cannot write " + outPath);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out);
  if (pid < 0)
    return createStringError("cannot fork for " + launchBin);
  std::unique_ptr<RankJob> job(new RankJob());
  job->pid = pid;
  job->outPath = outPath;
  return std::move(job);
}

RankJob::~RankJob() { stop(); }

Expected<pid_t> RankJob::pidOf(int64_t rank, unsigned timeoutSeconds) const {
  std::string prefix = "loom-serve: rank " + std::to_string(rank) + " of ";
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  do {
    auto text = MemoryBuffer::getFile(outPath);
    if (text) {
      SmallVector<StringRef> lines;
      (*text)->getBuffer().split(lines, '\n');
      for (StringRef line : lines) {
        if (!line.consume_front(prefix))
          continue;
        size_t at = line.find(", pid ");
        int p = 0;
        if (at != StringRef::npos &&
            !line.substr(at + 6).take_while(isDigit).getAsInteger(10, p))
          return pid_t(p);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return createStringError("rank " + std::to_string(rank) +
                           " printed no line with its pid in " + outPath);
}

void RankJob::stop() {
  if (pid < 0)
    return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 1000; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pid = -1;
}

} // namespace loom::bench
