//===- Communicator.h - How the ranks of a world exchange tensors -*- C++ -*-===//
//
// Part of Loom. The seam between a rank's program (the steps of manifest
// v2's `world`, docs/Artifact.md) and the transport that moves its tensors:
// MPI between CPU processes, NCCL between GPUs, threads of one process for
// tests. Every operation takes a deadline: a peer that died, hung or lost
// its launcher turns into an error naming the operation and the peer, never
// a hang (docs/Runtime.md, "Failure").
//
// Point-to-point traffic is batched: a program step posts all its sends and
// receives at once and they complete together (NCCL's group semantics), so
// a graph-shaped pipeline whose sends block until received cannot deadlock.
// Per pair of ranks, messages match in the order they were posted (NCCL has
// no tags): the compiler checks that every rank's sends to a peer equal the
// peer's receives from it, in order, sizes and types.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_COMMUNICATOR_H
#define LOOM_LIB_RUNTIME_COMM_COMMUNICATOR_H

#include "../Model.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt::comm {

using Clock = std::chrono::steady_clock;
/// The time by which an operation must have completed.
using Deadline = Clock::time_point;

/// One message of a batched exchange: \p bytes at \p data sent to, or
/// received from, rank \p peer. A receive's buffer is written only once the
/// exchange has completed.
struct Message {
  enum class Direction { Send, Recv };
  Direction direction = Direction::Send;
  int peer = 0;
  void *data = nullptr;
  int64_t bytes = 0;
};

/// The ranks of one world (or of a group of it), as one process sees them.
/// A communicator is used by one thread at a time.
class Communicator {
public:
  virtual ~Communicator();

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "mpi", "nccl", "threads": for messages.
  virtual const char *transport() const = 0;

  /// Posts every message of \p messages at once and waits for all of them.
  /// Fails (LOOM_ERROR_COMMUNICATION, naming the peer) when \p deadline passes
  /// first or a peer is gone; the communicator is then unusable.
  virtual Error exchange(std::vector<Message> &messages,
                         Deadline deadline) = 0;

  /// Sums \p count f32 values element-wise over every rank, in place.
  virtual Error allReduceSum(float *data, int64_t count,
                             Deadline deadline) = 0;

  /// \p bytes at \p data on rank \p root, copied to every rank.
  virtual Error broadcast(void *data, int64_t bytes, int root,
                          Deadline deadline) = 0;

  /// Returns once every rank has called it.
  virtual Error barrier(Deadline deadline) = 0;

  /// The ranks that pass the same \p color, ordered by \p key then by
  /// rank, as a communicator of their own (MPI_Comm_split, ncclCommSplit):
  /// the data-parallel replicas of a stage all-reduce over one. Every rank
  /// calls it; a negative color gives no communicator (\p out null).
  virtual Error split(int color, int key, Deadline deadline,
                      std::unique_ptr<Communicator> &out) = 0;

  /// Abandons every pending operation (ncclCommAbort, MPI_Abort's
  /// local part): called once a rank has failed, before it exits.
  virtual void abort() = 0;
};

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_COMMUNICATOR_H
