//===- Peer.cpp - Communicators built on point-to-point messages ----------===//
//
// Part of Loom. The inbox every message-passing transport delivers into,
// the collectives built from batched exchanges, and the threads transport
// (ranks of one process, for tests).
//
//===----------------------------------------------------------------------===//

#include "Peer.h"

#include "loom/Support/StableSort.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>

using namespace loom::rt;
using namespace loom::rt::comm;

//===----------------------------------------------------------------------===//
// Inbox
//===----------------------------------------------------------------------===//

void Inbox::deliver(int sender, Channel channel, std::vector<char> payload) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    queues[{sender, channel}].push_back(std::move(payload));
  }
  arrived.notify_all();
}

void Inbox::senderGone(int sender, const std::string &cause) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    gone.emplace(sender, cause);
  }
  arrived.notify_all();
}

void Inbox::close(const std::string &cause) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (closed.empty())
      closed = cause;
  }
  arrived.notify_all();
}

Error Inbox::take(int self, int sender, Channel channel, Deadline deadline,
                  std::vector<char> &out) {
  std::unique_lock<std::mutex> lock(mutex);
  auto &queue = queues[{sender, channel}];
  for (;;) {
    if (!closed.empty())
      return makeError(LOOM_ERROR_COMMUNICATION, closed);
    if (!queue.empty()) {
      out = std::move(queue.front());
      queue.pop_front();
      return Error::ok();
    }
    auto g = gone.find(sender);
    if (g != gone.end())
      return makeError(LOOM_ERROR_COMMUNICATION, "rank " + std::to_string(self) +
                                               " waits for rank " +
                                               std::to_string(sender) + ": " +
                                               g->second);
    if (arrived.wait_until(lock, deadline) == std::cv_status::timeout &&
        queue.empty() && closed.empty() && !gone.count(sender))
      return makeError(LOOM_ERROR_COMMUNICATION,
                       "rank " + std::to_string(self) +
                           ": deadline passed waiting for rank " +
                           std::to_string(sender));
  }
}

Transport::~Transport() = default;

Error loom::rt::comm::checkMessages(const std::vector<Message> &messages,
                                   int self, int size, int64_t maxBytes) {
  for (const Message &m : messages)
    if (m.peer < 0 || m.peer >= size || m.bytes < 0 || m.bytes > maxBytes ||
        (m.bytes > 0 && !m.data))
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "exchange: rank " + std::to_string(self) +
                           ": a message to or from rank " +
                           std::to_string(m.peer) + " of " +
                           std::to_string(size) + " with " +
                           std::to_string(m.bytes) + " bytes");
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// PeerCommunicator
//===----------------------------------------------------------------------===//

PeerCommunicator::PeerCommunicator(std::shared_ptr<Transport> transport,
                                   std::vector<int> members, Channel channel)
    : net(std::move(transport)), members(std::move(members)),
      channel(channel) {
  auto it = std::find(this->members.begin(), this->members.end(),
                      net->worldRank());
  self = static_cast<int>(it - this->members.begin());
}

Error PeerCommunicator::failed(const char *op, const Error &cause) const {
  return makeError(cause.status, std::string(op) + ": " + cause.message);
}

Error PeerCommunicator::exchange(std::vector<Message> &messages,
                                 Deadline deadline) {
  int me = net->worldRank();
  if (Error e = checkMessages(messages, rank(), size(), INT64_MAX))
    return e;
  for (const Message &m : messages)
    if (m.direction == Message::Direction::Send)
      if (Error e = net->send(members[m.peer], channel, m.data, m.bytes,
                              deadline))
        return failed("exchange", e);
  // Receives complete together: buffers are written once all have come.
  std::vector<std::vector<char>> received;
  for (const Message &m : messages) {
    if (m.direction != Message::Direction::Recv)
      continue;
    received.emplace_back();
    if (Error e = net->inbox().take(me, members[m.peer], channel, deadline,
                                    received.back()))
      return failed("exchange", e);
    int64_t sent = static_cast<int64_t>(received.back().size());
    if (sent != m.bytes)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       "exchange: rank " + std::to_string(me) + " expects " +
                           std::to_string(m.bytes) + " bytes from rank " +
                           std::to_string(members[m.peer]) +
                           ", which sent " + std::to_string(sent));
  }
  size_t next = 0;
  for (Message &m : messages)
    if (m.direction == Message::Direction::Recv && m.bytes > 0)
      std::memcpy(m.data, received[next++].data(), m.bytes);
    else if (m.direction == Message::Direction::Recv)
      ++next;
  return Error::ok();
}

Error PeerCommunicator::allGather(const void *mine, int64_t bytes,
                                  Deadline deadline, std::vector<char> &all) {
  all.assign(static_cast<size_t>(bytes) * size(), 0);
  std::vector<Message> messages;
  for (int r = 0; r < size(); ++r) {
    char *slot = all.data() + static_cast<size_t>(bytes) * r;
    if (r == rank()) {
      if (bytes > 0)
        std::memcpy(slot, mine, bytes);
      continue;
    }
    messages.push_back({Message::Direction::Send, r,
                        const_cast<void *>(mine), bytes});
    messages.push_back({Message::Direction::Recv, r, slot, bytes});
  }
  return exchange(messages, deadline);
}

Error PeerCommunicator::allReduceSum(float *data, int64_t count,
                                     Deadline deadline) {
  if (count < 0 || (count > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "all-reduce: " + std::to_string(count) + " values");
  // Every rank gathers every rank's values and sums them in rank order:
  // the sums are bit-identical on all ranks.
  std::vector<char> all;
  if (Error e = allGather(data, count * int64_t(sizeof(float)), deadline, all))
    return failed("all-reduce", e);
  const float *values = reinterpret_cast<const float *>(all.data());
  for (int64_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < size(); ++r)
      sum += values[r * count + i];
    data[i] = sum;
  }
  return Error::ok();
}

Error PeerCommunicator::broadcast(void *data, int64_t bytes, int root,
                                  Deadline deadline) {
  if (root < 0 || root >= size() || bytes < 0 || (bytes > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "broadcast: root " + std::to_string(root) + " of " +
                         std::to_string(size()) + ", " +
                         std::to_string(bytes) + " bytes");
  std::vector<Message> messages;
  if (rank() == root) {
    for (int r = 0; r < size(); ++r)
      if (r != root)
        messages.push_back({Message::Direction::Send, r, data, bytes});
  } else {
    messages.push_back({Message::Direction::Recv, root, data, bytes});
  }
  if (Error e = exchange(messages, deadline))
    return failed("broadcast", e);
  return Error::ok();
}

Error PeerCommunicator::barrier(Deadline deadline) {
  char token = 1;
  std::vector<char> all;
  if (Error e = allGather(&token, 1, deadline, all))
    return failed("barrier", e);
  return Error::ok();
}

/// A channel of its own for the \p nth split of \p parent (splitmix64).
static Channel childChannel(Channel parent, uint64_t nth) {
  uint64_t z = parent + 0x9e3779b97f4a7c15ULL * (nth + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Error PeerCommunicator::split(int color, int key, Deadline deadline,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  int32_t mine[2] = {color, key};
  std::vector<char> all;
  if (Error e = allGather(mine, sizeof(mine), deadline, all))
    return failed("split", e);
  Channel child = childChannel(channel, splits++);
  if (color < 0)
    return Error::ok();
  const int32_t *pairs = reinterpret_cast<const int32_t *>(all.data());
  std::vector<int> group;
  for (int r = 0; r < size(); ++r)
    if (pairs[2 * r] == color)
      group.push_back(r);
  loom::stableSort(group, [&](int a, int b) {
    return pairs[2 * a + 1] < pairs[2 * b + 1];
  });
  std::vector<int> world;
  for (int r : group)
    world.push_back(members[r]);
  out = std::make_unique<PeerCommunicator>(net, std::move(world),
                                           childChannel(child, color));
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

namespace {

/// The inboxes of every rank of one process's world.
struct ThreadWorld {
  explicit ThreadWorld(int size) : inboxes(size) {}
  std::vector<Inbox> inboxes;
};

class ThreadTransport final : public Transport {
public:
  ThreadTransport(std::shared_ptr<ThreadWorld> world, int rank)
      : world(std::move(world)), me(rank) {}
  ~ThreadTransport() override {
    leave("rank " + std::to_string(me) + " has left the world");
  }

  int worldRank() const override { return me; }
  int worldSize() const override {
    return static_cast<int>(world->inboxes.size());
  }
  const char *name() const override { return "threads"; }
  Error send(int peer, Channel channel, const void *data, int64_t bytes,
             Deadline) override {
    const char *p = static_cast<const char *>(data);
    world->inboxes[peer].deliver(me, channel,
                                 std::vector<char>(p, p + bytes));
    return Error::ok();
  }
  Inbox &inbox() override { return world->inboxes[me]; }
  void abort() override {
    inbox().close("rank " + std::to_string(me) + " aborted");
    leave("rank " + std::to_string(me) + " aborted");
  }

private:
  void leave(const std::string &cause) {
    for (int r = 0; r < worldSize(); ++r)
      if (r != me)
        world->inboxes[r].senderGone(me, cause);
  }

  std::shared_ptr<ThreadWorld> world;
  int me;
};

} // namespace

void loom::rt::comm::createThreadWorld(
    int size, std::vector<std::unique_ptr<Communicator>> &out) {
  auto world = std::make_shared<ThreadWorld>(size);
  std::vector<int> members(size);
  std::iota(members.begin(), members.end(), 0);
  out.clear();
  for (int r = 0; r < size; ++r)
    out.push_back(std::make_unique<PeerCommunicator>(
        std::make_shared<ThreadTransport>(world, r), members, Channel(0)));
}
