//===- Socket.h - TCP sockets with deadlines ---------------------*- C++ -*-===//
//
// Part of Loom. The few socket operations the store and the TCP transport
// need, each bounded by a deadline: non-blocking descriptors driven by
// poll(2), writes that never raise SIGPIPE.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_SOCKET_H
#define LOOM_LIB_RUNTIME_COMM_SOCKET_H

#include "Communicator.h"

#include <string>

namespace loom::rt::comm {

/// An owned file descriptor.
class Socket {
public:
  Socket() = default;
  explicit Socket(int fd) : fd(fd) {}
  Socket(Socket &&o) noexcept : fd(o.fd) { o.fd = -1; }
  Socket &operator=(Socket &&o) noexcept;
  Socket(const Socket &) = delete;
  Socket &operator=(const Socket &) = delete;
  ~Socket() { reset(); }

  int get() const { return fd; }
  explicit operator bool() const { return fd >= 0; }
  void reset();
  /// Ends both directions now (a peer sees end of file; a thread blocked
  /// in accept or poll on it wakes), keeping the descriptor.
  void shutdownBoth();

private:
  int fd = -1;
};

/// Milliseconds until \p deadline, at least 0, for poll(2).
int millisecondsUntil(Deadline deadline);

/// A listening socket on \p host ("" or "0.0.0.0": every address) and
/// \p port (0: one the system picks); \p boundPort is the port it got.
Error listenOn(const std::string &host, int port, Socket &out, int &boundPort);
/// Accepts one connection before \p deadline.
Error acceptBefore(const Socket &listener, Deadline deadline, Socket &out);
/// Connects to \p host:\p port, retrying a refused connection (the other
/// side not listening yet) until \p deadline.
Error connectBefore(const std::string &host, int port, Deadline deadline,
                    Socket &out);
/// Writes or reads exactly \p bytes before \p deadline; end of file is an
/// error. \p what names the transfer in messages ("rank 2").
Error writeAll(const Socket &s, const void *data, size_t bytes,
               Deadline deadline, const std::string &what);
Error readAll(const Socket &s, void *data, size_t bytes, Deadline deadline,
              const std::string &what);
/// The local address (IPv4, dotted) \p s is connected from.
std::string localAddress(const Socket &s);

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_SOCKET_H
