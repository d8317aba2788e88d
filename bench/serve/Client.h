//===- Client.h - One keep-alive HTTP connection to loom-serve --*- C++ -*-===//
//
// Part of Loom. A client of loom-bench-serve: cpp-httplib's client on one
// keep-alive connection (reopened when the server closes it, and counted),
// with TCP_NODELAY and a deadline on every exchange.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_CLIENT_H
#define LOOM_BENCH_SERVE_CLIENT_H

#include "KServe.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace httplib {
class Client;
} // namespace httplib

namespace loom::bench {

/// What one exchange gave: a status and body, or why there is none.
struct Answer {
  int status = 0;
  std::string body;
  std::optional<std::string> headerLength;
  /// Why no answer came (connection refused, a timeout, ...); empty when
  /// one did.
  std::string failure;
};

class Connection {
public:
  Connection(const std::string &host, int port, unsigned timeoutSeconds);
  ~Connection();
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;

  /// GET `path`: the body of a 200, else an error.
  llvm::Expected<std::string> get(const std::string &path);
  /// POST an inference request to `path`.
  Answer post(const std::string &path, const EncodedRequest &request);
  /// TCP connections opened so far (1 while the server keeps it alive).
  int64_t opened() const { return *connections; }

private:
  std::unique_ptr<httplib::Client> client;
  std::shared_ptr<std::atomic<int64_t>> connections;
};

/// The decoded outputs of a 200 answer, or what is wrong with it.
llvm::Expected<Tensors> decodeAnswer(const Answer &answer);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_CLIENT_H
