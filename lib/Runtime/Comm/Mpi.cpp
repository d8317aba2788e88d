//===- Mpi.cpp - Ranks of several processes over MPI ----------------------===//
//
// Part of Loom. The communicator of ranks started by mpirun, built as
// libloomrt-mpi.so: libloomrt opens it at run time (World.cpp), so the
// runtime itself needs no MPI. Every operation is non-blocking MPI
// (MPI_Isend/Irecv, MPI_Iallreduce, MPI_Ibcast, MPI_Ibarrier) polled with
// MPI_Test until its deadline, with errors returned, never fatal. Debian's
// OpenMPI has no fault tolerance (ULFM): a dead peer leaves its survivors
// waiting, so the deadline and the abort path are what bound a failure.
// Polling backs off to a millisecond's sleep: an oversubscribed rank never
// burns a core.
//
//===----------------------------------------------------------------------===//

#include "Peer.h"
#include "World.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <thread>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

/// MPI in this process: initialised once, finalised with the last
/// communicator unless a rank aborted (MPI_Finalize would wait for peers).
struct MpiSession {
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!aborted && !finalized)
      MPI_Finalize();
  }
  bool aborted = false;
};

std::string mpiMessage(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, len);
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(std::shared_ptr<MpiSession> session, MPI_Comm comm);
  ~MpiCommunicator() override {
    if (!session->aborted && comm != MPI_COMM_WORLD)
      MPI_Comm_free(&comm);
  }

  int rank() const override { return me; }
  int size() const override { return count; }
  const char *transport() const override { return "mpi"; }
  Error exchange(std::vector<Message> &messages, Deadline deadline) override;
  Error allReduceSum(float *data, int64_t n, Deadline deadline) override;
  Error broadcast(void *data, int64_t bytes, int root,
                  Deadline deadline) override;
  Error barrier(Deadline deadline) override;
  Error split(int color, int key, Deadline deadline,
              std::unique_ptr<Communicator> &out) override;
  void abort() override { session->aborted = true; }

private:
  /// Polls \p requests until all complete or \p deadline passes; \p peers
  /// names each request's peer for messages (-1: every rank).
  Error wait(const char *op, std::vector<MPI_Request> &requests,
             const std::vector<int> &peers, std::vector<MPI_Status> &statuses,
             Deadline deadline);
  Error failed(const char *op, int code) const;
  std::string rankName(int r) const {
    return "rank " + std::to_string(worldRanks[r]);
  }

  std::shared_ptr<MpiSession> session;
  MPI_Comm comm;
  int me = 0, count = 1;
  /// Each rank of this communicator's rank in MPI_COMM_WORLD.
  std::vector<int> worldRanks;
};

} // namespace

MpiCommunicator::MpiCommunicator(std::shared_ptr<MpiSession> session,
                                 MPI_Comm comm)
    : session(std::move(session)), comm(comm) {
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &count);
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(count);
  for (int r = 0; r < count; ++r)
    ranks[r] = r;
  worldRanks.resize(count);
  MPI_Group_translate_ranks(group, count, ranks.data(), world,
                            worldRanks.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
}

Error MpiCommunicator::failed(const char *op, int code) const {
  return makeError(LOOM_ERROR_COMMUNICATION, std::string(op) + ": " + rankName(me) +
                                           ": " + mpiMessage(code));
}

Error MpiCommunicator::wait(const char *op, std::vector<MPI_Request> &requests,
                            const std::vector<int> &peers,
                            std::vector<MPI_Status> &statuses,
                            Deadline deadline) {
  statuses.resize(requests.size());
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                         &done, statuses.data());
    if (rc != MPI_SUCCESS)
      return failed(op, rc);
    if (done)
      return Error::ok();
    if (Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2 + std::chrono::microseconds(10),
                     std::chrono::microseconds(1000));
  }
  // Name the first peer still missing.
  for (size_t i = 0; i < requests.size(); ++i) {
    int done = 0;
    MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
    if (!done)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       std::string(op) + ": " + rankName(me) +
                           ": deadline passed waiting for " +
                           (peers[i] < 0 ? std::string("every rank")
                                         : rankName(peers[i])));
  }
  return Error::ok();
}

Error MpiCommunicator::exchange(std::vector<Message> &messages,
                                Deadline deadline) {
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  if (Error e = checkMessages(messages, me, count, INT_MAX))
    return e;
  for (Message &m : messages) {
    requests.emplace_back();
    peers.push_back(m.peer);
    int n = static_cast<int>(m.bytes);
    int rc = m.direction == Message::Direction::Send
                 ? MPI_Isend(m.data, n, MPI_BYTE, m.peer, 0, comm,
                             &requests.back())
                 : MPI_Irecv(m.data, n, MPI_BYTE, m.peer, 0, comm,
                             &requests.back());
    if (rc != MPI_SUCCESS)
      return failed("exchange", rc);
  }
  std::vector<MPI_Status> statuses;
  Error e = wait("exchange", requests, peers, statuses, deadline);
  for (size_t i = 0; i < messages.size(); ++i) {
    const Message &m = messages[i];
    if (m.direction != Message::Direction::Recv)
      continue;
    int sent = 0;
    bool truncated = e && statuses[i].MPI_ERROR == MPI_ERR_TRUNCATE;
    if (!truncated && e)
      continue;
    MPI_Get_count(&statuses[i], MPI_BYTE, &sent);
    if (truncated || sent != m.bytes)
      return makeError(LOOM_ERROR_COMMUNICATION,
                       "exchange: " + rankName(me) + " expects " +
                           std::to_string(m.bytes) + " bytes from " +
                           rankName(m.peer) + ", which sent " +
                           (truncated ? "more" : std::to_string(sent)));
  }
  return e;
}

Error MpiCommunicator::allReduceSum(float *data, int64_t n,
                                    Deadline deadline) {
  if (n < 0 || n > INT_MAX || (n > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "all-reduce: " + std::to_string(n) + " values");
  std::vector<MPI_Request> requests(1);
  std::vector<MPI_Status> statuses;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT,
                          MPI_SUM, comm, &requests[0]);
  if (rc != MPI_SUCCESS)
    return failed("all-reduce", rc);
  return wait("all-reduce", requests, {-1}, statuses, deadline);
}

Error MpiCommunicator::broadcast(void *data, int64_t bytes, int root,
                                 Deadline deadline) {
  if (root < 0 || root >= count || bytes < 0 || bytes > INT_MAX ||
      (bytes > 0 && !data))
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "broadcast: root " + std::to_string(root) + " of " +
                         std::to_string(count) + ", " +
                         std::to_string(bytes) + " bytes");
  std::vector<MPI_Request> requests(1);
  std::vector<MPI_Status> statuses;
  int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm,
                      &requests[0]);
  if (rc != MPI_SUCCESS)
    return failed("broadcast", rc);
  return wait("broadcast", requests, {root}, statuses, deadline);
}

Error MpiCommunicator::barrier(Deadline deadline) {
  std::vector<MPI_Request> requests(1);
  std::vector<MPI_Status> statuses;
  int rc = MPI_Ibarrier(comm, &requests[0]);
  if (rc != MPI_SUCCESS)
    return failed("barrier", rc);
  return wait("barrier", requests, {-1}, statuses, deadline);
}

Error MpiCommunicator::split(int color, int key, Deadline deadline,
                             std::unique_ptr<Communicator> &out) {
  out.reset();
  // MPI_Comm_split blocks: first every rank must be there, within the
  // deadline.
  if (Error e = barrier(deadline))
    return makeError(e.status, "split: " + e.message);
  MPI_Comm child = MPI_COMM_NULL;
  int rc = MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key,
                          &child);
  if (rc != MPI_SUCCESS)
    return failed("split", rc);
  if (child != MPI_COMM_NULL)
    out = std::make_unique<MpiCommunicator>(session, child);
  return Error::ok();
}

extern "C" __attribute__((visibility("default"))) void
loom_comm_mpi_world(const Deadline *deadline, Error *error,
                    Communicator **out) {
  (void)deadline; // MPI_Init has no deadline: mpirun bounds start-up.
  *out = nullptr;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED,
                             &provided);
    if (rc != MPI_SUCCESS) {
      *error = makeError(LOOM_ERROR_COMMUNICATION,
                         "MPI_Init_thread: " + mpiMessage(rc));
      return;
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  *out = new MpiCommunicator(std::make_shared<MpiSession>(), MPI_COMM_WORLD);
  *error = Error::ok();
}
