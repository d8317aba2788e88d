//===- Store.h - A key-value store for a world's rendezvous -----*- C++ -*-===//
//
// Part of Loom. One process of a job (loom-launch, or rank 0 under
// torchrun-style variables) hosts a StoreServer; every rank reaches it with
// a StoreClient to publish what others need before the world's channels
// exist (each rank's TCP address, NCCL's unique id) and to wait for what
// they published. Every wait has a deadline.
//
// The protocol, over TCP: a request is one byte ('S' set, 'G' get), the
// key (u32 length, bytes) and, for a set, the value (u64 length, bytes); a
// set is answered with 'K', a get with the value (u64 length, bytes) once
// some client has set the key. Lengths are little-endian.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_STORE_H
#define LOOM_LIB_RUNTIME_COMM_STORE_H

#include "Socket.h"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace loom::rt::comm {

/// Serves the store on a port until destroyed.
class StoreServer {
public:
  ~StoreServer();
  /// Listens on \p host:\p port ("" every address; port 0: any free one).
  Error start(const std::string &host, int port);
  int port() const { return boundPort; }

private:
  void acceptLoop();
  void serve(std::shared_ptr<Socket> client);
  /// A request from \p client; false once it is gone.
  bool handle(const Socket &client);

  Socket listener;
  int boundPort = 0;
  std::thread acceptor;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::string> values;
  std::vector<std::shared_ptr<Socket>> clients;
  std::vector<std::thread> servers;
  bool stopping = false;
};

/// One connection to a store.
class StoreClient {
public:
  /// Connects to \p host:\p port, retrying until \p deadline (the host may
  /// not listen yet).
  Error connect(const std::string &host, int port, Deadline deadline);
  Error set(const std::string &key, const std::string &value,
            Deadline deadline);
  /// \p key's value, waiting until some client has set it.
  Error get(const std::string &key, Deadline deadline, std::string &value);
  /// The local address this client reaches the store from.
  std::string localAddress() const { return comm::localAddress(socket); }

private:
  Error failed(const std::string &op, const std::string &key, Error cause);

  Socket socket;
  std::string where;
};

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_STORE_H
