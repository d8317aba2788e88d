//===- Store.cpp - A key-value store for a world's rendezvous -------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Store.h"

#include <poll.h>

using namespace loom::rt;
using namespace loom::rt::comm;

/// How long a server waits for the rest of a request once it has begun.
static const auto kRequestTimeout = std::chrono::seconds(30);
/// Largest key and value the store takes.
static const uint64_t kMaxKey = 4096, kMaxValue = uint64_t(1) << 30;

StoreServer::~StoreServer() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    for (auto &c : clients)
      c->shutdownBoth();
  }
  changed.notify_all();
  if (acceptor.joinable())
    acceptor.join();
  for (std::thread &t : servers)
    t.join();
}

Error StoreServer::start(const std::string &host, int port) {
  if (Error e = listenOn(host, port, listener, boundPort))
    return makeError(e.status, "store: " + e.message);
  acceptor = std::thread([this] { acceptLoop(); });
  return Error::ok();
}

void StoreServer::acceptLoop() {
  for (;;) {
    pollfd p{listener.get(), POLLIN, 0};
    ::poll(&p, 1, 50);
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping)
      return;
    Socket client;
    if (!(p.revents & POLLIN) ||
        acceptBefore(listener, Clock::now(), client))
      continue;
    auto shared = std::make_shared<Socket>(std::move(client));
    clients.push_back(shared);
    servers.emplace_back([this, shared] { serve(shared); });
  }
}

void StoreServer::serve(std::shared_ptr<Socket> client) {
  while (handle(*client)) {
  }
}

/// Waits for a request's first byte, or for the server to stop.
static bool awaitRequest(const Socket &client, const bool &stopping,
                         std::mutex &mutex) {
  for (;;) {
    pollfd p{client.get(), POLLIN, 0};
    ::poll(&p, 1, 100);
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping)
      return false;
    if (p.revents)
      return true;
  }
}

bool StoreServer::handle(const Socket &client) {
  if (!awaitRequest(client, stopping, mutex))
    return false;
  Deadline deadline = Clock::now() + kRequestTimeout;
  char op = 0;
  uint32_t keyBytes = 0;
  if (readAll(client, &op, 1, deadline, "a store client") ||
      readAll(client, &keyBytes, 4, deadline, "a store client") ||
      keyBytes > kMaxKey || (op != 'S' && op != 'G'))
    return false;
  std::string key(keyBytes, '\0');
  if (readAll(client, key.data(), keyBytes, deadline, "a store client"))
    return false;
  if (op == 'S') {
    uint64_t valueBytes = 0;
    if (readAll(client, &valueBytes, 8, deadline, "a store client") ||
        valueBytes > kMaxValue)
      return false;
    std::string value(valueBytes, '\0');
    if (readAll(client, value.data(), valueBytes, deadline, "a store client"))
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      values[key] = std::move(value);
    }
    changed.notify_all();
    char ok = 'K';
    return !writeAll(client, &ok, 1, deadline, "a store client");
  }
  std::string value;
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return stopping || values.count(key); });
    if (stopping)
      return false;
    value = values[key];
  }
  uint64_t valueBytes = value.size();
  return !writeAll(client, &valueBytes, 8, deadline, "a store client") &&
         !writeAll(client, value.data(), value.size(), deadline,
                   "a store client");
}

Error StoreClient::connect(const std::string &host, int port,
                           Deadline deadline) {
  where = host + ":" + std::to_string(port);
  if (Error e = connectBefore(host, port, deadline, socket))
    return makeError(e.status, "store at " + where + ": " + e.message);
  return Error::ok();
}

Error StoreClient::failed(const std::string &op, const std::string &key,
                          Error cause) {
  // A request cut short leaves the stream mid-message: no later one.
  socket.reset();
  return makeError(cause.status, "store at " + where + ": " + op + " '" +
                                     key + "': " + cause.message);
}

Error StoreClient::set(const std::string &key, const std::string &value,
                       Deadline deadline) {
  if (!socket)
    return makeError(LOOM_ERROR_COMMUNICATION, "store at " + where + ": not connected");
  std::string request = "S";
  uint32_t keyBytes = static_cast<uint32_t>(key.size());
  uint64_t valueBytes = value.size();
  request.append(reinterpret_cast<const char *>(&keyBytes), 4);
  request += key;
  request.append(reinterpret_cast<const char *>(&valueBytes), 8);
  request += value;
  char ok = 0;
  if (Error e = writeAll(socket, request.data(), request.size(), deadline,
                         "the store"))
    return failed("set", key, e);
  if (Error e = readAll(socket, &ok, 1, deadline, "the store"))
    return failed("set", key, e);
  return Error::ok();
}

Error StoreClient::get(const std::string &key, Deadline deadline,
                       std::string &value) {
  if (!socket)
    return makeError(LOOM_ERROR_COMMUNICATION, "store at " + where + ": not connected");
  std::string request = "G";
  uint32_t keyBytes = static_cast<uint32_t>(key.size());
  request.append(reinterpret_cast<const char *>(&keyBytes), 4);
  request += key;
  uint64_t valueBytes = 0;
  if (Error e = writeAll(socket, request.data(), request.size(), deadline,
                         "the store"))
    return failed("get", key, e);
  if (Error e = readAll(socket, &valueBytes, 8, deadline, "the store"))
    return failed("get", key, e);
  if (valueBytes > kMaxValue)
    return failed("get", key,
                  makeError(LOOM_ERROR_COMMUNICATION, "a malformed answer"));
  value.assign(valueBytes, '\0');
  if (Error e = readAll(socket, value.data(), valueBytes, deadline,
                        "the store"))
    return failed("get", key, e);
  return Error::ok();
}
