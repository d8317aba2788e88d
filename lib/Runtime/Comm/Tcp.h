//===- Tcp.h - Ranks of several processes over TCP sockets ------*- C++ -*-===//
//
// Part of Loom. The transport loom-launch's ranks (and torchrun-style ones)
// talk over, needing no MPI: each rank listens on a port of its own,
// publishes HOST:PORT in the store, and connects to every lower rank
// (accepting the higher ones), so that each pair of ranks has one socket.
// A thread per process reads every socket into the inbox (Peer.h), so a
// send never waits for its receiver to post a receive; a socket that
// closes makes its rank gone, which ends waits for it at once.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_COMM_TCP_H
#define LOOM_LIB_RUNTIME_COMM_TCP_H

#include "Store.h"

namespace loom::rt::comm {

/// The world communicator of rank \p rank of \p size, meeting the others
/// through the store at \p storeHost:\p storePort under keys that start
/// with \p prefix. \p store, when given, is the store this process hosts,
/// kept alive with the world.
Error createTcpWorld(int rank, int size, const std::string &storeHost,
                     int storePort, const std::string &prefix,
                     std::unique_ptr<StoreServer> store, Deadline deadline,
                     std::unique_ptr<Communicator> &out);

} // namespace loom::rt::comm

#endif // LOOM_LIB_RUNTIME_COMM_TCP_H
