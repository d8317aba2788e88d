//===- Socket.cpp - TCP sockets with deadlines ----------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::comm;

Socket &Socket::operator=(Socket &&o) noexcept {
  if (this != &o) {
    reset();
    fd = o.fd;
    o.fd = -1;
  }
  return *this;
}

void Socket::reset() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

void Socket::shutdownBoth() {
  if (fd >= 0)
    ::shutdown(fd, SHUT_RDWR);
}

int loom::rt::comm::millisecondsUntil(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  if (left <= 0)
    return 0;
  return left > (1 << 30) ? (1 << 30) : static_cast<int>(left) + 1;
}

static Error systemError(const std::string &what) {
  return makeError(LOOM_ERROR_COMMUNICATION, what + ": " + std::strerror(errno));
}

/// Non-blocking, close-on-exec, no Nagle delay.
static void configure(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// \p host (a name or an IPv4 address; "" any) as an IPv4 socket address.
static Error resolve(const std::string &host, int port, sockaddr_in &out) {
  std::memset(&out, 0, sizeof(out));
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<uint16_t>(port));
  if (host.empty()) {
    out.sin_addr.s_addr = htonl(INADDR_ANY);
    return Error::ok();
  }
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found)
    return makeError(LOOM_ERROR_COMMUNICATION, "cannot resolve host '" + host +
                                             "': " + ::gai_strerror(rc));
  out.sin_addr = reinterpret_cast<sockaddr_in *>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return Error::ok();
}

Error loom::rt::comm::listenOn(const std::string &host, int port, Socket &out,
                               int &boundPort) {
  sockaddr_in addr;
  if (Error e = resolve(host == "0.0.0.0" ? "" : host, port, addr))
    return e;
  Socket s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s)
    return systemError("socket");
  int one = 1;
  ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  std::string where = (host.empty() ? "*" : host) + ":" + std::to_string(port);
  if (::bind(s.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0)
    return systemError("cannot listen on " + where);
  if (::listen(s.get(), 128) != 0)
    return systemError("cannot listen on " + where);
  socklen_t len = sizeof(addr);
  ::getsockname(s.get(), reinterpret_cast<sockaddr *>(&addr), &len);
  boundPort = ntohs(addr.sin_port);
  configure(s.get());
  out = std::move(s);
  return Error::ok();
}

/// Waits until \p fd is ready for \p events or \p deadline passes.
static Error waitFor(int fd, short events, Deadline deadline,
                     const std::string &what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, millisecondsUntil(deadline));
    if (rc > 0)
      return Error::ok();
    if (rc < 0 && errno != EINTR)
      return systemError(what);
    if (rc == 0 && Clock::now() >= deadline)
      return makeError(LOOM_ERROR_COMMUNICATION, "deadline passed " + what);
  }
}

Error loom::rt::comm::acceptBefore(const Socket &listener, Deadline deadline,
                                   Socket &out) {
  for (;;) {
    if (Error e = waitFor(listener.get(), POLLIN, deadline,
                          "waiting for a connection"))
      return e;
    int fd = ::accept(listener.get(), nullptr, nullptr);
    if (fd >= 0) {
      configure(fd);
      out = Socket(fd);
      return Error::ok();
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
        errno != ECONNABORTED)
      return systemError("accept");
  }
}

Error loom::rt::comm::connectBefore(const std::string &host, int port,
                                    Deadline deadline, Socket &out) {
  sockaddr_in addr;
  if (Error e = resolve(host, port, addr))
    return e;
  std::string where = host + ":" + std::to_string(port);
  for (auto pause = std::chrono::milliseconds(5);;
       pause = std::min(pause * 2, std::chrono::milliseconds(200))) {
    Socket s(::socket(AF_INET, SOCK_STREAM, 0));
    if (!s)
      return systemError("socket");
    configure(s.get());
    int rc = ::connect(s.get(), reinterpret_cast<sockaddr *>(&addr),
                       sizeof(addr));
    if (rc != 0 && errno == EINPROGRESS) {
      if (Error e = waitFor(s.get(), POLLOUT, deadline,
                            "connecting to " + where))
        return e;
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      errno = err;
      rc = err ? -1 : 0;
    }
    if (rc == 0) {
      out = std::move(s);
      return Error::ok();
    }
    if (errno != ECONNREFUSED && errno != ETIMEDOUT && errno != EAGAIN)
      return systemError("cannot connect to " + where);
    if (Clock::now() + pause >= deadline)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       "deadline passed connecting to " + where +
                           " (connection refused)");
    std::this_thread::sleep_for(pause);
  }
}

Error loom::rt::comm::writeAll(const Socket &s, const void *data,
                               size_t bytes, Deadline deadline,
                               const std::string &what) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::send(s.get(), p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
      return makeError(LOOM_ERROR_COMMUNICATION, "connection to " + what + " lost");
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return systemError("sending to " + what);
    if (Error e = waitFor(s.get(), POLLOUT, deadline, "sending to " + what))
      return e;
  }
  return Error::ok();
}

Error loom::rt::comm::readAll(const Socket &s, void *data, size_t bytes,
                              Deadline deadline, const std::string &what) {
  char *p = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(s.get(), p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0)
      return makeError(LOOM_ERROR_COMMUNICATION, "connection to " + what + " lost");
    if (errno == ECONNRESET)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       "connection to " + what + " lost (reset)");
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return systemError("receiving from " + what);
    if (Error e = waitFor(s.get(), POLLIN, deadline,
                          "receiving from " + what))
      return e;
  }
  return Error::ok();
}

std::string loom::rt::comm::localAddress(const Socket &s) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(s.get(), reinterpret_cast<sockaddr *>(&addr), &len);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof(text));
  return text;
}
