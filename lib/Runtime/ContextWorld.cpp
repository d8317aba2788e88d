//===- ContextWorld.cpp - Worlds of ranks that contexts join --------------===//
//
// Part of Loom. The C API's loom_world (include/loom-c/Runtime.h): the
// launcher's world (mpirun, Slurm, torchrun-style variables, loom-launch:
// Comm/World.h), or ranks as threads of one process; and the two steps an
// artifact of several ranks runs over the world its context joined.
//
//===----------------------------------------------------------------------===//

#include "ContextWorld.h"

#include "Comm/Communicator.h"
#include "Comm/Failure.h"
#include "Comm/Launch.h"
#include "Comm/Peer.h"
#include "Comm/World.h"
#include "Model.h"

#include "loom-c/Runtime.h"

#include <cstring>
#include <vector>

using namespace loom;
using namespace loom::rt;

struct loom_world {
  std::unique_ptr<comm::Communicator> comm;
  /// Under a launcher: ends the process when its launcher is gone.
  std::unique_ptr<comm::FailureMonitor> monitor;
  std::chrono::milliseconds timeout{0};
  int64_t bytesSent = 0;
};

namespace {

std::chrono::milliseconds timeoutOf(double seconds) {
  return std::chrono::milliseconds(int64_t(seconds * 1000));
}

/// The error of a step compiled for a world of \p ranks run in another.
Error checkWorld(const loom_world *world, int64_t ranks, const char *step) {
  int64_t size = world ? world->comm->size() : 1;
  if (size == ranks)
    return Error::ok();
  return makeError(
      LOOM_ERROR_INVALID_ARGUMENT,
      std::string(step) + " runs on a world of " + std::to_string(ranks) +
          " ranks; this context's has " + std::to_string(size) +
          (world ? "" : " (it joined none: loom_context_join_world)"));
}

} // namespace

Error rt::runWorldRank(loom_world *world, const artifact::WorldRankStep &s,
                       Device &device, Queue &queue, void *dst) {
  if (Error err = checkWorld(world, s.group.world, "loomrt.world_rank"))
    return err;
  int64_t rank = s.group.indexOf(world ? world->comm->rank() : 0);
  if (device.usesHostMemory()) {
    std::memcpy(dst, &rank, sizeof rank);
    return Error::ok();
  }
  return device.writeFromHost(queue, dst, &rank, sizeof rank);
}

Error rt::runAllGather(loom_world *world, const artifact::AllGatherStep &s,
                       Device &device, Queue &queue, const void *src,
                       void *dst) {
  const artifact::WorldGroup &g = s.group;
  if (Error err = checkWorld(world, g.world, "loomrt.all_gather"))
    return err;
  // On a GPU the blocks are staged through the host.
  bool host = device.usesHostMemory();
  std::vector<char> staged(host ? 0 : size_t(s.bytes * g.ranks));
  char *all = host ? static_cast<char *>(dst) : staged.data();
  int64_t rank = world ? world->comm->rank() : 0, index = g.indexOf(rank);
  char *own = all + index * s.bytes;
  if (host)
    std::memmove(own, src, size_t(s.bytes));
  else if (Error err = device.readToHost(queue, own, src, s.bytes))
    return err;
  if (g.ranks > 1) {
    // Every rank's block to every other, or (root) the root's alone, the
    // other blocks zeros.
    std::vector<comm::Message> messages;
    for (int64_t i = 0; i < g.ranks; ++i) {
      if (i == index)
        continue;
      int peer = int(g.member(rank, i));
      if (s.root < 0 || index == s.root)
        messages.push_back(
            {comm::Message::Direction::Send, peer, own, s.bytes});
      if (s.root < 0 || i == s.root)
        messages.push_back(
            {comm::Message::Direction::Recv, peer, all + i * s.bytes, s.bytes});
      else
        std::memset(all + i * s.bytes, 0, size_t(s.bytes));
    }
    if (s.root >= 0 && index != s.root)
      std::memset(own, 0, size_t(s.bytes));
    if (Error err = world->comm->exchange(
            messages, comm::Clock::now() + world->timeout)) {
      err.message = "loomrt.all_gather: " + err.message;
      return err;
    }
    if (s.root < 0 || index == s.root)
      world->bytesSent += s.bytes * (g.ranks - 1);
  }
  if (host)
    return Error::ok();
  return device.writeFromHost(queue, dst, all, s.bytes * g.ranks);
}

extern "C" {

loom_status loom_world_open(double timeout_seconds, loom_world **world) {
  if (!world || !(timeout_seconds > 0))
    return reportError(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                                 "a null world or a timeout not above 0"),
                       "loom_world_open");
  *world = nullptr;
  comm::LaunchInfo launch;
  if (Error err = comm::readLaunchInfo(comm::processEnvironment(), launch))
    return reportError(err, "loom_world_open");
  auto w = std::make_unique<loom_world>();
  w->timeout = timeoutOf(timeout_seconds);
  if (launch.source == "none") {
    std::vector<std::unique_ptr<comm::Communicator>> one;
    comm::createThreadWorld(1, one);
    w->comm = std::move(one[0]);
  } else {
    w->monitor = std::make_unique<comm::FailureMonitor>(
        launch.rank, comm::FailureMonitor::Options{/*handleSignals=*/true,
                                                   /*watchLauncher=*/true});
    if (Error err = comm::openWorld(launch, comm::Clock::now() + w->timeout,
                                    w->comm))
      return reportError(err, "loom_world_open (" + launch.source + ")");
    w->monitor->setCommunicator(w->comm.get());
  }
  *world = w.release();
  return LOOM_OK;
}

loom_status loom_world_open_threads(int64_t ranks, double timeout_seconds,
                                    loom_world **worlds) {
  if (!worlds || ranks < 1 || ranks > 4096 || !(timeout_seconds > 0))
    return reportError(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                                 "ranks must be 1..4096 and the timeout "
                                 "above 0"),
                       "loom_world_open_threads");
  std::vector<std::unique_ptr<comm::Communicator>> comms;
  comm::createThreadWorld(int(ranks), comms);
  for (int64_t r = 0; r < ranks; ++r) {
    worlds[r] = new loom_world;
    worlds[r]->comm = std::move(comms[r]);
    worlds[r]->timeout = timeoutOf(timeout_seconds);
  }
  return LOOM_OK;
}

loom_status loom_world_copy(loom_world *world, loom_world **copy) {
  if (!world || !copy)
    return reportError(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                                 "needs a world and a place for its copy"),
                       "loom_world_copy");
  *copy = nullptr;
  auto w = std::make_unique<loom_world>();
  w->timeout = world->timeout;
  if (Error err = world->comm->split(
          0, world->comm->rank(), comm::Clock::now() + world->timeout, w->comm))
    return reportError(err, "loom_world_copy");
  *copy = w.release();
  return LOOM_OK;
}

int64_t loom_world_rank(const loom_world *world) {
  return world ? world->comm->rank() : 0;
}

int64_t loom_world_size(const loom_world *world) {
  return world ? world->comm->size() : 1;
}

int64_t loom_world_bytes_sent(const loom_world *world) {
  return world ? world->bytesSent : 0;
}

void loom_world_abort(loom_world *world) {
  if (world)
    world->comm->abort();
}

void loom_world_free(loom_world *world) { delete world; }

} // extern "C"
