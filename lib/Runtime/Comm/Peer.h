//===- Peer.h - Communicators built on point-to-point messages --*- C++ -*-===//
//
// Part of Loom. The transports of one process's ranks that only move whole
// messages between two ranks (threads of one process, TCP sockets) share
// this layer: a Transport sends a message to a rank of the world and
// delivers the ones it receives into its Inbox; a PeerCommunicator is a
// group of the world's ranks over one transport, with its own channel, and
// builds the collectives (all-reduce, broadcast, barrier, split) from
// batched exchanges. MPI has its own collectives (Mpi.cpp).
//
// Messages match per (sender, channel) in the order they were sent; a
// communicator and the ones split from it have distinct channels, so their
// traffic never mixes. Sends never wait for the receiver (the transport
// buffers them), so a batched exchange cannot deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_PEER_H
#define LOOM_LIB_RUNTIME_COMM_PEER_H

#include "Communicator.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

namespace loom::rt::comm {

/// A 64-bit name of a communicator's traffic, the same on all its ranks.
using Channel = uint64_t;

/// The messages one rank has received and not yet taken, per sender and
/// channel, and the senders known to be gone. Thread-safe.
class Inbox {
public:
  void deliver(int sender, Channel channel, std::vector<char> payload);
  /// \p sender will send nothing more: receives from it that find no
  /// message fail with \p cause ("connection to rank 2 lost").
  void senderGone(int sender, const std::string &cause);
  /// Ends every wait (this rank aborted): they fail with \p cause.
  void close(const std::string &cause);
  /// The oldest message from \p sender on \p channel, waiting for it until
  /// \p deadline. The error says why none came; \p self names this rank.
  Error take(int self, int sender, Channel channel, Deadline deadline,
             std::vector<char> &out);

private:
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::pair<int, Channel>, std::deque<std::vector<char>>> queues;
  std::map<int, std::string> gone;
  std::string closed;
};

/// Whether every message of a batch names a rank of a communicator of
/// \p size and at most \p maxBytes with a buffer: else
/// LOOM_ERROR_INVALID_ARGUMENT naming rank \p self and the message.
Error checkMessages(const std::vector<Message> &messages, int self, int size,
                    int64_t maxBytes);

/// Moves messages between the ranks of one world.
class Transport {
public:
  virtual ~Transport();
  virtual int worldRank() const = 0;
  virtual int worldSize() const = 0;
  virtual const char *name() const = 0;
  /// Sends \p bytes at \p data to world rank \p peer on \p channel; returns
  /// once the transport holds them (never waits for the receiver, except for
  /// room in a socket's buffer, until \p deadline).
  virtual Error send(int peer, Channel channel, const void *data,
                     int64_t bytes, Deadline deadline) = 0;
  /// What this rank has received.
  virtual Inbox &inbox() = 0;
  /// Abandons everything: pending and later operations fail.
  virtual void abort() = 0;
};

/// A group of the world's ranks over one transport.
class PeerCommunicator final : public Communicator {
public:
  /// \p members are the world ranks of the group, in group-rank order; this
  /// process is one of them.
  PeerCommunicator(std::shared_ptr<Transport> transport,
                   std::vector<int> members, Channel channel);

  int rank() const override { return self; }
  int size() const override { return static_cast<int>(members.size()); }
  const char *transport() const override { return net->name(); }
  Error exchange(std::vector<Message> &messages, Deadline deadline) override;
  Error allReduceSum(float *data, int64_t count, Deadline deadline) override;
  Error broadcast(void *data, int64_t bytes, int root,
                  Deadline deadline) override;
  Error barrier(Deadline deadline) override;
  Error split(int color, int key, Deadline deadline,
              std::unique_ptr<Communicator> &out) override;
  void abort() override { net->abort(); }

private:
  /// Every rank's \p bytes at \p mine, in rank order, into \p all.
  Error allGather(const void *mine, int64_t bytes, Deadline deadline,
                  std::vector<char> &all);
  Error failed(const char *op, const Error &cause) const;

  std::shared_ptr<Transport> net;
  std::vector<int> members;
  int self = 0;
  Channel channel;
  uint64_t splits = 0;
};

/// Ranks of one process, one thread each, exchanging through memory: a
/// world of \p size communicators, \p out[r] for rank r. A rank whose
/// communicator is destroyed or aborted is gone for the others.
void createThreadWorld(int size, std::vector<std::unique_ptr<Communicator>> &out);

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_PEER_H
