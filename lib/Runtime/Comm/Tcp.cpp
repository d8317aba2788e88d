//===- Tcp.cpp - Ranks of several processes over TCP sockets --------------===//
//
// Part of Loom. A message on a socket is a frame: its channel (u64) and its
// length (u64), then its bytes. The first message on a new connection is
// the connecting rank's hello: kHello and its rank (u32 each).
//
//===----------------------------------------------------------------------===//

#include "Tcp.h"

#include "Peer.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <numeric>
#include <poll.h>
#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::comm;

static const uint32_t kHello = 0x4c4f4f4d; // "LOOM"
/// How long the reader waits for the rest of a frame once it has begun.
static const auto kFrameTimeout = std::chrono::seconds(60);

namespace {

struct FrameHeader {
  uint64_t channel;
  uint64_t bytes;
};

class TcpTransport final : public Transport {
public:
  TcpTransport(int rank, int size) : me(rank), peers(size) {}
  ~TcpTransport() override;

  int worldRank() const override { return me; }
  int worldSize() const override { return static_cast<int>(peers.size()); }
  const char *name() const override { return "tcp"; }
  Error send(int peer, Channel channel, const void *data, int64_t bytes,
             Deadline deadline) override;
  Inbox &inbox() override { return received; }
  void abort() override;

  /// Connects the full mesh through \p store, then starts reading.
  Error connect(StoreClient &store, const std::string &prefix,
                Deadline deadline);
  std::unique_ptr<StoreServer> hostedStore;

private:
  struct Peer {
    Socket socket;
    std::mutex sending;
  };
  void readLoop();
  /// One frame from \p peer into the inbox; false once its socket is done.
  bool readFrame(int peer);
  std::string rankName(int r) const { return "rank " + std::to_string(r); }

  int me;
  std::vector<Peer> peers;
  Inbox received;
  std::thread reader;
  int wake[2] = {-1, -1};
  std::atomic<bool> aborted{false};
};

} // namespace

TcpTransport::~TcpTransport() {
  if (wake[1] >= 0) {
    char c = 0;
    (void)!::write(wake[1], &c, 1);
  }
  if (reader.joinable())
    reader.join();
  for (int fd : wake)
    if (fd >= 0)
      ::close(fd);
}

void TcpTransport::abort() {
  aborted = true;
  received.close(rankName(me) + " aborted");
  for (Peer &p : peers)
    p.socket.shutdownBoth();
}

Error TcpTransport::send(int peer, Channel channel, const void *data,
                         int64_t bytes, Deadline deadline) {
  if (aborted)
    return makeError(LOOM_ERROR_COMMUNICATION, rankName(me) + " aborted");
  if (peer == me) {
    const char *p = static_cast<const char *>(data);
    received.deliver(me, channel, std::vector<char>(p, p + bytes));
    return Error::ok();
  }
  Peer &p = peers[peer];
  std::lock_guard<std::mutex> lock(p.sending);
  FrameHeader header{channel, static_cast<uint64_t>(bytes)};
  std::string what = rankName(peer);
  if (Error e = writeAll(p.socket, &header, sizeof(header), deadline, what))
    return e;
  return writeAll(p.socket, data, static_cast<size_t>(bytes), deadline, what);
}

Error TcpTransport::connect(StoreClient &store, const std::string &prefix,
                            Deadline deadline) {
  Socket listener;
  int port = 0;
  if (Error e = listenOn("", 0, listener, port))
    return e;
  // The address this host reaches the store from reaches it from the others.
  std::string address = store.localAddress() + ":" + std::to_string(port);
  if (Error e = store.set(prefix + "/addr/" + std::to_string(me), address,
                          deadline))
    return e;
  for (int r = 0; r < me; ++r) {
    std::string peerAddress;
    if (Error e = store.get(prefix + "/addr/" + std::to_string(r), deadline,
                            peerAddress))
      return e;
    size_t colon = peerAddress.rfind(':');
    long port = colon == std::string::npos
                    ? 0
                    : std::strtol(peerAddress.c_str() + colon + 1, nullptr, 10);
    if (port < 1 || port > 65535)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       rankName(me) + ": the store holds '" + peerAddress +
                           "' for " + rankName(r) + ", not HOST:PORT");
    if (Error e = connectBefore(peerAddress.substr(0, colon),
                                static_cast<int>(port), deadline,
                                peers[r].socket))
      return makeError(e.status, rankName(me) + " connecting to " +
                                     rankName(r) + ": " + e.message);
    uint32_t hello[2] = {kHello, static_cast<uint32_t>(me)};
    if (Error e = writeAll(peers[r].socket, hello, sizeof(hello), deadline,
                           rankName(r)))
      return e;
  }
  for (int accepted = me + 1; accepted < worldSize(); ++accepted) {
    Socket s;
    uint32_t hello[2] = {0, 0};
    if (Error e = acceptBefore(listener, deadline, s))
      return makeError(e.status, rankName(me) + ": " + e.message + " from " +
                                     "a higher rank");
    if (Error e = readAll(s, hello, sizeof(hello), deadline, "a higher rank"))
      return e;
    int r = static_cast<int>(hello[1]);
    if (hello[0] != kHello || r <= me || r >= worldSize() || peers[r].socket)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       rankName(me) + ": a connection that is not a Loom " +
                           "rank of this world");
    peers[r].socket = std::move(s);
  }
  if (::pipe(wake) != 0)
    return makeError(LOOM_ERROR_COMMUNICATION, "pipe failed");
  reader = std::thread([this] { readLoop(); });
  return Error::ok();
}

bool TcpTransport::readFrame(int peer) {
  Deadline deadline = Clock::now() + kFrameTimeout;
  FrameHeader header;
  std::string what = rankName(peer);
  Error e = readAll(peers[peer].socket, &header, sizeof(header), deadline,
                    what);
  std::vector<char> payload;
  if (!e && header.bytes > (uint64_t(1) << 40))
    e = makeError(LOOM_ERROR_COMMUNICATION, "a malformed frame from " + what);
  if (!e) {
    payload.resize(header.bytes);
    e = readAll(peers[peer].socket, payload.data(), header.bytes, deadline,
                what);
  }
  if (e) {
    received.senderGone(peer, e.message);
    return false;
  }
  received.deliver(peer, header.channel, std::move(payload));
  return true;
}

void TcpTransport::readLoop() {
  std::vector<int> open;
  for (int r = 0; r < worldSize(); ++r)
    if (r != me)
      open.push_back(r);
  while (!open.empty()) {
    std::vector<pollfd> fds{{wake[0], POLLIN, 0}};
    for (int r : open)
      fds.push_back({peers[r].socket.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      return;
    if (fds[0].revents)
      return;
    std::vector<int> still;
    for (size_t i = 0; i < open.size(); ++i)
      if (!fds[i + 1].revents || readFrame(open[i]))
        still.push_back(open[i]);
    open = std::move(still);
  }
}

Error loom::rt::comm::createTcpWorld(int rank, int size,
                                     const std::string &storeHost,
                                     int storePort, const std::string &prefix,
                                     std::unique_ptr<StoreServer> store,
                                     Deadline deadline,
                                     std::unique_ptr<Communicator> &out) {
  auto transport = std::make_shared<TcpTransport>(rank, size);
  transport->hostedStore = std::move(store);
  StoreClient client;
  if (Error e = client.connect(storeHost, storePort, deadline))
    return e;
  if (Error e = transport->connect(client, prefix, deadline))
    return makeError(e.status, "tcp world: " + e.message);
  std::vector<int> members(size);
  std::iota(members.begin(), members.end(), 0);
  out = std::make_unique<PeerCommunicator>(transport, std::move(members),
                                           Channel(0));
  return Error::ok();
}
