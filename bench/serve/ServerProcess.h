//===- ServerProcess.h - loom-serve as a child of the bench -----*- C++ -*-===//
//
// Part of Loom. Starts loom-serve on loopback with --port 0, reads the port
// from its "loom-serve: listening on HOST:PORT" line, and stops it with
// SIGTERM (a bounded wait, then SIGKILL). Its stdout and stderr go to files
// in a directory of the bench's. A SIGTERM or SIGINT to the bench (a
// `timeout` around it) stops every server it started before it dies.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_SERVERPROCESS_H
#define LOOM_BENCH_SERVE_SERVERPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <sys/types.h>

namespace loom::bench {

/// How a server ended.
struct ServerStop {
  /// Exited by itself after SIGTERM, with status 0.
  bool clean = false;
  /// The count of its "loom-serve: stopped after N inference requests"
  /// line, or -1.
  int64_t answered = -1;
  /// What went wrong (empty when clean).
  std::string problem;
};

class ServerProcess {
public:
  /// Runs `serveBin args... --host 127.0.0.1 --port 0`, its output in
  /// `dir`/`label`.out and .err, and waits up to `timeoutSeconds` for its
  /// listening line.
  static llvm::Expected<std::unique_ptr<ServerProcess>>
  start(llvm::StringRef serveBin, llvm::ArrayRef<std::string> args,
        llvm::StringRef dir, llvm::StringRef label, unsigned timeoutSeconds);
  ~ServerProcess();
  ServerProcess(const ServerProcess &) = delete;
  ServerProcess &operator=(const ServerProcess &) = delete;

  const std::string &host() const { return hostName; }
  int port() const { return portNumber; }
  /// The model lines it printed before listening.
  const std::string &banner() const { return startOutput; }

  /// SIGTERM, then up to `waitSeconds` for it to exit, then SIGKILL.
  ServerStop stop(unsigned waitSeconds);

private:
  ServerProcess() = default;
  pid_t pid = -1;
  bool running = false;
  std::string hostName, startOutput, outPath, errPath;
  int portNumber = 0;
};

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_SERVERPROCESS_H
